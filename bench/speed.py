"""Speed and memory of the pipeline, measured side by side in one run (ratios, not absolute times).

    python bench/speed.py                  # 60 s 720p 25 fps dialogue video: pipeline vs decode-only floor
    python bench/speed.py --minutes 3      # a longer video (the 60 s clip repeated)
    python bench/speed.py --memory         # peak RSS of a 1-minute vs a 10-minute video (separate processes)
    python bench/speed.py --sample-fps 5   # pass pipeline options through

Reports, all measured in this one run: the wall time of a decode-only pass over the same file (the
floor: PyAV, every frame decoded, nothing converted; the fastest of FFmpeg's automatic threading and
one frame thread per core), of the pipeline cold (``extract()`` building its own engine, as one
``vidocr extract FILE`` does; the first call in this process, so it also imports the OCR runner) and
warm (an engine built before and shared, as ``vidocr extract`` over a folder and the watch daemon
do), their ratios to the floor, the real-time factor (video seconds per wall second), OCR calls per
minute of video (and how many of them were re-reads confirmed without detection), and peak RSS.
``analysis_only_s`` is the same pipeline with an engine that reads nothing (decoding, zone finding,
text masks, scene cuts and change detection; no OCR work): the part of the wall time OCR cannot be
blamed for, and so the least the pipeline can take on this machine whatever the engine.
The targets are judged on the cold run. Videos are generated once with tests/support/synth.py into a cache
folder (default: a temp folder): single-slice H.264 like real encodes.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import av

from vidocr.detect import DetectOptions
from vidocr.engines import EngineOptions, OcrEngine, create_engine
from vidocr.pipeline import ExtractOptions, extract
from vidocr.types import OcrResult, Task

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))  # support/: test helpers, kept out of the package

from support.synth import SynthCue, SynthSpec, render_video  # noqa: E402

LINES = [
    "今天天气很好，我们出去走走吧",
    "I don't think that's a good idea.",
    "你看那边的山上有很多人",
    "Wait, what did you just say?",
    "我也不知道，过去看看就明白了",
    "It's late, we should go home now.",
    "走吧，天黑之前一定要回家",
    "好的",
]


def dialogue(seconds: float) -> tuple[SynthCue, ...]:
    """A cue every ~3 s lasting 1.2-2.6 s, like film dialogue."""
    cues, t, i = [], 0.6, 0
    while t + 1.2 < seconds:
        length = 1.2 + (i * 0.7) % 1.4
        cues.append(SynthCue(round(t, 2), round(min(t + length, seconds - 0.1), 2), LINES[i % len(LINES)]))
        t += length + 0.4 + (i % 3) * 0.3
        i += 1
    return tuple(cues)


def base_clip(cache: Path) -> Path:
    path = cache / "speed_720p25_60s.mp4"
    if not path.exists():
        tmp = path.with_suffix(".tmp.mp4")
        render_video(SynthSpec(width=1280, height=720, fps=25, duration=60.0, cues=dialogue(60.0), seed=7), tmp)
        tmp.rename(path)
    return path


def repeated(clip: Path, times: int, cache: Path) -> Path:
    """The clip ``times`` times in a row, by remuxing its packets with shifted timestamps (no re-encode)."""
    if times == 1:
        return clip
    path = cache / f"speed_720p25_{times}min.mp4"
    if path.exists():
        return path
    tmp = path.with_suffix(".tmp.mp4")
    with av.open(str(clip)) as src, av.open(str(tmp), "w") as dst:
        stream = src.streams.video[0]
        out = dst.add_stream_from_template(stream)
        packets = [p for p in src.demux(stream) if p.dts is not None]
        span = (
            max(p.pts for p in packets if p.pts is not None)
            + (packets[0].duration or 512)
            - min(p.pts for p in packets if p.pts is not None)
        )
        for k in range(times):
            for p in packets:
                p.stream = out
                p.pts = p.pts + span if k and p.pts is not None else p.pts
                p.dts = p.dts + span if k and p.dts is not None else p.dts
                dst.mux(p)
    tmp.rename(path)
    return path


def decode_once(path: Path, threads: int) -> tuple[float, int]:
    started = time.perf_counter()
    frames = 0
    with av.open(str(path)) as container:
        stream = container.streams.video[0]
        stream.thread_type = "AUTO"
        stream.codec_context.thread_count = threads
        for _ in container.decode(stream):
            frames += 1
    return time.perf_counter() - started, frames


def decode_floor(path: Path) -> tuple[float, int]:
    """The fastest decode-only pass: FFmpeg's own thread count (0) or one frame thread per core."""
    runs = [decode_once(path, threads) for threads in (0, os.cpu_count() or 1)]
    return min(runs)


