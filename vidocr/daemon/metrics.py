"""Prometheus metrics and a health check for the daemon, served by one small HTTP server (127.0.0.1 by default).

``GET /metrics``: jobs by state (read from the queue at each scrape, so they are right across restarts), jobs
finished by outcome, seconds per video, frames and OCR calls, cues, errors by kind. ``GET /healthz``: 200 with a
JSON status while the daemon works, 503 when its watcher or job loop is stuck or dead.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from vidocr.errors import ConfigError, VidocrError
from vidocr.types import RunStats

log = logging.getLogger("vidocr.daemon")

try:
    from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Counter, Gauge, Histogram, generate_latest
    from prometheus_client.core import GaugeMetricFamily

    HAVE_PROMETHEUS = True
except ImportError:  # pragma: no cover - the daemon says how to install it when --metrics-port is used
    HAVE_PROMETHEUS = False

SECONDS_BUCKETS = (0.5, 1, 2, 5, 10, 30, 60, 120, 300, 600, 1200, 2400, 3600, 7200)


class DaemonMetrics:
    """The daemon's counters; ``job_counts`` returns {state: count} from the queue."""

    def __init__(self, job_counts: Callable[[], dict[str, int]]) -> None:
        if not HAVE_PROMETHEUS:
            raise ConfigError("{param} needs prometheus-client: pip install 'vidocr[watch]'", param="metrics_port")
        self.registry = registry = CollectorRegistry()
        self.jobs_finished = Counter(
            "vidocr_jobs_finished", "Jobs that ended an attempt, by outcome", ["outcome"], registry=registry
        )
        self.video_seconds = Histogram(
            "vidocr_video_seconds", "Wall-clock seconds the pipeline took on one video (on the node that ran it)",
            buckets=SECONDS_BUCKETS, registry=registry,
        )
        self.frames = Counter("vidocr_frames_decoded", "Video frames decoded", registry=registry)
        self.fps = Gauge("vidocr_frames_per_second", "Frames decoded per second in the last video", registry=registry)
        self.ocr_calls = Counter("vidocr_ocr_calls", "Band crops sent to the OCR engine", registry=registry)
        self.cues = Counter("vidocr_cues", "Cues extracted", registry=registry)
        self.errors = Counter("vidocr_errors", "Job errors, by kind", ["kind"], registry=registry)
        registry.register(_JobStates(job_counts))

    def video_done(self, seconds: float, stats: RunStats, cues: int) -> None:
        frames = stats.frames or 0
        self.video_seconds.observe(seconds)
        self.frames.inc(frames)
        self.ocr_calls.inc(stats.ocr_calls or 0)
        self.cues.inc(cues)
        stage = stats.seconds or seconds
        if stage > 0:
            self.fps.set(frames / stage)

    def render(self) -> bytes:
        return bytes(generate_latest(self.registry))


class _JobStates:
    def __init__(self, job_counts: Callable[[], dict[str, int]]) -> None:
        self.job_counts = job_counts

    def describe(self) -> list[Any]:
        return []  # collected fresh at each scrape

    def collect(self) -> Iterator[Any]:
        family = GaugeMetricFamily("vidocr_jobs", "Jobs in the queue, by state", labels=["state"])
        try:
            counts = self.job_counts()
        except (VidocrError, OSError, RuntimeError) as err:
            log.warning("metrics: cannot read the job queue: %s", err)
            counts = {}
        for state, count in sorted(counts.items()):
            family.add_metric([state], count)
        yield family


class MetricsServer:
    """Serves ``/metrics`` and ``/healthz`` on ``host:port`` (port 0: any free port, see :attr:`port`)."""

    def __init__(
        self, metrics: DaemonMetrics, health: Callable[[], tuple[bool, dict[str, Any]]], host: str, port: int
    ) -> None:
        metrics_, health_ = metrics, health

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 - the http.server API
                path = self.path.split("?", 1)[0]
                if path == "/metrics":
                    self._send(200, CONTENT_TYPE_LATEST, metrics_.render())
                elif path in ("/healthz", "/health"):
                    ok, doc = health_()
                    self._send(200 if ok else 503, "application/json", json.dumps(doc, default=str).encode())
                else:
                    self._send(404, "text/plain", b"not found: try /metrics or /healthz\n")

            def _send(self, code: int, ctype: str, body: bytes) -> None:
                self.send_response(code)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the http.server API
                log.debug("http: " + format, *args)

        try:
            self.server = ThreadingHTTPServer((host, port), Handler)
        except OSError as err:
            raise ConfigError(f"cannot listen on {host}:{port} for metrics: {err.strerror or err}") from None
        self.server.daemon_threads = True
        self.port = int(self.server.server_address[1])
        self._thread = threading.Thread(target=self.server.serve_forever, name="vidocr-metrics", daemon=True)
        self._thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
