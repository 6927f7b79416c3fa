"""Atomic file writes: temp files in the target folder, fsync, then renames over the targets.

Files are created with the mode any writer would give them (0o666 less the umask: 0644 under umask 022, readable
by a media server running as another user); a file being replaced keeps its own mode.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from collections.abc import Sequence
from pathlib import Path

from vidocr.errors import OutputError

#: Bytes of the target's name kept in its temp file's name (``.<name>.XXXXXXXX.tmp``).
TEMP_NAME_KEEP = 200


def temp_name_part(name: str) -> str:
    """The part of a target's name that its temp file's name starts with (after the dot)."""
    return os.fsdecode(os.fsencode(name)[:TEMP_NAME_KEEP])


def current_umask() -> int:
    """The process umask, read without changing it where Linux allows (``os.umask`` sets it process-wide,
    a race with other threads creating files)."""
    with contextlib.suppress(OSError, ValueError), open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _mode_for(target: Path) -> int:
    try:
        return stat.S_IMODE(os.stat(target).st_mode)
    except OSError:
        return 0o666 & ~current_umask()


def write_text_atomic(path: str | os.PathLike[str], text: str) -> Path:
    """Write ``text`` (UTF-8) to ``path`` so readers see the old file or the whole new one, never a part."""
    return write_texts_atomic([(path, text)])[0]


def write_texts_atomic(items: Sequence[tuple[str | os.PathLike[str], str]]) -> list[Path]:
    """Write several files all-or-none: every temp file is written and synced first, and only when all of them
    are, each is renamed over its target. A failure before the renames replaces nothing and leaves no temp file."""
    temps: list[tuple[str, Path]] = []
    try:
        for path, text in items:
            temps.append((_write_temp(Path(path), text), Path(path)))
        for _, target in temps:
            if target.is_dir():
                raise OutputError("cannot write output: a folder has that name", str(target))
        for tmp, target in temps:
            try:
                os.replace(tmp, target)
            except OSError as exc:
                raise OutputError(f"cannot write output: {exc.strerror or exc}", str(target)) from None
    finally:
        for tmp, _ in temps:
            with contextlib.suppress(OSError):
                os.unlink(tmp)  # only those not renamed (after a failure) still exist
    return [target for _, target in temps]


def _write_temp(target: Path, text: str) -> str:
    folder = target.parent
    try:
        folder.mkdir(parents=True, exist_ok=True)
        # The temp name must fit wherever the final name fits (255 bytes): a long name is cut short in it.
        fd, tmp = tempfile.mkstemp(prefix=f".{temp_name_part(target.name)}.", suffix=".tmp", dir=folder)
    except OSError as exc:
        raise OutputError(f"cannot write output: {exc.strerror or exc}", str(target)) from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
            os.fchmod(handle.fileno(), _mode_for(target))  # mkstemp makes 0600
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
    except BaseException as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        if isinstance(exc, OSError):
            raise OutputError(f"cannot write output: {exc.strerror or exc}", str(target)) from None
        raise
    return tmp
