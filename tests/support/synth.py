"""Synthetic test videos with burned-in subtitles and exact, frame-accurate truth cues.

The truth comes from the timestamps actually stored in the file: after muxing, the packets are read back and must
match the planned frame times, or rendering fails. Used by the tests, the samples and the benchmarks (not package
code: it lives in ``tests/support/``, out of the wheel).
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from pathlib import Path

import av
import cv2
import numpy as np
import pysrt
from PIL import Image, ImageDraw, ImageFont

FONT_PATH = Path(__file__).parent / "fonts" / "NotoSansSC-Subset.otf"
# Red, blue, green and magenta are as dark as a mid grey in luma (60-135): only colour shows them.
COLOURS = {
    "white": (255, 255, 255),
    "yellow": (255, 235, 40),
    "red": (230, 40, 40),
    "blue": (60, 120, 255),
    "green": (40, 200, 40),
    "magenta": (220, 60, 200),
    "black": (0, 0, 0),
}
# Boxes behind the text (then without an outline): half-transparent black, or opaque white.
BOXES = {"dark": (0, 0, 0, 150), "light": (255, 255, 255, 255)}
POSITIONS = ("bottom", "top", "middle-low", "corner", "sign", "ticker")
BACKGROUNDS = ("photo", "flat", "dark")
CONTAINERS = {"mp4": "mp4", "mkv": "matroska", "ts": "mpegts"}
# Variable frame rate: runs of these intervals, with now and then one dropped frame (a doubled interval).
VFR_STEPS = (Fraction(1, 30), Fraction(1, 24), Fraction(1, 15))

Number = float | Fraction  # a Fraction is taken as is; a float as the decimal it prints as


@dataclass(frozen=True)
class SynthCue:
    """A subtitle to burn in, shown on frames whose time t satisfies ``start <= t < end`` (seconds)."""

    start: Number
    end: Number
    text: str  # lines separated by "\n"
    position: str = "bottom"  # "bottom" | "top" | "middle-low" (vertical-video captions, ~70% of the height)
    colour: str = "white"  # a COLOURS name
    box: str | None = None  # a BOXES name: the text sits on that box, without outline; None: black outline
    # Distractors: "corner" (a channel logo / watermark, top right), "sign" (text in the picture, upper
    # left third) or "ticker" (a news crawl scrolling right to left along the bottom edge, 160 px/s) with
    # ``subtitle=False`` are drawn but are not truth cues; ``scale`` sizes the text.
    subtitle: bool = True
    scale: float = 1.0


@dataclass(frozen=True)
class SynthSpec:
    """What to render. ``width``/``height`` are the picture as displayed (a rotated file stores it turned)."""

    width: int = 1280
    height: int = 720
    fps: Number = 25  # with ``vfr`` only the encoder's nominal rate
    duration: Number = 10.0
    cues: tuple[SynthCue, ...] = ()
    background: str = "photo"  # "photo" | "flat" | "dark"
    cut_every: float | None = 3.0  # a scene cut every this many seconds (None: one scene)
    seed: int = 0
    font_size: int | None = None  # default: 5.5% of the shorter side
    vfr: bool = False
    start_offset: Number = 0.0  # first frame's stored time; truth stays relative to the first frame
    container: str = "mp4"  # "mp4" | "mkv" | "ts"
    codec: str = "libx264"
    crf: int = 30
    letterbox: bool = False  # 2.35:1 picture between black bars; bottom/top cues go inside the bars
    fade_frames: int = 0  # frames of alpha ramp at each end of a cue (still counted as shown)
    rotation: int = 0  # display rotation, counter-clockwise as PyAV's ``VideoFrame.rotation``; mp4/mkv only

    def __post_init__(self) -> None:
        if self.background not in BACKGROUNDS or self.container not in CONTAINERS:
            raise ValueError(f"background must be one of {BACKGROUNDS}, container one of {tuple(CONTAINERS)}")
        if self.rotation % 90 or (self.rotation % 360 and self.container == "ts"):
            raise ValueError("rotation must be a multiple of 90, and MPEG-TS cannot store one")
        for cue in self.cues:
            if cue.position not in POSITIONS or cue.colour not in COLOURS or (cue.box and cue.box not in BOXES):
                raise ValueError(f"bad position, colour or box in {cue}")


@dataclass(frozen=True)
class TruthCue:
    """A cue as actually rendered: start inclusive, end exclusive, in ms from the first frame."""

    start_ms: int
    end_ms: int
    text: str


def x264_repeatable() -> dict[str, str]:
    """x264's options that make its output the same on every run: on a CPU with AVX-512, two encodes of the same
    frames came out different (measured: 4-5 different videos in 5 encodes, single-threaded too, from the first
    frame on; none with x264's AVX-512 code left out, threaded or not), so a test's clip, and the libass corpus,
    rendered differently each time and from machine to machine. Its AVX2 code and below is used there instead;
    every CPU with AVX-512 has those."""
    try:
        flags = Path("/proc/cpuinfo").read_text(errors="replace")
    except OSError:
        return {}
    return {"x264-params": "asm=MMX2,SSE2Fast,SSSE3,SSE4.2,AVX,FMA3,BMI2,AVX2"} if " avx512f" in flags else {}


X264_REPEATABLE = x264_repeatable()


def _exact(value: Number) -> Fraction:
    # Fraction(repr(0.52)) is 13/25, so a cue at 0.52 s includes the frame at exactly 0.52 s.
    return value if isinstance(value, Fraction) else Fraction(repr(float(value)))


def _ms(t: Fraction) -> int:
    return math.floor(t * 1000 + Fraction(1, 2))


def time_base(spec: SynthSpec) -> Fraction:
    """The time base frames are written in; chosen so the container stores every planned time unchanged."""
    if spec.container == "ts":
        return Fraction(1, 90000)
    if spec.container == "mkv":
        return Fraction(1, 1000)
    return Fraction(1, 90000) if spec.vfr else 1 / _exact(spec.fps)


def frame_times(spec: SynthSpec) -> list[Fraction]:
    """Every frame's time relative to the first, plus one more entry: where the last frame ends."""
    end = _exact(spec.duration)
    if spec.vfr:
        rng = random.Random(spec.seed)
        ideal = [Fraction(0)]
        while ideal[-1] < end:
            step = rng.choice(VFR_STEPS)
            steps = [step] * rng.randint(4, 12) + ([2 * step] if rng.random() < 0.3 else [])
            for s in steps:
                if ideal[-1] < end:
                    ideal.append(ideal[-1] + s)
    else:
        step = 1 / _exact(spec.fps)
        ideal = [i * step for i in range(math.ceil(end / step) + 1)]
    tb = time_base(spec)
    return [round(t / tb) * tb for t in ideal]


def truth_cues(spec: SynthSpec, times: Sequence[Fraction]) -> list[TruthCue]:
    """Truth for ``spec.cues`` given frame times (``frame_times`` output); cues on no frame are dropped."""
    out = []
    for cue in spec.cues:
        shown = _shown(cue, times)
        if shown and cue.subtitle:
            out.append(TruthCue(_ms(times[shown[0]]), _ms(times[shown[-1] + 1]), cue.text))
    return sorted(out, key=lambda c: (c.start_ms, c.end_ms))


def _shown(cue: SynthCue, times: Sequence[Fraction]) -> list[int]:
    start, end = _exact(cue.start), _exact(cue.end)
    return [i for i, t in enumerate(times[:-1]) if start <= t < end]


@lru_cache(maxsize=8)
def _font(size: int) -> ImageFont.FreeTypeFont:
    return ImageFont.truetype(str(FONT_PATH), size)


@lru_cache(maxsize=4096)
def _has_glyph(char: str) -> bool:
    font = _font(32)
    # Missing characters render as the font's .notdef box; U+FFFF is never in a font.
    return char.isspace() or bytes(font.getmask(char)) != bytes(font.getmask("\uffff"))


def missing_glyphs(text: str) -> set[str]:
    """Characters of ``text`` the bundled font cannot draw."""
    return {c for c in text if not _has_glyph(c)}


def _font_size(spec: SynthSpec) -> int:
    return spec.font_size or round(min(spec.width, spec.height) * 0.055)


def _picture_rows(spec: SynthSpec) -> tuple[int, int]:
    """Top row and height of the picture area (the part between letterbox bars)."""
    if not spec.letterbox:
        return 0, spec.height
    pic_h = min(spec.height, round(spec.width / 2.35 / 2) * 2)
    return (spec.height - pic_h) // 2, pic_h


@dataclass(frozen=True)
class _Overlay:
    x: int
    y: int
    rgb: np.ndarray  # premultiplied by alpha, float32
    alpha: np.ndarray  # float32 in 0..1, shape (h, w, 1)


def _overlay(spec: SynthSpec, cue: SynthCue) -> _Overlay:
    if missing := missing_glyphs(cue.text):
        raise ValueError(f"the bundled font has no glyph for {''.join(sorted(missing))!r}")
    size = max(8, round(_font_size(spec) * cue.scale))
    font, spacing = _font(size), round(size * 0.3)
    stroke = 0 if cue.box else max(1, round(size / 12))
    pad = 1 + (round(size * 0.3) if cue.box else 0)
    measure = ImageDraw.Draw(Image.new("L", (1, 1)))
    box = measure.multiline_textbbox((0, 0), cue.text, font=font, spacing=spacing, align="center", stroke_width=stroke)
    left, top, right, bottom = (int(v) for v in box)
    w, h = right - left + 2 * pad, bottom - top + 2 * pad
    if w > spec.width and cue.position != "ticker":
        raise ValueError(f"cue text is {w}px wide, wider than the {spec.width}px frame: {cue.text!r}")
    image = Image.new("RGBA", (w, h), BOXES[cue.box] if cue.box else (0, 0, 0, 0))
    ImageDraw.Draw(image).multiline_text(
        (pad - left, pad - top),
        cue.text,
        fill=COLOURS[cue.colour] + (255,),
        font=font,
        spacing=spacing,
        align="center",
        stroke_width=stroke,
        stroke_fill=(0, 0, 0, 255),
    )
    rgba = np.asarray(image, dtype=np.float32) / 255.0
    alpha = rgba[:, :, 3:]
    pic_top, pic_h = _picture_rows(spec)
    bar, margin = pic_top, round(spec.height * 0.06)
    if cue.position == "ticker":
        return _Overlay(spec.width, spec.height - h - 2, rgba[:, :, :3] * alpha * 255.0, alpha)
    if cue.position == "corner":
        return _Overlay(spec.width - w - margin, pic_top + margin, rgba[:, :, :3] * alpha * 255.0, alpha)
    if cue.position == "sign":
        return _Overlay(spec.width // 6, pic_top + pic_h // 4, rgba[:, :, :3] * alpha * 255.0, alpha)
    if cue.position == "middle-low":
        y = int(spec.height * 0.7 - h / 2)
    elif cue.position == "top":
        y = max(2, (bar - h) // 2) if bar else margin
    else:
        y = min(spec.height - h - 2, spec.height - bar + (bar - h) // 2) if bar else spec.height - margin - h
    return _Overlay((spec.width - w) // 2, y, rgba[:, :, :3] * alpha * 255.0, alpha)


TICKER_SPEED = 160  # pixels per second


def _scrolled(ov: _Overlay, width: int, elapsed: float) -> _Overlay:
    """A ticker overlay moved left by ``elapsed`` seconds of scrolling (wrapping round), clipped to the frame."""
    span = width + ov.rgb.shape[1]
    x = width - int(elapsed * TICKER_SPEED) % span
    left, right = max(0, -x), min(ov.rgb.shape[1], width - x)
    if right <= left:
        return _Overlay(0, ov.y, ov.rgb[:, :0], ov.alpha[:, :0])
    return _Overlay(max(0, x), ov.y, ov.rgb[:, left:right], ov.alpha[:, left:right])


def _blend(frame: np.ndarray, ov: _Overlay, strength: float) -> None:
    if ov.rgb.shape[1] == 0:
        return
    region = frame[ov.y : ov.y + ov.rgb.shape[0], ov.x : ov.x + ov.rgb.shape[1]]
    a = ov.alpha * strength
    region[:] = np.clip(region * (1.0 - a) + ov.rgb * strength + 0.5, 0, 255).astype(np.uint8)


_Shape = tuple[float, float, float, float, int, int, tuple[int, int, int]]  # x, y, vx, vy, rx, ry, colour


class _Scenery:
    """Footage-like backgrounds: a large smooth colour field per scene, panned, with shapes moving over it."""

    def __init__(self, spec: SynthSpec, height: int) -> None:
        self.spec, self.h, self.w, self.margin = spec, height, spec.width, 48
        self.scene_index = -1
        self.image = np.zeros((1, 1, 3), np.uint8)
        self.pan = (0.0, 0.0)
        self.shapes: list[_Shape] = []

    def frame(self, t: Fraction) -> np.ndarray:
        spec, cut = self.spec, self.spec.cut_every
        index = int(t / _exact(cut)) if cut else 0
        if index != self.scene_index:
            self._new_scene(random.Random(spec.seed * 1000 + index), np.random.default_rng([spec.seed, index]))
            self.scene_index = index
        local = float(t - _exact(cut) * index) if cut else float(t)
        dx, dy = (_pingpong(v * local, self.margin * 2) for v in self.pan)
        out = self.image[dy : dy + self.h, dx : dx + self.w].copy()
        for x0, y0, vx, vy, rx, ry, colour in self.shapes:
            x = int((x0 + vx * local) % (self.w + 2 * rx)) - rx
            y = int((y0 + vy * local) % (self.h + 2 * ry)) - ry
            cv2.ellipse(out, (x, y), (rx, ry), 0, 0, 360, colour, -1, cv2.LINE_AA)
        return out

    def _new_scene(self, rnd: random.Random, rng: np.random.Generator) -> None:
        h, w = self.h + 4 * self.margin, self.w + 4 * self.margin
        if self.spec.background == "flat":
            self.image = np.empty((h, w, 3), np.uint8)
            self.image[:] = [rnd.randint(40, 200) for _ in range(3)]
            self.pan, self.shapes = (0.0, 0.0), []
            return
        field_ = np.zeros((h, w, 3), np.float32)
        for octave in range(5):  # smooth multi-octave noise: large soft regions plus some detail
            cell = min(h, w) / 3 / 2**octave  # square cells, in portrait and landscape alike
            small = rng.random((math.ceil(h / cell), math.ceil(w / cell), 3), dtype=np.float32)
            field_ += cv2.resize(small, (w, h), interpolation=cv2.INTER_CUBIC) * 0.55**octave
        grey = field_.mean(axis=2, keepdims=True)
        field_ = grey + (field_ - grey) * np.float32(rnd.uniform(0.3, 0.8))  # real footage is not this saturated
        field_ -= field_.min()
        field_ *= np.float32(rnd.uniform(150, 240) / max(float(field_.max()), 1e-6))
        field_ += np.float32(rnd.uniform(0, 40))
        for _ in range(rnd.randint(3, 9)):  # hard edges: walls, windows, poles
            x, y = rnd.randint(0, w), rnd.randint(0, h)
            base = rnd.uniform(20, 230)
            colour = (base + rnd.uniform(-25, 25), base + rnd.uniform(-25, 25), base + rnd.uniform(-25, 25))
            cv2.rectangle(field_, (x, y), (x + rnd.randint(4, w // 4), y + rnd.randint(4, h // 3)), colour, -1)
        if rnd.random() < 0.5:  # a bright sky/wall/shirt area low in the picture, behind where subtitles go
            soft = _soft_blob(rnd, h, w)
            field_ = (field_ * (1 - soft) + np.float32(rnd.uniform(215, 250)) * soft).astype(np.float32)
        field_ += rng.normal(0, 3.0, (h, w, 1)).astype(np.float32)  # fine, static grain
        dark = self.spec.background == "dark"
        self.image = np.clip(field_ * (0.22 if dark else 1.0), 0, 255).astype(np.uint8)
        self.pan = (rnd.uniform(-30, 30), rnd.uniform(-12, 12))
        top = 60 if dark else 255
        self.shapes = [self._shape(rnd, w, h, top) for _ in range(rnd.randint(2, 5))]

    def _shape(self, rnd: random.Random, w: int, h: int, top: int) -> _Shape:
        colour = (rnd.randint(0, top), rnd.randint(0, top), rnd.randint(0, top))
        size = (rnd.randint(15, self.h // 5), rnd.randint(15, self.h // 5))
        return (rnd.uniform(0, w), rnd.uniform(0, h), rnd.uniform(-150, 150), rnd.uniform(-60, 60), *size, colour)


def _soft_blob(rnd: random.Random, h: int, w: int) -> np.ndarray:
    """A blurred ellipse in the lower part of an (h, w) picture, 0..1, shape (h, w, 1)."""
    sh, sw = h // 8, w // 8  # drawn and blurred small: a full-size blur of this radius is slow
    mask = np.zeros((sh, sw), np.float32)
    centre = (rnd.randint(sw // 5, 4 * sw // 5), rnd.randint(int(sh * 0.65), int(sh * 0.9)))
    cv2.ellipse(mask, centre, (rnd.randint(sw // 6, sw // 3), rnd.randint(sh // 8, sh // 4)), 0, 0, 360, 1.0, -1)
    blurred = cv2.GaussianBlur(mask, (0, 0), sh / 20)
    return cv2.resize(blurred, (w, h), interpolation=cv2.INTER_LINEAR)[:, :, None]


def _pingpong(x: float, span: int) -> int:
    x = abs(x) % (2 * span)
    return int(x if x < span else 2 * span - x)


def render_video(spec: SynthSpec, path: str | Path) -> list[TruthCue]:
    """Render ``spec`` to ``path``; returns the truth, checked against the timestamps read back from the file."""
    times = frame_times(spec)
    tb, offset = time_base(spec), round(_exact(spec.start_offset) / time_base(spec))
    ramp = spec.fade_frames + 1
    plan = []  # per cue: its overlay, and its opacity on each frame index it is shown on (fades at both ends)
    for cue in spec.cues:
        shown = _shown(cue, times)
        opacity = {f: min(1.0, (k + 1) / ramp, (len(shown) - k) / ramp) for k, f in enumerate(shown)}
        plan.append((_overlay(spec, cue), opacity))
    pic_top, pic_h = _picture_rows(spec)
    scenery = _Scenery(spec, pic_h)
    turns = (spec.rotation // 90) % 4
    coded_w, coded_h = (spec.height, spec.width) if turns % 2 else (spec.width, spec.height)
    with av.open(str(path), "w", format=CONTAINERS[spec.container]) as out:
        stream = out.add_stream(spec.codec, rate=Fraction(30) if spec.vfr else _exact(spec.fps))
        assert isinstance(stream, av.VideoStream)
        stream.width, stream.height, stream.pix_fmt = coded_w, coded_h, "yuv420p"
        stream.codec_context.time_base = stream.time_base = tb
        stream.codec_context.gop_size = 90 if spec.vfr else round(3 * _exact(spec.fps))  # ~3 s
        stream.options = {"crf": str(spec.crf), "preset": "veryfast", **X264_REPEATABLE}
        # Frame-threaded encoding, as real encodes are: one slice per picture. (PyAV's default, slice
        # threading, makes x264 cut every picture into slices, which flatters slice-threaded decoding.)
        stream.codec_context.thread_type = "FRAME"
        if turns:
            stream.set_display_rotation(spec.rotation)
        for i, t in enumerate(times[:-1]):
            rgb = np.zeros((spec.height, spec.width, 3), np.uint8)
            rgb[pic_top : pic_top + pic_h] = scenery.frame(t)
            for cue, (overlay, opacity) in zip(spec.cues, plan, strict=True):
                if i in opacity:
                    if cue.position == "ticker":
                        overlay = _scrolled(overlay, spec.width, float(t - _exact(cue.start)))
                    _blend(rgb, overlay, opacity[i])
            frame = av.VideoFrame.from_ndarray(np.ascontiguousarray(np.rot90(rgb, -turns)), format="rgb24")
            frame.pts, frame.time_base = offset + round(t / tb), tb
            out.mux(stream.encode(frame))
        out.mux(stream.encode(None))
    _check_stored_times(path, times[:-1])
    return truth_cues(spec, times)


def _check_stored_times(path: str | Path, times: Sequence[Fraction]) -> None:
    with av.open(str(path)) as container:
        stream = container.streams.video[0]
        pts = sorted(p.pts for p in container.demux(stream) if p.pts is not None)
        tb = stream.time_base
    if tb is None or [(p - pts[0]) * tb for p in pts] != list(times):
        raise RuntimeError(f"{path}: the container did not store the planned frame times")


def write_srt(cues: Sequence[TruthCue], path: str | Path) -> None:
    """Write cues as SubRip (UTF-8, numbered from 1)."""
    at = pysrt.SubRipTime.from_ordinal
    subs = pysrt.SubRipFile([pysrt.SubRipItem(i, at(c.start_ms), at(c.end_ms), c.text) for i, c in enumerate(cues, 1)])
    subs.save(str(path), encoding="utf-8")


def read_srt(path: str | Path) -> list[TruthCue]:
    """Read a SubRip file into cues (text lines joined with "\\n")."""
    subs = pysrt.open(str(path), encoding="utf-8")
    return [TruthCue(item.start.ordinal, item.end.ordinal, item.text) for item in subs]
