"""One error hierarchy for the whole library.

Every error names the file it concerns (when there is one) and a short reason, so the CLI can print
exactly one line. Errors are plain picklable objects: one raised on the OCR thread reaches the caller unchanged.
"""

from __future__ import annotations

import os


def display_path(path: str | os.PathLike[str] | bytes, quote: bool = True) -> str:
    """A file name as it can be shown on one line of a terminal or log: as it is when it is printable text,
    else in quotes with escapes: bytes that are not UTF-8 (kept by Python as surrogates) as ``\\xNN``, control
    characters (a newline in a name) as ``\\n``, ``\\x1b``... Any name the file system allows prints, and
    no name can split an error line in two. ``quote``: put the escaped form in quotes."""
    text = os.fsdecode(path)
    if text.isprintable():
        return text
    parts = []
    for ch in text:
        code = ord(ch)
        if ch.isprintable():
            parts.append("\\\\" if ch == "\\" else ch)
        elif 0xDC80 <= code <= 0xDCFF:  # a byte that was not UTF-8 (surrogateescape)
            parts.append(f"\\x{code - 0xDC00:02x}")
        else:
            parts.append(ch.encode("unicode_escape").decode("ascii"))
    shown = "".join(parts)
    return f"'{shown}'" if quote else shown


def as_text(path: str) -> str:
    """A path as text that every output format can hold (JSON, subtitle files and terminals want Unicode): a
    name that is not valid UTF-8 with ``\\xNN`` escapes for its stray bytes, any other as it is."""
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        return display_path(path, quote=False)
    return path


def one_line(text: str) -> str:
    """``text`` with its line breaks and other control characters escaped: one line, whatever it quotes."""
    return text if text.isprintable() else "".join(
        ch if ch.isprintable() else ch.encode("unicode_escape", "backslashreplace").decode("ascii") for ch in text
    )


class VidocrError(Exception):
    """Base of every error vidocr raises on purpose."""

    exit_code = 1

    def __init__(self, reason: str, path: str | None = None) -> None:
        super().__init__(reason, path)
        self.reason = reason
        self.path = path

    def __str__(self) -> str:
        reason = one_line(self.reason)
        return f"{display_path(self.path)}: {reason}" if self.path else reason

    def __reduce__(self) -> tuple[type, tuple[str, str | None]]:
        return (type(self), (self.reason, self.path))


class InputError(VidocrError):
    """The input path is missing, empty, unreadable or not a usable video."""

    exit_code = 2


class DecodeError(InputError):
    """The file opened but its video could not be decoded."""


class OutputError(VidocrError):
    """An output file could not be written."""

    exit_code = 3


class ConfigError(VidocrError):
    """Bad options or configuration file."""

    exit_code = 2


class EngineError(VidocrError):
    """An OCR engine failed."""

    exit_code = 4


class EngineUnavailable(EngineError):
    """An engine's optional dependencies are not installed (the reason carries the install hint)."""


class IndexError_(VidocrError):  # noqa: N801 - avoid shadowing the builtin IndexError
    """The search index could not be opened, read or written (damaged, full disk, read-only)."""

    exit_code = 5
