"""Soak test of ``vidocr watch``: videos fed in bursts while the daemon is killed with SIGKILL and restarted.

    python bench/watch_soak.py                       # 200 videos, 10 random SIGKILL restarts (~5 min on 2 cores)
    python bench/watch_soak.py --videos 40 --kills 4 # quicker
    python bench/watch_soak.py --reference           # also compare every video's cues with a clean extraction

Each video is a small synthetic clip with two cues, copied into the watched folder slowly (pieces visible under the
final name, or as ``.part`` renamed when complete) in bursts, some into subfolders. The daemon (``--workers 1``,
rapidocr, an index and an output folder) is killed at random moments: half just after a job starts (mid-OCR), half
anywhere (start-up, settling, writing, indexing). After the last restart it runs until every job is done and is
stopped with SIGTERM. Then every video must have exactly one subtitle file and exactly its cues in the index,
once; no finished video may have been processed again. Lost or duplicated work makes the exit status 1.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))  # support/: test helpers, kept out of the package
WORDS = ("Alpha", "Bravo", "Charlie", "Delta", "Echo", "Foxtrot", "Golf", "Hotel", "India", "Juliet", "Kilo", "Lima")


def render(folder: Path, count: int) -> list[Path]:
    from support.synth import SynthCue, SynthSpec, render_video

    folder.mkdir(parents=True, exist_ok=True)
    clips = []
    for i in range(count):
        cues = (SynthCue(0.1, 0.7, f"{WORDS[i % 12]} {i}"), SynthCue(0.9, 1.5, f"{WORDS[(i * 7 + 5) % 12]} go"))
        path = folder / f"rec{i:04d}.mp4"
        render_video(SynthSpec(width=320, height=180, duration=1.6, font_size=18, seed=i, cues=cues), path)
        clips.append(path)
    return clips


def feed(clips: list[Path], dests: dict[str, Path], rnd: random.Random, done: threading.Event) -> None:
    i = 0
    while i < len(clips):
        burst = clips[i : i + rnd.randint(5, 30)]
        for clip in burst:
            dest = dests[clip.stem]
            dest.parent.mkdir(parents=True, exist_ok=True)
            data = clip.read_bytes()
            target = dest.with_name(dest.name + ".part") if rnd.random() < 0.5 else dest
            with target.open("wb") as fh:
                for k in range(4):
                    fh.write(data[k * len(data) // 4 : (k + 1) * len(data) // 4])
                    fh.flush()
                    time.sleep(rnd.uniform(0.0, 0.05))
            if target != dest:
                target.rename(dest)
        i += len(burst)
        time.sleep(rnd.uniform(1.0, 8.0))
    done.set()


def events(log: Path, offset: int = 0) -> list[dict]:
    with log.open("rb") as fh:
        fh.seek(offset)
        lines = fh.read().decode("utf-8", "replace").splitlines()
    return [json.loads(line) for line in lines if line.startswith("{") and line.endswith("}")]


def start(args: list[str], log: Path) -> tuple[subprocess.Popen[bytes], int]:
    offset = log.stat().st_size if log.exists() else 0
    with log.open("ab") as fh:
        cmd = [sys.executable, "-m", "vidocr", "watch", "--json", "--workers", "1", *args]
        return subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=fh), offset


def done_count(jobs_db: Path) -> int:
    if not jobs_db.exists():
        return 0
    conn = sqlite3.connect(f"file:{jobs_db}?mode=ro", uri=True, timeout=30)
    try:
        return int(conn.execute("SELECT count(*) FROM jobs WHERE state = 'done'").fetchone()[0])
    finally:
        conn.close()


def verify(work: Path, dests: dict[str, Path], log: Path, reference: dict[str, list] | None) -> dict[str, object]:
    import pysrt

    inbox, out, db = work / "in", work / "out", work / "index.sqlite"
    conn = sqlite3.connect(db)
    indexed: dict[str, list[tuple[int, int, str]]] = {}
    for path, start_ms, end_ms, text in conn.execute(
        "SELECT v.path, c.start_ms, c.end_ms, c.text FROM cues c JOIN tracks t ON t.id = c.track_id"
        " JOIN videos v ON v.id = t.video_id ORDER BY v.path, c.start_ms, c.id"
    ):
        indexed.setdefault(path, []).append((start_ms, end_ms, text))
    video_rows = Counter(p for (p,) in conn.execute("SELECT path FROM videos WHERE status = 'ok'"))
    conn.close()
    jobs = sqlite3.connect(f"{db}.jobs")
    states = {os.fsdecode(p): s for p, s in jobs.execute("SELECT path, state FROM jobs")}
    jobs.close()
    files = {p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file()}
    done_events = Counter(e["path"] for e in events(log) if e.get("event") == "job_done")
    lost, duplicated, wrong = [], [], []
    for stem, video in dests.items():
        key = str(video)
        srt = (video.parent.relative_to(inbox) / f"{stem}.srt").as_posix()
        if states.get(key) != "done" or srt not in files or key not in indexed:
            lost.append(stem)
            continue
        cues = indexed[key]
        from_srt = [(s.start.ordinal, s.end.ordinal, s.text) for s in pysrt.open(str(out / srt), encoding="utf-8")]
        if len(set(cues)) != len(cues) or video_rows[key] != 1 or done_events[key] > 1:
            duplicated.append(stem)
        elif cues != from_srt or (reference is not None and cues != reference[stem]):
            wrong.append(stem)
    expected_files = {(v.parent.relative_to(inbox) / f"{s}.srt").as_posix() for s, v in dests.items()}
    return {
        "lost": sorted(lost),
        "duplicated": sorted(duplicated),
        "mismatched": sorted(wrong),
        "stray_files": sorted(files - expected_files),  # temp files left by a kill, or outputs twice
        "states": dict(Counter(states.values())),
    }


def reference_cues(clips: list[Path]) -> dict[str, list[tuple[int, int, str]]]:
    from vidocr.engines import EngineOptions
    from vidocr.engines.rapid import RapidOcrEngine
    from vidocr.pipeline import ExtractOptions, extract

    engine = RapidOcrEngine(EngineOptions(workers=1))
    try:
        out = {}
        for clip in clips:
            cues, _ = extract(clip, ExtractOptions(), engine=engine)
            out[clip.stem] = [(c.start_ms, c.end_ms, c.text) for c in cues]
        return out
    finally:
        engine.close()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--videos", type=int, default=200)
    ap.add_argument("--kills", type=int, default=10)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--settle", type=float, default=1.0)
    ap.add_argument("--workdir", help="keep everything here (default: a temporary folder, removed)")
    ap.add_argument("--reference", action="store_true", help="compare cues with a clean in-process extraction")
    ap.add_argument("--timeout", type=float, default=1200, help="give up after this many seconds")
    ap.add_argument("--json", action="store_true", help="print the report as JSON")
    opts = ap.parse_args()
    tmp = None if opts.workdir else tempfile.TemporaryDirectory(prefix="vidocr-soak-")
    work = Path(opts.workdir or tmp.name)  # type: ignore[union-attr]
    rnd = random.Random(opts.seed)
    t_render = time.monotonic()
    clips = render(work / "src", opts.videos)
    t_render = time.monotonic() - t_render
    inbox, log, jobs_db = work / "in", work / "daemon.log", work / "index.sqlite.jobs"
    inbox.mkdir(parents=True, exist_ok=True)
    dests = {c.stem: inbox / (f"show {i % 7}/season {i % 3}" if i % 4 else "") / c.name for i, c in enumerate(clips)}
    args = [str(inbox), "--db", str(work / "index.sqlite"), "-o", str(work / "out"), "--settle", str(opts.settle),
            "--rescan", "10", "--retry-delay", "1"]
    fed = threading.Event()
    t0 = time.monotonic()
    threading.Thread(target=feed, args=(clips, dests, rnd, fed), daemon=True).start()
    kills: list[dict[str, object]] = []
    proc = None
    try:
        # Spread the kills over the feeding and processing (~0.35 s a video on 2 cores, plus the burst pauses).
        span = max(10.0, 0.3 * opts.videos)
        for k in range(opts.kills):
            proc, offset = start(args, log)
            if k % 2 == 0:
                wait_until = time.monotonic() + rnd.uniform(0.3, 2 * span / max(opts.kills, 1))
                while time.monotonic() < wait_until and proc.poll() is None:
                    time.sleep(0.05)
                starts = len([e for e in events(log, offset) if e.get("event") == "job_start"])
                give_up = time.monotonic() + 20  # nothing left to start: kill it idle
                while proc.poll() is None and time.monotonic() < give_up and len(
                    [e for e in events(log, offset) if e.get("event") == "job_start"]
                ) == starts:
                    time.sleep(0.02)  # then kill just after the next job starts
                time.sleep(rnd.uniform(0.0, 0.3))
            else:
                time.sleep(rnd.uniform(0.2, 2 * span / max(opts.kills, 1)))
            last = [e.get("event") for e in events(log, offset)][-1:]
            proc.kill()
            proc.wait(timeout=30)
            kills.append({"at_s": round(time.monotonic() - t0, 1), "after": last[0] if last else "start-up"})
        proc, _ = start(args, log)
        deadline = t0 + opts.timeout
        while (not fed.is_set() or done_count(jobs_db) < len(clips)) and time.monotonic() < deadline:
            if proc.poll() is not None:
                raise SystemExit(f"the daemon exited with {proc.returncode}; see {log}")
            time.sleep(0.2)
        wall = time.monotonic() - t0
        proc.send_signal(signal.SIGTERM)
        rc = proc.wait(timeout=120)
    finally:
        if proc is not None and proc.poll() is None:
            proc.kill()
            proc.wait()
    all_events = events(log)
    seconds = [e["seconds"] for e in all_events if e.get("event") == "job_done"]
    report: dict[str, object] = {
        "videos": len(clips),
        "kills": kills,
        "resumed_after_kill": sum(int(e.get("resumed", 0)) for e in all_events if e.get("event") == "daemon_start"),
        "sigterm_exit_status": rc,
        "wall_s": round(wall, 1),
        "render_s": round(t_render, 1),
        "throughput_videos_per_min": round(60 * len(clips) / wall, 1),
        "seconds_per_video": {"mean": round(statistics.mean(seconds), 3), "p95": round(
            sorted(seconds)[int(0.95 * (len(seconds) - 1))], 3)} if seconds else None,
        "retries": sum(1 for e in all_events if e.get("event") == "job_retry"),
        "failed": sum(1 for e in all_events if e.get("event") == "job_failed"),
    }
    report.update(verify(work, dests, log, reference_cues(clips) if opts.reference else None))
    bad = any(report[k] for k in ("lost", "duplicated", "mismatched", "stray_files")) or rc != 0
    if opts.json:
        print(json.dumps(report, indent=2))
    else:
        for key, value in report.items():
            print(f"{key:>26}: {value}")
        print("OK: nothing lost, nothing done twice" if not bad else "FAILED: lost or duplicated work (see above)")
    if tmp is not None:
        tmp.cleanup()
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
