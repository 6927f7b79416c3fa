"""The watch daemon's main loop: take a job, extract, write outputs atomically, index, mark done; stop cleanly.

One job at a time on the main thread (parallelism lives inside the OCR engine); the watcher and the metrics server
run on threads of their own. Exactly once: a job is marked done only after its subtitle files (atomic renames) and
its index rows (one transaction replacing the video's OCR cues) exist, and both are idempotent, so a job cut short
by ``kill -9`` is run again on restart and leaves one output and one set of cues. SIGTERM/SIGINT stop taking jobs;
the current one may finish within ``stop_timeout_s``, after which (or at a second signal) it is abandoned and
goes back to pending untouched; the exit status is 0.
"""

from __future__ import annotations

import contextlib
import fcntl
import logging
import os
import signal
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vidocr.daemon import WatchOptions
from vidocr.daemon.jobs import JobQueue
from vidocr.daemon.logs import event
from vidocr.daemon.watcher import Watcher
from vidocr.daemon.worker import Abandoned, ExtractFn, JobRunner
from vidocr.errors import ConfigError

if TYPE_CHECKING:
    from vidocr.daemon.metrics import MetricsServer

log = logging.getLogger("vidocr.daemon")


@contextlib.contextmanager
def hold_queue_lock(jobs_db: Path) -> Iterator[None]:
    """One daemon per queue: an exclusive ``flock`` on ``<queue>.lock``, released by the OS even after kill -9."""
    jobs_db.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(f"{jobs_db}.lock", os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 32, 0).decode(errors="replace").strip() or "?"
            raise ConfigError(f"another vidocr watch or serve (pid {holder}) runs this queue", str(jobs_db)) from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        yield
    finally:
        os.close(fd)


