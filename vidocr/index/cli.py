"""``vidocr index build|status`` and ``vidocr search``: argparse parsers and handlers for the main CLI.

The main CLI calls :func:`add_index_parsers` with its subparsers; each parser sets ``handler`` to the function that
runs it and returns the exit code. Errors print one line; nothing here raises past the handler except
:class:`KeyboardInterrupt` (which the main CLI turns into exit code 130).
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import sys
from collections.abc import Sequence
from typing import Any

from vidocr.errors import VidocrError


def add_index_parsers(subparsers: Any) -> None:
    """Add ``index`` (with ``build`` and ``status``) and ``search`` to an argparse subparsers object."""
    index = subparsers.add_parser("index", help="build and inspect the subtitle search index")
    index_sub = index.add_subparsers(dest="index_command", metavar="ACTION", required=True)

    build = index_sub.add_parser("build", help="extract subtitles of new and changed videos into the index")
    build.add_argument("paths", nargs="+", metavar="LIBRARY", help="video files, folders (recursive) or globs")
    build.add_argument("--db", required=True, help="index file (SQLite; created if missing)")
    build.add_argument("--engine", default="rapidocr", help="OCR engine (default: rapidocr)")
    build.add_argument("--workers", type=int, help="OCR processes / concurrent requests (default: CPU cores)")
    build.add_argument("--batch-size", type=int, help="band crops per OCR call (default: the engine's)")
    build.add_argument("--translate", metavar="LANG", help="also store a translation to LANG (engines that can)")
    build.add_argument("--model", help="model directory (hunyuan-* engines) or model name (openai)")
    build.add_argument("--server", action="append", help="OpenAI-compatible base URL (repeatable; openai engine)")
    build.add_argument("--engine-opt", action="append", metavar="KEY=VALUE", help="engine-specific setting")
    build.add_argument("--lang", help="language of the burned-in subtitles, stored for --lang searches")
    build.add_argument("--prune", action="store_true", help="remove videos that no longer exist in these libraries")
    build.add_argument("--sidecars", action="store_true", help="also import .srt/.vtt/.ass files next to videos")
    build.add_argument("--retry-failed", action="store_true", help="retry videos that failed before, even unchanged")
    build.add_argument("--force", action="store_true", help="extract every video again")
    build.add_argument("--wait", type=float, default=0.0, metavar="SECONDS", help="wait for another build to end")
    build.add_argument("--json", action="store_true", help="print the summary as JSON")
    build.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
    build.set_defaults(handler=run_index, roi=None, task="subtitle")

    status = index_sub.add_parser("status", help="counts, size and the videos that failed (with reasons)")
    status.add_argument("--db", required=True, help="index file")
    status.add_argument("--json", action="store_true", help="print JSON")
    status.set_defaults(handler=run_index)

    search = subparsers.add_parser("search", help="full-text search of the indexed subtitles")
    search.add_argument("query", nargs="+", help='words (all must match), "a phrase", prefix*, CJK text')
    search.add_argument("--db", required=True, help="index file")
    search.add_argument("--limit", type=int, default=20, help="hits to show (default: 20)")
    search.add_argument("--video", metavar="GLOB", help="only videos whose path matches (e.g. '*/Season 1/*')")
    search.add_argument("--lang", help="only tracks in this language (zh matches zh-Hans)")
    search.add_argument("--json", action="store_true", help="print JSON for scripts")
    search.set_defaults(handler=run_search)


def run_index(args: argparse.Namespace) -> int:
    try:
        return _build(args) if args.index_command == "build" else _status(args)
    except VidocrError as err:
        print(f"error: {err}", file=sys.stderr)
        return err.exit_code


def run_search(args: argparse.Namespace) -> int:
    from vidocr.index.db import open_index
    from vidocr.index.search import SearchOptions, search

    tty = sys.stdout.isatty() and not args.json
    marks = ("\x1b[1;33m", "\x1b[0m") if tty else ("[", "]")
    try:
        conn = open_index(args.db, readonly=True)
        try:
            result = search(conn, " ".join(args.query), SearchOptions(args.limit, args.video, args.lang, marks))
        finally:
            conn.close()
    except VidocrError as err:
        print(f"error: {err}", file=sys.stderr)
        return err.exit_code
    if args.json:
        hits = [dict(h.to_dict(), start=clock(h.start_ms), play=play_command(h.video, h.start_ms)) for h in result.hits]
        json.dump({"query": result.query, "windowed": result.windowed, "hits": hits}, sys.stdout, ensure_ascii=False)
        print()
        return 0
    for hit in result.hits:
        track = "" if hit.source == "ocr" and hit.kind == "original" else f"({_track_label(hit)})  "
        print(f"{hit.video}  {clock(hit.start_ms)}  {track}{snippet(hit.highlighted)}")
        print(f"    {play_command(hit.video, hit.start_ms)}")
    if not result.hits:
        print(f"no matches for {result.query!r}", file=sys.stderr)
    elif result.windowed:
        print("(a very common query: ranked among its most recent matches only)", file=sys.stderr)
    return 0


def clock(ms: int) -> str:
    """``HH:MM:SS.mmm``, the form mpv's ``--start`` takes."""
    hours, rest = divmod(max(ms, 0), 3_600_000)
    minutes, rest = divmod(rest, 60_000)
    return f"{hours:02d}:{minutes:02d}:{rest // 1000:02d}.{rest % 1000:03d}"


