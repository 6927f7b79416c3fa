"""One option layer for every command that extracts.

:func:`add_extract_options` declares the extract options once (``extract``, ``index build`` and ``watch`` call it)
and :func:`extract_options_from_args` turns them into :class:`~vidocr.pipeline.ExtractOptions`, checking every
value before any work. Also where the index and the daemon's queue are (``--db``, ``--jobs-db``).
"""

from __future__ import annotations

import argparse
import math
import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from vidocr.config import default_db_path
from vidocr.errors import ConfigError

#: Engines that read a model profile (prompts, languages) and can translate.
PROFILE_ENGINES = frozenset({"hunyuan-vllm", "hunyuan-transformers", "openai"})
#: Upper limits of values that are certainly typos (a 16K frame is 15360 pixels wide; 10^7 s is 115 days).
MAX_PIXELS = 100_000
MAX_SECONDS = 1e7
_LANG = re.compile(r"^[A-Za-z]{2,3}([-_][A-Za-z0-9]{2,8})*$")
DB_DEFAULT_HELP = "$VIDOCR_DB, else $XDG_DATA_HOME/vidocr/library.sqlite (~/.local/share/vidocr/library.sqlite)"


def parse_time(text: str | float | int | None) -> float | None:
    """Seconds from ``12.5``, ``1:02.5`` or ``01:02:03.250`` (finite, 0 to 10^7)."""
    if text is None or text == "":
        return None
    bad = f"bad time {text!r}: use seconds or [HH:]MM:SS[.mmm]"
    if isinstance(text, bool):
        raise ConfigError(bad)
    if isinstance(text, (int, float)):
        seconds = float(text)
    else:
        try:
            parts = [float(p) for p in str(text).split(":")]
        except ValueError:
            raise ConfigError(bad) from None
        if len(parts) > 3 or any(not p >= 0 for p in parts):
            raise ConfigError(bad)
        seconds = 0.0
        for part in parts:
            seconds = seconds * 60 + part
    if not (math.isfinite(seconds) and 0 <= seconds <= MAX_SECONDS):
        raise ConfigError(f"bad time {text!r}: a number of seconds from 0 to {MAX_SECONDS:.0e}")
    return seconds


class _Accumulate(argparse._AppendAction):
    """``-f srt -f vtt`` (and ``-f srt,vtt``) accumulate; a value from a config file is replaced, not extended,
    by the first one on the command line."""

    def __call__(self, parser: Any, namespace: argparse.Namespace, values: Any, option_string: Any = None) -> None:
        current = getattr(namespace, self.dest, None)
        items = [] if current is None or current is self.default else list(current)
        items.append(values)
        setattr(namespace, self.dest, items)


#: What --lang does, the same for every command that extracts (extract, index build, watch).
LANG_HELP = (
    "language(s) or script(s) of the subtitles, which choose the recogniser: auto (default: chosen per video from "
    "its first lines), ISO 639 codes or script names (zh, ja, en, ko, ru, ar, th, hi, hangul, cyrillic...); "
    "PP-OCR reads zh/ja/en/Latin, Tesseract the others (its language pack must be installed); hunyuan-* engines "
    "take it as a prompt hint only where the profile has a prompt for it"
)


