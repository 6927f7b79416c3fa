"""Rows in and out of the index: videos with their stamps, tracks of cues, failures. One transaction per change.

Paths are stored as the file name's bytes (:func:`~vidocr.index.db.fs_text`): any name the file system allows.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from vidocr.files import Stamp
from vidocr.index.db import fs_text, transaction
from vidocr.index.revisions import before_extraction, keep_edits, keep_extraction
from vidocr.types import Cue


@dataclass(frozen=True)
class TrackData:
    """A track to store: where it comes from, what it is, and its cues as (start_ms, end_ms, text)."""

    source: str  # "ocr" or "sidecar"
    kind: str  # "original" or "translation"
    lang: str | None
    cues: Sequence[tuple[int, int, str]]
    path: str | None = None  # sidecar file
    stamp: Stamp | None = None  # sidecar file's stamp
    #: Per cue (same order), the engine's confidence and the box as JSON ``[x, y, w, h]``; empty: unknown.
    details: Sequence[tuple[float | None, str | None]] = ()


@dataclass(frozen=True)
class VideoRow:
    id: int
    path: str
    stamp: Stamp
    hash: str | None
    status: str
    error: str | None


def load_videos(conn: sqlite3.Connection) -> dict[str, VideoRow]:
    rows = conn.execute("SELECT id, path, size, mtime_ns, hash, status, error FROM videos")
    return {r[1]: VideoRow(r[0], r[1], Stamp(r[2], r[3]), r[4], r[5], r[6]) for r in rows}


def find_video(conn: sqlite3.Connection, path: str) -> VideoRow | None:
    """The index's row for the video at ``path``, or None when it is not indexed."""
    r = conn.execute(
        "SELECT id, path, size, mtime_ns, hash, status, error FROM videos WHERE path = CAST(? AS TEXT)",
        (fs_text(path),),
    ).fetchone()
    return None if r is None else VideoRow(r[0], r[1], Stamp(r[2], r[3]), r[4], r[5], r[6])


def ocr_tracks(cues: Iterable[Cue], lang: str | None, translation_lang: str | None) -> list[TrackData]:
    """An extraction's cues as index tracks: the burned-in text, and the engine's translation when there is one.
    A cue without text (a translation alone) has no line of the original track: an empty row matches no search
    and would show as a blank hit."""
    cues = list(cues)
    shown = [c for c in cues if c.text]
    details = [(c.confidence, json.dumps(c.box.as_list()) if c.box else None) for c in shown]
    tracks = [TrackData("ocr", "original", lang, [(c.start_ms, c.end_ms, c.text) for c in shown], details=details)]
    translated = [(c.start_ms, c.end_ms, c.translation) for c in cues if c.translation]
    if translated:
        tracks.append(TrackData("ocr", "translation", translation_lang, translated))
    return tracks


def save_extraction(
    conn: sqlite3.Connection,
    path: str,
    stamp: Stamp,
    content_hash: str | None,
    cues: Iterable[Cue],
    *,
    engine: str | None,
    duration_s: float | None,
    lang: str | None = None,
    translation_lang: str | None = None,
    revision: str | None = None,
) -> list[TrackData]:
    """Store what :func:`vidocr.extract` gave for a video (``index build`` and ``vidocr watch`` alike), replacing
    its earlier OCR tracks in one transaction; returns the tracks stored. ``revision``: a job's engine choice
    (its label): the output is also kept as an OCR revision, and so is the extraction it replaces
    (:func:`vidocr.index.revisions.before_extraction`)."""
    tracks = ocr_tracks(cues, lang, translation_lang)
    save_video(conn, path, stamp, content_hash, tracks, engine=engine, duration_s=duration_s, revision=revision)
    return tracks


def save_failure(
    conn: sqlite3.Connection, path: str, stamp: Stamp, content_hash: str | None, reason: str, *, engine: str | None
) -> None:
    """Record that the video at ``path`` could not be extracted (``index status`` lists it; a build retries it
    when it changes or with ``--retry-failed``); its OCR tracks are dropped."""
    save_video(conn, path, stamp, content_hash, [], engine=engine, error=reason)


