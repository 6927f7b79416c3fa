"""The exit codes of every command (README "Exit codes" and the ``--help`` epilogs print this table)."""

from __future__ import annotations

#: The exit codes of every command (README "Exit codes" and the ``--help`` epilogs print this table).
EXIT_CODES: tuple[tuple[int, str], ...] = (
    (0, "success (a video without subtitles, or skipped, counts as done)"),
    (1, "some items failed (videos of extract / index build, jobs of watch --once); the others were done"),
    (2, "usage error: bad option, value or config file, nothing to do, or options that fit none of the videos"),
    (3, "the output folder or file cannot be created or written (checked before any work)"),
    (4, "the OCR engine is not installed or cannot be set up (missing extra, model profile)"),
    (5, "the search index cannot be opened, read or written"),
    (130, "interrupted (Ctrl-C)"),
    (141, "stdout was closed (output piped into head and the like)"),
)


def exit_codes_epilog() -> str:
    return "exit codes:\n" + "\n".join(f"  {code:>3}  {text}" for code, text in EXIT_CODES)