def play_command(video: str, ms: int) -> str:
    return f"mpv --start={clock(ms)} {shlex.quote(video)}"


def snippet(text: str, width: int = 160) -> str:
    """One line: cue lines joined with " / ", cut at ``width`` characters."""
    line = " / ".join(part.strip() for part in text.split("\n") if part.strip())
    return line if len(line) <= width else line[: width - 1] + "…"


def _track_label(hit: Any) -> str:
    label = hit.kind if hit.source == "ocr" else f"sidecar {os.path.basename(hit.sidecar or '')}"
    return f"{label}, {hit.lang}" if hit.lang else label


def _build(args: argparse.Namespace) -> int:
    from vidocr.index.build import BuildOptions, PipelineExtractor, build_index

    extractor = PipelineExtractor(_extract_options(args))
    bar = _ProgressBar() if not args.quiet and not args.json and sys.stderr.isatty() else None
    options = BuildOptions(
        extract=extractor,
        engine=args.engine,
        lang=args.lang,
        translation_lang=args.translate,
        prune=args.prune,
        sidecars=args.sidecars,
        retry_failed=args.retry_failed,
        force=args.force,
        lock_timeout_s=args.wait,
        progress=bar,
    )
    try:
        report = build_index(args.db, args.paths, options)
    finally:
        extractor.close()
        if bar is not None:
            bar.close()
    if args.json:
        print(json.dumps(report.to_dict(), ensure_ascii=False))
        return 0
    print(report.summary())
    for path, reason in report.failures:
        print(f"  failed: {path}: {reason}")
    return 0


def _extract_options(args: argparse.Namespace) -> Any:
    from vidocr.cli import extract_options_from_args
    from vidocr.pipeline import check_task

    options = extract_options_from_args(args)
    check_task(options.engine, options.task, options.translate_to)
    return options


def _status(args: argparse.Namespace) -> int:
    from vidocr.index.db import open_index
    from vidocr.index.search import index_status

    conn = open_index(args.db, readonly=True)
    try:
        status = index_status(conn, args.db)
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
        print(f"  failed: {path}: {reason}")
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


def main(argv: Sequence[str] | None = None) -> int:
    """Stand-alone entry (``python -m vidocr.index.cli``) with just these commands."""
    parser = argparse.ArgumentParser(prog="vidocr")
    add_index_parsers(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(argv)
    try:
        return int(args.handler(args))
    except KeyboardInterrupt:
        print("interrupted (videos finished so far are kept)", file=sys.stderr)
        return 130


if __name__ == "__main__":
    raise SystemExit(main())
