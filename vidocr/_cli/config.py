"""``--config``: a YAML file's values become the defaults of the command it is given to (explicit options win)."""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from vidocr.errors import ConfigError


def _sections() -> tuple[dict[str, str], dict[tuple[str, ...], set[str]]]:
    """The config file section each command reads (besides the top-level keys: a command's ``CONFIG_SECTION``,
    else its name), and the commands that read another command's section for a few keys only (where that
    command's queue or index is: ``CONFIG_BORROWED``)."""
    from vidocr._cli import COMMANDS

    sections = {c.NAME: getattr(c, "CONFIG_SECTION", c.NAME) for c in COMMANDS}
    borrowed: dict[tuple[str, ...], set[str]] = {}
    for command in COMMANDS:
        borrowed.update(getattr(command, "CONFIG_BORROWED", {}))
    return sections, borrowed


def apply_config(parser: argparse.ArgumentParser, argv: Sequence[str], command: str) -> None:
    """Load ``--config`` (if given) as defaults of the (sub)command named in ``argv``, so explicit
    options still win. Top-level keys apply to every command that has the option; the file's section named
    after the top command (``extract:``, ``index:``, ``search:``, ``watch:``) applies to that command."""
    pre = argparse.ArgumentParser(add_help=False)
    pre.add_argument("--config")
    known, _ = pre.parse_known_args(argv)
    if not known.config:
        return
    from vidocr.config import coerce_options, load_config_parts

    sections, borrowed_keys = _sections()
    top, section = load_config_parts(known.config, sections.get(command, command))
    sub, path = leaf_parser(parser, argv)
    actions = {a.dest: a for a in sub._actions if a.dest not in ("help", "config", "version")}
    stray = sorted(set(top) - _all_dests(parser))
    if stray:
        raise ConfigError(f"unknown option(s) in config: {', '.join(stray)}", known.config)
    values = {k: v for k, v in top.items() if k in actions}
    borrowed = borrowed_keys.get(tuple(path))
    if borrowed is not None:
        values.update({k: v for k, v in section.items() if k in borrowed})
    else:
        unknown = sorted(set(section) - set(actions))
        if unknown:
            raise ConfigError(f"unknown option(s) in config: {', '.join(unknown)}", known.config)
        values.update(section)
    sub.set_defaults(**coerce_options(values, actions, known.config))


def _all_dests(parser: argparse.ArgumentParser) -> set[str]:
    dests: set[str] = set()
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for child in action.choices.values():
                dests |= _all_dests(child)
        else:
            dests.add(action.dest)
    return dests


def leaf_parser(parser: argparse.ArgumentParser, argv: Sequence[str]) -> tuple[argparse.ArgumentParser, list[str]]:
    """The parser of the deepest subcommand named in ``argv`` (``index build`` -> its parser) and its path."""
    current, path = parser, []
    for token in argv:
        if token.startswith("-"):
            continue
        subs = [a for a in current._actions if isinstance(a, argparse._SubParsersAction)]
        if not subs or token not in subs[0].choices:
            break
        current = subs[0].choices[token]
        path.append(token)
    return current, path
