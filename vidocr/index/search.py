"""Searching the index (bm25-ranked, highlighted hits) and reporting its state.

Ranking cost in FTS5 grows with the number of matching cues (bm25 is computed for each). A query matching more
than ``rank_window`` cues (a very common word or character) is ranked among its ``rank_window`` most recently
indexed matches only; ``SearchResult.windowed`` says so. Scores keep their global bm25 statistics.
"""

from __future__ import annotations

import os
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vidocr.errors import ConfigError, IndexError_, as_text
from vidocr.index.db import SCHEMA_VERSION, index_error
from vidocr.index.text import highlight_spans, mark, parse_query

#: The most hits one search returns (SQLite integers stop at 2**63 - 1; a screen long before).
MAX_LIMIT = 1_000_000


@dataclass(frozen=True)
class SearchOptions:
    """limit: hits returned. video: glob on the video path (without a slash: on its end, e.g. ``*.mkv``).
    lang: track language (``zh`` also matches ``zh-Hans``; a track of several, ``ko,en``, matches each).
    marks: put around matches in ``Hit.highlighted``.
    rank_window: rank at most this many matches (newest first) by bm25."""

    limit: int = 20
    video: str | None = None
    lang: str | None = None
    marks: tuple[str, str] = ("[", "]")
    rank_window: int = 10_000
    #: Only videos whose file was modified in this range (Unix seconds, either end open).
    modified_after: float | None = None
    modified_before: float | None = None


@dataclass(frozen=True)
class Hit:
    """One matching cue. ``score``: bm25 relevance, higher is better. ``spans``: matched character ranges of
    ``text``. Track: ``source`` "ocr" or "sidecar", ``kind`` "original" or "translation", ``lang``, ``sidecar``
    (the subtitle file of a sidecar track)."""

    video: str
    start_ms: int
    end_ms: int
    text: str
    highlighted: str
    spans: tuple[tuple[int, int], ...]
    score: float
    source: str
    kind: str
    lang: str | None
    sidecar: str | None
    cue_id: int | None = None  # the cue's row in the index (its band image in `vidocr serve`)
    video_id: int | None = None  # the video's row in the index

    def to_dict(self) -> dict[str, Any]:
        return {
            "video": as_text(self.video),
            "start_ms": self.start_ms,
            "end_ms": self.end_ms,
            "text": self.text,
            "highlighted": self.highlighted,
            "spans": [list(s) for s in self.spans],
            "score": round(self.score, 4),
            "track": {"source": self.source, "kind": self.kind, "lang": self.lang,
                      "sidecar": as_text(self.sidecar) if self.sidecar else None},
        }


@dataclass(frozen=True)
class SearchResult:
    query: str
    match: str  # the FTS5 expression run
    hits: list[Hit]
    windowed: bool
    seconds: float


def search(conn: sqlite3.Connection, query: str, options: SearchOptions | None = None) -> SearchResult:
    """Best ``options.limit`` cues for ``query`` (see :func:`vidocr.index.text.parse_query` for the syntax)."""
    options = options or SearchOptions()
    for name, value in (("limit", options.limit), ("rank_window", options.rank_window)):
        if not isinstance(value, int) or not 1 <= value <= MAX_LIMIT:
            raise ConfigError(f"{name} must be a whole number from 1 to {MAX_LIMIT:,}, got {value!r}")
    started = time.perf_counter()
    parsed = parse_query(query)
    try:
        join, where, params = _filters(conn, options)
        base = f"FROM cue_fts f {join} WHERE cue_fts MATCH ? {where}"
        args = [parsed.match, *params]
        row = conn.execute(
            f"SELECT f.rowid {base} ORDER BY f.rowid DESC LIMIT 1 OFFSET ?", (*args, options.rank_window - 1)
        ).fetchone()
        window = f"AND f.rowid >= {int(row[0])}" if row else ""
        ranked = conn.execute(f"SELECT f.rowid, f.rank {base} {window} ORDER BY f.rank LIMIT ?", (*args, options.limit))
        scores = dict(ranked.fetchall())
        hits = _hits(conn, scores, parsed, options) if scores else []
    except sqlite3.OperationalError as err:
        if getattr(err, "sqlite_errorname", "").startswith(("SQLITE_ERROR", "SQLITE_MISMATCH")):
            raise IndexError_(f"search failed: {err}") from None
        raise index_error(err, None) from None
    except sqlite3.Error as err:  # a damaged index, an I/O error
        raise index_error(err, None) from None
    return SearchResult(query, parsed.match, hits, row is not None, time.perf_counter() - started)


