"""Subtitles burned in by libass (FFmpeg's ``ass`` filter), the way releases are made, with truth from what it drew.

Used by ``bench/libass_corpus.py`` (the evaluation corpus) and ``tests/test_libass_classes.py`` (one small clip per
failure class). A :class:`Clip` is planned frame by frame: which subtitle events are on screen on each frame. The
background is drawn here (photos or generated pictures with zoom, pan, handheld shake, cuts, fades to black,
flashes, printed text on signs and pages, grain); FFmpeg's ``ass`` filter draws the subtitles from a generated
``.ass`` file; PyAV encodes the result (x264, CRF, any rate, VFR, MPEG-TS with a start offset). The truth is what
libass actually drew: the planned states are checked against a second render of the same ``.ass`` over black (a
frame planned empty must have no subtitle pixel, a planned change of text must change the pixels), and the cue
times are the frame times read back from the encoded file, relative to its first frame.

Needs the ``ffmpeg`` binary built with libass (Debian's ``ffmpeg``), ``fc-match`` and the fonts a clip names.
Not package code: it lives in ``tests/support/``, out of the wheel.
"""

from __future__ import annotations

import json
import math
import random
import re
import shutil
import subprocess
import threading
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass, field
from fractions import Fraction
from functools import cache, lru_cache
from pathlib import Path
from typing import cast

import av
import cv2
import numpy as np
from PIL import Image, ImageDraw, ImageFont

from .synth import X264_REPEATABLE

#: A ``Scene.picture`` of this form is drawn here (a photo-like picture from the seed) instead of read from a file.
GENERATED = "generated:"
#: A smooth dark picture (an out-of-focus photo: dark gradients, a few soft pale streaks, no fine texture): see
#: smooth_picture.
SMOOTH = "smooth:"


@dataclass(frozen=True)
class Style:
    """One ASS style. Colours are (r, g, b); ``box``: None (outline + shadow), "opaque", "half" or "light" (a light
    box behind ``colour``, which should then be dark)."""

    font: str
    size: float  # font size as a share of the frame height
    colour: tuple[int, int, int] = (255, 255, 255)
    outline: float = 2.5  # share of the font size, in percent
    outline_colour: tuple[int, int, int] = (0, 0, 0)
    shadow: float = 0.0
    box: str | None = None
    bold: bool = False
    italic: bool = False


@dataclass(frozen=True)
class Event:
    """A subtitle event on frames ``first`` .. ``last - 1``; ``slot`` 0 is the bottom line, 1 the line above."""

    first: int
    last: int
    text: str  # lines separated by "\n"
    slot: int = 0
    italic: bool = False


@dataclass(frozen=True)
class Scene:
    first: int
    picture: str
    motion: str  # "zoom" | "pan" | "shake" | "still"


@dataclass
class Clip:
    name: str
    half: str
    seed: int
    width: int
    height: int
    fps: Fraction  # nominal rate (VFR clips: the encoder's)
    frames: int
    style: Style
    events: list[Event]
    scenes: list[Scene]
    vfr: bool = False
    container: str = "mp4"
    start_offset: float = 0.0
    crf: int = 26
    grain: float = 0.0
    fades: list[tuple[int, int]] = field(default_factory=list)  # (first frame, frames) of a fade out and in
    flashes: list[int] = field(default_factory=list)  # first frame of a 2-frame white flash
    signs: list[tuple[str, float, float]] = field(default_factory=list)  # printed text, (text, x, y) as shares
    page: bool = False  # a page of printed text in the picture, just above the subtitles
    page_y: float = 0.54  # the page's top, as a share of the picture's height (0.54: above the subtitle band)


@dataclass(frozen=True)
class Decor:
    """How printed text in the picture is drawn: the font of Latin signs and of the page, of CJK signs, and the
    sentences the page's words are drawn from."""

    sign_font: str = "DejaVu Serif"
    cjk_sign_font: str = "WenQuanYi Zen Hei"
    page_lines: tuple[str, ...] = (
        "Where were you last night?", "I told you, I was at the office.", "That's not what your sister said.",
        "We should leave before the rain starts.", "Nobody knows where he went.", "Give me five more minutes.",
        "The train leaves at half past nine.", "I never asked for any of this.", "Let me think about it.",
    )


