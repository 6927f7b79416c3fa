"""``vidocr extract``: subtitle files from videos, one output rule (:func:`plan_outputs`), one line per video."""

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
from typing import Any, TextIO, cast

from vidocr._cli.console import Console, FileProgress, stage_times, summary_table
from vidocr._cli.errors import describe, exit_codes_epilog
from vidocr._cli.options import add_extract_options, extract_options_from_args, parse_format_args
from vidocr._cli.ray import add_ray_options, wants_ray
from vidocr._cli.ray import run_extract as run_extract_on_ray
from vidocr.errors import ConfigError, OutputError, VidocrError, classify, display_path
from vidocr.types import RunStats

log = logging.getLogger("vidocr")

NAME = "extract"
SUBTITLE_EXTENSIONS = (".srt", ".vtt", ".json", ".ass")

EXTRACT_EPILOG = """\
examples:
  vidocr extract film.mkv                          film.srt beside the video
  vidocr extract film.mkv -o subs/film.vtt         that one file (format from the extension)
  vidocr extract film.mkv -o - -f vtt | less       one format to stdout
  vidocr extract ~/Videos -o subs -f srt -f json   every video under ~/Videos (recursive), two formats each
  vidocr extract film.mkv --zones top,bottom --start 1:00 --end 2:30 -v
  vidocr extract film.mkv --engine hunyuan-vllm --model ~/models/HunyuanOCR --translate en --bilingual
"""


def add_parser(sub: Any) -> argparse.ArgumentParser:
    ext: argparse.ArgumentParser = sub.add_parser(
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
    add_ray_options(ext)
    return ext


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
    stats: RunStats | None = None
    usage_error: bool = False  # the options do not fit this video (a --roi outside its frame...)


def run(args: argparse.Namespace) -> int:
    from vidocr.discover import iter_videos, overwrites_input
    from vidocr.extractor import Extractor

    if wants_ray(args):
        return run_extract_on_ray(args)

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
            band = info.stats.band
            where = ",".join(str(v) for v in band.as_list()) if band else "?"
            reason = f"no subtitles found in region x,y,w,h={where} ({info.stats.band_source})"
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
        message = describe(exc) if exc.path else f"{shown_name}: {describe(exc)}"
        console.line(f"error: {message}", always=True)
        return FileResult(str(video), "failed", error=message, seconds=time.monotonic() - t0,
                          usage_error=isinstance(exc, ConfigError))
    except Exception as exc:  # noqa: BLE001 - a bug on one video must not stop the batch nor print a traceback
        console.clear()
        log.debug("internal error on %s", video, exc_info=True)
        message = f"{shown_name}: internal error: {type(exc).__name__}: {exc} (details with -v)"
        console.line(f"error: {message}", always=True)
        return FileResult(str(video), "failed", error=message, seconds=time.monotonic() - t0)


def _verbose(console: Console, args: argparse.Namespace, video: Path, stats: RunStats, write_s: float,
             t0: float) -> None:
    """-v: the zones found and what was read, then the time of each stage."""
    if getattr(args, "verbose", False):
        console.line(_report_line(video, stats))
        times = stage_times(stats.times.as_dict(), write_s, time.monotonic() - t0)
        console.line(f"{display_path(str(video))}: {times}")


def _stops_the_run(exc: VidocrError, extractor: Any) -> bool:
    """An engine that could not start, or OCR servers that cannot be reached: every later video would fail the
    same way (after the same wait), so the run stops on that one line (exit 4)."""
    if classify(exc).kind != "engine":
        return False
    from vidocr.engines.openai_client import ServerUnreachable

    return isinstance(exc, ServerUnreachable) or getattr(extractor, "engine_error", None) is not None


def _write_stdout(cues: Sequence[Any], info: Any, fmt: str, bilingual: bool) -> None:
    from vidocr.formats import bilingual as with_translation
    from vidocr.formats import get_writer

    ordered = sorted(cues, key=lambda c: (c.start_ms, c.end_ms))
    sys.stdout.write(get_writer(fmt).render(with_translation(ordered) if bilingual else ordered, info))
    sys.stdout.flush()


def _report_line(video: Path, stats: RunStats) -> str:
    """The per-video report of --verbose: zones found, static texts suppressed, frames read."""
    zones = "; ".join(
        f"{z.name} {','.join(str(v) for v in z.box.as_list())} "
        f"({z.source}{', colour masks' if z.colour else ''}{', small text' if z.small else ''})"
        for z in stats.zones or ()
    )
    return (
        f"{display_path(str(video))}: zones: {zones or 'none'}; "
        f"static texts suppressed: {stats.static_texts or 0} "
        f"({stats.static_lines_dropped or 0} lines dropped); frames decoded: {stats.frames or 0}, "
        f"read by OCR: {stats.frames_read or 0} ({stats.ocr_confirmed or 0} re-reads confirmed "
        f"without detection); scene cuts: {stats.scene_cuts or 0}; "
        f"corrupt frames: {stats.corrupt_frames or 0}"
    )


def _summarise(results: list[FileResult], seconds: float, args: argparse.Namespace,
               console: Console | None = None) -> int:
    counts = {s: sum(1 for r in results if r.status == s) for s in ("ok", "empty", "failed", "skipped")}
    cues = sum(r.cues for r in results)
    if args.json:
        doc = {
            # A run's stats as the JSON output's stats object, not their Python repr.
            "files": [{**r.__dict__, "stats": r.stats.as_dict() if r.stats is not None else None} for r in results],
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
