"""``--ray``: videos as Ray tasks on a local Ray (``ray.init(num_cpus=2)``, once for this module), the driver the
one writer. Same cues as the plain run, worker deaths re-run a video (within a limit), bad input fails once, and
a killed ``watch`` driver resumes from its job queue. Skipped only when Ray is not installed."""

from __future__ import annotations

import json
import logging
import os
import re
import signal
import sqlite3
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.synth import SynthCue, SynthSpec, render_video

from vidocr._cli import main
from vidocr.extractor import Extractor
from vidocr.index.build import BuildOptions, build_index

ray = pytest.importorskip("ray")

ROOT = Path(__file__).resolve().parent.parent
WORDS = ("Alpha", "Bravo", "Charlie", "Delta", "Echo", "Foxtrot", "Golf", "Hotel", "India", "Juliet", "Kilo", "Lima")
Cues = list[tuple[int, int, str]]


def render_clip(path: Path, i: int, duration: float = 1.6, size: tuple[int, int] = (320, 180)) -> Path:
    step = duration / 2
    cues = (SynthCue(0.1, step - 0.1, f"{WORDS[i % 12]} {i}"),
            SynthCue(step + 0.1, duration - 0.1, f"{WORDS[(i + 5) % 12]} go"))
    render_video(SynthSpec(width=size[0], height=size[1], duration=duration, font_size=size[1] // 10, seed=i,
                           cues=cues), path)
    return path


@pytest.fixture(scope="module")
def cluster() -> Iterator[str]:
    """A local Ray for the module; its address lets a driver in another process join it."""
    context = ray.init(num_cpus=2, include_dashboard=False)
    yield str(context.address_info["gcs_address"])
    ray.shutdown()