@dataclass(frozen=True)
class TruthCue:
    """A cue as libass drew it: frames ``first`` .. ``last - 1``, times in ms from the first frame."""

    start_ms: int
    end_ms: int
    text: str
    first: int
    last: int


@dataclass(frozen=True)
class Rendered:
    """A rendered clip: the video, its truth cues, and each stored frame's time in ms from the first frame (plus
    where the last frame ends)."""

    video: Path
    cues: list[TruthCue]
    frame_ms: list[float]

    def frame_at(self, ms: float) -> float:
        """Where ``ms`` falls in frames (fractional between two frame times; past the ends, at the ends' rate)."""
        t = self.frame_ms
        k = int(np.searchsorted(t, ms, side="right")) - 1
        k = min(max(k, 0), len(t) - 2)
        return k + (ms - t[k]) / (t[k + 1] - t[k])


@cache
def have_ffmpeg_ass() -> bool:
    """Whether an ``ffmpeg`` binary with the ``ass`` filter (libass) and ``fc-match`` are on PATH."""
    if not (shutil.which("ffmpeg") and shutil.which("fc-match")):
        return False
    out = subprocess.run(["ffmpeg", "-hide_banner", "-filters"], capture_output=True, text=True, check=False)
    return any(line.split()[1:2] == ["ass"] for line in out.stdout.splitlines())


@cache
def has_font(family: str) -> bool:
    """Whether fontconfig has ``family`` itself (fc-match falls back to another font silently)."""
    out = subprocess.run(["fc-match", "-f", "%{family}", family], capture_output=True, text=True, check=False)
    return family.lower() in (f.strip().lower() for f in out.stdout.split(","))


# -- truth -----------------------------------------------------------------------------------------------------
def states(clip: Clip) -> list[tuple[int, ...]]:
    """For each frame, the indices of the events on screen."""
    out: list[tuple[int, ...]] = []
    for f in range(clip.frames):
        out.append(tuple(i for i, e in enumerate(clip.events) if e.first <= f < e.last))
    return out


def state_text(clip: Clip, active: Sequence[int]) -> str:
    """The subtitle a viewer sees: lines from the top slot down, without ASS override tags ("{\\fad(200,200)}")."""
    events = sorted((clip.events[i] for i in active), key=lambda e: -e.slot)
    return "\n".join(re.sub(r"\{[^}]*\}", "", e.text) for e in events)


def truth(clip: Clip, times: Sequence[Fraction]) -> list[TruthCue]:
    """Cues from the planned states and the stored frame times (``times`` has one more entry than frames: where
    the last frame ends)."""
    def ms(t: Fraction) -> int:
        return math.floor(t * 1000 + Fraction(1, 2))

    cues: list[TruthCue] = []
    run_start, current = 0, cast(tuple[int, ...], ())
    per_frame = states(clip) + [()]
    for f, active in enumerate(per_frame):
        if active != current:
            if current:
                cues.append(TruthCue(ms(times[run_start]), ms(times[f]), state_text(clip, current), run_start, f))
            run_start, current = f, active
    return cues


# -- rendering -------------------------------------------------------------------------------------------------
def _ass_colour(rgb: tuple[int, int, int], alpha: int = 0) -> str:
    r, g, b = rgb
    return f"&H{alpha:02X}{b:02X}{g:02X}{r:02X}"


def _ass_time(frame: int, fps: Fraction) -> str:
    """An ASS time (centiseconds) that libass puts on ``frame`` of a constant-rate render and not on the one
    before: just under the frame's time (the filter truncates the frame time to whole milliseconds)."""
    cs = max(0, math.floor((Fraction(frame) / fps * 1000 - 1) / 10))
    h, rest = divmod(cs, 360000)
    m, rest = divmod(rest, 6000)
    s, c = divmod(rest, 100)
    return f"{h}:{m:02d}:{s:02d}.{c:02d}"


