"""The embedded CPU engine ``rapidocr``: the PP-OCRv6 small det/rec ONNX models shipped inside the
rapidocr wheel, run by :mod:`vidocr.engines.ppocr` (rapidocr's own steps without its slow wrapper).

Tuned for subtitle bands (measured on a 2-core machine): the detector limits the LONG side to 736
pixels, the detection model's own working size (rapidocr's default limits the SHORT side and blew a
1280x180 band up to ~5200x736: 30x slower, and it invented text on empty bands); wide crops get blank
rows up to 16:1 rather than rapidocr's 4:1 (half the detector's work; the same text on our samples and
real clips); recognition reads the lines at full resolution from the original crop; no angle
classifier (subtitles are upright). ONNX Runtime runs one thread per call; parallelism comes from
several calls at once on threads sharing one instance, which scaled better than ORT's intra-op
threads on few cores. Only the default models are used: they are inside the wheel, every other
model would be downloaded at run time.

Not covered by these models: Korean (Hangul comes back empty or garbled) — use a HunyuanOCR engine.
"""

from __future__ import annotations

import logging
import os
import unicodedata
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from typing import ClassVar, TypeVar

import numpy as np

from vidocr.engines import EngineOptions
from vidocr.engines.ppocr import PpOcr, PpOcrConfig
from vidocr.errors import EngineError
from vidocr.types import Box, OcrLine, OcrResult, Task

log = logging.getLogger("vidocr")
_T = TypeVar("_T")


def build_ocr(options: EngineOptions | None = None) -> PpOcr:
    """The PP-OCR runner with our subtitle settings; ``extra["ppocr"]`` overrides :class:`PpOcrConfig` fields."""
    overrides = dict((options.extra if options else {}).get("ppocr", {}))
    try:
        return PpOcr(replace(PpOcrConfig(), **overrides))
    except TypeError as exc:
        raise EngineError(f"unknown ppocr setting: {exc}") from exc


def read_band(ocr: PpOcr, image: np.ndarray) -> OcrResult:
    """Detect and recognise one BGR band crop and rebuild lines from its boxes."""
    pieces = []
    for quad, text, score in ocr.read(image):
        x0, y0 = quad.min(axis=0)
        x1, y1 = quad.max(axis=0)
        pieces.append((float(x0), float(y0), float(x1), float(y1), text.strip(), score))
    return OcrResult(lines=tuple(group_lines(pieces)))


def reread_band(ocr: PpOcr, image: np.ndarray, prior: OcrResult) -> OcrResult | None:
    """Recognise only ``prior``'s line boxes in ``image`` (no detection: ~40% of a read's cost).

    Returns the prior's lines with fresh confidences when every line reads back the same text
    (whitespace aside), None when it does not or a box is not inside the image: then a full read
    must decide.
    """
    height, width = image.shape[:2]
    crops = []
    for line in prior.lines:
        b = line.box
        if b is None or b.w < 4 or b.h < 4:
            return None
        x0, y0, x1, y1 = max(0, b.x), max(0, b.y), min(width, b.x + b.w), min(height, b.y + b.h)
        if (x1 - x0) < 0.95 * b.w or (y1 - y0) < 0.9 * b.h:
            return None
        crops.append(image[y0:y1, x0:x1])
    if not crops:
        return None
    lines = []
    for line, (text, score) in zip(prior.lines, ocr.recognize(crops), strict=True):
        if score < ocr.config.text_score or _squash(str(text)) != _squash(line.text):
            return None
        lines.append(OcrLine(text=line.text, confidence=float(score), box=line.box))
    return OcrResult(lines=tuple(lines), confirmed=True)


def _squash(text: str) -> str:
    return "".join(unicodedata.normalize("NFKC", text).split())


