"""Video source: PyAV decoding with exact, start-normalised timestamps.

Every frame is decoded (H.264 cannot skip non-key frames cheaply; seeking to sample points was
measured 6.5x slower than decoding everything), with FFmpeg's frame+slice threading. Frames are
yielded as light :class:`DecodedFrame` objects: the luma plane is exposed without a colour
conversion (the change detector only needs Y), and a BGR crop is made only for the few frames that
go to OCR.
"""

from __future__ import annotations

import errno
import logging
import os
import stat
import weakref
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from fractions import Fraction
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

import av
import cv2
import numpy as np

from vidocr.errors import DecodeError, InputError, VidocrError, as_text, display_path
from vidocr.types import Box, Timestamp, VideoInfo

log = logging.getLogger("vidocr")

# Planar YUV formats whose first plane is 8-bit luma: read directly, no conversion.
_Y8_FORMATS = {"yuv420p", "yuvj420p", "yuv422p", "yuvj422p", "yuv444p", "yuvj444p", "nv12", "nv21", "gray", "yuv411p"}
# ...of which these store U and V as 8-bit planes of their own (any subsampling).
_UV8_FORMATS = {"yuv420p", "yuvj420p", "yuv422p", "yuvj422p", "yuv444p", "yuvj444p", "yuv411p"}
# Containers whose timestamps may restart or jump (MPEG-TS: concatenated recordings, DVB), as FFmpeg flags them.
_AVFMT_TS_DISCONT = 0x0200
# A frame this far before the previous one is a timestamp restart, not a stray frame out of order...
_JUMP_BACK_S = 0.5
# ...and, in containers with discontinuous timestamps, a gap this much longer than one frame is a jump.
_JUMP_FORWARD_S = 5.0
# A jump whose file clock comes back to where it was within this many frames was one damaged timestamp.
_GLITCH_FRAMES = 8

#: What a sampling pass's ``convert`` makes of a frame.
T = TypeVar("T")


class _SeekFailed(Exception):
    """A sampling pass could not seek where it had to start."""


