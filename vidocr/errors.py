"""One error hierarchy for the whole library.

Every error names the file it concerns (when there is one) and a short reason, so the CLI can print
exactly one line. Errors are plain picklable objects: they cross process boundaries (OCR workers).
"""

from __future__ import annotations


class VidocrError(Exception):
    """Base of every error vidocr raises on purpose."""

    exit_code = 1

    def __init__(self, reason: str, path: str | None = None) -> None:
        super().__init__(reason, path)
        self.reason = reason
        self.path = path

    def __str__(self) -> str:
        return f"{self.path}: {self.reason}" if self.path else self.reason

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
    """The search index could not be opened or written."""

    exit_code = 5
