"""``vidocr watch``: a watch-folder daemon over :func:`vidocr.extract` and the search index.

:mod:`~vidocr.daemon.jobs` is the durable queue (SQLite), :mod:`~vidocr.daemon.watcher` finds stable files
(watchdog events plus rescans), :mod:`~vidocr.daemon.worker` runs one job, :mod:`~vidocr.daemon.service` is the
main loop with signals and health, and :mod:`~vidocr.daemon.metrics` serves Prometheus metrics;
the ``watch`` and ``jobs`` commands live in the CLI (``vidocr._cli``). watchdog and prometheus-client are imported
only when used.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from vidocr.pipeline import ExtractOptions


@dataclass(frozen=True)
class WatchOptions:
    """How the daemon runs.

    roots: folders watched recursively. jobs_db: the queue's SQLite file. db: the search index (None: no index).
    extract: what to extract and how (None: the defaults). formats, output_dir, bilingual: as for ``vidocr extract``;
    with ``output_dir``, outputs mirror each video's folder below its root (``D/<sub/dir>/<stem>.srt``).
    lang: language of the burned-in text, stored on index tracks. settle_s: unchanged size and mtime for this long
    make a file ready. rescan_s: full rescan period. once: process what is there, then exit.
    stop_timeout_s: how long the current job may run on after SIGTERM. max_attempts, retry_delay_s: retries of
    failures that may pass (backoff doubles from ``retry_delay_s``). skip_existing: a video whose outputs all exist
    (and, with an index, is indexed with the same size and mtime) is marked done without OCR.
    """

    roots: tuple[Path, ...]
    jobs_db: Path
    extract: ExtractOptions | None = None
    formats: tuple[str, ...] = ("srt",)
    output_dir: Path | None = None
    db: Path | None = None
    lang: str | None = None
    bilingual: bool = False
    settle_s: float = 5.0
    rescan_s: float = 60.0
    once: bool = False
    stop_timeout_s: float = 20.0
    max_attempts: int = 5
    retry_delay_s: float = 30.0
    skip_existing: bool = False
    metrics_host: str = "127.0.0.1"
    metrics_port: int | None = None
    tick_s: float = field(default=0.25, repr=False)

    def __post_init__(self) -> None:
        port = self.metrics_port
        if port is not None and (isinstance(port, bool) or not isinstance(port, int) or not 0 <= port <= 65535):
            from vidocr.errors import ConfigError

            raise ConfigError(f"{{param}} must be a port number from 0 to 65535, got {port!r}", param="metrics_port")
