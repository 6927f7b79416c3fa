"""The zone finder's samples on a file with sparse keyframes (fewer than region.MIN_KEYFRAMES in range): a stretch at
the start of each group of pictures (now) beside a second full decode (before), in one run, interleaved, best of N.

    python bench/zone_sampling.py                 # bench/lang_speed.py's 60 s 720p Korean libass video, --lang ko
    python bench/zone_sampling.py --keep DIR --rounds 5

Printed per case: wall and CPU seconds of extract (engine built before), the zones found and whether the cues are
the same as the full decode's. ``--roi`` runs are measured too (their samples only find static text and colour).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path
from unittest import mock

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "bench"))

from lang_speed import SCRIPTS, _cpu, clip  # noqa: E402
from support import libass  # noqa: E402

import vidocr  # noqa: E402
from vidocr.engines import EngineOptions, create_engine  # noqa: E402
from vidocr.video import VideoSource  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seconds", type=float, default=60.0)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--keep", type=Path, help="render into (and reuse) this folder")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = args.keep or Path(tmp)
        c = clip(f"speed_ko_{int(args.seconds)}s", "NanumGothic", SCRIPTS["ko"][1], args.seconds)
        video = folder / f"{c.name}.mp4"
        if not video.exists():
            libass.render(c, folder)
        engine = create_engine("rapidocr", EngineOptions(lang=("ko",)))
        results: dict[str, list[tuple[float, float]]] = {}
        outputs: dict[str, tuple[object, list[tuple[int, int, str]]]] = {}
        import time
        try:
            for _ in range(args.rounds):
                for roi in (None, "0,0.75,1,0.25"):
                    for name, seekable in (("full second decode", False), ("group starts", True)):
                        key = f"{name}{' --roi' if roi else ''}"
                        t0, c0 = time.perf_counter(), _cpu()
                        with mock.patch.object(VideoSource, "seekable", property(lambda self, s=seekable: s)):
                            cues, info = vidocr.extract(video, vidocr.ExtractOptions(lang=("ko",), roi=roi),
                                                        engine=engine)
                            out = [(q.start_ms, q.end_ms, q.text) for q in cues]
                        results.setdefault(key, []).append((time.perf_counter() - t0, _cpu() - c0))
                        outputs[key] = ([(z.box, z.static) for z in info.stats.zones], out)
        finally:
            engine.close()
        for key, runs in results.items():
            wall, cpu = min(w for w, _ in runs), min(c for _, c in runs)
            base = outputs[key.replace("group starts", "full second decode")]
            same = "same zones and cues" if outputs[key] == base else "DIFFERENT zones/cues"
            print(f"{key:28}: wall {wall:5.2f} s CPU {cpu:5.2f} s; {len(outputs[key][1])} cues, "
                  f"zones {outputs[key][0]}; {same} as the full decode's")
    return 0


if __name__ == "__main__":
    sys.exit(main())
