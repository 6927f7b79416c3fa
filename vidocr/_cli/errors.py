"""How the command line reports errors: the exit codes of every command and one line per error, naming flags.

The exit codes of library errors come from :data:`vidocr.errors.ERROR_TABLE` (with their meanings,
:data:`vidocr.errors.EXIT_MEANINGS`); the command line adds its own (0, 1, 130, 141). The README's table and every
``--help`` epilog print :data:`EXIT_CODES` (a test checks the README against it).
"""

from __future__ import annotations

from vidocr.errors import EXIT_MEANINGS, VidocrError

#: The exit codes of every command (README "Exit codes" and the ``--help`` epilogs print this table).
EXIT_CODES: tuple[tuple[int, str], ...] = (
    (0, "success (a video without subtitles, or skipped, counts as done)"),
    (1, "some items failed (videos of extract / index build, jobs of watch --once); the others were done"),
    *sorted(EXIT_MEANINGS.items()),
    (130, "interrupted (Ctrl-C)"),
    (141, "stdout was closed (output piped into head and the like)"),
)

#: Library parameter -> the flag that sets it, where the flag is not ``--`` + the name with dashes.
FLAGS = {"translate_to": "--translate", "recheck_s": "--recheck", "base_urls": "--server", "job_id": "--retry"}


def flag(param: str) -> str:
    """The command-line flag of a library parameter (``sample_fps`` -> ``--sample-fps``)."""
    return FLAGS.get(param, "--" + param.replace("_", "-"))


def describe(err: VidocrError) -> str:
    """``err`` as one line for a person at the command line: its parameter, if any, named by its flag."""
    return err.describe(flag(err.param) if err.param is not None else None)


def exit_codes_epilog() -> str:
    return "exit codes:\n" + "\n".join(f"  {code:>3}  {text}" for code, text in EXIT_CODES)
