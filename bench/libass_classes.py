"""Which of issue 11's classes vidocr gets right: each small libass clip of tests/test_libass_classes.py, rendered and
extracted, pass or fail with what came out against the truth, in frames.

    python bench/libass_classes.py [NAME ...] [--keep DIR]

Classes in ``KNOWN_FAILING`` that now pass are named at the end: move them to the tested ones.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))  # support/ and the test module's clip specs

from test_libass_classes import KNOWN_FAILING, SPECS, missing, problems, run  # noqa: E402

from vidocr.engines import EngineOptions  # noqa: E402
from vidocr.engines.rapid import RapidOcrEngine  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("names", nargs="*", help="classes to run (default: all)")
    parser.add_argument("--keep", type=Path, help="render into this folder and keep the clips")
    args = parser.parse_args(argv)
    names = args.names or list(SPECS)
    engine = RapidOcrEngine(EngineOptions(workers=1))
    fixed, broken = [], []
    try:
        with tempfile.TemporaryDirectory() as tmp:
            for name in names:
                clip = SPECS[name]
                lacking = missing(clip)
                if lacking:
                    print(f"{name:18} SKIP  missing {', '.join(lacking)}", flush=True)
                    continue
                started = time.perf_counter()
                rendered, cues = run(clip, (args.keep or Path(tmp)) / name, engine)
                found = problems(rendered, cues)
                known = name in KNOWN_FAILING
                print(f"{name:18} {'FAIL' if found else 'pass'}{' (known)' if known else ''}  "
                      f"{time.perf_counter() - started:.1f}s", flush=True)
                for line in found:
                    print(f"    {line}", flush=True)
                if known and not found:
                    fixed.append(name)
                if found and not known:
                    broken.append(name)
    finally:
        engine.close()
    if fixed:
        print(f"now passing, move to the tested classes: {', '.join(fixed)}")
    if broken:
        print(f"failing but tested: {', '.join(broken)}")
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main())
