"""The OCR stage's queue: band crops are batched to the engine on a background thread.

Decoding and change detection go on while the engine works (neither the decoder nor a GPU waits for the
other); the queue is bounded, so a slow engine pauses decoding instead of filling memory.
"""

from __future__ import annotations

import queue
import threading

import numpy as np

from vidocr.engines import OcrEngine
from vidocr.errors import EngineError, VidocrError
from vidocr.types import OcrResult, Task


class OcrWorker:
    """Runs engine.recognize on batches in a background thread; results come back by read id."""

    def __init__(self, engine: OcrEngine, task: Task, batch: int, queue_size: int) -> None:
        self.engine, self.task, self.batch_size = engine, task, max(1, batch)
        self._todo: queue.Queue[list[tuple[int, np.ndarray]] | None] = queue.Queue(
            maxsize=max(1, queue_size // self.batch_size)
        )
        self.results: dict[int, OcrResult] = {}
        self._lock = threading.Lock()
        self._error: BaseException | None = None
        self._batch: list[tuple[int, np.ndarray]] = []
        self.calls = 0
        self.batches: list[int] = []
        self._thread = threading.Thread(target=self._loop, name="vidocr-ocr", daemon=True)
        self._thread.start()

    def submit(self, read_id: int, crop: np.ndarray) -> None:
        self._batch.append((read_id, crop))
        if len(self._batch) >= self.batch_size:
            self.flush()

    def flush(self) -> None:
        if self._batch:
            batch, self._batch = self._batch, []
            while True:
                self.raise_error()
                try:
                    self._todo.put(batch, timeout=0.5)
                    break
                except queue.Full:
                    continue

    def take(self) -> dict[int, OcrResult]:
        self.raise_error()
        with self._lock:
            out, self.results = self.results, {}
        return out

    def raise_error(self) -> None:
        if self._error is not None:
            err = self._error
            if isinstance(err, VidocrError):
                raise err
            raise EngineError(f"{self.engine.name} failed: {err}") from err

    def close(self) -> None:
        self.flush()
        self._todo.put(None)
        self._thread.join()
        self.raise_error()

    def abort(self) -> None:
        self._batch = []
        try:
            while True:
                self._todo.get_nowait()
        except queue.Empty:
            pass
        self._todo.put(None)
        self._thread.join(timeout=30)

    def _loop(self) -> None:
        while True:
            batch = self._todo.get()
            if batch is None:
                return
            if self._error is not None:
                continue
            try:
                results = self.engine.recognize([crop for _, crop in batch], self.task)
                if len(results) != len(batch):
                    raise EngineError(f"{self.engine.name} returned {len(results)} results for {len(batch)} images")
            except BaseException as exc:  # noqa: BLE001 - re-raised in the consumer thread
                self._error = exc
                continue
            self.calls += len(batch)
            self.batches.append(len(batch))
            with self._lock:
                for (read_id, _), result in zip(batch, results, strict=True):
                    self.results[read_id] = result
