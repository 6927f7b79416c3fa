"""The durable job queue: one row per video file, in an SQLite file of its own (WAL), that survives ``kill -9``.

A job is ``pending`` -> ``running`` -> ``done`` or ``failed``. What a job does (subtitle files written atomically,
the video's cues replaced in the index in one transaction) is idempotent, so a job cut short at any point is simply
run again: :meth:`JobQueue.recover` puts ``running`` jobs back to ``pending`` when the daemon starts. A job becomes
``done`` only after its outputs and index rows exist, and only if the file still has the size and mtime that were
read; a file that changed meanwhile is queued again. Failures that may pass (engine, disk, index) go back to
``pending`` with an exponential backoff until ``max_attempts``; bad input fails at once.

The queue is a file of its own rather than a table in the index: the index is optional (a daemon may only write
subtitle files), has its own schema versioning and builders' lock, and is read by searches; the queue is written on
every state change by the daemon alone (one daemon per queue, :func:`vidocr.daemon.service.hold_queue_lock`).
Paths are stored as bytes (``os.fsencode``): any name the file system allows, valid UTF-8 or not.

A job's key is its path and its engine choice (``engine``: '' for the daemon's own extract options, else the
canonical JSON of a :class:`~vidocr.daemon.choice.EngineChoice` that ``vidocr serve`` took with the job), so one
file extracted by two engines is two jobs, each done once. ``progress`` (0..1) is written by the worker while a
job runs, whichever process runs it. Schema v2 added both; a v1 queue is migrated when it is opened.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vidocr.errors import ConfigError
from vidocr.files import Stamp

STATES = ("pending", "running", "done", "failed")
_APPLICATION_ID = 0x5669644A  # "ViDJ"
_SCHEMA = """
CREATE TABLE IF NOT EXISTS jobs (
    id INTEGER PRIMARY KEY,
    path BLOB NOT NULL,               -- os.fsencode(absolute path)
    root BLOB,                        -- the watched folder it was found in (outputs mirror the path below it)
    size INTEGER NOT NULL,
    mtime_ns INTEGER NOT NULL,
    state TEXT NOT NULL CHECK (state IN ('pending', 'running', 'done', 'failed')),
    attempts INTEGER NOT NULL DEFAULT 0,
    next_at REAL NOT NULL,            -- Unix time before which a pending job is not started (backoff)
    created_at REAL NOT NULL,
    updated_at REAL NOT NULL,
    started_at REAL,
    finished_at REAL,
    error TEXT,
    cues INTEGER,
    seconds REAL,
    engine TEXT NOT NULL DEFAULT '',  -- '' (the daemon's extract options) or an EngineChoice's key (JSON)
    progress REAL,                    -- fraction done of a running job (0..1), written by its worker
    UNIQUE (path, engine)
);
CREATE INDEX IF NOT EXISTS jobs_due ON jobs (state, next_at);
"""
#: The queue's schema version (``PRAGMA user_version``); v1 had one job per path and no progress.
QUEUE_VERSION = 2
_V1_COLUMNS = "id, path, root, size, mtime_ns, state, attempts, next_at, created_at, updated_at, started_at, " \
    "finished_at, error, cues, seconds"
_COLUMNS = _V1_COLUMNS + ", engine, progress"


@dataclass(frozen=True)
class Job:
    id: int
    path: str
    root: str | None
    stamp: Stamp
    state: str
    attempts: int
    next_at: float
    created_at: float
    updated_at: float
    started_at: float | None
    finished_at: float | None
    error: str | None
    cues: int | None
    seconds: float | None
    engine: str = ""  # '' or an EngineChoice key
    progress: float | None = None

    @classmethod
    def from_row(cls, row: tuple[Any, ...]) -> Job:
        root = os.fsdecode(row[2]) if row[2] is not None else None
        return cls(row[0], os.fsdecode(row[1]), root, Stamp(row[3], row[4]), *row[5:])

    def to_dict(self) -> dict[str, object]:
        out = dict(self.__dict__)
        out["stamp"] = {"size": self.stamp.size, "mtime_ns": self.stamp.mtime_ns}
        return out


class JobQueue:
    """The queue at ``path`` (created unless ``create`` is false). One connection: use it from one thread.

    max_attempts: runs of a job (crashes included) before it is failed for good.
    backoff_s, backoff_max_s: a retry waits ``backoff_s * 2 ** (attempts - 1)`` seconds, at most ``backoff_max_s``.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        create: bool = True,
        max_attempts: int = 5,
        backoff_s: float = 30.0,
        backoff_max_s: float = 3600.0,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.path = Path(path)
        self.max_attempts, self.backoff_s, self.backoff_max_s = max(1, max_attempts), backoff_s, backoff_max_s
        self._clock = clock
        self._lock = threading.RLock()  # progress is written from the extraction's threads too
        if not create and not self.path.is_file():
            raise ConfigError("no job queue here (it is created by `vidocr watch`)", str(self.path))
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.conn = sqlite3.connect(self.path, timeout=30.0, isolation_level=None, check_same_thread=False)
            app_id = self.conn.execute("PRAGMA application_id").fetchone()[0]
            tables = self.conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]
            if app_id != _APPLICATION_ID and (app_id or tables):
                self.conn.close()
                raise ConfigError("not a vidocr job queue (left unchanged)", str(self.path))
            self.conn.execute("PRAGMA journal_mode=WAL")
            self.conn.execute("PRAGMA synchronous=FULL")
            if not tables:
                with self._tx():
                    for statement in _SCHEMA.split(";"):
                        if statement.strip():
                            self.conn.execute(statement)
                    self.conn.execute(f"PRAGMA application_id = {_APPLICATION_ID}")
                    self.conn.execute(f"PRAGMA user_version = {QUEUE_VERSION}")
            else:
                self._migrate()
        except sqlite3.Error as err:
            raise ConfigError(f"cannot use the job queue: {err}", str(self.path)) from None

    def _migrate(self) -> None:
        """v1 (one job per path, no progress) -> v2, in one transaction; a newer queue is refused."""
        version = self.conn.execute("PRAGMA user_version").fetchone()[0]
        if version > QUEUE_VERSION:
            self.conn.close()
            raise ConfigError(f"the job queue is from a newer vidocr (schema {version}; this one reads up to "
                              f"{QUEUE_VERSION})", str(self.path))
        if version == QUEUE_VERSION:
            return
        with self._tx() as conn:
            if conn.execute("PRAGMA user_version").fetchone()[0] != 1:
                return  # another process migrated it meanwhile
            conn.execute("ALTER TABLE jobs RENAME TO jobs_v1")
            conn.execute("DROP INDEX IF EXISTS jobs_due")
            for statement in _SCHEMA.split(";"):
                if statement.strip():
                    conn.execute(statement)
            conn.execute(f"INSERT INTO jobs ({_V1_COLUMNS}) SELECT {_V1_COLUMNS} FROM jobs_v1")
            conn.execute("DROP TABLE jobs_v1")
            conn.execute(f"PRAGMA user_version = {QUEUE_VERSION}")

    def close(self) -> None:
        self.conn.close()

    @contextlib.contextmanager
    def _tx(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            self.conn.execute("BEGIN IMMEDIATE")
            try:
                yield self.conn
            except BaseException:
                self.conn.execute("ROLLBACK")
                raise
            self.conn.execute("COMMIT")

    def enqueue(self, path: str, stamp: Stamp, root: str | None = None, engine: str = "") -> str:
        """Queue a stable file (with ``engine``: an EngineChoice key, a job of its own). Returns "new", "changed"
        (its job starts again) or "known" (same size and mtime)."""
        key, now = os.fsencode(path), self._clock()
        with self._tx() as conn:
            row = conn.execute("SELECT size, mtime_ns, state FROM jobs WHERE path = ? AND engine = ?",
                               (key, engine)).fetchone()
            if row is None:
                conn.execute(
                    "INSERT INTO jobs (path, root, size, mtime_ns, state, next_at, created_at, updated_at, engine)"
                    " VALUES (?, ?, ?, ?, 'pending', ?, ?, ?, ?)",
                    (key, os.fsencode(root) if root else None, stamp.size, stamp.mtime_ns, now, now, now, engine),
                )
                return "new"
            if Stamp(row[0], row[1]) == stamp:
                return "known"
            # A running job keeps running; finishing it sees the new stamp and queues it again.
            state = "running" if row[2] == "running" else "pending"
            conn.execute(
                "UPDATE jobs SET size = ?, mtime_ns = ?, state = ?, attempts = 0, next_at = ?, error = NULL,"
                " updated_at = ? WHERE path = ? AND engine = ?",
                (stamp.size, stamp.mtime_ns, state, now, now, key, engine),
            )
            return "changed"

    def recover(self) -> tuple[int, int]:
        """After a crash: ``running`` jobs go back to ``pending``, or fail when they used up their attempts
        (a file that crashes the daemon must not crash it forever). Returns (resumed, failed)."""
        now = self._clock()
        with self._tx() as conn:
            failed = conn.execute(
                "UPDATE jobs SET state = 'failed', finished_at = ?, updated_at = ?,"
                " error = 'interrupted ' || attempts || ' times (did the daemon crash on this file?)'"
                " WHERE state = 'running' AND attempts >= ?",
                (now, now, self.max_attempts),
            ).rowcount
            resumed = conn.execute(
                "UPDATE jobs SET state = 'pending', next_at = ?, updated_at = ? WHERE state = 'running'", (now, now)
            ).rowcount
        return resumed, failed

    def claim(self) -> Job | None:
        """Take the oldest due pending job: it becomes ``running`` and its attempt is counted."""
        now = self._clock()
        with self._tx() as conn:
            row = conn.execute(
                f"SELECT {_COLUMNS} FROM jobs WHERE state = 'pending' AND next_at <= ? ORDER BY next_at, id LIMIT 1",
                (now,),
            ).fetchone()
            if row is None:
                return None
            conn.execute(
                "UPDATE jobs SET state = 'running', attempts = attempts + 1, started_at = ?, updated_at = ?,"
                " progress = 0 WHERE id = ?",
                (now, now, row[0]),
            )
            row = conn.execute(f"SELECT {_COLUMNS} FROM jobs WHERE id = ?", (row[0],)).fetchone()
        return Job.from_row(row)

    def finish(self, job: Job, stamp: Stamp, *, cues: int, seconds: float) -> bool:
        """Mark done, if the file still has ``stamp`` (else queue it again and return False)."""
        now = self._clock()
        with self._tx() as conn:
            done = conn.execute(
                "UPDATE jobs SET state = 'done', finished_at = ?, updated_at = ?, error = NULL, cues = ?, seconds = ?,"
                " progress = 1"
                " WHERE id = ? AND state = 'running' AND size = ? AND mtime_ns = ?",
                (now, now, cues, seconds, job.id, stamp.size, stamp.mtime_ns),
            ).rowcount
            if not done:
                self._requeue(conn, job, None, now)
        return bool(done)

    def fail(self, job: Job, error: str, *, permanent: bool) -> str:
        """Record a failure: "failed" for good, or "retry" after a backoff; "requeued" if the file changed meanwhile."""
        now = self._clock()
        with self._tx() as conn:
            row = conn.execute("SELECT size, mtime_ns FROM jobs WHERE id = ? AND state = 'running'", (job.id,))
            current = row.fetchone()
            if current is not None and Stamp(*current) != job.stamp:
                self._requeue(conn, job, None, now)
                return "requeued"
            if permanent or job.attempts >= self.max_attempts:
                conn.execute(
                    "UPDATE jobs SET state = 'failed', finished_at = ?, updated_at = ?, error = ? WHERE id = ?",
                    (now, now, error, job.id),
                )
                return "failed"
            delay = min(self.backoff_max_s, self.backoff_s * 2 ** max(0, job.attempts - 1))
            conn.execute(
                "UPDATE jobs SET state = 'pending', next_at = ?, updated_at = ?, error = ? WHERE id = ?",
                (now + delay, now, error, job.id),
            )
            return "retry"

    def set_progress(self, job_id: int, fraction: float) -> None:
        """Record how far a running job is (0..1); callers throttle (each write is a commit)."""
        value = min(1.0, max(0.0, float(fraction)))
        with self._lock:
            self.conn.execute("UPDATE jobs SET progress = ? WHERE id = ? AND state = 'running'", (value, job_id))

    def requeue(self, job: Job, stamp: Stamp | None, delay: float = 0.0) -> None:
        """Back to pending as new work (attempts reset): the file changed, ``stamp`` is its new size and mtime."""
        now = self._clock()
        with self._tx() as conn:
            self._requeue(conn, job, stamp, now + delay)

    def _requeue(self, conn: sqlite3.Connection, job: Job, stamp: Stamp | None, next_at: float) -> None:
        conn.execute(
            "UPDATE jobs SET state = 'pending', attempts = 0, error = NULL, next_at = ?, updated_at = ?,"
            " size = coalesce(?, size), mtime_ns = coalesce(?, mtime_ns) WHERE id = ?",
            (next_at, self._clock(), stamp.size if stamp else None, stamp.mtime_ns if stamp else None, job.id),
        )

    def release(self, job: Job) -> None:
        """Give a running job back untouched (shutdown): pending, and this attempt does not count."""
        now = self._clock()
        with self._tx() as conn:
            conn.execute(
                "UPDATE jobs SET state = 'pending', attempts = max(0, attempts - 1), next_at = ?, updated_at = ?"
                " WHERE id = ? AND state = 'running'",
                (now, now, job.id),
            )

    def drop(self, path: str, *, running: bool = False) -> bool:
        """Forget the jobs of a deleted file (every engine's). Done jobs are kept (a share that comes back is not
        redone); a running job only with ``running`` (its worker found the file gone)."""
        states = ("pending", "failed", "running") if running else ("pending", "failed")
        with self._tx() as conn:
            cur = conn.execute(
                f"DELETE FROM jobs WHERE path = ? AND state IN ({', '.join('?' * len(states))})",
                (os.fsencode(path), *states),
            )
            return cur.rowcount > 0

    def retry(self, job_id: int | None = None) -> int:
        """Queue failed jobs again now, with fresh attempts: one by id (failed or pending), or every failed one."""
        if job_id is not None:
            _check_id("--retry", job_id)
        now = self._clock()
        where, args = (
            ("id = ? AND state IN ('failed', 'pending')", (job_id,)) if job_id is not None else ("state = 'failed'", ())
        )
        with self._tx() as conn:
            return conn.execute(
                f"UPDATE jobs SET state = 'pending', attempts = 0, next_at = ?, updated_at = ? WHERE {where}",
                (now, now, *args),
            ).rowcount

    def cancel(self, job_id: int) -> bool:
        """Cancel a pending job (``vidocr serve``): it fails with the reason "cancelled" and is not run unless
        retried (the watcher sees its file as known). A running job is given back first by its worker."""
        now = self._clock()
        with self._tx() as conn:
            return conn.execute(
                "UPDATE jobs SET state = 'failed', error = 'cancelled', finished_at = ?, updated_at = ?"
                " WHERE id = ? AND state = 'pending'",
                (now, now, job_id),
            ).rowcount > 0

    def by_id(self, job_id: int) -> Job | None:
        row = self.conn.execute(f"SELECT {_COLUMNS} FROM jobs WHERE id = ?", (job_id,)).fetchone()
        return Job.from_row(row) if row else None

    def get(self, path: str, engine: str = "") -> Job | None:
        """The job of ``path`` with the daemon's own options, or with the engine choice ``engine``."""
        row = self.conn.execute(f"SELECT {_COLUMNS} FROM jobs WHERE path = ? AND engine = ?",
                                (os.fsencode(path), engine)).fetchone()
        return Job.from_row(row) if row else None

    def jobs(self, state: str | None = None, limit: int | None = None) -> list[Job]:
        if limit is not None:
            _check_id("--limit", limit)
        sql = f"SELECT {_COLUMNS} FROM jobs" + (" WHERE state = ?" if state else "") + " ORDER BY id"
        rows = self.conn.execute(sql + (f" LIMIT {int(limit)}" if limit else ""), (state,) if state else ())
        return [Job.from_row(r) for r in rows]

    def known(self) -> dict[str, tuple[Stamp, str]]:
        """Every path's job (the daemon's own options, not an engine choice's) with the size and mtime it was
        queued with and its state."""
        rows = self.conn.execute("SELECT path, size, mtime_ns, state FROM jobs WHERE engine = ''")
        return {os.fsdecode(r[0]): (Stamp(r[1], r[2]), r[3]) for r in rows}

    def counts(self) -> dict[str, int]:
        out = dict.fromkeys(STATES, 0)
        out.update(self.conn.execute("SELECT state, count(*) FROM jobs GROUP BY state").fetchall())
        return out

    def next_due(self) -> float | None:
        """When the earliest pending job becomes due (Unix time), or None."""
        row = self.conn.execute("SELECT min(next_at) FROM jobs WHERE state = 'pending'").fetchone()
        return None if row[0] is None else float(row[0])


def _check_id(option: str, value: object) -> None:
    """Job ids and counts are SQLite integers: a whole number from 1 to 2**63 - 1 (else one line, exit 2)."""
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value < 2**63:
        raise ConfigError(f"{option} must be a whole number from 1 to {2**63 - 1}, got {value!r}")