class WatchService:
    """Runs the daemon. ``extractor``: ``path -> (cues, info)`` (default: an :class:`~vidocr.extractor.Extractor`
    with ``options.extract``, one engine for every job); its ``close()``, when it has one, is called at the end."""

    def __init__(self, options: WatchOptions, extractor: ExtractFn | None = None) -> None:
        from vidocr.extractor import Extractor

        self.options = options
        self.extractor: ExtractFn = extractor or Extractor(options.extract)
        self.runner: JobRunner | None = None
        self.watcher: Watcher | None = None
        self._beat = time.monotonic()
        self._stopping = False
        self._wake = threading.Event()

    # --- the loop ---------------------------------------------------------------------------------------------

    def run(self) -> int:
        opts = self.options
        with hold_queue_lock(opts.jobs_db):
            queue = self._open_queue()
            resumed, failed = queue.recover()
            event(log, logging.INFO, "daemon_start", "watching", roots=[str(r) for r in opts.roots],
                  queue=str(opts.jobs_db), index=str(opts.db) if opts.db else None, resumed=resumed,
                  failed_after_crashes=failed, once=opts.once, pid=os.getpid())
            self.runner = runner = JobRunner(opts, queue, self.extractor)
            server = None
            old_handlers = self._install_signals()
            self.watcher = Watcher(opts.roots, self._open_queue(), settle_s=opts.settle_s, rescan_s=opts.rescan_s,
                                   on_enqueue=lambda *_: self._wake.set())
            try:
                if opts.db is not None:
                    from vidocr.index.db import open_index

                    runner.index = open_index(opts.db)
                if opts.metrics_port is not None:
                    server = self._serve_metrics()
                if opts.once:
                    self._settle_once()
                else:
                    self.watcher.start(opts.tick_s)
                self._loop(queue, runner)
            finally:
                signal.setitimer(signal.ITIMER_REAL, 0)
                self.watcher.stop()
                self.watcher.queue.close()
                if server is not None:
                    server.close()
                runner.close()
                if hasattr(self.extractor, "close"):
                    self.extractor.close()
                if runner.index is not None:
                    runner.index.close()
                queue.close()
                for signum, handler in old_handlers.items():
                    signal.signal(signum, handler)
            event(log, logging.INFO, "daemon_stop", "stopped", pid=os.getpid())
        return 0

    def _open_queue(self) -> JobQueue:
        opts = self.options
        return JobQueue(opts.jobs_db, max_attempts=opts.max_attempts, backoff_s=opts.retry_delay_s)

    def _settle_once(self) -> None:
        assert self.watcher is not None
        self.watcher.scan()
        while self.watcher.waiting and not self._stopping:
            time.sleep(self.options.tick_s)
            self.watcher.poll(final=True)

    def _loop(self, queue: JobQueue, runner: JobRunner) -> None:
        while not self._stopping:
            self._beat = time.monotonic()
            job = queue.claim()
            if job is None:
                if self.options.once:
                    return
                self._wake.wait(self.options.tick_s * 2)
                self._wake.clear()
                continue
            runner.run(job)

    def stop(self) -> None:
        """Stop taking jobs (what SIGTERM does, for callers on other threads)."""
        self._stopping = True
        if self.runner is not None:
            self.runner.stopping = True
        self._wake.set()

    # --- signals, health, metrics -----------------------------------------------------------------------------

    def _install_signals(self) -> dict[int, Any]:
        if threading.current_thread() is not threading.main_thread():
            return {}
        old: dict[int, Any] = {}
        for signum, handler in ((signal.SIGTERM, self._on_stop_signal), (signal.SIGINT, self._on_stop_signal),
                                (signal.SIGALRM, self._on_stop_timer)):
            old[signum] = signal.signal(signum, handler)
        return old

    def _on_stop_signal(self, signum: int, frame: Any) -> None:
        if self._stopping:
            self._on_stop_timer(signum, frame)  # a second signal: do not wait for the current job
            return
        self._stopping = True
        if self.runner is not None:
            self.runner.stopping = True
        event(log, logging.INFO, "stopping", "stop requested; finishing the current job",
              signal=signal.Signals(signum).name, timeout_s=self.options.stop_timeout_s)
        if self.options.stop_timeout_s > 0:
            signal.setitimer(signal.ITIMER_REAL, self.options.stop_timeout_s)
        else:
            self._on_stop_timer(signum, frame)

    def _on_stop_timer(self, signum: int, frame: Any) -> None:
        if self.runner is not None and self.runner.abandonable:
            self.runner.abandonable = False
            raise Abandoned  # unwinds the extraction (the pipeline cleans up); the runner gives the job back

    def health(self) -> tuple[bool, dict[str, Any]]:
        now = time.monotonic()
        watcher = self.watcher
        watcher_ok = self.options.once or (watcher is not None and watcher.alive()
                                           and now - watcher.last_poll < max(30.0, 40 * self.options.tick_s))
        job = self.runner.current if self.runner else None
        started = self.runner.started if self.runner else now
        loop_ok = job is not None or now - self._beat < 30.0
        doc = {
            "status": "stopping" if self._stopping else "ok" if watcher_ok and loop_ok else "stuck",
            "watcher_ok": watcher_ok,
            "loop_ok": loop_ok,
            "current_job": {"id": job.id, "path": job.path, "seconds": round(now - started, 1)}
            if job else None,
            "waiting_to_settle": watcher.waiting if watcher else 0,
            "pid": os.getpid(),
        }
        return watcher_ok and loop_ok, doc

    def _serve_metrics(self) -> MetricsServer:
        from vidocr.daemon.metrics import DaemonMetrics, MetricsServer

        jobs_db = self.options.jobs_db

        def counts() -> dict[str, int]:
            queue = JobQueue(jobs_db, create=False)
            try:
                return queue.counts()
            finally:
                queue.close()

        metrics = DaemonMetrics(counts)
        if self.runner is not None:
            self.runner.metrics = metrics
        server = MetricsServer(metrics, self.health, self.options.metrics_host, self.options.metrics_port or 0)
        event(log, logging.INFO, "metrics_listening", "metrics and health served",
              url=f"http://{self.options.metrics_host}:{server.port}/metrics", port=server.port)
        return server
