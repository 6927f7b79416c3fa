"""Index a video library: find videos, extract subtitles from the new and changed ones, store them.

A video is unchanged when its size and modification time match the index. When only the time differs
(a touch, a copy), a quick content hash decides; a new path whose content matches a video that vanished from the
same library is a move and keeps its cues. So re-running on an unchanged library reads no video and loads no
OCR model. Videos that fail are stored with the reason and retried when the file changes or on request.
"""

from __future__ import annotations

import dataclasses
import glob
import logging
import os
import re
import sqlite3
import stat
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vidocr.discover import iter_videos
from vidocr.errors import INTERNAL_ERROR, InputError, VidocrError, classify, display_path, one_line
from vidocr.files import Stamp, hash_or_none
from vidocr.index import store
from vidocr.index.db import check_intact, check_writable, index_error, open_index, writer_lock
from vidocr.index.sidecars import SIDECAR_EXTENSIONS, find_sidecars, read_sidecar
from vidocr.index.store import TrackData, VideoRow
from vidocr.types import Cue, VideoInfo

if TYPE_CHECKING:
    from vidocr.extractor import Extractor

log = logging.getLogger("vidocr")

ExtractFn = Callable[[Path], tuple[Iterable[Cue], VideoInfo]]


@dataclass(frozen=True)
class BuildProgress:
    """One step of a build: ``outcome`` is "start" before a video, then "indexed", "updated" or "failed"."""

    done: int
    total: int
    path: str
    outcome: str


@dataclass(frozen=True)
class BuildOptions:
    """How to build.

    extract: ``path -> (cues, info)``, such as an :class:`~vidocr.extractor.Extractor` (the caller closes it);
        default: an Extractor with ``engine`` and default options, closed at the end of the build.
    engine: engine name stored with each video.
    lang, translation_lang: languages of the burned-in text and of the engine's translation, stored on tracks.
    prune: remove videos that were in the libraries given and no longer exist.
    sidecars: also import .srt/.vtt/.ass files next to the videos (and follow their changes).
    retry_failed: extract again videos that failed even if unchanged. force: extract every video again.
    lock_timeout_s: how long to wait for another build on the same index before giving up.
    progress: called before and after each extraction; exceptions in it are logged, never raised.
    """

    extract: ExtractFn | None = None
    engine: str = "rapidocr"
    lang: str | None = None
    translation_lang: str | None = None
    prune: bool = False
    sidecars: bool = False
    retry_failed: bool = False
    force: bool = False
    lock_timeout_s: float = 0.0
    progress: Callable[[BuildProgress], None] | None = None


@dataclass
class BuildReport:
    """What a build did. ``extracted`` counts calls of the extractor."""

    seen: int = 0
    unchanged: int = 0
    indexed: int = 0
    updated: int = 0
    failed: int = 0
    failed_skipped: int = 0
    moved: int = 0
    missing: int = 0
    pruned: int = 0
    sidecar_tracks: int = 0
    sidecar_errors: int = 0
    cues: int = 0
    extracted: int = 0
    seconds: float = 0.0
    failures: list[tuple[str, str]] = field(default_factory=list)

    def summary(self) -> str:
        skipped = f" ({self.failed_skipped} earlier failures skipped)" if self.failed_skipped else ""
        parts = [
            f"{self.seen} videos: {self.indexed} new, {self.updated} updated, {self.unchanged} unchanged",
            f"{self.failed} failed{skipped}",
        ]
        if self.moved:
            parts.append(f"{self.moved} moved")
        if self.pruned or self.missing:
            parts.append(f"{self.pruned} pruned" if self.pruned else f"{self.missing} missing (--prune removes them)")
        if self.sidecar_tracks or self.sidecar_errors:
            parts.append(f"{self.sidecar_tracks} subtitle files imported, {self.sidecar_errors} unreadable")
        return ", ".join(parts) + f"; {self.cues} cues added in {self.seconds:.1f} s"

    def to_dict(self) -> dict[str, Any]:
        out = dataclasses.asdict(self)
        out["failures"] = [{"path": p, "error": e} for p, e in self.failures]
        return out


def build_index(
    db: str | os.PathLike[str], libraries: Sequence[str | os.PathLike[str]], options: BuildOptions | None = None
) -> BuildReport:
    """Bring the index at ``db`` up to date with the videos in ``libraries`` (files, folders, globs)."""
    options = options or BuildOptions()
    args = [os.fspath(p) for p in libraries]
    for arg in args:
        if not os.path.exists(arg) and not glob.has_magic(arg):
            raise InputError("no such file or folder", arg)
    started = time.monotonic()
    conn = open_index(db)
    own: Extractor | None = None
    extractor = options.extract
    if extractor is None:
        extractor = own = _default_extractor(options.engine)
    try:
        with writer_lock(db, options.lock_timeout_s):
            check_writable(conn, db)  # a read-only index or a full disk is said now, not after the OCR work
            builder = _Builder(conn, options, extractor, os.fspath(db))
            try:
                builder.run(args)
            except sqlite3.Error as err:
                # Each video's rows are one transaction: what was stored before the failure stands.
                raise index_error(err, db) from None
    finally:
        if own is not None:
            own.close()
        conn.close()
    builder.report.seconds = time.monotonic() - started
    return builder.report