def add_extract_options(p: argparse.ArgumentParser, *, outputs: bool = True) -> None:
    """Every extract option, declared once: ``extract``, ``index build`` and ``watch`` take them all the same way.
    ``outputs``: also the options about subtitle files (``index build`` writes none)."""
    from vidocr.engines import engine_names

    g = p.add_argument_group("extraction")
    g.add_argument("--engine", default="rapidocr",
                   help=f"OCR engine: {', '.join(engine_names())} (default: rapidocr, the embedded CPU engine; "
                        "the others need extras or a server)")
    g.add_argument("--roi", help="one subtitle band x,y,w,h in pixels or fractions (overrides --zones)")
    g.add_argument("--zones", default="auto",
                   help="auto (every subtitle zone, default), bottom (one band, the classic result), top, "
                        "top,bottom, or boxes x,y,w,h;x,y,w,h")
    g.add_argument("--keep-static", action="store_true", help="keep static text (logos, watermarks) as cues")
    g.add_argument("--stream", type=int, metavar="N",
                   help="video stream to read, as ffprobe numbers them (Stream #0:N); default: the main one "
                        "(largest picture, never a cover picture)")
    g.add_argument("--start", help="start time (seconds or [HH:]MM:SS[.mmm])")
    g.add_argument("--end", help="end time (seconds or [HH:]MM:SS[.mmm])")
    g.add_argument("--sample-fps", type=float,
                   help="frames per second that drive change decisions, 0.1-1000 (default: every frame)")
    g.add_argument("--recheck", type=float, help="re-read a stable subtitle at most this often, seconds (2.0)")
    g.add_argument("--no-scene-cuts", action="store_true", help="do not re-read subtitles after shot cuts")
    g.add_argument("--fuse", type=float, metavar="SECONDS",
                   help="read an unsure read again on the mean of its crop over this many seconds of frames, "
                        "0-5 (0.3; 0: never; the CPU engine only)")
    g.add_argument("--no-polish", action="store_true",
                   help="do not read a cue whose reads were unsure again on the mean of its frames (the CPU engine "
                        "reads it by default)")
    g.add_argument("--workers", type=int,
                   help="OCR threads (rapidocr) or concurrent server requests (default: CPU cores)")
    g.add_argument("--batch-size", type=int, help="band crops per OCR call (default: the engine's)")
    g.add_argument("--task", choices=["subtitle", "text"], default="subtitle", help="what the engine reads")
    g.add_argument("--lang", action=_Accumulate, metavar="LANG", help=LANG_HELP + "; repeat or comma-separate")
    g.add_argument("--script", choices=["auto", "simplified", "traditional", "keep"], default="auto",
                   help="Chinese output script: auto (default: the video's own; a stray variant form the recogniser "
                        "returned, such as 別 in a simplified line, is converted), simplified, traditional, or keep "
                        "(characters as read)")
    g.add_argument("--translate", metavar="LANG", help="also translate to LANG (engines that can: hunyuan-*, openai)")
    g.add_argument("--model", help="model directory (hunyuan-* engines) or model name (openai)")
    g.add_argument("--profile", help="model profile (hunyuan-* engines): hunyuanocr-1.0, hunyuanocr-1.5 or a YAML file")
    g.add_argument("--server", action=_Accumulate, help="OpenAI-compatible base URL (repeatable; openai engine)")
    g.add_argument("--engine-opt", action=_Accumulate, metavar="KEY=VALUE",
                   help="engine-specific setting (repeatable)")
    if not outputs:
        return
    o = p.add_argument_group("outputs")
    o.add_argument("-o", "--output-dir", metavar="OUT",
                   help="folder for the outputs (default: beside each video); with one video, a file name "
                        "ending in .srt/.vtt/.json/.ass (format from it), or - for stdout")
    o.add_argument("-f", "--format", action=_Accumulate,
                   help="output format: srt (default), vtt, json, ass; repeat or comma-separate for several")
    o.add_argument("--bilingual", action="store_true", help="with --translate: original and translation in one cue")
    o.add_argument("--skip-existing", action="store_true", help="skip videos whose outputs all exist")


def _number(option: str, value: Any, low: float, high: float, kind: type = float) -> Any:
    """``value`` as ``kind`` within [low, high], else one clear line (NaN, inf and 1e300 included)."""
    try:
        number = kind(value)
    except (TypeError, ValueError, OverflowError):
        raise ConfigError(f"{option} must be a number from {low:g} to {high:g}, got {value!r}") from None
    if not (math.isfinite(number) and low <= number <= high):
        raise ConfigError(f"{option} must be a number from {low:g} to {high:g}, got {value!r}")
    return number


