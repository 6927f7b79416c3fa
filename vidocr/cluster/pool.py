"""A pool of OCR actors for the model engines (hunyuan-vllm, hunyuan-transformers, openai) on Ray.

Each actor holds one engine (one vLLM engine on one GPU: ``num_gpus=1`` where the cluster has GPUs) and serves the
band crops of every video task that is sent to it. Calls from several videos that arrive while the engine is busy
are joined into one ``recognize`` call (:class:`Batcher`), so GPU batches stay full while the CPUs decode; each
caller gets its own results back, in order. A video task reads through :class:`PooledEngine`, an
:class:`~vidocr.engines.OcrEngine` that forwards its batches to an actor, so the pipeline is the plain run's
``vidocr.extract(path, options, engine=...)``. Back-pressure is the pipeline's own: a video task waits for its
batch's answer before its OCR queue takes more crops.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from vidocr.engines import EngineOptions, engine_spec
from vidocr.errors import EngineError, VidocrError
from vidocr.types import OcrResult, Task


@dataclass
class _Request:
    images: list[np.ndarray]
    task: Task
    caller: str
    results: list[OcrResult] | None = None
    error: BaseException | None = None
    done: bool = False


@dataclass
class BatchLog:
    """What the engine was given: per call, the number of crops and how many callers (videos) they came from."""

    sizes: list[int] = field(default_factory=list)
    callers: list[int] = field(default_factory=list)
    busy_s: float = 0.0


class Batcher:
    """Joins concurrent ``recognize`` calls into engine calls of at most ``max_batch`` crops (one task each).

    No call waits on purpose: while the engine reads one batch, the calls that arrive queue up and become the next
    batch, so batches grow with the load and a lone caller is served at once. Thread-safe.
    """

    def __init__(self, engine: Any, max_batch: int) -> None:
        self.engine, self.max_batch = engine, max(1, max_batch)
        self.log = BatchLog()
        self._cond = threading.Condition()
        self._queue: list[_Request] = []
        self._busy = False

    def recognize(self, images: Sequence[np.ndarray], task: Task, caller: str = "") -> list[OcrResult]:
        request = _Request(list(images), task, caller)
        with self._cond:
            self._queue.append(request)
        while True:
            with self._cond:
                while not request.done and (self._busy or not self._queue):
                    self._cond.wait()
                if request.done:
                    break
                self._busy = True
                batch = self._take()
            self._run(batch)
            with self._cond:
                self._busy = False
                self._cond.notify_all()
        if request.error is not None:
            raise request.error
        assert request.results is not None
        return request.results

    def _take(self) -> list[_Request]:
        """The oldest request and the next ones of its task while they fit in ``max_batch`` (one at least)."""
        first = self._queue.pop(0)
        batch, size = [first], len(first.images)
        for other in list(self._queue):
            if other.task is first.task and size + len(other.images) <= self.max_batch:
                self._queue.remove(other)
                batch.append(other)
                size += len(other.images)
        return batch

    def _run(self, batch: list[_Request]) -> None:
        images = [image for request in batch for image in request.images]
        started = time.monotonic()
        try:
            results = self.engine.recognize(images, batch[0].task)
            if len(results) != len(images):
                raise EngineError(f"{self.engine.name} returned {len(results)} results for {len(images)} images")
        except BaseException as err:  # noqa: BLE001 - every caller of the batch gets the error
            for request in batch:
                request.error, request.done = err, True
            return
        finally:
            self.log.busy_s += time.monotonic() - started
        self.log.sizes.append(len(images))
        self.log.callers.append(len({r.caller for r in batch}))
        at = 0
        for request in batch:
            request.results, request.done = results[at:at + len(request.images)], True
            at += len(request.images)


class OcrActor:
    """A Ray actor (made with ``ray.remote(OcrActor)``): one engine, the crops of many videos. :meth:`start` builds
    the engine and answers what that raised (an actor whose constructor raised would die with Ray's report of it);
    a restarted actor builds it at its first call."""

    def __init__(self, engine: str, options: EngineOptions, max_batch: int = 0) -> None:
        self._spec = (engine, options, max_batch)
        self._lock = threading.Lock()
        self.batcher: Batcher | None = None

    def start(self) -> BaseException | None:
        try:
            self._batcher()
        except Exception as err:  # noqa: BLE001 - the driver reports it as the plain run would
            return err if isinstance(err, VidocrError) else EngineError(f"{type(err).__name__}: {err}")
        return None

    def _batcher(self) -> Batcher:
        with self._lock:
            if self.batcher is None:
                from vidocr.engines import create_engine

                name, options, max_batch = self._spec
                engine = create_engine(name, options)
                self.batcher = Batcher(engine, max_batch or max(1, int(getattr(engine, "preferred_batch", 8))) * 4)
            return self.batcher

    def recognize(self, images: Sequence[np.ndarray], task: Task, caller: str = "") -> list[OcrResult]:
        return self._batcher().recognize(images, task, caller)

    def batches(self) -> BatchLog:
        return self.batcher.log if self.batcher is not None else BatchLog()

    def processes(self) -> list[int]:
        """This actor's process id and those of the processes under it (a vLLM engine's own): what closing it
        must leave gone."""
        import os

        pids = [os.getpid()]
        try:
            import psutil

            pids += [child.pid for child in psutil.Process().children(recursive=True)]
        except Exception:  # noqa: BLE001 - psutil is optional: the actor's own process only
            pass
        return pids

    def close(self) -> None:
        """Close the engine (a vLLM engine stops its processes): called before the actor is killed, since a killed
        actor's children would outlive it."""
        with self._lock:
            batcher, self.batcher = self.batcher, None
        if batcher is not None and hasattr(batcher.engine, "close"):
            batcher.engine.close()


class ActorLost(EngineError):
    """The OCR actor of a video is gone for good (its engine could not be built, or it died more often than its
    restarts allow): every video would fail the same way."""


class PooledEngine:
    """The :class:`~vidocr.engines.OcrEngine` of a video task whose OCR runs on an :class:`OcrActor`."""

    def __init__(self, name: str, actor: Any, preferred_batch: int, caller: str = "") -> None:
        self.name = name
        self.tasks = engine_spec(name).tasks
        self.preferred_batch = preferred_batch
        self._actor, self._caller = actor, caller

    def recognize(self, images: Sequence[np.ndarray], task: Task) -> list[OcrResult]:
        import ray

        try:
            results: list[OcrResult] = ray.get(self._actor.recognize.remote(list(images), task, self._caller))
        except ray.exceptions.RayActorError as err:
            raise ActorLost(f"{self.name} OCR actor is gone: {actor_error(err)}") from None
        return results

    def close(self) -> None:
        """The actor belongs to the pool, not to one video."""


def engine_options_of(options: Any) -> EngineOptions:
    """The engine options an Extractor would build its engine with (``translate_to`` from the extract options)."""
    engine_opts: EngineOptions = options.engine_options
    if options.translate_to and not engine_opts.translate_to:
        engine_opts = replace(engine_opts, translate_to=options.translate_to)
    return engine_opts


def actor_error(err: BaseException) -> str:
    """One line for a dead actor: what its constructor raised when that is why (an engine that cannot be built),
    else Ray's last line."""
    cause: Any = err
    for _ in range(3):  # ActorDiedError -> RayTaskError(creation task) -> the engine's own error
        inner = getattr(cause, "cause", None)
        if inner is None or inner is cause:
            break
        cause = inner
    if isinstance(cause, Exception) and cause is not err and not type(cause).__module__.startswith("ray"):
        return str(cause)
    text = str(err).strip()
    return text.splitlines()[-1] if text else type(err).__name__
