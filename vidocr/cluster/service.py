"""``vidocr watch --ray``: the watch daemon with its jobs run as Ray tasks, the job queue still the source of truth.

The daemon claims up to the extractor's window of due jobs (each becomes ``running`` in the queue and its attempt
is counted), submits their videos, and runs each job's usual steps (:class:`~vidocr.daemon.worker.JobRunner`:
stamp checks, atomic subtitle files, one index transaction, ``done``) on the driver as its video finishes, so
the driver is the one writer. A killed driver leaves its claimed jobs ``running``; the next start puts them back
to ``pending`` (:meth:`~vidocr.daemon.jobs.JobQueue.recover`) and runs them again: none is lost, and a job whose
outputs and rows were written before the kill is rewritten to the same result (both writes are idempotent), never
stored twice. On SIGTERM the daemon stops claiming, stores what finishes within ``stop_timeout_s`` and gives the
other jobs back untouched. Jobs that need no extraction by the run's engine are run on the driver as soon as they
are claimed, their video never sent: with ``--skip-existing`` a job whose outputs (and index row) exist, and a job
with an engine choice of its own (``vidocr serve``), which the runner extracts with that choice's engine. Where each
done job ran is recorded for ``vidocr jobs`` (:mod:`vidocr.cluster.nodes`).
"""

from __future__ import annotations

import logging
import sqlite3
import time
from collections.abc import Iterator
from typing import Any

from vidocr.cluster.nodes import record_run
from vidocr.cluster.runner import RayExtractor
from vidocr.daemon import WatchOptions
from vidocr.daemon.jobs import Job, JobQueue
from vidocr.daemon.logs import event
from vidocr.daemon.service import WatchService
from vidocr.daemon.worker import JobRunner
from vidocr.files import stamp_or_none

log = logging.getLogger("vidocr.daemon")


class RayWatchService(WatchService):
    """:class:`~vidocr.daemon.service.WatchService` with the jobs' videos extracted on Ray by ``extractor``."""

    def __init__(self, options: WatchOptions, extractor: RayExtractor) -> None:
        super().__init__(options, extractor)
        self.ray = extractor
        self._status_at = 0.0
        self._runs: sqlite3.Connection | None = None  # the queue file, for ray_runs (vidocr.cluster.nodes)

    def run(self) -> int:
        try:
            return super().run()
        finally:
            if self._runs is not None:
                self._runs.close()
                self._runs = None

    def _loop(self, queue: JobQueue, runner: JobRunner) -> None:
        ray = self.ray
        claimed: dict[str, Job] = {}
        try:
            while not self._stopping:
                self._beat = time.monotonic()
                while len(claimed) < ray.window:
                    job = queue.claim()
                    if job is None:
                        break
                    chosen: str = getattr(job, "engine", "")
                    if chosen or self._skippable(job, runner):
                        # --skip-existing: done here, its video never sent; a job with an engine choice of its own
                        # (`vidocr serve`'s A/B runs) is extracted here by the runner with that choice's engine
                        runner.run(job)
                        continue
                    claimed[job.path] = job
                    ray.submit(job.path)
                if not claimed:
                    if self.options.once:
                        return
                    self._wake.wait(self.options.tick_s * 2)
                    self._wake.clear()
                    continue
                path = ray.wait_one(timeout=self.options.tick_s * 4)
                if path is None:
                    continue
                self._store(runner, claimed.pop(path))
                self._log_status()
            self._finish_in_flight(queue, runner, claimed)
        finally:
            for job in claimed.values():  # not run: back to pending, this attempt not counted
                ray.cancel(job.path)
                queue.release(job)

    def _finish_in_flight(self, queue: JobQueue, runner: JobRunner, claimed: dict[str, Job]) -> None:
        """Stopping: store the videos that finish within ``stop_timeout_s``; the rest are given back."""
        deadline = time.monotonic() + self.options.stop_timeout_s
        while claimed and time.monotonic() < deadline:
            path = self.ray.wait_one(timeout=max(0.0, deadline - time.monotonic()))
            if path is None:
                break
            self._store(runner, claimed.pop(path))

    def _store(self, runner: JobRunner, job: Job) -> None:
        """Run the job's steps on its finished result (stamps, outputs, index, done) and record where it ran."""
        ray = self.ray
        ray.last = None
        outcome = runner.run(job)
        ray.discard(job.path)  # a job that ended before extracting (file gone, changed) leaves its result
        result = ray.last
        if outcome == "done" and result is not None and result.path == job.path and result.node:
            info = result.info
            try:
                if self._runs is None:
                    self._runs = sqlite3.connect(runner.queue.path, timeout=30.0, isolation_level=None)
                record_run(self._runs, job.id, result.node, result.host, result.seconds,
                           info.duration_s if info else None, info.stats.frames if info else None)
            except sqlite3.Error as err:  # throughput figures only: the job is done
                log.warning("could not record where job %d ran: %s", job.id, err)

    def _skippable(self, job: Job, runner: JobRunner) -> bool:
        """With ``--skip-existing``: the job's file is as queued and its outputs (and index row) exist, so the runner
        will mark it done without extracting: its video is not sent to Ray."""
        if not self.options.skip_existing:
            return False
        stamp = stamp_or_none(job.path)
        return stamp is not None and stamp == job.stamp and runner._already_done(job, stamp)

    def _serve_metrics(self) -> Any:
        """The daemon's metrics, plus per Ray node the videos it finished and the seconds of video in them."""
        server = super()._serve_metrics()
        if self.runner is not None and self.runner.metrics is not None:
            self.runner.metrics.registry.register(_NodeCounts(self.ray))
        return server

    def _log_status(self) -> None:
        now = time.monotonic()
        if now - self._status_at >= 10.0:
            self._status_at = now
            event(log, logging.INFO, "ray_status", self.ray.status(), running=self.ray.in_flight,
                  done=self.ray.counts.done, failed=self.ray.counts.failed,
                  nodes=dict(self.ray.counts.node_videos))


class _NodeCounts:
    """Prometheus collector, by node (first 8 characters of its id): ``vidocr_ray_node_videos``,
    ``vidocr_ray_node_video_seconds``, ``vidocr_ray_node_task_seconds``, ``vidocr_ray_node_frames``."""

    def __init__(self, ray: RayExtractor) -> None:
        self.ray = ray

    def describe(self) -> list[Any]:
        return []  # collected fresh at each scrape

    def collect(self) -> Iterator[Any]:
        from prometheus_client.core import CounterMetricFamily

        counts = self.ray.counts
        videos = CounterMetricFamily("vidocr_ray_node_videos", "Videos finished on each Ray node", labels=["node"])
        seconds = CounterMetricFamily("vidocr_ray_node_video_seconds", "Seconds of video finished on each Ray node",
                                      labels=["node"])
        busy = CounterMetricFamily("vidocr_ray_node_task_seconds", "Seconds the video tasks ran on each Ray node",
                                   labels=["node"])
        frames = CounterMetricFamily("vidocr_ray_node_frames", "Frames decoded on each Ray node", labels=["node"])
        for node, count in sorted(counts.node_videos.items()):
            videos.add_metric([node], count)
            seconds.add_metric([node], counts.node_video_s.get(node, 0.0))
            busy.add_metric([node], counts.node_task_s.get(node, 0.0))
            frames.add_metric([node], counts.node_frames.get(node, 0))
        yield from (videos, seconds, busy, frames)
