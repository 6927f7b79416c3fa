"""Which files are ready: watchdog events and periodic rescans feed candidates; stable ones become jobs.

A file is stable once its size and mtime were the same at two looks ``settle_s`` apart (any change seen in between,
by an event or a look, starts the wait again). Partial-download names and hidden files are never candidates; a
``.part`` renamed to ``.mp4`` is seen under its new name. Rescans catch what events miss (network shares, a full
inotify table, changes while the daemon was down) and drop the jobs of files that are gone. A name that cannot be
stat'ed but exists (a symlink loop) still becomes a job, so it fails with a reason instead of being ignored.
"""

from __future__ import annotations

import logging
import os
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vidocr.daemon.jobs import JobQueue
from vidocr.daemon.logs import event
from vidocr.discover import deeper_than, is_video_name, walk_videos
from vidocr.files import Stamp

log = logging.getLogger("vidocr.daemon")


@dataclass
class _Candidate:
    stamp: Stamp
    since: float  # monotonic time this stamp was first seen
    root: str


def file_stamp(path: str) -> Stamp | None:
    """Size and mtime; of the link itself when the target cannot be reached (loop, no permission); None if gone."""
    try:
        return Stamp.of(os.stat(path))
    except FileNotFoundError:
        return None  # gone, or a dangling link (its target may come back)
    except (OSError, ValueError):
        try:
            return Stamp.of(os.lstat(path))
        except (OSError, ValueError):
            return None


