"""Finding video files: files, folders (recursive) and glob patterns."""

from __future__ import annotations

import fnmatch
import glob
import logging
import os
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

from vidocr.errors import display_path
from vidocr.files import same_file

log = logging.getLogger("vidocr")

VIDEO_EXTENSIONS = frozenset(
    {
        ".mp4", ".mkv", ".avi", ".mov", ".webm", ".ts", ".m2ts", ".mts", ".flv", ".wmv",
        ".m4v", ".mpg", ".mpeg", ".3gp", ".ogv",
    }
)
PARTIAL_SUFFIXES = frozenset({".part", ".crdownload", ".tmp", ".partial", ".download"})


def is_partial(path: Path) -> bool:
    """Names of files still being written by downloaders or copy tools (and hidden files)."""
    return path.name.startswith(".") or path.suffix.lower() in PARTIAL_SUFFIXES


def is_video_name(path: Path) -> bool:
    return path.suffix.lower() in VIDEO_EXTENSIONS and not is_partial(path)


def overwrites_input(
    video: Path, folder: Path, stem: str, formats: Sequence[str], translate_to: str | None, inputs: Sequence[Path]
) -> str | None:
    """Why (one line naming ``video``) its outputs (``<folder>/<stem>[.<lang>].<ext>``) must not be written,
    when one of them is a file of this run's ``inputs`` (a video named ``clip.srt`` given explicitly would be
    replaced by its own subtitles); None when none is. Paths are compared resolved (links, ``..``), and as
    files (hard links). The inputs are looked up once per list (a batch calls this for each of its videos)."""
    from vidocr.formats import output_path

    by_path, by_inode = _input_keys(inputs)
    suffixes = [""] + ([f".{translate_to}"] if translate_to else [])
    for target in (output_path(folder, stem, fmt, suffix) for suffix in suffixes for fmt in formats):
        hit = by_path.get(os.path.realpath(target))
        if hit is None:
            try:
                st = os.stat(target)
            except (OSError, ValueError):
                continue
            hit = by_inode.get((st.st_dev, st.st_ino))
        if hit is not None:
            what = "itself" if hit == video or same_file(hit, video) else f"the input {display_path(hit)}"
            return (f"{display_path(video)}: its {target.suffix[1:]} output would overwrite {what}; "
                    "give another output folder with -o")
    return None


_INPUT_KEYS: list[tuple[Sequence[Path], int, dict[str, Path], dict[tuple[int, int], Path]]] = []


def _input_keys(inputs: Sequence[Path]) -> tuple[dict[str, Path], dict[tuple[int, int], Path]]:
    """The inputs by resolved path and by (device, inode), computed once for the same list of inputs."""
    if _INPUT_KEYS and _INPUT_KEYS[0][0] is inputs and _INPUT_KEYS[0][1] == len(inputs):
        return _INPUT_KEYS[0][2], _INPUT_KEYS[0][3]
    by_path: dict[str, Path] = {}
    by_inode: dict[tuple[int, int], Path] = {}
    for path in inputs:
        by_path.setdefault(os.path.realpath(path), path)
        try:
            st = os.stat(path)
        except (OSError, ValueError):
            continue
        by_inode.setdefault((st.st_dev, st.st_ino), path)
    _INPUT_KEYS[:] = [(inputs, len(inputs), by_path, by_inode)]
    return by_path, by_inode


def iter_videos(paths: Iterable[str | os.PathLike[str]]) -> Iterator[Path]:
    """Yield video files named by ``paths``, sorted within each folder, each once.

    A file named explicitly is yielded whatever its extension (the decoder judges it); folders are
    walked recursively for video extensions, skipping hidden entries and partial downloads;
    patterns with wildcards are expanded. Paths that do not exist are yielded as they are, so
    the caller reports them (a symbolic link loop included: the decoder says which it is).
    """
    seen: set[Path] = set()

    def once(path: Path) -> Iterator[Path]:
        key = path.absolute()
        if key not in seen:
            seen.add(key)
            yield path

    for raw in paths:
        text = os.fspath(raw)
        if glob.has_magic(text) and not os.path.lexists(text):
            for match in _glob(text):
                path = Path(match)
                if path.is_dir():
                    for found in walk_videos(match):
                        yield from once(Path(found))
                elif is_video_name(path):
                    yield from once(path)
            continue
        path = Path(text)
        if path.is_dir():
            for found in walk_videos(text):
                yield from once(Path(found))
        else:
            yield from once(path)


def walk_videos(folder: str | os.PathLike[str]) -> Iterator[str]:
    """Paths of the video files under ``folder``: depth first, each folder's files then its subfolders, both
    sorted; hidden entries and partial downloads skipped; symbolic links to folders not followed.

    An explicit stack, not recursion (``os.walk`` recurses in Python 3.11): a tree thousands of levels deep
    is walked like any other. A folder that cannot be listed is skipped with a warning.
    """
    stack = [os.fspath(folder)]
    while stack:
        top = stack.pop()
        try:
            with os.scandir(top) as entries:
                listed = sorted(entries, key=lambda e: e.name)
        except OSError as err:
            log.warning("%s: cannot list the folder: %s", display_path(top), err.strerror or err)
            continue
        subdirs = []
        for entry in listed:
            if entry.name.startswith("."):
                continue
            try:
                if entry.is_dir(follow_symlinks=False):
                    subdirs.append(entry.path)
                    continue
                if entry.is_symlink() and entry.is_dir():
                    continue  # a link to a folder: not followed (loops, trees seen twice)
            except OSError:
                pass  # a link loop or an unreadable entry: a video name is yielded and fails with its reason
            if is_video_name(Path(entry.name)):
                yield entry.path
        stack.extend(reversed(subdirs))


def deeper_than(folder: str | os.PathLike[str], limit: int) -> bool:
    """Whether a folder tree has folders more than ``limit`` levels below ``folder`` (links not followed);
    for tools that walk recursively (watchdog's inotify observer, on Python 3.11's recursive ``os.walk``)."""
    stack = [(os.fspath(folder), 0)]
    while stack:
        top, depth = stack.pop()
        if depth > limit:
            return True
        try:
            with os.scandir(top) as entries:
                stack.extend((e.path, depth + 1) for e in entries if _is_real_dir(e))
        except OSError:
            continue
    return False


def make_folders(folder: str | os.PathLike[str]) -> None:
    """``mkdir -p`` without recursion (``os.makedirs`` and ``Path.mkdir(parents=True)`` recurse once per missing
    level: a tree 1,100 levels deep mirrored into an output folder raised RecursionError)."""
    missing = []
    path = os.path.abspath(folder)
    while not os.path.isdir(path):
        missing.append(path)
        parent = os.path.dirname(path)
        if parent == path:
            break
        path = parent
    for path in reversed(missing):
        try:
            os.mkdir(path)
        except FileExistsError:
            if not os.path.isdir(path):
                raise


def _is_real_dir(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir(follow_symlinks=False)
    except OSError:
        return False


def _glob(pattern: str) -> list[str]:
    try:
        return sorted(glob.glob(pattern, recursive=True))
    except RecursionError:  # ``**`` over a very deep tree (glob recurses): walk the part before it instead
        fixed = pattern.split("**", 1)[0].rstrip(os.sep) or "."
        if glob.has_magic(fixed):
            log.warning("%s: folder tree too deep for this pattern; give the folder instead", display_path(pattern))
            return []
        tail = os.path.basename(pattern)
        return [p for p in walk_videos(fixed) if fnmatch.fnmatch(os.path.basename(p), tail)]
