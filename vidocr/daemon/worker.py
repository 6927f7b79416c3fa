"""One job of the watch daemon, from claimed to its next state: check the file, extract, write, index, mark done.

The order is what makes a job safe to cut short anywhere: subtitle files are written atomically and the video's
index rows are replaced in one transaction (both idempotent), and only then is the job marked done, if the file
still has the size and mtime that were read. A file that changed is queued again, a deleted one's job dropped;
bad input fails at once with its reason, other failures are retried with a backoff (:mod:`vidocr.daemon.jobs`).

A job with an engine choice (:mod:`vidocr.daemon.choice`, queued by ``vidocr serve`` for A/B comparisons) is
extracted by an extractor built for that choice, and its output is stored in the index as an OCR revision named
after the choice (no subtitle files are written beside the video when there is an index: the choice is a trial,
the user keeps what they want from the comparison). Progress is written to the queue while a job runs (at most
once a second), so ``GET /jobs/{id}`` shows it whichever process runs the job.
"""

from __future__ import annotations

import contextlib
import inspect
import logging
import os
import sqlite3
import stat
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vidocr.atomic import TEMP_NAME_KEEP, temp_name_part
from vidocr.daemon import WatchOptions
from vidocr.daemon.choice import EngineChoice
from vidocr.daemon.jobs import Job, JobQueue
from vidocr.daemon.logs import event
from vidocr.discover import make_folders
from vidocr.errors import ConfigError, InputError, OutputError, VidocrError, classify
from vidocr.files import Stamp, hash_or_none, output_stem, outputs_exist, stamp_or_none
from vidocr.formats import WRITERS, get_writer, write_outputs
from vidocr.index.store import find_video, save_extraction, save_failure
from vidocr.types import Cue, VideoInfo

if TYPE_CHECKING:
    from vidocr.daemon.metrics import DaemonMetrics
    from vidocr.pipeline import ExtractOptions

#: What the runner extracts with: ``path -> (cues, info)``; an :class:`~vidocr.extractor.Extractor` in the daemon.
#: One that takes a ``progress`` keyword gets the pipeline's progress reports.
ExtractFn = Callable[..., tuple[Iterable[Cue], VideoInfo]]
#: Seconds between two progress writes of a job (each is a commit to the queue).
PROGRESS_EVERY_S = 1.0

log = logging.getLogger("vidocr.daemon")


class Abandoned(BaseException):
    """Raised on the main thread by the stop timer to cut the current extraction short (the pipeline cleans up)."""


