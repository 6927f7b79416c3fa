"""Per-node throughput of ``vidocr watch --ray``, kept in the job queue's file for ``vidocr jobs``.

The driver records, for each job whose video a Ray node extracted and that ended ``done``, which node ran it, the
seconds the task took there, the seconds of video and the frames decoded (table ``ray_runs``, one row per job: a
job run again replaces its row). A node's throughput is measured over the time it was busy: the union of its
tasks' intervals ``[finished - task seconds, finished]`` (driver clock), so tasks that ran side by side count once
and the hours between two daemon runs do not count. Nothing here imports Ray.
"""

from __future__ import annotations

import sqlite3
import time
from dataclasses import dataclass

_SCHEMA = """
CREATE TABLE IF NOT EXISTS ray_runs (
    job_id INTEGER PRIMARY KEY,   -- jobs.id
    node TEXT NOT NULL,           -- the Ray node id
    host TEXT NOT NULL,           -- the node's host name
    finished_at REAL NOT NULL,    -- Unix time (driver) the result was stored
    task_s REAL NOT NULL,         -- seconds the video's task ran on the node
    video_s REAL,                 -- seconds of video
    frames INTEGER                -- frames decoded
)
"""


@dataclass(frozen=True)
class NodeThroughput:
    """One node's done videos: how many, seconds of video, task seconds, frames, and busy seconds (the union of
    its tasks' intervals)."""

    node: str
    host: str
    videos: int
    video_s: float
    task_s: float
    frames: int
    busy_s: float

    @property
    def videos_per_hour(self) -> float:
        return self.videos * 3600.0 / self.busy_s if self.busy_s > 0 else 0.0

    @property
    def realtime(self) -> float:
        """Seconds of video per second of the node's busy time (its real-time factor, all its slots together)."""
        return self.video_s / self.busy_s if self.busy_s > 0 else 0.0

    def to_dict(self) -> dict[str, object]:
        return {"node": self.node, "host": self.host, "videos": self.videos, "video_s": round(self.video_s, 3),
                "task_s": round(self.task_s, 3), "frames": self.frames, "busy_s": round(self.busy_s, 3),
                "videos_per_hour": round(self.videos_per_hour, 1), "realtime": round(self.realtime, 2)}


def record_run(conn: sqlite3.Connection, job_id: int, node: str, host: str, task_s: float, video_s: float | None,
               frames: int | None, finished_at: float | None = None) -> None:
    """Record (or replace) the run of job ``job_id`` on ``node``; one autocommitted statement."""
    conn.execute(_SCHEMA)
    conn.execute(
        "INSERT OR REPLACE INTO ray_runs (job_id, node, host, finished_at, task_s, video_s, frames)"
        " VALUES (?, ?, ?, ?, ?, ?, ?)",
        (job_id, node, host, time.time() if finished_at is None else finished_at, max(0.0, task_s), video_s, frames),
    )


def node_throughput(conn: sqlite3.Connection) -> list[NodeThroughput]:
    """Per node (most videos first), its runs of jobs that are done now; [] for a queue without Ray runs."""
    has = conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'ray_runs'").fetchone()
    if not has:
        return []
    rows = conn.execute(
        "SELECT r.node, r.host, r.finished_at, r.task_s, r.video_s, r.frames FROM ray_runs r"
        " JOIN jobs j ON j.id = r.job_id WHERE j.state = 'done' ORDER BY r.node, r.finished_at"
    ).fetchall()
    by_node: dict[str, list[tuple[float, float, float, int]]] = {}
    hosts: dict[str, str] = {}
    for node, host, finished, task_s, video_s, frames in rows:
        by_node.setdefault(node, []).append((finished - task_s, finished, video_s or 0.0, frames or 0))
        hosts[node] = host  # the latest run's
    out = []
    for node, runs in by_node.items():
        out.append(NodeThroughput(node, hosts[node], len(runs), sum(r[2] for r in runs),
                                  sum(r[1] - r[0] for r in runs), sum(r[3] for r in runs),
                                  busy_seconds([(r[0], r[1]) for r in runs])))
    return sorted(out, key=lambda n: (-n.videos, n.node))


def busy_seconds(intervals: list[tuple[float, float]]) -> float:
    """Length of the union of ``[start, end]`` intervals."""
    total, end_so_far = 0.0, float("-inf")
    for start, end in sorted(intervals):
        if end <= end_so_far:
            continue
        total += end - max(start, end_so_far)
        end_so_far = end
    return total