def ass_script(clip: Clip, fps: Fraction) -> str:
    st = clip.style
    size = round(st.size * clip.height)
    outline = st.outline * size / 100 if st.box is None else max(2.0, size * 0.12)
    shadow = st.shadow * size / 100
    border = 3 if st.box else 1
    if st.box == "opaque":
        box_colour = _ass_colour((25, 25, 25))
        back = _ass_colour((0, 0, 0), 0xFF)
    elif st.box == "half":
        box_colour = _ass_colour((0, 0, 0), 0x70)
        back = _ass_colour((0, 0, 0), 0xFF)
    elif st.box == "light":  # dark text on a light box (short-video captions)
        box_colour = _ass_colour((238, 238, 232))
        back = _ass_colour((0, 0, 0), 0xFF)
    else:
        box_colour = _ass_colour(st.outline_colour)
        back = _ass_colour((0, 0, 0), 0x60)
    margin = round(clip.height * 0.06)
    head = (
        "[Script Info]\nScriptType: v4.00+\nWrapStyle: 2\nScaledBorderAndShadow: yes\n"
        f"PlayResX: {clip.width}\nPlayResY: {clip.height}\n\n[V4+ Styles]\n"
        "Format: Name, Fontname, Fontsize, PrimaryColour, SecondaryColour, OutlineColour, BackColour, Bold, Italic, "
        "Underline, StrikeOut, ScaleX, ScaleY, Spacing, Angle, BorderStyle, Outline, Shadow, Alignment, MarginL, "
        "MarginR, MarginV, Encoding\n"
        f"Style: Default,{st.font},{size},{_ass_colour(st.colour)},&H000000FF,{box_colour},{back},"
        f"{-1 if st.bold else 0},{-1 if st.italic else 0},0,0,100,100,0,0,{border},{outline:.1f},{shadow:.1f},2,"
        f"{round(clip.width * 0.05)},{round(clip.width * 0.05)},{margin},1\n\n[Events]\n"
        "Format: Layer, Start, End, Style, Name, MarginL, MarginR, MarginV, Effect, Text\n"
    )
    rows = []
    line_step = round(size * 1.25 + (2 * outline if st.box else 0))
    for e in clip.events:
        text = e.text.replace("\n", "\\N")
        if e.italic:
            text = "{\\i1}" + text
        rows.append(
            f"Dialogue: 0,{_ass_time(e.first, fps)},{_ass_time(e.last, fps)},Default,,0,0,"
            f"{margin + e.slot * line_step},,{text}"
        )
    return head + "\n".join(rows) + "\n"


@lru_cache(maxsize=16)
def _photo(path: str, width: int, height: int) -> np.ndarray:
    """The picture as RGB, resized to cover 1.3x the frame (room for zoom, pan and shake)."""
    if path.startswith(GENERATED):
        return generated_picture(int(path[len(GENERATED):]), math.ceil(1.3 * width), math.ceil(1.3 * height))
    if path.startswith(SMOOTH):
        return smooth_picture(int(path[len(SMOOTH):]), math.ceil(1.3 * width), math.ceil(1.3 * height))
    img = cv2.imread(path, cv2.IMREAD_COLOR)
    if img is None:
        raise SystemExit(f"cannot read picture {path}")
    rgb = cv2.cvtColor(img, cv2.COLOR_BGR2RGB)
    if rgb.ndim == 2:
        rgb = np.stack([rgb] * 3, axis=-1)
    scale = max(1.3 * width / rgb.shape[1], 1.3 * height / rgb.shape[0])
    return cv2.resize(rgb, (math.ceil(rgb.shape[1] * scale), math.ceil(rgb.shape[0] * scale)),
                      interpolation=cv2.INTER_AREA)


def _font_file(family: str) -> str:
    out = subprocess.run(["fc-match", "-f", "%{file}", family], capture_output=True, text=True, check=True)
    return out.stdout.strip()


