"""One error hierarchy for the whole library, and one table of how each error is handled.

Every error names the file it concerns (when there is one) and a short reason, so the CLI can print
exactly one line. An error about an option names the parameter (``param="sample_fps"``) and writes ``{param}``
where its name goes in the reason: the library shows the parameter's name, a front end its own (the CLI its
flag, ``--sample-fps``). Errors are plain picklable objects: one raised on the OCR thread reaches the caller
unchanged. :data:`ERROR_TABLE` says, for every error class, the exit code of a command that stops on it, what
kind of failure it is (logs, metrics, job records) and whether trying again can help: the CLI, the index builder
and the watch daemon all classify through :func:`classify`.
"""

from __future__ import annotations

import os
import sqlite3
from dataclasses import dataclass


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


#: Where an error's reason names its parameter (``ConfigError("{param} must be > 0", param="rescan_s")``).
PARAM = "{param}"


class VidocrError(Exception):
    """Base of every error vidocr raises on purpose. ``param``: the option the error is about (its name in the
    library's options), written as ``{param}`` in ``reason``."""

    def __init__(self, reason: str, path: str | None = None, *, param: str | None = None) -> None:
        super().__init__(reason, path)
        self.template = reason
        self.path = path
        self.param = param

    @property
    def reason(self) -> str:
        """The reason, naming the parameter as the library does."""
        return self.reason_naming(self.param or "")

    def reason_naming(self, name: str) -> str:
        """The reason, with the parameter called ``name`` (a front end's name for it: the CLI's flag)."""
        return self.template.replace(PARAM, name) if self.param is not None else self.template

    @property
    def exit_code(self) -> int:
        """The exit code of a command that stops on this error (:data:`ERROR_TABLE`)."""
        return classify(self).exit_code

    def describe(self, name: str | None = None) -> str:
        """One line: the file (when there is one) and the reason, the parameter called ``name`` if given."""
        reason = one_line(self.reason_naming(name) if name is not None else self.reason)
        return f"{display_path(self.path)}: {reason}" if self.path else reason

    def __str__(self) -> str:
        return self.describe()

    def __reduce__(self) -> tuple[type, tuple[str, str | None], dict[str, str | None]]:
        return (type(self), (self.template, self.path), {"param": self.param})


class InputError(VidocrError):
    """The input path is missing, empty, unreadable or not a usable video."""


class DecodeError(InputError):
    """The file opened but its video could not be decoded."""


class OutputError(VidocrError):
    """An output file could not be written."""


class ConfigError(VidocrError):
    """Bad options or configuration file."""


class EngineError(VidocrError):
    """An OCR engine failed."""


class EngineUnavailable(EngineError):
    """An engine's optional dependencies are not installed (the reason carries the install hint)."""


class IndexError_(VidocrError):  # noqa: N801 - avoid shadowing the builtin IndexError
    """The search index could not be opened, read or written (damaged, full disk, read-only)."""


@dataclass(frozen=True)
class ErrorClass:
    """How every front end treats an error of one class."""

    kind: str
    """What failed, as logs, metrics and job records name it: input, config, engine, output, index, io, internal."""
    exit_code: int
    """The exit code of a command that stops on it (:data:`EXIT_MEANINGS`; 1 when it is one item's failure)."""
    permanent: bool
    """The same file with the same settings fails the same way: the daemon does not retry it (it is recorded as
    failed); otherwise it may pass on a later try (a server back up, disk space freed)."""
    stops_batch: bool
    """The settings or the engine, not the item, are at fault: ``index build`` stops rather than record every
    video as failed (``extract`` stops when the engine itself is down: it could not start, servers unreachable)."""


#: Error class -> how it is handled, most specific first (the first ``isinstance`` match applies).
ERROR_TABLE: tuple[tuple[type[BaseException], ErrorClass], ...] = (
    (InputError, ErrorClass("input", 2, permanent=True, stops_batch=False)),
    (ConfigError, ErrorClass("config", 2, permanent=True, stops_batch=True)),
    (EngineError, ErrorClass("engine", 4, permanent=False, stops_batch=True)),
    (OutputError, ErrorClass("output", 3, permanent=False, stops_batch=False)),
    (IndexError_, ErrorClass("index", 5, permanent=False, stops_batch=False)),
    (sqlite3.Error, ErrorClass("index", 5, permanent=False, stops_batch=False)),
    # Any other error raised on purpose is about the file (e.g. "no video frames").
    (VidocrError, ErrorClass("input", 1, permanent=True, stops_batch=False)),
    (OSError, ErrorClass("io", 1, permanent=False, stops_batch=False)),
)
#: Anything else: a bug, reported as an internal error (the item fails, the batch goes on).
INTERNAL_ERROR = ErrorClass("internal", 1, permanent=False, stops_batch=False)

#: What the exit codes of :data:`ERROR_TABLE` mean to a person (the CLI adds 0, 1, 130 and 141; the README's
#: table and every ``--help`` print them all).
EXIT_MEANINGS: dict[int, str] = {
    2: "usage error: bad option, value or config file, nothing to do, or options that fit none of the videos",
    3: "the output folder or file cannot be created or written (checked before any work)",
    4: "the OCR engine is not installed or cannot be set up (missing extra, model profile)",
    5: "the search index cannot be opened, read or written",
}


def classify(err: BaseException) -> ErrorClass:
    """How ``err`` is handled (:data:`ERROR_TABLE`)."""
    return next((handling for cls, handling in ERROR_TABLE if isinstance(err, cls)), INTERNAL_ERROR)