def _filters(conn: sqlite3.Connection, options: SearchOptions) -> tuple[str, str, list[Any]]:
    """SQL to join and restrict the FTS rows to the tracks that pass the filters."""
    conds: list[str] = []
    params: list[Any] = []
    if options.video:
        pattern = options.video
        if "/" not in pattern and os.sep not in pattern:
            pattern = "*" + os.sep + pattern
        conds.append("v.path GLOB ?")
        params.append(pattern)
    if options.lang:
        # A track stores one code or a comma-separated list ("ko,en"): any of them matches, exactly or as
        # the language of a subtag ("zh" matches "zh-Hans"). instr, not GLOB: the value is not a pattern.
        langs = "(',' || replace(lower(t.lang), ' ', '') || ',')"
        conds.append(f"(instr({langs}, ',' || ? || ',') OR instr({langs}, ',' || ? || '-')"
                     f" OR instr({langs}, ',' || ? || '_'))")
        wanted = options.lang.strip().lower()
        params += [wanted, wanted, wanted]
    if options.modified_after is not None:
        conds.append("v.mtime_ns >= ?")
        params.append(int(options.modified_after * 1e9))
    if options.modified_before is not None:
        conds.append("v.mtime_ns < ?")
        params.append(int(options.modified_before * 1e9))
    if not conds:
        return "", "", []
    tracks = "FROM tracks t JOIN videos v ON v.id = t.video_id WHERE " + " AND ".join(conds)
    lo, hi = conn.execute(f"SELECT min(first_cue), max(last_cue) {tracks}", params).fetchone()
    if lo is None:
        return "", "AND 0", []  # no track with cues passes the filters
    where = f"AND f.rowid BETWEEN {int(lo)} AND {int(hi)} AND c.track_id IN (SELECT t.id {tracks})"
    return "JOIN cues c ON c.id = f.rowid", where, params


def _hits(conn: sqlite3.Connection, scores: dict[int, float], parsed: Any, options: SearchOptions) -> list[Hit]:
    qmarks = ",".join("?" * len(scores))
    rows = conn.execute(
        "SELECT c.id, v.path, c.start_ms, c.end_ms, c.text, t.source, t.kind, t.lang, t.path, v.id"
        " FROM cues c JOIN tracks t ON t.id = c.track_id JOIN videos v ON v.id = t.video_id"
        f" WHERE c.id IN ({qmarks})",
        list(scores),
    ).fetchall()
    hits = []
    for cue_id, video, start, end, text, source, kind, lang, sidecar, video_id in rows:
        spans = tuple(highlight_spans(text, parsed))
        shown = mark(text, spans, options.marks)
        hits.append(Hit(video, start, end, text, shown, spans, -scores[cue_id], source, kind, lang, sidecar, cue_id,
                        video_id))
    hits.sort(key=lambda h: (-h.score, h.video, h.start_ms))
    return hits


@dataclass(frozen=True)
class IndexStatus:
    path: str
    schema_version: int
    videos: int
    failed: int
    cues: int
    sidecar_tracks: int
    size_bytes: int
    failures: list[tuple[str, str]]

    def to_dict(self) -> dict[str, Any]:
        out = dict(self.__dict__)
        out["failures"] = [{"path": as_text(p), "error": e} for p, e in self.failures]
        return out


def index_status(conn: sqlite3.Connection, db: str | os.PathLike[str]) -> IndexStatus:
    """Counts, size on disk (with the WAL) and the failed videos with their reasons."""

    def one(sql: str) -> int:
        return int(conn.execute(sql).fetchone()[0])

    size = sum(p.stat().st_size for p in (Path(db), Path(f"{os.fspath(db)}-wal")) if p.exists())
    try:
        failures = conn.execute("SELECT path, error FROM videos WHERE status = 'failed' ORDER BY path").fetchall()
        return IndexStatus(
            os.fspath(db),
            SCHEMA_VERSION,
            one("SELECT count(*) FROM videos"),
            len(failures),
            one("SELECT count(*) FROM cues"),
            one("SELECT count(*) FROM tracks WHERE source = 'sidecar'"),
            size,
            [(p, e or "") for p, e in failures],
        )
    except sqlite3.Error as err:  # a damaged index, an I/O error
        raise index_error(err, db) from None
