"""``--ray [auto|ADDRESS]`` for ``extract``, ``index build`` and ``watch``: the options, and the glue that runs the
command's videos as Ray tasks (:mod:`vidocr.cluster`) while the command writes files and index rows as it does
without Ray."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any, TextIO, cast

from vidocr.errors import ConfigError


def add_ray_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("cluster (needs vidocr[ray])")
    g.add_argument("--ray", nargs="?", const="", metavar="auto|ADDRESS",
                   help="run each video as a task on a Ray cluster: its ADDRESS (HOST:6379), auto (the cluster "
                        "running here: `ray start`, $RAY_ADDRESS), or no value (that cluster, else a local Ray "
                        "for this run); files and index rows are written here")
    g.add_argument("--ray-cpus", type=float, default=1.0, metavar="N", help="CPUs each video task takes (default: 1)")
    g.add_argument("--ray-in-flight", type=int, default=0, metavar="N",
                   help="videos submitted at once (default: twice the cluster's CPUs / --ray-cpus)")
    g.add_argument("--ray-retries", type=int, default=3, metavar="N",
                   help="re-runs of a video whose worker or node died (default: 3)")
    g.add_argument("--ray-ocr-actors", type=int, default=0, metavar="N",
                   help="model engines (hunyuan-*, openai): actors that each hold one engine and read the crops of "
                        "every video (default: one per GPU of the cluster, one without GPUs)")
    g.add_argument("--ray-actor-gpus", type=float, metavar="N",
                   help="GPUs each OCR actor takes (default: 1 where the cluster has GPUs, else 0)")


def wants_ray(args: argparse.Namespace) -> bool:
    return getattr(args, "ray", None) is not None


def ray_extractor(args: argparse.Namespace, options: Any) -> Any:
    """The :class:`~vidocr.cluster.RayExtractor` the options ask for (joins or starts Ray)."""
    cpus, in_flight, retries = args.ray_cpus, args.ray_in_flight, args.ray_retries
    actors, gpus = args.ray_ocr_actors, args.ray_actor_gpus
    if not (isinstance(cpus, (int, float)) and 0 < cpus <= 1024):
        raise ConfigError(f"--ray-cpus must be a number above 0, got {cpus!r}")
    if not all(isinstance(n, int) and n >= 0 for n in (in_flight, retries, actors)):
        raise ConfigError("--ray-in-flight, --ray-retries and --ray-ocr-actors must be whole numbers >= 0")
    if gpus is not None and not (isinstance(gpus, (int, float)) and 0 <= gpus <= 64):
        raise ConfigError(f"--ray-actor-gpus must be a number from 0 to 64, got {gpus!r}")
    from vidocr.cluster.runner import RayExtractor, RayOptions, import_ray

    import_ray()  # the one-line install hint before anything else
    address = str(args.ray).strip() or None
    return RayExtractor(options, RayOptions(address=address, num_cpus=float(cpus), max_in_flight=in_flight,
                                            max_retries=retries, ocr_actors=actors,
                                            actor_gpus=None if gpus is None else float(gpus)))


def run_extract(args: argparse.Namespace) -> int:
    """``vidocr extract ... --ray``: the plain command's checks and per-video steps, with the videos run ahead on
    Ray and written as they finish."""
    from vidocr._cli import extract as ex
    from vidocr._cli.console import Console
    from vidocr._cli.options import extract_options_from_args, parse_format_args
    from vidocr.discover import iter_videos, overwrites_input

    parse_format_args(getattr(args, "format", None))
    options = extract_options_from_args(args)
    videos = list(iter_videos(args.paths))
    if not videos:
        raise ConfigError(f"no video files found in: {' '.join(args.paths)}")
    plan = ex.plan_outputs(args, videos)
    results: list[Any] = [None] * len(videos)
    claimed: dict[Path, Path] = {}
    started = time.monotonic()
    console = Console(sys.stderr, quiet=args.quiet)
    todo = []
    for number, video in enumerate(videos):  # decided in the given order, as without --ray
        clash = ex._claim(video, plan, claimed)
        if clash is None and not plan.stdout:
            clash = overwrites_input(video, *plan.target(video), plan.formats, options.translate_to, videos)
        if clash is not None:
            console.line(f"error: {clash}", always=True)
            results[number] = ex.FileResult(str(video), "failed", error=clash)
        elif args.skip_existing and not plan.stdout and ex._outputs_exist(video, plan):
            results[number] = ex.FileResult(str(video), "skipped")
        else:
            todo.append((number, video))
    extractor = ray_extractor(args, options)
    logged = ex._log_to(cast(TextIO, console))
    try:
        for done, (number, video) in enumerate(extractor.run_ahead(todo, key=lambda item: item[1]), 1):
            counter = f"[{done}/{len(todo)}] " if len(videos) > 1 else ""
            results[number] = ex._extract_one(video, extractor, plan, args, console, counter)
            if console.tty:
                console.status(extractor.status())
        console.clear()
        console.line(extractor.status())  # the run's per-node figures, on a terminal or not
    finally:
        console.clear()
        ex._log_to(None, logged)
        extractor.close()
    return ex._summarise(results, time.monotonic() - started, args, console)
