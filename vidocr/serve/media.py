"""Videos as the server sees them: a probe (is it a video, what size and rate), the picture at a time, and the
subtitle band of that picture as a JPEG or PNG.

Times are on the video's own clock, as cue times are (0 = the video stream's first frame). Any failure of FFmpeg
is an :class:`~vidocr.errors.InputError` naming the file.
"""

from __future__ import annotations

import contextlib
import io
import mimetypes
import threading
from collections import OrderedDict
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any

import av
import numpy as np
from PIL import Image

from vidocr.errors import InputError

#: Containers and codecs that browsers play in <video> (others get the mpv line).
_PLAYABLE_CONTAINERS = {".mp4", ".m4v", ".webm", ".mov", ".ogv", ".ogg"}
_PLAYABLE_CODECS = {"h264", "vp8", "vp9", "av1", "theora"}


@dataclass(frozen=True)
class Probe:
    width: int
    height: int
    fps: float | None
    duration_s: float | None
    codec: str
    mime: str
    playable: bool

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def _main_stream(container: Any, path: Path) -> Any:
    streams = [s for s in container.streams.video if s.codec_context.width and s.codec_context.height]
    if not streams:
        raise InputError("not a video (no video stream)", str(path))
    return max(streams, key=lambda s: s.codec_context.width * s.codec_context.height)


def probe(path: Path, *, decode: bool = False) -> Probe:
    """What the video is, its size as displayed (the first frame's rotation applied); with ``decode``, that frame
    must decode (an upload is checked this way)."""
    try:
        with av.open(str(path)) as container:
            stream = _main_stream(container, path)
            turned = False
            first = None
            with contextlib.suppress(av.FFmpegError, StopIteration):
                first = next(iter(container.decode(stream)))
            if first is not None:
                turned = (int(round(getattr(first, "rotation", 0) or 0)) % 180) != 0
            elif decode:
                raise InputError("not a video (no frame decodes)", str(path))
            rate = stream.average_rate or stream.guessed_rate
            duration = float(stream.duration * stream.time_base) if stream.duration and stream.time_base else (
                container.duration / 1e6 if container.duration else None)
            codec = stream.codec_context.name
            width, height = stream.codec_context.width, stream.codec_context.height
            if turned:
                width, height = height, width
    except InputError:
        raise
    except (av.FFmpegError, OSError, ValueError) as err:
        raise InputError(f"not a video FFmpeg can read ({type(err).__name__}: {err})".split("\n")[0], str(path)) \
            from None
    suffix = path.suffix.lower()
    mime = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
    if suffix in (".mkv", ".webm") and mime == "application/octet-stream":
        mime = "video/webm" if suffix == ".webm" else "video/x-matroska"
    playable = suffix in _PLAYABLE_CONTAINERS and codec in _PLAYABLE_CODECS
    return Probe(width, height, float(rate) if rate else None, duration, codec, mime, playable)


def frame_at(path: Path, ms: int) -> np.ndarray:
    """The RGB picture shown at ``ms`` (the last frame starting at or before it; the first frame before any)."""
    try:
        with av.open(str(path)) as container:
            stream = _main_stream(container, path)
            tb = stream.time_base or Fraction(1, 1000)
            start = stream.start_time or 0
            target = start + int(Fraction(ms, 1000) / tb)
            container.seek(max(start, target), stream=stream, backward=True, any_frame=False)
            shown = None
            for frame in container.decode(stream):
                if frame.pts is None:
                    continue
                if frame.pts > target and shown is not None:
                    break
                shown = frame
                if frame.pts >= target:
                    break
            if shown is None:
                raise InputError(f"no frame at {ms} ms", str(path))
            image: np.ndarray = shown.to_ndarray(format="rgb24")
            # As the pipeline sees it (cue boxes are in its coordinates): turned by the display rotation.
            turns = (int(round(getattr(shown, "rotation", 0) or 0)) % 360) // 90
            return np.ascontiguousarray(np.rot90(image, k=turns)) if turns else image
    except InputError:
        raise
    except (av.FFmpegError, OSError, ValueError) as err:
        raise InputError(f"cannot decode a frame at {ms} ms ({type(err).__name__})", str(path)) from None


def band_rows(height: int, box: tuple[int, int, int, int] | None) -> tuple[int, int]:
    """The rows of the subtitle band: the cue's box with room around it, else the frame's bottom third."""
    if box is None:
        return height * 2 // 3, height
    _, y, _, h = box
    pad = max(8, h // 2)
    top, bottom = max(0, y - pad), min(height, y + h + pad)
    return (top, bottom) if bottom - top >= 4 else band_rows(height, None)  # a box off the picture


def encode(image: np.ndarray, fmt: str, max_width: int = 960) -> bytes:
    pic = Image.fromarray(image)
    if pic.width > max_width:
        pic = pic.resize((max_width, max(1, round(pic.height * max_width / pic.width))), Image.Resampling.BILINEAR)
    out = io.BytesIO()
    if fmt == "png":
        pic.save(out, "PNG", optimize=False)
    else:
        pic.save(out, "JPEG", quality=82)
    return out.getvalue()


class BandCache:
    """Band images already made (a page shows the same ones again), at most ``size`` of them."""

    def __init__(self, size: int = 512) -> None:
        self.size = size
        self._items: OrderedDict[tuple[Any, ...], bytes] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, path: Path, stamp: tuple[int, int], ms: int, box: tuple[int, int, int, int] | None,
            fmt: str) -> bytes:
        key = (str(path), stamp, ms, box, fmt)
        with self._lock:
            if key in self._items:
                self._items.move_to_end(key)
                return self._items[key]
        image = frame_at(path, ms)
        top, bottom = band_rows(image.shape[0], box)
        data = encode(np.ascontiguousarray(image[top:bottom]), fmt)
        with self._lock:
            self._items[key] = data
            while len(self._items) > self.size:
                self._items.popitem(last=False)
        return data
