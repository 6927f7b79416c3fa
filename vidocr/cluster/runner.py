"""One Ray task per video, run ahead of a driver that stores results one at a time, in the order they finish.

A task (:func:`extract_video`) runs the plain run's :class:`~vidocr.extractor.Extractor` on one video in a Ray
worker process (the worker keeps its Extractor, so a model loads once per worker, not once per video) and sends
back a :class:`VideoResult`: every cue and the video info, or the error the plain run would have raised. A
video's own failure is a value, never a raised exception, so Ray never retries it (``retry_exceptions=False``
as well); Ray re-runs a task only when its worker or node dies (``max_retries``), and after that many deaths the
video fails with :class:`WorkerLost`.

:class:`RayExtractor` is called like an Extractor (``path -> (cues, info)``), so the CLI, the index builder and
the watch daemon write subtitle files and index rows with their own code, on the driver, one video at a time
(one writer: SQLite sees one connection, as in the plain run). :meth:`RayExtractor.run_ahead` keeps up to
``max_in_flight`` videos submitted (back-pressure: memory on the driver is bounded by that many results) and hands
the caller's items back as their videos finish.
"""

from __future__ import annotations

import contextlib
import logging
import os
import pickle
import socket
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar

from vidocr.errors import ConfigError, EngineError, VidocrError
from vidocr.pipeline import ExtractOptions, Progress, ProgressFn
from vidocr.types import Cue, VideoInfo

log = logging.getLogger("vidocr")

T = TypeVar("T")

INSTALL_HINT = "--ray needs Ray: pip install 'vidocr[ray]'"
#: Seconds one wait for results may block: signal handlers (SIGTERM, Ctrl-C) run between waits.
_WAIT_S = 0.5
#: Seconds the OCR actors are given to close their engines at the end of a run.
_CLOSE_S = 60.0


@dataclass(frozen=True)
class RayOptions:
    """Where and how videos run on Ray.

    address: None: the cluster named by ``$RAY_ADDRESS`` or the last ``ray start`` on this machine, else a Ray
        started here for this run; "auto": a running cluster (none is an error); else a cluster's address
        (``HOST:6379`` or ``ray://HOST:10001``). A Ray already initialised in this process is used as it is.
    num_cpus: CPUs each video task reserves (decoding, zones, change detection and CPU OCR run in it); the rapidocr
        engine reads with that many threads unless ``--workers`` says otherwise.
    max_in_flight: videos submitted and not yet stored (0: twice the cluster's CPUs / ``num_cpus``).
    max_retries: re-runs of a video whose worker or node died, before it fails with :class:`WorkerLost`.
    runtime_env: Ray runtime environment of the tasks and actors (``env_vars``, ``pip``...), or None.
    ocr_actors: with a model engine (not rapidocr), actors that each hold one engine and read the crops of every
        video (:mod:`vidocr.cluster.pool`); 0: one per GPU of the cluster, one when it has none.
    actor_gpus, actor_cpus: what each OCR actor reserves (``actor_gpus`` None: 1 where the cluster has GPUs, else 0).
    """

    address: str | None = None
    num_cpus: float = 1.0
    max_in_flight: int = 0
    max_retries: int = 3
    runtime_env: Mapping[str, Any] | None = None
    ocr_actors: int = 0
    actor_gpus: float | None = None
    actor_cpus: float = 1.0


class WorkerLost(VidocrError):
    """The Ray worker or node running a video died on every one of its tries."""


@dataclass(frozen=True)
class VideoResult:
    """What a video's task sends back. ``error``: what the plain run raised, with ``info`` when it came while the
    cues were read (after the video opened); ``engine_failed``: the engine could not be built (every video would
    fail the same way). ``node``, ``host``, ``pid``: where it ran (Ray node id, host name, process);
    ``seconds``: wall time in the task."""

    path: str
    cues: tuple[Cue, ...] = ()
    info: VideoInfo | None = None
    error: BaseException | None = None
    engine_failed: bool = False
    node: str = ""
    pid: int = 0
    seconds: float = 0.0
    host: str = ""


