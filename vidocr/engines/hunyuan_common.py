"""What every HunyuanOCR engine shares: model profiles, prompts, image preparation.

Pure Python + numpy/PIL: importable without torch or vllm. Output parsing lives in :mod:`vidocr.engines.vlm_output`.
A profile (``vidocr/profiles/<name>.yaml``, package data) names the model (local directory, hub id and pinned
revision), its prompt set, engine sizes and sampling; engine options override single fields.
"""

from __future__ import annotations

import dataclasses
import io
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import yaml
from PIL import Image

from vidocr.errors import ConfigError
from vidocr.types import Task

BOS = "<｜hy_begin▁of▁sentence｜>"
USER_END = "<｜hy_User｜>"
SYSTEM_END = "<｜hy_place▁holder▁no▁3｜>"
IMAGE_SPAN = "<｜hy_place▁holder▁no▁100｜><｜hy_place▁holder▁no▁102｜><｜hy_place▁holder▁no▁101｜>"

log = logging.getLogger("vidocr")

DEFAULT_PROFILE = "hunyuanocr-1.0"
# Profiles ship inside the package (package data), so an installed wheel finds them as a source checkout does.
PROFILE_DIRS = (Path(__file__).resolve().parents[1] / "profiles",)
# Images smaller than this on either side carry no readable text; they are answered without asking the model.
MIN_SIDE = 8


@dataclass(frozen=True)
class Sampling:
    temperature: float = 0.0
    top_k: int = 1
    max_tokens: int = 96
    repetition_penalty: float = 1.0
    ignore_eos: bool = False  # benchmarks only: fixed output length


@dataclass(frozen=True)
class ModelProfile:
    """One model + prompt set + engine sizes; see vidocr/profiles/*.yaml for the documented fields."""

    name: str
    model: str | None = None
    hub_id: str | None = None
    subfolder: str | None = None
    revision: str | None = None
    served_model_name: str | None = None
    dtype: str = "auto"
    gpu_memory_utilization: float = 0.85
    max_model_len: int = 4096
    max_num_seqs: int = 128
    tensor_parallel_size: int = 1
    batch_size: int = 64
    max_pixels: int = 1024 * 1024
    system_message: bool = True
    sampling: Sampling = field(default_factory=Sampling)
    prompts: Mapping[str, str] = field(default_factory=dict)
    translate_prompts: Mapping[str, str] = field(default_factory=dict)
    #: ``prompts.lang``: a subtitle prompt per ``--lang`` code, used instead of ``prompts.subtitle`` (optional).
    lang_prompts: Mapping[str, str] = field(default_factory=dict)
    vllm: Mapping[str, Any] = field(default_factory=dict)
    processor_kwargs: Mapping[str, Any] = field(default_factory=dict)

    def languages(self) -> list[str]:
        return sorted(self.translate_prompts)


_TOP_FIELDS = {f.name for f in dataclasses.fields(ModelProfile)} - {"sampling"}
_SAMPLING_FIELDS = {f.name for f in dataclasses.fields(Sampling)}
#: The profile fields that engine settings may replace (:func:`load_profile`'s ``overrides``).
PROFILE_OVERRIDES = frozenset((_TOP_FIELDS - {"prompts", "translate_prompts", "lang_prompts", "name"})
                              | _SAMPLING_FIELDS)


def find_profile(name: str) -> Path:
    """A profile path: ``name`` itself when it is a YAML file, else ``<name>.yaml`` in the profile directories."""
    as_path = Path(name)
    if as_path.suffix in (".yaml", ".yml") and as_path.is_file():
        return as_path
    for folder in PROFILE_DIRS:
        candidate = folder / f"{name}.yaml"
        if candidate.is_file():
            return candidate
    known = sorted({p.stem for d in PROFILE_DIRS if d.is_dir() for p in d.glob("*.yaml")})
    raise ConfigError(f"unknown model profile {name!r}; known: {', '.join(known) or 'none found'}")


def load_profile(name: str | None = None, overrides: Mapping[str, Any] | None = None) -> ModelProfile:
    """Read a profile and apply ``overrides`` (engine ``extra``: any top-level or sampling field; others ignored)."""
    path = find_profile(name or DEFAULT_PROFILE)
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except (OSError, yaml.YAMLError) as exc:
        raise ConfigError(f"cannot read model profile: {exc}", str(path)) from exc
    data.setdefault("name", path.stem)
    sampling = dict(data.pop("sampling", None) or {})
    prompts = dict(data.pop("prompts", None) or {})
    translate = prompts.pop("translate", None) or {}
    by_lang = {str(k).lower(): str(v) for k, v in (prompts.pop("lang", None) or {}).items()}
    unknown = (set(data) - _TOP_FIELDS - {"lang_prompts"}) | (set(sampling) - _SAMPLING_FIELDS)
    if unknown:
        raise ConfigError(f"unknown profile fields: {', '.join(sorted(unknown))}", str(path))
    for key, value in (overrides or {}).items():
        if value is None:
            continue
        if key in _SAMPLING_FIELDS:
            sampling[key] = _coerce(getattr(Sampling, key), value, key)
        elif key in PROFILE_OVERRIDES:
            data[key] = _coerce(data.get(key, getattr(ModelProfile, key, None)), value, key)
    try:
        return ModelProfile(**data, sampling=Sampling(**sampling), prompts=prompts, translate_prompts=translate,
                            lang_prompts=by_lang)
    except TypeError as exc:
        raise ConfigError(f"bad model profile: {exc}", str(path)) from exc