class JobRunner:
    """Runs claimed jobs. ``extractor``: ``path -> (cues, info)`` with a ``close()`` that frees the engine;
    ``index``: an open index connection or None. The service sets ``stopping`` and reads ``abandonable``,
    ``current`` and ``started``; ``metrics`` is a :class:`~vidocr.daemon.metrics.DaemonMetrics` or None.
    ``make_extractor`` builds the extractor of a job's engine choice (default: an
    :class:`~vidocr.extractor.Extractor`); ``cut``, when set, is asked between cues whether the job must stop
    (``vidocr serve``'s cancel), which gives the job back untouched."""

    def __init__(
        self, options: WatchOptions, queue: JobQueue, extractor: ExtractFn, index: sqlite3.Connection | None = None,
        make_extractor: Callable[[ExtractOptions], ExtractFn] | None = None,
    ) -> None:
        self.options, self.queue, self.extractor, self.index = options, queue, extractor, index
        self.make_extractor = make_extractor or _new_extractor
        self.metrics: DaemonMetrics | None = None
        self.stopping = False
        self.abandonable = False
        self.current: Job | None = None
        self.started = 0.0
        self.cut: Callable[[int], bool] | None = None
        self._chosen: tuple[str, ExtractFn] | None = None  # the last engine choice's key and extractor
        self._progress_at = 0.0
        self._progress = 0.0

    def close(self) -> None:
        """Free the engine of the last engine choice (the default extractor is its owner's to close)."""
        if self._chosen is not None:
            _close(self._chosen[1])
            self._chosen = None

    def run(self, job: Job) -> str:
        """Run one claimed job to its next state; returns the outcome (done, failed, retry, changed, dropped,
        abandoned, requeued)."""
        self.current, self.started = job, time.monotonic()
        event(log, logging.INFO, "job_start", "job started", job=job.id, path=job.path, attempt=job.attempts)
        try:
            return self._process(job)
        except Abandoned:
            self.queue.release(job)
            event(log, logging.INFO, "job_abandoned", "job abandoned at shutdown; it will resume", job=job.id,
                  path=job.path)
            return "abandoned"
        finally:
            self.current = None

    def _process(self, job: Job) -> str:
        path, t0 = job.path, time.monotonic()
        try:
            stamp = self._ready_stamp(job)
        except InputError as err:
            return self._failed(job, err)
        if stamp is None:
            return self._dropped(job)
        if stamp != job.stamp:
            return self._changed(job, stamp)
        try:
            choice = EngineChoice.from_key(job.engine) if job.engine else None
        except ConfigError as err:
            return self._failed(job, err)
        if choice is None and self.options.skip_existing and self._already_done(job, stamp):
            self.queue.finish(job, stamp, cues=0, seconds=0.0)
            event(log, logging.INFO, "job_skipped", "outputs exist; skipped", job=job.id, path=path)
            return "done"
        content = hash_or_none(path, stamp.size)
        try:
            cues, info = self._extract(job, choice)
            after = stamp_or_none(path)
            if after is None:
                return self._dropped(job)
            if after != stamp:
                return self._changed(job, after)
            written = self._write(job, cues, info) if choice is None or self.index is None else []
            self._index(path, stamp, content, cues, info, choice)
        except Abandoned:
            raise
        except Exception as err:  # noqa: BLE001 - every failure becomes the job's state, never the daemon's end
            return self._failed(job, err)
        seconds = time.monotonic() - t0
        if not self.queue.finish(job, stamp, cues=len(cues), seconds=seconds):
            return self._changed(job, None)
        event(log, logging.INFO, "job_done", "job done", job=job.id, path=path, cues=len(cues),
              outputs=[str(p) for p in written], seconds=round(seconds, 3), frames=info.stats.frames,
              ocr_calls=info.stats.ocr_calls)
        if self.metrics is not None:
            self.metrics.jobs_finished.labels("done").inc()
            # The pipeline's own time: under --ray it ran in a task on another node, and this job only wrote it.
            self.metrics.video_done(info.stats.seconds or seconds, info.stats, len(cues))
        return "done"

    def _ready_stamp(self, job: Job) -> Stamp | None:
        """The file's size and mtime now; None if it is gone; InputError if it cannot be a video."""
        try:
            st = os.stat(job.path)
        except FileNotFoundError:
            if os.path.lexists(job.path):
                raise InputError("broken symbolic link", job.path) from None
            return None
        except OSError as err:
            raise InputError(f"cannot open: {err.strerror or err}", job.path) from None
        if not stat.S_ISREG(st.st_mode):
            raise InputError("not a regular file", job.path)
        return Stamp.of(st)

    def _extractor_for(self, choice: EngineChoice | None) -> ExtractFn:
        if choice is None:
            return self.extractor
        key = choice.key()
        if self._chosen is None or self._chosen[0] != key:
            self.close()  # one chosen engine at a time: a GPU model is not kept beside another
            self._chosen = (key, self.make_extractor(choice.apply(self.options.extract)))
        return self._chosen[1]

    def _extract(self, job: Job, choice: EngineChoice | None = None) -> tuple[list[Cue], VideoInfo]:
        self.abandonable = True  # only decoding and OCR may be cut short by the stop timer
        self._progress, self._progress_at = 0.0, 0.0  # the first report is written at once
        try:
            if self.stopping and self.options.stop_timeout_s <= 0:
                raise Abandoned
            fn = self._extractor_for(choice)
            if _takes_progress(fn):
                cues_iter, info = fn(Path(job.path), progress=lambda p: self._on_progress(job, p))
            else:
                cues_iter, info = fn(Path(job.path))
            return list(self._follow(job, cues_iter, info)), info
        finally:
            self.abandonable = False

    def _follow(self, job: Job, cues: Iterable[Cue], info: VideoInfo) -> Iterable[Cue]:
        """The cues as they come; between two, the job may be cut (``cut``) and, when the extractor reports no
        progress of its own, the last cue's end over the video's duration is the progress."""
        duration_ms = (info.duration_s or 0.0) * 1000
        for cue in cues:
            if self.cut is not None and self.cut(job.id):
                raise Abandoned
            if duration_ms > 0:
                self._report(job, cue.end_ms / duration_ms)
            yield cue
        if self.cut is not None and self.cut(job.id):
            raise Abandoned

    def _on_progress(self, job: Job, p: Any) -> None:
        if p.seconds_total:
            self._report(job, p.seconds_done / p.seconds_total)

    def _report(self, job: Job, fraction: float) -> None:
        """Write the job's progress to the queue when it moved on, at most once per ``PROGRESS_EVERY_S``."""
        fraction = min(0.999, max(0.0, fraction))  # 1.0 is written with done
        now = time.monotonic()
        if fraction <= self._progress or now - self._progress_at < PROGRESS_EVERY_S:
            return
        self._progress, self._progress_at = fraction, now
        try:
            self.queue.set_progress(job.id, fraction)
        except sqlite3.Error as err:  # progress is a courtesy: a busy queue must not fail the job
            log.debug("could not write the progress of job %s: %s", job.id, err)

    def _write(self, job: Job, cues: list[Cue], info: VideoInfo) -> list[Path]:
        opts, video = self.options, Path(job.path)
        out_dir, stem = self._output_dir(job), output_stem(video)
        _remove_stale_temps(out_dir, stem)  # left by a kill during an earlier attempt's atomic write
        if not cues:
            return []
        try:
            make_folders(out_dir)  # before the writer's own mkdir, which recurses once per level of a deep tree
        except OSError as err:
            raise OutputError(f"cannot create the output folder: {err.strerror or err}", str(out_dir)) from None
        translate_to = opts.extract.translate_to if opts.extract else None
        return write_outputs(cues, info, out_dir, stem, list(opts.formats), translate_to=translate_to,
                             bilingual_cues=opts.bilingual)

    def _output_dir(self, job: Job) -> Path:
        folder = os.path.dirname(job.path)
        if self.options.output_dir is None:
            return Path(folder)
        rel = os.path.relpath(folder, job.root) if job.root else "."
        return self.options.output_dir if rel.startswith("..") else self.options.output_dir / rel

    def _index(self, path: str, stamp: Stamp, content: str | None, cues: Iterable[Cue], info: VideoInfo,
               choice: EngineChoice | None = None) -> None:
        if self.index is None:
            return
        extract = self.options.extract
        engine = choice.engine if choice else extract.engine if extract else None
        save_extraction(self.index, path, stamp, content, cues, engine=engine,
                        duration_s=info.duration_s, lang=self.options.lang,
                        translation_lang=extract.translate_to if extract else None,
                        revision=choice.label() if choice else None)

    def _already_done(self, job: Job, stamp: Stamp) -> bool:
        out_dir, stem = self._output_dir(job), output_stem(Path(job.path))
        if not outputs_exist(out_dir, stem, self.options.formats):
            return False
        if self.index is None:
            return True
        row = find_video(self.index, job.path)
        return row is not None and row.status == "ok" and row.stamp == stamp

    # --- outcomes ---------------------------------------------------------------------------------------------

    def _failed(self, job: Job, err: BaseException) -> str:
        handling = classify(err)
        kind, permanent = handling.kind, handling.permanent
        reason = err.reason if isinstance(err, VidocrError) else f"{type(err).__name__}: {err}"
        if kind == "internal":
            log.error("unexpected failure on %s", job.path, exc_info=err)
        if not os.path.lexists(job.path):
            return self._dropped(job)
        if kind == "engine":
            if job.engine:
                self.close()  # a broken engine is rebuilt for the next job
            elif hasattr(self.extractor, "close"):
                self.extractor.close()
        if self.stopping and kind == "engine":
            self.queue.release(job)  # workers hit by the same signal: not this video's fault
            return "abandoned"
        if permanent and kind == "input" and self.index is not None and not job.engine:
            self._index_failure(job, reason)
        outcome = self.queue.fail(job, reason, permanent=permanent)
        event(log, logging.WARNING, "job_failed" if outcome == "failed" else "job_retry",
              "job failed" if outcome == "failed" else "job failed; will retry", job=job.id, path=job.path,
              kind=kind, error=reason, attempt=job.attempts)
        if self.metrics is not None:
            self.metrics.errors.labels(kind).inc()
            self.metrics.jobs_finished.labels(outcome).inc()
        return outcome

    def _index_failure(self, job: Job, reason: str) -> None:
        """Record bad input in the index too, as ``vidocr index build`` does (``index status`` lists it)."""
        engine = self.options.extract.engine if self.options.extract else None
        try:
            assert self.index is not None
            save_failure(self.index, job.path, job.stamp, None, reason, engine=engine)
        except Exception as err:  # noqa: BLE001 - the job's state is what matters
            log.warning("could not record the failure of %s in the index: %s", job.path, err)

    def _changed(self, job: Job, stamp: Stamp | None) -> str:
        self.queue.requeue(job, stamp, delay=self.options.settle_s)
        event(log, logging.INFO, "job_changed", "file changed while being processed; queued again", job=job.id,
              path=job.path)
        return "changed"

    def _dropped(self, job: Job) -> str:
        self.queue.drop(job.path, running=True)
        event(log, logging.INFO, "job_dropped", "file deleted; its job was dropped", job=job.id, path=job.path)
        return "dropped"


