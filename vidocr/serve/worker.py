"""The daemon's job runner on a thread of the server: ``serve`` and ``watch`` share one queue and its guarantees.

The worker takes the queue's lock (:func:`vidocr.daemon.service.hold_queue_lock`), so it runs only when no
``vidocr watch`` does; otherwise the server only queues jobs and that daemon runs them. Jobs run exactly as the
daemon runs them (:class:`vidocr.daemon.worker.JobRunner`: outputs written atomically beside the video, the index
updated in one transaction, marked done only then, retried with a backoff). Cancelling the running job, and
stopping the server while one runs longer than ``stop_timeout_s``, cut its extraction at the next cue and give
the job back untouched (``JobQueue.release``); a cancelled one is then marked failed with the reason "cancelled".
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from vidocr.daemon import WatchOptions
from vidocr.daemon.jobs import JobQueue
from vidocr.daemon.service import hold_queue_lock
from vidocr.daemon.worker import JobRunner
from vidocr.errors import ConfigError
from vidocr.serve import ServeSettings
from vidocr.types import Cue, VideoInfo

log = logging.getLogger("vidocr.serve")


class ServeWorker:
    """Runs queued jobs on a thread until :meth:`stop`. ``running`` is False when another process holds the queue
    (``holder`` says which). A running job's progress is in the queue (the runner writes it)."""

    def __init__(self, settings: ServeSettings, metrics: Any = None) -> None:
        self.settings = settings
        self.metrics = metrics
        self.running = False
        self.holder: str | None = None
        self.current: int | None = None
        self._cancel: set[int] = set()
        self._stopping = threading.Event()
        self._abandon = False
        self._wake = threading.Event()
        self._lock_cm: contextlib.ExitStack | None = None
        self._thread: threading.Thread | None = None
        self._extractor: Any = None

    # --- life ---------------------------------------------------------------------------------------------

    def start(self) -> None:
        stack = contextlib.ExitStack()
        try:
            stack.enter_context(hold_queue_lock(self.settings.queue_path))
        except ConfigError as err:
            stack.close()
            self.holder = str(err)
            log.warning("jobs are run by another process: %s", err)
            return
        self._lock_cm = stack
        self.running = True
        self._thread = threading.Thread(target=self._loop, name="vidocr-serve-worker", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop taking jobs; the current one may finish within ``stop_timeout_s``, then it is given back."""
        self._stopping.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(self.settings.stop_timeout_s)
            if self._thread.is_alive():
                self._abandon = True
                self._thread.join()
        if self._lock_cm is not None:
            self._lock_cm.close()
        self.running = False

    def wake(self) -> None:
        self._wake.set()

    def cancel(self, job_id: int) -> bool:
        """Ask the running job ``job_id`` to stop; True when it is this worker's current job."""
        if self.current != job_id:
            return False
        self._cancel.add(job_id)
        return True

    # --- the loop -----------------------------------------------------------------------------------------

    def _loop(self) -> None:
        s = self.settings
        queue = JobQueue(s.queue_path)
        index = None
        runner: JobRunner | None = None
        try:
            from vidocr.index.db import open_index

            queue.recover()
            index = open_index(s.db)
            options = WatchOptions(roots=s.roots, jobs_db=s.queue_path, extract=s.extract, formats=s.formats,
                                   output_dir=s.output_dir, db=s.db, stop_timeout_s=s.stop_timeout_s)
            runner = JobRunner(options, queue, self._extract, index)
            runner.cut = lambda job_id: job_id in self._cancel or self._abandon
            if self.metrics is not None:
                runner.metrics = self.metrics
            while not self._stopping.is_set():
                job = queue.claim()
                if job is None:
                    self._wake.wait(0.5)
                    self._wake.clear()
                    continue
                self.current = job.id
                try:
                    outcome = runner.run(job)
                    if outcome == "abandoned" and job.id in self._cancel:
                        queue.cancel(job.id)  # before `current` is cleared: DELETE /jobs waits for that
                finally:
                    self._cancel.discard(job.id)
                    self.current = None
        except Exception:  # noqa: BLE001 - the server goes on; jobs wait for a restart or `vidocr watch`
            log.exception("the job worker stopped")
        finally:
            if runner is not None:
                runner.close()
            if self._extractor is not None and hasattr(self._extractor, "close"):
                self._extractor.close()
            if index is not None:
                index.close()
            queue.close()

    def _extract(self, path: Path, progress: Any = None) -> tuple[Iterable[Cue], VideoInfo]:
        """The server's own extraction (jobs that name no engine); the runner cuts it between cues on cancel."""
        if self.settings.extractor is not None:
            return self.settings.extractor(path)  # type: ignore[no-any-return]
        if self._extractor is None:
            from vidocr.extractor import Extractor

            self._extractor = Extractor(self.settings.extract)
        cues, info = self._extractor(path, progress=progress)
        return cues, info


def wait_for(predicate: Any, timeout_s: float, step_s: float = 0.05) -> bool:
    """Poll ``predicate`` until it is true or ``timeout_s`` passes (tests and the shutdown path)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(step_s)
    return bool(predicate())
