"""The embedded CPU engine: RapidOCR (PP-OCR ONNX models shipped inside the rapidocr wheel).

Tuned for subtitle bands (measured on a 2-core machine): the detector limits the LONG side to 736
pixels, the detection model's own working size (rapidocr's default limits the SHORT side and blew a
1280x180 band up to ~5200x736: 30x slower, and it invented text on empty bands); recognition still
reads the lines at full resolution from the original crop, the angle classifier is off (subtitles are upright),
and each process runs ONNX Runtime with one thread; parallelism comes from worker processes, which
scale better than ORT threads on few cores. Only the default models are used: they are inside the
wheel, every other model would be downloaded at run time.

Not covered by these models: Korean (Hangul comes back empty or garbled) — use a HunyuanOCR engine.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np

from vidocr.engines import EngineOptions
from vidocr.errors import EngineError
from vidocr.types import Box, OcrLine, OcrResult, Task
from vidocr.workers import WorkerPool

log = logging.getLogger("vidocr")

RAPIDOCR_PARAMS: dict[str, Any] = {
    "Det.limit_type": "max",
    "Det.limit_side_len": 736,
    "Global.use_cls": False,
    "Global.log_level": "critical",
    "EngineConfig.onnxruntime.intra_op_num_threads": 1,
    "EngineConfig.onnxruntime.inter_op_num_threads": 1,
}

def _build_ocr(params: dict[str, Any]) -> Any:
    from rapidocr import RapidOCR

    logging.getLogger("RapidOCR").setLevel(logging.ERROR)
    return RapidOCR(params=dict(params))


def worker_handler(params: dict[str, Any]) -> Any:
    """Runs in a worker process (:mod:`vidocr.workers`): build RapidOCR once, then read bands."""
    ocr = _build_ocr(params)
    return lambda image: read_band(ocr, image)


def read_band(ocr: Any, image: np.ndarray) -> OcrResult:
    """Run RapidOCR on one BGR band crop and rebuild lines from its boxes."""
    output = ocr(image)
    boxes = getattr(output, "boxes", None)
    if boxes is None or output.txts is None:
        return OcrResult()
    pieces = []
    for quad, text, score in zip(boxes, output.txts, output.scores, strict=False):
        pts = np.asarray(quad, dtype=np.float32)
        x0, y0 = pts.min(axis=0)
        x1, y1 = pts.max(axis=0)
        if text and text.strip():
            pieces.append((float(x0), float(y0), float(x1), float(y1), str(text).strip(), float(score)))
    return OcrResult(lines=tuple(group_lines(pieces)))


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
    """RapidOCR in ``workers`` processes (default: one per CPU core)."""

    name: ClassVar[str] = "rapidocr"
    tasks: ClassVar[frozenset[Task]] = frozenset({Task.SUBTITLE, Task.TEXT})

    def __init__(self, options: EngineOptions | None = None) -> None:
        options = options or EngineOptions()
        self.workers = options.workers or max(1, min(os.cpu_count() or 1, 8))
        self.preferred_batch = options.batch_size or 2 * self.workers
        self.params = {**RAPIDOCR_PARAMS, **dict(options.extra.get("rapidocr_params", {}))}
        self._ocr: Any = None
        self._pool: WorkerPool | None = None
        try:
            if self.workers == 1:
                self._ocr = _build_ocr(self.params)
            else:
                self._pool = WorkerPool(self.workers, "vidocr.engines.rapid:worker_handler", (self.params,))
        except Exception as exc:  # rapidocr/onnxruntime raise assorted errors when models can't load
            raise EngineError(f"rapidocr failed to start: {exc}") from exc

    def recognize(self, images: Sequence[np.ndarray], task: Task = Task.SUBTITLE) -> list[OcrResult]:
        if task not in self.tasks:
            raise EngineError(f"engine {self.name!r} cannot do task {task.value!r}")
        try:
            if self._pool is None:
                return [read_band(self._ocr, img) for img in images]
            return self._pool.map(list(images))
        except Exception as exc:
            raise EngineError(f"rapidocr failed: {exc}") from exc

    def close(self) -> None:
        if self._pool is not None:
            self._pool.close()
            self._pool = None
        self._ocr = None

    def __enter__(self) -> RapidOcrEngine:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
