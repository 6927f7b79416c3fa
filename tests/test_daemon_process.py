"""``vidocr watch`` as a real process on temporary folders: slow copies, kill -9 at random points and restarts,
bad input, SIGTERM, metrics. Videos are small synthetic clips; expected cues come from one clean extraction."""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import sqlite3
import stat
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from support.synth import SynthCue, SynthSpec, render_video

from vidocr.pipeline import ExtractOptions, extract

pytest.importorskip("watchdog")
pytest.importorskip("prometheus_client")
ROOT = Path(__file__).resolve().parent.parent
WORDS = ("Alpha", "Bravo", "Charlie", "Delta", "Echo", "Foxtrot", "Golf", "Hotel", "India", "Juliet", "Kilo", "Lima")
Cues = list[tuple[int, int, str]]


def render_clip(path: Path, i: int, duration: float = 1.6) -> Path:
    cues = (SynthCue(0.1, 0.7, f"{WORDS[i % 12]} {i}"), SynthCue(0.9, 1.5, f"{WORDS[(i + 5) % 12]} go"))
    render_video(SynthSpec(width=320, height=180, duration=duration, font_size=18, seed=i, cues=cues), path)
    return path


@pytest.fixture(scope="module")
def clips(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    folder = tmp_path_factory.mktemp("clips")
    return [render_clip(folder / f"clip{i:02d}.mp4", i) for i in range(10)]


@pytest.fixture(scope="module")
def reference(clips: list[Path], rapid_engine: object) -> dict[str, Cues]:
    """What one clean extraction gives: the cues every output and the index must hold, exactly once."""
    out = {}
    for clip in clips:
        cues, _ = extract(clip, ExtractOptions(), engine=rapid_engine)  # type: ignore[arg-type]
        out[clip.stem] = [(c.start_ms, c.end_ms, c.text) for c in cues]
        assert len(out[clip.stem]) == 2
    return out


class Daemon:
    """``vidocr watch --json`` in a child process, logging (appending) to ``log``."""

    def __init__(self, args: list[str], log: Path, user: int | None = None) -> None:
        self.log = log
        self.offset = log.stat().st_size if log.exists() else 0
        extra: dict[str, object] = {"user": user, "group": user, "extra_groups": []} if user is not None else {}
        with log.open("ab") as fh:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "vidocr", "watch", "--json", "--workers", "1", *args],
                cwd=ROOT, stdout=subprocess.DEVNULL, stderr=fh, **extra,  # type: ignore[call-overload]
            )

    def events(self, name: str | None = None) -> list[dict]:
        return [e for e in read_events(self.log, self.offset) if name is None or e.get("event") == name]

    def kill(self, sig: int = signal.SIGKILL) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        self.proc.wait(timeout=30)


def read_events(log: Path, offset: int = 0) -> list[dict]:
    with log.open("rb") as fh:
        fh.seek(offset)
        lines = fh.read().decode("utf-8", "replace").splitlines()
    return [json.loads(line) for line in lines if line.startswith("{") and line.endswith("}")]


@pytest.fixture
def spawn() -> Iterator[Callable[..., Daemon]]:
    started: list[Daemon] = []

    def start(args: list[str], log: Path, user: int | None = None) -> Daemon:
        started.append(Daemon(args, log, user))
        return started[-1]

    yield start
    for daemon in started:  # never leave a daemon behind, whatever failed
        if daemon.proc.poll() is None:
            daemon.proc.kill()
        daemon.proc.wait(timeout=30)


def wait_for(check: Callable[[], object], timeout: float, what: str, proc: Daemon | None = None) -> object:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        if proc is not None and proc.proc.poll() is not None:
            raise AssertionError(f"daemon exited ({proc.proc.returncode}) while waiting for {what}")
        time.sleep(0.05)
    raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")


def job_states(jobs_db: Path) -> dict[str, str]:
    if not jobs_db.exists():
        return {}
    conn = sqlite3.connect(f"file:{jobs_db}?mode=ro", uri=True, timeout=10)
    try:
        return {os.fsdecode(p): s for p, s in conn.execute("SELECT path, state FROM jobs")}
    finally:
        conn.close()


def indexed_cues(db: Path) -> dict[str, Cues]:
    conn = sqlite3.connect(db)
    try:
        out: dict[str, Cues] = {}
        for path, start, end, text in conn.execute(
            "SELECT v.path, c.start_ms, c.end_ms, c.text FROM cues c JOIN tracks t ON t.id = c.track_id"
            " JOIN videos v ON v.id = t.video_id ORDER BY v.path, c.start_ms, c.id"
        ):
            out.setdefault(Path(path).stem, []).append((start, end, text))
        return out
    finally:
        conn.close()


def srt_cues(path: Path) -> Cues:
    import pysrt

    return [(s.start.ordinal, s.end.ordinal, s.text) for s in pysrt.open(str(path), encoding="utf-8")]


