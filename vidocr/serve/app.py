"""The ASGI app: ``create_app(settings)`` -> FastAPI, with the API (:mod:`vidocr.serve.api`), the page
(``static/``), ``/healthz``, ``/metrics``, security headers, key checks, rate limits and JSON errors.

Every error is a JSON body ``{"error": "one line"}`` with its status; nothing answers with a traceback. Request
logs name the route, status, time and key *name*; never a key, a token or a query string.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, JSONResponse, Response
from starlette.datastructures import MutableHeaders
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from vidocr.errors import ConfigError, IndexError_, InputError, OutputError, VidocrError
from vidocr.serve import ServeSettings
from vidocr.serve.auth import MediaTokens, RateLimiter, active_key_count, key_is_active, verify_key
from vidocr.serve.media import BandCache
from vidocr.serve.paths import OutsideRoots, RealFolders, real_roots

log = logging.getLogger("vidocr.serve")

CSP = ("default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; media-src 'self' blob:; "
       "connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'")
SECURITY_HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
    "Cross-Origin-Opener-Policy": "same-origin",
    "Cross-Origin-Resource-Policy": "same-origin",
}
LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10)


class ApiError(Exception):
    """An answer other than 2xx: status, one line, extra headers."""

    def __init__(self, status: int, message: str, headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.status, self.message, self.headers = status, message, headers or {}


@dataclass(frozen=True)
class Principal:
    """Who is asking: a key's id and name (0 and "local" without keys) and its scope."""

    key_id: int
    name: str
    scope: str


class ServeState:
    """What every request shares: settings, real roots, index connections (one per thread), tokens, limits."""

    def __init__(self, settings: ServeSettings) -> None:
        from vidocr.index.db import open_index

        self.settings = settings
        roots = list(settings.roots)
        try:
            settings.uploads.mkdir(parents=True, exist_ok=True)
        except OSError as err:
            raise ConfigError(f"cannot create the upload folder: {err.strerror}", str(settings.uploads)) from None
        roots.append(settings.uploads)
        self.roots = real_roots(roots)
        self.folders = RealFolders(self.roots)  # search hits' paths below the roots, folders resolved once a while
        self.tokens = MediaTokens(secret=settings.token_secret)
        self.limiter = RateLimiter(settings.rate, settings.burst)
        self.bands = BandCache()
        self.probes: dict[tuple[str, int, int], Any] = {}
        self._local = threading.local()
        self._conns: list[sqlite3.Connection] = []
        self._conns_lock = threading.Lock()
        conn = open_index(settings.db)  # creates or upgrades it once, before any request
        try:
            keys = active_key_count(conn)
        finally:
            conn.close()
        self._always_keys = settings.require_keys or not settings.loopback
        self._keys_checked = (time.monotonic(), keys > 0)
        if not settings.loopback and keys == 0:
            raise ConfigError(f"refusing to listen on {settings.host} without API keys: create one with "
                              "`vidocr keys create NAME` (or listen on 127.0.0.1)")
        from vidocr.serve.worker import ServeWorker

        self.metrics = _Metrics(settings.queue_path)
        self.worker = ServeWorker(settings, self.metrics.daemon)

    @property
    def keys_required(self) -> bool:
        """Keys are asked for off loopback, with --require-keys, and as soon as one exists (a key created while
        the server runs counts within a second)."""
        if self._always_keys:
            return True
        checked, exist = self._keys_checked
        if time.monotonic() - checked > 1.0:
            exist = active_key_count(self.index()) > 0
            self._keys_checked = (time.monotonic(), exist)
        return exist

    def index(self) -> sqlite3.Connection:
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            from vidocr.index.db import open_index

            conn = open_index(self.settings.db)
            self._local.conn = conn
            with self._conns_lock:
                self._conns.append(conn)
        return conn

    def close(self) -> None:
        with self._conns_lock:
            for conn in self._conns:
                conn.close()
            self._conns.clear()

    def authenticate(self, request: Request, scope: str, video_id: int | None = None) -> Principal:
        """The request's key (or the media token for ``video_id``), checked for ``scope``, and its rate limit."""
        principal = self._who(request, video_id)
        if scope == "full" and principal.scope != "full":
            raise ApiError(403, "this key is read-only: searching and reading only")
        address = request.client.host if request.client else "?"
        who = f"key:{principal.key_id}" if principal.key_id else f"addr:{address}"
        wait = self.limiter.take(who)
        if wait > 0:
            raise ApiError(429, f"rate limit: {self.settings.rate:g} requests/s (burst {self.settings.burst}); "
                                "retry later", {"Retry-After": RateLimiter.retry_after(wait)})
        request.state.key_name = principal.name
        return principal

    def _who(self, request: Request, video_id: int | None) -> Principal:
        header = request.headers.get("authorization")
        if header is None and video_id is not None and "token" in request.query_params:
            key_id = self.tokens.check(request.query_params["token"], video_id)
            if key_id is None or (key_id and not key_is_active(self.index(), key_id)):
                raise ApiError(401, "media token invalid or expired: reload the page")
            return Principal(key_id, "media-token", "read")
        if not self.keys_required:
            return Principal(0, "local", "full")
        if header is None:
            raise ApiError(401, "an API key is required: send `Authorization: Bearer KEY`",
                           {"WWW-Authenticate": "Bearer"})
        kind, _, key = header.partition(" ")
        if kind.lower() != "bearer" or not key.strip():
            raise ApiError(401, "use `Authorization: Bearer KEY`", {"WWW-Authenticate": "Bearer"})
        row = verify_key(self.index(), key.strip())
        if row is None:
            raise ApiError(401, "unknown or revoked API key", {"WWW-Authenticate": "Bearer"})
        return Principal(row.id, row.name, row.scope)