class Watcher:
    """Turns files under ``roots`` into jobs of ``queue`` (a queue of this watcher's own: it runs in its thread)."""

    def __init__(
        self,
        roots: Sequence[str | os.PathLike[str]],
        queue: JobQueue,
        *,
        settle_s: float = 5.0,
        rescan_s: float = 60.0,
        on_enqueue: Callable[[str, str], None] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.roots = sorted({os.path.abspath(r) for r in roots}, key=len, reverse=True)
        self.queue, self.settle_s, self.rescan_s = queue, settle_s, rescan_s
        self.on_enqueue = on_enqueue
        self._clock = clock
        self._candidates: dict[str, _Candidate] = {}
        self._dirty: set[str] = set()
        self._dirty_dirs: set[str] = set()
        self._lock = threading.Lock()
        self._next_rescan = 0.0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._observer: Any = None
        self.last_poll = clock()

    # --- looking at files -------------------------------------------------------------------------------------

    def scan(self, folders: Sequence[str] | None = None) -> None:
        """Walk ``folders`` (default: every root): new and changed videos become candidates; the pending and
        failed jobs of files that vanished from a folder that is still there are dropped."""
        known = self.queue.known()
        walked = []
        for folder in folders or self.roots:
            if not os.path.isdir(folder):
                continue  # an unmounted share: its files are not gone, only out of reach
            walked.append(folder)
            for path in walk_videos(folder):
                self.last_poll = self._clock()  # a long walk is work, not a hang (health check)
                root = self._root_of(path)
                if root is not None and _wanted(path, root):
                    self._observe(path, known.get(path, (None, ""))[0])
        for path, (_, state) in known.items():
            if state in ("pending", "failed") and any(_below(path, f) for f in walked) and not os.path.lexists(path):
                self._gone(path)
        if folders is None:
            self._next_rescan = self._clock() + self.rescan_s

    def notice(self, path: str, is_dir: bool = False) -> None:
        """Something happened at ``path`` (thread-safe; called from watchdog's thread)."""
        with self._lock:
            (self._dirty_dirs if is_dir else self._dirty).add(path)

    def poll(self, *, final: bool = False) -> int:
        """Look at noticed paths, queue candidates that stayed unchanged for ``settle_s``; rescan when due.

        With ``final`` (``--once``), a due candidate that changed is given up (left for the next run).
        Returns how many files were queued."""
        self.last_poll = now = self._clock()
        with self._lock:
            dirty, self._dirty = self._dirty, set()
            dirs, self._dirty_dirs = self._dirty_dirs, set()
        if dirs:
            present = sorted(d for d in dirs if self._root_of(d) is not None and os.path.isdir(d))
            if present:
                self.scan(present)
            for gone_dir in (d for d in dirs if not os.path.isdir(d)):
                for path, (_, state) in self.queue.known().items():
                    if state in ("pending", "failed") and _below(path, gone_dir) and not os.path.lexists(path):
                        self._gone(path)
        for path in dirty:
            root = self._root_of(path)
            if root is not None and _wanted(path, root):
                job = self.queue.get(path)
                self._observe(path, job.stamp if job else None)
        queued = 0
        for path, cand in list(self._candidates.items()):
            if now - cand.since < self.settle_s:
                continue
            stamp = file_stamp(path)
            if stamp is None:
                self._gone(path)
            elif stamp != cand.stamp:
                if final:
                    del self._candidates[path]
                    event(log, logging.INFO, "still_changing", "file still changing; left for the next run", path=path)
                else:
                    self._candidates[path] = _Candidate(stamp, now, cand.root)
            else:
                del self._candidates[path]
                outcome = self.queue.enqueue(path, stamp, cand.root)
                if outcome != "known":
                    queued += 1
                    event(log, logging.INFO, "enqueued", "file queued", path=path, outcome=outcome, size=stamp.size)
                    if self.on_enqueue is not None:
                        self.on_enqueue(path, outcome)
        if not final and now >= self._next_rescan:
            self.scan()
        return queued

    @property
    def waiting(self) -> int:
        """Candidates not yet stable."""
        return len(self._candidates)

    def _observe(self, path: str, queued: Stamp | None) -> None:
        stamp = file_stamp(path)
        if stamp is None:
            self._gone(path)
            return
        cand = self._candidates.get(path)
        if cand is not None and cand.stamp == stamp:
            return  # unchanged: keep waiting from when it was first seen like this
        if cand is None and stamp == queued:
            return  # already queued (or done) with this content
        root = self._root_of(path) or os.path.dirname(path)
        self._candidates[path] = _Candidate(stamp, self._clock(), root)

    def _gone(self, path: str) -> None:
        self._candidates.pop(path, None)
        if self.queue.drop(path):
            event(log, logging.INFO, "job_dropped", "file deleted; its job was dropped", path=path)

    def _root_of(self, path: str) -> str | None:
        return next((r for r in self.roots if _below(path, r) or path == r), None)

    # --- running in the background ----------------------------------------------------------------------------

    def start(self, tick: float = 0.25) -> None:
        """Watch with watchdog (recursive) and poll on a thread of its own until :meth:`stop`."""
        self._observer = self._start_observer()
        self._thread = threading.Thread(target=self._loop, args=(tick,), name="vidocr-watcher", daemon=True)
        self._thread.start()

    def alive(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def stop(self) -> None:
        self._stop.set()
        if self._observer is not None:
            self._observer.stop()
            self._observer.join(timeout=5)
        if self._thread is not None:
            self._thread.join(timeout=10)

    def _loop(self, tick: float) -> None:
        while not self._stop.wait(tick):
            try:
                self.poll()
            except Exception:  # noqa: BLE001 - the watcher must outlive a bad moment (busy DB, odd file system)
                log.warning("watcher poll failed; trying again", exc_info=True)

    def _start_observer(self) -> Any:
        from watchdog.events import FileSystemEvent, FileSystemEventHandler
        from watchdog.observers import Observer

        watcher = self

        class Handler(FileSystemEventHandler):
            def on_any_event(self, ev: FileSystemEvent) -> None:
                if ev.event_type in ("opened", "closed_no_write"):
                    return
                for raw in (ev.src_path, getattr(ev, "dest_path", "")):
                    if raw:
                        watcher.notice(os.fsdecode(raw), ev.is_directory)

        too_deep = [r for r in self.roots if deeper_than(r, sys.getrecursionlimit() - 100)]
        if too_deep:  # watchdog walks folders recursively: it would die with RecursionError in its thread
            event(log, logging.WARNING, "events_unavailable", "folder tree too deep for file events; relying on "
                  "rescans", root=too_deep[0], rescan_s=self.rescan_s)
            return None
        observer = Observer()
        try:
            for root in self.roots:
                observer.schedule(Handler(), root, recursive=True)
            observer.start()
        except (OSError, RecursionError) as err:  # e.g. the inotify watch limit: rescans still find everything, later
            event(log, logging.WARNING, "events_unavailable", "file events unavailable; relying on rescans",
                  error=str(err), rescan_s=self.rescan_s)
            return None
        return observer


def _below(path: str, folder: str) -> bool:
    return path.startswith(folder.rstrip(os.sep) + os.sep)


def _wanted(path: str, root: str) -> bool:
    """A video name, not a partial download, and no hidden folder on the way from the root."""
    rel = os.path.relpath(path, root)
    return is_video_name(Path(path)) and not any(part.startswith(".") for part in Path(rel).parts[:-1])