def slow_copy(src: Path, dest: Path, rnd: random.Random, part: bool) -> None:
    """Write ``dest`` in visible pieces (or as ``dest.part``, renamed when complete), like a recorder or a copy."""
    data = src.read_bytes()
    target = dest.with_name(dest.name + ".part") if part else dest
    target.parent.mkdir(parents=True, exist_ok=True)
    pieces = 6
    with target.open("wb") as fh:
        for k in range(pieces):
            fh.write(data[k * len(data) // pieces : (k + 1) * len(data) // pieces])
            fh.flush()
            time.sleep(rnd.uniform(0.05, 0.15))
    if part:
        target.rename(dest)


@pytest.mark.slow
def test_kill9_at_random_points_and_restarts_process_every_video_exactly_once(
    tmp_path: Path, clips: list[Path], reference: dict[str, Cues], spawn: Callable[..., Daemon]
) -> None:
    seed = int(os.environ.get("VIDOCR_TEST_SEED", time.time_ns() % 100_000))
    rnd = random.Random(seed)
    inbox, out, db, log = tmp_path / "in", tmp_path / "out", tmp_path / "index.sqlite", tmp_path / "daemon.log"
    inbox.mkdir()
    args = [str(inbox), "--db", str(db), "-o", str(out), "--settle", "1", "--rescan", "2", "--retry-delay", "0.5"]
    where = {clip.stem: (inbox / ("season 1" if i % 3 == 0 else "") / clip.name) for i, clip in enumerate(clips)}

    def feed() -> None:
        for i, clip in enumerate(clips):
            slow_copy(clip, where[clip.stem], rnd, part=i % 2 == 1)
            time.sleep(rnd.uniform(0.0, 0.5) if i % 4 else 1.0)  # bursts

    feeder = threading.Thread(target=feed, daemon=True)
    feeder.start()
    kills = []
    for k in range(4):
        daemon = spawn(args, log)
        if k % 2 == 0:  # mid-job: just after a job starts (the first one also loads the engine)
            wait_for(lambda d=daemon: d.events("job_start"), 60, "a job to start", daemon)  # type: ignore[misc]
            time.sleep(rnd.uniform(0.0, 0.2))
        else:  # anywhere: start-up, scanning, settling, writing, indexing
            time.sleep(rnd.uniform(0.2, 2.5))
        daemon.kill()
        kills.append([e["event"] for e in daemon.events()][-3:])
    daemon = spawn(args, log)
    feeder.join(timeout=60)
    jobs_db = Path(f"{db}.jobs")
    wait_for(lambda: list(job_states(jobs_db).values()).count("done") == len(clips), 120, "every job done", daemon)
    daemon.kill(signal.SIGTERM)
    context = f"seed={seed}, last events before each kill: {kills}"
    assert daemon.proc.returncode == 0, context

    states = job_states(jobs_db)
    assert sorted(states) == sorted(str(p) for p in where.values()) and set(states.values()) == {"done"}, context
    files = sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file())
    expected_files = sorted(Path(p.parent.relative_to(inbox), f"{p.stem}.srt").as_posix() for p in where.values())
    assert files == expected_files, context  # one output per video, no temp file left by a kill
    for stem, path in where.items():
        assert srt_cues(out / path.parent.relative_to(inbox) / f"{stem}.srt") == reference[stem], context
    assert indexed_cues(db) == reference, context  # exactly the expected cues: none lost, none twice
    done = [e["path"] for e in read_events(log) if e.get("event") == "job_done"]
    assert len(done) == len(set(done)), f"a finished video was processed again: {context}"
    assert sum(e.get("resumed", 0) for e in read_events(log) if e.get("event") == "daemon_start") >= 1, context


def test_bad_input_becomes_failed_jobs_with_reasons_and_never_stalls_the_queue(clips: list[Path]) -> None:
    base = Path(tempfile.mkdtemp(prefix="vidocr-watch-bad-"))
    # Root reads any file: run the daemon as nobody (setpriv) so that "no read permission" is real.
    as_nobody = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"] if os.geteuid() == 0 else []
    can_deny = not as_nobody or shutil.which("setpriv") is not None
    try:
        base.chmod(0o777)
        inbox = base / "in"
        inbox.mkdir()
        inbox.chmod(0o777)
        shutil.copy(clips[0], inbox / "good.mp4")
        shutil.copy(clips[1], inbox / "we ird\n'name' #1 [x].mp4")
        shutil.copy(clips[2], os.fsdecode(bytes(inbox) + b"/caf\xe9.mp4"))  # Latin-1 name: not UTF-8
        (inbox / "corrupt.mp4").write_bytes(clips[3].read_bytes()[:3000])
        (inbox / "zero.mp4").touch()
        (inbox / "text.mp4").write_text("this is not a video\n")
        (inbox / "loop.mp4").symlink_to("loop.mp4")
        if can_deny:
            shutil.copy(clips[4], inbox / "noread.mp4")
            (inbox / "noread.mp4").chmod(0)
        os.mkfifo(inbox / "fifo.mp4")  # opening it would block forever
        (inbox / "folder.mp4").mkdir()
        db = base / "index.sqlite"
        cmd = [*(as_nobody if can_deny else []), sys.executable, "-m", "vidocr", "watch", str(inbox), "--once",
               "--settle", "0.3", "--db", str(db), "-o", str(base / "out"), "--workers", "1", "--json"]
        proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, timeout=180)
        # Exit 1: jobs of this --once run failed (the bad files), the good ones are done.
        assert proc.returncode == 1, proc.stderr.decode(errors="replace")[-2000:]
        conn = sqlite3.connect(f"{db}.jobs")
        rows = conn.execute("SELECT path, state, error FROM jobs").fetchall()
        conn.close()
        jobs = {os.path.basename(os.fsdecode(p)): (state, error) for p, state, error in rows}
        reasons = {name: (error or "").lower() for name, (state, error) in jobs.items() if state == "failed"}
        done = {n for n, (s, _) in jobs.items() if s == "done"}
        assert done == {"good.mp4", "we ird\n'name' #1 [x].mp4", "caf\udce9.mp4"}  # any name the file system allows
        expected = {"corrupt.mp4": "not a video", "zero.mp4": "empty",
                    "text.mp4": "not a video", "loop.mp4": "symbolic links", "fifo.mp4": "not a regular file"}
        if can_deny:
            expected["noread.mp4"] = "permission"
        assert sorted(reasons) == sorted(expected)
        for name, words in expected.items():
            assert words in reasons[name], (name, reasons[name])
        assert (base / "out" / "we ird\n'name' #1 [x].srt").is_file()
        status = subprocess.run([sys.executable, "-m", "vidocr", "index", "status", "--db", str(db)], cwd=ROOT,
                                capture_output=True, text=True, timeout=60)
        assert "failed: " in status.stdout and "not a regular file" in status.stdout
    finally:
        for path in base.rglob("*"):
            if not path.is_symlink():
                path.chmod(stat.S_IRWXU)
        shutil.rmtree(base, ignore_errors=True)


