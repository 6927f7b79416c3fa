"""Hostile media for the tests and ``bench/fuzz.py``: the samples remuxed or re-encoded into other containers
(PyAV only), files with a preview stream or a cover picture, and seeded mutations of any file."""

from __future__ import annotations

import json
import random
import resource
import subprocess
import sys
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

import av
import numpy as np
import pysrt

# name -> (file extension, FFmpeg muxer, muxer options, re-encode with this codec or None to copy packets)
CONTAINERS: dict[str, tuple[str, str, dict[str, str], str | None]] = {
    "mp4": (".mp4", "mp4", {}, None),
    "faststart": (".mp4", "mp4", {"movflags": "faststart"}, None),
    "mkv": (".mkv", "matroska", {}, None),
    "webm": (".webm", "webm", {}, "libvpx"),
    "ts": (".ts", "mpegts", {}, None),
    "avi": (".avi", "avi", {}, "mpeg4"),
}


def convert(src: Path, dst: Path, container: str, max_seconds: float | None = None) -> Path:
    """``src``'s video stream in ``container`` (see :data:`CONTAINERS`): packets copied, or re-encoded where
    the container does not take H.264 (webm) or is usually MPEG-4 (avi). ``max_seconds`` keeps the start."""
    _, fmt, options, codec = CONTAINERS[container]
    with av.open(str(src)) as inp, av.open(str(dst), "w", format=fmt, options=options) as out:
        ins = inp.streams.video[0]
        limit = None if max_seconds is None else max_seconds / float(ins.time_base)
        if codec is None:
            ost = out.add_stream_from_template(ins)
            for packet in inp.demux(ins):
                if packet.dts is None:
                    continue
                if limit is not None and packet.pts is not None and packet.pts - (ins.start_time or 0) > limit:
                    break
                packet.stream = ost
                out.mux(packet)
            return dst
        rate = Fraction(ins.average_rate or 25).limit_denominator(1001)
        ost = out.add_stream(codec, rate=rate)
        ost.width, ost.height, ost.pix_fmt = ins.codec_context.width, ins.codec_context.height, "yuv420p"
        ost.codec_context.time_base = 1 / rate
        ost.bit_rate = 400_000
        if codec == "libvpx":
            ost.options = {"deadline": "realtime", "cpu-used": "8"}
        for i, frame in enumerate(inp.decode(ins)):
            if max_seconds is not None and i >= max_seconds * rate:
                break
            frame = frame.reformat(format="yuv420p")
            frame.pts, frame.time_base = i, ost.codec_context.time_base
            for packet in ost.encode(frame):
                out.mux(packet)
        for packet in ost.encode(None):
            out.mux(packet)
    return dst


def with_preview(src: Path, dst: Path, *, cover: bool = False) -> Path:
    """An MKV whose first video stream is a small 160x90 preview, and whose second stream is ``src``'s video
    (packets copied); with ``cover``, an MP4 with a large cover picture (attached picture) beside the video."""
    with av.open(str(src)) as inp, av.open(str(dst), "w", format="mp4" if cover else "matroska") as out:
        ins = inp.streams.video[0]
        if cover:
            first = out.add_stream("mjpeg", rate=1)
            first.width, first.height, first.pix_fmt = 1920, 1080, "yuvj420p"
            first.disposition = av.stream.Disposition.attached_pic
        else:
            first = out.add_stream("libx264", rate=25)
            first.width, first.height, first.pix_fmt = 160, 90, "yuv420p"
        film = out.add_stream_from_template(ins)
        count = 1 if cover else 25
        for i in range(count):
            frame = av.VideoFrame.from_ndarray(np.full((first.height, first.width, 3), 40 + i, np.uint8), "rgb24")
            frame.pts = i
            for packet in first.encode(frame.reformat(format=first.pix_fmt)):
                out.mux(packet)
        for packet in first.encode(None):
            out.mux(packet)
        for packet in inp.demux(ins):
            if packet.dts is None:
                continue
            packet.stream = film
            out.mux(packet)
    return dst


def mutate(data: bytes, seed: int) -> tuple[bytes, str]:
    """One seeded mutation of a media file: bit flips, a zeroed or shuffled or repeated chunk, or a cut.
    Returns the bytes and what was done (for reports)."""
    rng = random.Random(seed)
    buf = bytearray(data)
    n = len(buf)
    kind = rng.choice(["flips", "flips", "zero", "random", "duplicate", "truncate", "header", "swap"])
    if kind == "flips":
        count = rng.choice([1, 10, 100, 1000])
        for _ in range(count):
            i = rng.randrange(n)
            buf[i] ^= 1 << rng.randrange(8)
        return bytes(buf), f"{count} bit flips"
    start = rng.randrange(n)
    size = min(n - start, rng.choice([16, 188, 4096, 65536]))
    if kind == "zero":
        buf[start : start + size] = bytes(size)
    elif kind == "random":
        buf[start : start + size] = rng.randbytes(size)
    elif kind == "duplicate":
        buf[start:start] = buf[start : start + size]
    elif kind == "truncate":
        cut = rng.randrange(1, n)
        return bytes(buf[:cut]), f"cut at {cut}/{n}"
    elif kind == "header":
        start, size = 0, min(n, rng.choice([8, 64, 512, 4096]))
        for i in range(start, start + size):
            if rng.random() < 0.1:
                buf[i] = rng.randrange(256)
    else:  # swap two chunks
        other = rng.randrange(n)
        size = min(size, n - other)
        a, b = bytes(buf[start : start + size]), bytes(buf[other : other + size])
        buf[start : start + len(b)] = b
        buf[other : other + len(a)] = a
    return bytes(buf), f"{kind} {size} bytes at {start}"