def save_video(
    conn: sqlite3.Connection,
    path: str,
    stamp: Stamp,
    content_hash: str | None,
    tracks: Iterable[TrackData],
    *,
    engine: str | None,
    duration_s: float | None = None,
    error: str | None = None,
    revision: str | None = None,
) -> int:
    """Store a video's OCR result (or its failure, when ``error`` is given), replacing earlier OCR tracks.

    Sidecar tracks are kept: they follow their own files (:func:`replace_sidecars`).
    """
    status = "failed" if error is not None else "ok"
    with transaction(conn):
        known = conn.execute("SELECT id FROM videos WHERE path = CAST(? AS TEXT)", (fs_text(path),)).fetchone()
        keep = error is None and known is not None and before_extraction(conn, int(known[0]), revision)
        keep = keep or (error is None and known is None and revision is not None)
        conn.execute(
            "INSERT INTO videos (path, size, mtime_ns, hash, status, error, engine, duration_s, indexed_at)"
            " VALUES (CAST(? AS TEXT), ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (path) DO UPDATE SET size = excluded.size,"
            " mtime_ns = excluded.mtime_ns, hash = excluded.hash, status = excluded.status, error = excluded.error,"
            " engine = excluded.engine, duration_s = excluded.duration_s, indexed_at = excluded.indexed_at",
            (fs_text(path), stamp.size, stamp.mtime_ns, content_hash, status, error, engine, duration_s, time.time()),
        )
        row = conn.execute("SELECT id FROM videos WHERE path = CAST(? AS TEXT)", (fs_text(path),)).fetchone()
        video_id = int(row[0])
        conn.execute("DELETE FROM tracks WHERE video_id = ? AND source = 'ocr'", (video_id,))
        for track in tracks:
            _insert_track(conn, video_id, track)
        if keep:
            keep_extraction(conn, video_id, revision)
        if error is None:
            keep_edits(conn, video_id)  # a user's edit of the cues wins over a new extraction, which is kept too
    return video_id


def replace_sidecars(conn: sqlite3.Connection, video_id: int, remove: Iterable[str], add: Iterable[TrackData]) -> None:
    """Drop the sidecar tracks read from the files ``remove`` and store ``add``, in one transaction."""
    with transaction(conn):
        for path in remove:
            conn.execute(
                "DELETE FROM tracks WHERE video_id = ? AND source = 'sidecar' AND path = CAST(? AS TEXT)",
                (video_id, fs_text(path)),
            )
        for track in add:
            _insert_track(conn, video_id, track)


def _insert_track(conn: sqlite3.Connection, video_id: int, track: TrackData) -> None:
    size, mtime_ns = (track.stamp.size, track.stamp.mtime_ns) if track.stamp else (None, None)
    cur = conn.execute(
        "INSERT INTO tracks (video_id, source, kind, lang, path, size, mtime_ns)"
        " VALUES (?, ?, ?, ?, CAST(? AS TEXT), ?, ?)",
        (video_id, track.source, track.kind, track.lang, fs_text(track.path) if track.path else None, size, mtime_ns),
    )
    details = track.details or [(None, None)] * len(track.cues)
    conn.executemany(
        "INSERT INTO cues (track_id, start_ms, end_ms, text, confidence, box) VALUES (?, ?, ?, ?, ?, ?)",
        [(cur.lastrowid, start, end, text, conf, box)
         for (start, end, text), (conf, box) in zip(track.cues, details, strict=True)],
    )
    # A track's cues get consecutive ids; searches filtered to a few videos scan only their id range.
    conn.execute(
        "UPDATE tracks SET (first_cue, last_cue) = (SELECT min(id), max(id) FROM cues WHERE track_id = ?) WHERE id = ?",
        (cur.lastrowid, cur.lastrowid),
    )


def sidecar_stamps(conn: sqlite3.Connection) -> dict[int, dict[str, Stamp]]:
    """For each video id, its sidecar tracks' files and their stamps when read."""
    out: dict[int, dict[str, Stamp]] = {}
    for video_id, path, size, mtime_ns in conn.execute(
        "SELECT video_id, path, size, mtime_ns FROM tracks WHERE source = 'sidecar'"
    ):
        out.setdefault(video_id, {})[path] = Stamp(size, mtime_ns)
    return out


def update_stamp(conn: sqlite3.Connection, video_id: int, stamp: Stamp, path: str | None = None) -> None:
    """Record a new stamp (and path, for a moved file) for a video whose content did not change."""
    with transaction(conn):
        conn.execute(
            "UPDATE videos SET path = coalesce(CAST(? AS TEXT), path), size = ?, mtime_ns = ? WHERE id = ?",
            (fs_text(path) if path is not None else None, stamp.size, stamp.mtime_ns, video_id),
        )


def delete_videos(conn: sqlite3.Connection, video_ids: Iterable[int]) -> int:
    """Remove videos with their tracks and cues (and so their FTS entries); returns how many."""
    ids = list(video_ids)
    with transaction(conn):
        conn.executemany("DELETE FROM videos WHERE id = ?", [(i,) for i in ids])
    return len(ids)
