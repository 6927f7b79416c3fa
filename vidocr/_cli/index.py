"""``vidocr index build|status``: keep the subtitle search index of video libraries up to date."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from vidocr._cli.errors import exit_codes_epilog
from vidocr._cli.options import (
    DB_DEFAULT_HELP,
    add_extract_options,
    db_path,
    extract_options_from_args,
    lang_stored_help,
    stored_lang,
)
from vidocr._cli.ray import add_ray_options, ray_extractor, wants_ray
from vidocr.errors import display_path, one_line

NAME = "index"
#: ``index status --config`` reads only where the index is from the file's ``index:`` section.
CONFIG_BORROWED = {("index", "status"): {"db"}}


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """``index`` with its actions ``build`` and ``status``."""
    raw = argparse.RawDescriptionHelpFormatter
    db_help = f"index file (SQLite; default: {DB_DEFAULT_HELP})"
    index: argparse.ArgumentParser = subparsers.add_parser(
        "index", help="build and inspect the subtitle search index", epilog=exit_codes_epilog(), formatter_class=raw,
    )
    index_sub = index.add_subparsers(dest="index_command", metavar="ACTION", required=True)

    build = index_sub.add_parser("build", help="extract subtitles of new and changed videos into the index",
                                 epilog=exit_codes_epilog(), formatter_class=raw)
    build.add_argument("paths", nargs="+", metavar="LIBRARY", help="video files, folders (recursive) or globs")
    build.add_argument("--config", help="YAML file with option defaults (top-level keys and an `index:` section)")
    build.add_argument("--db", help=db_help + "; created if missing")
    build.add_argument("--prune", action="store_true", help="remove videos that no longer exist in these libraries")
    build.add_argument("--sidecars", action="store_true", help="also import .srt/.vtt/.ass files next to videos")
    build.add_argument("--retry-failed", action="store_true", help="retry videos that failed before, even unchanged")
    build.add_argument("--force", action="store_true", help="extract every video again")
    build.add_argument("--wait", type=float, default=0.0, metavar="SECONDS", help="wait for another build to end")
    build.add_argument("--json", action="store_true", help="print the summary as JSON")
    build.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
    build.add_argument("-v", "--verbose", action="store_true", help="log details")
    add_extract_options(build, outputs=False)
    lang_stored_help(build)
    add_ray_options(build)

    status = index_sub.add_parser("status", help="counts, size and the videos that failed (with reasons)",
                                  epilog=exit_codes_epilog(), formatter_class=raw)
    status.add_argument("--config", help="YAML file whose `db:` (top level or `index:` section) names the index")
    status.add_argument("--db", help=db_help)
    status.add_argument("--json", action="store_true", help="print JSON")
    return index


def run(args: argparse.Namespace) -> int:
    return _build(args) if args.index_command == "build" else _status(args)


def _build(args: argparse.Namespace) -> int:
    from vidocr.extractor import Extractor
    from vidocr.index.build import BuildOptions, build_index

    extract_options = extract_options_from_args(args)
    extractor = ray_extractor(args, extract_options) if wants_ray(args) else Extractor(extract_options)
    bar = _ProgressBar() if not args.quiet and not args.json and sys.stderr.isatty() else None
    options = BuildOptions(
        extract=extractor,
        engine=args.engine,
        lang=stored_lang(extract_options.lang),
        translation_lang=args.translate,
        prune=args.prune,
        sidecars=args.sidecars,
        retry_failed=args.retry_failed,
        force=args.force,
        lock_timeout_s=args.wait,
        progress=bar,
    )
    try:
        report = build_index(db_path(args), args.paths, options)
    finally:
        extractor.close()
        if bar is not None:
            bar.close()
    code = 1 if report.failed else 0  # a batch with failed videos is not a success (the others are indexed)
    if args.json:
        print(json.dumps(report.to_dict(), ensure_ascii=False))
        return code
    print(report.summary())
    for path, reason in report.failures:
        print(f"  failed: {display_path(path)}: {one_line(reason)}")
    return code


def _status(args: argparse.Namespace) -> int:
    from vidocr.index.db import open_index
    from vidocr.index.search import index_status

    db = db_path(args)
    conn = open_index(db, readonly=True)
    try:
        status = index_status(conn, db)
    finally:
        conn.close()
    if args.json:
        print(json.dumps(status.to_dict(), ensure_ascii=False))
        return 0
    print(
        f"{status.path}: schema v{status.schema_version}, {status.videos} videos ({status.failed} failed), "
        f"{status.cues} cues, {status.sidecar_tracks} subtitle files, {status.size_bytes / 1e6:.1f} MB"
    )
    for path, reason in status.failures:
        print(f"  failed: {display_path(path)}: {one_line(reason)}")
    return 0


class _ProgressBar:
    """tqdm on a terminal, fed by :class:`BuildProgress` events."""

    def __init__(self) -> None:
        self._bar: Any = None

    def __call__(self, event: Any) -> None:
        from tqdm import tqdm

        if self._bar is None:
            self._bar = tqdm(total=event.total, unit="video", file=sys.stderr, dynamic_ncols=True)
        if event.outcome == "start":
            self._bar.set_postfix_str(event.path.rsplit("/", 1)[-1][-40:], refresh=True)
        else:
            self._bar.update(1)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
