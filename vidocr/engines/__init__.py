"""OCR engines behind one Protocol and a lazy registry.

An engine turns a batch of BGR subtitle-band crops into one :class:`~vidocr.types.OcrResult` each,
same order, same length. Engines are imported only when asked for, so a CPU-only install never
imports vllm or torch; an engine whose extra is missing raises :class:`EngineUnavailable` with the
pip command that installs it.
"""

from __future__ import annotations

import contextlib
import importlib
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar, Protocol, TextIO, runtime_checkable

import numpy as np

from vidocr.errors import ConfigError, EngineError, EngineUnavailable, VidocrError
from vidocr.types import OcrResult, Task


@dataclass(frozen=True)
class EngineOptions:
    """Options every engine understands; engine-specific settings go in ``extra`` (checked against the engine's
    settings dataclass in :mod:`vidocr.engines.settings`: an unknown key is a :class:`ConfigError`).

    workers: OCR threads (CPU engines) or concurrent requests (server engines); 0 = auto.
    batch_size: crops handed to one ``recognize`` call by the pipeline.
    translate_to: target language for ``Task.TRANSLATE`` (e.g. "en", "zh").
    lang: languages or scripts of the text (``vidocr.langs.parse_langs``); empty: auto (engines that can tell).
    """

    workers: int = 0
    batch_size: int = 0
    translate_to: str | None = None
    lang: tuple[str, ...] = ()
    extra: Mapping[str, Any] = field(default_factory=dict)


@runtime_checkable
class OcrEngine(Protocol):
    """What the pipeline needs from an engine."""

    name: ClassVar[str]
    #: Tasks this engine can do; the pipeline refuses others with a clear error.
    tasks: ClassVar[frozenset[Task]]
    #: Crops per ``recognize`` call that keep the engine busy (pipeline batch size default).
    preferred_batch: int

    def recognize(self, images: Sequence[np.ndarray], task: Task) -> list[OcrResult]:
        """Read each BGR uint8 image; return one result per image, in order."""
        ...

    def close(self) -> None:
        """Release processes, GPU memory, connections. Idempotent."""
        ...


@runtime_checkable
class Rereader(Protocol):
    """Optional engine capability: re-read images that probably show the text of an earlier read.

    ``priors[i]`` is an earlier result for the same subtitle with line boxes moved into image ``i``'s
    coordinates. An engine may read just those boxes (no detection) and, when every line reads back
    the same, answer the prior's lines with fresh confidences; otherwise it must answer a full read.
    The pipeline uses it for re-reads (after a cut, a mask drift, a periodic check), which mostly
    confirm the text already read.
    """

    def reread(self, images: Sequence[np.ndarray], priors: Sequence[OcrResult], task: Task) -> list[OcrResult]: ...


@runtime_checkable
class BandReading(Protocol):
    """Optional engine capability: read one BGR band image into its text lines with their boxes, as the zone
    finder's OCR check does (:data:`vidocr.region.BandReader`). An engine that has it serves as the finder's
    reader, so a run loads no second OCR model to find its zones."""

    def read_band(self, image: np.ndarray) -> OcrResult: ...


@dataclass(frozen=True)
class EngineSpec:
    """Registry entry: where the class lives, which pip extra brings its packages, what it can do."""

    target: str
    extra: str | None
    tasks: frozenset[Task]
    #: Its confidences tell a misread (a line recogniser's character probabilities), so an unsure read is worth
    #: making again on the crop's mean over frames (vidocr.pipeline.ExtractOptions.fuse_s). Not measured for the
    #: model engines, where it would cost a model request per unsure read.
    fuses: bool = False


_VLM_TASKS = frozenset({Task.SUBTITLE, Task.TEXT, Task.TRANSLATE, Task.SPOTTING})

ENGINES: dict[str, EngineSpec] = {
    "rapidocr": EngineSpec("vidocr.engines.rapid:RapidOcrEngine", None, frozenset({Task.SUBTITLE, Task.TEXT}), True),
    "hunyuan-vllm": EngineSpec("vidocr.engines.hunyuan_vllm:HunyuanVllmEngine", "vllm", _VLM_TASKS),
    "hunyuan-transformers": EngineSpec("vidocr.engines.hunyuan_hf:HunyuanTransformersEngine", "hf", _VLM_TASKS),
    "openai": EngineSpec("vidocr.engines.openai_client:OpenAIEngine", None, _VLM_TASKS),
}


def engine_names() -> list[str]:
    return sorted(ENGINES)


def engine_spec(name: str) -> EngineSpec:
    try:
        return ENGINES[name]
    except KeyError:
        raise ConfigError(f"unknown engine {name!r}; choose one of: {', '.join(engine_names())}") from None


def load_engine_class(name: str) -> type[Any]:
    spec = engine_spec(name)
    extra = spec.extra
    module_name, _, class_name = spec.target.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        hint = f"pip install 'vidocr[{extra}]'" if extra else "pip install vidocr"
        raise EngineUnavailable(f"engine {name!r} needs a package that is not installed ({exc.name}): {hint}") from exc
    cls: type[Any] = getattr(module, class_name)
    return cls


def create_engine(name: str, options: EngineOptions | None = None) -> OcrEngine:
    """Build an engine by registry name; any failure is a :class:`VidocrError` (one line, with its cause)."""
    cls = load_engine_class(name)
    return _build(name, cls, checked_options(name, options or EngineOptions()))


