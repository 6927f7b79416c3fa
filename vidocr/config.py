"""Configuration files: YAML mappings whose keys are the CLI's long option names.

Only the CLI and the daemon read files; the library takes option objects.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import yaml

from vidocr.errors import ConfigError


def load_config(path: str | os.PathLike[str], section: str | None = None) -> dict[str, Any]:
    """Load a YAML config; keys are normalised from ``long-option`` to ``long_option``.

    A file may hold a top-level mapping, or sections per command (``extract:``, ``watch:``...);
    with ``section`` given, that section is merged over the top-level keys.
    """
    file = Path(path)
    try:
        data = yaml.safe_load(file.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError("config file not found", str(file)) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read config: {exc}", str(file)) from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"invalid YAML: {str(exc).splitlines()[0]}", str(file)) from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError("config must be a mapping of option names to values", str(file))
    sections = {"extract", "watch", "index", "search"}
    merged = {k: v for k, v in data.items() if k not in sections}
    if section and isinstance(data.get(section), dict):
        merged.update(data[section])
    return {str(k).replace("-", "_"): v for k, v in merged.items()}