def _decorate(clip: Clip, photo: np.ndarray, rng: random.Random, decor: Decor) -> np.ndarray:
    """Printed text in the picture: signs (in the lower half, near the subtitle band) and a book page."""
    if not clip.signs and not clip.page:
        return photo
    img = Image.fromarray(photo)
    draw = ImageDraw.Draw(img)
    h, w = photo.shape[:2]
    sign_font = _font_file(decor.sign_font)
    for text, x, y in clip.signs:
        size = max(12, round(clip.height * rng.uniform(0.04, 0.06)))
        font: ImageFont.FreeTypeFont | ImageFont.ImageFont
        try:
            font = ImageFont.truetype(_font_file(decor.cjk_sign_font) if not text.isascii() else sign_font, size)
        except OSError:
            font = ImageFont.load_default()
        box = draw.textbbox((0, 0), text, font=font)
        px, py = round(x * w), round(y * h)
        pad = size // 3
        fill = tuple(rng.randrange(20, 240) for _ in range(3))
        draw.rectangle((px - pad, py - pad, px + box[2] + pad, py + box[3] + pad), fill=fill)
        ink = (255, 255, 255) if sum(fill) < 380 else (10, 10, 10)
        draw.text((px, py), text, font=font, fill=ink)
    if clip.page:
        # A page of small dark print on paper, in the lower middle of the picture (by default above the subtitle band).
        size = max(10, round(clip.height * 0.028))
        font = ImageFont.truetype(sign_font, size)
        pw, ph = round(w * 0.42), round(h * 0.2)
        px, py = round(w * 0.29), round(h * clip.page_y)
        draw.rectangle((px, py, px + pw, py + ph), fill=(236, 230, 214))
        words = " ".join(rng.choice(decor.page_lines) for _ in range(30)).split()
        y = py + size // 2
        while y + size < py + ph:
            line = ""
            while words and draw.textlength(line + " " + words[0], font=font) < pw - size:
                line = (line + " " + words.pop(0)).strip()
            draw.text((px + size // 2, y), line, font=font, fill=(30, 30, 35))
            y += round(size * 1.3)
    return np.asarray(img)


def backgrounds(clip: Clip, decor: Decor = Decor()) -> Iterator[np.ndarray]:
    """The picture of every frame (RGB), subtitles not yet drawn."""
    rng = random.Random(clip.seed * 7 + 1)
    scenes = clip.scenes + [Scene(clip.frames, "", "still")]
    for s, scene in enumerate(scenes[:-1]):
        photo = _decorate(clip, _photo(scene.picture, clip.width, clip.height), rng, decor)
        ph, pw = photo.shape[:2]
        length = scenes[s + 1].first - scene.first
        x0, y0 = rng.uniform(0, pw - clip.width), rng.uniform(0, ph - clip.height)
        dx, dy = rng.uniform(-1, 1) * (pw - clip.width) * 0.3, rng.uniform(-1, 1) * (ph - clip.height) * 0.3
        jx = jy = 0.0
        last: tuple[np.ndarray, np.ndarray] | None = None
        for k in range(length):
            f = scene.first + k
            u = k / max(1, length - 1)
            zoom, x, y = 1.0, x0, y0
            if scene.motion == "zoom":
                zoom = 1.0 + 0.12 * u
            elif scene.motion == "pan":
                x = min(max(0.0, x0 + dx * u), pw - clip.width)
                y = min(max(0.0, y0 + dy * u), ph - clip.height)
            elif scene.motion == "shake":
                jx = 0.8 * jx + rng.gauss(0, 2.5)
                jy = 0.8 * jy + rng.gauss(0, 2.5)
                x = min(max(0.0, x0 + jx * 3), pw - clip.width)
                y = min(max(0.0, y0 + jy * 3), ph - clip.height)
            cx, cy = x + clip.width / 2, y + clip.height / 2
            m = np.array([[zoom, 0, clip.width / 2 - zoom * cx], [0, zoom, clip.height / 2 - zoom * cy]])
            if last is None or not np.array_equal(m, last[0]):  # a still picture is warped once
                last = m, cv2.warpAffine(photo, m, (clip.width, clip.height), flags=cv2.INTER_LINEAR,
                                         borderMode=cv2.BORDER_REFLECT)
            frame = last[1]
            gain = 1.0
            for first, n in clip.fades:
                half = n // 2
                if first <= f < first + half:
                    gain = 1 - (f - first + 1) / half
                elif first + half <= f < first + n:
                    gain = (f - first - half + 1) / (n - half)
            flash = any(first <= f < first + 2 for first in clip.flashes)
            if gain == 1.0 and not flash and not clip.grain:
                yield frame  # what the float path below gives, without its cost
                continue
            out = frame.astype(np.float32) * gain
            if flash:
                out = out * 0.3 + 255 * 0.7
            if clip.grain:
                out += np.random.default_rng(clip.seed * 100003 + f).normal(0, clip.grain, out.shape)
            yield np.clip(out, 0, 255).astype(np.uint8)


def _proxy_rate(clip: Clip) -> Fraction:
    """The constant rate FFmpeg renders at: the nominal rate, or 25 for VFR clips (the subtitle plan is in
    frames; the real VFR times are given to the frames when they are encoded)."""
    return Fraction(25) if clip.vfr else clip.fps


def _ffmpeg_render(clip: Clip, ass: Path, source: Iterator[np.ndarray] | None, pix_fmt: str) -> Iterator[np.ndarray]:
    """Frames with the subtitles drawn by FFmpeg's ``ass`` filter (libass); over black when ``source`` is None."""
    rate = _proxy_rate(clip)
    size = f"{clip.width}x{clip.height}"
    escaped = str(ass).replace("\\", "\\\\").replace(":", "\\:").replace("'", "\\'")
    if source is None:
        inp = ["-f", "lavfi", "-i", f"color=black:s={size}:r={rate.numerator}/{rate.denominator}"]
    else:
        inp = ["-f", "rawvideo", "-pix_fmt", "rgb24", "-s", size, "-framerate", f"{rate.numerator}/{rate.denominator}",
               "-i", "-"]
    cmd = ["ffmpeg", "-v", "error", "-nostdin" if source is None else "-y", *inp, "-vf", f"ass='{escaped}'",
           "-frames:v", str(clip.frames), "-f", "rawvideo", "-pix_fmt", pix_fmt, "-"]
    proc = subprocess.Popen(cmd, stdin=subprocess.PIPE if source is not None else subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    errors: list[BaseException] = []

    def feed() -> None:
        assert proc.stdin is not None and source is not None
        try:
            for frame in source:
                proc.stdin.write(frame.tobytes())
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)
        finally:
            proc.stdin.close()

    feeder = threading.Thread(target=feed, daemon=True) if source is not None else None
    if feeder:
        feeder.start()
    channels = 3 if pix_fmt == "rgb24" else 1
    nbytes = clip.width * clip.height * channels
    assert proc.stdout is not None
    for _ in range(clip.frames):
        data = proc.stdout.read(nbytes)
        if len(data) < nbytes:
            break
        arr = np.frombuffer(data, np.uint8).reshape(clip.height, clip.width, channels)
        yield arr if channels == 3 else arr[:, :, 0]
    proc.stdout.close()
    if feeder:
        feeder.join()
    err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
    if proc.wait() != 0 or errors:
        raise RuntimeError(f"ffmpeg failed for {clip.name}: {err.strip() or errors}")


def check_rendered(clip: Clip, ass: Path) -> None:
    """The planned states are what libass drew: no subtitle pixel on a frame planned empty, some on every other
    frame, and other pixels wherever the planned text changes."""
    planned = states(clip)
    prev: np.ndarray | None = None
    count = 0
    for f, sub in enumerate(_ffmpeg_render(clip, ass, None, "gray")):
        count += 1
        drawn = bool(sub.max() > 0)
        if drawn != bool(planned[f]):
            raise RuntimeError(f"{clip.name}: frame {f} planned {'with' if planned[f] else 'without'} a subtitle, "
                               f"libass drew {'one' if drawn else 'none'}")
        changed = f and planned[f] and planned[f - 1] and planned[f] != planned[f - 1]
        if changed and prev is not None and np.array_equal(sub, prev):
            raise RuntimeError(f"{clip.name}: frame {f} planned a new text, libass drew the same")
        prev = sub
    if count != clip.frames:
        raise RuntimeError(f"{clip.name}: libass rendered {count} of {clip.frames} frames")


def frame_times(clip: Clip) -> list[Fraction]:
    """Planned frame times (seconds from the first frame), plus where the last frame ends."""
    if not clip.vfr:
        return [Fraction(i) / clip.fps for i in range(clip.frames + 1)]
    rng = random.Random(clip.seed * 13 + 5)
    times = [Fraction(0)]
    while len(times) <= clip.frames:
        step = rng.choice([Fraction(1, 30), Fraction(1, 24), Fraction(1, 20)])
        for _ in range(rng.randint(3, 10)):
            times.append(times[-1] + step)
        if rng.random() < 0.3:
            times.append(times[-1] + 2 * step)  # a dropped frame
    return times[: clip.frames + 1]


def encode(clip: Clip, frames: Iterator[np.ndarray], path: Path) -> list[Fraction]:
    """Encode with PyAV at the planned times; returns the stored frame times relative to the first frame."""
    planned = frame_times(clip)
    tb = Fraction(1, 90000) if clip.container == "ts" or clip.vfr else (
        Fraction(1, 1000) if clip.container == "mkv" else 1 / clip.fps)
    offset = round(Fraction(clip.start_offset) / tb)
    fmt = {"mp4": "mp4", "mkv": "matroska", "ts": "mpegts"}[clip.container]
    with av.open(str(path), "w", format=fmt) as out:
        stream = out.add_stream("libx264", rate=Fraction(30) if clip.vfr else clip.fps)
        assert isinstance(stream, av.VideoStream)
        stream.width, stream.height, stream.pix_fmt = clip.width, clip.height, "yuv420p"
        stream.codec_context.time_base = stream.time_base = tb
        stream.codec_context.thread_type = "FRAME"
        stream.options = {"crf": str(clip.crf), "preset": "veryfast", **X264_REPEATABLE}
        for i, rgb in enumerate(frames):
            frame = av.VideoFrame.from_ndarray(np.ascontiguousarray(rgb), format="rgb24")
            frame.pts, frame.time_base = offset + round(planned[i] / tb), tb
            out.mux(stream.encode(frame))
        out.mux(stream.encode(None))
    with av.open(str(path)) as container:
        vs = container.streams.video[0]
        stored = sorted(p.pts for p in container.demux(vs) if p.pts is not None)
        stb = vs.time_base
    assert stb is not None
    if len(stored) != clip.frames:
        raise RuntimeError(f"{path}: {len(stored)} frames stored, {clip.frames} planned")
    times = [(p - stored[0]) * stb for p in stored]
    return times + [times[-1] + (planned[-1] - planned[-2])]


def render(clip: Clip, folder: Path, decor: Decor = Decor()) -> Rendered:
    """Render ``clip`` into ``folder``: the video, its truth SRT, the .ass and a JSON description."""
    folder.mkdir(parents=True, exist_ok=True)
    ext = {"mp4": ".mp4", "mkv": ".mkv", "ts": ".ts"}[clip.container]
    video, ass = folder / f"{clip.name}{ext}", folder / f"{clip.name}.ass"
    ass.write_text(ass_script(clip, _proxy_rate(clip)), encoding="utf-8")
    check_rendered(clip, ass)
    times = encode(clip, _ffmpeg_render(clip, ass, backgrounds(clip, decor), "rgb24"), video)
    cues = truth(clip, times)
    srt = "".join(
        f"{i}\n{_srt_time(c.start_ms)} --> {_srt_time(c.end_ms)}\n{c.text}\n\n" for i, c in enumerate(cues, 1)
    )
    (folder / f"{clip.name}.srt").write_text(srt, encoding="utf-8")
    desc = asdict(clip)
    desc["fps"] = str(clip.fps)
    (folder / f"{clip.name}.json").write_text(json.dumps(desc, ensure_ascii=False, indent=1), encoding="utf-8")
    return Rendered(video, cues, [float(t * 1000) for t in times])


def _srt_time(ms: int) -> str:
    h, rest = divmod(ms, 3600000)
    m, rest = divmod(rest, 60000)
    s, milli = divmod(rest, 1000)
    return f"{h:02d}:{m:02d}:{s:02d},{milli:03d}"


@lru_cache(maxsize=16)
def generated_picture(seed: int, width: int, height: int) -> np.ndarray:
    """A busy photo-like picture (RGB): soft colour fields, overlapping shapes with hard and blurred edges, thin
    strokes and fine texture, the same for the same arguments."""
    rng = np.random.default_rng(seed)
    # Fields and shapes at half size (their edges come out soft, as in a photo), strokes and texture at full size.
    w2, h2 = (width + 1) // 2, (height + 1) // 2
    img = cv2.resize(rng.uniform(0, 255, (4, 6, 3)).astype(np.float32), (w2, h2), interpolation=cv2.INTER_CUBIC)
    for _ in range(40):
        layer = img.copy()
        colour = tuple(float(c) for c in rng.uniform(0, 255, 3))
        cx, cy = int(rng.uniform(0, w2)), int(rng.uniform(0, h2))
        a, b = int(rng.uniform(0.03, 0.25) * w2), int(rng.uniform(0.03, 0.25) * h2)
        if rng.random() < 0.5:
            cv2.ellipse(layer, (cx, cy), (a, b), float(rng.uniform(0, 180)), 0, 360, colour, -1, cv2.LINE_AA)
        else:
            cv2.rectangle(layer, (cx - a, cy - b), (cx + a, cy + b), colour, -1)
        if rng.random() < 0.4:
            layer = cv2.GaussianBlur(layer, (0, 0), float(rng.uniform(1, 4)))
        alpha = float(rng.uniform(0.4, 1.0))
        img = cv2.addWeighted(layer, alpha, img, 1 - alpha, 0)
    img = cv2.resize(img, (width, height), interpolation=cv2.INTER_LINEAR)
    for _ in range(25):
        p1 = (int(rng.uniform(0, width)), int(rng.uniform(0, height)))
        p2 = (p1[0] + int(rng.normal(0, width / 6)), p1[1] + int(rng.normal(0, height / 6)))
        colour = tuple(float(c) for c in rng.uniform(0, 255, 3))
        cv2.line(img, p1, p2, colour, int(rng.integers(1, 4)), cv2.LINE_AA)
    texture = cv2.GaussianBlur(rng.normal(0, 18, (height, width)).astype(np.float32), (0, 0), 1.2)
    return np.clip(img + texture[:, :, None], 0, 255).astype(np.uint8)


def smooth_picture(seed: int, width: int, height: int) -> np.ndarray:
    """A smooth dark picture (RGB) like an out-of-focus photo at dusk: a dark blue-grey gradient with a few soft,
    pale, nearly horizontal streaks and faint grain; the same for the same arguments. Behind a subtitle it leaves
    the glyphs' own strokes alone in the text mask, with no picture detail glued to them."""
    rng = np.random.default_rng(seed)
    rows = np.linspace(0.0, 1.0, height, dtype=np.float32)[:, None, None]
    top, bottom = rng.uniform(50, 80, 3), rng.uniform(20, 45, 3)
    img = np.broadcast_to(top * (1 - rows) + bottom * rows, (height, width, 3)).astype(np.float32).copy()
    for _ in range(4):
        y = int(rng.uniform(0.1, 0.9) * height)
        drop = int(rng.normal(0, height / 20))
        cv2.line(img, (0, y), (width, y + drop), tuple(float(c) for c in rng.uniform(110, 160, 3)),
                 int(rng.integers(4, 10)), cv2.LINE_AA)
    img = cv2.GaussianBlur(img, (0, 0), 3.0)
    grain = cv2.GaussianBlur(rng.normal(0, 2.5, (height, width)).astype(np.float32), (0, 0), 1.0)
    return np.clip(img + grain[:, :, None], 0, 255).astype(np.uint8)
