"""Re-reads: an earlier read's boxes are recognised alone (no detection) and confirmed, or a full read decides.

Real RapidOCR on band crops decoded from the bundled samples; no mocked engine.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from support.synth import read_srt

from vidocr.engines import EngineOptions, Rereader
from vidocr.engines.rapid import RapidOcrEngine
from vidocr.ocrqueue import OcrWorker, Prior
from vidocr.types import Box, OcrResult, Task
from vidocr.video import VideoSource


def band_at(video: Path, seconds: float) -> np.ndarray:
    """The bottom quarter of the first frame at or after ``seconds``, as BGR."""
    with VideoSource(video) as src:
        height, width = src.info.height, src.info.width
        for frame in src.frames(start=seconds):
            top = int(height * 0.75)
            return frame.bgr(Box(0, top, width, height - top))
    raise AssertionError(f"no frame at {seconds}s in {video}")


@pytest.fixture(scope="module")
def zh_bands(samples: Path) -> dict[str, np.ndarray]:
    video = samples / "zh.mp4"
    truth = read_srt(samples / "zh.srt")
    first, second = truth[0], truth[1]
    mid1 = (first.start_ms + first.end_ms) / 2000
    return {
        "a": band_at(video, mid1),
        "a_later": band_at(video, mid1 + 0.4),
        "b": band_at(video, (second.start_ms + second.end_ms) / 2000),
    }


def test_rapidocr_engine_is_a_rereader(rapid_engine: RapidOcrEngine) -> None:
    assert isinstance(rapid_engine, Rereader)


def test_reread_of_the_same_subtitle_is_confirmed_from_its_boxes(
    rapid_engine: RapidOcrEngine, zh_bands: dict[str, np.ndarray]
) -> None:
    (prior,) = rapid_engine.recognize([zh_bands["a"]], Task.SUBTITLE)
    assert prior.text and not prior.confirmed
    (again,) = rapid_engine.reread([zh_bands["a_later"]], [prior], Task.SUBTITLE)
    assert again.confirmed
    assert again.text == prior.text
    assert [ln.box for ln in again.lines] == [ln.box for ln in prior.lines]
    assert 0.5 <= again.confidence <= 1.0


def test_reread_of_a_changed_subtitle_is_a_full_read(
    rapid_engine: RapidOcrEngine, zh_bands: dict[str, np.ndarray]
) -> None:
    (prior,) = rapid_engine.recognize([zh_bands["a"]], Task.SUBTITLE)
    (fresh,) = rapid_engine.recognize([zh_bands["b"]], Task.SUBTITLE)
    assert fresh.text and fresh.text != prior.text
    (again,) = rapid_engine.reread([zh_bands["b"]], [prior], Task.SUBTITLE)
    assert not again.confirmed
    assert again.text == fresh.text


def test_reread_whose_boxes_leave_the_image_is_a_full_read(
    rapid_engine: RapidOcrEngine, zh_bands: dict[str, np.ndarray]
) -> None:
    (prior,) = rapid_engine.recognize([zh_bands["a"]], Task.SUBTITLE)
    moved = prior.shifted(0, zh_bands["a"].shape[0])  # below the crop
    (again,) = rapid_engine.reread([zh_bands["a_later"]], [moved], Task.SUBTITLE)
    assert not again.confirmed
    assert again.text == prior.text
    # A prior without text cannot be confirmed either.
    (empty,) = rapid_engine.reread([zh_bands["a"]], [OcrResult()], Task.SUBTITLE)
    assert not empty.confirmed and empty.text == prior.text


def test_threaded_engine_rereads_in_parallel(zh_bands: dict[str, np.ndarray]) -> None:
    with RapidOcrEngine(EngineOptions(workers=2)) as engine:
        priors = engine.recognize([zh_bands["a"], zh_bands["b"]], Task.SUBTITLE)
        again = engine.reread([zh_bands["a_later"], zh_bands["b"]], priors, Task.SUBTITLE)
    assert [r.confirmed for r in again] == [True, True]
    assert [r.text for r in again] == [p.text for p in priors]


def test_queue_rereads_when_the_earlier_read_is_in_the_same_batch(
    rapid_engine: RapidOcrEngine, zh_bands: dict[str, np.ndarray]
) -> None:
    worker = OcrWorker(rapid_engine, Task.SUBTITLE, batch=8, queue_size=8)
    worker.submit(1, zh_bands["a"])
    worker.submit(2, zh_bands["a_later"], prior=Prior(1))  # same subtitle: confirmed
    worker.submit(3, zh_bands["b"], prior=Prior(2))  # the next subtitle: a full read
    worker.close()
    results = worker.take()
    assert sorted(results) == [1, 2, 3]
    assert not results[1].confirmed and results[2].confirmed and not results[3].confirmed
    assert results[2].text == results[1].text != results[3].text
    assert worker.rereads == 2
    assert worker.batches == [3]


class _CountingEngine:
    """A stand-in engine without ``reread`` (like the HunyuanOCR engines): it must get whole batches."""

    name = "counting"
    tasks = frozenset({Task.SUBTITLE})
    preferred_batch = 4

    def __init__(self) -> None:
        self.calls: list[int] = []

    def recognize(self, images: list[np.ndarray], task: Task) -> list[OcrResult]:
        self.calls.append(len(images))
        return [OcrResult() for _ in images]

    def close(self) -> None:
        pass


def test_engines_without_reread_get_whole_batches(zh_bands: dict[str, np.ndarray]) -> None:
    from vidocr.engines import load_engine_class, supports_reread

    engine = _CountingEngine()
    assert not supports_reread(engine)
    worker = OcrWorker(engine, Task.SUBTITLE, batch=4, queue_size=8)  # type: ignore[arg-type]
    worker.submit(1, zh_bands["a"])
    worker.submit(2, zh_bands["a_later"], prior=Prior(1))
    worker.submit(3, zh_bands["b"], prior=Prior(2))
    worker.submit(4, zh_bands["b"], prior=Prior(3))
    worker.close()
    assert engine.calls == [4] and sorted(worker.take()) == [1, 2, 3, 4] and worker.rereads == 0
    # The registry tells before an engine is built: the VLM engines have no reread.
    assert callable(getattr(load_engine_class("rapidocr"), "reread", None))
    assert not callable(getattr(load_engine_class("openai"), "reread", None))


def test_background_engine_tells_whether_it_rereads() -> None:
    from vidocr.engines import BackgroundEngine, supports_reread

    engine = BackgroundEngine("rapidocr", EngineOptions(workers=1))
    try:
        assert supports_reread(engine)
    finally:
        engine.close()

