"""Exactly once under worker kills (issue 17): ``index build --ray`` over generated videos while Ray workers running
video tasks are SIGKILLed at random moments; the index must hold every video once with the plain run's cues.

    python bench/ray_soak.py [--videos 24] [--kills 5] [--seconds 4] [--seed 0] [--cpus N]

Linux only (workers are found by their process title, ``ray::extract_video``, in /proc). Prints the kills, the
build report and the comparison with a plain build of the same videos; exit 1 on any lost, duplicated or different
video.
"""

from __future__ import annotations

import argparse
import os
import random
import signal
import sqlite3
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))  # support/: test helpers, kept out of the package

WORDS = ("Alpha", "Bravo", "Charlie", "Delta", "Echo", "Foxtrot", "Golf", "Hotel", "India", "Juliet", "Kilo", "Lima")


def make_videos(folder: Path, count: int, seconds: float) -> None:
    from support.synth import SynthCue, SynthSpec, render_video

    for i in range(count):
        n = max(1, int(seconds // 1.5))
        step = seconds / n
        cues = tuple(SynthCue(k * step + 0.1, (k + 1) * step - 0.2, f"{WORDS[(i + k) % 12]} {i} {k}") for k in range(n))
        render_video(SynthSpec(width=640, height=360, duration=seconds, font_size=32, seed=i, cues=cues),
                     folder / f"video{i:02d}.mp4")


def running_video_workers() -> list[int]:
    pids = []
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as fh:
                    if fh.read().startswith(b"ray::extract_video"):
                        pids.append(int(pid))
            except OSError:
                continue
    return pids


def killer(kills: int, rnd: random.Random, stop: threading.Event, killed: list[tuple[float, int]]) -> None:
    started = time.monotonic()
    while len(killed) < kills and not stop.is_set():
        stop.wait(rnd.uniform(0.5, 3.0))
        pids = running_video_workers()
        if not pids:
            continue
        pid = rnd.choice(pids)
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            continue
        killed.append((time.monotonic() - started, pid))
        print(f"  kill {len(killed)}: worker pid {pid} at {killed[-1][0]:.1f} s", flush=True)


def index_rows(db: Path) -> dict[str, tuple[str, list[tuple[int, int, str]]]]:
    conn = sqlite3.connect(db)
    try:
        out: dict[str, tuple[str, list[tuple[int, int, str]]]] = {}
        for vid, path, status in conn.execute("SELECT id, path, status FROM videos"):
            if Path(path).name in out:
                raise SystemExit(f"DUPLICATE video row: {path}")
            cues = conn.execute("SELECT c.start_ms, c.end_ms, c.text FROM cues c JOIN tracks t ON t.id = c.track_id"
                                " WHERE t.video_id = ? ORDER BY c.start_ms, c.id", (vid,)).fetchall()
            out[Path(path).name] = (status, [tuple(c) for c in cues])
        return out
    finally:
        conn.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--videos", type=int, default=24)
    parser.add_argument("--kills", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=4.0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--cpus", type=int, default=os.cpu_count() or 1)
    args = parser.parse_args()
    import ray

    from vidocr.cluster import RayExtractor, RayOptions
    from vidocr.extractor import Extractor
    from vidocr.index.build import BuildOptions, build_index

    with tempfile.TemporaryDirectory(prefix="vidocr-ray-soak-") as tmp:
        folder = Path(tmp) / "videos"
        folder.mkdir()
        make_videos(folder, args.videos, args.seconds)
        with Extractor() as extractor:
            build_index(Path(tmp) / "plain.sqlite", [folder], BuildOptions(extract=extractor))
        reference = index_rows(Path(tmp) / "plain.sqlite")
        ray.init(num_cpus=args.cpus, include_dashboard=False, logging_level="WARNING")
        stop, killed = threading.Event(), []  # type: ignore[var-annotated]
        thread = threading.Thread(target=killer, args=(args.kills, random.Random(args.seed), stop, killed))
        t0 = time.monotonic()
        try:
            with RayExtractor(None, RayOptions(max_retries=args.kills + 1)) as extractor:
                thread.start()
                report = build_index(Path(tmp) / "ray.sqlite", [folder], BuildOptions(extract=extractor))
        finally:
            stop.set()
            thread.join()
            ray.shutdown()
        rows = index_rows(Path(tmp) / "ray.sqlite")
        lost = sorted(set(reference) - set(rows))
        different = sorted(name for name in reference if name in rows and rows[name] != reference[name])
        print(f"{args.videos} videos, {len(killed)} worker kills, {time.monotonic() - t0:.1f} s: {report.summary()}")
        print(f"lost: {len(lost)} {lost}; duplicated: 0 (checked); different from the plain run: {len(different)} "
              f"{different}; cues: {sum(len(c) for _, c in rows.values())} (plain "
              f"{sum(len(c) for _, c in reference.values())})")
        ok = not lost and not different and report.failed == 0 and len(killed) == args.kills
        print("OK" if ok else "FAILED")
        return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