def _split_at_keys(wanted: list[int], keys: list[int], parts: int) -> list[tuple[int | None, list[int]]]:
    """``wanted`` (sorted timestamps) cut at up to ``parts - 1`` of the ``keys`` (sorted keyframe timestamps) into
    runs of about as many: (the keyframe a run starts at, None for the first; its timestamps). A frame shown
    before a keyframe but decoded after it (an open GOP's leading B-frames) stays with the run before, whose
    decoding goes on past the keyframe until it has all its frames."""
    cuts: list[int] = []
    for k in range(1, parts if wanted else 0):
        target = wanted[len(wanted) * k // parts]
        usable = [key for key in keys if (cuts[-1] if cuts else wanted[0]) < key <= wanted[-1]]
        if usable:
            cuts.append(min(usable, key=lambda key: abs(key - target)))
    out: list[tuple[int | None, list[int]]] = []
    bounds = [None, *cuts, None]
    for first, after in zip(bounds, bounds[1:], strict=False):
        run = [t for t in wanted if (first is None or t >= first) and (after is None or t < after)]
        if run:
            out.append((first, run))
    return out


def _at_once(passes: list[Callable[[], Iterable[DecodedFrame]]], convert: Callable[[DecodedFrame], T]) -> list[T]:
    """``convert`` of every frame of each of ``passes``, in order: the passes run at once, one thread each
    (FFmpeg decodes without holding the GIL), and ``convert`` runs in the pass's thread, so only what it returns
    is held, never a pass's decoded pictures."""
    with ThreadPoolExecutor(len(passes), thread_name_prefix="vidocr-sample") as pool:
        jobs = [pool.submit(lambda frames: [convert(frame) for frame in frames()], frames) for frames in passes]
        return [item for job in jobs for item in job.result()]


# Sources open now, by absolute path: a second source on the same file (the zone finder's own decoder)
# reads the same stream and leaves the warnings to the first.
_OPEN: weakref.WeakValueDictionary[str, VideoSource] = weakref.WeakValueDictionary()


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
    index: int
    start_pts: int | None
    time_base: Fraction
    expected_end_s: float | None  # the video's end by the container's own account, relative to its first frame
    coded_size: tuple[int, int]  # width, height of the stored pictures (before display rotation)


class VideoSource:
    """An opened video file. Use as a context manager; iterate with :meth:`frames`.

    ``stream``: the index of the video stream to read, as FFmpeg numbers a file's streams (ffprobe's
    ``Stream #0:N``); default: the main one (the largest picture, the default one among equals, never a
    cover picture). Any failure of FFmpeg while opening, probing or demuxing is an :class:`InputError`
    naming the file, or broken packets counted in :attr:`corrupt_frames`: never an exception of PyAV's.
    """

    def __init__(self, path: str | os.PathLike[str], stream: int | None = None) -> None:
        self.path = Path(path)
        self.corrupt_frames = 0
        #: Times the timestamps restarted or jumped (concatenated recordings); see :meth:`frames`.
        self.discontinuities = 0
        #: Set when decoding ended well before the end the container announces (a truncated file).
        self.ended_early = False
        #: Frames whose picture size was not the stream's (a size change mid-stream, or a damaged header),
        #: scaled to it: every stage after this one sees one frame size.
        self.rescaled_frames = 0
        self._facts: _StreamFacts
        key = os.fspath(self.path.absolute())
        first = _OPEN.get(key)
        self._quiet = first is not None
        if stream is None and first is not None:
            stream = first._facts.index
        self._check_file()
        self._container = self._open()
        try:
            self.info = self._probe(stream)
        except VidocrError:
            self._container.close()
            raise
        except Exception as exc:  # noqa: BLE001 - PyAV raises many kinds on hostile input: one line instead
            self._container.close()
            raise InputError(f"unreadable video ({_why(exc)})", str(self.path)) from None
        except BaseException:
            self._container.close()
            raise
        self.corrupt_frames = 0
        if first is None:
            _OPEN[key] = self

    def _open(self) -> Any:
        try:
            return av.open(str(self.path), mode="r", metadata_errors="ignore")
        except av.error.FileNotFoundError:
            raise InputError("file not found", str(self.path)) from None
        except av.error.PermissionError:
            raise InputError("permission denied", str(self.path)) from None
        except (av.error.InvalidDataError, av.error.EOFError):
            raise InputError("not a video file (unrecognised or truncated data)", str(self.path)) from None
        except av.error.FFmpegError as exc:
            raise InputError(f"cannot open: {exc.strerror or exc}", str(self.path)) from None
        except Exception as exc:  # noqa: BLE001 - OSError, UnicodeError, and whatever else a hostile file provokes
            raise InputError(f"cannot open: {_why(exc)}", str(self.path)) from None

    def _check_file(self) -> None:
        p = self.path
        try:
            st = p.stat()
        except FileNotFoundError:
            raise InputError("broken symbolic link" if p.is_symlink() else "file not found", str(p)) from None
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise InputError("symbolic link loop", str(p)) from None
            raise InputError(f"cannot open: {exc.strerror or exc}", str(p)) from None
        except ValueError as exc:  # an embedded NUL
            raise InputError(f"bad file name ({exc})", str(p)) from None
        if stat.S_ISDIR(st.st_mode):
            raise InputError("is a folder, not a video file", str(p))
        if not os.access(p, os.R_OK):
            raise InputError("permission denied", str(p))
        if st.st_size == 0:
            raise InputError("file is empty (0 bytes)", str(p))

    def _probe(self, wanted: int | None) -> VideoInfo:
        stream = _pick_stream(self._container, wanted, str(self.path))
        ctx = stream.codec_context
        if ctx is None or not ctx.name:
            raise DecodeError("unsupported video codec", str(self.path))
        stream.thread_type = "AUTO"
        index = stream.index
        first = self._first_frame(stream)
        stream = self._container.streams[index]  # the container was reopened
        ctx = stream.codec_context
        width, height = ctx.width or first.width, ctx.height or first.height
        if not width or not height:
            raise DecodeError(f"video stream has no picture size (codec {ctx.name})", str(self.path))
        rotation = int(round(getattr(first, "rotation", 0) or 0)) % 360
        if rotation % 180:
            width, height = height, width
        time_base = Fraction(stream.time_base) if stream.time_base else Fraction(1, 90000)
        duration = None
        if stream.duration is not None:
            duration = float(stream.duration * time_base)
        elif self._container.duration is not None:
            duration = self._container.duration / av.time_base
        rate = stream.average_rate or stream.guessed_rate
        fps = float(rate) if rate else None
        start_s = float(stream.start_time * time_base) if stream.start_time is not None else 0.0
        coded = (height, width) if rotation % 180 else (width, height)
        self._facts = _StreamFacts(index, stream.start_time, time_base, self._expected_end(stream, start_s), coded)
        frames = stream.frames or (round(duration * fps) if duration and fps else None)
        return VideoInfo(
            path=as_text(str(self.path)),
            width=width,
            height=height,
            duration_s=duration,
            fps=fps,
            codec=ctx.name,
            rotation=rotation,
            start_time_s=start_s,
            frame_count_estimate=frames,
        )

    def _expected_end(self, stream: Any, start_s: float) -> float | None:
        """Where the video should end (relative seconds) by the container's header: the stream's own duration,
        else the container's, measured from the container's start."""
        if stream.duration:
            return float(stream.duration * Fraction(stream.time_base))
        if self._container.duration:
            container_start = (self._container.start_time or 0) / av.time_base
            return float(self._container.duration / av.time_base - max(0.0, start_s - container_start))
        return None

    def _first_frame(self, stream: Any) -> av.VideoFrame:
        """Decode one frame to prove the stream is decodable (and read its rotation)."""
        try:
            for frame in self._decode(stream):
                return frame
        finally:
            # Frames are decoded again from the start by a fresh container in frames().
            self._container.close()
            self._container = self._open()
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
        key = os.fspath(self.path.absolute())
        if _OPEN.get(key) is self:
            del _OPEN[key]

    def frames(self, start: float | None = None, end: float | None = None) -> Iterator[DecodedFrame]:
        """Decode frames in presentation order, timestamps relative to the first frame.

        ``start``/``end`` are seconds on that same relative clock; frames before ``start`` are
        decoded but not yielded (after a keyframe seek; in MPEG-TS from the start), decoding stops at ``end``.
        Corrupt packets are skipped and counted in :attr:`corrupt_frames`.

        The clock is monotonic, as players keep it: where the timestamps restart (a frame more than
        0.5 s before the previous one: two recordings concatenated) or, in MPEG-TS, jump ahead by more than
        5 s past one frame's step, the clock goes on one frame step after the previous frame and later
        frames keep that offset (:attr:`discontinuities` counts them, with a warning). A frame at or a
        little before the previous one's time is a duplicate and is dropped. When the iteration runs to the
        end of the file and stops well short of the end the container announces, :attr:`ended_early`
        is set (with a warning). The pipeline reports both in its :class:`~vidocr.types.RunStats`.
        """
        stream = self._container.streams[self._facts.index]
        stream.thread_type = "AUTO"
        tb = self._facts.time_base
        origin = self._facts.start_pts
        discontinuous = bool(self._container.format.flags & _AVFMT_TS_DISCONT)
        # A seek goes by the file's own timestamps: in MPEG-TS they may restart, and it would land in another
        # recording. There the frames before ``start`` are decoded instead (correct, and slower).
        if start and start > 0 and not discontinuous:
            try:
                self._seek_to(self._container, start, origin or 0)
            except Exception as exc:  # noqa: BLE001 - a failed seek only costs time
                log.debug("seek failed in %s (%s); decoding from the start", self.path, exc)
        step = _frame_step(stream, tb)
        back_limit = _JUMP_BACK_S / tb
        forward_limit = _JUMP_FORWARD_S / tb if discontinuous else None
        index = 0
        offset = 0  # added to the file's timestamps after a discontinuity
        undo: tuple[int, int, int] | None = None  # (raw pts and offset before the last jump, frame index it ends)
        last_raw: int | None = None
        last_pts: int | None = None
        finished = True
        decoded = 0
        for frame in self._decode(stream):
            decoded += 1
            raw = frame.pts if frame.pts is not None else frame.dts
            if raw is None:
                # No timestamp at all: continue the clock from the previous frame's duration.
                raw = (last_raw or 0) + (frame.duration or step)
            if undo is not None and undo[0] < raw <= undo[0] + _GLITCH_FRAMES * step:
                # Back on the clock the last jump left a few frames ago: that was one damaged timestamp, not
                # a restart. Undo its offset (the frames in between keep their times; duplicates are dropped).
                offset, undo = undo[1], None
                self.discontinuities -= 1
            pts = raw + offset
            if origin is None:
                origin = pts
            if last_pts is not None:
                expected = last_pts + step
                if pts < last_pts - back_limit or (forward_limit is not None and pts > expected + forward_limit):
                    self.discontinuities += 1
                    undo = (last_raw, offset, decoded + _GLITCH_FRAMES) if last_raw is not None else None
                    offset += expected - pts
                    pts = expected
                elif pts <= last_pts:
                    continue  # duplicated or out-of-order timestamp: keep timestamps strictly increasing
            if undo is not None and decoded >= undo[2]:
                undo = None
            last_raw, last_pts = raw, pts
            rel = Timestamp(pts - origin, tb)
            if start is not None and rel.seconds < start - 1e-9:
                continue
            if end is not None and rel.seconds >= end:
                finished = False
                break
            fitted = self._fit(frame)
            if fitted is None:
                continue
            yield DecodedFrame(rel, index, fitted, self.info.rotation)
            index += 1
        if index == 0 and self.corrupt_frames and start is None:
            raise DecodeError(f"no decodable frames ({self.corrupt_frames} corrupt)", str(self.path))
        decoded_end = (last_pts - origin + step) * tb if last_pts is not None and origin is not None else None
        self._report(finished and decoded_end is not None, float(decoded_end or 0), end)

    def every_nth(self, step: int, start: float | None = None, end: float | None = None) -> Iterator[DecodedFrame]:
        """Every ``step``-th frame that :meth:`frames` (``start``, ``end``) yields, from the first: the same pictures,
        decoded without the frames that no other frame refers to and that are not wanted (most B-frames: a third
        to a half of a typical H.264 stream's decoding). A first pass reads the packets' timestamps alone, without
        decoding, to know which frames those are. Uses its own containers; a file whose clock :meth:`frames` has
        to mend (MPEG-TS, packets without timestamps) is decoded through with it instead."""
        yield from self._every_nth(step, start, end, self._nth_plan(step, start, end))

    def _every_nth(
        self, step: int, start: float | None, end: float | None, plan: tuple[list[int], list[int]] | None
    ) -> Iterator[DecodedFrame]:
        """:meth:`every_nth` with its timestamp pass (:meth:`_nth_plan`) done."""
        if plan is None:
            yield from self._nth_decoded(step, start, end)
            return
        counted = self.rescaled_frames  # the pipeline's count is of its own pass
        try:
            yield from self._nth_part(set(plan[0]), start, None, end)
        except _SeekFailed:  # it did not fail in the timestamp pass; decode through then
            yield from self._nth_decoded(step, start, end)
        finally:
            self.rescaled_frames = counted

    def map_every_nth(
        self, step: int, convert: Callable[[DecodedFrame], T], start: float | None = None, end: float | None = None,
        threads: int = 1,
    ) -> list[T]:
        """``convert`` of each frame :meth:`every_nth` gives, in its order. With ``threads`` > 1 the range is split
        at keyframes into up to that many parts with about as many of the frames each, and the parts are decoded
        at once, each by its own container and thread (FFmpeg decodes without holding the GIL); ``convert`` runs
        in the part's thread, so only what it returns is held, never a part's decoded pictures."""
        plan = self._nth_plan(step, start, end)
        parts = _split_at_keys(*plan, threads) if plan is not None and threads > 1 else []
        if len(parts) < 2:
            return [convert(frame) for frame in self._every_nth(step, start, end, plan)]
        counted = self.rescaled_frames
        try:
            return _at_once([partial(self._nth_part, set(wanted), start, key, end) for key, wanted in parts], convert)
        except _SeekFailed:
            return [convert(frame) for frame in self._nth_decoded(step, start, end)]
        finally:
            self.rescaled_frames = counted

    def _nth_plan(self, step: int, start: float | None, end: float | None) -> tuple[list[int], list[int]] | None:
        """The timestamps of the frames :meth:`every_nth` wants and of the range's keyframes, both sorted; None
        when the file is to be decoded through instead."""
        origin = self._facts.start_pts
        if step <= 1 or origin is None or self._container.format.flags & _AVFMT_TS_DISCONT:
            return None
        try:
            return self._nth_stamps(step, start, end, origin)
        except Exception as exc:  # noqa: BLE001 - a file the timestamp pass cannot read is decoded through
            log.debug("%s: timestamp pass failed (%s); decoding through", self.path, _why(exc))
            return None

    def _nth_part(self, wanted: set[int], start: float | None, key: int | None, end: float | None
                  ) -> Iterator[DecodedFrame]:
        """The frames whose timestamps are in ``wanted`` (emptied as they come), decoded from ``key`` (a keyframe's
        timestamp) or else from the keyframe at or before ``start``, skipping the unwanted frames nobody refers
        to; raises _SeekFailed if the seek does."""
        tb = self._facts.time_base
        origin = self._facts.start_pts or 0
        index = 0
        stop = end + 1.0 if end is not None else None  # past the range by more than any reordering delay
        with self._open() as container:
            try:
                if key is None:
                    stream = self._seek_to(container, start, origin)
                else:
                    stream = container.streams[self._facts.index]
                    container.seek(key, stream=stream, backward=True, any_frame=False)
            except Exception as exc:  # noqa: BLE001
                raise _SeekFailed from exc
            # Slice threads: the setting below changes per packet, and frame threads would decode ahead of it.
            stream.thread_type = "SLICE"
            context = stream.codec_context
            for packet in _packets(container, stream, self.path):
                past = stop is not None and packet.pts is not None and (packet.pts - origin) * tb >= stop
                if past or not wanted:
                    break
                context.skip_frame = "DEFAULT" if packet.pts in wanted else "NONREF"
                try:
                    frames = packet.decode()
                except Exception:  # noqa: BLE001 - as in frames(): a broken packet is skipped
                    continue
                for frame in frames:
                    if frame.pts in wanted and (fitted := self._fit(frame)) is not None:
                        wanted.discard(frame.pts)
                        yield DecodedFrame(Timestamp(frame.pts - origin, tb), index, fitted, self.info.rotation)
                        index += 1

    def _nth_decoded(self, step: int, start: float | None, end: float | None) -> Iterator[DecodedFrame]:
        with VideoSource(self.path, self._facts.index) as clip:
            for frame in clip.frames(start, end):
                if frame.index % step == 0:
                    yield frame

    def _nth_stamps(self, step: int, start: float | None, end: float | None, origin: int
                    ) -> tuple[list[int], list[int]] | None:
        """The timestamps of every ``step``-th frame in the range, in presentation order, and of the range's
        keyframes, from the packets alone; None when a packet has no timestamp."""
        tb = self._facts.time_base
        stamps, keys = set(), set()
        with self._open() as container:
            stream = self._seek_to(container, start, origin)
            for packet in container.demux(stream):
                if packet.pts is None:
                    if packet.size:
                        return None
                    continue  # the demuxer's closing empty packet
                rel = (packet.pts - origin) * tb
                if (start is None or rel >= start - 1e-9) and (end is None or rel < end):
                    stamps.add(packet.pts)
                    if packet.is_keyframe:
                        keys.add(packet.pts)
        return sorted(stamps)[::step], sorted(keys)

    def _seek_to(self, container: Any, start: float | None, origin: int) -> Any:
        """``container``'s video stream, sought to the keyframe at or before ``start`` (relative seconds; ``origin``:
        the stream's first timestamp) when ``start`` is after the beginning."""
        stream = container.streams[self._facts.index]
        if start and start > 0:
            container.seek(int(start / self._facts.time_base) + origin, stream=stream, backward=True, any_frame=False)
        return stream

    def _fit(self, frame: av.VideoFrame) -> av.VideoFrame | None:
        """The frame at the stream's picture size: scaled when its size differs (None if it cannot be)."""
        width, height = self._facts.coded_size
        if frame.width == width and frame.height == height:
            return frame
        self.rescaled_frames += 1
        try:
            return frame.reformat(width=width, height=height)
        except Exception as exc:  # noqa: BLE001 - a picture FFmpeg cannot even scale is a corrupt frame
            self.corrupt_frames += 1
            log.debug("%s: frame of %dx%d dropped: %s", self.path, frame.width, frame.height, _why(exc))
            return None

    def _report(self, finished: bool, decoded_end: float, end: float | None) -> None:
        """Say (once per file: not from a second source on it) what the decoding found out about the file."""
        expected = self._facts.expected_end_s
        if end is not None and expected is not None:
            expected = min(expected, end)
        short = finished and expected is not None and expected - decoded_end > max(1.0, 0.05 * expected)
        if finished and self._cut_mid_packet():
            short = True
        self.ended_early = short
        level = logging.DEBUG if self._quiet else logging.WARNING
        if self.discontinuities:
            log.log(level, "%s: timestamps restart or jump %d time(s) (concatenated recordings?); cue times go on "
                    "across them, as players show them", _shown(self.path), self.discontinuities)
        if short:
            told = f" of {expected:.1f} s" if expected is not None and expected > decoded_end else ""
            log.log(level, "%s: the file ended early (truncated?): decoded %.1f s%s; the subtitles cover that part",
                    _shown(self.path), decoded_end, told)

    def _cut_mid_packet(self) -> bool:
        """An MPEG-TS file whose size is not a whole number of its fixed-size packets was cut off."""
        if self._container.format.name != "mpegts":
            return False
        try:
            size = self.path.stat().st_size
        except OSError:
            return False
        return size % 188 != 0 and size % 192 != 0 and size % 204 != 0

    def keyframes_near(self, times: list[float], first: int = 0) -> Iterator[DecodedFrame]:
        """For each time (relative seconds), the first frame decodable after seeking there (numbered from
        ``first``); a seek landing on the keyframe the one before it landed on gives nothing.

        A cheap way to look at many places in a long file: one keyframe decode per seek. Uses its
        own container, so it can run before or after :meth:`frames`.
        """
        stream_tb = self._facts.time_base
        origin = self._facts.start_pts or 0
        with self._open() as container:
            stream = container.streams[self._facts.index]
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
                        if frames and (frame := self._fit(frames[0])) is not None:
                            pts = frame.pts if frame.pts is not None else origin
                            yield DecodedFrame(Timestamp(pts - origin, stream_tb), first + i, frame, self.info.rotation)
                            break
                except Exception as exc:  # noqa: BLE001 - a seek that fails on a damaged file only gives fewer samples
                    log.debug("%s: seek to %.1fs failed: %s", self.path, t, exc)

    def map_keyframes_near(self, times: list[float], convert: Callable[[DecodedFrame], T], threads: int = 1) -> list[T]:
        """``convert`` of each frame :meth:`keyframes_near` gives, in its order. With ``threads`` > 1 the times are
        cut into up to that many runs, sought and decoded at once, each by its own container and thread, where
        ``convert`` runs too. A run may give the keyframe the run before it ended on once more."""
        runs = [(k * len(times) // threads, times[k * len(times) // threads : (k + 1) * len(times) // threads])
                for k in range(max(1, threads))]
        runs = [(first, run) for first, run in runs if run]
        if len(runs) < 2:
            return [convert(frame) for frame in self.keyframes_near(times)]
        return _at_once([partial(self.keyframes_near, run, first) for first, run in runs], convert)

    def frame_step(self) -> Timestamp:
        """Nominal duration of one frame (used to close the last cue)."""
        stream = self._container.streams[self._facts.index]
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
                log.warning("%s: demuxing stopped early: %s", _shown(self.path), _why(exc))
                break
            except Exception as exc:  # noqa: BLE001 - e.g. IndexError: a damaged MPEG-TS table made up a stream
                self.corrupt_frames += 1
                log.debug("%s: demuxing stopped: %s", self.path, _why(exc))
                yield from self._drain(stream)
                break
            try:
                yield from packet.decode()
            except av.error.FFmpegError:
                self.corrupt_frames += 1
            except Exception as exc:  # noqa: BLE001 - PyAV on a hostile packet: count it, go on
                self.corrupt_frames += 1
                log.debug("%s: packet skipped: %s", self.path, _why(exc))

    def _drain(self, stream: Any) -> Iterator[av.VideoFrame]:
        """The frames the decoder still holds, when the demuxer stopped before its flush packet."""
        try:
            yield from stream.codec_context.decode(None)
        except Exception as exc:  # noqa: BLE001 - already flushed, or nothing to give
            log.debug("%s: decoder flush: %s", self.path, _why(exc))


def _packets(container: Any, stream: Any, path: Path) -> Iterator[Any]:
    """``container.demux(stream)`` up to where its structure breaks (what came before stands, as in frames())."""
    demux = container.demux(stream)
    while True:
        try:
            packet = next(demux)
        except StopIteration:
            return
        except Exception as exc:  # noqa: BLE001 - PyAV on a hostile file: stop there, never a traceback
            log.debug("%s: demuxing stopped: %s", path, _why(exc))
            return
        yield packet


def _pick_stream(container: Any, wanted: int | None, path: str) -> Any:
    """The video stream to read: ``wanted`` (a stream index), or the main one (see :class:`VideoSource`)."""
    videos = list(container.streams.video)
    if wanted is not None:
        match = next((s for s in videos if s.index == wanted), None)
        if match is None:
            have = ", ".join(str(s.index) for s in videos) or "none"
            raise InputError(f"no video stream {wanted} (video streams: {have})", path)
        return match
    if not videos:
        kind = "audio-only file" if container.streams.audio else "no video stream"
        raise InputError(kind, path)
    pictures = [s for s in videos if not s.disposition & av.stream.Disposition.attached_pic]
    if not pictures:
        raise InputError("no video stream (only a cover picture)", path)

    def rank(s: Any) -> tuple[int, bool, int]:
        ctx = s.codec_context
        area = (ctx.width or 0) * (ctx.height or 0) if ctx is not None else 0
        return area, bool(s.disposition & av.stream.Disposition.default), -s.index

    return max(pictures, key=rank)


def _why(exc: BaseException) -> str:
    """An exception as a short reason on one line."""
    text = getattr(exc, "strerror", None) or str(exc) or type(exc).__name__
    return " ".join(str(text).split())[:200]


def _shown(path: Path) -> str:
    return display_path(str(path))


def _frame_step(stream: Any, tb: Fraction) -> int:
    rate = stream.average_rate or stream.guessed_rate or Fraction(25)
    return max(1, round(1 / (Fraction(rate) * tb)))
