"""The ``vidocr`` command line: a thin front end over the library (:func:`vidocr.extract`, the index, the daemon).

Private: it depends on the library, never the reverse. One module per command in :data:`COMMANDS`, each with
``NAME``, ``add_parser(subparsers) -> ArgumentParser`` and ``run(args) -> int`` (optional: ``CONFIG_SECTION``,
the ``--config`` section it reads when not its name; ``CONFIG_BORROWED``, sections it reads a few keys of;
``parse(parser, argv)`` where argparse needs help). A new command is one module plus one line in that list.
Shared: :mod:`~vidocr._cli.options` (the extract options, declared once, turned into ``ExtractOptions`` in one
place), :mod:`~vidocr._cli.config` (``--config``), :mod:`~vidocr._cli.errors` (the exit-code table).
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import sys
from collections.abc import Sequence
from typing import Protocol

from vidocr import __version__
from vidocr._cli import extract, index, jobs, keys, search, serve, watch
from vidocr._cli.config import apply_config
from vidocr._cli.errors import describe, exit_codes_epilog
from vidocr.errors import VidocrError


class Command(Protocol):
    NAME: str

    def add_parser(self, subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> argparse.ArgumentParser:
        ...

    def run(self, args: argparse.Namespace) -> int:
        ...


#: Every command, in the order ``--help`` lists them.
COMMANDS: tuple[Command, ...] = (extract, index, search, watch, jobs, serve, keys)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="vidocr", description="Extract burned-in subtitles from videos.",
                                     epilog=exit_codes_epilog(), formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"vidocr {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for command in COMMANDS:
        command.add_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    by_name = {c.NAME: c for c in COMMANDS}
    try:
        named = by_name.get(next((a for a in argv if not a.startswith("-")), None) or "")
        if named is not None:
            apply_config(parser, argv, named.NAME)
        parse = getattr(named, "parse", None)
        args = parse(parser, argv) if parse is not None else parser.parse_args(argv)
        if args.command is None:
            parser.print_help(sys.stderr)
            return 2
        _setup_logging(getattr(args, "verbose", False), getattr(args, "quiet", False))
        return int(by_name[args.command].run(args))
    except VidocrError as exc:
        print(f"error: {describe(exc)}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # Output piped into `head` and the like: stop quietly, as command-line tools do.
        _drop_stdout()
        return 141
    except OSError as exc:
        if exc.filename is not None:
            raise
        # Standard output cannot take what was written (a full disk or device): one line, like an output error.
        print(f"error: cannot write to standard output: {exc.strerror or exc}", file=sys.stderr)
        _drop_stdout()
        return 3


def _drop_stdout() -> None:
    """Point standard output at the null device, so the interpreter's last flush of what could not be written
    raises nothing at exit."""
    with contextlib.suppress(OSError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)


def _setup_logging(verbose: bool, quiet: bool) -> None:
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("vidocr: %(levelname)s: %(message)s"))
    root = logging.getLogger("vidocr")
    root.handlers[:] = [handler]
    root.setLevel(logging.DEBUG if verbose else logging.ERROR if quiet else logging.WARNING)
    root.propagate = False