def _default_extractor(engine: str) -> Extractor:
    from vidocr.extractor import Extractor
    from vidocr.pipeline import ExtractOptions

    return Extractor(ExtractOptions(engine=engine))


class _Builder:
    def __init__(self, conn: sqlite3.Connection, options: BuildOptions, extract: ExtractFn, db: str = "") -> None:
        self.conn, self.options, self.extract, self.db = conn, options, extract, db
        self.report = BuildReport()

    def run(self, args: list[str]) -> None:
        known = store.load_videos(self.conn)
        seen: dict[str, Stamp] = {}
        for video in iter_videos(args):
            path = os.path.abspath(video)
            try:
                st = os.stat(path)
            except OSError as err:
                log.warning("skipping %s: %s", display_path(path), err.strerror or err)
                continue
            if stat.S_ISREG(st.st_mode):
                seen[path] = Stamp.of(st)
        self.report.seen = len(seen)
        todo = self._plan(seen, known)
        missing = {p: row for p, row in known.items() if p not in seen and _in_scope(p, args) and not os.path.exists(p)}
        todo = self._find_moves(todo, missing)
        if self.options.prune:
            self.report.pruned = store.delete_videos(self.conn, [row.id for row in missing.values()])
        else:
            self.report.missing = len(missing)
        if todo:
            check_intact(self.conn, self.db)  # before OCR work that a damaged index could not store
        # An extractor that runs videos ahead (vidocr.cluster's, on Ray) hands them back as they finish; each is
        # still stored here, one transaction at a time.
        run_ahead = getattr(self.extract, "run_ahead", None)
        items = run_ahead(todo, key=lambda item: item[0]) if run_ahead is not None else todo
        for done, (path, stamp, outcome) in enumerate(items):
            self._notify(BuildProgress(done, len(todo), path, "start"))
            outcome = self._extract_one(path, stamp, outcome)
            self._notify(BuildProgress(done + 1, len(todo), path, outcome))
        if self.options.sidecars:
            self._sync_sidecars(sorted(seen), _roots(args))

    def _plan(self, seen: dict[str, Stamp], known: dict[str, VideoRow]) -> list[tuple[str, Stamp, str]]:
        todo: list[tuple[str, Stamp, str]] = []
        for path, stamp in seen.items():
            row = known.get(path)
            if row is None:
                todo.append((path, stamp, "indexed"))
                continue
            retry = row.status == "failed" and self.options.retry_failed
            if self.options.force or retry or not self._same_content(row, path, stamp):
                todo.append((path, stamp, "updated"))
            elif row.status == "failed":
                self.report.failed_skipped += 1
            else:
                self.report.unchanged += 1
        return todo

    def _same_content(self, row: VideoRow, path: str, stamp: Stamp) -> bool:
        if row.stamp == stamp:
            return True
        if row.stamp.size != stamp.size or row.hash is None:
            return False
        if hash_or_none(path, stamp.size) != row.hash:
            return False
        store.update_stamp(self.conn, row.id, stamp)  # touched or copied over with the same bytes
        return True

    def _find_moves(
        self, todo: list[tuple[str, Stamp, str]], missing: dict[str, VideoRow]
    ) -> list[tuple[str, Stamp, str]]:
        by_size: dict[int, list[VideoRow]] = {}
        for row in missing.values():
            if row.hash is not None:
                by_size.setdefault(row.stamp.size, []).append(row)
        if not by_size:
            return todo
        remaining = []
        for path, stamp, outcome in todo:
            candidates = by_size.get(stamp.size, []) if outcome == "indexed" else []
            content = hash_or_none(path, stamp.size) if candidates else None
            match = next((row for row in candidates if row.hash == content), None)
            if match is None:
                remaining.append((path, stamp, outcome))
                continue
            store.update_stamp(self.conn, match.id, stamp, path=path)
            candidates.remove(match)
            del missing[match.path]
            self.report.moved += 1
            if match.status == "failed" and self.options.retry_failed:
                remaining.append((path, stamp, "updated"))
        return remaining

    def _extract_one(self, path: str, stamp: Stamp, outcome: str) -> str:
        content = hash_or_none(path, stamp.size)
        self.report.extracted += 1
        try:
            cues_iter, info = self.extract(Path(path))
            cues = list(cues_iter)
        except Exception as err:
            handling = classify(err)
            if handling.stops_batch:
                raise  # the engine or its settings, not this video: stop the build
            if handling is not INTERNAL_ERROR:
                return self._fail(path, stamp, content, err.reason if isinstance(err, VidocrError) else str(err))
            # One line, as for any failure (the traceback is in the debug log): the build goes on.
            log.error("%s: internal error: %s: %s", display_path(path), type(err).__name__, one_line(str(err)))
            log.debug("traceback of the internal error on %s", display_path(path), exc_info=True)
            return self._fail(path, stamp, content, f"internal error: {type(err).__name__}: {err}")
        opts = self.options
        tracks = store.save_extraction(self.conn, path, stamp, content, cues, engine=opts.engine,
                                       duration_s=info.duration_s, lang=opts.lang,
                                       translation_lang=opts.translation_lang)
        self.report.cues += sum(len(t.cues) for t in tracks)
        setattr(self.report, outcome, getattr(self.report, outcome) + 1)
        return outcome

    def _fail(self, path: str, stamp: Stamp, content: str | None, reason: str) -> str:
        log.warning("%s: %s", display_path(path), one_line(reason))
        store.save_failure(self.conn, path, stamp, content, reason, engine=self.options.engine)
        self.report.failed += 1
        self.report.failures.append((path, reason))
        return "failed"

    def _sync_sidecars(self, paths: list[str], roots: list[str]) -> None:
        ids = {path: row.id for path, row in store.load_videos(self.conn).items()}
        stored = store.sidecar_stamps(self.conn)
        folders: dict[str, dict[str, list[str]]] = {}
        for path in paths:
            video_id = ids.get(path)
            if video_id is None:
                continue
            folder, name = os.path.split(path)
            if folder not in folders:
                folders[folder] = _subtitle_names(folder)
            current: dict[str, Stamp] = {}
            langs: dict[str, str | None] = {}
            for sidecar in find_sidecars(Path(path), folders[folder].get(name.split(".")[0], [])):
                if not _inside(os.path.realpath(sidecar.path), roots):
                    log.warning("%s: not read: a link to a file outside the libraries", display_path(sidecar.path))
                    continue
                try:
                    current[str(sidecar.path)] = Stamp.of(os.stat(sidecar.path))
                    langs[str(sidecar.path)] = sidecar.lang
                except OSError:
                    continue
            have = stored.get(video_id, {})
            remove = [p for p, s in have.items() if current.get(p) != s]
            add = []
            for sub_path, sub_stamp in current.items():
                if have.get(sub_path) == sub_stamp:
                    continue
                try:
                    cues = read_sidecar(Path(sub_path))
                except InputError as err:
                    log.warning("%s", err)
                    self.report.sidecar_errors += 1
                    continue
                add.append(TrackData("sidecar", "original", langs[sub_path], cues, sub_path, sub_stamp))
            if remove or add:
                store.replace_sidecars(self.conn, video_id, remove, add)
                self.report.sidecar_tracks += len(add)
                self.report.cues += sum(len(t.cues) for t in add)

    def _notify(self, event: BuildProgress) -> None:
        if self.options.progress is None:
            return
        try:
            self.options.progress(event)
        except Exception:  # a progress display must never break a build
            log.warning("progress callback failed", exc_info=True)