@pytest.fixture(scope="module")
def library(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Six short clips and a file that is not a video."""
    folder = tmp_path_factory.mktemp("library")
    for i in range(6):
        render_clip(folder / f"clip{i:02d}.mp4", i)
    (folder / "broken.mp4").write_bytes(b"this is not a video" * 100)
    return folder


def index_rows(db: Path) -> dict[str, tuple[str, str | None, Cues]]:
    """Per video (file name): status, error and cues, read from the index."""
    conn = sqlite3.connect(db)
    try:
        out: dict[str, tuple[str, str | None, Cues]] = {}
        for vid, path, status, error in conn.execute("SELECT id, path, status, error FROM videos"):
            cues = conn.execute(
                "SELECT c.start_ms, c.end_ms, c.text FROM cues c JOIN tracks t ON t.id = c.track_id"
                " WHERE t.video_id = ? ORDER BY c.start_ms, c.id", (vid,)).fetchall()
            name = Path(path).name
            assert name not in out, f"{name} stored twice"
            out[name] = (status, error, [tuple(c) for c in cues])
        return out
    finally:
        conn.close()


def ray_extractor(**ray_options: object) -> object:
    from vidocr.cluster import RayExtractor, RayOptions

    return RayExtractor(None, RayOptions(**ray_options))  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def plain(library: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The plain run (no Ray) over the library: its output folder (SRT and JSON) and its index."""
    folder = tmp_path_factory.mktemp("plain")
    assert main(["extract", str(library), "-o", str(folder / "out"), "-q", "-f", "srt,json"]) == 1  # broken.mp4
    with Extractor() as extractor:
        build_index(folder / "plain.sqlite", [library], BuildOptions(extract=extractor))
    return folder / "out", folder / "plain.sqlite"


def test_extract_and_index_build_on_ray_match_the_plain_run_byte_for_byte(
    cluster: str, library: Path, plain: tuple[Path, Path], tmp_path: Path
) -> None:
    plain_out, ray_out = plain[0], tmp_path / "ray"
    assert main(["extract", str(library), "-o", str(ray_out), "-q", "-f", "srt,json", "--ray", cluster]) == 1
    expected = {p.name: p.read_bytes() for p in plain_out.iterdir()}
    assert sorted(expected) == sorted(f"clip{i:02d}.{ext}" for i in range(6) for ext in ("srt", "json"))
    srt = {name: (ray_out / name).read_bytes() for name in expected if name.endswith(".srt")}
    assert srt == {name: data for name, data in expected.items() if name.endswith(".srt")}
    assert sorted(p.name for p in ray_out.iterdir()) == sorted(expected)
    for name in expected:  # JSON too, but for the run's timings
        if name.endswith(".json"):
            a, b = json.loads(expected[name]), json.loads((ray_out / name).read_bytes())
            assert a["cues"] == b["cues"] and a["video"]["duration_s"] == b["video"]["duration_s"]

    assert main(["index", "build", str(library), "--db", str(tmp_path / "ray.sqlite"), "-q", "--ray", cluster]) == 1
    rows = index_rows(tmp_path / "ray.sqlite")
    assert rows == index_rows(plain[1])
    assert rows["broken.mp4"][0] == "failed" and rows["broken.mp4"][1]
    assert all(len(cues) == 2 for name, (_, _, cues) in rows.items() if name != "broken.mp4")


def test_bad_input_is_recorded_failed_with_its_reason_and_not_run_again(cluster: str, library: Path,
                                                                        tmp_path: Path) -> None:
    db = tmp_path / "lib.sqlite"
    extractor = ray_extractor()
    try:
        first = build_index(db, [library], BuildOptions(extract=extractor))  # type: ignore[arg-type]
        assert (first.indexed, first.failed, first.extracted) == (6, 1, 7)
        assert extractor.counts.failed == 1  # type: ignore[attr-defined]  # one task result, no Ray retry
        [(path, reason)] = first.failures
        assert Path(path).name == "broken.mp4" and "broken.mp4" not in reason and reason
        second = build_index(db, [library], BuildOptions(extract=extractor))  # type: ignore[arg-type]
        assert (second.extracted, second.failed_skipped, second.unchanged) == (0, 1, 6)
    finally:
        extractor.close()  # type: ignore[attr-defined]


class WorkerKiller:
    """Kills (SIGKILL) the first ``kills`` Ray worker processes seen running a video task (their process title
    is ``ray::extract_video``), as a node or OOM kill would."""

    def __init__(self, kills: int = 1) -> None:
        self.left, self.killed = kills, []  # type: ignore[var-annotated]
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while self.left and not self._stop.is_set():
            for pid in os.listdir("/proc"):
                if not pid.isdigit():
                    continue
                try:
                    with open(f"/proc/{pid}/cmdline", "rb") as fh:
                        title = fh.read()
                except OSError:
                    continue
                if title.startswith(b"ray::extract_video") and int(pid) not in self.killed:
                    time.sleep(0.3)  # mid-video, not at its first line
                    try:
                        os.kill(int(pid), signal.SIGKILL)
                    except ProcessLookupError:
                        continue
                    self.killed.append(int(pid))
                    self.left -= 1
                    break
            time.sleep(0.02)

    def stop(self) -> list[int]:
        self._stop.set()
        self._thread.join(timeout=10)
        return self.killed


@pytest.fixture(scope="module")
def long_clips(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two clips long enough (8 s at 640x360) that a kill lands while one is being read."""
    folder = tmp_path_factory.mktemp("long")
    for i in range(2):
        render_clip(folder / f"long{i}.mp4", i, duration=8.0, size=(640, 360))
    return folder


@pytest.fixture(scope="module")
def long_reference(long_clips: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[str, str | None,
                                                                                                Cues]]:
    db = tmp_path_factory.mktemp("ref") / "ref.sqlite"
    with Extractor() as extractor:
        build_index(db, [long_clips], BuildOptions(extract=extractor))
    return index_rows(db)


def test_a_worker_killed_mid_video_runs_that_video_again_and_it_is_stored_once(
    cluster: str, long_clips: Path, long_reference: dict[str, tuple[str, str | None, Cues]], tmp_path: Path
) -> None:
    db = tmp_path / "lib.sqlite"
    extractor = ray_extractor(max_retries=2)
    killer = WorkerKiller(kills=1)
    try:
        report = build_index(db, [long_clips], BuildOptions(extract=extractor))  # type: ignore[arg-type]
    finally:
        killed = killer.stop()
        extractor.close()  # type: ignore[attr-defined]
    assert len(killed) == 1, "no worker was seen running a video"
    assert (report.indexed, report.failed) == (2, 0)
    assert index_rows(db) == long_reference


def test_a_video_whose_worker_dies_on_every_try_fails_with_the_reason(
    cluster: str, long_clips: Path, tmp_path: Path
) -> None:
    db = tmp_path / "lib.sqlite"
    extractor = ray_extractor(max_retries=0, max_in_flight=1)
    killer = WorkerKiller(kills=1)
    try:
        report = build_index(db, [long_clips / "long0.mp4"], BuildOptions(extract=extractor))  # type: ignore[arg-type]
    finally:
        killed = killer.stop()
        extractor.close()  # type: ignore[attr-defined]
    assert len(killed) == 1
    assert report.failed == 1
    [(_, reason)] = report.failures
    assert reason == "the Ray worker running it died 1 time(s) (WorkerCrashedError)"
    assert index_rows(db)["long0.mp4"] == ("failed", reason, [])


def read_events(log: Path) -> list[dict[str, object]]:
    lines = log.read_text(encoding="utf-8", errors="replace").splitlines()
    return [json.loads(line) for line in lines if line.startswith("{") and line.endswith("}")]


def job_states(jobs_db: Path) -> dict[str, str]:
    if not jobs_db.exists():
        return {}
    conn = sqlite3.connect(f"file:{jobs_db}?mode=ro", uri=True, timeout=10)
    try:
        return {Path(os.fsdecode(p)).name: s for p, s in conn.execute("SELECT path, state FROM jobs")}
    except sqlite3.OperationalError:  # not created yet
        return {}
    finally:
        conn.close()


def start_driver(argv: list[str], log: Path) -> subprocess.Popen[bytes]:
    with log.open("wb") as fh:
        return subprocess.Popen(argv, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=fh)


def wait_until_done(proc: subprocess.Popen[bytes], log: Path, jobs_db: Path, count: int) -> None:
    deadline = time.monotonic() + 120
    while list(job_states(jobs_db).values()).count("done") < count:
        assert proc.poll() is None, f"the driver exited ({proc.returncode}): {log.read_text()[-2000:]}"
        assert time.monotonic() < deadline, f"not {count} jobs done in 120 s"
        time.sleep(0.05)


def test_a_killed_watch_driver_resumes_from_its_queue_and_stores_each_video_once(
    cluster: str, library: Path, plain: tuple[Path, Path], tmp_path: Path
) -> None:
    """Run 1 (watch --once) is SIGKILLed after its first job, run 2 (a daemon) gets SIGTERM with --stop-timeout 0
    after its first job, run 3 (watch --once) finishes: nothing lost, nothing stored twice."""
    folder, out, db = tmp_path / "in", tmp_path / "out", tmp_path / "lib.sqlite"
    jobs_db = Path(f"{db}.jobs")
    folder.mkdir()
    for video in library.iterdir():
        os.link(video, folder / video.name)
    argv = [sys.executable, "-m", "vidocr", "watch", str(folder), "--json", "--settle", "0.2", "--db",
            str(db), "-o", str(out), "--ray", cluster, "--ray-in-flight", "2"]
    logs = [tmp_path / "run1.log", tmp_path / "run2.log", tmp_path / "run3.log"]
    first = start_driver([*argv, "--once"], logs[0])
    try:
        wait_until_done(first, logs[0], jobs_db, 1)
        first.send_signal(signal.SIGKILL)
    finally:
        first.kill()
        first.wait(timeout=30)
    at_kill = job_states(jobs_db)
    assert "running" in at_kill.values(), at_kill  # the kill left claimed videos behind

    second = start_driver([*argv, "--stop-timeout", "0", "--metrics-port", "0"], logs[1])
    try:
        wait_until_done(second, logs[1], jobs_db, list(at_kill.values()).count("done") + 1)
        [listening] = [e for e in read_events(logs[1]) if e.get("event") == "metrics_listening"]
        with urllib.request.urlopen(f"http://127.0.0.1:{listening['port']}/metrics", timeout=10) as response:
            metrics = response.read().decode()
        per_node = re.findall(r'^vidocr_ray_node_videos_total\{node="(\w+)"\} (\d+)', metrics, re.M)
        assert len(per_node) == 1 and int(float(per_node[0][1])) >= 1, metrics  # one node here, its videos
        second.send_signal(signal.SIGTERM)
        assert second.wait(timeout=60) == 0, logs[1].read_text()[-2000:]
    finally:
        second.kill()
        second.wait(timeout=30)
    after_stop = job_states(jobs_db)
    assert "running" not in after_stop.values() and "pending" in after_stop.values(), after_stop  # given back

    conn = sqlite3.connect(jobs_db)
    try:  # a job given back does not count the attempt (only run 1's kill counted one)
        assert conn.execute("SELECT max(attempts) FROM jobs WHERE state = 'pending'").fetchone()[0] <= 1
    finally:
        conn.close()

    with logs[2].open("wb") as fh:
        third = subprocess.run([*argv, "--once"], cwd=ROOT, stdout=subprocess.DEVNULL, stderr=fh, timeout=300)
    # watch --once exits 1 when a job of this run failed: broken.mp4, unless it failed in an earlier run
    assert third.returncode in (0, 1), logs[2].read_text()[-2000:]
    states = job_states(jobs_db)
    assert states == {**{f"clip{i:02d}.mp4": "done" for i in range(6)}, "broken.mp4": "failed"}
    done = [Path(str(e["path"])).name for log in logs for e in read_events(log) if e.get("event") == "job_done"]
    assert sorted(done) == [f"clip{i:02d}.mp4" for i in range(6)]  # each video done once over the three runs
    failed = [e for log in logs for e in read_events(log) if e.get("event") == "job_failed"]
    assert [(Path(str(e["path"])).name, e["attempt"]) for e in failed] == [("broken.mp4", 1)]
    assert index_rows(db) == index_rows(plain[1])
    assert {p.name: p.read_bytes() for p in out.iterdir()} == {
        p.name: p.read_bytes() for p in plain[0].iterdir() if p.suffix == ".srt"}


def test_a_model_engine_reads_on_a_pooled_ocr_actor_with_the_plain_runs_cues(
    cluster: str, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """hunyuan-transformers with the tiny random HunYuanVL (made confident, so cues are written): the crops of two
    videos go to one OCR actor (no GPU here: actor_gpus 0), and the SRT is the plain run's."""
    pytest.importorskip("transformers.models.hunyuan_vl")
    from hunyuan_testutil import confident_model

    from vidocr.cluster import RayExtractor, RayOptions
    from vidocr.engines import EngineOptions
    from vidocr.formats import get_writer
    from vidocr.pipeline import ExtractOptions

    extra = {"model": str(confident_model(tmp_path_factory)), "max_tokens": 12}
    options = ExtractOptions(engine="hunyuan-transformers", engine_options=EngineOptions(batch_size=4, extra=extra))
    videos = [ROOT / "samples" / "demo.mp4", ROOT / "samples" / "en.mp4"]
    srt = get_writer("srt")
    with RayExtractor(options, RayOptions(actor_cpus=0)) as extractor:
        assert len(extractor.actors) == 1
        on_ray, crops = {}, 0
        for video in extractor.run_ahead(videos, key=lambda v: v):
            cues, info = extractor(video)
            on_ray[video.name] = srt.render(list(cues), info)
            crops += info.stats.ocr_calls or 0
        [log] = extractor.batch_logs()
    assert sum(log.sizes) == crops > 0  # every crop of both videos was read by the actor's engine
    with Extractor(options) as plain_extractor:
        for video in videos:
            cues, info = plain_extractor(video)
            assert srt.render(list(cues), info) == on_ray[video.name]
    assert all(" --> " in text for text in on_ray.values())



def _record_submits(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The names of the videos sent to Ray from now on (RayExtractor.submit, recorded and carried out)."""
    from vidocr.cluster import RayExtractor

    submitted: list[str] = []
    real_submit = RayExtractor.submit

    def submit(self: RayExtractor, path: str | os.PathLike[str]) -> None:
        submitted.append(Path(path).name)
        real_submit(self, path)

    monkeypatch.setattr(RayExtractor, "submit", submit)
    return submitted


def test_watch_skip_existing_sends_no_video_whose_outputs_exist_and_jobs_shows_per_node_throughput(
    cluster: str, library: Path, plain: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str]
) -> None:
    """Three clips' outputs exist: with --skip-existing their jobs are done without their videos reaching Ray (no
    task submitted); the other three are extracted on Ray, and `vidocr jobs` shows the one node's throughput from
    the runs the driver recorded (busy time = the union of the tasks' intervals)."""
    folder, out, jobs_db = tmp_path / "in", tmp_path / "out", tmp_path / "q.jobs"
    folder.mkdir()
    out.mkdir()
    for video in library.iterdir():
        os.link(video, folder / video.name)
    kept = {f"clip{i:02d}.srt": (plain[0] / f"clip{i:02d}.srt").read_bytes() for i in range(3)}
    for name, data in kept.items():
        (out / name).write_bytes(data)
    submitted = _record_submits(monkeypatch)
    argv = ["watch", str(folder), "--once", "--settle", "0.2", "--jobs-db", str(jobs_db), "-o", str(out), "-q",
            "--skip-existing", "--ray", cluster]
    logger = logging.getLogger("vidocr")  # watch points it at this test's stderr: later tests must not log there
    saved = (list(logger.handlers), logger.level, logger.propagate)
    try:
        assert main(argv) == 1  # broken.mp4 failed
    finally:
        logger.handlers[:], logger.propagate = saved[0], saved[2]
        logger.setLevel(saved[1])
    assert sorted(submitted) == ["broken.mp4", "clip03.mp4", "clip04.mp4", "clip05.mp4"]
    assert job_states(jobs_db) == {**{f"clip{i:02d}.mp4": "done" for i in range(6)}, "broken.mp4": "failed"}
    assert {p.name: p.read_bytes() for p in out.iterdir()} == {
        **kept, **{f"clip{i:02d}.srt": (plain[0] / f"clip{i:02d}.srt").read_bytes() for i in range(3, 6)}}

    conn = sqlite3.connect(jobs_db)
    try:
        runs = conn.execute("SELECT j.path, r.node, r.finished_at, r.task_s, r.video_s, r.frames FROM ray_runs r"
                            " JOIN jobs j ON j.id = r.job_id").fetchall()
    finally:
        conn.close()
    assert sorted(Path(os.fsdecode(r[0])).name for r in runs) == ["clip03.mp4", "clip04.mp4", "clip05.mp4"]
    assert len({r[1] for r in runs}) == 1 and all(r[3] > 0 and r[5] > 0 for r in runs)
    assert all(abs(r[4] - 1.6) < 0.05 for r in runs)  # the clips' duration

    capsys.readouterr()
    assert main(["jobs", "--jobs-db", str(jobs_db), "--json"]) == 0
    [node] = json.loads(capsys.readouterr().out)["nodes"]
    intervals = sorted((r[2] - r[3], r[2]) for r in runs)
    union, end = 0.0, float("-inf")  # the busy time, computed here independently
    for start, stop in intervals:
        union += max(0.0, stop - max(start, end))
        end = max(end, stop)
    assert node["videos"] == 3 and node["node"] == runs[0][1] and node["frames"] == sum(r[5] for r in runs)
    assert node["busy_s"] == pytest.approx(union, abs=1e-3) and 0 < union <= sum(r[3] for r in runs) + 1e-6
    assert node["videos_per_hour"] == pytest.approx(3 * 3600 / union, rel=1e-3)
    assert node["realtime"] == pytest.approx(sum(r[4] for r in runs) / union, abs=0.01)
    assert main(["jobs", "--jobs-db", str(jobs_db)]) == 0
    text = capsys.readouterr().out.splitlines()
    header = text.index("ray node             id        videos  video h   busy h  videos/h  speed")
    [row] = text[header + 1:]
    # The table shows the speed to one decimal, the JSON to two: 10.15 in the JSON may be 10.1x or 10.2x here.
    assert row.split()[1:3] == [runs[0][1][:8], "3"] and row.endswith("x")
    assert float(row.split()[-1][:-1]) == pytest.approx(node["realtime"], abs=0.051)


def test_watch_on_ray_runs_a_job_with_its_own_engine_choice_on_the_driver_and_sends_only_the_others(
    cluster: str, library: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A job queued with an engine choice (`vidocr serve`'s A/B runs) beside the same file's own job: the runner
    extracts it with that choice on the driver; only the run's own jobs go to Ray (one task per video)."""
    from vidocr.daemon.choice import EngineChoice
    from vidocr.daemon.jobs import JobQueue
    from vidocr.files import Stamp

    folder, db = tmp_path / "in", tmp_path / "lib.sqlite"
    jobs_db = Path(f"{db}.jobs")
    folder.mkdir()
    for name in ("clip00.mp4", "clip01.mp4"):
        os.link(library / name, folder / name)
    queue = JobQueue(jobs_db)
    try:
        video = str((folder / "clip01.mp4").absolute())
        assert queue.enqueue(video, Stamp.of(os.stat(video)), str(folder.absolute()),
                             engine=EngineChoice.of("rapidocr").key()) == "new"
    finally:
        queue.close()
    submitted = _record_submits(monkeypatch)
    logger = logging.getLogger("vidocr")
    saved = (list(logger.handlers), logger.level, logger.propagate)
    try:
        assert main(["watch", str(folder), "--once", "--settle", "0.2", "--db", str(db), "-q", "--ray", cluster]) == 0
    finally:
        logger.handlers[:], logger.propagate = saved[0], saved[2]
        logger.setLevel(saved[1])
    assert sorted(submitted) == ["clip00.mp4", "clip01.mp4"]
    conn = sqlite3.connect(jobs_db)
    try:
        jobs = sorted((Path(os.fsdecode(p)).name, e != "", s) for p, e, s in
                      conn.execute("SELECT path, engine, state FROM jobs"))
        ran = {j for (j,) in conn.execute("SELECT job_id FROM ray_runs")}
        chosen = conn.execute("SELECT id FROM jobs WHERE engine != ''").fetchone()[0]
    finally:
        conn.close()
    assert jobs == [("clip00.mp4", False, "done"), ("clip01.mp4", False, "done"), ("clip01.mp4", True, "done")]
    assert len(ran) == 2 and chosen not in ran  # only the Ray runs are recorded for `vidocr jobs`


def test_extract_on_ray_ends_with_the_per_node_line(cluster: str, library: Path, tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    capsys.readouterr()
    assert main(["extract", str(library / "clip00.mp4"), str(library / "clip01.mp4"), "-o", str(tmp_path),
                 "--ray", cluster]) == 0
    lines = capsys.readouterr().err.splitlines()
    [line] = [text for text in lines if text.startswith("ray: ")]
    assert re.fullmatch(r"ray: 2 done, 0 failed, 0 running; nodes: \w{8} 2 \(\d+\.\dx\)", line), line
    [last] = [i for i, text in enumerate(lines) if text.startswith("[2/2] ")]
    assert lines.index(line) == last + 1  # after the videos' lines, before the summary