def check_box(spec: str, option: str) -> None:
    """A region ``x,y,w,h`` in pixels (w, h >= 8) or fractions of the frame (all <= 1 with a decimal point):
    four finite non-negative numbers with a width and height, checked before any video is opened (the frame
    size check comes with each video)."""
    parts = [p.strip() for p in spec.split(",")]
    usage = f"{option} must be x,y,w,h (pixels, or fractions like 0,0.8,1,0.2), got {spec!r}"
    if len(parts) != 4:
        raise ConfigError(usage)
    try:
        values = [float(p) for p in parts]
    except ValueError:
        raise ConfigError(usage) from None
    if not all(math.isfinite(v) and 0 <= v <= MAX_PIXELS for v in values):
        raise ConfigError(f"{option} values must be finite numbers from 0 to {MAX_PIXELS}, got {spec!r}")
    fractional = all(v <= 1.0 for v in values) and any("." in p for p in parts)
    x, y, w, h = values
    if fractional and (w <= 0 or h <= 0 or x >= 1 or y >= 1):
        raise ConfigError(f"{option} {spec!r} has no area inside the frame (fractions: x, y < 1; w, h > 0)")
    if not fractional and (w < 8 or h < 8):
        raise ConfigError(f"{option} {spec!r} is too small: width and height of at least 8 pixels")


def check_zones(spec: str) -> str:
    from vidocr.region import ZONE_MODES

    mode = spec.strip().lower()
    if mode in ZONE_MODES:
        return mode
    if not any(ch.isdigit() for ch in mode):
        raise ConfigError(f"--zones must be one of {', '.join(ZONE_MODES)} or boxes x,y,w,h;x,y,w,h, got {spec!r}")
    boxes = [part for part in mode.split(";") if part.strip()]
    if not boxes:
        raise ConfigError(f"--zones has no box: {spec!r}")
    for box in boxes:
        check_box(box, "--zones")
    return mode


def lang_stored_help(p: argparse.ArgumentParser) -> None:
    """``index build`` and ``watch``: --lang (declared by add_extract_options, as extract has it) is also stored."""
    p._option_string_actions["--lang"].help = LANG_HELP + (
        "; repeat or comma-separate; also stored on the index tracks (search --lang): the codes as given, "
        "normalised, comma-separated; none with auto")


def stored_lang(langs: Sequence[str]) -> str | None:
    """The track language an index records for ``--lang`` (normalised codes, comma-separated; None: auto)."""
    return ",".join(langs) or None


