"""``--ray`` with the ``hunyuan-vllm`` engine: the real vLLM (CPU build) and the tiny random-weight HunYuanVL model
(made confident, so cues are written) in one OCR actor of a local Ray (``ray.init(num_cpus=2)``, no GPU: the actor
takes none). The band crops of several video tasks are read by that one engine, calls of different videos joined
into one batch, and each video's SRT is the plain run's with the same engine. A vLLM engine takes ~1.5 minutes to
start on a 2-core machine and two are started (the actor's, the plain run's), so this is one test."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

ray = pytest.importorskip("ray")
pytest.importorskip("vllm")
pytest.importorskip("transformers.models.hunyuan_vl")
psutil = pytest.importorskip("psutil")

from hunyuan_testutil import TINY_EXTRA, VLLM_ENV, confident_model  # noqa: E402

from vidocr.engines import EngineOptions  # noqa: E402
from vidocr.extractor import Extractor  # noqa: E402
from vidocr.formats import get_writer  # noqa: E402
from vidocr.pipeline import ExtractOptions  # noqa: E402

pytestmark = [pytest.mark.vllm, pytest.mark.timeout(900)]
SAMPLES = Path(__file__).resolve().parents[1] / "samples"
VIDEOS = [SAMPLES / name for name in ("demo.mp4", "en.mp4", "zh.mp4")]


@pytest.fixture(scope="module")
def cluster() -> Iterator[None]:
    """A local Ray with two CPUs for this module. OMP_THREAD_LIMIT (left by a libtesseract load in an earlier
    test) must not reach vLLM's processes through Ray's: it makes the CPU engine read NaN."""
    env = pytest.MonkeyPatch()
    env.delenv("OMP_THREAD_LIMIT", raising=False)
    if ray.is_initialized():  # an earlier module's Ray: this module wants its own
        ray.shutdown()
    ray.init(num_cpus=2, include_dashboard=False)
    yield
    ray.shutdown()
    env.undo()


#: The Ray run joins crops of different videos into one engine call, the plain run does not; a random model's
#: near-tied logits flip with the float rounding of another batch shape or thread count (seen: a cue ending 0.5 s
#: apart). So vLLM computes each crop alone (one sequence at a time, no prefix cache) on one thread, in both runs.
SAME_MATH_ENV = {"VLLM_CPU_OMP_THREADS_BIND": "0"}
SAME_MATH_ENGINE = {"max_num_seqs": 1, "engine_kwargs": {"enforce_eager": True, "enable_prefix_caching": False}}


@pytest.fixture(scope="module")
def options(tmp_path_factory: pytest.TempPathFactory) -> ExtractOptions:
    extra = {"model": str(confident_model(tmp_path_factory)), **TINY_EXTRA, **SAME_MATH_ENGINE}
    return ExtractOptions(engine="hunyuan-vllm", engine_options=EngineOptions(batch_size=4, extra=extra))


def alive(pids: list[int] | set[int]) -> list[str]:
    """The command lines of those processes that still run. multiprocessing's resource tracker, which the first
    spawn of a process starts and which lives as long as it by design, is not counted."""
    out = []
    for pid in sorted(pids):
        try:
            proc = psutil.Process(pid)
            if proc.status() != psutil.STATUS_ZOMBIE:
                cmdline = " ".join(proc.cmdline())
                if "multiprocessing.resource_tracker" not in cmdline:
                    out.append(f"{pid}: {cmdline[:200]}")
        except psutil.NoSuchProcess:
            continue
    return out


def test_vllm_engine_in_one_ocr_actor_reads_several_videos_crops_in_joined_batches_with_the_plain_runs_cues(
    cluster: None, options: ExtractOptions, monkeypatch: pytest.MonkeyPatch
) -> None:
    from vidocr.cluster import RayExtractor, RayOptions

    srt = get_writer("srt")
    started = time.monotonic()
    on_ray: dict[str, str] = {}
    crops: dict[str, int] = {}
    # The three video tasks run at once (half a CPU each): while the engine reads one video's crops, the other two
    # videos' calls wait and become one batch (two videos alone would take turns, one caller per batch).
    ray_options = RayOptions(num_cpus=0.5, actor_cpus=0, runtime_env={"env_vars": {**VLLM_ENV, **SAME_MATH_ENV}},
                             max_in_flight=len(VIDEOS))
    extractor = RayExtractor(options, ray_options)
    try:
        assert len(extractor.actors) == 1
        [actor] = extractor.actors
        actor_pids: list[int] = ray.get(actor.processes.remote())
        assert len(actor_pids) >= 2  # the actor and vLLM's engine process under it
        up_s = time.monotonic() - started
        for video in extractor.run_ahead(VIDEOS, key=lambda v: v):
            cues, info = extractor(video)
            on_ray[video.name] = srt.render(list(cues), info)
            crops[video.name] = info.stats.ocr_calls or 0
        [log] = extractor.batch_logs()
        nodes = dict(extractor.counts.node_videos)
    finally:
        extractor.close()
    ray_s = time.monotonic() - started
    print(f"ray: engine up in {up_s:.0f} s, {len(VIDEOS)} videos in {ray_s - up_s:.0f} s; "
          f"batches {log.sizes}, videos per batch {log.callers}")
    deadline = time.monotonic() + 30
    while alive(actor_pids) and time.monotonic() < deadline:  # the actor closed its engine, then was killed
        time.sleep(0.5)
    assert alive(actor_pids) == []

    assert sum(log.sizes) == sum(crops.values()) and all(n > 0 for n in crops.values())  # all read by the actor
    assert max(log.callers) >= 2, log.callers  # crops of different videos joined into one engine call
    assert sum(nodes.values()) == len(VIDEOS)

    children_before = {p.pid for p in psutil.Process().children(recursive=True)}
    for key, value in {**VLLM_ENV, **SAME_MATH_ENV}.items():
        monkeypatch.setenv(key, value)
    with Extractor(options) as plain:
        for video in VIDEOS:
            cue_iter, info = plain(video)
            assert srt.render(list(cue_iter), info) == on_ray[video.name], video.name
            assert info.stats.ocr_calls == crops[video.name]
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        left = {p.pid for p in psutil.Process().children(recursive=True)} - children_before
        if not alive(left):
            break
        time.sleep(0.5)
    assert alive(left) == []  # the plain run's vLLM processes ended with it
    assert all(" --> " in text for text in on_ray.values()), on_ray  # cues were written, not empty files
    print(f"plain: {time.monotonic() - started - ray_s:.0f} s")
