"""The ``hunyuan-vllm`` engine with the real vLLM (CPU build) and a tiny random-weight HunYuanVL model.

Structure, not text: a random model reads nothing, so these tests check requests, batching, order and that
cues are made of what the model answered. The engine runs in vLLM's default multi-process mode, as in
production; text correctness of the pipeline is the CPU engine's tests' job.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import pytest

pytest.importorskip("vllm")
pytest.importorskip("transformers.models.hunyuan_vl")

from hunyuan_testutil import TINY_EXTRA, VLLM_ENV, band_crops, tiny_model  # noqa: E402

from vidocr.engines import EngineOptions  # noqa: E402
from vidocr.engines.hunyuan_vllm import HunyuanVllmEngine  # noqa: E402
from vidocr.types import OcrResult, Task  # noqa: E402

pytestmark = [pytest.mark.vllm, pytest.mark.timeout(300)]
SAMPLE = Path(__file__).resolve().parents[1] / "samples" / "en.mp4"


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HunyuanVllmEngine]:
    env = pytest.MonkeyPatch()
    # collective_rpc ships a function to the workers: vLLM wants this opt-in for pickled callables.
    for key, value in {**VLLM_ENV, "VLLM_ALLOW_INSECURE_SERIALIZATION": "1"}.items():
        env.setenv(key, value)
    extra = {"model": str(tiny_model(tmp_path_factory)), **TINY_EXTRA, "engine_kwargs": {"enforce_eager": True}}
    eng = HunyuanVllmEngine(EngineOptions(batch_size=4, translate_to="en", extra=extra))
    yield eng
    eng.close()
    env.undo()


def test_fix_is_active_in_vllm_worker_processes(engine: HunyuanVllmEngine) -> None:
    def state(worker: Any) -> tuple[int, bool, dict[str, bool]]:
        import os

        from vllm.model_executor.models.transformers.multimodal import MultiModalMixin

        from vidocr import vllm_plugin

        patched = hasattr(MultiModalMixin._process_vision_input, "__vidocr_original__")
        return os.getpid(), patched, vllm_plugin.applied()

    assert engine._llm is not None
    states = engine._llm.collective_rpc(state, timeout=60)
    assert states and all(pid != os.getpid() and patched for pid, patched, _ in states), states


def test_batch_keeps_order_and_equals_one_at_a_time(engine: HunyuanVllmEngine) -> None:
    crops = band_crops(6, seed=3)
    before = len(engine.batch_sizes)
    batch = [r.text for r in engine.recognize(crops, Task.SUBTITLE)]
    reverse = [r.text for r in engine.recognize(crops[::-1], Task.SUBTITLE)]
    single = [engine.recognize([c], Task.SUBTITLE)[0].text for c in crops]
    assert len(set(batch)) >= 3, batch  # distinct answers, so order mistakes would show
    assert batch == single
    assert reverse == batch[::-1]
    assert engine.batch_sizes[before:] == [6, 6, 1, 1, 1, 1, 1, 1]  # one generate call per recognize


def test_tiny_crops_and_translation(engine: HunyuanVllmEngine) -> None:
    tiny = np.zeros((1, 1, 3), np.uint8)
    before = engine.stats.snapshot()
    results = engine.recognize([tiny, *band_crops(2, seed=5)], Task.TRANSLATE)
    after = engine.stats.snapshot()
    assert results[0] == OcrResult()
    assert after.get("tiny", 0) - before.get("tiny", 0) == 1
    assert after["requests"] - before["requests"] == 2
    for r in results[1:]:
        assert r.raw is not None
        assert (r.translation is not None) == bool(r.lines)


class Spy:
    """Passes calls to the real engine and keeps what went in and out."""

    name: ClassVar[str] = "hunyuan-vllm"
    tasks = HunyuanVllmEngine.tasks

    def __init__(self, inner: HunyuanVllmEngine) -> None:
        self.inner, self.preferred_batch = inner, inner.preferred_batch
        self.calls: list[tuple[list[np.ndarray], list[OcrResult]]] = []

    def recognize(self, images: Sequence[np.ndarray], task: Task) -> list[OcrResult]:
        results = self.inner.recognize(images, task)
        self.calls.append((list(images), results))
        return results

    def close(self) -> None:
        pass


@pytest.mark.skipif(not SAMPLE.is_file(), reason="samples/en.mp4 not generated")
def test_extract_sample_video_end_to_end(engine: HunyuanVllmEngine) -> None:
    import vidocr
    from vidocr.merge import MergeOptions
    from vidocr.textnorm import normalize_text

    spy = Spy(engine)
    before_batches, before = len(engine.batch_sizes), engine.stats.snapshot()
    options = vidocr.ExtractOptions(
        engine="hunyuan-vllm",
        engine_options=EngineOptions(batch_size=4),
        merge=MergeOptions(min_confidence=0.0),  # a random model is never confident
    )
    cue_iter, info = vidocr.extract(SAMPLE, options, engine=spy)
    cues = list(cue_iter)

    crops = [img for images, _ in spy.calls for img in images]
    answers = [r for _, results in spy.calls for r in results]
    real = [img for img in crops if min(img.shape[:2]) >= 8]
    assert len(crops) == info.stats.ocr_calls > 4  # one engine request per read the detector asked for
    assert all(len(images) <= 4 for images, _ in spy.calls) and info.stats.max_batch == 4
    x, y, w, h = info.stats.band.as_list()
    assert all(img.shape[0] <= h and img.shape[1] <= w and img.shape[2] == 3 for img in real)  # band crops
    # Each recognize call is ONE vLLM generate over its real crops; every real crop is one request.
    per_call = [sum(min(i.shape[:2]) >= 8 for i in images) for images, _ in spy.calls]
    assert engine.batch_sizes[before_batches:] == [n for n in per_call if n]
    assert engine.stats.snapshot()["requests"] - before.get("requests", 0) == len(real)
    # Cues carry the model's own words, in time order, inside the video.
    said = {normalize_text(r.text) for r in answers if r.text}
    assert cues, "no cue formed from the model's answers"
    assert all(cue.text in said for cue in cues)
    assert [c.start_ms for c in cues] == sorted(c.start_ms for c in cues)
    assert all(0 <= c.start_ms < c.end_ms <= 10_000 for c in cues)