def checked_options(name: str, options: EngineOptions) -> EngineOptions:
    """``options`` with ``extra`` checked against the engine's settings (:mod:`vidocr.engines.settings`): an
    unknown key is a :class:`ConfigError` naming the valid ones; text values get their setting's type."""
    from vidocr.engines.settings import check_settings

    return replace(options, extra=check_settings(name, options.extra))


def _build(name: str, cls: type[Any], options: EngineOptions) -> OcrEngine:
    try:
        engine: OcrEngine = cls(options)
    except VidocrError:
        raise
    except Exception as exc:  # a library's own error (torch, transformers, vLLM): one line with its cause
        cause = " ".join(f"{type(exc).__name__}: {exc}".split())
        raise EngineError(f"engine {name!r} could not start: {cause}") from exc
    return engine


def supports_reread(engine: object) -> bool:
    """Whether ``engine`` (or the engine a :class:`BackgroundEngine` is building) is a :class:`Rereader`."""
    if isinstance(engine, BackgroundEngine):
        return engine.rereads
    return isinstance(engine, Rereader)


def band_reader(engine: object) -> Callable[[np.ndarray], OcrResult] | None:
    """``engine``'s own :class:`BandReading` (or that of the engine a :class:`BackgroundEngine` builds), if it
    has one."""
    if isinstance(engine, BackgroundEngine):
        return engine.read_band if engine.reads_bands else None
    return engine.read_band if isinstance(engine, BandReading) else None


def engines_for_task(task: Task) -> list[str]:
    """Names of the registered engines that can do ``task`` (from the registry; nothing is imported)."""
    return [name for name in engine_names() if task in ENGINES[name].tasks]


class BackgroundEngine:
    """An engine that loads its models on a background thread while decoding starts.

    The class is imported at once (a missing extra is reported before any work); building it
    (model loading: seconds) overlaps with opening the video and finding the
    band. ``recognize`` waits for the build; a build error surfaces there, as an :class:`EngineError`.
    ``loading_to``: a stream (the CLI's stderr) that gets "loading model NAME (N s)" lines while a build
    takes more than ``LOADING_FIRST`` seconds, then how long it took.
    """

    LOADING_FIRST = 2.0
    LOADING_EVERY = 5.0

    def __init__(self, name: str, options: EngineOptions | None = None, loading_to: TextIO | None = None) -> None:
        import concurrent.futures

        cls = load_engine_class(name)
        options = checked_options(name, options or EngineOptions())
        self.name = name
        #: Whether the engine being built can re-read (:class:`Rereader`); known before it is built.
        self.rereads = callable(getattr(cls, "reread", None))
        #: Whether it is a :class:`BandReading`; known before it is built.
        self.reads_bands = callable(getattr(cls, "read_band", None))
        self.tasks = engine_spec(name).tasks
        self.preferred_batch = options.batch_size or 8
        self._pool = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="vidocr-engine-load")
        self._future = self._pool.submit(_build, name, cls, options)
        self._closed = False
        self._video: str | None = None  # a video begun while the engine was still loading
        if loading_to is not None and not getattr(cls, "reports_waiting", False):  # openai: says it waits
            threading.Thread(target=self._report_loading, args=(loading_to,), name="vidocr-engine-loading",
                             daemon=True).start()

    def _report_loading(self, stream: TextIO) -> None:
        """Progress lines while the build runs; a broken stream never breaks the run."""
        import concurrent.futures

        t0 = time.monotonic()
        wait = self.LOADING_FIRST
        shown = False
        try:
            while not concurrent.futures.wait([self._future], timeout=wait).done:
                print(f"vidocr: loading model {self.name} ({time.monotonic() - t0:.0f} s)", file=stream, flush=True)
                shown, wait = True, self.LOADING_EVERY
            if shown:
                state = "failed" if self._future.exception() is not None else "loaded"
                print(f"vidocr: model {self.name} {state} in {time.monotonic() - t0:.0f} s", file=stream, flush=True)
        except (OSError, ValueError):
            pass

    @property
    def build_error(self) -> BaseException | None:
        """What the build raised, once it has failed (None while it runs and after it succeeded)."""
        return self._future.exception() if self._future.done() else None

    @property
    def engine(self) -> OcrEngine:
        engine: OcrEngine = self._future.result()
        self.preferred_batch = engine.preferred_batch
        video, self._video = self._video, None
        begin = getattr(engine, "begin_video", None)
        if video is not None and callable(begin):
            begin(video)
        return engine

    def recognize(self, images: Sequence[np.ndarray], task: Task) -> list[OcrResult]:
        return self.engine.recognize(images, task)

    def begin_video(self, name: str) -> None:
        """Tell the engine a new video starts (engines that choose a script per video); never waits for the
        build: an engine still loading is told when it is first used."""
        self._video = name
        if self._future.done():
            with contextlib.suppress(VidocrError):  # a build's error surfaces at the first recognize
                _ = self.engine

    def read_band(self, image: np.ndarray) -> OcrResult:
        """The built engine's :meth:`BandReading.read_band` (waits for the build; see :func:`band_reader`)."""
        engine = self.engine
        assert isinstance(engine, BandReading)
        return engine.read_band(image)

    def reread(self, images: Sequence[np.ndarray], priors: Sequence[OcrResult], task: Task) -> list[OcrResult]:
        engine = self.engine
        if isinstance(engine, Rereader):
            return engine.reread(images, priors, task)
        return engine.recognize(images, task)  # callers check supports_reread() first

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        try:
            self.engine.close()
        except Exception:  # noqa: BLE001 - a failed build has nothing to close
            pass
        finally:
            self._pool.shutdown(wait=True)
