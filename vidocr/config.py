"""Configuration files: YAML mappings whose keys are the CLI's long option names; the default index location.

Only the CLI and the daemon read files or the environment; the library takes option objects.
A config file is read defensively: at most :data:`MAX_CONFIG_BYTES`, no YAML aliases (``*name``: one alias of a
list of aliases... expands to billions of nodes), and every value checked against the option it sets.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from vidocr.errors import ConfigError

MAX_CONFIG_BYTES = 1 << 20
SECTIONS = ("extract", "index", "search", "watch", "serve")


def default_db_path() -> Path:
    """The search index used when ``--db`` is not given: ``$VIDOCR_DB``, else ``$XDG_DATA_HOME/vidocr/
    library.sqlite``, else ``~/.local/share/vidocr/library.sqlite`` (the XDG default)."""
    env = os.environ.get("VIDOCR_DB")
    if env:
        return Path(env).expanduser()
    data_home = os.environ.get("XDG_DATA_HOME", "")
    base = Path(data_home) if os.path.isabs(data_home) else Path("~/.local/share").expanduser()
    return base / "vidocr" / "library.sqlite"


class _NoAliasLoader(yaml.SafeLoader):
    """SafeLoader that refuses aliases: a config file never needs them, and they are how a few hundred bytes
    of YAML expand to gigabytes ("billion laughs")."""

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(yaml.AliasEvent):
            event: Any = self.peek_event()  # type: ignore[no-untyped-call]  # PyYAML ships no types
            raise yaml.composer.ComposerError(
                None, None, "YAML aliases (*name) are not allowed in a config file", event.start_mark
            )
        return super().compose_node(parent, index)


def _read_yaml(file: Path) -> Any:
    try:
        with file.open("rb") as handle:
            raw = handle.read(MAX_CONFIG_BYTES + 1)
    except FileNotFoundError:
        raise ConfigError("config file not found", str(file)) from None
    except OSError as exc:
        raise ConfigError(f"cannot read config: {exc.strerror or exc}", str(file)) from None
    if len(raw) > MAX_CONFIG_BYTES:
        raise ConfigError(f"config file larger than {MAX_CONFIG_BYTES // 1024} KiB", str(file))
    try:
        return yaml.load(raw.decode("utf-8"), Loader=_NoAliasLoader)  # noqa: S506 - a SafeLoader subclass
    except UnicodeDecodeError:
        raise ConfigError("config file is not UTF-8 text", str(file)) from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"invalid YAML: {str(exc).splitlines()[0]}", str(file)) from None


def load_config_parts(path: str | os.PathLike[str], section: str | None) -> tuple[dict[str, Any], dict[str, Any]]:
    """(top-level keys, keys of ``section``) of a config file; keys normalised from ``long-option`` to
    ``long_option``."""
    file = Path(path)
    data = _read_yaml(file)
    if data is None:
        return {}, {}
    if not isinstance(data, dict):
        raise ConfigError("config must be a mapping of option names to values", str(file))
    top = {_key(k): v for k, v in data.items() if k not in SECTIONS}
    chosen = data.get(section) if section else None
    if chosen is not None and not isinstance(chosen, dict):
        raise ConfigError(f"section {section}: must be a mapping of option names to values", str(file))
    return top, {_key(k): v for k, v in (chosen or {}).items()}


def load_config(path: str | os.PathLike[str], section: str | None = None) -> dict[str, Any]:
    """Load a YAML config: its top-level keys, with ``section`` (``extract:``, ``watch:``...) merged over them."""
    top, chosen = load_config_parts(path, section)
    return {**top, **chosen}


def _key(key: Any) -> str:
    return str(key).replace("-", "_")


def coerce_options(values: Mapping[str, Any], actions: Mapping[str, argparse.Action], source: str) -> dict[str, Any]:
    """Config values checked against the options they set (argparse applies no ``type`` to defaults), so a
    wrong type is one line (exit 2) and never a traceback later. ``null`` keeps the option's default."""
    out: dict[str, Any] = {}
    for key, value in values.items():
        if value is not None:
            out[key] = _coerce(key, value, actions[key], source)
    return out


def _coerce(key: str, value: Any, action: argparse.Action, source: str) -> Any:
    option = f"{key.replace('_', '-')}"

    def bad(expected: str) -> ConfigError:
        shown = repr(value) if len(repr(value)) <= 60 else repr(value)[:57] + "..."
        return ConfigError(f"{option}: expected {expected}, got {type(value).__name__} {shown}", source)

    if action.nargs == 0:  # a flag: --keep-static, --json...
        if isinstance(value, bool):
            return value
        raise bad("true or false")
    if isinstance(action, argparse._AppendAction) or action.nargs in ("+", "*"):
        items = value if isinstance(value, list) else [value]
        if not items or not all(isinstance(item, str) and item for item in items):
            raise bad("text or a list of text")
        return items
    if isinstance(value, (bool, list, dict)):
        raise bad("an integer" if action.type is int else "a number" if action.type is float else "text")
    if action.type in (int, float):
        try:
            number = action.type(value)
        except (TypeError, ValueError, OverflowError):
            raise bad(f"{'an integer' if action.type is int else 'a number'}") from None
        if action.type is int and isinstance(value, float) and not value.is_integer():
            raise bad("an integer")
        return number
    if isinstance(value, (int, float)) and key in ("start", "end"):
        return value  # seconds
    if not isinstance(value, str):
        raise bad("text")
    if action.choices is not None and value not in action.choices:
        raise bad(f"one of {', '.join(map(str, action.choices))}")
    return value
