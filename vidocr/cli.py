"""The ``vidocr`` command line: a thin layer over :func:`vidocr.extract` (and the index/daemon APIs).

One option layer for every command that extracts: :func:`add_extract_options` declares the extract options once
(``extract``, ``index build`` and ``watch`` call it) and :func:`extract_options_from_args` turns them into
:class:`~vidocr.pipeline.ExtractOptions`, checking every value before any work. One output rule
(:func:`plan_outputs`) and one exit-code table (:data:`EXIT_CODES`, printed by every ``--help``).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import math
import os
import re
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO, cast

from vidocr import __version__
from vidocr.console import Console, FileProgress, stage_times, summary_table
from vidocr.errors import ConfigError, OutputError, VidocrError, display_path

log = logging.getLogger("vidocr")

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

SUBTITLE_EXTENSIONS = (".srt", ".vtt", ".json", ".ass")
#: Engines that read a model profile (prompts, languages) and can translate.
PROFILE_ENGINES = frozenset({"hunyuan-vllm", "hunyuan-transformers", "openai"})
#: Upper limits of values that are certainly typos (a 16K frame is 15360 pixels wide; 10^7 s is 115 days).
MAX_PIXELS = 100_000
MAX_SECONDS = 1e7
_LANG = re.compile(r"^[A-Za-z]{2,3}([-_][A-Za-z0-9]{2,8})*$")


def exit_codes_epilog() -> str:
    return "exit codes:\n" + "\n".join(f"  {code:>3}  {text}" for code, text in EXIT_CODES)


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
    g.add_argument("--workers", type=int,
                   help="OCR threads (rapidocr) or concurrent server requests (default: CPU cores)")
    g.add_argument("--batch-size", type=int, help="band crops per OCR call (default: the engine's)")
    g.add_argument("--task", choices=["subtitle", "text"], default="subtitle", help="what the engine reads")
    if "--lang" not in p._option_string_actions:  # index build and watch declare it (also stored on tracks)
        g.add_argument("--lang", action=_Accumulate, metavar="LANG",
                       help="language(s) or script(s) of the subtitles: auto (default: chosen per video), ISO "
                            "639 codes or script names (zh, ja, en, ko, ru, ar, th, hi, hangul, cyrillic...; repeat "
                            "or comma-separate)")
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


EXTRACT_EPILOG = """\
examples:
  vidocr extract film.mkv                          film.srt beside the video
  vidocr extract film.mkv -o subs/film.vtt         that one file (format from the extension)
  vidocr extract film.mkv -o - -f vtt | less       one format to stdout
  vidocr extract ~/Videos -o subs -f srt -f json   every video under ~/Videos (recursive), two formats each
  vidocr extract film.mkv --zones top,bottom --start 1:00 --end 2:30 -v
  vidocr extract film.mkv --engine hunyuan-vllm --model ~/models/HunyuanOCR --translate en --bilingual
