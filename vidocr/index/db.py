"""The index database: opening and checking the file, schema migrations, transactions and the builders' lock.

One SQLite file in WAL mode, so searches read a consistent snapshot while a build writes. Its schema version is
``PRAGMA user_version`` and ``PRAGMA application_id`` marks the file as a vidocr index. A file that is not SQLite,
another program's database, or an index from a newer vidocr is refused before anything is written to it.

Builders also take an exclusive lock on ``<db>.lock`` (``flock``; released by the OS if the process dies) for the
whole build, so two builders never decide the same video is new and do its OCR twice: the second waits up to
its timeout, then fails with a clear message.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import sys
import time
from collections.abc import Iterator
from pathlib import Path

from vidocr.errors import IndexError_
from vidocr.index.text import fts_body, t2s_table

SCHEMA_VERSION = 3
#: The oldest schema a read-only connection (search, status) reads as it is: v3 only added what `vidocr serve` uses.
READABLE_SCHEMA = 2
APPLICATION_ID = 0x5669644F  # "ViDO"
_MAGIC = b"SQLite format 3\x00"

# MIGRATIONS[n] takes a version-n database to version n + 1, inside one transaction.
MIGRATIONS: list[str] = [
    """
    CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
    CREATE TABLE videos (
        id INTEGER PRIMARY KEY,
        path TEXT NOT NULL UNIQUE,
        size INTEGER NOT NULL,
        mtime_ns INTEGER NOT NULL,
        hash TEXT,                       -- quick content hash (size, first and last MiB)
        status TEXT NOT NULL CHECK (status IN ('ok', 'failed')),
        error TEXT,                      -- why it failed
        engine TEXT,
        duration_s REAL,
        indexed_at REAL NOT NULL         -- Unix time of the last attempt
    );
    CREATE TABLE tracks (
        id INTEGER PRIMARY KEY,
        video_id INTEGER NOT NULL REFERENCES videos(id) ON DELETE CASCADE,
        source TEXT NOT NULL CHECK (source IN ('ocr', 'sidecar')),
        kind TEXT NOT NULL CHECK (kind IN ('original', 'translation')),
        lang TEXT,
        path TEXT,                       -- the subtitle file of a sidecar track
        size INTEGER,
        mtime_ns INTEGER,
        first_cue INTEGER,               -- lowest and highest id of the track's cues
        last_cue INTEGER
    );
    CREATE INDEX tracks_video ON tracks(video_id);
    CREATE TABLE cues (
        id INTEGER PRIMARY KEY,
        track_id INTEGER NOT NULL REFERENCES tracks(id) ON DELETE CASCADE,
        start_ms INTEGER NOT NULL,
        end_ms INTEGER NOT NULL,
        text TEXT NOT NULL
    );
    CREATE INDEX cues_track ON cues(track_id);
    -- The FTS index reads cue text through this view (see vidocr.index.text for the tokens).
    CREATE VIEW cue_bodies AS SELECT id, vidocr_fts_body(text) AS body FROM cues;
    CREATE VIRTUAL TABLE cue_fts USING fts5(
        body, content='cue_bodies', content_rowid='id',
        tokenize='unicode61 remove_diacritics 2', prefix='1'
    );
    CREATE TRIGGER cues_ai AFTER INSERT ON cues BEGIN
        INSERT INTO cue_fts(rowid, body) VALUES (new.id, vidocr_fts_body(new.text));
    END;
    CREATE TRIGGER cues_ad AFTER DELETE ON cues BEGIN
        INSERT INTO cue_fts(cue_fts, rowid, body) VALUES ('delete', old.id, vidocr_fts_body(old.text));
    END;
    CREATE TRIGGER cues_au AFTER UPDATE OF text ON cues BEGIN
        INSERT INTO cue_fts(cue_fts, rowid, body) VALUES ('delete', old.id, vidocr_fts_body(old.text));
        INSERT INTO cue_fts(rowid, body) VALUES (new.id, vidocr_fts_body(new.text));
    END;
    """,
    # v2: traditional Chinese characters are folded to simplified ones (vidocr.index.text.fold_chinese), so the
    # search table is rebuilt from the cues through the new vidocr_fts_body.
    """
    INSERT INTO cue_fts(cue_fts) VALUES ('rebuild');
    """,
    # v3 (`vidocr serve`): each OCR cue's confidence and box (proofreading shows low-confidence cues first and the
    # band image around the box); revisions of a video's cues (the OCR output kept, the user's edits on top: see
    # vidocr.index.revisions); the server's API keys, stored as SHA-256 hashes only.
    """
    ALTER TABLE cues ADD COLUMN confidence REAL;
    ALTER TABLE cues ADD COLUMN box TEXT;  -- JSON [x, y, w, h] in frame pixels
    CREATE TABLE revisions (
        id INTEGER PRIMARY KEY,
        video_id INTEGER NOT NULL REFERENCES videos(id) ON DELETE CASCADE,
        kind TEXT NOT NULL CHECK (kind IN ('ocr', 'edit')),
        cues TEXT NOT NULL,              -- JSON [[start_ms, end_ms, text, confidence, box], ...]
        created_at REAL NOT NULL,
        author TEXT                      -- the API key's name for an edit
    );
    CREATE INDEX revisions_video ON revisions(video_id, id);
    CREATE TABLE api_keys (
        id INTEGER PRIMARY KEY,
        name TEXT NOT NULL,
        prefix TEXT NOT NULL,            -- the key's first characters, to tell keys apart in lists
        hash TEXT NOT NULL UNIQUE,       -- sha256 hex of the whole key (the key itself is never stored)
        scope TEXT NOT NULL CHECK (scope IN ('read', 'full')),
        created_at REAL NOT NULL,
        revoked_at REAL
    );
    """,
]
assert len(MIGRATIONS) == SCHEMA_VERSION
#: What cue_fts holds (meta 'fts_scheme'), for a reader of the file.
FTS_SCHEME = "unicode61+cjk-bigrams+t2s-chars"


def open_index(
    path: str | os.PathLike[str], *, readonly: bool = False, create: bool = True, busy_timeout_s: float = 30.0
) -> sqlite3.Connection:
    """Open (and create or upgrade, unless ``readonly``) the index at ``path``.

    Raises :class:`IndexError_` for a missing index (``readonly`` or not ``create``), a file that is not
    SQLite or not an index, or an index written by a newer vidocr; the file is left as it was.
    """
    db = Path(path)
    if sqlite3.sqlite_version_info < (3, 27, 0):
        raise IndexError_(f"SQLite {sqlite3.sqlite_version} is too old for the index (3.27 or later needed)")
    try:
        is_dir, exists = db.is_dir(), db.exists()
    except OSError as err:  # a folder on the way that this user may not enter
        raise IndexError_(f"cannot reach the index: {err.strerror or err}", str(db)) from None
    if is_dir:
        raise IndexError_("is a folder, not an index file", str(db))
    if not exists:
        if readonly or not create:
            raise IndexError_("no index here (build one with `vidocr index build`)", str(db))
        try:
            db.parent.mkdir(parents=True, exist_ok=True)
        except OSError as err:
            raise IndexError_(f"cannot create the index's folder: {err.strerror or err}", str(db)) from None
    else:
        _check_header(db)
    conn = _connect(db, "?mode=ro" if readonly else "", busy_timeout_s)
    try:
        try:
            version = _check_schema(conn, db)
        except _Unreadable:
            if not readonly:
                raise
            # A WAL index in a folder this process cannot write: SQLite cannot make its shared-memory file.
            # Nothing can write there either, so the file is read as it stands.
            conn.close()
            conn = _connect(db, "?mode=ro&immutable=1", busy_timeout_s)
            version = _check_schema(conn, db)
        if not readonly:
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")  # safe with WAL: a power cut can only lose the last commit
            if version < SCHEMA_VERSION:
                _migrate(conn)
        elif version < READABLE_SCHEMA:
            raise IndexError_(f"index schema v{version} is older than v{SCHEMA_VERSION} (this vidocr also finds "
                              "traditional Chinese with simplified and back): run `vidocr index build LIBRARY` once "
                              "to upgrade it (its search table is rebuilt; no video is read again)", str(db))
        conn.execute("PRAGMA foreign_keys=ON")
    except _Unreadable as err:
        conn.close()
        raise index_error(err.args[0], db) from None
    except sqlite3.Error as err:
        conn.close()
        raise index_error(err, db) from None
    except BaseException:
        conn.close()
        raise
    return conn


def _connect(db: Path, query: str, busy_timeout_s: float) -> sqlite3.Connection:
    t2s_table()  # a missing table is one line here, not an error inside an SQL function
    try:
        conn = sqlite3.connect(
            db.absolute().as_uri() + query, uri=True, timeout=busy_timeout_s, isolation_level=None,
            check_same_thread=False,
        )
    except sqlite3.Error as err:
        raise index_error(err, db) from None
    conn.text_factory = _text
    conn.create_function("vidocr_fts_body", 1, fts_body, deterministic=True)
    return conn


class _Unreadable(Exception):
    """The first read failed for want of write access (read-only folder), or the file is not SQLite."""


def index_error(err: sqlite3.Error, db: str | os.PathLike[str] | None) -> IndexError_:
    """An SQLite error as one line that says what happened to the index and what to do (exit code 5)."""
    name = getattr(err, "sqlite_errorname", "") or ""
    text = str(err)
    if name.startswith("SQLITE_CORRUPT") or name.startswith("SQLITE_NOTADB") or "malformed" in text:
        reason = f"the index file is damaged ({text}); restore a copy, or move it away to build a new one"
    elif name.startswith("SQLITE_FULL") or "disk is full" in text:
        reason = "the disk is full: the index could not be written (the change was rolled back); free space and retry"
    elif name.startswith("SQLITE_READONLY") or "readonly" in text:
        reason = "the index is read-only (file or folder permissions, or a read-only disk); it was not changed"
    elif name.startswith("SQLITE_CANTOPEN") or "unable to open" in text:
        reason = "cannot open the index file (missing folder, or no permission to it)"
    elif name.startswith("SQLITE_BUSY") or "locked" in text:
        reason = "the index is busy: another process holds its write lock (try again, or --wait)"
    elif name.startswith("SQLITE_IOERR") or "disk I/O" in text:
        reason = f"the disk failed while the index was read or written ({text}); the change was rolled back"
    else:
        reason = f"index error: {text}"
    return IndexError_(reason, os.fspath(db) if db is not None else None)


def check_intact(conn: sqlite3.Connection, db: str | os.PathLike[str]) -> None:
    """SQLite's quick check of every page (about a second per 150 MB): a damaged index is said before a build
    spends OCR work that it could not store."""
    try:
        row = conn.execute("PRAGMA quick_check(1)").fetchone()
    except sqlite3.Error as err:
        raise index_error(err, db) from None
    if row is None or row[0] != "ok":
        problem = " ".join(str(row[0] if row else "no answer").split())[:160]
        raise IndexError_(f"the index file is damaged ({problem}); restore a copy, or move it away to build a new "
                          "one", os.fspath(db))


def check_writable(conn: sqlite3.Connection, db: str | os.PathLike[str]) -> None:
    """Prove that the index can be written (a real write, committed) before a build does any OCR work; an
    :class:`IndexError_` saying why not (read-only file or folder, full disk, damaged file) otherwise."""
    try:
        with transaction(conn):
            conn.execute("INSERT OR REPLACE INTO meta VALUES ('last_build', ?)", (str(time.time()),))
    except sqlite3.Error as err:
        raise index_error(err, db) from None


def fs_text(path: str) -> bytes:
    """A file path as a query parameter, for SQL that reads it as ``CAST(? AS TEXT)``: the name's own bytes
    (``os.fsencode``), so a name that is not valid UTF-8 is stored as it is and read back exactly (the
    connection decodes text with ``surrogateescape``); a UTF-8 name is stored as before, as plain text."""
    return os.fsencode(path)


def _text(raw: bytes) -> str:
    return raw.decode("utf-8", "surrogateescape")


def _check_header(db: Path) -> None:
    try:
        with db.open("rb") as fh:
            head = fh.read(len(_MAGIC))
    except OSError as err:
        raise IndexError_(f"cannot read: {err.strerror}", str(db)) from None
    if head and head != _MAGIC:
        raise IndexError_("not an SQLite database, so not a vidocr index (left unchanged)", str(db))


def _check_schema(conn: sqlite3.Connection, db: Path) -> int:
    try:
        app_id = conn.execute("PRAGMA application_id").fetchone()[0]
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        tables = conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]
    except sqlite3.DatabaseError as err:
        name = getattr(err, "sqlite_errorname", "") or ""
        if name.startswith(("SQLITE_READONLY", "SQLITE_CANTOPEN")):
            raise _Unreadable(err) from None
        if name.startswith("SQLITE_CORRUPT"):
            raise index_error(err, db) from None
        raise IndexError_(f"not a usable SQLite database ({err}); left unchanged", str(db)) from None
    if app_id != APPLICATION_ID and (app_id != 0 or tables):
        raise IndexError_("an SQLite database of another program, not a vidocr index (left unchanged)", str(db))
    if version > SCHEMA_VERSION:
        raise IndexError_(
            f"index schema v{version} is newer than this vidocr understands (v{SCHEMA_VERSION}); "
            "upgrade vidocr (the index was left unchanged)",
            str(db),
        )
    return int(version)


def _migrate(conn: sqlite3.Connection) -> None:
    with transaction(conn):
        # Another process may have migrated between our check and this write lock.
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        for step in range(version, SCHEMA_VERSION):
            for statement in _statements(MIGRATIONS[step]):
                conn.execute(statement)
            conn.execute(f"PRAGMA user_version = {step + 1}")
        conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
        conn.execute("INSERT OR REPLACE INTO meta VALUES ('fts_scheme', ?)", (FTS_SCHEME,))


def _statements(script: str) -> Iterator[str]:
    """Split a migration script into statements (``executescript`` would commit our transaction)."""
    buffer = ""
    for line in script.splitlines(keepends=True):
        buffer += line
        if sqlite3.complete_statement(buffer):
            yield buffer.strip()
            buffer = ""
    if buffer.strip():
        raise ValueError(f"incomplete SQL in migration: {buffer.strip()[:60]}")


@contextlib.contextmanager
def transaction(conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """``BEGIN IMMEDIATE`` ... ``COMMIT`` (rolled back on any exception); waits for the busy timeout."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield conn
    except BaseException:
        # A failed write (full disk, I/O error) may have rolled the transaction back already.
        with contextlib.suppress(sqlite3.Error):
            conn.execute("ROLLBACK")
        raise
    try:
        conn.execute("COMMIT")
    except sqlite3.Error:
        with contextlib.suppress(sqlite3.Error):
            conn.execute("ROLLBACK")
        raise


