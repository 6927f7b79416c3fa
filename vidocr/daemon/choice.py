"""A job's engine choice: which engine (and profile, model, servers, settings) extracts one job.

``vidocr serve`` takes it with a job (A/B comparisons of two engines on one video); the queue keeps it as the
job's :meth:`EngineChoice.key` (canonical JSON), so one file queued with two choices is two jobs, and the worker
(``serve``'s or ``vidocr watch``'s) builds the extract options from its own ones and the choice
(:meth:`EngineChoice.apply`). Everything is checked before the job is queued (:meth:`EngineChoice.check`): an
unknown engine, profile or setting is one line. A job never carries an API key (the openai engine takes the
worker's ``$VIDOCR_API_KEY``) nor a path the worker would read (a profile is a bundled name, a model directory
of a hunyuan-* engine is the worker's own).
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from vidocr.errors import ConfigError

if TYPE_CHECKING:
    from vidocr.pipeline import ExtractOptions

#: Engines that run a model profile (prompts, languages): a choice may name one of the bundled profiles.
PROFILE_ENGINES = frozenset({"hunyuan-vllm", "hunyuan-transformers", "openai"})
#: Engine settings a job may not set: secrets, and mappings that reach into the engine's constructor.
_FORBIDDEN = frozenset({"api_key", "api_key_env", "engine_kwargs", "ppocr", "base_url", "base_urls", "profile",
                        "model", "device"})
_URL = re.compile(r"^https?://[^\s/?#@]+(/[^\s?#]*)?$")
_NAME = re.compile(r"^[\w.:/@+-]{1,200}$")
MAX_SERVERS = 16
MAX_OPTIONS = 32


@dataclass(frozen=True)
class EngineChoice:
    """engine: a registry name (``vidocr.engines.engine_names``). profile: a bundled model profile
    (``hunyuanocr-1.0``, ``hunyuanocr-1.5``; profile engines only). model: the served model's name (openai).
    servers: OpenAI-compatible base URLs (openai). options: other engine settings, ``KEY=VALUE`` as for
    ``--engine-opt`` (sorted pairs of text)."""

    engine: str
    profile: str | None = None
    model: str | None = None
    servers: tuple[str, ...] = ()
    options: tuple[tuple[str, str], ...] = ()

    @classmethod
    def of(cls, engine: str, profile: str | None = None, model: str | None = None,
           servers: Sequence[str] | None = None, options: Mapping[str, Any] | None = None) -> EngineChoice:
        """A choice from request values (options' values as text; True/False as true/false)."""
        opts = tuple(sorted((str(k), _text(v)) for k, v in (options or {}).items()))
        return cls(engine, profile or None, model or None, tuple(servers or ()), opts)

    def key(self) -> str:
        """The queue's key of this choice: canonical JSON (same choice, same key)."""
        doc: dict[str, Any] = {"engine": self.engine}
        if self.profile:
            doc["profile"] = self.profile
        if self.model:
            doc["model"] = self.model
        if self.servers:
            doc["servers"] = list(self.servers)
        if self.options:
            doc["options"] = dict(self.options)
        return json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=False)

    @classmethod
    def from_key(cls, key: str) -> EngineChoice | None:
        """The choice a queue key names; None for '' (the worker's own options)."""
        if not key:
            return None
        try:
            doc = json.loads(key)
            return cls.of(str(doc["engine"]), doc.get("profile"), doc.get("model"), doc.get("servers"),
                          doc.get("options"))
        except (ValueError, KeyError, TypeError, AttributeError):
            raise ConfigError(f"the job's engine choice cannot be read: {key[:80]!r}") from None

    def label(self) -> str:
        """How the extraction is named in the index (an OCR revision's author): ``openai hunyuanocr-1.5 ...``."""
        parts = [self.engine]
        if self.profile:
            parts.append(self.profile)
        if self.model:
            parts.append(f"model={self.model}")
        parts += [f"server={url}" for url in self.servers]
        parts += [f"{k}={v}" for k, v in self.options]
        return " ".join(parts)

    def to_dict(self) -> dict[str, Any]:
        return {"engine": self.engine, "profile": self.profile, "model": self.model, "servers": list(self.servers),
                "options": dict(self.options), "label": self.label()}

    def check(self, base: ExtractOptions | None = None) -> None:
        """Refuse, with one line, anything the worker could not run: an unknown engine, profile or setting, a
        server for an engine that takes none, an engine whose extra is not installed, a task it cannot do."""
        from vidocr.engines import engine_names, engine_spec, load_engine_class
        from vidocr.engines.settings import check_settings
        from vidocr.pipeline import check_task

        engine_spec(self.engine)  # unknown: "unknown engine 'x'; choose one of: ..."
        if self.profile is not None:
            if self.engine not in PROFILE_ENGINES:
                raise ConfigError(f"engine {self.engine!r} takes no profile (engines with profiles: "
                                  f"{', '.join(sorted(PROFILE_ENGINES & set(engine_names())))})")
            if not re.fullmatch(r"[\w.-]{1,100}", self.profile):
                raise ConfigError(f"profile must be the name of a bundled profile, got {self.profile!r}")
        if self.model is not None:
            if self.engine != "openai":
                raise ConfigError(f"engine {self.engine!r} takes its model from the server's own options, not a job")
            if not _NAME.match(self.model):
                raise ConfigError(f"model must be a served model's name, got {self.model!r}")
        if self.servers:
            if self.engine != "openai":
                raise ConfigError(f"engine {self.engine!r} takes no server URL (only openai does)")
            if len(self.servers) > MAX_SERVERS:
                raise ConfigError(f"at most {MAX_SERVERS} servers, got {len(self.servers)}")
            for url in self.servers:
                if len(url) > 2000 or not _URL.match(url):
                    raise ConfigError(f"server must be an http:// or https:// base URL, got {url[:100]!r}")
        if len(self.options) > MAX_OPTIONS:
            raise ConfigError(f"at most {MAX_OPTIONS} engine options, got {len(self.options)}")
        for key, _ in self.options:
            if key in _FORBIDDEN:
                raise ConfigError(f"engine option {key!r} cannot be set by a job")
        task = base.task if base is not None else None
        options = self.apply(base)
        check_settings(self.engine, {k: v for k, v in options.engine_options.extra.items() if k != "api_key"})
        if task is not None:
            check_task(self.engine, task, options.translate_to)
        load_engine_class(self.engine)  # a missing extra is one line naming the install
        if self.engine in PROFILE_ENGINES:
            from vidocr.engines.hunyuan_common import load_profile, question_for

            profile = load_profile(options.engine_options.extra.get("profile"), options.engine_options.extra)
            question_for(profile, options.task, options.translate_to)

    def apply(self, base: ExtractOptions | None) -> ExtractOptions:
        """The worker's extract options with this engine: the same detection, zones, task and languages; the
        engine's settings are the worker's own when it runs the same engine, with the choice's on top."""
        from vidocr.pipeline import ExtractOptions

        base = base or ExtractOptions()
        extra: dict[str, Any] = dict(base.engine_options.extra) if base.engine == self.engine else {}
        extra.update(self.options)
        if self.profile:
            extra["profile"] = self.profile
        if self.model:
            extra["model"] = self.model
        if self.servers:
            extra.pop("base_url", None)
            extra["base_urls"] = list(self.servers)
        if self.engine == "openai" and not extra.get("api_key"):
            env_key = os.environ.get("VIDOCR_API_KEY")
            if env_key:
                extra["api_key"] = env_key
        engine_options = dataclasses.replace(base.engine_options, extra=extra)
        if base.engine != self.engine:
            engine_options = dataclasses.replace(engine_options, batch_size=0)  # the new engine's own batch
        return dataclasses.replace(base, engine=self.engine, engine_options=engine_options)


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float, str)):
        return str(value)
    raise ConfigError(f"engine option values must be text, numbers or true/false, got {type(value).__name__}")