# --- the fuzzer: mutants of clean clips, each extracted by a `vidocr extract` process of its own ------------------

OUTCOMES = ("ok", "traceback", "crash", "hang", "partial", "unclear")


@dataclass
class FuzzResult:
    name: str
    mutation: str
    outcome: str  # one of OUTCOMES
    code: int | None
    seconds: float
    detail: str = ""


def clean_clips(folder: Path, containers: Sequence[str] = tuple(CONTAINERS)) -> list[Path]:
    """A small synthetic clip with two subtitles (320x180, 3 s, H.264 MP4), in each of ``containers``."""
    from support.synth import SynthCue, SynthSpec, render_video

    folder.mkdir(parents=True, exist_ok=True)
    base = folder / "base.mp4"
    if not base.exists():
        spec = SynthSpec(width=320, height=180, duration=3.0, font_size=22, seed=5, cut_every=1.5,
                         cues=(SynthCue(0.3, 1.4, "你好世界"), SynthCue(1.7, 2.8, "Hello there")))
        render_video(spec, base)
    return [convert(base, folder / f"clip_{c}{CONTAINERS[c][0]}", c) for c in containers]


def make_mutants(clips: Sequence[Path], folder: Path, count: int, seed: int = 0) -> list[tuple[Path, str]]:
    """``count`` seeded mutants, taking the clips in turn: (path, what was done)."""
    folder.mkdir(parents=True, exist_ok=True)
    out = []
    for i in range(count):
        clip = clips[i % len(clips)]
        data, how = mutate(clip.read_bytes(), seed * 1_000_003 + i)
        path = folder / f"m{i:04d}_{clip.stem.removeprefix('clip_')}{clip.suffix}"
        path.write_bytes(data)
        out.append((path, f"{clip.name}: {how}"))
    return out


def run_mutant(path: Path, mutation: str, out_dir: Path, *, timeout_s: float = 60.0,
               memory_bytes: int = 2 << 30) -> FuzzResult:
    """``vidocr extract`` on one file in a process of its own (address space capped, killed after ``timeout_s``),
    judged: a traceback, a signal, a hang, an output that does not parse or a temp file left, an exit or error
    line that is not the contract (0 with outputs that parse or none; 1 with one ``error:`` line naming the
    file), or ok."""
    out_dir.mkdir(parents=True, exist_ok=True)

    def limits() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, memory_bytes))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))

    cmd = [sys.executable, "-m", "vidocr", "extract", str(path), "-o", str(out_dir), "-f", "srt,json",
           "--workers", "1"]
    started = time.monotonic()
    try:
        proc = subprocess.run(cmd, capture_output=True, timeout=timeout_s, preexec_fn=limits,
                              cwd=Path(__file__).resolve().parent.parent)
    except subprocess.TimeoutExpired:
        return FuzzResult(path.name, mutation, "hang", None, time.monotonic() - started)
    seconds = time.monotonic() - started
    err = proc.stderr.decode("utf-8", "replace")

    def result(outcome: str, detail: str = "") -> FuzzResult:
        return FuzzResult(path.name, mutation, outcome, proc.returncode, seconds, detail)

    if "Traceback" in err:
        return result("traceback", err[-1500:])
    if proc.returncode < 0:
        return result("crash", f"signal {-proc.returncode}: {err[-500:]}")
    leftovers = [p.name for p in out_dir.iterdir() if p.name.endswith(".tmp")]
    if leftovers:
        return result("partial", f"temp files left: {leftovers}")
    for output in out_dir.glob(f"{path.stem}.*"):
        try:
            if output.suffix == ".json":
                json.loads(output.read_text(encoding="utf-8"))
            else:
                pysrt.from_string(output.read_text(encoding="utf-8"), error_handling=pysrt.ERROR_RAISE)
        except Exception as exc:  # noqa: BLE001 - any failure to parse is the finding
            return result("partial", f"{output.name} does not parse: {exc}")
    errors = [line for line in err.splitlines() if line.startswith("error:")]
    if proc.returncode == 0 and not errors:
        return result("ok")
    if proc.returncode == 1 and len(errors) == 1 and str(path) in errors[0]:
        return result("ok", errors[0])
    return result("unclear", f"exit {proc.returncode}: {err[-800:]}")


def fuzz(folder: Path, count: int, *, seed: int = 0, jobs: int = 2, timeout_s: float = 60.0,
         memory_bytes: int = 2 << 30) -> list[FuzzResult]:
    """Make the clean clips and ``count`` mutants under ``folder`` and run them, ``jobs`` at a time."""
    clips = clean_clips(folder / "clean")
    mutants = make_mutants(clips, folder / "mutants", count, seed)

    def one(item: tuple[int, tuple[Path, str]]) -> FuzzResult:
        i, (path, how) = item
        return run_mutant(path, how, folder / "out" / f"{i:04d}", timeout_s=timeout_s, memory_bytes=memory_bytes)

    with ThreadPoolExecutor(max_workers=jobs) as pool:
        return list(pool.map(one, enumerate(mutants)))