def extract_options_from_args(args: argparse.Namespace) -> Any:
    """ExtractOptions from parsed CLI/config values, every value checked here, once, before any video is opened
    (used by extract, index build and watch)."""
    from vidocr.detect import DetectOptions
    from vidocr.engines import EngineOptions, load_engine_class
    from vidocr.langs import check_langs, parse_langs
    from vidocr.pipeline import ExtractOptions, check_task
    from vidocr.types import Task

    engine = str(getattr(args, "engine", None) or "rapidocr")
    extra: dict[str, Any] = {}
    for item in getattr(args, "engine_opt", None) or []:
        key, sep, value = str(item).partition("=")
        if not sep or not key.strip():
            raise ConfigError(f"--engine-opt needs KEY=VALUE, got {item!r}")
        extra[key.strip()] = value.strip()
    for name in ("model", "profile"):
        if getattr(args, name, None):
            extra[name] = getattr(args, name)
    if getattr(args, "server", None):
        extra["base_urls"] = list(args.server)
    if engine == "openai" and not extra.get("api_key"):
        # The library reads no environment: the key comes from here (api_key_env names another variable).
        env_key = os.environ.get(str(extra.pop("api_key_env", None) or "VIDOCR_API_KEY"))
        if env_key:
            extra["api_key"] = env_key
    from vidocr.engines.settings import check_settings

    extra = check_settings(engine, extra)  # an unknown key (retires=2) is one line naming the valid ones
    translate = getattr(args, "translate", None)
    if translate is not None and not _LANG.match(str(translate)):
        raise ConfigError(f"--translate needs a language code like en, zh or pt-BR, got {translate!r}")
    if getattr(args, "bilingual", False) and not translate:
        raise ConfigError("--bilingual puts a translation under each cue: it needs --translate LANG")
    task = Task.TRANSLATE if translate else Task(getattr(args, "task", None) or "subtitle")
    detect_kwargs: dict[str, Any] = {}
    if getattr(args, "sample_fps", None) is not None:
        detect_kwargs["sample_fps"] = _number("--sample-fps", args.sample_fps, 0.1, 1000)
    if getattr(args, "recheck", None) is not None:
        detect_kwargs["recheck_s"] = _number("--recheck", args.recheck, 0.1, 86400)
    if getattr(args, "no_scene_cuts", False):
        detect_kwargs["scene_cuts"] = False
    fuse = getattr(args, "fuse", None)
    fuse_s = ExtractOptions.fuse_s if fuse is None else _number("--fuse", fuse, 0, 5)
    workers = _number("--workers", getattr(args, "workers", None) or 0, 0, 1024, int)
    batch_size = _number("--batch-size", getattr(args, "batch_size", None) or 0, 0, 4096, int)
    start, end = parse_time(getattr(args, "start", None)), parse_time(getattr(args, "end", None))
    if start is not None and end is not None and end <= start:
        raise ConfigError(f"--end ({end:g} s) must be after --start ({start:g} s)")
    roi = getattr(args, "roi", None)
    if roi is not None:
        check_box(str(roi).replace(";", ","), "--roi")
    zones = check_zones(str(getattr(args, "zones", None) or "auto"))
    stream = getattr(args, "stream", None)
    if stream is not None:
        stream = _number("--stream", stream, 0, 65535, int)
    check_task(engine, task, translate)
    load_engine_class(engine)  # a missing extra is one line now (exit 4), not every video's failure
    lang = parse_langs(getattr(args, "lang", None))
    if engine == "rapidocr":
        check_langs(lang)  # a missing language pack is one line naming the apt package (exit 2)
    if engine in PROFILE_ENGINES:
        from vidocr.engines.hunyuan_common import load_profile, question_for

        profile = load_profile(extra.get("profile"), extra)
        question_for(profile, task, translate)  # an unknown profile or language is refused now
    return ExtractOptions(
        engine=engine,
        engine_options=EngineOptions(workers=workers, batch_size=batch_size, translate_to=translate, extra=extra,
                                     lang=lang),
        task=task,
        translate_to=translate,
        roi=roi,
        zones=zones,
        keep_static=bool(getattr(args, "keep_static", False)),
        start=start,
        end=end,
        detect=DetectOptions(**detect_kwargs),
        stream=stream,
        lang=lang,
        script=str(getattr(args, "script", None) or "auto"),
        fuse_s=fuse_s,
        polish=not getattr(args, "no_polish", False),
    )


def parse_format_args(value: str | Sequence[str] | None) -> list[str]:
    """``-f`` values (repeated and/or comma-separated; a config list or string) -> format names (default srt)."""
    from vidocr.formats import parse_formats

    if value is None:
        return ["srt"]
    items = [value] if isinstance(value, str) else list(value)
    return parse_formats([name for item in items for name in str(item).split(",")])


def db_path(args: argparse.Namespace) -> str:
    """``--db``, else the default index location shared by index, search, watch and jobs."""
    return str(args.db) if getattr(args, "db", None) else str(default_db_path())


def index_path(args: argparse.Namespace) -> Path | None:
    """The index the daemon keeps: ``--db``, else the default location, unless only ``--jobs-db`` was given."""
    if getattr(args, "db", None):
        return Path(args.db)
    return None if getattr(args, "jobs_db", None) else default_db_path()


def jobs_db_path(args: argparse.Namespace) -> Path:
    if getattr(args, "jobs_db", None):
        return Path(args.jobs_db)
    return Path(f"{index_path(args)}.jobs")
