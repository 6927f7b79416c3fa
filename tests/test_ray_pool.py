"""OCR actors for model engines (``vidocr.cluster.pool``): crops of several videos joined into one engine call,
each caller's results back in order; per-node throughput (``vidocr.cluster.nodes``). The pool on a local Ray is
tested with the ``hunyuan-transformers`` engine in ``test_ray.py`` and with the vLLM engine in
``test_ray_vllm.py``."""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from vidocr.cluster.pool import Batcher
from vidocr.errors import EngineError
from vidocr.types import OcrLine, OcrResult, Task

SAMPLES = Path(__file__).resolve().parents[1] / "samples"


class SlowEngine:
    """Answers each crop with its first pixel's value as text; the first call blocks until released."""

    name = "slow"

    def __init__(self) -> None:
        self.calls: list[list[str]] = []
        self.release = threading.Event()

    def recognize(self, images: Sequence[np.ndarray], task: Task) -> list[OcrResult]:
        if not self.calls:
            self.release.wait(10)
        self.calls.append([str(int(image[0, 0, 0])) for image in images])
        return [OcrResult((OcrLine(str(int(image[0, 0, 0])), 1.0),)) for image in images]


def crops(*values: int) -> list[np.ndarray]:
    return [np.full((4, 4, 3), v, np.uint8) for v in values]


def test_calls_that_arrive_while_the_engine_is_busy_become_one_batch_each_caller_gets_its_own_results() -> None:
    engine = SlowEngine()
    batcher = Batcher(engine, max_batch=8)
    answers: dict[str, list[str]] = {}

    def call(name: str, values: tuple[int, ...]) -> None:
        answers[name] = [r.text for r in batcher.recognize(crops(*values), Task.SUBTITLE, caller=name)]

    first = threading.Thread(target=call, args=("a", (1, 2)))
    first.start()
    while batcher.log.busy_s == 0 and not engine.calls and not batcher._busy:
        time.sleep(0.01)
    others = [threading.Thread(target=call, args=(name, values))
              for name, values in (("b", (3, 4, 5)), ("c", (6,)), ("d", (7, 8, 9, 10, 11)))]
    for thread in others:
        thread.start()
    while len(batcher._queue) < 3:
        time.sleep(0.01)
    engine.release.set()
    for thread in (first, *others):
        thread.join(10)
    assert answers == {"a": ["1", "2"], "b": ["3", "4", "5"], "c": ["6"], "d": ["7", "8", "9", "10", "11"]}
    # a alone (the engine was idle); then b and c joined (4 crops), d did not fit in 8 with them: next call
    assert engine.calls == [["1", "2"], ["3", "4", "5", "6"], ["7", "8", "9", "10", "11"]]
    assert batcher.log.sizes == [2, 4, 5] and batcher.log.callers == [1, 2, 1]


def test_an_engine_error_reaches_every_caller_of_the_batch_and_the_next_batch_runs() -> None:
    class Failing(SlowEngine):
        def recognize(self, images: Sequence[np.ndarray], task: Task) -> list[OcrResult]:
            if int(images[0][0, 0, 0]) == 0:
                raise EngineError("boom")
            return super().recognize(images, task)

    engine = Failing()
    engine.release.set()
    batcher = Batcher(engine, max_batch=8)
    with pytest.raises(EngineError, match="boom"):
        batcher.recognize(crops(0, 1), Task.SUBTITLE)
    assert [r.text for r in batcher.recognize(crops(5), Task.SUBTITLE)] == ["5"]


def test_ray_options_without_ray_installed_name_the_extra_in_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    import sys

    from vidocr._cli import main

    monkeypatch.setitem(sys.modules, "ray", None)  # import ray raises ImportError
    video = SAMPLES / "short_cue.mp4"
    assert main(["extract", str(video), "-o", str(tmp_path), "--ray"]) == 2
    assert main(["index", "build", str(video), "--db", str(tmp_path / "i.sqlite"), "--ray", "auto"]) == 2
    err = capsys.readouterr().err
    assert err.splitlines() == ["error: --ray needs Ray: pip install 'vidocr[ray]'"] * 2
    assert not list(tmp_path.glob("*.srt"))


def test_node_throughput_counts_each_nodes_busy_time_once_for_tasks_side_by_side_and_only_done_jobs() -> None:
    import sqlite3

    from vidocr.cluster.nodes import busy_seconds, node_throughput, record_run

    assert busy_seconds([]) == 0.0
    assert busy_seconds([(0, 10), (5, 12), (11, 13), (20, 25), (21, 22)]) == 18.0  # [0, 13] and [20, 25]
    conn = sqlite3.connect(":memory:", isolation_level=None)
    assert node_throughput(conn) == []  # a queue without Ray runs
    conn.execute("CREATE TABLE jobs (id INTEGER PRIMARY KEY, state TEXT)")
    conn.executemany("INSERT INTO jobs VALUES (?, ?)", [(1, "done"), (2, "done"), (3, "done"), (4, "pending")])
    # node a: two 10 s tasks side by side, 30 s of video each; node b: one task; job 4 was queued again since
    record_run(conn, 1, "a" * 56, "host-a", 10.0, 30.0, 300, finished_at=1000.0)
    record_run(conn, 2, "a" * 56, "host-a", 10.0, 30.0, 300, finished_at=1002.0)
    record_run(conn, 3, "b" * 56, "host-b", 4.0, 6.0, 60, finished_at=1000.0)
    record_run(conn, 4, "b" * 56, "host-b", 4.0, 6.0, 60, finished_at=1010.0)
    a, b = node_throughput(conn)
    assert (a.host, a.videos, a.video_s, a.task_s, a.frames, a.busy_s) == ("host-a", 2, 60.0, 20.0, 600, 12.0)
    assert a.videos_per_hour == pytest.approx(600.0) and a.realtime == pytest.approx(5.0)
    assert (b.node, b.videos, b.busy_s, b.realtime) == ("b" * 56, 1, 4.0, 1.5)
    record_run(conn, 3, "a" * 56, "host-a", 1.0, 6.0, 60, finished_at=1001.0)  # job 3 run again, on a: replaced
    [a] = node_throughput(conn)
    assert (a.videos, a.busy_s, a.to_dict()["videos_per_hour"]) == (3, 12.0, 900.0)
