"""``vidocr watch``: the watch-folder daemon (:class:`~vidocr.daemon.service.WatchService`) from the command line."""

from __future__ import annotations

import argparse
import logging
import os
import sys
import time
from pathlib import Path
from typing import Any

from vidocr._cli.console import shown_path
from vidocr._cli.errors import exit_codes_epilog
from vidocr._cli.options import (
    DB_DEFAULT_HELP,
    add_extract_options,
    extract_options_from_args,
    index_path,
    jobs_db_path,
    lang_stored_help,
    parse_format_args,
    stored_lang,
)
from vidocr._cli.ray import add_ray_options, ray_extractor, wants_ray
from vidocr.errors import ConfigError, InputError

NAME = "watch"


def add_parser(sub: Any) -> argparse.ArgumentParser:
    raw = argparse.RawDescriptionHelpFormatter
    w: argparse.ArgumentParser = sub.add_parser(
        "watch", help="watch folders and turn new videos into subtitle files and index entries",
        epilog=exit_codes_epilog(), formatter_class=raw,
    )
    w.add_argument("dirs", nargs="*", metavar="DIR", help="folders to watch, recursively (or `dirs:` in --config)")
    w.add_argument("--config", help="YAML file with option defaults (top-level keys and a `watch:` section)")
    w.add_argument("--db", help=f"search index to keep up to date (SQLite; created if missing; default: "
                                f"{DB_DEFAULT_HELP}; none with only --jobs-db)")
    w.add_argument("--jobs-db", help="job queue file (default: <db>.jobs)")
    w.add_argument("--settle", type=float, default=5.0, metavar="SECONDS",
                   help="a file is ready once its size and mtime stay unchanged this long (default: 5)")
    w.add_argument("--rescan", type=float, default=60.0, metavar="SECONDS",
                   help="full rescan period, for events that network shares drop (default: 60)")
    w.add_argument("--once", action="store_true", help="process what is there (once stable), then exit (cron)")
    w.add_argument("--stop-timeout", type=float, default=20.0, metavar="SECONDS",
                   help="on SIGTERM, let the current video finish this long, then abandon it (default: 20)")
    w.add_argument("--max-attempts", type=int, default=5, help="tries of a job that fails for a passing reason (5)")
    w.add_argument("--retry-delay", type=float, default=30.0, metavar="SECONDS",
                   help="first retry delay, doubled at each try (default: 30)")
    w.add_argument("--metrics-port", type=int, help="serve Prometheus /metrics and /healthz on this port (0: any)")
    w.add_argument("--metrics-host", default="127.0.0.1", help="address for --metrics-port (default: 127.0.0.1)")
    w.add_argument("-q", "--quiet", action="store_true", help="log warnings and errors only")
    w.add_argument("-v", "--verbose", action="store_true", help="log details")
    w.add_argument("--json", action="store_true", help="log JSON lines (one object per event) instead of text")
    add_extract_options(w)
    lang_stored_help(w)
    add_ray_options(w)
    for action in w._actions:  # shared options read differently by a daemon
        if action.dest == "skip_existing":
            action.help = "mark videos whose outputs exist (and are indexed unchanged, with --db) done without OCR"
        elif action.dest == "workers":
            action.help = "OCR threads / concurrent requests of the one engine (videos are done one at a time)"
        elif action.dest == "output_dir":
            action.help = "folder for the outputs, as <OUT>/<sub/folder>/<stem>.<ext> (default: beside each video)"
    return w


def watch_options_from_args(args: argparse.Namespace) -> Any:
    from vidocr.daemon import WatchOptions

    dirs = [args.dirs] if isinstance(args.dirs, str) else list(args.dirs or [])
    if not dirs:
        raise ConfigError("no folder to watch: give DIR... or `dirs:` in --config")
    for folder in dirs:
        if not os.path.isdir(folder):
            raise InputError("no such folder", str(folder))
    extract = extract_options_from_args(args)  # every value checked, the engine class imported
    out = args.output_dir
    if out is not None and (out == "-" or os.path.isfile(out)):
        raise ConfigError(f"-o {out}: the daemon writes many videos' subtitles, give a folder")
    if args.settle < 0 or args.rescan <= 0 or args.max_attempts < 1 or args.stop_timeout < 0:
        raise ConfigError("--settle and --stop-timeout must be >= 0, --rescan > 0, --max-attempts >= 1")
    return WatchOptions(
        roots=tuple(Path(d).absolute() for d in dirs),
        jobs_db=jobs_db_path(args),
        extract=extract,
        formats=tuple(parse_format_args(args.format)),
        output_dir=Path(args.output_dir).absolute() if args.output_dir else None,
        db=index_path(args),
        lang=stored_lang(extract.lang),
        bilingual=bool(args.bilingual),
        settle_s=float(args.settle),
        rescan_s=float(args.rescan),
        once=bool(args.once),
        stop_timeout_s=float(args.stop_timeout),
        max_attempts=int(args.max_attempts),
        retry_delay_s=float(args.retry_delay),
        skip_existing=bool(args.skip_existing),
        metrics_host=args.metrics_host,
        metrics_port=args.metrics_port,
        tick_s=min(0.25, max(0.02, float(args.settle) / 4)),
    )


def run(args: argparse.Namespace) -> int:
    from vidocr.daemon.logs import setup_logging
    from vidocr.daemon.service import WatchService

    level = logging.DEBUG if args.verbose else logging.WARNING if args.quiet else logging.INFO
    setup_logging(json_lines=bool(args.json), level=level)
    options = watch_options_from_args(args)
    if not options.once:
        try:
            import watchdog  # noqa: F401
        except ImportError:
            raise ConfigError("vidocr watch needs watchdog: pip install 'vidocr[watch]' (or use --once)") from None
    started = time.time()
    if wants_ray(args):
        from vidocr.cluster.service import RayWatchService

        code = RayWatchService(options, ray_extractor(args, options.extract)).run()
    else:
        code = WatchService(options).run()
    if options.once and code == 0:
        return _once_outcome(options.jobs_db, started)
    return code


def _once_outcome(jobs_db: Path, since: float) -> int:
    """``watch --once``: 1 when a job of this run failed (for good, or waiting for a retry), else 0."""
    from vidocr.daemon.jobs import JobQueue

    queue = JobQueue(jobs_db, create=False)
    try:
        failed = [j for j in queue.jobs() if j.updated_at >= since and j.error
                  and (j.state == "failed" or (j.state == "pending" and j.attempts > 0))]
    finally:
        queue.close()
    for job in failed:
        print(f"error: {shown_path(job.path)}: {job.error}" + (" (will be retried)" if job.state == "pending" else ""),
              file=sys.stderr)
    return 1 if failed else 0