# --- the task, in a worker process ---------------------------------------------------------------------------------

#: This worker process's Extractor and the options it was built with: its engine serves every video of the run.
_held: list[tuple[ExtractOptions, Any]] = []


def extract_video(path: str, options: ExtractOptions, actor: Any = None) -> VideoResult:
    """Extract one video with the plain run's Extractor (a Ray task; also callable in-process). ``actor``: an
    :class:`~vidocr.cluster.pool.OcrActor` that reads the crops (a model engine), else the worker's own engine."""
    started = time.monotonic()
    node, pid = _where(), os.getpid()
    info: VideoInfo | None = None
    extractor = None
    try:
        if actor is not None:
            from vidocr.cluster.pool import PooledEngine
            from vidocr.pipeline import extract

            batch = options.engine_options.batch_size or 8
            engine = PooledEngine(options.engine, actor, batch, caller=path)
            cues_iter, info = extract(path, options, engine=engine)  # type: ignore[arg-type]
        else:
            extractor = _worker_extractor(options)
            cues_iter, info = extractor(path)
        cues = tuple(cues_iter)
    except Exception as err:  # noqa: BLE001 - the video's failure travels back as a value (no Ray retry)
        engine_failed = _engine_failed(err, extractor)
        if engine_failed and extractor is not None:
            _drop_extractor()  # the next task builds the engine afresh
        return VideoResult(path, info=info, error=_portable(err), engine_failed=engine_failed, node=node, pid=pid,
                           seconds=time.monotonic() - started, host=socket.gethostname())
    return VideoResult(path, cues, info, node=node, pid=pid, seconds=time.monotonic() - started,
                       host=socket.gethostname())


def _engine_failed(err: BaseException, extractor: Any) -> bool:
    if extractor is not None:
        return extractor.engine_error is not None
    from vidocr.cluster.pool import ActorLost

    return isinstance(err, ActorLost)


def _worker_extractor(options: ExtractOptions) -> Any:
    from vidocr.extractor import Extractor

    if _held and _held[0][0] == options:
        return _held[0][1]
    _drop_extractor()
    extractor = Extractor(options)
    _held.append((options, extractor))
    return extractor


def _drop_extractor() -> None:
    while _held:
        _held.pop()[1].close()


def _where() -> str:
    try:
        import ray

        return str(ray.get_runtime_context().get_node_id()) if ray.is_initialized() else ""
    except Exception:  # noqa: BLE001 - only a label for progress
        return ""


def _portable(err: BaseException) -> BaseException:
    """``err`` itself when it survives pickling (vidocr's errors do), else a RuntimeError with its text."""
    try:
        pickle.loads(pickle.dumps(err))
    except Exception:  # noqa: BLE001
        return RuntimeError(f"{type(err).__name__}: {err}")
    return err


def task_options(options: ExtractOptions, num_cpus: float) -> ExtractOptions:
    """The options a task runs with: the CPU engine reads with the task's CPUs (its default is every core of the
    machine, which each of several tasks on one machine would take). Cues do not depend on the thread count."""
    engine = options.engine_options
    if options.engine == "rapidocr" and engine.workers == 0:
        return replace(options, engine_options=replace(engine, workers=max(1, round(num_cpus))))
    return options


# --- the driver ----------------------------------------------------------------------------------------------------


@dataclass
class ClusterCounts:
    """What the driver has seen: videos done and failed; per node (first 8 characters of its id) the videos that
    ended there, seconds of video, seconds its tasks ran and frames decoded."""

    done: int = 0
    failed: int = 0
    node_videos: dict[str, int] = field(default_factory=dict)
    node_video_s: dict[str, float] = field(default_factory=dict)
    node_task_s: dict[str, float] = field(default_factory=dict)
    node_frames: dict[str, int] = field(default_factory=dict)
    started: float = field(default_factory=time.monotonic)

    def add(self, result: VideoResult) -> None:
        if result.error is None:
            self.done += 1
        else:
            self.failed += 1
        node = result.node[:8] or "?"
        self.node_videos[node] = self.node_videos.get(node, 0) + 1
        duration = result.info.duration_s if result.info is not None else None
        frames = result.info.stats.frames if result.info is not None else None
        self.node_video_s[node] = self.node_video_s.get(node, 0.0) + (duration or 0.0)
        self.node_task_s[node] = self.node_task_s.get(node, 0.0) + result.seconds
        self.node_frames[node] = self.node_frames.get(node, 0) + (frames or 0)