def _new_extractor(options: ExtractOptions) -> ExtractFn:
    from vidocr.extractor import Extractor

    return Extractor(options)


def _close(fn: ExtractFn) -> None:
    close = getattr(fn, "close", None)
    if close is not None:
        close()


def _takes_progress(fn: ExtractFn) -> bool:
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False
    return "progress" in params or any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())


def _remove_stale_temps(folder: Path, stem: str) -> None:
    """Delete ``.<stem>[.<lang>].<ext>.XXXXXXXX.tmp`` files that an atomic write killed midway left behind (a long
    name is cut short in its temp's name: :func:`vidocr.atomic.temp_name_part`)."""
    exts = tuple(f".{get_writer(name).extension}" for name in WRITERS)
    try:
        names = os.listdir(folder)
    except OSError:
        return
    for name in names:
        if not (name.startswith(".") and name.endswith(".tmp") and len(name) > 14 and name[-13] == "."):
            continue
        target = name[1:-13]  # the target's name, or its first bytes when it was long
        if len(os.fsencode(target)) >= TEMP_NAME_KEEP:
            ours = temp_name_part(f"{stem}.").startswith(target) or target.startswith(f"{stem}.")
        else:
            ours = target.startswith(f"{stem}.") and target.endswith(exts)
        if ours:
            with contextlib.suppress(OSError):
                os.unlink(folder / name)
