"""One job of the watch daemon, from claimed to its next state: check the file, extract, write, index, mark done.

The order is what makes a job safe to cut short anywhere: subtitle files are written atomically and the video's
index rows are replaced in one transaction (both idempotent), and only then is the job marked done, if the file
still has the size and mtime that were read. A file that changed is queued again, a deleted one's job dropped;
bad input fails at once with its reason, other failures are retried with a backoff (:mod:`vidocr.daemon.jobs`).
"""

from __future__ import annotations

import contextlib
import logging
import os
import sqlite3
import stat
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from vidocr.atomic import TEMP_NAME_KEEP, temp_name_part
from vidocr.daemon import WatchOptions
from vidocr.daemon.jobs import Job, JobQueue
from vidocr.daemon.logs import event
from vidocr.discover import make_folders
from vidocr.errors import InputError, OutputError, VidocrError, classify
from vidocr.files import Stamp, hash_or_none, output_stem, outputs_exist, stamp_or_none
from vidocr.formats import WRITERS, get_writer, write_outputs
from vidocr.index.store import find_video, save_extraction, save_failure
from vidocr.types import Cue, VideoInfo

if TYPE_CHECKING:
    from vidocr.daemon.metrics import DaemonMetrics

#: What the runner extracts with: ``path -> (cues, info)``; an :class:`~vidocr.extractor.Extractor` in the daemon.
ExtractFn = Callable[[Path], tuple[Iterable[Cue], VideoInfo]]

log = logging.getLogger("vidocr.daemon")


class Abandoned(BaseException):
    """Raised on the main thread by the stop timer to cut the current extraction short (the pipeline cleans up)."""


class JobRunner:
    """Runs claimed jobs. ``extractor``: ``path -> (cues, info)`` with a ``close()`` that frees the engine;
    ``index``: an open index connection or None. The service sets ``stopping`` and reads ``abandonable``,
    ``current`` and ``started``; ``metrics`` is a :class:`~vidocr.daemon.metrics.DaemonMetrics` or None."""

    def __init__(
        self, options: WatchOptions, queue: JobQueue, extractor: ExtractFn, index: sqlite3.Connection | None = None
    ) -> None:
        self.options, self.queue, self.extractor, self.index = options, queue, extractor, index
        self.metrics: DaemonMetrics | None = None
        self.stopping = False
        self.abandonable = False
        self.current: Job | None = None
        self.started = 0.0

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
        if self.options.skip_existing and self._already_done(job, stamp):
            self.queue.finish(job, stamp, cues=0, seconds=0.0)
            event(log, logging.INFO, "job_skipped", "outputs exist; skipped", job=job.id, path=path)
            return "done"
        content = hash_or_none(path, stamp.size)
        try:
            cues, info = self._extract(Path(path))
            after = stamp_or_none(path)
            if after is None:
                return self._dropped(job)
            if after != stamp:
                return self._changed(job, after)
            written = self._write(job, cues, info)
            self._index(path, stamp, content, cues, info)
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
            self.metrics.video_done(seconds, info.stats, len(cues))
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

    def _extract(self, path: Path) -> tuple[list[Cue], VideoInfo]:
        self.abandonable = True  # only decoding and OCR may be cut short by the stop timer
        try:
            if self.stopping and self.options.stop_timeout_s <= 0:
                raise Abandoned
            cues_iter, info = self.extractor(path)
            return list(cues_iter), info
        finally:
            self.abandonable = False

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

    def _index(self, path: str, stamp: Stamp, content: str | None, cues: Iterable[Cue], info: VideoInfo) -> None:
        if self.index is None:
            return
        extract = self.options.extract
        save_extraction(self.index, path, stamp, content, cues, engine=extract.engine if extract else None,
                        duration_s=info.duration_s, lang=self.options.lang,
                        translation_lang=extract.translate_to if extract else None)

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
        if kind == "engine" and hasattr(self.extractor, "close"):
            self.extractor.close()  # a broken engine is rebuilt for the next job
        if self.stopping and kind == "engine":
            self.queue.release(job)  # workers hit by the same signal: not this video's fault
            return "abandoned"
        if permanent and kind == "input" and self.index is not None:
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
