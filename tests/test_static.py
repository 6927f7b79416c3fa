"""ruff and mypy run with the suite, so the README's single test command checks them too."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", *args], cwd=ROOT, capture_output=True, text=True, timeout=600)


def test_ruff_clean() -> None:
    proc = _run("ruff", "check", "vidocr", "tests", "bench", "samples", "scripts")
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_mypy_clean() -> None:
    proc = _run("mypy", "vidocr")
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_mypy_is_strict_for_every_module() -> None:
    import tomllib

    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["mypy"]
    assert config["strict"] is True and config["files"] == ["vidocr"]
    assert "overrides" not in config  # no module is let off (the last ones, detect and pipeline: issue 14)


def test_the_public_api_is_typed_for_users(tmp_path: Path) -> None:
    """A user's script under ``mypy --strict``: vidocr.extract, ExtractOptions and Extractor have their real types
    (not ``object`` from a module ``__getattr__``), and a name vidocr does not have is an error."""
    script = tmp_path / "user.py"
    script.write_text(
        "import vidocr\n"
        "options = vidocr.ExtractOptions(zones='bottom', detect=vidocr.DetectOptions(sample_fps=10.0),\n"
        "                                engine_options=vidocr.EngineOptions(workers=2))\n"
        "cues, info = vidocr.extract('film.mkv', options)\n"
        "first: vidocr.Cue = next(cues)\n"
        "width: int = info.width\n"
        "with vidocr.Extractor(options) as extractor:\n"
        "    more, _ = extractor('other.mkv')\n"
        "    texts: list[str] = [c.text for c in more]\n"
        "wrong: int = vidocr.extract\n"
        "vidocr.no_such_name\n",
        encoding="utf-8",
    )
    proc = _run("mypy", "--strict", "--no-incremental", "--follow-imports=silent", str(script))
    errors = [line for line in proc.stdout.splitlines() if ": error:" in line]
    assert [line.split(":")[1] for line in errors] == ["10", "11"], proc.stdout + proc.stderr
    assert 'Module has no attribute "no_such_name"' in errors[1]


_WITHOUT_EXTRAS = """
import importlib, json, pkgutil, sys
EXTRAS = ("torch", "vllm", "transformers", "watchdog", "prometheus_client", "tesserocr", "triton")
class NotInstalled:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in EXTRAS:
            raise ImportError(f"No module named {name!r}", name=name)
        return None
sys.meta_path.insert(0, NotInstalled())
import vidocr
from vidocr.engines import ENGINES, load_engine_class
from vidocr.errors import EngineUnavailable
failed = {}
for module in pkgutil.walk_packages(vidocr.__path__, "vidocr."):
    try:
        importlib.import_module(module.name)
    except ImportError as exc:
        failed[module.name] = exc.name
hints = {}
for name in ENGINES:
    try:
        load_engine_class(name)
    except EngineUnavailable as exc:
        hints[name] = exc.reason
print(json.dumps({"failed": failed, "hints": hints}))
"""


def test_every_module_imports_without_optional_extras() -> None:
    """A CPU install (no torch, vllm, transformers, watchdog, prometheus-client): every module imports but the two
    engines that need an extra, and asking for those names the pip extra."""
    import json

    proc = subprocess.run([sys.executable, "-c", _WITHOUT_EXTRAS], cwd=ROOT, capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout.splitlines()[-1])
    assert result["failed"] == {"vidocr.engines.hunyuan_hf": "torch", "vidocr.engines.hunyuan_vllm": "vllm"}
    assert sorted(result["hints"]) == ["hunyuan-transformers", "hunyuan-vllm"]
    assert "pip install 'vidocr[hf]'" in result["hints"]["hunyuan-transformers"]
    assert "pip install 'vidocr[vllm]'" in result["hints"]["hunyuan-vllm"]


def test_ci_runs_the_readme_test_command() -> None:
    assert shutil.which("bash")
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    blocks = [b.split("```", 1)[0].strip() for b in readme.split("```sh\n")[1:3]]
    assert blocks[0].startswith("python3 -m venv") and "vidocr extract samples/" in blocks[0]
    assert "pytest" in blocks[1]
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "README.md" in ci and "exec bash -c" in ci