class _Metrics:
    """The daemon's metrics (jobs by state read from the queue, jobs finished, seconds per video...) plus the
    server's requests by route and status and their latency, in one Prometheus registry."""

    def __init__(self, queue_path: Path) -> None:
        from prometheus_client import Counter, Histogram

        from vidocr.daemon.jobs import JobQueue
        from vidocr.daemon.metrics import DaemonMetrics

        def counts() -> dict[str, int]:
            if not queue_path.exists():
                return {}
            queue = JobQueue(queue_path, create=False)
            try:
                return queue.counts()
            finally:
                queue.close()

        self.daemon = DaemonMetrics(counts)
        registry = self.daemon.registry
        self.requests = Counter("vidocr_http_requests", "HTTP requests, by route and status",
                                ["method", "route", "status"], registry=registry)
        self.latency = Histogram("vidocr_http_request_seconds", "HTTP request latency, by route", ["route"],
                                 buckets=LATENCY_BUCKETS, registry=registry)

    def render(self) -> bytes:
        return self.daemon.render()


def _error(status: int, message: str, headers: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse({"error": " ".join(message.split())}, status_code=status, headers=headers)


def _vidocr_status(err: VidocrError) -> int:
    if isinstance(err, OutsideRoots):
        return 403
    if isinstance(err, InputError):
        return 404 if "no such file" in str(err) else 422
    if isinstance(err, ConfigError):
        return 400
    if isinstance(err, IndexError_):
        return 503
    if isinstance(err, OutputError):
        return 500
    return 422


def create_app(settings: ServeSettings) -> FastAPI:
    """The server for ``settings``. Raises :class:`ConfigError` when it must not start (an address other than
    loopback without API keys); the index is created or upgraded here."""
    state = ServeState(settings)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        if settings.worker:
            state.worker.start()
        try:
            yield
        finally:
            state.worker.stop()  # the current job finishes within stop_timeout_s, or goes back to the queue
            state.close()

    app = FastAPI(title="vidocr", version="1", lifespan=lifespan, openapi_url="/api/v1/openapi.json",
                  docs_url=None, redoc_url=None,
                  description="Search a library's burned-in subtitles, read and proofread cues, run extraction jobs.")
    app.state.vidocr = state

    @app.exception_handler(ApiError)
    async def _api_error(request: Request, err: ApiError) -> JSONResponse:
        return _error(err.status, err.message, err.headers)

    @app.exception_handler(VidocrError)
    async def _vidocr_error(request: Request, err: VidocrError) -> JSONResponse:
        return _error(_vidocr_status(err), str(err))

    @app.exception_handler(RequestValidationError)
    async def _invalid(request: Request, err: RequestValidationError) -> JSONResponse:
        first = err.errors()[0] if err.errors() else {}
        where = ".".join(str(p) for p in first.get("loc", ()) if p != "body")
        return _error(422, f"invalid {where or 'request'}: {first.get('msg', 'bad value')}")

    @app.exception_handler(StarletteHTTPException)
    async def _http(request: Request, err: StarletteHTTPException) -> JSONResponse:
        return _error(err.status_code, str(err.detail) if err.detail else "error", dict(err.headers or {}))

    @app.exception_handler(Exception)
    async def _internal(request: Request, err: Exception) -> JSONResponse:
        log.error("internal error on %s %s: %s: %s", request.method, _route(request), type(err).__name__, err)
        return _error(500, "internal error (see the server log)")

    app.add_middleware(_Guard, state=state)

    from vidocr.serve import api

    app.include_router(api.router, prefix="/api/v1")

    @app.get("/healthz", include_in_schema=False)
    def healthz() -> JSONResponse:
        worker = state.worker
        alive = not worker.running or (worker._thread is not None and worker._thread.is_alive())
        doc = {"status": "ok" if alive else "worker stopped", "worker": worker.running,
               "jobs_run_by": "this server" if worker.running else (worker.holder or "none"),
               "current_job": worker.current}
        return JSONResponse(doc, status_code=200 if alive else 503)

    @app.get("/metrics", include_in_schema=False)
    def metrics(request: Request) -> Response:
        state.authenticate(request, "read")
        from prometheus_client import CONTENT_TYPE_LATEST

        return Response(state.metrics.render(), media_type=CONTENT_TYPE_LATEST)

    static = resources.files("vidocr.serve") / "static"

    def _page(name: str, media: str) -> Callable[[], FileResponse]:
        def serve() -> FileResponse:
            return FileResponse(str(static / name), media_type=media)

        return serve

    app.get("/", include_in_schema=False)(_page("index.html", "text/html; charset=utf-8"))
    app.get("/static/app.js", include_in_schema=False)(_page("app.js", "text/javascript; charset=utf-8"))
    app.get("/static/app.css", include_in_schema=False)(_page("app.css", "text/css; charset=utf-8"))
    return app


class _Guard:
    """Pure ASGI middleware around every request: security headers, ``no-store`` on the API, metrics, one log
    line (route template, status, time, key name), and a JSON 500 line instead of a traceback."""

    def __init__(self, app: ASGIApp, state: ServeState) -> None:
        self.app, self.state = app, state

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        status = [0]
        api = str(scope.get("path", "")).startswith("/api/")

        async def guarded_send(message: Message) -> None:
            if message["type"] == "http.response.start":
                status[0] = int(message["status"])
                headers = MutableHeaders(scope=message)
                for name, value in SECURITY_HEADERS.items():
                    headers.setdefault(name, value)
                if api:
                    headers.setdefault("Cache-Control", "no-store")
            await send(message)

        try:
            await self.app(scope, receive, guarded_send)
        except Exception as err:  # noqa: BLE001 - one JSON line, never a traceback
            log.error("internal error on %s %s: %s: %s", scope.get("method"), _route_of(scope), type(err).__name__,
                      err)
            if status[0]:
                raise
            await _error(500, "internal error (see the server log)")(scope, receive, guarded_send)
        finally:
            route, seconds = _route_of(scope), time.perf_counter() - started
            metrics = self.state.metrics
            metrics.requests.labels(scope.get("method", "?"), route, str(status[0] or 500)).inc()
            metrics.latency.labels(route).observe(seconds)
            key_name = (scope.get("state") or {}).get("key_name", "-")
            log.info("%s %s %d %.1f ms key=%s", scope.get("method"), route, status[0] or 500, seconds * 1000,
                     key_name)


def _route_of(scope: Scope) -> str:
    """The route's template (``/api/v1/videos/{video_id}``), not the URL: no ids, paths or query strings."""
    path = getattr(scope.get("route"), "path", None)
    return str(path) if path else "unmatched"


def _route(request: Request) -> str:
    """The route's template (``/api/v1/videos/{video_id}``), not the URL: no ids, paths or query strings."""
    route = request.scope.get("route")
    path = getattr(route, "path", None)
    return str(path) if path else "unmatched"