"""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="vidocr", description="Extract burned-in subtitles from videos.",
                                     epilog=exit_codes_epilog(), formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"vidocr {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    ext = sub.add_parser(
        "extract", help="extract subtitles from video files and folders",
        description="Extract burned-in subtitles from videos into subtitle files (default: SRT beside each video).",
        epilog=EXTRACT_EPILOG + "\n" + exit_codes_epilog(), formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ext.add_argument("paths", nargs="+", metavar="PATH", help="video files, folders (recursive) or globs")
    ext.add_argument("--config", help="YAML file with option defaults (keys: long option names)")
    ext.add_argument("-q", "--quiet", action="store_true", help="no progress bar or per-file lines")
    ext.add_argument("-v", "--verbose", action="store_true", help="log details; per video: zones, frames, reads")
    ext.add_argument("--json", action="store_true", help="print a JSON summary on stdout")
    add_extract_options(ext)
    _add_optional_commands(sub)
    return parser


def _add_optional_commands(sub: Any) -> None:
    """Commands that live in their own modules (index/search, watch), added when present."""
    try:
        from vidocr.index.cli import add_index_parsers
    except ImportError:
        pass
    else:
        add_index_parsers(sub)
    try:
        from vidocr.daemon.cli import add_watch_parsers
    except ImportError:
        pass
    else:
        add_watch_parsers(sub)


#: The config file section each command reads (besides the top-level keys).
_SECTIONS = {"extract": "extract", "index": "index", "search": "search", "watch": "watch", "jobs": "watch"}
#: Commands that read another command's section for a few keys only (where that command's queue or index is).
_BORROWED = {("jobs",): {"db", "jobs_db"}, ("index", "status"): {"db"}}


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

    top, section = load_config_parts(known.config, _SECTIONS.get(command, command))
    sub, path = _leaf_parser(parser, argv)
    actions = {a.dest: a for a in sub._actions if a.dest not in ("help", "config", "version")}
    stray = sorted(set(top) - _all_dests(parser))
    if stray:
        raise ConfigError(f"unknown option(s) in config: {', '.join(stray)}", known.config)
    values = {k: v for k, v in top.items() if k in actions}
    borrowed = _BORROWED.get(tuple(path))
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


def _leaf_parser(parser: argparse.ArgumentParser, argv: Sequence[str]) -> tuple[argparse.ArgumentParser, list[str]]:
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
    )


def parse_format_args(value: str | Sequence[str] | None) -> list[str]:
    """``-f`` values (repeated and/or comma-separated; a config list or string) -> format names (default srt)."""
    from vidocr.formats import parse_formats

    if value is None:
        return ["srt"]
    items = [value] if isinstance(value, str) else list(value)
    return parse_formats([name for item in items for name in str(item).split(",")])


@dataclass(frozen=True)
class OutputPlan:
    """Where a run's subtitles go: beside each video, a folder, one named file, or stdout (``-o -``)."""

    formats: list[str]
    folder: Path | None = None
    file: Path | None = None
    stdout: bool = False

    def target(self, video: Path) -> tuple[Path, str]:
        """(folder, stem) of ``video``'s outputs: ``<folder>/<stem>.<ext>``."""
        from vidocr.files import output_stem

        if self.file is not None:
            return self.file.parent, self.file.name[: -len(self.file.suffix)]
        return (self.folder or video.parent), output_stem(video)


def plan_outputs(args: argparse.Namespace, videos: Sequence[Path]) -> OutputPlan:
    """The one output-path rule, applied before any video is decoded."""
    explicit = getattr(args, "format", None) is not None
    formats = parse_format_args(getattr(args, "format", None))
    out = getattr(args, "output_dir", None)
    if out is None or out == "":
        return OutputPlan(formats)
    out = str(out)
    if out == "-":
        if len(videos) != 1:
            raise ConfigError(f"-o - writes one video's subtitles to stdout; {len(videos)} videos given")
        if len(formats) != 1:
            raise ConfigError(f"-o - writes one format to stdout; {len(formats)} given ({','.join(formats)})")
        if getattr(args, "translate", None) and not getattr(args, "bilingual", False):
            raise ConfigError("-o - writes one track to stdout: add --bilingual to have the translation in it")
        if getattr(args, "json", False):
            raise ConfigError("-o - writes the subtitles to stdout: --json cannot print there too")
        return OutputPlan(formats, stdout=True)
    path = Path(out)
    suffix = path.suffix.lower()
    if path.is_dir():
        return OutputPlan(formats, folder=path)
    if suffix in SUBTITLE_EXTENSIONS:
        if len(videos) != 1:
            raise ConfigError(f"-o {out} names one subtitle file, but {len(videos)} videos were found: "
                              "give a folder")
        fmt = suffix[1:]
        if explicit and formats != [fmt]:
            raise ConfigError(f"-o {out} is a .{fmt} file; -f asks for {','.join(formats)}")
        _check_writable(path.parent)
        return OutputPlan([fmt], file=path)
    if path.exists():
        raise ConfigError(f"-o {out} is a file, not a folder (a single video's file must end in "
                          f"{'/'.join(SUBTITLE_EXTENSIONS)})")
    _check_writable(path)
    return OutputPlan(formats, folder=path)