def import_ray() -> Any:
    """The ``ray`` module, or a one-line :class:`ConfigError` naming the extra that installs it."""
    try:
        import ray
    except ImportError:
        raise ConfigError(INSTALL_HINT) from None
    return ray


class RayExtractor:
    """``RayExtractor(options, ray_options)(path) -> (cues, info)``, as :class:`~vidocr.extractor.Extractor`, with
    the work done by a Ray task. Give it the run's videos with :meth:`run_ahead` to have many run at once.
    ``close()`` cancels what is still running and stops a Ray that it started."""

    def __init__(self, options: ExtractOptions | None = None, ray_options: RayOptions | None = None) -> None:
        self.options = options or ExtractOptions()
        self.ray_options = ray_options or RayOptions()
        self._ray = ray = import_ray()
        self._own_ray = _connect(ray, self.ray_options)
        ro = self.ray_options
        remote_opts: dict[str, Any] = {"num_cpus": ro.num_cpus, "max_retries": ro.max_retries,
                                       "retry_exceptions": False}
        if ro.runtime_env:
            remote_opts["runtime_env"] = dict(ro.runtime_env)
        self._task = ray.remote(extract_video).options(**remote_opts)
        self._task_options = task_options(self.options, ro.num_cpus)
        self.actors = self._start_pool() if self.options.engine != "rapidocr" else []
        self._submitted = 0
        self.window = ro.max_in_flight or max(2, int(2 * _cluster_cpus(ray) / max(ro.num_cpus, 0.01)))
        self._refs: dict[Any, str] = {}  # in flight: object ref -> path
        self._ready: dict[str, deque[VideoResult]] = {}
        self._engine_error: BaseException | None = None
        self.counts = ClusterCounts()
        #: The result the last call returned (where it ran, its task's seconds).
        self.last: VideoResult | None = None

    # --- as an Extractor ---

    def __call__(
        self, path: str | os.PathLike[str], *, progress: ProgressFn | None = None
    ) -> tuple[Iterator[Cue], VideoInfo]:
        """The video's cues and info (its task's result; submitted now and waited for unless it ran ahead)."""
        key = os.fspath(path)
        if not self._ready.get(key):
            if key not in self._refs.values():
                self.submit(key)
            while not self._ready.get(key):
                self.wait_one()
        result = self._ready[key].popleft()
        if not self._ready[key]:
            del self._ready[key]
        self.last = result
        if progress is not None and result.info is not None:
            info = result.info
            with contextlib.suppress(Exception):  # a display must never break the run
                progress(Progress(key, info.duration_s or 0.0, info.duration_s, info.stats.frames or 0,
                                  info.stats.frames_read or 0, len(result.cues), "done"))
        if result.error is not None:
            if result.engine_failed:
                self._engine_error = result.error
            if result.info is None:
                raise result.error
            return _raising(result.error), result.info
        assert result.info is not None
        return iter(result.cues), result.info

    @property
    def engine_error(self) -> BaseException | None:
        """What building the engine raised in a worker, once it failed there (as ``Extractor.engine_error``)."""
        return self._engine_error

    def close(self) -> None:
        """Cancel the videos still running and stop the Ray this extractor started (idempotent)."""
        self.cancel_all()
        self._ready.clear()
        self._stop_actors(self.actors)
        self.actors = []
        if self._own_ray:
            self._own_ray = False
            self._ray.shutdown()

    def __enter__(self) -> RayExtractor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- running ahead ---

    def run_ahead(self, items: Iterable[T], key: Callable[[T], str | os.PathLike[str]]) -> Iterator[T]:
        """Yield ``items`` in the order their videos (``key(item)``) finish, with at most :attr:`window` submitted
        and not yet handed back. Call the extractor for the item just yielded before taking the next one; a result
        not taken by then (a video the caller skipped) is dropped. Closing the iterator cancels the rest."""
        todo = deque(items)
        waiting: dict[str, deque[T]] = {}
        try:
            while todo or waiting:
                while todo and len(self._refs) < self.window:
                    item = todo.popleft()
                    submitted = os.fspath(key(item))
                    self.submit(submitted)
                    waiting.setdefault(submitted, deque()).append(item)
                path = next((p for p in waiting if self._ready.get(p)), None)
                while path is None:
                    finished = self.wait_one()
                    if finished is None and not self._refs:
                        raise RuntimeError("run_ahead: a submitted video has no result")
                    path = finished if finished in waiting else None
                item = waiting[path].popleft()
                if not waiting[path]:
                    del waiting[path]
                yield item
                self.discard(path)
        finally:
            if waiting:
                for path in waiting:
                    self.cancel(path)

    def submit(self, path: str | os.PathLike[str]) -> None:
        """Start the video's task (with a model engine, its crops go to the pool's actors in turn)."""
        key = os.fspath(path)
        actor = self.actors[self._submitted % len(self.actors)] if self.actors else None
        self._submitted += 1
        self._refs[self._task.remote(key, self._task_options, actor)] = key

    def _start_pool(self) -> list[Any]:
        """One OCR actor per GPU (or as asked), each with its engine built before any video is sent: an engine that
        cannot be set up is one error now, as in the plain run."""
        from vidocr.cluster.pool import OcrActor, actor_error, engine_options_of
        from vidocr.engines import EngineOptions, checked_options

        ray, ro = self._ray, self.ray_options
        gpus = _cluster_resource(ray, "GPU")
        count = ro.ocr_actors or max(1, int(gpus))
        actor_gpus = ro.actor_gpus if ro.actor_gpus is not None else (1.0 if gpus >= 1 else 0.0)
        engine_opts: EngineOptions = checked_options(self.options.engine, engine_options_of(self.options))
        settings: dict[str, Any] = {"num_cpus": ro.actor_cpus, "num_gpus": actor_gpus, "max_concurrency": 256,
                                    "max_restarts": 2, "max_task_retries": 2}
        if ro.runtime_env:
            settings["runtime_env"] = dict(ro.runtime_env)
        actor_class = ray.remote(OcrActor).options(**settings)
        actors = [actor_class.remote(self.options.engine, engine_opts) for _ in range(count)]
        log.info("ray: %d OCR actor(s) for %s, %g GPU each", count, self.options.engine, actor_gpus)
        try:
            errors = [e for e in ray.get([actor.start.remote() for actor in actors]) if e is not None]
        except ray.exceptions.RayActorError as err:
            errors = [EngineError(f"{self.options.engine}: cannot start the OCR actor: {actor_error(err)}")]
        if errors:  # the engine's own error, as the plain run gives it (exit code included)
            self._stop_actors(actors)
            raise errors[0]
        return actors

    def _stop_actors(self, actors: list[Any]) -> None:
        """Each actor closes its engine (a vLLM engine's processes end with it), within ``_CLOSE_S``; then the
        actors are killed."""
        ray = self._ray
        with contextlib.suppress(Exception):
            ray.wait([actor.close.remote() for actor in actors], num_returns=len(actors), timeout=_CLOSE_S)
        for actor in actors:
            with contextlib.suppress(Exception):
                ray.kill(actor)

    def batch_logs(self) -> list[Any]:
        """Each OCR actor's :class:`~vidocr.cluster.pool.BatchLog` (crops per engine call, videos per call)."""
        return list(self._ray.get([actor.batches.remote() for actor in self.actors]))

    @property
    def in_flight(self) -> int:
        return len(self._refs)

    def wait_one(self, timeout: float | None = None) -> str | None:
        """Wait until a submitted video finishes; returns its path (its result is then ready for the call), or
        None after ``timeout`` seconds (None: until one finishes) or when nothing is in flight."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while self._refs:
            left = _WAIT_S if deadline is None else min(_WAIT_S, max(0.0, deadline - time.monotonic()))
            ready, _ = self._ray.wait(list(self._refs), num_returns=1, timeout=left)
            if ready:
                ref = ready[0]
                path = self._refs.pop(ref)
                result = self._fetch(ref, path)
                self.counts.add(result)
                self._ready.setdefault(path, deque()).append(result)
                return path
            if deadline is not None and time.monotonic() >= deadline:
                return None
        return None

    def discard(self, path: str | os.PathLike[str]) -> None:
        """Drop a finished video's result that nobody took."""
        self._ready.pop(os.fspath(path), None)

    def cancel(self, path: str | os.PathLike[str]) -> None:
        """Stop the video's task if it is still running, and forget its result."""
        key = os.fspath(path)
        for ref, ref_path in list(self._refs.items()):
            if ref_path == key:
                del self._refs[ref]
                with contextlib.suppress(Exception):
                    self._ray.cancel(ref, force=True)
        self.discard(key)

    def cancel_all(self) -> None:
        for path in set(self._refs.values()):
            self.cancel(path)

    def status(self) -> str:
        """One line: videos done, failed and running, and per node videos and seconds of video per second."""
        c = self.counts
        elapsed = max(1e-6, time.monotonic() - c.started)
        nodes = ", ".join(f"{node} {n} ({c.node_video_s.get(node, 0.0) / elapsed:.1f}x)"
                          for node, n in sorted(c.node_videos.items()))
        line = f"ray: {c.done} done, {c.failed} failed, {self.in_flight} running"
        return line + (f"; nodes: {nodes}" if nodes else "")

    def _fetch(self, ref: Any, path: str) -> VideoResult:
        ray = self._ray
        try:
            result = ray.get(ref)
        except (ray.exceptions.WorkerCrashedError, ray.exceptions.NodeDiedError, ray.exceptions.ObjectLostError,
                ray.exceptions.OwnerDiedError) as err:
            tries = self.ray_options.max_retries + 1
            reason = f"the Ray worker running it died {tries} time(s) ({type(err).__name__})"
            return VideoResult(path, error=WorkerLost(reason, path))
        except ray.exceptions.RayError as err:  # the task could not run or send its result back
            return VideoResult(path, error=RuntimeError(f"Ray: {type(err).__name__}: {str(err).splitlines()[0]}"))
        if not isinstance(result, VideoResult):
            return VideoResult(path, error=RuntimeError(f"Ray task returned {type(result).__name__}"))
        return result


