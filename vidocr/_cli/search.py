"""``vidocr search``: full-text search of the indexed subtitles, each hit with the mpv line that plays it."""

from __future__ import annotations

import argparse
import json
import os
import shlex
import sys
from typing import Any

from vidocr._cli.config import leaf_parser
from vidocr._cli.errors import describe, exit_codes_epilog
from vidocr._cli.options import DB_DEFAULT_HELP, db_path
from vidocr.errors import VidocrError, display_path

NAME = "search"
#: The query operators (in capitals); in lower case they are words, and a query that finds nothing says so.
_OPERATORS = {"OR", "NOT", "NEAR", "AND"}
#: Put before a search's ``-word`` while argparse reads the command line (no argument can hold a NUL).
_SHIELD = "\x00"


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    raw = argparse.RawDescriptionHelpFormatter
    db_help = f"index file (SQLite; default: {DB_DEFAULT_HELP})"
    search: argparse.ArgumentParser = subparsers.add_parser(
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
    return search


def parse(parser: argparse.ArgumentParser, argv: list[str]) -> argparse.Namespace:
    """``parse_args``, except that ``search`` takes ``-word`` (exclude a word) anywhere after its first word,
    where argparse would take it for an unknown option (and every word after it for stray arguments)."""
    command = next((a for a in argv if not a.startswith("-")), None)
    if command != "search":
        return parser.parse_args(argv)
    options = leaf_parser(parser, argv)[0]._option_string_actions
    words = list(argv)
    pos = argv.index(command) + 1
    while pos < len(words) and words[pos] != "--":
        word = words[pos]
        action = options.get(word)
        if action is not None:
            pos += 1 if action.nargs == 0 else 2  # an option's value is not a query word
            continue
        if len(word) > 1 and word.startswith("-") and not word.startswith("--"):
            words[pos] = _SHIELD + word
        pos += 1
    args = parser.parse_args(words)
    args.query = [word.removeprefix(_SHIELD) for word in args.query]
    return args


def run(args: argparse.Namespace) -> int:
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
        print(f"error: {describe(err)}", file=sys.stderr)
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
        langs = sorted({code.strip() for row in conn.execute("SELECT DISTINCT lang FROM tracks WHERE lang IS NOT NULL")
                        for code in row[0].split(",") if code.strip()})  # a track may store a list: "ko,en"
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
