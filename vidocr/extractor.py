"""One engine for many videos: :class:`Extractor` runs :func:`vidocr.extract` video after video with an engine
built once and held until it is closed. The CLI (a folder of videos), the index builder and the watch daemon
extract through it, so a model loads once per run, never once per file; so does the zone finder's OCR check
when the engine cannot serve it (a :class:`~vidocr.region.PpOcrBandReader`, built at the first video that
needs it).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from types import TracebackType
from typing import TextIO, cast

from vidocr import pipeline
from vidocr.engines import BackgroundEngine, OcrEngine
from vidocr.pipeline import ExtractOptions, ProgressFn
from vidocr.region import PpOcrBandReader
from vidocr.types import Cue, VideoInfo


class Extractor:
    """``Extractor(options)(path) -> (cues, info)``, as :func:`vidocr.extract`, with one engine for every call.

    The engine is built at the first video that is a file (a run whose inputs are all missing, or a build with
    nothing new, loads no model), on a background thread while that video's zones are found. ``close()`` frees
    it; a later call builds a new one (the watch daemon closes an engine that failed, to start afresh).
    ``loading_to``: a stream (the CLI's stderr) for "loading model NAME (N s)" lines while a slow model loads.
    Use it as a context manager, or close it.
    """

    def __init__(self, options: ExtractOptions | None = None, *, loading_to: TextIO | None = None) -> None:
        self.options = options or ExtractOptions()
        self._loading_to = loading_to
        self._engine: BackgroundEngine | None = None
        self._zone_reader = PpOcrBandReader()

    def __call__(
        self, path: str | os.PathLike[str], *, progress: ProgressFn | None = None
    ) -> tuple[Iterator[Cue], VideoInfo]:
        """Open ``path`` and return its lazy cue iterator and video info (errors as :func:`vidocr.extract`)."""
        if self._engine is None and os.path.isfile(path):
            opts = self.options
            engine_opts = opts.engine_options
            if opts.translate_to and not engine_opts.translate_to:
                engine_opts = replace(engine_opts, translate_to=opts.translate_to)
            self._engine = BackgroundEngine(opts.engine, engine_opts, loading_to=self._loading_to)
        engine = cast(OcrEngine | None, self._engine)  # a BackgroundEngine stands in for the engine it builds
        return pipeline.extract(Path(path), self.options, engine=engine, progress=progress,
                                zone_reader=self._zone_reader)

    @property
    def engine_error(self) -> BaseException | None:
        """What building the engine raised, once it failed: every later video would fail the same way."""
        return self._engine.build_error if self._engine is not None else None

    def close(self) -> None:
        """Free the engine and the zone finder's reader (idempotent)."""
        self._zone_reader.close()
        engine, self._engine = self._engine, None
        if engine is not None:
            engine.close()

    def __enter__(self) -> Extractor:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()
