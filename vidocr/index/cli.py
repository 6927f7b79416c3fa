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

from vidocr.config import default_db_path
from vidocr.errors import VidocrError, display_path, one_line

DB_DEFAULT_HELP = "$VIDOCR_DB, else $XDG_DATA_HOME/vidocr/library.sqlite (~/.local/share/vidocr/library.sqlite)"
#: The query operators (in capitals); in lower case they are words, and a query that finds nothing says so.
_OPERATORS = {"OR", "NOT", "NEAR", "AND"}


def db_path(args: argparse.Namespace) -> str:
    """``--db``, else the default index location shared by index, search, watch and jobs."""
    return str(args.db) if getattr(args, "db", None) else str(default_db_path())


def add_index_parsers(subparsers: Any) -> None:
    """Add ``index`` (with ``build`` and ``status``) and ``search`` to an argparse subparsers object."""
    from vidocr.cli import add_extract_options, exit_codes_epilog

    raw = argparse.RawDescriptionHelpFormatter
    db_help = f"index file (SQLite; default: {DB_DEFAULT_HELP})"
    index = subparsers.add_parser("index", help="build and inspect the subtitle search index",
                                  epilog=exit_codes_epilog(), formatter_class=raw)
    index_sub = index.add_subparsers(dest="index_command", metavar="ACTION", required=True)

    build = index_sub.add_parser("build", help="extract subtitles of new and changed videos into the index",
                                 epilog=exit_codes_epilog(), formatter_class=raw)
    build.add_argument("paths", nargs="+", metavar="LIBRARY", help="video files, folders (recursive) or globs")
    build.add_argument("--config", help="YAML file with option defaults (top-level keys and an `index:` section)")
    build.add_argument("--db", help=db_help + "; created if missing")
    build.add_argument("--lang", help="language of the burned-in subtitles, stored for --lang searches")
    build.add_argument("--prune", action="store_true", help="remove videos that no longer exist in these libraries")
    build.add_argument("--sidecars", action="store_true", help="also import .srt/.vtt/.ass files next to videos")
    build.add_argument("--retry-failed", action="store_true", help="retry videos that failed before, even unchanged")
    build.add_argument("--force", action="store_true", help="extract every video again")
    build.add_argument("--wait", type=float, default=0.0, metavar="SECONDS", help="wait for another build to end")
    build.add_argument("--json", action="store_true", help="print the summary as JSON")
    build.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
    build.add_argument("-v", "--verbose", action="store_true", help="log details")
    add_extract_options(build, outputs=False)
    build.set_defaults(handler=run_index)

    status = index_sub.add_parser("status", help="counts, size and the videos that failed (with reasons)",
                                  epilog=exit_codes_epilog(), formatter_class=raw)
    status.add_argument("--config", help="YAML file whose `db:` (top level or `index:` section) names the index")
    status.add_argument("--db", help=db_help)
    status.add_argument("--json", action="store_true", help="print JSON")
    status.set_defaults(handler=run_index)

    search = subparsers.add_parser(
        "search", help="full-text search of the indexed subtitles",
        description="Search the indexed subtitles. Every word must match (AND); a OR b; -word or NOT word excludes;\n"
                    "a NEAR b (NEAR/N: at most N words or CJK characters apart, default 10); \"a phrase\"; prefix*.\n"
                    "Operators are in capitals (or, not and near in lower case are words). CJK text matches as a\n"
                    "substring, and traditional and simplified Chinese find each other (善後 finds 善后).",
        epilog="examples:\n  vidocr search 你听我说\n  vidocr search '\"see you\"' --video '*/Season 1/*'\n"
               "  vidocr search cat OR dog -fox\n  vidocr search 'cat NEAR/5 hat'\n"
               "  vidocr search -fox cat        -word excludes, also as the first word\n\n"
               + exit_codes_epilog(), formatter_class=raw,
    )
    search.add_argument("query", nargs="+", help="words (all must match), OR, -word, NOT, NEAR, \"a phrase\", prefix*, "
                                                 "CJK text")
    search.add_argument("--config", help="YAML file with option defaults (top-level keys and a `search:` section)")
    search.add_argument("--db", help=db_help)
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
        conn = open_index(db_path(args), readonly=True)
        try:
            result = search(conn, " ".join(args.query), SearchOptions(args.limit, args.video, args.lang, marks))
            hint = _no_match_hint(conn, args) if not result.hits else None
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
        print(f"{display_path(hit.video)}  {clock(hit.start_ms)}  {track}{snippet(hit.highlighted)}")
        print(f"    {play_command(hit.video, hit.start_ms)}")
    if not result.hits:
        print(f"no matches for {result.query!r}" + (f" ({hint})" if hint else ""), file=sys.stderr)
    elif result.windowed:
        print("(a very common query: ranked among its most recent matches only)", file=sys.stderr)
    return 0


def _no_match_hint(conn: Any, args: argparse.Namespace) -> str | None:
    """Why a query may have found nothing: a --lang no track has, or operator words written in lower case."""
    if args.lang:
        langs = sorted({row[0] for row in conn.execute("SELECT DISTINCT lang FROM tracks WHERE lang IS NOT NULL")})
        if not langs:
            return ("no track has a language: give it with `vidocr index build --lang LANG`, or name sidecars "
                    "film.LANG.srt; or search without --lang")
        return f"languages in the index: {', '.join(langs)}"
    words = " ".join(args.query).split()
    lower = [w for w in words if w.upper() in _OPERATORS and w != w.upper()]
    if lower:
        return (f"{', '.join(lower)} in lower case {'is a word' if len(lower) == 1 else 'are words'} that must "
                "match; OR, NOT, NEAR and AND in capitals are operators")
    return None


def clock(ms: int) -> str:
    """``HH:MM:SS.mmm``, the form mpv's ``--start`` takes."""
    hours, rest = divmod(max(ms, 0), 3_600_000)
    minutes, rest = divmod(rest, 60_000)
    return f"{hours:02d}:{minutes:02d}:{rest // 1000:02d}.{rest % 1000:03d}"


def play_command(video: str, ms: int) -> str:
    """The mpv line; a name with control characters or bytes that are not UTF-8 in bash's ``$'...'`` quoting."""
    if video.isprintable():
        return f"mpv --start={clock(ms)} {shlex.quote(video)}"
    quoted = "".join(f"\\x{b:02x}" if b < 0x20 or b >= 0x7F or b in b"'\\" else chr(b) for b in os.fsencode(video))
    return f"mpv --start={clock(ms)} $'{quoted}'"


def snippet(text: str, width: int = 160) -> str:
    """One line: cue lines joined with " / ", cut at ``width`` characters."""
    line = " / ".join(part.strip() for part in text.split("\n") if part.strip())
    return line if len(line) <= width else line[: width - 1] + "…"


def _track_label(hit: Any) -> str:
    label = hit.kind if hit.source == "ocr" else f"sidecar {os.path.basename(hit.sidecar or '')}"
    return f"{label}, {hit.lang}" if hit.lang else label


def _build(args: argparse.Namespace) -> int:
    from vidocr.cli import extract_options_from_args
    from vidocr.extractor import Extractor
    from vidocr.index.build import BuildOptions, build_index

    extractor = Extractor(extract_options_from_args(args))
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
