"""Revisions of a video's cues: the OCR output is kept, a user's edit (from ``vidocr serve``'s proofreading view)
is stored on top of it and wins, and a later extraction never replaces an edit without asking.

The video's OCR original-text track always holds the cues that are shown and searched: the latest edit when there
is one, else the latest extraction. Every version is also a row of ``revisions`` (JSON cues): ``ocr`` rows are
what extractions gave (the first is stored when the first edit is saved), ``edit`` rows are the user's. A
re-extraction of an edited video stores its output as a new ``ocr`` revision and puts the edit back in the track;
:attr:`RevisionState.ocr_is_newer` tells the page to offer the new OCR output, which the user takes by saving it
as an edit.

An ``ocr`` revision's ``author`` names the extraction: the engine (``rapidocr``), or a job's engine choice
(``openai hunyuanocr-1.5 server=...``, :meth:`vidocr.daemon.choice.EngineChoice.label`). A job that names an
engine stores its output as an ``ocr`` revision, and the extraction it replaces is stored first, so two engines'
outputs of one video are both kept for the A/B view; once a video has revisions, every later extraction is kept
as one too (one with the same cues as the latest is not stored twice).
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from vidocr.index.db import transaction


@dataclass(frozen=True)
class CueRow:
    """One cue as stored: times in ms, text, the engine's confidence and box ``[x, y, w, h]`` (None: unknown)."""

    start_ms: int
    end_ms: int
    text: str
    confidence: float | None = None
    box: tuple[int, int, int, int] | None = None
    id: int | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "start_ms": self.start_ms, "end_ms": self.end_ms, "text": self.text,
                "confidence": self.confidence, "box": list(self.box) if self.box else None}


@dataclass(frozen=True)
class RevisionState:
    """A video's revisions: ids of the latest OCR and edit revisions (None: none stored) and how many."""

    latest_ocr: int | None
    latest_edit: int | None
    count: int

    @property
    def edited(self) -> bool:
        return self.latest_edit is not None

    @property
    def ocr_is_newer(self) -> bool:
        """An extraction came after the user's last edit: its output waits, unused, for the user to look at."""
        return self.latest_edit is not None and self.latest_ocr is not None and self.latest_ocr > self.latest_edit


def _box(raw: Any) -> tuple[int, int, int, int] | None:
    if raw is None:
        return None
    value = json.loads(raw) if isinstance(raw, str) else raw
    if not isinstance(value, list) or len(value) != 4:
        return None
    x, y, w, h = (int(v) for v in value)
    return (x, y, w, h)


def _original_track(conn: sqlite3.Connection, video_id: int) -> int | None:
    row = conn.execute(
        "SELECT id FROM tracks WHERE video_id = ? AND source = 'ocr' AND kind = 'original' ORDER BY id LIMIT 1",
        (video_id,),
    ).fetchone()
    return None if row is None else int(row[0])


def current_cues(conn: sqlite3.Connection, video_id: int) -> list[CueRow]:
    """The cues shown for the video (its OCR original-text track: the latest edit, else the latest extraction)."""
    track = _original_track(conn, video_id)
    if track is None:
        return []
    rows = conn.execute(
        "SELECT id, start_ms, end_ms, text, confidence, box FROM cues WHERE track_id = ? ORDER BY start_ms, id",
        (track,),
    )
    return [CueRow(r[1], r[2], r[3], r[4], _box(r[5]), r[0]) for r in rows]


def state(conn: sqlite3.Connection, video_id: int) -> RevisionState:
    row = conn.execute(
        "SELECT max(CASE WHEN kind = 'ocr' THEN id END), max(CASE WHEN kind = 'edit' THEN id END), count(*)"
        " FROM revisions WHERE video_id = ?",
        (video_id,),
    ).fetchone()
    return RevisionState(row[0], row[1], int(row[2]))


def revision_cues(conn: sqlite3.Connection, video_id: int, revision_id: int) -> list[CueRow] | None:
    row = conn.execute("SELECT cues FROM revisions WHERE id = ? AND video_id = ?", (revision_id, video_id)).fetchone()
    return None if row is None else _decode(row[0])


def list_revisions(conn: sqlite3.Connection, video_id: int) -> list[dict[str, Any]]:
    rows = conn.execute(
        "SELECT id, kind, created_at, author, json_array_length(cues) FROM revisions WHERE video_id = ? ORDER BY id",
        (video_id,),
    )
    return [{"id": r[0], "kind": r[1], "created_at": r[2], "author": r[3], "cues": r[4],
             "engine": r[3] if r[1] == "ocr" else None} for r in rows]


def _encode(cues: Sequence[CueRow]) -> str:
    return json.dumps([[c.start_ms, c.end_ms, c.text, c.confidence, list(c.box) if c.box else None] for c in cues],
                      ensure_ascii=False)


def _decode(raw: str) -> list[CueRow]:
    return [CueRow(int(s), int(e), str(t), None if c is None else float(c), _box(b)) for s, e, t, c, b in
            json.loads(raw)]


def _add_revision(
    conn: sqlite3.Connection, video_id: int, kind: str, cues: Sequence[CueRow], author: str | None
) -> int:
    cur = conn.execute(
        "INSERT INTO revisions (video_id, kind, cues, created_at, author) VALUES (?, ?, ?, ?, ?)",
        (video_id, kind, _encode(cues), time.time(), author),
    )
    return int(cur.lastrowid or 0)


