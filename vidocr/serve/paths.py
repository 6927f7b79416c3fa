"""Every path the server serves or processes stays inside a library root.

A path from a request is relative to a root; it is refused when it is absolute, holds a NUL byte, a ``..`` or
``.`` part, a backslash, or a percent-escape that is still there after the URL was decoded once (a double-encoded
``%252e%252e`` arrives as ``%2e%2e``: never decoded again, never a file name we accept), and when the real path
(links resolved) is not inside the real root. A path from the index (a video found by ``index build``) is
served only when its real path is inside a root too.
"""

from __future__ import annotations

import os
import re
import stat
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from vidocr.errors import InputError

_ESCAPE = re.compile(r"%[0-9a-fA-F]{2}")


class OutsideRoots(InputError):
    """The path is not inside a library root (or is not a path we accept)."""


def real_roots(roots: Sequence[Path]) -> tuple[Path, ...]:
    return tuple(Path(os.path.realpath(r)) for r in roots)


def inside(real: str, roots: Sequence[Path]) -> Path | None:
    """The root (of ``roots``, already real paths) that the real path ``real`` lies in, or None."""
    for root in roots:
        r = str(root)
        if real == r or real.startswith(r.rstrip(os.sep) + os.sep):
            return root
    return None


def resolve_request_path(text: str, roots: Sequence[Path], root_index: int | None = None) -> tuple[Path, Path]:
    """``(real path, its root)`` for a path given in a request, relative to a root (``root_index``, else the first
    root where it exists). Raises :class:`OutsideRoots` (one line naming the path) for anything else."""
    shown = text if len(text) <= 200 else text[:200] + "…"
    if not text or "\x00" in text:
        raise OutsideRoots("not a path (empty or holds a NUL byte)", repr(shown))
    if os.path.isabs(text) or text.startswith(("/", "\\", "~")) or re.match(r"^[A-Za-z]:", text):
        raise OutsideRoots("give a path relative to a library root, not an absolute one", shown)
    if "\\" in text or _ESCAPE.search(text):
        raise OutsideRoots("backslashes and percent-escapes are not allowed in a path", shown)
    parts = text.split("/")
    if any(p in ("..", ".") for p in parts):
        raise OutsideRoots("'..' and '.' are not allowed in a path", shown)
    if root_index is not None:
        if not 0 <= root_index < len(roots):
            raise OutsideRoots(f"no library root number {root_index} (there are {len(roots)})", shown)
        candidates = [roots[root_index]]
    else:
        candidates = list(roots)
    for root in candidates:
        joined = root.joinpath(*[p for p in parts if p])
        if not os.path.lexists(joined) and len(candidates) > 1:
            continue
        real = os.path.realpath(joined)
        if inside(real, [root]) is None:
            raise OutsideRoots("leads outside the library roots (a link?)", shown)
        return Path(real), root
    raise InputError("no such file in the library roots", shown)


def check_served(path: str, roots: Sequence[Path]) -> tuple[Path, Path]:
    """``(real path, root)`` for a path the index holds, if it is inside a root; else :class:`OutsideRoots`."""
    if "\x00" in path:
        raise OutsideRoots("not a path (holds a NUL byte)", repr(path))
    real = os.path.realpath(path)
    root = inside(real, roots)
    if root is None:
        raise OutsideRoots("not inside the served library roots", os.path.basename(path))
    return Path(real), root


def relative(path: str, roots: Sequence[Path]) -> tuple[int, str] | None:
    """``(root number, path below it)`` for a stored path lexically inside a root (its real path inside too)."""
    real = os.path.realpath(path)
    for i, root in enumerate(roots):
        r = str(root).rstrip(os.sep) + os.sep
        if real.startswith(r):
            return i, real[len(r):]
    return None


class RealFolders:
    """:func:`relative` for many stored paths at once (a page of search hits): the real path of each video's
    folder is resolved once per ``ttl_s`` (a bounded map; a library's videos share folders), the file itself is
    checked with one ``lstat`` (a link is resolved in full, every time). A folder moved or linked elsewhere is
    seen within ``ttl_s``; streaming and band images check the full real path on every request."""

    def __init__(self, roots: Sequence[Path], ttl_s: float = 5.0, size: int = 4096,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.roots, self.ttl_s, self.size, self._clock = tuple(roots), ttl_s, size, clock
        self._folders: dict[str, tuple[float, str]] = {}
        self._lock = threading.Lock()

    def relative(self, path: str) -> tuple[int, str] | None:
        if "\x00" in path:
            return None
        folder, name = os.path.split(path)
        try:
            linked = stat.S_ISLNK(os.lstat(path).st_mode)
        except OSError:
            linked = False
        if linked or not name or name in (".", ".."):
            return relative(path, self.roots)
        now = self._clock()
        found = self._folders.get(folder)
        if found is None or now - found[0] > self.ttl_s:
            found = (now, os.path.realpath(folder))
            with self._lock:
                if len(self._folders) >= self.size:
                    self._folders.clear()
                self._folders[folder] = found
        real = os.path.join(found[1], name)
        for i, root in enumerate(self.roots):
            r = str(root).rstrip(os.sep) + os.sep
            if real.startswith(r):
                return i, real[len(r):]
        return None
