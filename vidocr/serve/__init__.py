"""``vidocr serve``: an HTTP API and a web page over the search index, the daemon's job queue and the videos.

:func:`~vidocr.serve.app.create_app` builds the one ASGI app (FastAPI) from :class:`ServeSettings`;
:mod:`~vidocr.serve.api` holds the ``/api/v1`` routes, :mod:`~vidocr.serve.auth` the API keys and rate limits,
:mod:`~vidocr.serve.paths` the checks that keep every path inside the library roots, :mod:`~vidocr.serve.media`
band images and probing, :mod:`~vidocr.serve.worker` the daemon's job runner on a thread, and
:mod:`~vidocr.serve.runner` the uvicorn server. fastapi and uvicorn come with ``pip install 'vidocr[serve]'``.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vidocr.errors import ConfigError

if TYPE_CHECKING:
    from vidocr.pipeline import ExtractOptions


@dataclass(frozen=True)
class ServeSettings:
    """How the server runs.

    roots: library folders; no path outside them (links resolved) is ever served or processed. db: the search
    index (created if missing). jobs_db: the daemon's job queue (default ``<db>.jobs``, the one ``vidocr watch``
    uses). upload_dir: where uploads are kept (default ``<db>.uploads``); it counts as one more root.
    host, port: where to listen; any address but loopback needs API keys. require_keys: ask for a key even on
    loopback (keys are also required whenever one exists). rate, burst: each key's (or, without keys, each
    client's) token bucket, requests per second and the most at once. max_upload_bytes: larger uploads get 413.
    worker: run the daemon's job runner in this process (when no ``vidocr watch`` holds the queue).
    extract, formats, output_dir: what jobs extract and write (beside each video, or mirrored under output_dir).
    extractor: stands in for the engine (tests). stop_timeout_s: on shutdown, how long the current job may run on
    before it is given back. token_secret: see below. rank_window: a search matching more cues is ranked among its
    newest ``rank_window`` matches only (:class:`vidocr.index.SearchOptions`; bm25 costs ~2.5 µs per match ranked,
    the most of a request at 1M cues): lower trades ranking breadth for CPU per request.
    """

    roots: tuple[Path, ...]
    db: Path
    jobs_db: Path | None = None
    upload_dir: Path | None = None
    host: str = "127.0.0.1"
    port: int = 8765
    require_keys: bool = False
    rate: float = 20.0
    burst: int = 60
    max_upload_bytes: int = 4 << 30
    worker: bool = True
    extract: ExtractOptions | None = None
    formats: tuple[str, ...] = ("srt",)
    output_dir: Path | None = None
    extractor: Callable[[Path], Any] | None = field(default=None, repr=False, compare=False)
    stop_timeout_s: float = 20.0
    rank_window: int = 10_000
    #: The media tokens' HMAC key (None: a random one at start-up). Server processes that share one listening
    #: socket (``vidocr serve --processes``) share it, so a token from one is good in the others.
    token_secret: bytes | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        if not self.roots:
            raise ConfigError("no library folder to serve: give DIR...")
        if not (0 <= self.port <= 65535):
            raise ConfigError(f"--port must be from 0 to 65535, got {self.port}")
        if self.rate <= 0 or self.burst < 1:
            raise ConfigError("--rate must be > 0 and --burst >= 1")
        if self.max_upload_bytes < 1:
            raise ConfigError("--max-upload must be at least 1 byte")
        if isinstance(self.rank_window, bool) or not isinstance(self.rank_window, int) or \
                not 1 <= self.rank_window <= 1_000_000:
            raise ConfigError(f"--rank-window must be a whole number from 1 to 1000000, got {self.rank_window!r}")

    @property
    def queue_path(self) -> Path:
        return self.jobs_db or Path(f"{self.db}.jobs")

    @property
    def uploads(self) -> Path:
        return self.upload_dir or Path(f"{self.db}.uploads")

    @property
    def loopback(self) -> bool:
        return is_loopback(self.host)


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False
