"""Mutation fuzzing of ``vidocr extract``: seeded mutants of a small clip in six containers.

    python bench/fuzz.py              # 1000 mutants, 2 at a time (~10-15 min on 2 cores)
    python bench/fuzz.py --n 200      # quicker
    python bench/fuzz.py --seed 7 --keep /tmp/fuzz   # other mutants; keep the files to reproduce findings

The clean clip (320x180, 3 s, two subtitles) is remuxed or re-encoded with PyAV into mp4, faststart mp4, mkv, webm
(VP8), MPEG-TS and avi (MPEG-4); each mutant is one of: 1-1000 bit flips, a chunk zeroed, randomised, duplicated or
swapped with another, a cut anywhere, a scrambled header. Each runs in a ``vidocr extract`` process of its own with a
time limit and an address-space cap (tests/hostile_media.py). Counted per mutant: tracebacks, crashes (a signal),
hangs, partial files (an output that does not parse, a temp file left), unclear endings (an exit code or error
line that is not the contract), and the good endings (outputs, or one error line). Exit status 1 if any bad one.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from hostile_media import OUTCOMES, fuzz  # noqa: E402 - the helpers live with the tests


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=1000, help="mutants (default: 1000)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the mutations (default: 0)")
    parser.add_argument("--jobs", type=int, default=2, help="processes at a time (default: 2)")
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds per file before it is a hang (60)")
    parser.add_argument("--memory-mb", type=int, default=2048, help="address-space cap per process, MiB (2048)")
    parser.add_argument("--keep", type=Path, help="folder to keep the clips, mutants and outputs in")
    parser.add_argument("--json", action="store_true", help="print every result as JSON")
    args = parser.parse_args()
    folder = args.keep or Path(tempfile.mkdtemp(prefix="vidocr-fuzz-"))
    started = time.monotonic()
    try:
        results = fuzz(folder, args.n, seed=args.seed, jobs=args.jobs, timeout_s=args.timeout,
                       memory_bytes=args.memory_mb << 20)
    finally:
        if args.keep is None:
            shutil.rmtree(folder, ignore_errors=True)
    seconds = time.monotonic() - started
    counts = Counter(r.outcome for r in results)
    endings = Counter("outputs" if r.code == 0 else "one error line" for r in results if r.outcome == "ok")
    if args.json:
        print(json.dumps([r.__dict__ for r in results], ensure_ascii=False, indent=1))
    for r in results:
        if r.outcome != "ok":
            print(f"{r.outcome:>9}  {r.name}  ({r.mutation})  {' '.join(r.detail.split())[:400]}")
    print(f"{len(results)} mutants (seed {args.seed}) in {seconds:.0f} s: "
          + ", ".join(f"{counts[o]} {o if o != 'ok' else 'good'}" for o in OUTCOMES)
          + f" ({endings['outputs']} with outputs, {endings['one error line']} with one error line)")
    return 1 if any(counts[o] for o in OUTCOMES if o != "ok") else 0


if __name__ == "__main__":
    raise SystemExit(main())