def test_sigterm_finishes_or_abandons_the_current_job_metrics_and_health_are_served(
    tmp_path: Path, clips: list[Path], reference: dict[str, Cues], spawn: Callable[..., Daemon]
) -> None:
    inbox, db, log = tmp_path / "in", tmp_path / "index.sqlite", tmp_path / "daemon.log"
    inbox.mkdir()
    args = [str(inbox), "--db", str(db), "--settle", "0.3", "--metrics-port", "0"]
    daemon = spawn([*args, "--stop-timeout", "0.2"], log)
    port = wait_for(lambda: next((e["port"] for e in daemon.events("metrics_listening")), None), 60, "metrics", daemon)
    shutil.copy(clips[0], inbox / "short.mp4")
    wait_for(lambda: daemon.events("job_done"), 60, "the short video", daemon)
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=10) as resp:
        assert resp.status == 200 and json.loads(resp.read())["status"] == "ok"
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as resp:
        text = resp.read().decode()
    values = {line.rsplit(" ", 1)[0]: float(line.rsplit(" ", 1)[1]) for line in text.splitlines() if line[:1] != "#"}
    assert values['vidocr_jobs{state="done"}'] == 1 and values['vidocr_jobs{state="failed"}'] == 0
    assert values["vidocr_frames_decoded_total"] >= 38 and values["vidocr_ocr_calls_total"] > 0
    assert values["vidocr_video_seconds_count"] == 1 and values["vidocr_frames_per_second"] > 0

    # A 12 s 720p sample takes seconds to read: SIGTERM during it abandons it after --stop-timeout.
    shutil.copy(ROOT / "samples" / "zh.mp4", inbox / "long.mp4")
    wait_for(lambda: len(daemon.events("job_start")) == 2, 60, "the long video to start", daemon)
    time.sleep(0.1)
    t0 = time.monotonic()
    daemon.proc.send_signal(signal.SIGTERM)
    assert daemon.proc.wait(timeout=30) == 0
    assert time.monotonic() - t0 < 10
    assert daemon.events("job_abandoned") and len(daemon.events("job_done")) == 1

    def long_job() -> tuple[str, int]:
        conn = sqlite3.connect(f"{db}.jobs")
        try:
            rows = conn.execute("SELECT path, state, attempts FROM jobs").fetchall()
            return next((state, tries) for path, state, tries in rows if path.endswith(b"/long.mp4"))
        finally:
            conn.close()

    assert long_job() == ("pending", 0)  # given back untouched: the attempt does not count

    # Restarted, it resumes the job; a SIGTERM now, with time to finish, lets it finish.
    daemon = spawn([*args, "--stop-timeout", "60"], log)
    wait_for(lambda: daemon.events("job_start"), 60, "the long video to resume", daemon)
    time.sleep(0.1)
    daemon.proc.send_signal(signal.SIGTERM)
    assert daemon.proc.wait(timeout=90) == 0
    assert [Path(e["path"]).name for e in daemon.events("job_done")] == ["long.mp4"]
    assert long_job() == ("done", 1)
    assert (inbox / "long.srt").is_file() and indexed_cues(db)["short"] == reference["clip00"]