def _check_writable(folder: Path) -> None:
    """Refuse, before any work, an output folder that cannot be created or written."""
    probe = folder.absolute()
    while not probe.exists() and probe.parent != probe:
        probe = probe.parent
    if not probe.is_dir():
        raise OutputError(f"cannot create the output folder: {probe} is a file", str(folder))
    if not os.access(probe, os.W_OK | os.X_OK):
        raise OutputError(f"cannot write output: permission denied in {probe}", str(folder))


@dataclass
class FileResult:
    path: str
    status: str  # "ok", "empty", "failed", "skipped"
    cues: int = 0
    outputs: list[str] = field(default_factory=list)
    error: str | None = None
    seconds: float = 0.0
    stats: dict[str, Any] = field(default_factory=dict)
    usage_error: bool = False  # the options do not fit this video (a --roi outside its frame...)


def run_extract(args: argparse.Namespace) -> int:
    from vidocr.discover import iter_videos, overwrites_input
    from vidocr.extractor import Extractor

    parse_format_args(getattr(args, "format", None))  # a bad -f is refused before the folders are walked
    options = extract_options_from_args(args)
    videos = list(iter_videos(args.paths))
    if not videos:
        raise ConfigError(f"no video files found in: {' '.join(args.paths)}")
    plan = plan_outputs(args, videos)
    results: list[FileResult] = []
    claimed: dict[Path, Path] = {}
    started = time.monotonic()
    # Every line of the run (also the engine's loading lines and log records) goes through the console, so none
    # is glued to a progress bar.
    console = Console(sys.stderr, quiet=args.quiet)
    extractor = Extractor(options, loading_to=None if args.quiet else cast(TextIO, console))
    logged = _log_to(cast(TextIO, console))
    try:
        for number, video in enumerate(videos, 1):
            counter = f"[{number}/{len(videos)}] " if len(videos) > 1 else ""
            clash = _claim(video, plan, claimed)
            if clash is None and not plan.stdout:
                clash = overwrites_input(video, *plan.target(video), plan.formats, options.translate_to, videos)
            if clash is not None:
                console.line(f"error: {clash}", always=True)
                results.append(FileResult(str(video), "failed", error=clash))
                continue
            if args.skip_existing and not plan.stdout and _outputs_exist(video, plan):
                results.append(FileResult(str(video), "skipped"))
                continue
            results.append(_extract_one(video, extractor, plan, args, console, counter))
    finally:
        console.clear()
        _log_to(None, logged)
        extractor.close()
    return _summarise(results, time.monotonic() - started, args, console)


def _log_to(stream: TextIO | None, swapped: list[tuple[logging.StreamHandler[Any], Any]] | None = None,
            ) -> list[tuple[logging.StreamHandler[Any], Any]]:
    """Point vidocr's stderr log handlers at ``stream`` (returns what to give back), or, with ``swapped``,
    back where they were."""
    if swapped is not None:
        for moved_handler, old in swapped:
            moved_handler.setStream(old)
        return []
    moved = []
    for handler in logging.getLogger("vidocr").handlers:
        if isinstance(handler, logging.StreamHandler) and handler.stream is sys.stderr and stream is not None:
            moved.append((handler, handler.stream))
            handler.setStream(stream)
    return moved


def _outputs_exist(video: Path, plan: OutputPlan) -> bool:
    from vidocr.files import outputs_exist

    return outputs_exist(*plan.target(video), plan.formats)


def _claim(video: Path, plan: OutputPlan, claimed: dict[Path, Path]) -> str | None:
    """Refuse a second video of this run whose outputs would land on the first one's (same name in
    two folders, one ``-o``): an error for it, never an overwrite."""
    folder, stem = plan.target(video)
    first = claimed.setdefault((folder / stem).absolute(), video)
    if first is video:
        return None
    return (
        f"{video}: its subtitles would overwrite those of {first} (same name, one output folder "
        f"{folder}); run the folders with separate -o"
    )


