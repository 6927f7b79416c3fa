"""The watch daemon's parts in-process: the durable queue, the settle rule, one job's outcomes, the CLI and configs."""

from __future__ import annotations

import argparse
import os
import sqlite3
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from vidocr._cli import build_parser, main
from vidocr._cli.config import apply_config
from vidocr.daemon import WatchOptions
from vidocr.daemon.jobs import JobQueue
from vidocr.daemon.service import WatchService, hold_queue_lock
from vidocr.daemon.watcher import Watcher
from vidocr.errors import ConfigError, EngineError
from vidocr.files import Stamp
from vidocr.types import Cue, RunStats, VideoInfo

ROOT = Path(__file__).resolve().parent.parent


class Clock:
    def __init__(self, now: float = 1000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def queue(tmp_path: Path, clock: Clock) -> Iterator[JobQueue]:
    q = JobQueue(tmp_path / "q.jobs", max_attempts=3, backoff_s=10.0, clock=clock)
    yield q
    q.close()


# --- the queue --------------------------------------------------------------------------------------------------


def test_enqueue_is_idempotent_per_content_and_a_new_stamp_starts_over(queue: JobQueue) -> None:
    assert queue.enqueue("/v/a.mp4", Stamp(10, 1), "/v") == "new"
    assert queue.enqueue("/v/a.mp4", Stamp(10, 1), "/v") == "known"
    job = queue.claim()
    assert job is not None and job.state == "running" and job.attempts == 1 and job.root == "/v"
    assert queue.finish(job, Stamp(10, 1), cues=3, seconds=1.0)
    assert queue.enqueue("/v/a.mp4", Stamp(10, 1)) == "known"  # done stays done
    assert queue.enqueue("/v/a.mp4", Stamp(12, 2)) == "changed"
    again = queue.get("/v/a.mp4")
    assert again is not None and (again.state, again.attempts, again.stamp) == ("pending", 0, Stamp(12, 2))


def test_failures_back_off_exponentially_then_fail_for_good(queue: JobQueue, clock: Clock) -> None:
    queue.enqueue("/v/a.mp4", Stamp(1, 1))
    delays = []
    for _ in range(2):
        job = queue.claim()
        assert job is not None
        assert queue.fail(job, "engine down", permanent=False) == "retry"
        due = queue.next_due()
        assert due is not None
        delays.append(due - clock.now)
        assert queue.claim() is None  # not due yet
        clock.now = due
    assert delays == [10.0, 20.0]
    job = queue.claim()
    assert job is not None and job.attempts == 3
    assert queue.fail(job, "engine down", permanent=False) == "failed"
    failed = queue.jobs("failed")
    assert [(j.path, j.error, j.attempts) for j in failed] == [("/v/a.mp4", "engine down", 3)]
    assert queue.retry(failed[0].id) == 1
    fresh = queue.claim()
    assert fresh is not None and fresh.attempts == 1


def test_bad_input_fails_at_once(queue: JobQueue) -> None:
    queue.enqueue("/v/bad.mp4", Stamp(1, 1))
    job = queue.claim()
    assert job is not None
    assert queue.fail(job, "not a video file", permanent=True) == "failed"
    assert queue.counts() == {"pending": 0, "running": 0, "done": 0, "failed": 1}
    assert queue.retry() == 1 and queue.counts()["pending"] == 1


def test_recover_resumes_interrupted_jobs_and_fails_a_file_that_keeps_crashing(tmp_path: Path, clock: Clock) -> None:
    path = tmp_path / "q.jobs"
    first = JobQueue(path, max_attempts=2, clock=clock)
    first.enqueue("/v/crash.mp4", Stamp(1, 1))
    assert first.claim() is not None  # then kill -9: the row stays "running"
    first.close()
    second = JobQueue(path, max_attempts=2, clock=clock)
    assert second.recover() == (1, 0)
    job = second.claim()
    assert job is not None and job.attempts == 2
    second.close()
    third = JobQueue(path, max_attempts=2, clock=clock)
    assert third.recover() == (0, 1)
    [failed] = third.jobs("failed")
    assert "interrupted 2 times" in (failed.error or "")
    third.close()


def test_a_file_changed_while_running_is_queued_again_not_done(queue: JobQueue) -> None:
    queue.enqueue("/v/a.mp4", Stamp(1, 1))
    job = queue.claim()
    assert job is not None
    assert queue.enqueue("/v/a.mp4", Stamp(2, 2)) == "changed"
    assert queue.get("/v/a.mp4").state == "running"  # type: ignore[union-attr]
    assert not queue.finish(job, Stamp(1, 1), cues=1, seconds=0.1)
    after = queue.get("/v/a.mp4")
    assert after is not None and (after.state, after.stamp, after.attempts) == ("pending", Stamp(2, 2), 0)


def test_release_does_not_count_the_attempt_and_drop_keeps_done_jobs(queue: JobQueue) -> None:
    queue.enqueue("/v/a.mp4", Stamp(1, 1))
    queue.enqueue("/v/b.mp4", Stamp(1, 1))
    job = queue.claim()
    assert job is not None
    queue.release(job)
    assert queue.get(job.path).attempts == 0  # type: ignore[union-attr]
    job = queue.claim()
    assert job is not None and queue.finish(job, Stamp(1, 1), cues=0, seconds=0)
    assert not queue.drop("/v/a.mp4")  # done: kept, so a share that comes back is not redone
    assert queue.drop("/v/b.mp4")
    assert [j.path for j in queue.jobs()] == ["/v/a.mp4"]


def test_odd_names_round_trip_as_bytes(queue: JobQueue) -> None:
    odd = os.fsdecode(b"/v/bad\xff name\nwith 'quotes'.mp4")
    assert queue.enqueue(odd, Stamp(1, 1)) == "new"
    job = queue.claim()
    assert job is not None and job.path == odd


_V1_SCHEMA = """
CREATE TABLE jobs (id INTEGER PRIMARY KEY, path BLOB NOT NULL UNIQUE, root BLOB, size INTEGER NOT NULL,
    mtime_ns INTEGER NOT NULL, state TEXT NOT NULL CHECK (state IN ('pending', 'running', 'done', 'failed')),
    attempts INTEGER NOT NULL DEFAULT 0, next_at REAL NOT NULL, created_at REAL NOT NULL, updated_at REAL NOT NULL,
    started_at REAL, finished_at REAL, error TEXT, cues INTEGER, seconds REAL);
CREATE INDEX jobs_due ON jobs (state, next_at);
"""


def test_a_version_1_queue_is_migrated_and_a_file_has_one_job_per_engine(tmp_path: Path) -> None:
    path = tmp_path / "old.jobs"
    conn = sqlite3.connect(path)
    conn.executescript(_V1_SCHEMA)
    conn.execute("INSERT INTO jobs (path, root, size, mtime_ns, state, attempts, next_at, created_at, updated_at,"
                 " cues) VALUES (?, ?, 10, 1, 'done', 1, 5, 5, 5, 7)", (os.fsencode("/v/a.mp4"), b"/v"))
    conn.execute("PRAGMA application_id = 1449747530")  # 0x5669644A, a vidocr queue's mark since v1
    conn.execute("PRAGMA user_version = 1")
    conn.commit()
    conn.close()
    queue = JobQueue(path)
    try:
        old = queue.get("/v/a.mp4")
        assert old is not None and (old.state, old.cues, old.engine, old.root) == ("done", 7, "", "/v")
        assert queue.enqueue("/v/a.mp4", Stamp(10, 1), "/v") == "known"  # still done once
        assert queue.enqueue("/v/a.mp4", Stamp(10, 1), "/v", engine='{"engine":"openai"}') == "new"
        assert queue.enqueue("/v/a.mp4", Stamp(10, 1), "/v", engine='{"engine":"openai"}') == "known"
        assert len(queue.jobs()) == 2 and list(queue.known()) == ["/v/a.mp4"]  # the watcher sees its own job
        job = queue.claim()
        assert job is not None and job.engine == '{"engine":"openai"}' and job.progress == 0.0
        queue.set_progress(job.id, 0.25)
        assert queue.by_id(job.id).progress == 0.25  # type: ignore[union-attr]
        assert queue.finish(job, Stamp(10, 1), cues=2, seconds=1.0)
        assert queue.by_id(job.id).progress == 1.0  # type: ignore[union-attr]
        assert queue.drop("/v/a.mp4") is False  # done jobs are kept, every engine's
    finally:
        queue.close()
    assert sqlite3.connect(path).execute("PRAGMA user_version").fetchone()[0] == 2
    newer = sqlite3.connect(path)
    newer.execute("PRAGMA user_version = 3")
    newer.commit()
    newer.close()
    with pytest.raises(ConfigError, match="from a newer vidocr"):
        JobQueue(path)


def test_a_runner_writes_progress_to_the_queue_while_the_job_runs(tmp_path: Path) -> None:
    """Whichever process runs a job, its progress is in the queue: from the pipeline's reports when the extractor
    takes them, else from the cues' times over the video's duration."""
    from vidocr.daemon.worker import JobRunner
    from vidocr.pipeline import Progress

    seen: list[float | None] = []
    video = tmp_path / "a.mp4"
    video.write_bytes(b"x" * 10)

    def look() -> None:
        other = JobQueue(tmp_path / "q.jobs")  # another connection, as `vidocr serve` reads it
        try:
            seen.append(other.jobs()[-1].progress)
        finally:
            other.close()

    def reporting(path: Path, progress: Callable[[Progress], None] | None = None) -> tuple[Iterator[Cue], VideoInfo]:
        def cues() -> Iterator[Cue]:
            assert progress is not None
            progress(Progress(str(path), 3.0, 4.0, 75, 3, 0))
            look()
            yield Cue(0, 500, "one")
        return cues(), VideoInfo(str(path), 320, 180, 4.0, 25.0, "h264")

    def silent(path: Path) -> tuple[Iterator[Cue], VideoInfo]:
        def cues() -> Iterator[Cue]:
            yield Cue(0, 1000, "one")
            look()
            yield Cue(1500, 2000, "two")
        return cues(), VideoInfo(str(path), 320, 180, 4.0, 25.0, "h264")

    opts = WatchOptions(roots=(tmp_path,), jobs_db=tmp_path / "q.jobs", output_dir=tmp_path / "out")
    queue = JobQueue(tmp_path / "q.jobs")
    try:
        for fn in (reporting, silent):
            queue.conn.execute("DELETE FROM jobs")
            queue.enqueue(str(video), Stamp.of(video.stat()), str(tmp_path))
            job = queue.claim()
            assert job is not None
            assert JobRunner(opts, queue, fn).run(job) == "done"
            assert queue.by_id(job.id).progress == 1.0  # type: ignore[union-attr]
        # a job's engine choice that cannot be read fails the job with one line, not the runner
        queue.enqueue(str(video), Stamp.of(video.stat()), str(tmp_path), engine="{not json")
        job = queue.claim()
        assert job is not None
        assert JobRunner(opts, queue, silent).run(job) == "failed"
        assert "engine choice cannot be read" in (queue.by_id(job.id).error or "")  # type: ignore[union-attr]
    finally:
        queue.close()
    assert seen == [0.75, 0.25]


def test_queue_refuses_other_databases_and_a_missing_queue(tmp_path: Path) -> None:
    other = tmp_path / "other.sqlite"
    conn = sqlite3.connect(other)
    conn.execute("CREATE TABLE t (x)")
    conn.close()
    with pytest.raises(ConfigError, match="not a vidocr job queue"):
        JobQueue(other)
    with pytest.raises(ConfigError, match="no job queue here"):
        JobQueue(tmp_path / "missing.jobs", create=False)


def test_one_daemon_per_queue(tmp_path: Path) -> None:
    with hold_queue_lock(tmp_path / "q.jobs"), pytest.raises(ConfigError, match="another vidocr watch"), \
            hold_queue_lock(tmp_path / "q.jobs"):
        pass


# --- the settle rule --------------------------------------------------------------------------------------------


def test_files_are_queued_only_once_stable_and_partial_names_never(tmp_path: Path, queue: JobQueue) -> None:
    inbox = tmp_path / "in"
    (inbox / ".hidden").mkdir(parents=True)
    tick = Clock(0.0)
    watcher = Watcher([inbox], queue, settle_s=2.0, rescan_s=1e9, clock=tick)
    growing = inbox / "growing.mp4"
    growing.write_bytes(b"x" * 10)
    for name in ("a.mp4.part", "b.crdownload", "c.tmp", ".d.mp4", "notes.txt", ".hidden/e.mp4"):
        (inbox / name).write_bytes(b"y")
    watcher.scan()
    assert watcher.waiting == 1
    tick.now = 1.5
    with growing.open("ab") as fh:
        fh.write(b"more")
    watcher.notice(str(growing))
    assert watcher.poll() == 0
    tick.now = 3.0  # 3 s since first seen, but only 1.5 s since it last changed
    assert watcher.poll() == 0 and queue.counts()["pending"] == 0
    (inbox / "a.mp4.part").rename(inbox / "a.mp4")  # download finished
    watcher.notice(str(inbox / "a.mp4"))
    watcher.poll()
    tick.now = 3.6
    assert watcher.poll() == 1
    assert [j.path for j in queue.jobs()] == [str(growing)]
    tick.now = 5.1
    assert watcher.poll() == 1
    assert sorted(Path(j.path).name for j in queue.jobs()) == ["a.mp4", "growing.mp4"]
    watcher.scan()  # a rescan finds nothing new: same size and mtime as queued
    assert watcher.waiting == 0


def test_a_rescan_drops_the_jobs_of_deleted_files_and_queues_odd_entries(tmp_path: Path, queue: JobQueue) -> None:
    inbox = tmp_path / "in"
    inbox.mkdir()
    (inbox / "gone.mp4").write_bytes(b"x")
    (inbox / "loop.mp4").symlink_to("loop.mp4")
    tick = Clock(0.0)
    watcher = Watcher([inbox], queue, settle_s=0.5, rescan_s=1e9, clock=tick)
    watcher.scan()
    tick.now = 1.0
    assert watcher.poll() == 2  # the symlink loop becomes a job, to fail with a reason
    (inbox / "gone.mp4").unlink()
    watcher.scan()
    assert [Path(j.path).name for j in queue.jobs()] == ["loop.mp4"]


# --- one job, in-process ----------------------------------------------------------------------------------------


class FakeExtractor:
    """Cues named after the file; ``action(path, call_number)`` runs during the extraction."""

    def __init__(self, action: Callable[[Path, int], None] | None = None) -> None:
        self.action, self.calls, self.closed = action, 0, 0

    def __call__(self, path: Path) -> tuple[Iterator[Cue], VideoInfo]:
        self.calls += 1
        if self.action is not None:
            self.action(path, self.calls)
        info = VideoInfo(str(path), 320, 180, 1.0, 25.0, "h264", stats=RunStats(frames=25, ocr_calls=2))
        return iter([Cue(0, 500, f"cue of {path.stem}"), Cue(600, 900, "second")]), info

    def close(self) -> None:
        self.closed += 1


def _service(tmp_path: Path, extractor: FakeExtractor, **kw: object) -> tuple[WatchService, Path]:
    inbox = tmp_path / "in"
    inbox.mkdir(exist_ok=True)
    opts = WatchOptions(roots=(inbox,), jobs_db=tmp_path / "q.jobs", db=tmp_path / "index.sqlite",
                        output_dir=tmp_path / "out", settle_s=0.05, once=True, tick_s=0.02, **kw)  # type: ignore[arg-type]
    return WatchService(opts, extractor), inbox


def _jobs(tmp_path: Path) -> list[tuple[str, str, int]]:
    q = JobQueue(tmp_path / "q.jobs")
    try:
        return [(Path(j.path).name, j.state, j.attempts) for j in q.jobs()]
    finally:
        q.close()


def _indexed(tmp_path: Path) -> list[tuple[str, str]]:
    conn = sqlite3.connect(tmp_path / "index.sqlite")
    try:
        rows = conn.execute("SELECT v.path, c.text FROM cues c JOIN tracks t ON t.id = c.track_id"
                            " JOIN videos v ON v.id = t.video_id ORDER BY c.id").fetchall()
    finally:
        conn.close()
    return [(Path(p).name, t) for p, t in rows]


def test_a_file_that_changes_during_extraction_is_redone_after_it_settles(tmp_path: Path) -> None:
    def grow(path: Path, call: int) -> None:
        if call == 1:
            with path.open("ab") as fh:
                fh.write(b"still copying")

    fake = FakeExtractor(grow)
    service, inbox = _service(tmp_path, fake)
    (inbox / "a.mp4").write_bytes(b"video")
    assert service.run() == 0
    assert _jobs(tmp_path) == [("a.mp4", "pending", 0)] and not (tmp_path / "out" / "a.srt").exists()
    time.sleep(0.1)
    service2, _ = _service(tmp_path, fake)
    assert service2.run() == 0
    assert fake.calls == 2 and _jobs(tmp_path) == [("a.mp4", "done", 1)]
    assert _indexed(tmp_path) == [("a.mp4", "cue of a"), ("a.mp4", "second")]
    assert (tmp_path / "out" / "a.srt").read_text(encoding="utf-8").count("-->") == 2


def test_the_daemon_indexes_an_extraction_as_index_build_does(tmp_path: Path) -> None:
    class TranslationAlone(FakeExtractor):
        def __call__(self, path: Path) -> tuple[Iterator[Cue], VideoInfo]:
            cues, info = super().__call__(path)
            return iter([*cues, Cue(1000, 1500, "", translation="a translation alone")]), info

    service, inbox = _service(tmp_path, TranslationAlone())
    (inbox / "a.mp4").write_bytes(b"video")
    assert service.run() == 0
    assert _indexed(tmp_path) == [("a.mp4", "cue of a"), ("a.mp4", "second"), ("a.mp4", "a translation alone")]


def test_a_file_deleted_during_extraction_loses_its_job_and_writes_nothing(tmp_path: Path) -> None:
    service, inbox = _service(tmp_path, FakeExtractor(lambda path, _: path.unlink()))
    (inbox / "a.mp4").write_bytes(b"video")
    assert service.run() == 0
    assert _jobs(tmp_path) == [] and not (tmp_path / "out").exists() and _indexed(tmp_path) == []


def test_engine_failures_retry_then_fail_and_rebuild_the_engine(tmp_path: Path) -> None:
    def boom(path: Path, call: int) -> None:
        raise EngineError("server unreachable")

    fake = FakeExtractor(boom)
    service, inbox = _service(tmp_path, fake, max_attempts=3, retry_delay_s=0.0)
    (inbox / "a.mp4").write_bytes(b"video")
    assert service.run() == 0
    assert fake.calls == 3 and fake.closed >= 3
    q = JobQueue(tmp_path / "q.jobs")
    [job] = q.jobs()
    q.close()
    assert (job.state, job.attempts, job.error) == ("failed", 3, "server unreachable")


def test_outputs_mirror_subfolders_and_killed_writes_leave_no_temp_files(tmp_path: Path) -> None:
    service, inbox = _service(tmp_path, FakeExtractor())
    (inbox / "s1").mkdir()
    (inbox / "s2").mkdir()
    (inbox / "s1" / "ep.mp4").write_bytes(b"one")
    (inbox / "s2" / "ep.mp4").write_bytes(b"two")
    stale = tmp_path / "out" / "s1" / ".ep.srt.abcd1234.tmp"  # what kill -9 inside an atomic write leaves
    stale.parent.mkdir(parents=True)
    stale.write_text("half")
    assert service.run() == 0
    out = sorted(str(p.relative_to(tmp_path / "out")) for p in (tmp_path / "out").rglob("*") if p.is_file())
    assert out == ["s1/ep.srt", "s2/ep.srt"]


def test_skip_existing_marks_indexed_videos_with_outputs_done_without_ocr(tmp_path: Path) -> None:
    fake = FakeExtractor()
    service, inbox = _service(tmp_path, fake)
    (inbox / "a.mp4").write_bytes(b"video")
    service.run()
    q = JobQueue(tmp_path / "q.jobs")
    q.conn.execute("DELETE FROM jobs")  # as if the queue were new
    q.close()
    service2, _ = _service(tmp_path, fake, skip_existing=True)
    service2.run()
    assert fake.calls == 1 and _jobs(tmp_path) == [("a.mp4", "done", 1)]


# --- CLI and configs --------------------------------------------------------------------------------------------


def test_jobs_command_lists_filters_and_retries(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    q = JobQueue(tmp_path / "lib.sqlite.jobs")
    q.enqueue("/v/ok.mp4", Stamp(1, 1))
    q.enqueue("/v/bad.mp4", Stamp(1, 1))
    job = q.claim()
    assert job is not None
    q.finish(job, Stamp(1, 1), cues=4, seconds=0.5)
    bad = q.claim()
    assert bad is not None
    q.fail(bad, "not a video file", permanent=True)
    q.close()
    db = str(tmp_path / "lib.sqlite")
    assert main(["jobs", "--db", db, "--state", "failed"]) == 0
    out = capsys.readouterr().out
    assert "/v/bad.mp4" in out and "not a video file" in out and "/v/ok.mp4" not in out
    assert main(["jobs", "--db", db, "--retry", str(bad.id)]) == 0
    assert main(["jobs", "--db", db, "--retry", "999"]) == 2
    assert main(["jobs", "--jobs-db", db + ".jobs", "--json"]) == 0
    doc = __import__("json").loads(capsys.readouterr().out)
    assert doc["counts"] == {"pending": 1, "running": 0, "done": 1, "failed": 0}
    assert main(["jobs", "--jobs-db", str(tmp_path / "none.jobs")]) == 2


def test_jobs_command_names_each_jobs_engine_choice(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from vidocr.daemon.choice import EngineChoice

    q = JobQueue(tmp_path / "lib.sqlite.jobs")
    q.enqueue("/v/a.mp4", Stamp(1, 1))
    q.enqueue("/v/a.mp4", Stamp(1, 1), engine=EngineChoice.of("openai", "hunyuanocr-1.5", model="m").key())
    q.close()
    assert main(["jobs", "--db", str(tmp_path / "lib.sqlite")]) == 0
    lines = [ln for ln in capsys.readouterr().out.splitlines() if "/v/a.mp4" in ln]
    assert len(lines) == 2
    assert sum("[engine openai hunyuanocr-1.5 model=m]" in ln for ln in lines) == 1
    assert sum("[engine" not in ln for ln in lines) == 1  # the daemon's own options: no engine shown


def test_watch_refuses_bad_arguments_with_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["watch", str(tmp_path / "missing"), "--db", str(tmp_path / "x.sqlite")]) == 2
    assert main(["watch", str(tmp_path), "--once", "--bilingual"]) == 2
    assert main(["watch", str(tmp_path), "--jobs-db", str(tmp_path / "q"), "--engine", "nope"]) == 2
    assert main(["watch", str(tmp_path), "--once", "--roi", "0,0,0,0", "-o", "-"]) == 2
    errors = [line for line in capsys.readouterr().err.splitlines() if line.startswith("error:")]
    assert len(errors) == 4 and "no such folder" in errors[0] and "--translate" in errors[1]
    assert "unknown engine" in errors[2] and "--roi" in errors[3]


def test_example_config_and_systemd_unit_agree(tmp_path: Path) -> None:
    parser = build_parser()
    argv = ["watch", "--config", str(ROOT / "configs" / "watch.yaml")]
    apply_config(parser, argv, "watch")
    args = parser.parse_args(argv)
    assert args.dirs and args.db and args.metrics_port and args.metrics_host == "127.0.0.1"
    apply_config(parser, ["jobs", *argv[1:]], "jobs")  # `vidocr jobs --config` finds the daemon's queue
    jobs_args = parser.parse_args(["jobs", *argv[1:]])
    assert isinstance(jobs_args, argparse.Namespace) and jobs_args.db == args.db
    unit = (ROOT / "configs" / "vidocr-watch.service").read_text(encoding="utf-8")
    assert "vidocr watch --config /etc/vidocr/watch.yaml" in unit and "KillSignal=SIGTERM" in unit
    stop_sec = float(unit.split("TimeoutStopSec=")[1].split()[0])
    assert stop_sec > args.stop_timeout  # systemd must not SIGKILL a daemon that is still finishing a job


def test_seconds_per_video_are_the_pipelines_even_when_it_ran_elsewhere(tmp_path: Path) -> None:
    """Under --ray the job only writes a result a task on another node made: the histogram of seconds per video
    takes the pipeline's own time, which travels with the result, not the writing's."""
    pytest.importorskip("prometheus_client")
    from vidocr.daemon.metrics import DaemonMetrics
    from vidocr.daemon.worker import JobRunner

    video = tmp_path / "a.mp4"
    video.write_bytes(b"x" * 10)

    def done_elsewhere(path: Path) -> tuple[Iterator[Cue], VideoInfo]:
        info = VideoInfo(str(path), 320, 180, 4.0, 25.0, "h264")
        info.stats.seconds = 42.5  # as the task on the other node measured it
        return iter([Cue(0, 500, "one")]), info

    opts = WatchOptions(roots=(tmp_path,), jobs_db=tmp_path / "q.jobs", output_dir=tmp_path / "out")
    queue = JobQueue(tmp_path / "q.jobs")
    try:
        queue.enqueue(str(video), Stamp.of(video.stat()), str(tmp_path))
        job = queue.claim()
        assert job is not None
        runner = JobRunner(opts, queue, done_elsewhere)
        runner.metrics = DaemonMetrics(lambda: {})
        assert runner.run(job) == "done"
        assert runner.metrics.registry.get_sample_value("vidocr_video_seconds_sum") == 42.5
    finally:
        queue.close()
