"""The ``vidocr`` command line: a thin layer over :func:`vidocr.extract` (and the index/daemon APIs)."""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vidocr import __version__
from vidocr.errors import ConfigError, VidocrError

log = logging.getLogger("vidocr")


def parse_time(text: str | float | int | None) -> float | None:
    """Seconds from ``12.5``, ``1:02.5`` or ``01:02:03.250``."""
    if text is None or text == "":
        return None
    if isinstance(text, (int, float)):
        return float(text)
    try:
        parts = [float(p) for p in str(text).split(":")]
    except ValueError:
        raise ConfigError(f"bad time {text!r}: use seconds or [HH:]MM:SS[.mmm]") from None
    if len(parts) > 3 or any(p < 0 for p in parts):
        raise ConfigError(f"bad time {text!r}: use seconds or [HH:]MM:SS[.mmm]")
    seconds = 0.0
    for part in parts:
        seconds = seconds * 60 + part
    return seconds


def _add_extract_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("-o", "--output-dir", help="folder for the outputs (default: beside each video)")
    p.add_argument("-f", "--format", default="srt", help="output formats, comma-separated: srt,vtt,json,ass")
    p.add_argument("--engine", default="rapidocr", help="OCR engine (default: rapidocr, the embedded CPU engine)")
    p.add_argument("--roi", help="one subtitle band x,y,w,h in pixels or fractions (overrides --zones)")
    p.add_argument("--zones", default="auto",
                   help="auto (every subtitle zone), bottom (one band, the classic result), top, top,bottom, "
                        "or boxes x,y,w,h;x,y,w,h")
    p.add_argument("--keep-static", action="store_true", help="keep static text (logos, watermarks) as cues")
    p.add_argument("--start", help="start time (seconds or [HH:]MM:SS[.mmm])")
    p.add_argument("--end", help="end time (seconds or [HH:]MM:SS[.mmm])")
    p.add_argument("--sample-fps", type=float, help="frames per second that drive change decisions (default: all)")
    p.add_argument("--recheck", type=float, help="re-read a stable subtitle at most this often, seconds (2.0)")
    p.add_argument("--no-scene-cuts", action="store_true", help="do not re-read subtitles after shot cuts")
    p.add_argument("--workers", type=int, help="OCR processes / concurrent requests (default: CPU cores)")
    p.add_argument("--batch-size", type=int, help="band crops per OCR call (default: the engine's)")
    p.add_argument("--task", choices=["subtitle", "text"], default="subtitle", help="what the engine reads")
    p.add_argument("--translate", metavar="LANG", help="also translate to LANG (engines that can: hunyuan-*, openai)")
    p.add_argument("--bilingual", action="store_true", help="with --translate: original and translation in one cue")
    p.add_argument("--model", help="model directory (hunyuan-* engines) or model name (openai)")
    p.add_argument("--profile", help="model profile (hunyuan-* engines): hunyuanocr-1.0, hunyuanocr-1.5 or a YAML file")
    p.add_argument("--server", action="append", help="OpenAI-compatible base URL (repeatable; openai engine)")
    p.add_argument("--engine-opt", action="append", metavar="KEY=VALUE", help="engine-specific setting (repeatable)")
    p.add_argument("--skip-existing", action="store_true", help="skip videos whose outputs all exist")
    p.add_argument("--json", action="store_true", help="print a JSON summary on stdout")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="vidocr", description="Extract burned-in subtitles from videos.")
    parser.add_argument("--version", action="version", version=f"vidocr {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    ext = sub.add_parser("extract", help="extract subtitles from video files and folders")
    ext.add_argument("paths", nargs="+", metavar="PATH", help="video files, folders (recursive) or globs")
    ext.add_argument("--config", help="YAML file with option defaults (keys: long option names)")
    ext.add_argument("-q", "--quiet", action="store_true", help="no progress bar or per-file lines")
    ext.add_argument("-v", "--verbose", action="store_true", help="log details")
    _add_extract_options(ext)
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


def apply_config(parser: argparse.ArgumentParser, argv: Sequence[str], command: str) -> None:
    """Load ``--config`` (if given) as defaults of the (sub)command named in ``argv``, so explicit
    options still win. The file's section named after the top command applies (``extract:``...)."""
    pre = argparse.ArgumentParser(add_help=False)
    pre.add_argument("--config")
    known, _ = pre.parse_known_args(argv)
    if not known.config:
        return
    from vidocr.config import load_config

    values = load_config(known.config, "watch" if command == "jobs" else command)
    sub = _leaf_parser(parser, argv)
    valid = {a.dest for a in sub._actions}
    if command == "jobs":  # the daemon's config says where its queue is; its other keys are the daemon's
        values = {k: v for k, v in values.items() if k in {"db", "jobs_db"}}
    unknown = sorted(set(values) - valid)
    if unknown:
        raise ConfigError(f"unknown option(s) in config: {', '.join(unknown)}", known.config)
    if isinstance(values.get("format"), list):
        values["format"] = ",".join(values["format"])
    for name in ("server", "engine_opt"):
        if isinstance(values.get(name), str):
            values[name] = [values[name]]
    sub.set_defaults(**values)


def _leaf_parser(parser: argparse.ArgumentParser, argv: Sequence[str]) -> argparse.ArgumentParser:
    """The parser of the deepest subcommand named in ``argv`` (``index build`` -> its parser)."""
    current = parser
    for token in argv:
        if token.startswith("-"):
            continue
        subs = [a for a in current._actions if isinstance(a, argparse._SubParsersAction)]
        if not subs or token not in subs[0].choices:
            break
        current = subs[0].choices[token]
    return current


def extract_options_from_args(args: argparse.Namespace) -> Any:
    """ExtractOptions from parsed CLI/config values (shared with the daemon)."""
    from vidocr.detect import DetectOptions
    from vidocr.engines import EngineOptions
    from vidocr.pipeline import ExtractOptions
    from vidocr.types import Task

    extra: dict[str, Any] = {}
    for item in getattr(args, "engine_opt", None) or []:
        key, sep, value = str(item).partition("=")
        if not sep or not key:
            raise ConfigError(f"--engine-opt needs KEY=VALUE, got {item!r}")
        extra[key.strip()] = value.strip()
    for name in ("model", "profile"):
        if getattr(args, name, None):
            extra[name] = getattr(args, name)
    if getattr(args, "server", None):
        extra["base_urls"] = list(args.server)
    translate = getattr(args, "translate", None)
    task = Task.TRANSLATE if translate else Task(getattr(args, "task", "subtitle") or "subtitle")
    detect_kwargs: dict[str, Any] = {}
    if getattr(args, "sample_fps", None):
        detect_kwargs["sample_fps"] = float(args.sample_fps)
    if getattr(args, "recheck", None):
        detect_kwargs["recheck_s"] = float(args.recheck)
    if getattr(args, "no_scene_cuts", False):
        detect_kwargs["scene_cuts"] = False
    start, end = parse_time(getattr(args, "start", None)), parse_time(getattr(args, "end", None))
    if start is not None and end is not None and end <= start:
        raise ConfigError("--end must be after --start")
    return ExtractOptions(
        engine=args.engine,
        engine_options=EngineOptions(
            workers=int(args.workers or 0), batch_size=int(args.batch_size or 0), translate_to=translate, extra=extra
        ),
        task=task,
        translate_to=translate,
        roi=args.roi,
        zones=str(getattr(args, "zones", None) or "auto"),
        keep_static=bool(getattr(args, "keep_static", False)),
        start=start,
        end=end,
        detect=DetectOptions(**detect_kwargs),
    )


@dataclass
class FileResult:
    path: str
    status: str  # "ok", "empty", "failed", "skipped"
    cues: int = 0
    outputs: list[str] = field(default_factory=list)
    error: str | None = None
    seconds: float = 0.0
    stats: dict[str, Any] = field(default_factory=dict)


def run_extract(args: argparse.Namespace) -> int:
    from vidocr.discover import iter_videos
    from vidocr.engines import BackgroundEngine
    from vidocr.formats import parse_formats

    formats = parse_formats(args.format)
    options = extract_options_from_args(args)
    from vidocr.pipeline import check_task

    check_task(options.engine, options.task, options.translate_to)
    videos = list(iter_videos(args.paths))
    if not videos:
        raise ConfigError(f"no video files found in: {' '.join(args.paths)}")
    results: list[FileResult] = []
    claimed: dict[Path, Path] = {}
    started = time.monotonic()
    engine = None
    try:
        for video in videos:
            clash = _claim(video, args, claimed)
            if clash is not None:
                print(f"error: {clash}", file=sys.stderr)
                results.append(FileResult(str(video), "failed", error=clash))
                continue
            if args.skip_existing and _outputs_exist(video, args, formats):
                results.append(FileResult(str(video), "skipped"))
                continue
            if engine is None and video.is_file():
                engine = BackgroundEngine(options.engine, options.engine_options)
            results.append(_extract_one(video, options, engine, formats, args))
    finally:
        if engine is not None:
            engine.close()
    return _summarise(results, time.monotonic() - started, args)


def _out_dir(video: Path, args: argparse.Namespace) -> Path:
    return Path(args.output_dir) if args.output_dir else video.parent


def _outputs_exist(video: Path, args: argparse.Namespace, formats: list[str]) -> bool:
    from vidocr.discover import output_stem
    from vidocr.formats import output_path

    out_dir = _out_dir(video, args)
    return all(output_path(out_dir, output_stem(video), fmt).exists() for fmt in formats)


def _claim(video: Path, args: argparse.Namespace, claimed: dict[Path, Path]) -> str | None:
    """Refuse a second video of this run whose outputs would land on the first one's (same name in
    two folders, one ``-o``): an error for it, never an overwrite."""
    from vidocr.discover import output_stem

    out_dir = _out_dir(video, args)
    key = (out_dir / output_stem(video)).absolute()
    first = claimed.setdefault(key, video)
    if first is video:
        return None
    return (
        f"{video}: its subtitles would overwrite those of {first} (same name, one output folder "
        f"{out_dir}); run the folders with separate -o"
    )


def _extract_one(video: Path, options: Any, engine: Any, formats: list[str], args: argparse.Namespace) -> FileResult:
    from vidocr.discover import output_stem
    from vidocr.formats import write_outputs
    from vidocr.pipeline import extract

    t0 = time.monotonic()
    bar = _ProgressBar(video.name) if not args.quiet and sys.stderr.isatty() else None
    try:
        cues_iter, info = extract(video, options, engine=engine, progress=bar)
        cues = list(cues_iter)
        out_dir = _out_dir(video, args)
        if not cues:
            band = info.stats.get("band")
            where = ",".join(str(v) for v in band) if band else "?"
            reason = f"no subtitles found in region x,y,w,h={where} ({info.stats.get('band_source')})"
            if not args.quiet:
                print(f"{video}: {reason}; no file written", file=sys.stderr)
            return FileResult(str(video), "empty", 0, [], reason, time.monotonic() - t0, info.stats)
        written = write_outputs(
            cues, info, out_dir, output_stem(video), formats,
            translate_to=options.translate_to, bilingual_cues=bool(getattr(args, "bilingual", False)),
        )
        result = FileResult(str(video), "ok", len(cues), [str(p) for p in written], None, time.monotonic() - t0,
                            info.stats)
        if not args.quiet:
            print(f"{video}: {len(cues)} cues -> {', '.join(str(p) for p in written)}", file=sys.stderr)
        if getattr(args, "verbose", False):
            print(_report_line(video, info.stats), file=sys.stderr)
        return result
    except VidocrError as exc:
        message = str(exc) if exc.path else f"{video}: {exc}"
        print(f"error: {message}", file=sys.stderr)
        return FileResult(str(video), "failed", error=message, seconds=time.monotonic() - t0)
    finally:
        if bar is not None:
            bar.close()


def _report_line(video: Path, stats: dict[str, Any]) -> str:
    """The per-video report of --verbose: zones found, static texts suppressed, frames read."""
    zones = "; ".join(
        f"{z['name']} {','.join(str(v) for v in z['box'])} ({z['source']}{', colour masks' if z.get('colour') else ''})"
        for z in stats.get("zones", [])
    )
    return (
        f"{video}: zones: {zones or 'none'}; static texts suppressed: {stats.get('static_texts', 0)} "
        f"({stats.get('static_lines_dropped', 0)} lines dropped); frames decoded: {stats.get('frames', 0)}, "
        f"read by OCR: {stats.get('frames_read', 0)} ({stats.get('ocr_confirmed', 0)} re-reads confirmed "
        f"without detection); scene cuts: {stats.get('scene_cuts', 0)}; "
        f"corrupt frames: {stats.get('corrupt_frames', 0)}"
    )


class _ProgressBar:
    """A tqdm bar in seconds of video, created on the first progress report (TTY only)."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.bar: Any = None

    def __call__(self, p: Any) -> None:
        if self.bar is None:
            from tqdm import tqdm

            total = round(p.seconds_total, 1) if p.seconds_total else None
            self.bar = tqdm(total=total, unit="s", desc=self.name, leave=False, file=sys.stderr,
                            bar_format="{desc}: {percentage:3.0f}%|{bar}| {n:.0f}/{total:.0f}s [{elapsed}<{remaining}]")
        self.bar.n = round(p.seconds_done, 1)
        self.bar.set_postfix_str(f"{p.cues} cues", refresh=False)
        self.bar.refresh()

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def _summarise(results: list[FileResult], seconds: float, args: argparse.Namespace) -> int:
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
    if not args.quiet:
        print(
            f"vidocr: {len(results)} file(s): {counts['ok']} ok, {counts['empty']} without subtitles, "
            f"{counts['failed']} failed, {counts['skipped']} skipped; {cues} cues in {seconds:.1f}s",
            file=sys.stderr,
        )
    return 1 if counts["failed"] else 0


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    try:
        command = next((a for a in argv if not a.startswith("-")), None)
        if command in {"extract", "watch", "index", "search", "jobs"}:
            apply_config(parser, argv, command)
        args = parser.parse_args(argv)
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
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 141


def _setup_logging(verbose: bool, quiet: bool) -> None:
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("vidocr: %(levelname)s: %(message)s"))
    root = logging.getLogger("vidocr")
    root.handlers[:] = [handler]
    root.setLevel(logging.DEBUG if verbose else logging.ERROR if quiet else logging.WARNING)
    root.propagate = False


if __name__ == "__main__":
    raise SystemExit(main())