def run_pipeline(
    path: Path, args: argparse.Namespace, engine: OcrEngine | None = None
) -> tuple[float, dict[str, object]]:
    options = ExtractOptions(
        engine_options=EngineOptions(workers=args.workers),
        detect=DetectOptions(sample_fps=args.sample_fps),
    )
    started = time.perf_counter()
    cues, info = extract(path, options, engine=engine)
    count = sum(1 for _ in cues)
    wall = time.perf_counter() - started
    stats = info.stats.as_dict()
    stats["cues"] = count
    stats["duration_s"] = info.duration_s
    return wall, stats


class NoRead:
    """An engine that reads nothing, instantly: what remains of the wall time is the pipeline's own."""

    name = "rapidocr"
    tasks = frozenset({Task.SUBTITLE})
    preferred_batch = 4

    def recognize(self, images: object, task: Task) -> list[OcrResult]:
        return [OcrResult() for _ in images]  # type: ignore[attr-defined]

    def close(self) -> None:
        pass


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def measure(path: Path, args: argparse.Namespace) -> dict[str, object]:
    floor, frames = decode_floor(path)
    wall, stats = run_pipeline(path, args)
    rss = peak_rss_mb()  # one extraction's peak (the warm run below would add a second engine's)
    engine = create_engine("rapidocr", EngineOptions(workers=args.workers))
    try:
        warm, _ = run_pipeline(path, args, engine)
    finally:
        engine.close()
    analysis, _ = run_pipeline(path, args, NoRead())  # type: ignore[arg-type]
    duration = float(stats["duration_s"] or 0)  # type: ignore[arg-type]
    calls = float(stats["ocr_calls"])  # type: ignore[arg-type]
    return {
        "video": path.name,
        "video_s": round(duration, 1),
        "frames": frames,
        "decode_floor_s": round(floor, 2),
        "pipeline_s": round(wall, 2),
        "pipeline_over_floor": round(wall / floor, 2),
        "realtime_factor": round(duration / wall, 1),
        "pipeline_warm_s": round(warm, 2),
        "warm_over_floor": round(warm / floor, 2),
        "warm_realtime_factor": round(duration / warm, 1),
        "analysis_only_s": round(analysis, 2),
        "analysis_over_floor": round(analysis / floor, 2),
        "ocr_calls": stats["ocr_calls"],
        "ocr_calls_per_min": round(calls / (duration / 60), 1),
        "ocr_confirmed_rereads": stats["ocr_confirmed"],
        "ocr_fused_reads": stats.get("ocr_fused_reads", 0),
        "ocr_whole_reads": stats.get("ocr_whole_reads", 0),
        "cues": stats["cues"],
        "peak_rss_mb": round(rss, 1),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--minutes", type=int, default=1)
    parser.add_argument("--memory", action="store_true", help="compare peak RSS of 1- and 10-minute videos")
    parser.add_argument("--cache", type=Path, default=Path(tempfile.gettempdir()) / "vidocr-bench")
    parser.add_argument("--workers", type=int, default=0)
    parser.add_argument("--sample-fps", type=float, default=None)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    args.cache.mkdir(parents=True, exist_ok=True)
    clip = base_clip(args.cache)
    if args.memory:
        rows = []
        for minutes in (1, 10):
            video = repeated(clip, minutes, args.cache)
            cmd = [sys.executable, __file__, "--minutes", str(minutes), "--json", "--cache", str(args.cache)]
            if args.sample_fps:
                cmd += ["--sample-fps", str(args.sample_fps)]
            out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
            rows.append(json.loads(out))
            assert video.exists()
        ratio = rows[1]["peak_rss_mb"] / rows[0]["peak_rss_mb"]
        for row in rows:
            print(json.dumps(row))
        print(f"peak RSS 10 min / 1 min: {ratio:.2f} (target <= 1.20)")
        return 0
    video = repeated(clip, args.minutes, args.cache)
    row = measure(video, args)
    if args.json:
        print(json.dumps(row))
    else:
        for key, value in row.items():
            print(f"{key:32s} {value}")
        print(f"targets (cold run): realtime_factor >= 20, pipeline_over_floor <= 2.0 (cores: {os.cpu_count()})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