def _raising(error: BaseException) -> Iterator[Cue]:
    raise error
    yield  # pragma: no cover - makes this a generator


def _connect(ray: Any, options: RayOptions) -> bool:
    """Join or start Ray; returns whether this process started it (and so stops it at the end)."""
    if ray.is_initialized():
        return False
    settings: dict[str, Any] = {"include_dashboard": False, "logging_level": logging.WARNING}
    address = options.address
    try:
        if address:
            ray.init(address=address, **settings)
            return False
        try:  # the cluster named by $RAY_ADDRESS or the last `ray start` here
            ray.init(address="auto", **settings)
            return False
        except ConnectionError:
            ray.init(**settings)  # none: a Ray of this run's own, on this machine
            return True
    except (ConnectionError, ValueError, RuntimeError) as err:
        where = f"--ray {address}" if address else "--ray"
        text = str(err).splitlines()[0] if str(err) else type(err).__name__
        raise ConfigError(f"{where}: cannot reach a Ray cluster: {text}") from None


def _cluster_cpus(ray: Any) -> float:
    return _cluster_resource(ray, "CPU") or 1.0


def _cluster_resource(ray: Any, name: str) -> float:
    with contextlib.suppress(Exception):
        return float(ray.cluster_resources().get(name, 0.0))
    return 0.0