def _coerce(like: Any, value: Any, key: str) -> Any:
    """Command-line overrides arrive as strings: give them the type of the value they replace."""
    if not isinstance(value, str) or like is None or isinstance(like, str):
        return value
    try:
        if isinstance(like, bool):
            return value.strip().lower() in ("1", "true", "yes", "on")
        if isinstance(like, int | float):
            return type(like)(value)
    except ValueError:
        raise ConfigError(f"{key}: expected a {type(like).__name__}, got {value!r}") from None
    return value


def local_model_dir(profile: ModelProfile) -> str:
    """The profile's model as an existing local directory; never a hub download at run time."""
    if not profile.model:
        where = f" (hub: {profile.hub_id}" + (f", folder {profile.subfolder}" if profile.subfolder else "")
        where += f", revision {profile.revision})" if profile.revision else ")"
        raise ConfigError(f"profile {profile.name!r} needs a local model directory: pass model=DIR{where}")
    path = Path(profile.model).expanduser()
    if profile.subfolder and not (path / "config.json").is_file() and (path / profile.subfolder).is_dir():
        path = path / profile.subfolder
    if not (path / "config.json").is_file():
        raise ConfigError(f"not a model directory (no config.json): {path}")
    return str(path)


def question_for(profile: ModelProfile, task: Task, translate_to: str | None = None,
                 lang: Sequence[str] = ()) -> str:
    """The profile's prompt text for ``task`` (a clear error when its prompt set has none). For the subtitle task
    with ``lang`` (``--lang``), the profile's prompt for the first of those languages it has one for, if any."""
    if task is Task.TRANSLATE:
        if not translate_to:
            raise ConfigError("translation needs a target language ({param} LANG)", param="translate_to")
        lang = translate_to.lower()
        if lang not in profile.translate_prompts:
            able = ", ".join(profile.languages())
            raise ConfigError(f"profile {profile.name!r} cannot translate to {translate_to!r}; it can: {able}")
        return profile.translate_prompts[lang]
    hinted = lang_prompt(profile, lang) if task is Task.SUBTITLE else None
    if hinted:
        return hinted
    prompt = profile.prompts.get(task.value)
    if not prompt:
        raise ConfigError(f"profile {profile.name!r} has no prompt for task {task.value!r}")
    return prompt


def lang_prompt(profile: ModelProfile, lang: Sequence[str]) -> str | None:
    """The profile's subtitle prompt for the first of ``lang`` it has one for (``prompts.lang``), else None."""
    return next((profile.lang_prompts[code] for code in lang if code.lower() in profile.lang_prompts), None)


def announce_lang(engine: str, profile: ModelProfile, lang: Sequence[str]) -> None:
    """Say once, when an engine starts, whether ``--lang`` reaches the model: HunyuanOCR reads the languages it
    knows without a hint, and its official prompts take none, so ``--lang`` is used only where a profile adds a
    prompt for it (``prompts.lang``)."""
    if not lang:
        return
    hinted = lang_prompt(profile, lang)
    if hinted:
        log.info("%s: --lang %s: subtitle prompt %r", engine, ",".join(lang), hinted)
    else:
        log.warning("%s: --lang %s is not used: profile %s has no prompt for it (prompts.lang); the model reads "
                    "the languages it knows without a hint", engine, ",".join(lang), profile.name)


def raw_prompt(question: str, system_message: bool = True) -> str:
    """The prompt HunyuanOCR's chat template writes for [system "", user [image, question]]."""
    return BOS + (SYSTEM_END if system_message else "") + IMAGE_SPAN + question + USER_END


def chat_messages(question: str, image_url: str, system_message: bool = True) -> list[dict[str, Any]]:
    """OpenAI chat messages for one image (the server applies the model's chat template)."""
    user = {"role": "user", "content": [{"type": "image_url", "image_url": {"url": image_url}},
                                        {"type": "text", "text": question}]}
    return [{"role": "system", "content": ""}, user] if system_message else [user]


def too_small(image: np.ndarray) -> bool:
    return image.ndim < 2 or min(image.shape[:2]) < MIN_SIDE


def to_pil(image: np.ndarray, max_pixels: int | None = None) -> Image.Image:
    """BGR (or gray) uint8 array -> RGB PIL image, scaled down (aspect kept) to at most ``max_pixels``."""
    if image.dtype != np.uint8:
        raise ConfigError(f"engine input must be uint8, got {image.dtype}")
    if image.ndim == 2:
        pil = Image.fromarray(image).convert("RGB")
    else:
        pil = Image.fromarray(np.ascontiguousarray(image[:, :, 2::-1]))
    w, h = pil.size
    if max_pixels and w * h > max_pixels:
        scale = (max_pixels / (w * h)) ** 0.5
        pil = pil.resize((max(1, int(w * scale)), max(1, int(h * scale))), Image.Resampling.BICUBIC)
    return pil


def png_data_url(pil: Image.Image) -> str:
    import base64

    buf = io.BytesIO()
    pil.save(buf, format="PNG", compress_level=1)
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode("ascii")
