"""Files as every front end sees them: whether one changed (stamp, quick content hash) and where its outputs go.

The CLI, the index builder and the watch daemon share these, so "unchanged", "the same content" and "the outputs
of this video" mean one thing everywhere.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

_HASH_CHUNK = 1 << 20


@dataclass(frozen=True)
class Stamp:
    """What cheaply tells whether a file changed: its size and modification time (nanoseconds)."""

    size: int
    mtime_ns: int

    @classmethod
    def of(cls, st: os.stat_result) -> Stamp:
        return cls(st.st_size, st.st_mtime_ns)


def stamp_or_none(path: str | os.PathLike[str]) -> Stamp | None:
    """The file's stamp now (links followed), or None when it cannot be read (gone, no permission)."""
    try:
        return Stamp.of(os.stat(path))
    except OSError:
        return None


def quick_hash(path: str | os.PathLike[str], size: int | None = None) -> str:
    """Content fingerprint from the size and the first and last MiB: cheap on large videos, and a copy,
    a move or a touch keeps it, while re-encoding or truncation changes it."""
    digest = hashlib.blake2b(digest_size=16)
    with open(path, "rb") as fh:
        size = os.fstat(fh.fileno()).st_size if size is None else size
        digest.update(str(size).encode())
        digest.update(fh.read(_HASH_CHUNK))
        if size > 2 * _HASH_CHUNK:
            fh.seek(size - _HASH_CHUNK)
            digest.update(fh.read(_HASH_CHUNK))
    return digest.hexdigest()


def hash_or_none(path: str | os.PathLike[str], size: int | None = None) -> str | None:
    """:func:`quick_hash`, or None when the file cannot be read (the index then stores no hash for it)."""
    try:
        return quick_hash(path, size)
    except OSError:
        return None


def output_stem(video: Path, names: Iterable[str] | None = None) -> str:
    """The name a video's outputs are built on: its stem ("a" for ``a.mp4`` -> ``a.srt``), or its whole
    name ("a.mp4" -> ``a.mp4.srt``) when another video beside it has the same stem (``a.mkv``), so that
    neither overwrites the other's subtitles. Decided by the folder alone, whatever the processing order.
    ``names``: the folder's file names when the caller has listed it already (else a few stat calls)."""
    from vidocr.discover import VIDEO_EXTENSIONS, is_video_name

    stem = video.stem
    if names is not None:
        twin = any(n != video.name and Path(n).stem == stem and is_video_name(Path(n)) for n in names)
        return video.name if twin else stem
    for ext in VIDEO_EXTENSIONS:
        for variant in (ext, ext.upper()):
            other = video.with_name(stem + variant)
            if other.name != video.name and other.is_file() and not same_file(other, video):
                return video.name
    return stem


def outputs_exist(folder: Path, stem: str, formats: Sequence[str]) -> bool:
    """Whether every format's output ``<folder>/<stem>.<ext>`` exists (``--skip-existing``)."""
    from vidocr.formats import output_path

    return all(output_path(folder, stem, fmt).exists() for fmt in formats)


def same_file(a: Path, b: Path) -> bool:
    """Whether two paths are one file (case-insensitive file systems: ``A.MP4`` is ``a.mp4``); False when
    either cannot be read."""
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False
