"""Video source: PyAV decoding with exact, start-normalised timestamps.

Every frame is decoded (H.264 cannot skip non-key frames cheaply; seeking to sample points was
measured 6.5x slower than decoding everything), with FFmpeg's frame+slice threading. Frames are
yielded as light :class:`DecodedFrame` objects: the luma plane is exposed without a colour
conversion (the change detector only needs Y), and a BGR crop is made only for the few frames that
go to OCR.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any

import av
import cv2
import numpy as np

from vidocr.errors import DecodeError, InputError
from vidocr.types import Box, Timestamp, VideoInfo

log = logging.getLogger("vidocr")

# Planar YUV formats whose first plane is 8-bit luma: read directly, no conversion.
_Y8_FORMATS = {"yuv420p", "yuvj420p", "yuv422p", "yuvj422p", "yuv444p", "yuvj444p", "nv12", "nv21", "gray", "yuv411p"}
# ...of which these store U and V as 8-bit planes of their own (any subsampling).
_UV8_FORMATS = {"yuv420p", "yuvj420p", "yuv422p", "yuvj422p", "yuv444p", "yuvj444p", "yuv411p"}


@dataclass
class DecodedFrame:
    """One decoded frame. ``ts`` is relative to the video's first frame."""

    ts: Timestamp
    index: int
    frame: av.VideoFrame
    rotation: int

    def luma(self) -> np.ndarray:
        """The full luma plane (display orientation), uint8 HxW; a view where possible."""
        frame = self.frame
        if frame.format.name in _Y8_FORMATS:
            plane = frame.planes[0]
            buf = np.frombuffer(memoryview(plane), np.uint8).reshape(plane.height, plane.line_size)
            y: np.ndarray = buf[:, : plane.width]
        else:
            y = np.asarray(frame.to_ndarray(format="gray"), dtype=np.uint8)
        return _rotate(y, self.rotation)

    def chroma(self) -> tuple[np.ndarray, np.ndarray] | None:
        """The U and V planes (display orientation, their own resolution) as views, or None when the
        frame has no separate 8-bit chroma planes (grey, packed RGB, high bit depth)."""
        frame = self.frame
        if frame.format.name not in _UV8_FORMATS:
            return None
        u, v = (_plane(frame, k)[:, : frame.planes[k].width] for k in (1, 2))
        return _rotate(u, self.rotation), _rotate(v, self.rotation)

    def bgr(self, box: Box | None = None) -> np.ndarray:
        """BGR uint8 image of the frame (display orientation), cropped to ``box`` if given.

        For 4:2:0 video only the crop is converted (a band is ~1/6 of a frame: the full conversion
        cost ~13 ms a 720p frame, most of an OCR read's preparation).
        """
        frame = self.frame
        if box is not None and not self.rotation and frame.format.name in ("yuv420p", "yuvj420p"):
            return _crop_i420(frame, box)
        img = _rotate(frame.to_ndarray(format="bgr24"), self.rotation)
        if box is not None:
            img = img[box.y : box.y + box.h, box.x : box.x + box.w]
        return np.ascontiguousarray(img)

    def small_bgr(self, width: int) -> np.ndarray:
        """A downscaled BGR frame (for scene-cut detection), display orientation."""
        src_w, src_h = self.frame.width, self.frame.height
        height = max(2, round(src_h * width / src_w / 2) * 2)
        small = self.frame.reformat(width=width, height=height, format="bgr24").to_ndarray()
        return _rotate(small, self.rotation)


def _plane(frame: av.VideoFrame, index: int) -> np.ndarray:
    plane = frame.planes[index]
    return np.frombuffer(memoryview(plane), np.uint8).reshape(plane.height, plane.line_size)


