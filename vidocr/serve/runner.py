"""Run the app with uvicorn: one process, requests on its event loop and thread pool, jobs on the worker thread.

SIGTERM/SIGINT: uvicorn stops accepting connections, lets requests in flight finish (``graceful_s``), then the
app's shutdown stops the job worker (the current job may finish within ``stop_timeout_s``, else it goes back to
the queue untouched); the exit status is 0. uvicorn's access log is off: the app logs each request by route,
status and key name, so no key, media token or query string reaches a log.
"""

from __future__ import annotations

import logging
import signal
import threading

from vidocr.errors import ConfigError
from vidocr.serve import ServeSettings

log = logging.getLogger("vidocr.serve")


def serve(settings: ServeSettings, *, graceful_s: float = 10.0, processes: int = 1, factory: str | None = None) -> int:
    """Serve until SIGTERM/SIGINT. ``processes`` > 1: that many server processes on one socket, each building its
    app with ``factory`` (an import string ``module:function`` that rebuilds ``settings`` in the child); one of them
    runs the job worker (the queue's lock), and rate limits count per process."""
    if processes > 1:
        return _serve_many(settings, graceful_s, processes, factory)
    try:
        import uvicorn
    except ImportError:
        raise ConfigError("`vidocr serve` needs fastapi and uvicorn: pip install 'vidocr[serve]'") from None
    from vidocr.serve.app import create_app

    app = create_app(settings)  # refuses a non-loopback address without keys before anything listens
    state = app.state.vidocr
    host = f"[{settings.host}]" if ":" in settings.host else settings.host
    log.warning("serving %d library folder(s) on http://%s:%d/ (%s)", len(settings.roots), host, settings.port,
                "API keys required" if state.keys_required else "no API keys: local use only")
    config = uvicorn.Config(app, host=settings.host, port=settings.port, access_log=False, log_level="warning",
                            timeout_graceful_shutdown=int(graceful_s), server_header=False, proxy_headers=False)
    server = uvicorn.Server(config)
    # uvicorn raises a signal it shut down for again once it is done, to its previous handler: a no-op here, so
    # that SIGTERM / SIGINT end a graceful shutdown with exit status 0, as `vidocr watch` does.
    previous = {}
    if threading.current_thread() is threading.main_thread():
        previous = {sig: signal.signal(sig, _ignore) for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        server.run()
    except OSError as err:
        raise ConfigError(f"cannot listen on {host}:{settings.port}: {err.strerror or err}") from None
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    return 0


def _serve_many(settings: ServeSettings, graceful_s: float, workers: int, factory: str | None) -> int:
    try:
        import uvicorn
    except ImportError:
        raise ConfigError("`vidocr serve` needs fastapi and uvicorn: pip install 'vidocr[serve]'") from None
    from vidocr.serve.app import create_app

    if factory is None:
        raise ConfigError("several server processes need an app factory")
    create_app(settings)  # the same checks as one process (keys off loopback, the index), before any child starts
    host = f"[{settings.host}]" if ":" in settings.host else settings.host
    log.warning("serving %d library folder(s) on http://%s:%d/ with %d processes", len(settings.roots), host,
                settings.port, workers)
    try:
        uvicorn.run(factory, factory=True, host=settings.host, port=settings.port, workers=workers, access_log=False,
                    log_level="warning", timeout_graceful_shutdown=int(graceful_s), server_header=False,
                    proxy_headers=False)
    except OSError as err:
        raise ConfigError(f"cannot listen on {host}:{settings.port}: {err.strerror or err}") from None
    return 0


def _ignore(signum: int, frame: object) -> None:
    """The handler uvicorn hands a signal back to after its graceful shutdown."""