def _subtitle_names(folder: str) -> dict[str, list[str]]:
    """Subtitle files of a folder, grouped by the part of their name before the first dot."""
    groups: dict[str, list[str]] = {}
    try:
        names = os.listdir(folder)
    except OSError:
        return groups
    for name in names:
        if name.lower().endswith(SIDECAR_EXTENSIONS):
            groups.setdefault(name.split(".")[0], []).append(name)
    return groups


def _in_scope(path: str, args: list[str]) -> bool:
    """Whether ``path`` lies in one of the libraries given (so --prune may remove it if it is gone)."""
    for arg in args:
        root = os.path.abspath(arg)
        if glob.has_magic(arg):
            if fnmatchcase(path, root):
                return True
        elif path == root or path.startswith(root.rstrip(os.sep) + os.sep):
            return True
    return False


def _roots(args: list[str]) -> list[str]:
    """The libraries' real folders: those given, a file's folder, a pattern's part before its first wildcard."""
    roots = []
    for arg in args:
        if glob.has_magic(arg):
            arg = os.path.dirname(re.split(r"[*?\[]", arg, maxsplit=1)[0]) or "."
        elif not os.path.isdir(arg):
            arg = os.path.dirname(arg) or "."
        roots.append(os.path.realpath(arg))
    return roots


def _inside(path: str, roots: list[str]) -> bool:
    return any(path == root or path.startswith(root.rstrip(os.sep) + os.sep) for root in roots)

