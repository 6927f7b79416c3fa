"""The built wheel, as a user installs it (not editable): it runs the demo, every command's --help, and finds each
HunyuanOCR model profile by name. Built and installed offline: the fresh virtual environment reuses this test
environment's installed dependencies through a .pth file, and the wheel is installed with --no-deps --no-index."""

from __future__ import annotations

import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pysrt
import pytest
from support.synth import read_srt

ROOT = Path(__file__).resolve().parent.parent
COMMANDS = [[], ["extract"], ["index"], ["index", "build"], ["index", "status"], ["search"], ["watch"], ["jobs"]]


def _run(cmd: list[str], cwd: Path, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, f"{cmd}: {proc.stdout[-2000:]}{proc.stderr[-3000:]}"
    return proc


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel, built from a copy of the source (setuptools writes build/ and *.egg-info next to the sources)."""
    src = tmp_path_factory.mktemp("src")
    shutil.copytree(ROOT / "vidocr", src / "vidocr", ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, src / name)
    out = tmp_path_factory.mktemp("dist")
    _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index", "-q",
          "-w", str(out), str(src)], cwd=src)
    (built,) = out.glob("vidocr-*.whl")
    return built


@pytest.fixture(scope="module")
def installed(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh venv with the wheel installed; dependencies come from this test venv's site-packages (.pth)."""
    venv = tmp_path_factory.mktemp("venv")
    _run([sys.executable, "-m", "venv", str(venv)], cwd=venv)
    python = venv / "bin" / "python"
    site = _run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], cwd=venv)
    Path(site.stdout.strip(), "test-venv-deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    _run([str(python), "-m", "pip", "install", "--no-deps", "--no-index", "-q", str(wheel)], cwd=venv)
    return venv


def test_wheel_holds_the_package_data_and_no_tests(wheel: Path) -> None:
    names = zipfile.ZipFile(wheel).namelist()
    profiles = sorted(p.name for p in (ROOT / "vidocr" / "profiles").glob("*.yaml"))
    assert profiles and all(f"vidocr/profiles/{name}" in names for name in profiles)
    assert "vidocr/py.typed" in names
    assert not any(n.startswith(("tests/", "configs/", "samples/", "bench/")) for n in names)
    # Test helpers live in tests/support/: synthetic videos with their font, accuracy metrics, random-weight models.
    dev_only = ("synth.py", "metrics.py", "hunyuan_random.py", ".otf", "FONT-LICENSE.txt")
    assert not [n for n in names if n.endswith(dev_only) and n != "vidocr/daemon/metrics.py"]
    assert not [n for n in names if "/data/" in n]


def test_installed_wheel_runs_the_demo_help_and_profiles(installed: Path, tmp_path: Path, samples: Path) -> None:
    python, vidocr = installed / "bin" / "python", installed / "bin" / "vidocr"
    where = _run([str(python), "-c", "import vidocr; print(vidocr.__file__)"], cwd=tmp_path).stdout.strip()
    assert Path(where).is_relative_to(installed), where  # the wheel's copy, not the source tree

    out = tmp_path / "out"
    proc = _run([str(vidocr), "extract", str(samples / "demo.mp4"), "-o", str(out)], cwd=tmp_path)
    assert "1 ok" in proc.stderr
    got = [(i.start.ordinal, i.end.ordinal, i.text) for i in pysrt.open(str(out / "demo.srt"))]
    assert got == [(c.start_ms, c.end_ms, c.text) for c in read_srt(samples / "demo.srt")]

    for command in COMMANDS:
        proc = _run([str(vidocr), *command, "--help"], cwd=tmp_path, timeout=120)
        assert "exit codes:" in proc.stdout, command

    names = sorted(p.stem for p in (ROOT / "vidocr" / "profiles").glob("*.yaml"))
    script = (
        "import sys\nfrom vidocr.engines.hunyuan_common import load_profile, question_for\n"
        "from vidocr.types import Task\n"
        "for name in sys.argv[1:]:\n"
        "    p = load_profile(name)\n"
        "    assert p.name == name and question_for(p, Task.SUBTITLE), name\n"
        "    print(name, p.hub_id)\n"
    )
    proc = _run([str(python), "-c", script, *names], cwd=tmp_path)
    assert [line.split()[0] for line in proc.stdout.splitlines()] == names
