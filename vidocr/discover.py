"""Finding video files: files, folders (recursive) and glob patterns."""

from __future__ import annotations

import glob
import os
from collections.abc import Iterable, Iterator
from pathlib import Path

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


def output_stem(video: Path, names: Iterable[str] | None = None) -> str:
    """The name a video's outputs are built on: its stem ("a" for ``a.mp4`` -> ``a.srt``), or its whole
    name ("a.mp4" -> ``a.mp4.srt``) when another video beside it has the same stem (``a.mkv``), so that
    neither overwrites the other's subtitles. Decided by the folder alone, whatever the processing order.
    ``names``: the folder's file names when the caller has listed it already (else a few stat calls)."""
    stem = video.stem
    if names is not None:
        twin = any(n != video.name and Path(n).stem == stem and is_video_name(Path(n)) for n in names)
        return video.name if twin else stem
    for ext in VIDEO_EXTENSIONS:
        for variant in (ext, ext.upper()):
            other = video.with_name(stem + variant)
            if other.name != video.name and other.is_file() and not _same_file(other, video):
                return video.name
    return stem


def _same_file(a: Path, b: Path) -> bool:
    try:
        return os.path.samefile(a, b)  # case-insensitive file systems: A.MP4 is a.mp4
    except OSError:
        return False


def iter_videos(paths: Iterable[str | os.PathLike[str]]) -> Iterator[Path]:
    """Yield video files named by ``paths``, sorted within each folder, each once.

    A file named explicitly is yielded whatever its extension (the decoder judges it); folders are
    walked recursively for video extensions, skipping hidden entries and partial downloads;
    patterns with wildcards are expanded. Paths that do not exist are yielded as they are, so
    the caller reports them.
    """
    seen: set[Path] = set()

    def once(path: Path) -> Iterator[Path]:
        key = path.absolute()
        if key not in seen:
            seen.add(key)
            yield path

    for raw in paths:
        text = os.fspath(raw)
        if glob.has_magic(text) and not Path(text).exists():
            matches = sorted(glob.glob(text, recursive=True))
            for match in matches:
                path = Path(match)
                if path.is_dir():
                    for found in _walk(path):
                        yield from once(found)
                elif is_video_name(path):
                    yield from once(path)
            continue
        path = Path(text)
        if path.is_dir():
            for found in _walk(path):
                yield from once(found)
        else:
            yield from once(path)


def _walk(folder: Path) -> Iterator[Path]:
    for root, dirs, files in os.walk(folder, followlinks=False):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(files):
            path = Path(root) / name
            if is_video_name(path):
                yield path