@contextlib.contextmanager
def writer_lock(db: str | os.PathLike[str], timeout_s: float = 0.0) -> Iterator[None]:
    """Hold the builders' lock on ``db`` (wait up to ``timeout_s``, then raise :class:`IndexError_`).

    The lock file is beside the index's real file (links resolved): every path to one index takes one lock."""
    lock_path = Path(f"{os.path.realpath(db)}.lock")
    try:
        fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as err:
        raise IndexError_(f"cannot create the builders' lock {lock_path.name}: {err.strerror or err}",
                          os.fspath(db)) from None
    try:
        deadline = time.monotonic() + timeout_s
        while not _try_lock(fd):
            if time.monotonic() >= deadline:
                os.lseek(fd, 0, os.SEEK_SET)
                holder = os.read(fd, 32).decode(errors="replace").strip() or "?"
                raise IndexError_(
                    f"another build is writing this index (pid {holder}); wait for it to finish or pass --wait",
                    os.fspath(db),
                )
            time.sleep(0.1)
        os.ftruncate(fd, 0)
        os.lseek(fd, 0, os.SEEK_SET)
        os.write(fd, f"{os.getpid()}\n".encode())
        try:
            yield
        finally:
            os.ftruncate(fd, 0)
            _unlock(fd)
    finally:
        os.close(fd)


if sys.platform == "win32":
    import msvcrt

    def _try_lock(fd: int) -> bool:
        try:
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
        except OSError:
            return False
        return True

    def _unlock(fd: int) -> None:
        msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)

else:
    import fcntl

    def _try_lock(fd: int) -> bool:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        return True

    def _unlock(fd: int) -> None:
        fcntl.flock(fd, fcntl.LOCK_UN)