def _replace_track_cues(conn: sqlite3.Connection, video_id: int, cues: Sequence[CueRow]) -> None:
    track = _original_track(conn, video_id)
    if track is None:
        cur = conn.execute("INSERT INTO tracks (video_id, source, kind) VALUES (?, 'ocr', 'original')", (video_id,))
        track = int(cur.lastrowid or 0)
    conn.execute("DELETE FROM cues WHERE track_id = ?", (track,))
    conn.executemany(
        "INSERT INTO cues (track_id, start_ms, end_ms, text, confidence, box) VALUES (?, ?, ?, ?, ?, ?)",
        [(track, c.start_ms, c.end_ms, c.text, c.confidence, json.dumps(list(c.box)) if c.box else None)
         for c in cues],
    )
    conn.execute(
        "UPDATE tracks SET (first_cue, last_cue) = (SELECT min(id), max(id) FROM cues WHERE track_id = ?) WHERE id = ?",
        (track, track),
    )


def check_cues(cues: Sequence[CueRow]) -> None:
    """An edit's cues must be well formed: ``ValueError`` with one line saying which cue is not."""
    for n, cue in enumerate(cues, 1):
        if cue.start_ms < 0 or cue.end_ms <= cue.start_ms:
            raise ValueError(f"cue {n}: its end ({cue.end_ms} ms) must come after its start ({cue.start_ms} ms) >= 0")
        if not cue.text.strip():
            raise ValueError(f"cue {n}: empty text (delete the cue instead)")
        if "\x00" in cue.text:
            raise ValueError(f"cue {n}: its text holds a NUL character")


def save_edit(conn: sqlite3.Connection, video_id: int, cues: Sequence[CueRow], author: str | None = None) -> int:
    """Store ``cues`` as the user's new revision of the video and make them the shown and searched cues, in one
    transaction; the OCR output shown until now is stored first (once) so it is never lost. Returns its id."""
    check_cues(cues)
    ordered = sorted(cues, key=lambda c: (c.start_ms, c.end_ms))
    with transaction(conn):
        if state(conn, video_id).latest_ocr is None:
            _add_revision(conn, video_id, "ocr", current_cues(conn, video_id), _engine(conn, video_id))
        revision = _add_revision(conn, video_id, "edit", ordered, author)
        _replace_track_cues(conn, video_id, ordered)
    return revision


def _engine(conn: sqlite3.Connection, video_id: int) -> str | None:
    row = conn.execute("SELECT engine FROM videos WHERE id = ?", (video_id,)).fetchone()
    return None if row is None else row[0]


def before_extraction(conn: sqlite3.Connection, video_id: int, label: str | None) -> bool:
    """Called inside the transaction that stores a new extraction of the video, before its OCR tracks are
    replaced. With ``label`` (a job that named its engine) the extraction shown until now is stored as an ``ocr``
    revision unless one exists. Returns whether the new extraction is to be kept as a revision
    (:func:`keep_extraction`): with a label, or when the video already has revisions."""
    st = state(conn, video_id)
    if label is not None and st.latest_ocr is None:
        shown = current_cues(conn, video_id)
        if shown:
            _add_revision(conn, video_id, "ocr", shown, _engine(conn, video_id))
    return label is not None or st.count > 0


def keep_extraction(conn: sqlite3.Connection, video_id: int, label: str | None) -> None:
    """Store the extraction just written to the video's track as an ``ocr`` revision named ``label`` (default:
    the engine), unless the latest one has the same cues (and, with a label, the same name)."""
    fresh = current_cues(conn, video_id)
    st = state(conn, video_id)
    if st.latest_ocr is not None:
        row = conn.execute("SELECT author, cues FROM revisions WHERE id = ?", (st.latest_ocr,)).fetchone()
        same = [(c.start_ms, c.end_ms, c.text) for c in _decode(row[1])] == [
            (c.start_ms, c.end_ms, c.text) for c in fresh]
        if same and (label is None or row[0] == label):
            return
    _add_revision(conn, video_id, "ocr", fresh, label or _engine(conn, video_id))


def keep_edits(conn: sqlite3.Connection, video_id: int) -> None:
    """Called inside the transaction that stored a new extraction of the video: when the user has edited its cues,
    the extraction becomes a new ``ocr`` revision (when it differs from the last one) and the edit is put back."""
    st = state(conn, video_id)
    if st.latest_edit is None:
        return
    fresh = current_cues(conn, video_id)
    last_ocr = revision_cues(conn, video_id, st.latest_ocr) if st.latest_ocr is not None else None
    same = last_ocr is not None and [(c.start_ms, c.end_ms, c.text) for c in last_ocr] == [
        (c.start_ms, c.end_ms, c.text) for c in fresh
    ]
    if not same:
        _add_revision(conn, video_id, "ocr", fresh, None)
    edit = revision_cues(conn, video_id, st.latest_edit) or []
    _replace_track_cues(conn, video_id, edit)


def align(a: Sequence[CueRow], b: Sequence[CueRow]) -> list[tuple[CueRow | None, CueRow | None]]:
    """Pairs of cues of two versions that overlap in time (in time order); a cue that overlaps none of the other
    version's stands alone. Used to show two extractions side by side."""
    a, b = sorted(a, key=lambda c: c.start_ms), sorted(b, key=lambda c: c.start_ms)
    pairs: list[tuple[CueRow | None, CueRow | None]] = []
    i = j = 0
    while i < len(a) or j < len(b):
        if i < len(a) and j < len(b):
            x, y = a[i], b[j]
            if min(x.end_ms, y.end_ms) > max(x.start_ms, y.start_ms):
                pairs.append((x, y))
                i, j = i + 1, j + 1
            elif x.start_ms <= y.start_ms:
                pairs.append((x, None))
                i += 1
            else:
                pairs.append((None, y))
                j += 1
        elif i < len(a):
            pairs.append((a[i], None))
            i += 1
        else:
            pairs.append((None, b[j]))
            j += 1
    return pairs
