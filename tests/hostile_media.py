"""Hostile media for the tests and ``bench/fuzz.py``: the samples remuxed or re-encoded into other containers
(PyAV only), files with a preview stream or a cover picture, and seeded mutations of any file."""

from __future__ import annotations

import random
from fractions import Fraction
from pathlib import Path

import av
import numpy as np

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