def _extract_one(video: Path, extractor: Any, plan: OutputPlan, args: argparse.Namespace, console: Console,
                 counter: str = "") -> FileResult:
    """One video: extract, write, and one line saying what came of it (``counter``: "[3/12] " in a batch)."""
    from vidocr.formats import write_outputs

    options = extractor.options
    t0 = time.monotonic()
    shown_name = display_path(str(video))
    bar = FileProgress(console, counter + display_path(video.name)) if console.tty else None
    try:
        cues_iter, info = extractor(video, progress=bar)
        try:
            cues = list(cues_iter)
        except VidocrError:
            duration = info.duration_s
            if options.start is not None and duration and options.start >= duration:
                raise ConfigError(f"--start {options.start:g} s is after the end of the video ({duration:.1f} s)",
                                  str(video)) from None
            raise
        if not cues:
            console.clear()
            band = info.stats.get("band")
            where = ",".join(str(v) for v in band) if band else "?"
            reason = f"no subtitles found in region x,y,w,h={where} ({info.stats.get('band_source')})"
            console.line(f"{counter}{shown_name}: {reason}; no file written")
            _verbose(console, args, video, info.stats, 0.0, t0)
            return FileResult(str(video), "empty", 0, [], reason, time.monotonic() - t0, info.stats)
        bilingual = bool(getattr(args, "bilingual", False))
        written_at = time.perf_counter()
        if plan.stdout:
            _write_stdout(cues, info, plan.formats[0], bilingual)
            written = ["-"]
        else:
            folder, stem = plan.target(video)
            paths = write_outputs(cues, info, folder, stem, plan.formats, translate_to=options.translate_to,
                                  bilingual_cues=bilingual)
            written = [str(p) for p in paths]
        write_s = time.perf_counter() - written_at
        result = FileResult(str(video), "ok", len(cues), written, None, time.monotonic() - t0, info.stats)
        console.clear()
        shown = "stdout" if plan.stdout else ", ".join(display_path(w) for w in written)
        console.line(f"{counter}{shown_name}: {len(cues)} cues -> {shown}")
        _verbose(console, args, video, info.stats, write_s, t0)
        return result
    except VidocrError as exc:
        console.clear()
        if _stops_the_run(exc, extractor):
            raise  # every later video would fail the same way: one line, exit 4
        message = str(exc) if exc.path else f"{shown_name}: {exc}"
        console.line(f"error: {message}", always=True)
        return FileResult(str(video), "failed", error=message, seconds=time.monotonic() - t0,
                          usage_error=isinstance(exc, ConfigError))
    except Exception as exc:  # noqa: BLE001 - a bug on one video must not stop the batch nor print a traceback
        console.clear()
        log.debug("internal error on %s", video, exc_info=True)
        message = f"{shown_name}: internal error: {type(exc).__name__}: {exc} (details with -v)"
        console.line(f"error: {message}", always=True)
        return FileResult(str(video), "failed", error=message, seconds=time.monotonic() - t0)


def _verbose(console: Console, args: argparse.Namespace, video: Path, stats: dict[str, Any], write_s: float,
             t0: float) -> None:
    """-v: the zones found and what was read, then the time of each stage."""
    if getattr(args, "verbose", False):
        console.line(_report_line(video, stats))
        console.line(f"{display_path(str(video))}: {stage_times(stats, write_s, time.monotonic() - t0)}")


def _stops_the_run(exc: VidocrError, extractor: Any) -> bool:
    """An engine that could not start, or OCR servers that cannot be reached: every later video would fail the
    same way (after the same wait), so the run stops on that one line (exit 4)."""
    from vidocr.errors import EngineError

    if not isinstance(exc, EngineError):
        return False
    from vidocr.engines.openai_client import ServerUnreachable

    return isinstance(exc, ServerUnreachable) or getattr(extractor, "engine_error", None) is not None


def _write_stdout(cues: Sequence[Any], info: Any, fmt: str, bilingual: bool) -> None:
    from vidocr.formats import bilingual as with_translation
    from vidocr.formats import get_writer

    ordered = sorted(cues, key=lambda c: (c.start_ms, c.end_ms))
    sys.stdout.write(get_writer(fmt).render(with_translation(ordered) if bilingual else ordered, info))
    sys.stdout.flush()


