"""Engine-specific settings (``EngineOptions.extra``, ``--engine-opt KEY=VALUE``): one frozen dataclass per engine.

:func:`check_settings` refuses a key the engine does not know (``retires=2`` for ``retries``) with the keys it does
know, and gives values that arrive as text from a command line or a config file the type of their field, before
any work (the CLI calls it while checking options; :func:`vidocr.engines.create_engine` and
:class:`~vidocr.engines.BackgroundEngine` call it too). The engines that run a HunyuanOCR model profile also take
any field of the profile (``vidocr/profiles/*.yaml``: ``dtype``, ``max_tokens``, ``batch_size``...) as a key.
An engine registered without settings here takes its ``extra`` as given.
"""

from __future__ import annotations

import dataclasses
import math
import types
import typing
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar, Union

from vidocr.errors import ConfigError


@dataclass(frozen=True)
class RapidOcrSettings:
    """``rapidocr``. ppocr: fields of :class:`vidocr.engines.ppocr.PpOcrConfig` to override (library callers)."""

    ppocr: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class ProfileSettings:
    """What every engine that runs a HunyuanOCR model profile takes.

    profile: a profile name (``hunyuanocr-1.0``, the default; ``hunyuanocr-1.5``) or a YAML file.
    model: the local model directory (``hunyuan-*``) or the served model's name (``openai``); ``--model``.
    Any other field of the profile may be given too, and replaces the profile's value.
    """

    profile: str | None = None
    model: str | None = None


@dataclass(frozen=True)
class HunyuanVllmSettings(ProfileSettings):
    """``hunyuan-vllm``. kv_cache_gb: vLLM's KV cache on a CPU (default: a quarter of the free memory, 1-4 GiB).
    engine_kwargs: extra keyword arguments of ``vllm.LLM`` (library callers)."""

    kv_cache_gb: float | None = None
    engine_kwargs: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class HunyuanTransformersSettings(ProfileSettings):
    """``hunyuan-transformers``. device: a torch device (default: cuda when there is one, else cpu)."""

    device: str | None = None


@dataclass(frozen=True)
class OpenAISettings(ProfileSettings):
    """``openai``: a client of OpenAI-compatible servers.

    base_urls: server base URLs, round robin (a list, or comma-separated; ``--server``); base_url: one URL.
    api_key: sent as a bearer token (the CLI takes it from ``$VIDOCR_API_KEY`` when not given; the library reads
    no environment). timeout: seconds per request. retries, backoff, max_backoff: retries of a failed request,
    with delays doubling from ``backoff`` up to ``max_backoff`` seconds. dead_for: seconds a server that refused
    connections is skipped. concurrency: requests in flight (default: ``workers``, else 16 per server).
    vllm_params: send vLLM's sampling parameters (top_k, repetition_penalty).
    """

    base_urls: Sequence[str] | str | None = None
    base_url: str | None = None
    api_key: str | None = None
    timeout: float = 120.0
    retries: int = 6
    backoff: float = 0.5
    max_backoff: float = 10.0
    dead_for: float = 5.0
    concurrency: int = 0
    vllm_params: bool = True


#: Each engine's settings class, by registry name.
SETTINGS: dict[str, type[Any]] = {
    "rapidocr": RapidOcrSettings,
    "hunyuan-vllm": HunyuanVllmSettings,
    "hunyuan-transformers": HunyuanTransformersSettings,
    "openai": OpenAISettings,
}


def settings_keys(engine: str) -> list[str] | None:
    """The keys ``engine`` takes, sorted; None for an engine without declared settings (anything goes)."""
    cls = SETTINGS.get(engine)
    if cls is None:
        return None
    keys = {f.name for f in dataclasses.fields(cls)}
    if issubclass(cls, ProfileSettings):
        keys |= _profile_keys()
    return sorted(keys)


_S = TypeVar("_S")


def settings_of(cls: type[_S], extra: Mapping[str, Any]) -> _S:
    """``cls`` (a settings dataclass) from checked settings: its own keys, None meaning its default (the profile's
    fields stay in ``extra`` for :func:`~vidocr.engines.hunyuan_common.load_profile`)."""
    names = {f.name for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
    return cls(**{k: v for k, v in extra.items() if k in names and v is not None})


def check_settings(engine: str, extra: Mapping[str, Any]) -> dict[str, Any]:
    """``extra`` checked against ``engine``'s settings: an unknown key is a :class:`ConfigError` (one line with the
    valid keys); a text value of a typed field is converted (``"2"`` -> 2 for ``retries``). Profile fields are
    converted when the profile is loaded. Returns the settings to hand to the engine."""
    keys = settings_keys(engine)
    if keys is None:
        return dict(extra)
    unknown = sorted(set(extra) - set(keys))
    if unknown:
        what = "setting" if len(unknown) == 1 else "settings"
        raise ConfigError(f"engine {engine!r} has no {what} {', '.join(map(repr, unknown))}; "
                          f"valid keys: {', '.join(keys)}")
    cls = SETTINGS[engine]
    hints = typing.get_type_hints(cls)
    out = dict(extra)
    for name in hints.keys() & out.keys():
        if out[name] is not None:
            out[name] = _convert(name, hints[name], out[name])
    return out


def _convert(name: str, hint: Any, value: Any) -> Any:
    """``value`` as the field's type; text is parsed, anything else must already fit."""
    options = typing.get_args(hint) if typing.get_origin(hint) in (Union, types.UnionType) else (hint,)
    options = tuple(t for t in options if t is not type(None))
    for kind in options:
        converted = _as(kind, value)
        if converted is not _MISMATCH:
            return converted
    raise ConfigError(f"engine setting {name}: expected {_describe(options)}, got {value!r}")


_MISMATCH = object()


def _as(kind: Any, value: Any) -> Any:
    origin = typing.get_origin(kind) or kind
    if kind is bool:
        if isinstance(value, bool):
            return value
        return _BOOLS.get(value.strip().lower(), _MISMATCH) if isinstance(value, str) else _MISMATCH
    if kind in (int, float) and not isinstance(value, bool):
        try:
            number = kind(value.strip() if isinstance(value, str) else value)
        except (TypeError, ValueError, OverflowError):
            return _MISMATCH
        exact = math.isfinite(number) and not (kind is int and isinstance(value, float) and number != value)
        return number if exact else _MISMATCH
    if kind is str:
        return value if isinstance(value, str) else _MISMATCH
    if origin is Mapping:
        return value if isinstance(value, Mapping) else _MISMATCH
    if origin is Sequence and isinstance(value, Sequence) and not isinstance(value, (str, bytes)):
        return list(value)
    return _MISMATCH


_BOOLS = {"1": True, "true": True, "yes": True, "on": True, "0": False, "false": False, "no": False, "off": False}


def _describe(options: tuple[Any, ...]) -> str:
    names = []
    for kind in options:
        origin = typing.get_origin(kind) or kind
        names.append({bool: "true or false", int: "an integer", float: "a number", str: "text",
                      Mapping: "a mapping", Sequence: "a list"}.get(origin, str(kind)))
    return " or ".join(names)


def _profile_keys() -> set[str]:
    from vidocr.engines.hunyuan_common import PROFILE_OVERRIDES

    return set(PROFILE_OVERRIDES)