def group_lines(pieces: list[tuple[float, float, float, float, str, float]]) -> list[OcrLine]:
    """Group detected boxes into visual lines (top to bottom) and join each line's boxes left to right.

    Boxes on one line are joined with a space when the gap between them is wider than a third of the
    line height (the recogniser drops such spaces; CJK subtitles use them between phrases too).
    """
    pieces = sorted(pieces, key=lambda p: (p[1] + p[3]) / 2)
    rows: list[list[tuple[float, float, float, float, str, float]]] = []
    for p in pieces:
        cy, h = (p[1] + p[3]) / 2, p[3] - p[1]
        for row in rows:
            ry0 = min(q[1] for q in row)
            ry1 = max(q[3] for q in row)
            if ry0 <= cy <= ry1 and 0.5 <= h / max(ry1 - ry0, 1.0) <= 2.0:
                row.append(p)
                break
        else:
            rows.append([p])
    lines = []
    for row in rows:
        row.sort(key=lambda q: q[0])
        text = row[0][4]
        height = max(q[3] - q[1] for q in row)
        for left, right in zip(row, row[1:], strict=False):
            gap = right[0] - left[2]
            text += (" " if gap > height / 3 else "") + right[4]
        total = sum(len(q[4]) for q in row)
        conf = sum(q[5] * len(q[4]) for q in row) / max(total, 1)
        x0, y0 = min(q[0] for q in row), min(q[1] for q in row)
        x1, y1 = max(q[2] for q in row), max(q[3] for q in row)
        box = Box(int(x0), int(y0), int(round(x1 - x0)), int(round(y1 - y0)))
        lines.append(OcrLine(text=text, confidence=conf, box=box))
    return lines


class RapidOcrEngine:
    """One RapidOCR instance read from ``workers`` threads (default: one per CPU core).

    ONNX Runtime releases the GIL while a model runs and a session may be run from several threads,
    so threads sharing one instance read as fast as one process per core did (measured: 146 bands,
    2 cores: 3.6 s vs 3.8 s), load the models once instead of once per process (~0.6 CPU-s each)
    and need no pickling of images.
    """

    name: ClassVar[str] = "rapidocr"
    tasks: ClassVar[frozenset[Task]] = frozenset({Task.SUBTITLE, Task.TEXT})

    def __init__(self, options: EngineOptions | None = None) -> None:
        options = options or EngineOptions()
        self.workers = options.workers or max(1, min(os.cpu_count() or 1, 8))
        self.preferred_batch = options.batch_size or 2 * self.workers
        try:
            self._ocr: PpOcr | None = build_ocr(options)
        except EngineError:
            raise
        except Exception as exc:  # onnxruntime raises assorted errors when models can't load
            raise EngineError(f"rapidocr failed to start: {exc}") from exc
        self._threads: ThreadPoolExecutor | None = None
        if self.workers > 1:
            self._threads = ThreadPoolExecutor(self.workers, thread_name_prefix="vidocr-rapidocr")

    def recognize(self, images: Sequence[np.ndarray], task: Task = Task.SUBTITLE) -> list[OcrResult]:
        return self._each(task, list(images), read_band)

    def reread(
        self, images: Sequence[np.ndarray], priors: Sequence[OcrResult], task: Task = Task.SUBTITLE
    ) -> list[OcrResult]:
        """Confirm earlier reads by recognising their boxes only; a full read where that fails."""

        def again(ocr: PpOcr, pair: tuple[np.ndarray, OcrResult]) -> OcrResult:
            image, prior = pair
            return reread_band(ocr, image, prior) or read_band(ocr, image)

        return self._each(task, list(zip(images, priors, strict=True)), again)

    def _each(self, task: Task, items: list[_T], read: Callable[[PpOcr, _T], OcrResult]) -> list[OcrResult]:
        """``read`` every item, in order, on the engine's threads."""
        if task not in self.tasks:
            raise EngineError(f"engine {self.name!r} cannot do task {task.value!r}")
        ocr = self._ocr
        if ocr is None:
            raise EngineError("rapidocr engine is closed")
        try:
            if self._threads is None or len(items) < 2:
                return [read(ocr, item) for item in items]
            return list(self._threads.map(lambda item: read(ocr, item), items))
        except Exception as exc:
            raise EngineError(f"rapidocr failed: {exc}") from exc

    def close(self) -> None:
        if self._threads is not None:
            self._threads.shutdown(wait=True)
            self._threads = None
        self._ocr = None

    def __enter__(self) -> RapidOcrEngine:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