def _crop_i420(frame: av.VideoFrame, box: Box) -> np.ndarray:
    """Convert just ``box`` of a 4:2:0 frame to BGR (the box is widened to even coordinates)."""
    x0, y0 = box.x & ~1, box.y & ~1
    x1 = min(frame.width, box.x + box.w + 1) & ~1
    y1 = min(frame.height, box.y + box.h + 1) & ~1
    h, w = y1 - y0, x1 - x0
    i420 = np.empty((h * 3 // 2, w), np.uint8)
    i420[:h] = _plane(frame, 0)[y0:y1, x0:x1]
    chroma = [_plane(frame, k)[y0 // 2 : y1 // 2, x0 // 2 : x1 // 2] for k in (1, 2)]
    i420[h:].reshape(-1)[: h * w // 4] = chroma[0].reshape(-1)
    i420[h:].reshape(-1)[h * w // 4 :] = chroma[1].reshape(-1)
    code = cv2.COLOR_YUV2BGR_I420
    bgr = cv2.cvtColor(i420, code)
    # Back to the exact box (it was widened to even coordinates for the chroma grid).
    return np.ascontiguousarray(bgr[box.y - y0 : box.y - y0 + box.h, box.x - x0 : box.x - x0 + box.w])


def _rotate(img: np.ndarray, rotation: int) -> np.ndarray:
    # PyAV's rotation is the display matrix angle, counter-clockwise in degrees.
    turns = (rotation // 90) % 4
    return np.rot90(img, k=turns) if turns else img


@dataclass(frozen=True)
class _StreamFacts:
    start_pts: int | None
    time_base: Fraction


class VideoSource:
    """An opened video file. Use as a context manager; iterate with :meth:`frames`."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self._check_file()
        try:
            self._container = av.open(str(self.path), mode="r", metadata_errors="ignore")
        except av.error.FileNotFoundError:
            raise InputError("file not found", str(self.path)) from None
        except av.error.PermissionError:
            raise InputError("permission denied", str(self.path)) from None
        except (av.error.InvalidDataError, av.error.EOFError):
            raise InputError("not a video file (unrecognised or truncated data)", str(self.path)) from None
        except av.error.FFmpegError as exc:
            raise InputError(f"cannot open: {exc.strerror or exc}", str(self.path)) from None
        except (OSError, UnicodeDecodeError) as exc:
            raise InputError(f"cannot open: {exc}", str(self.path)) from None
        self.corrupt_frames = 0
        try:
            self.info = self._probe()
        except BaseException:
            self._container.close()
            raise
        self.corrupt_frames = 0

    def _check_file(self) -> None:
        p = self.path
        if not p.exists():
            raise InputError("file not found", str(p))
        if p.is_dir():
            raise InputError("is a folder, not a video file", str(p))
        if not os.access(p, os.R_OK):
            raise InputError("permission denied", str(p))
        if p.stat().st_size == 0:
            raise InputError("file is empty (0 bytes)", str(p))

    def _probe(self) -> VideoInfo:
        if not self._container.streams.video:
            kind = "audio-only file" if self._container.streams.audio else "no video stream"
            raise InputError(kind, str(self.path))
        stream = self._container.streams.video[0]
        ctx = stream.codec_context
        if ctx is None or not ctx.name:
            raise DecodeError("unsupported video codec", str(self.path))
        stream.thread_type = "AUTO"
        first = self._first_frame(stream)
        stream = self._container.streams.video[0]  # the container was reopened
        ctx = stream.codec_context
        width, height = ctx.width or first.width, ctx.height or first.height
        if not width or not height:
            raise DecodeError(f"video stream has no picture size (codec {ctx.name})", str(self.path))
        rotation = int(round(getattr(first, "rotation", 0) or 0)) % 360
        if rotation % 180:
            width, height = height, width
        time_base = Fraction(stream.time_base) if stream.time_base else Fraction(1, 90000)
        self._facts = _StreamFacts(stream.start_time, time_base)
        duration = None
        if stream.duration is not None:
            duration = float(stream.duration * time_base)
        elif self._container.duration is not None:
            duration = self._container.duration / av.time_base
        rate = stream.average_rate or stream.guessed_rate
        fps = float(rate) if rate else None
        start_s = float(stream.start_time * time_base) if stream.start_time is not None else 0.0
        frames = stream.frames or (round(duration * fps) if duration and fps else None)
        return VideoInfo(
            path=str(self.path),
            width=width,
            height=height,
            duration_s=duration,
            fps=fps,
            codec=ctx.name,
            rotation=rotation,
            start_time_s=start_s,
            frame_count_estimate=frames,
        )

    def _first_frame(self, stream: Any) -> av.VideoFrame:
        """Decode one frame to prove the stream is decodable (and read its rotation)."""
        try:
            for frame in self._decode(stream):
                return frame
        finally:
            # Frames are decoded again from the start by a fresh container in frames().
            self._container.close()
            self._container = av.open(str(self.path), mode="r", metadata_errors="ignore")
        raise DecodeError(
            f"no decodable video frames (codec {stream.codec_context.name}, {self.corrupt_frames} broken packets)",
            str(self.path),
        )

    def __enter__(self) -> VideoSource:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def close(self) -> None:
        self._container.close()

    def frames(self, start: float | None = None, end: float | None = None) -> Iterator[DecodedFrame]:
        """Decode frames in presentation order, timestamps relative to the first frame.

        ``start``/``end`` are seconds on that same relative clock; frames before ``start`` are
        decoded but not yielded (after a keyframe seek), decoding stops at ``end``.
        Corrupt packets are skipped and counted in :attr:`corrupt_frames`.
        """
        stream = self._container.streams.video[0]
        stream.thread_type = "AUTO"
        tb = self._facts.time_base
        origin = self._facts.start_pts
        if start and start > 0:
            target = int(start / tb) + (origin or 0)
            try:
                self._container.seek(target, stream=stream, backward=True, any_frame=False)
            except av.error.FFmpegError:
                log.debug("seek failed in %s; decoding from the start", self.path)
        index = 0
        last_pts: int | None = None
        for frame in self._decode(stream):
            pts = frame.pts if frame.pts is not None else frame.dts
            if pts is None:
                # No timestamp at all: continue the clock from the previous frame's duration.
                pts = (last_pts or 0) + (frame.duration or _frame_step(stream, tb))
            if origin is None:
                origin = pts
            if last_pts is not None and pts <= last_pts:
                continue  # duplicated or out-of-order timestamp: keep timestamps strictly increasing
            last_pts = pts
            rel = Timestamp(pts - origin, tb)
            if start is not None and rel.seconds < start - 1e-9:
                continue
            if end is not None and rel.seconds >= end:
                break
            yield DecodedFrame(rel, index, frame, self.info.rotation)
            index += 1
        if index == 0 and self.corrupt_frames and start is None:
            raise DecodeError(f"no decodable frames ({self.corrupt_frames} corrupt)", str(self.path))

    def keyframes_near(self, times: list[float]) -> Iterator[DecodedFrame]:
        """For each time (relative seconds), the first frame decodable after seeking there.

        A cheap way to look at many places in a long file: one keyframe decode per seek. Uses its
        own container, so it can run before or after :meth:`frames`.
        """
        stream_tb = self._facts.time_base
        origin = self._facts.start_pts or 0
        with av.open(str(self.path), mode="r", metadata_errors="ignore") as container:
            stream = container.streams.video[0]
            # One picture per seek: frame threading would decode several packets before the first
            # frame comes out.
            stream.thread_type = "SLICE"
            landed: int | None = None
            for i, t in enumerate(times):
                try:
                    container.seek(int(t / stream_tb) + origin, stream=stream, backward=True, any_frame=False)
                    first = True
                    for packet in container.demux(stream):
                        if first:
                            first = False
                            if packet.pts is not None and packet.pts == landed:
                                break  # the keyframe the previous seek landed on: nothing new to see
                            landed = packet.pts
                        frames = packet.decode()
                        if frames:
                            frame = frames[0]
                            pts = frame.pts if frame.pts is not None else origin
                            yield DecodedFrame(Timestamp(pts - origin, stream_tb), i, frame, self.info.rotation)
                            break
                except av.error.FFmpegError as exc:
                    log.debug("%s: seek to %.1fs failed: %s", self.path, t, exc)

    def frame_step(self) -> Timestamp:
        """Nominal duration of one frame (used to close the last cue)."""
        stream = self._container.streams.video[0]
        return Timestamp(_frame_step(stream, self._facts.time_base), self._facts.time_base)

    def _decode(self, stream: Any) -> Iterator[av.VideoFrame]:
        demux = self._container.demux(stream)
        while True:
            try:
                packet = next(demux)
            except StopIteration:
                break
            except av.error.FFmpegError as exc:
                # A broken container structure: what was decoded so far stands.
                self.corrupt_frames += 1
                log.warning("%s: demuxing stopped early: %s", self.path, exc)
                break
            try:
                yield from packet.decode()
            except av.error.FFmpegError:
                self.corrupt_frames += 1


def _frame_step(stream: Any, tb: Fraction) -> int:
    rate = stream.average_rate or stream.guessed_rate or Fraction(25)
    return max(1, round(1 / (Fraction(rate) * tb)))