def _report_line(video: Path, stats: dict[str, Any]) -> str:
    """The per-video report of --verbose: zones found, static texts suppressed, frames read."""
    zones = "; ".join(
        f"{z['name']} {','.join(str(v) for v in z['box'])} ({z['source']}{', colour masks' if z.get('colour') else ''})"
        for z in stats.get("zones", [])
    )
    return (
        f"{display_path(str(video))}: zones: {zones or 'none'}; "
        f"static texts suppressed: {stats.get('static_texts', 0)} "
        f"({stats.get('static_lines_dropped', 0)} lines dropped); frames decoded: {stats.get('frames', 0)}, "
        f"read by OCR: {stats.get('frames_read', 0)} ({stats.get('ocr_confirmed', 0)} re-reads confirmed "
        f"without detection); scene cuts: {stats.get('scene_cuts', 0)}; "
        f"corrupt frames: {stats.get('corrupt_frames', 0)}"
    )


def _summarise(results: list[FileResult], seconds: float, args: argparse.Namespace,
               console: Console | None = None) -> int:
    counts = {s: sum(1 for r in results if r.status == s) for s in ("ok", "empty", "failed", "skipped")}
    cues = sum(r.cues for r in results)
    if args.json:
        doc = {
            "files": [r.__dict__ for r in results],
            "counts": counts,
            "cues": cues,
            "seconds": round(seconds, 3),
        }
        print(json.dumps(doc, ensure_ascii=False, indent=2, default=str))
    console = console or Console(sys.stderr, quiet=args.quiet)
    if len(results) > 1:
        for row in summary_table(results, console.width()):
            console.line(row)
    console.line(
        f"vidocr: {len(results)} file(s): {counts['ok']} ok, {counts['empty']} without subtitles, "
        f"{counts['failed']} failed, {counts['skipped']} skipped; {cues} cues in {seconds:.1f}s"
    )
    failed = [r for r in results if r.status == "failed"]
    if not failed:
        return 0
    # Options that fit none of the videos (a --roi outside every frame, --start after every end) are a usage error.
    return 2 if len(failed) == len(results) and all(r.usage_error for r in failed) else 1


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    try:
        command = next((a for a in argv if not a.startswith("-")), None)
        if command in _SECTIONS:
            apply_config(parser, argv, command)
        args = _parse(parser, argv)
        if args.command is None:
            parser.print_help(sys.stderr)
            return 2
        _setup_logging(getattr(args, "verbose", False), getattr(args, "quiet", False))
        if args.command == "extract":
            return run_extract(args)
        handler = getattr(args, "handler", None)
        if handler is None:
            parser.print_help(sys.stderr)
            return 2
        return int(handler(args))
    except VidocrError as exc:
        print(f"error: {exc}", file=sys.stderr)
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


#: Put before a search's ``-word`` while argparse reads the command line (no argument can hold a NUL).
_SHIELD = "\x00"


def _parse(parser: argparse.ArgumentParser, argv: list[str]) -> argparse.Namespace:
    """``parse_args``, except that ``search`` takes ``-word`` (exclude a word) anywhere after its first word,
    where argparse would take it for an unknown option (and every word after it for stray arguments)."""
    command = next((a for a in argv if not a.startswith("-")), None)
    if command != "search":
        return parser.parse_args(argv)
    options = _leaf_parser(parser, argv)[0]._option_string_actions
    words = list(argv)
    pos = argv.index(command) + 1
    while pos < len(words) and words[pos] != "--":
        word = words[pos]
        action = options.get(word)
        if action is not None:
            pos += 1 if action.nargs == 0 else 2  # an option's value is not a query word
            continue
        if len(word) > 1 and word.startswith("-") and not word.startswith("--"):
            words[pos] = _SHIELD + word
        pos += 1
    args = parser.parse_args(words)
    args.query = [word.removeprefix(_SHIELD) for word in args.query]
    return args


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


if __name__ == "__main__":
    raise SystemExit(main())
