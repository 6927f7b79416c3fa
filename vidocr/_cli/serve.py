"""``vidocr serve``: the HTTP API and web page (:mod:`vidocr.serve`) from the command line."""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

from vidocr._cli.errors import exit_codes_epilog
from vidocr._cli.options import (
    DB_DEFAULT_HELP,
    add_extract_options,
    db_path,
    extract_options_from_args,
    parse_format_args,
)
from vidocr.errors import ConfigError, InputError

NAME = "serve"

_SIZE = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}


def parse_size(text: str) -> int:
    """``500M``, ``4G``, ``1048576`` -> bytes (ConfigError for anything else)."""
    value = str(text).strip().lower().removesuffix("b").removesuffix("i")
    unit = value[-1:] if value[-1:] in _SIZE else ""
    try:
        number = float(value[: len(value) - len(unit)])
    except ValueError:
        raise ConfigError(f"--max-upload must be a size such as 500M or 4G, got {text!r}") from None
    if not number > 0:
        raise ConfigError(f"--max-upload must be more than 0, got {text!r}")
    return int(number * _SIZE[unit])


def add_parser(sub: Any) -> argparse.ArgumentParser:
    p: argparse.ArgumentParser = sub.add_parser(
        "serve", help="serve a web page and an HTTP API to search, watch and proofread the library",
        description="Serve the search index, the videos under DIR... and the job queue over HTTP (API at /api/v1, "
                    "spec at /api/v1/openapi.json, the page at /). Binds 127.0.0.1 unless --host says otherwise; "
                    "any other address needs API keys (`vidocr keys create`).",
        epilog=exit_codes_epilog(), formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("dirs", nargs="*", metavar="DIR", help="library folders served (nothing outside them is)")
    p.add_argument("--config", help="YAML file with option defaults (top-level keys and a `serve:` section)")
    p.add_argument("--db", help=f"search index (created if missing; default: {DB_DEFAULT_HELP})")
    p.add_argument("--jobs-db", help="job queue file, shared with `vidocr watch` (default: <db>.jobs)")
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default: 127.0.0.1)")
    p.add_argument("--port", type=int, default=8765, help="port (default: 8765)")
    p.add_argument("--require-keys", action="store_true", help="ask for an API key on loopback too")
    p.add_argument("--rate", type=float, default=20.0, help="requests per second per key (token bucket; default 20)")
    p.add_argument("--burst", type=int, default=60, help="requests at once per key (default 60)")
    p.add_argument("--max-upload", default="4G", help="largest upload (default 4G); larger ones get 413")
    p.add_argument("--upload-dir", help="where uploads are kept (default: <db>.uploads)")
    p.add_argument("--no-worker", action="store_true",
                   help="only queue jobs (a `vidocr watch` runs them); by default the server runs them itself "
                        "when no watch daemon holds the queue")
    p.add_argument("--processes", type=int, default=1, metavar="N",
                   help="server processes on the one port (default 1); one of them runs the job worker")
    p.add_argument("--stop-timeout", type=float, default=20.0, metavar="SECONDS",
                   help="on shutdown, let the current job finish this long, then give it back (default: 20)")
    p.add_argument("--rank-window", type=int, default=10_000, metavar="N",
                   help="a search matching more cues ranks only its newest N matches (default 10000, as `vidocr "
                        "search`); lower: less CPU per request, ranking over fewer matches")
    p.add_argument("-q", "--quiet", action="store_true", help="log errors only")
    p.add_argument("-v", "--verbose", action="store_true", help="log each request (route, status, time, key name)")
    add_extract_options(p)
    for action in p._actions:
        if action.dest == "output_dir":
            action.help = "folder for jobs' subtitle files: <OUT>/<sub/folder>/<stem>.<ext> (default: beside the video)"
    return p


def settings_from_args(args: argparse.Namespace) -> Any:
    from vidocr.serve import ServeSettings

    dirs = [args.dirs] if isinstance(args.dirs, str) else list(args.dirs or [])
    if not dirs:
        raise ConfigError("no library folder to serve: give DIR... or `dirs:` in --config")
    for folder in dirs:
        if not os.path.isdir(folder):
            raise InputError("no such folder", str(folder))
    db = Path(db_path(args))
    return ServeSettings(
        roots=tuple(Path(d).absolute() for d in dirs), db=db,
        jobs_db=Path(args.jobs_db) if args.jobs_db else None,
        upload_dir=Path(args.upload_dir) if args.upload_dir else None,
        host=str(args.host), port=int(args.port), require_keys=bool(args.require_keys), rate=float(args.rate),
        burst=int(args.burst), max_upload_bytes=parse_size(args.max_upload), worker=not args.no_worker,
        extract=extract_options_from_args(args), formats=tuple(parse_format_args(args.format)),
        output_dir=Path(args.output_dir).absolute() if args.output_dir else None,
        stop_timeout_s=float(args.stop_timeout), rank_window=int(args.rank_window),
    )


#: Where a server process started by ``--processes`` finds its settings (set by the parent, read by the child).
_SETTINGS_ENV = "VIDOCR_SERVE_SETTINGS"


def run(args: argparse.Namespace) -> int:
    from vidocr.serve.runner import serve

    settings = settings_from_args(args)
    processes = int(args.processes)
    if not 1 <= processes <= 64:
        raise ConfigError(f"--processes must be from 1 to 64, got {processes}")
    if processes > 1:
        import base64
        import dataclasses
        import pickle
        import secrets

        settings = dataclasses.replace(settings, token_secret=secrets.token_bytes(32))
        os.environ[_SETTINGS_ENV] = base64.b64encode(pickle.dumps(settings)).decode()
    return serve(settings, processes=processes, factory=f"{__name__}:app_from_environment")


def app_from_environment() -> Any:
    """The app of one server process of ``--processes``: the parent's settings, from the environment."""
    import base64
    import pickle

    from vidocr.serve.app import create_app

    return create_app(pickle.loads(base64.b64decode(os.environ[_SETTINGS_ENV])))  # noqa: S301 - our parent's
