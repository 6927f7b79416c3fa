"""Overhead of ``--ray`` on one machine: the plain run and the Ray path over the same folder of generated videos,
side by side in one run (issue 17's target: Ray path <= 1.15x the plain run's time).

    python bench/ray_overhead.py [--videos 20] [--seconds 6] [--rounds 2] [--cpus N]

The plain run is what ``vidocr extract FOLDER`` does (one Extractor, videos one after another, OCR on a thread per
core); the Ray path is what ``vidocr extract FOLDER --ray`` does (a local Ray with ``--cpus`` CPUs, one task per
video with one CPU each). Both render each video's SRT, and the bench checks they are byte-identical. Rounds
alternate plain, Ray, Ray, plain... and the best time of each is compared; Ray's start-up is shown apart (a cluster
is started once, not per run).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))  # support/: test helpers, kept out of the package

WORDS = ("Alpha", "Bravo", "Charlie", "Delta", "Echo", "Foxtrot", "Golf", "Hotel", "India", "Juliet", "Kilo", "Lima")


def make_videos(folder: Path, count: int, seconds: float) -> list[Path]:
    from support.synth import SynthCue, SynthSpec, render_video

    paths = []
    for i in range(count):
        n = max(1, int(seconds // 1.5))
        step = seconds / n
        cues = tuple(SynthCue(k * step + 0.1, (k + 1) * step - 0.2, f"{WORDS[(i + k) % 12]} {i} {k}") for k in range(n))
        path = folder / f"video{i:02d}.mp4"
        render_video(SynthSpec(width=640, height=360, duration=seconds, font_size=32, seed=i, cues=cues), path)
        paths.append(path)
    return paths


def plain_run(videos: list[Path]) -> tuple[float, dict[str, str]]:
    from vidocr.extractor import Extractor
    from vidocr.formats import get_writer

    out, started = {}, time.perf_counter()
    with Extractor() as extractor:
        for video in videos:
            cues, info = extractor(video)
            out[video.name] = get_writer("srt").render(list(cues), info)
    return time.perf_counter() - started, out


def ray_run(videos: list[Path]) -> tuple[float, dict[str, str], str]:
    from vidocr.cluster import RayExtractor
    from vidocr.formats import get_writer

    out, started = {}, time.perf_counter()
    with RayExtractor() as extractor:
        for video in extractor.run_ahead(videos, key=lambda v: v):
            cues, info = extractor(video)
            out[video.name] = get_writer("srt").render(list(cues), info)
        status = extractor.status()
    return time.perf_counter() - started, out, status


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--videos", type=int, default=20)
    parser.add_argument("--seconds", type=float, default=6.0, help="length of each video")
    parser.add_argument("--rounds", type=int, default=2, help="runs of each path (alternating)")
    parser.add_argument("--cpus", type=int, default=os.cpu_count() or 1, help="CPUs of the local Ray")
    args = parser.parse_args()
    import ray

    with tempfile.TemporaryDirectory(prefix="vidocr-ray-bench-") as tmp:
        t0 = time.perf_counter()
        videos = make_videos(Path(tmp), args.videos, args.seconds)
        print(f"{len(videos)} videos of {args.seconds:g} s (640x360) rendered in {time.perf_counter() - t0:.1f} s; "
              f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}", flush=True)
        t0 = time.perf_counter()
        ray.init(num_cpus=args.cpus, include_dashboard=False, logging_level="WARNING")
        init_s = time.perf_counter() - t0
        plain_times, ray_times = [], []
        reference: dict[str, str] | None = None
        status = ""
        try:
            for round_ in range(args.rounds):
                order = ("plain", "ray") if round_ % 2 == 0 else ("ray", "plain")
                for mode in order:
                    if mode == "plain":
                        seconds, out = plain_run(videos)
                        plain_times.append(seconds)
                    else:
                        seconds, out, status = ray_run(videos)
                        ray_times.append(seconds)
                    if reference is None:
                        reference = out
                    elif out != reference:
                        bad = sorted(k for k in out if out[k] != reference.get(k))
                        print(f"MISMATCH: {mode} differs on {bad}")
                        return 1
                    print(f"round {round_ + 1} {mode:>5}: {seconds:6.1f} s", flush=True)
        finally:
            ray.shutdown()
        video_s = args.videos * args.seconds
        best_plain, best_ray = min(plain_times), min(ray_times)
        print()
        print("| path | best of rounds | x real time | ratio to plain |")
        print("|---|---|---|---|")
        print(f"| plain (one Extractor) | {best_plain:.1f} s | {video_s / best_plain:.1f}x | 1.00 |")
        print(f"| --ray (local, {args.cpus} CPUs) | {best_ray:.1f} s | {video_s / best_ray:.1f}x | "
              f"{best_ray / best_plain:.2f} |")
        paired = ", ".join(f"{r / p:.2f}" for p, r in zip(plain_times, ray_times, strict=True))
        print(f"Ray / plain within each round: {paired} (round 1: Ray's workers start, import vidocr and load "
              f"the model, as in every new `vidocr ... --ray` run; later rounds reuse them)")
        print(f"Ray start-up (once per cluster, not in the times above): {init_s:.1f} s; SRT byte-identical: "
              f"{len(reference or {})}/{args.videos}; {status}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
