"""What the command line tells a person on stderr while it extracts: a status line, per-file lines, a summary table.

Front-end code (the library only logs). On a terminal one status line (what runs, then a progress bar) is redrawn
in place, and every other line first clears it and draws it again below itself, so no line is ever glued to a
bar; off a terminal there is no status line at all, only whole lines. Nothing here writes to stdout, which may
carry subtitles (``-o -``) or ``--json``.
"""

from __future__ import annotations

import contextlib
import shutil
import threading
import time
import unicodedata
from collections.abc import Sequence
from typing import Any, TextIO

from vidocr.errors import display_path

#: A summary table longer than this shows the files that were not "ok" and counts the others.
TABLE_ROWS = 40


class Console:
    """stderr for people: ``status`` (a terminal's transient line), ``line`` (a whole line; not with ``quiet``
    unless ``always``) and a text stream (``write``/``flush``) for the engine's loading lines and log records,
    which come from other threads."""

    def __init__(self, stream: TextIO, *, quiet: bool = False) -> None:
        self.stream = stream
        self.quiet = quiet
        self.tty = not quiet and _isatty(stream)
        self._status = ""
        self._shown = False
        self._partial = ""
        self._lock = threading.RLock()

    def width(self) -> int:
        return max(40, shutil.get_terminal_size((100, 24)).columns - 1) if self.tty else 100

    def status(self, text: str) -> None:
        """Show ``text`` as the status line (a terminal only)."""
        if not self.tty:
            return
        with self._lock:
            self._status = text
            self._draw()

    def clear(self) -> None:
        """Remove the status line."""
        with self._lock:
            self._status = ""
            self._erase()
            self._flush()

    def line(self, text: str, *, always: bool = False) -> None:
        """Print ``text`` as a line of its own (errors: ``always``, also with ``quiet``)."""
        if self.quiet and not always:
            return
        with self._lock:
            self._erase()
            try:
                self.stream.write(text + "\n")
            except (OSError, ValueError):
                return
            self._draw()
            self._flush()

    # A text stream for other writers (BackgroundEngine's loading lines, the logging handler).
    def write(self, text: str) -> int:
        with self._lock:
            self._partial += text
            *lines, self._partial = self._partial.split("\n")
            for text_line in lines:
                self.line(text_line, always=True)
        return len(text)

    def flush(self) -> None:
        self._flush()

    def _draw(self) -> None:
        if not (self.tty and self._status):
            return
        try:
            self.stream.write("\r" + fit(self._status, self.width()) + "\x1b[K")
            self.stream.flush()
        except (OSError, ValueError):
            return
        self._shown = True

    def _erase(self) -> None:
        if self._shown:
            self._shown = False
            with contextlib.suppress(OSError, ValueError):
                self.stream.write("\r\x1b[K")

    def _flush(self) -> None:
        with contextlib.suppress(OSError, ValueError):
            self.stream.flush()


class FileProgress:
    """The status line of one video, fed by :class:`vidocr.pipeline.Progress` reports: what runs before the first
    frame (opening, finding the subtitle zones), then a bar in seconds of video that stays below 100% until the
    last reads are merged (the last frame is decoded before OCR has read it)."""

    BAR = "{l_bar}{bar}| {n:.0f}/{total:.0f} s [{elapsed}<{remaining}]{postfix}"

    def __init__(self, console: Console, label: str) -> None:
        self.console = console
        self.label = label
        self.started = time.monotonic()
        console.status(f"{label}: opening…")

    def __call__(self, p: Any) -> None:
        if p.phase == "zones":
            text = f"{self.label}: finding subtitle zones…"
        elif p.phase == "finish":
            text = self._bar(p, "reading the last subtitles…", done=False)
        elif p.phase == "done":
            text = self._bar(p, f"{p.cues} cues, writing…", done=True)
        else:
            text = self._bar(p, f"{p.cues} cues", done=False)
        self.console.status(text)

    def _bar(self, p: Any, note: str, *, done: bool) -> str:
        total = p.seconds_total
        if not total or total <= 0:
            return f"{self.label}: {p.seconds_done:.0f} s read, {note}"
        from tqdm import tqdm

        n = min(p.seconds_done, total) if done else min(p.seconds_done, total * 0.99)
        return str(tqdm.format_meter(n, total, time.monotonic() - self.started, ncols=self.console.width(),
                                     prefix=self.label, unit="s", bar_format=self.BAR, postfix=note))


def stage_times(times: dict[str, float], write_s: float, total_s: float) -> str:
    """``-v``'s per-stage times (``RunStats.times.as_dict()``): zones, decode, masks and change detection, OCR (on
    its own thread, overlapping the others), merge, write."""
    labels = (("zones", "zones"), ("decode", "decode"), ("detect", "detect"), ("ocr", "OCR"), ("merge", "merge"))
    parts = [f"{label} {times[key]:.2f} s" + (" (own thread)" if key == "ocr" else "")
             for key, label in labels if key in times]
    parts.append(f"write {write_s:.2f} s")
    return f"times: {', '.join(parts)}; wall {total_s:.2f} s"


def summary_table(results: Sequence[Any], width: int) -> list[str]:
    """The end of a run over several files: one row per file (file, cues, time, status); past ``TABLE_ROWS``
    files, the rows that were not ok and a count of the others."""
    rows = list(results)
    hidden = 0
    if len(rows) > TABLE_ROWS:
        shown = [r for r in rows if r.status != "ok"][:TABLE_ROWS]
        hidden = len(rows) - len(shown)
        rows = shown
    status = {"ok": "ok", "empty": "no subtitles", "failed": "failed", "skipped": "skipped"}
    name_w = max(8, min(max((_width(display_path(r.path)) for r in rows), default=4), width - 36))
    lines = [f"{'file':<{name_w}}  {'cues':>6}  {'time':>8}  status"]
    for r in rows:
        name = fit(display_path(r.path), name_w, left=True)
        cues = str(r.cues) if r.status == "ok" else "-"
        lines.append(f"{name}{' ' * (name_w - _width(name))}  {cues:>6}  {r.seconds:>7.1f}s  "
                     f"{status.get(r.status, r.status)}")
    if hidden:
        lines.append(f"… and {hidden} more ok")
    return lines


def fit(text: str, width: int, *, left: bool = False) -> str:
    """``text`` cut to ``width`` terminal columns (CJK characters take two), with "…" where it was cut (at the
    start with ``left``: a path's end is what tells files apart)."""
    if _width(text) <= width:
        return text
    out: list[str] = []
    used = 1
    for ch in reversed(text) if left else text:
        w = _char_width(ch)
        if used + w > width:
            break
        out.append(ch)
        used += w
    return "…" + "".join(reversed(out)) if left else "".join(out) + "…"


def _width(text: str) -> int:
    return sum(_char_width(ch) for ch in text)


def _char_width(ch: str) -> int:
    if unicodedata.combining(ch):
        return 0
    return 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1


def _isatty(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, OSError, ValueError):
        return False


def shown_path(path: str) -> str:
    """The path as is, or quoted with escapes when it holds control characters or bytes that are not UTF-8
    (the lines of ``watch --once`` and ``jobs``)."""
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        return repr(path)
    return path if path.isprintable() else repr(path)
