"""An evaluation corpus independent of tests/support/synth.py: subtitles burned in by libass, the way releases are made.

    python bench/libass_corpus.py OUT [--half dev|check|both] [--only NAME ...]

Needs Debian's ``ffmpeg`` (built with libass) and font packages (``scripts/install_system_packages.py`` installs
them), and scikit-image (its wheel ships the *dev* half's photos); the *check* half's photos come from Debian's
``mate-backgrounds``.

Every clip is planned frame by frame: which subtitle events are on screen on each frame. The background is drawn
here (photos with zoom, pan, handheld shake, cuts, fades to black, flashes, printed text on signs and pages, grain);
FFmpeg's ``ass`` filter draws the subtitles from a generated ``.ass`` file (fonts, outline / shadow / opaque box /
half-transparent box, colours, italics, two-line cues whose lines change one at a time); PyAV encodes the result
(x264, CRF, 24-60 fps, VFR, MPEG-TS with a start offset). The truth is what libass actually drew: the planned
states are checked against a second render of the same ``.ass`` over black (a frame planned empty must have no
subtitle pixel, a planned change of text must change the pixels), and the cue times are the frame times read back
from the encoded file, relative to its first frame.

The two halves use different seeds, fonts and pictures: tune on ``dev``, report both (``bench/accuracy.py
--samples OUT/dev``).
"""

from __future__ import annotations

import argparse
import json
import math
import random
import subprocess
import sys
import threading
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass, field
from fractions import Fraction
from functools import lru_cache
from pathlib import Path

import av
import cv2
import numpy as np
from PIL import Image, ImageDraw, ImageFont

# Fonts by half and role (fontconfig family names from Debian packages: fonts-dejavu-core, fonts-liberation2,
# fonts-comic-neue, fonts-wqy-zenhei, fonts-wqy-microhei, fonts-ipafont-gothic, fonts-ipafont-mincho,
# fonts-arphic-uming, fonts-urw-base35, fonts-freefont-ttf).
FONTS: dict[str, dict[str, list[str]]] = {
    "dev": {
        "latin": ["DejaVu Sans", "Liberation Serif", "Comic Neue", "Liberation Sans"],
        "zh": ["WenQuanYi Zen Hei"],
        "ja": ["IPAGothic"],
        "sign": ["DejaVu Serif"],
    },
    "check": {
        "latin": ["FreeSans", "Nimbus Roman", "URW Gothic", "DejaVu Serif", "C059"],
        "zh": ["AR PL UMing CN", "WenQuanYi Micro Hei"],
        "ja": ["IPAMincho", "IPAPGothic"],
        "sign": ["Liberation Sans"],
    },
}
SEEDS = {"dev": 1000, "check": 2000}
MATE = Path("/usr/share/backgrounds/mate")

LINES: dict[str, list[str]] = {
    "en": [
        "Where were you last night?", "I told you, I was at the office.", "That's not what your sister said.",
        "Can you hear me now?", "We should leave before the rain starts.", "Nobody knows where he went.",
        "Give me five more minutes.", "You always say that.", "The train leaves at half past nine.",
        "I never asked for any of this.", "Keep your voice down, they'll hear us.", "It's been a long day, hasn't it?",
        "Put the box on the table, please.", "Why would anyone do that?", "Let me think about it.",
        "How much further is it?", "She'll be back by tomorrow morning.", "I found the letter in his coat.",
        "Turn left at the bridge.", "Are you sure this is the right house?", "Don't open that door!",
        "We're running out of time.", "Thank you for coming all this way.", "Is anyone there?",
    ],
    "en_short": ["OK.", "No!", "Yes?", "Go!", "Hey.", "What?", "Oh.", "Why?", "Run!", "Hi."],
    "en_sound": ["(door slams)", "[music playing]", "(phone ringing)", "[thunder]", "(sighs)", "[laughter]"],
    "zh": [
        "你昨天晚上去哪儿了", "我跟你说过我在办公室", "这可不是你姐姐说的", "我们得在下雨之前出发",
        "没有人知道他去了哪里", "再给我五分钟就好", "火车九点半开", "这件事我从来没想过",
        "小声点，他们会听见的", "今天真是漫长的一天", "请把箱子放在桌子上", "你确定是这栋房子吗",
        "别打开那扇门", "我们没有时间了", "谢谢你大老远跑过来", "有人在吗",
        "东西 要我帮你拿吗", "他说明天早上回来", "这封信是在他外套里找到的", "到了桥那边往左拐",
    ],
    "zh_short": ["嗯", "好。", "走！", "谁？", "对", "是吗"],
    "ja": [
        "昨日の夜はどこにいたの", "会社にいたって言ったでしょう", "雨が降る前に出かけよう",
        "あと五分だけ待って", "電車は九時半に出ます", "声を小さくして", "本当にこの家なの",
        "そのドアを開けないで", "もう時間がないよ", "遠くまで来てくれてありがとう", "誰かいますか",
        "ちょっと考えさせて", "明日の朝には戻るって", "橋のところで左に曲がって",
    ],
    "ja_short": ["うん", "はい。", "えっ？", "よし"],
}
SIGN_TEXT = ["OPEN 24 HOURS", "CITY LIBRARY", "NO PARKING", "Main Street", "EXIT", "SALE 50%", "咖啡馆", "出口"]


@dataclass(frozen=True)
class Style:
    """One ASS style. Colours are (r, g, b); ``box``: None (outline + shadow), "opaque" or "half"."""

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


# -- planning --------------------------------------------------------------------------------------------------
THEMES = (
    "gaps", "cuts", "kana-shadow", "box-flash", "half-box-vfr", "pale", "lowres", "ts-signs",
    "yellow-page", "two-line", "cjk-shake", "short",
)


def plan(half: str, index: int) -> Clip:
    """The clip of ``half`` number ``index`` (its theme is THEMES[index % len(THEMES)])."""
    theme = THEMES[index % len(THEMES)]
    seed = SEEDS[half] + index
    rng = random.Random(seed)
    fonts = FONTS[half]
    lang = {"cuts": "zh", "kana-shadow": "ja", "half-box-vfr": "zh", "ts-signs": "zh", "cjk-shake": "zh"}.get(
        theme, rng.choice(["en", "en", "zh"]) if theme in ("lowres", "short", "pale") else "en"
    )
    font = rng.choice(fonts["latin"] if lang == "en" else fonts[lang])
    fps = {
        "gaps": Fraction(25), "cuts": Fraction(30), "kana-shadow": Fraction(24), "box-flash": Fraction(60),
        "yellow-page": Fraction(24000, 1001), "two-line": Fraction(30), "short": Fraction(25),
    }.get(theme, Fraction(rng.choice([24, 25, 30])))
    width, height = (640, 360) if theme == "lowres" else rng.choice([(1280, 720), (1280, 720), (854, 480)])
    style = Style(font=font, size=rng.uniform(0.055, 0.075), bold=theme == "yellow-page" or rng.random() < 0.2)
    if theme == "kana-shadow":
        style = Style(font=font, size=0.065, outline=1.2, shadow=4.0)
    elif theme == "box-flash":
        style = Style(font=font, size=0.06, box="opaque", colour=(255, 255, 255), outline_colour=(20, 20, 20))
    elif theme == "half-box-vfr":
        style = Style(font=font, size=0.065, box="half", outline_colour=(0, 0, 0))
    elif theme == "pale":
        style = Style(font=font, size=0.065, colour=(250, 246, 225), outline=0.8, outline_colour=(120, 120, 110))
    elif theme == "yellow-page":
        style = Style(font=font, size=0.065, colour=(255, 230, 40), bold=True)
    elif theme == "lowres":
        style = Style(font=font, size=0.07, outline=3.0)
    clip = Clip(
        name=f"{index:02d}_{theme}", half=half, seed=seed, width=width, height=height, fps=fps, frames=0,
        style=style, events=[], scenes=[], crf=rng.choice([23, 26, 28]),
    )
    if theme == "half-box-vfr":
        clip.vfr = True
    if theme == "ts-signs":
        clip.container, clip.start_offset = "ts", rng.choice([1.4, 10.0, 600.0])
    if theme == "two-line":
        clip.container = "mkv"
    if theme == "lowres":
        clip.crf, clip.grain = 42, 9.0
    clip.events = _timeline(clip, theme, lang, rng)
    clip.frames = max(e.last for e in clip.events) + round(float(fps) * rng.uniform(0.4, 1.2))
    clip.scenes = _scenes(clip, theme, rng, half)
    if theme in ("kana-shadow", "cjk-shake", "gaps"):
        clip.fades = [(rng.randrange(clip.frames // 3, 2 * clip.frames // 3), round(float(fps) * 0.6))]
    if theme in ("box-flash", "cuts"):
        clip.flashes = sorted(rng.sample(range(5, clip.frames - 5), 3))
    if theme in ("ts-signs", "pale", "two-line"):
        clip.signs = [(rng.choice(SIGN_TEXT), rng.uniform(0.05, 0.6), rng.uniform(0.55, 0.72)) for _ in range(2)]
    clip.page = theme in ("yellow-page", "cuts")
    return clip


def _timeline(clip: Clip, theme: str, lang: str, rng: random.Random) -> list[Event]:
    fps = float(clip.fps)
    frames = lambda s: max(1, round(s * fps))  # noqa: E731
    pool = list(LINES[lang])
    rng.shuffle(pool)
    shorts = list(LINES.get(f"{lang}_short", LINES["en_short"]))
    rng.shuffle(shorts)
    events: list[Event] = []
    t = 0 if theme == "cuts" else frames(rng.uniform(0.3, 1.2))  # "cuts": a subtitle on the very first frame
    gaps = [1, 2, 3, 5, 10] if theme in ("gaps", "short", "box-flash", "lowres") else [3, 5, 10, 14]
    count = 9 if theme != "short" else 12
    for i in range(count):
        if theme == "two-line" and i % 3 == 0:
            # Two lines; the lower one changes while the upper one stays, then both go.
            top, low1, low2 = pool.pop(), pool.pop(), pool.pop()
            a, b, c = t, t + frames(rng.uniform(1.0, 1.6)), t + frames(rng.uniform(2.2, 3.0))
            events += [Event(a, c, top, slot=1), Event(a, b, low1), Event(b, c, low2)]
            t = c
        elif theme == "two-line" and i % 3 == 1:
            # One event of two lines (a line break inside the subtitle).
            t1 = t + frames(rng.uniform(1.2, 2.2))
            events.append(Event(t, t1, pool.pop() + "\n" + pool.pop()))
            t = t1
        else:
            short = theme == "short" and i % 2 == 0 or (theme in ("gaps", "cuts") and i == 4)
            if short:
                text, dur = shorts.pop() if shorts else "OK.", rng.uniform(0.3, 0.6)
            else:
                text, dur = pool.pop(), rng.uniform(1.0, 2.6)
            if lang == "en" and theme in ("box-flash", "pale", "short") and i % 4 == 3:
                text = rng.choice(LINES["en_sound"])
            italic = lang == "en" and theme in ("box-flash", "yellow-page") and i % 3 == 2
            t1 = t + frames(dur)
            events.append(Event(t, t1, text, italic=italic))
            t = t1
        t += gaps[i % len(gaps)]
    return events


def _pictures(half: str) -> list[Path]:
    if half == "dev":
        import skimage

        data = Path(skimage.__file__).parent / "data"
        names = ["astronaut.png", "chelsea.png", "coffee.png", "rocket.jpg", "motorcycle_left.png", "retina.jpg",
                 "hubble_deep_field.jpg", "brick.png", "grass.png", "color.png"]
        return [data / n for n in names if (data / n).exists()]
    found = sorted((MATE / "nature").glob("*.jpg")) + sorted((MATE / "abstract").glob("Elephants.jpg"))
    return found


def _scenes(clip: Clip, theme: str, rng: random.Random, half: str) -> list[Scene]:
    pictures = [str(p) for p in _pictures(half)]
    if not pictures:
        raise SystemExit(f"no pictures for the {half} half (install scikit-image / Debian's mate-backgrounds)")
    fps = float(clip.fps)
    cuts = [0]
    # Cuts land inside cues and inside gaps: every ~2-3.5 s, plus one inside the first gap after a cue.
    while cuts[-1] < clip.frames:
        cuts.append(cuts[-1] + round(fps * rng.uniform(2.0, 3.5)))
    if theme == "cuts":
        gap_frames = [e.last for e in clip.events[:4]]
        cuts += [g + 1 for g in gap_frames if g + 1 < clip.frames]
    cuts = sorted({c for c in cuts if c < clip.frames})
    motions = ["zoom", "pan", "shake", "still"] if theme != "cjk-shake" else ["shake"]
    return [Scene(c, rng.choice(pictures), rng.choice(motions)) for c in cuts]


# -- truth -----------------------------------------------------------------------------------------------------
def states(clip: Clip) -> list[tuple[int, ...]]:
    """For each frame, the indices of the events on screen."""
    out: list[tuple[int, ...]] = []
    for f in range(clip.frames):
        out.append(tuple(i for i, e in enumerate(clip.events) if e.first <= f < e.last))
    return out


def state_text(clip: Clip, active: Sequence[int]) -> str:
    """The subtitle a viewer sees: lines from the top slot down."""
    events = sorted((clip.events[i] for i in active), key=lambda e: -e.slot)
    return "\n".join(e.text for e in events)


def truth(clip: Clip, times: Sequence[Fraction]) -> list[tuple[int, int, str]]:
    """Cues (start ms, end ms, text) from the planned states and the stored frame times (``times`` has one
    more entry than frames: where the last frame ends)."""
    ms = lambda t: math.floor(t * 1000 + Fraction(1, 2))  # noqa: E731
    cues = []
    run_start, current = 0, ()
    per_frame = states(clip) + [()]
    for f, active in enumerate(per_frame):
        if active != current:
            if current:
                cues.append((ms(times[run_start]), ms(times[f]), state_text(clip, current)))
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


def _decorate(clip: Clip, photo: np.ndarray, rng: random.Random) -> np.ndarray:
    """Printed text in the picture: signs (in the lower half, near the subtitle band) and a book page."""
    if not clip.signs and not clip.page:
        return photo
    img = Image.fromarray(photo)
    draw = ImageDraw.Draw(img)
    h, w = photo.shape[:2]
    sign_font = _font_file(FONTS[clip.half]["sign"][0])
    for text, x, y in clip.signs:
        size = max(12, round(clip.height * rng.uniform(0.04, 0.06)))
        try:
            font = ImageFont.truetype(_font_file("WenQuanYi Zen Hei") if not text.isascii() else sign_font, size)
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
        # A page of small dark print on paper, in the lower middle of the picture (above the subtitle band).
        size = max(10, round(clip.height * 0.028))
        font = ImageFont.truetype(sign_font, size)
        pw, ph = round(w * 0.42), round(h * 0.2)
        px, py = round(w * 0.29), round(h * 0.54)
        draw.rectangle((px, py, px + pw, py + ph), fill=(236, 230, 214))
        words = " ".join(rng.choice(LINES["en"]) for _ in range(30)).split()
        y = py + size // 2
        while y + size < py + ph:
            line = ""
            while words and draw.textlength(line + " " + words[0], font=font) < pw - size:
                line = (line + " " + words.pop(0)).strip()
            draw.text((px + size // 2, y), line, font=font, fill=(30, 30, 35))
            y += round(size * 1.3)
    return np.asarray(img)


def backgrounds(clip: Clip) -> Iterator[np.ndarray]:
    """The picture of every frame (RGB), subtitles not yet drawn."""
    rng = random.Random(clip.seed * 7 + 1)
    scenes = clip.scenes + [Scene(clip.frames, "", "still")]
    for s, scene in enumerate(scenes[:-1]):
        photo = _decorate(clip, _photo(scene.picture, clip.width, clip.height), rng)
        ph, pw = photo.shape[:2]
        length = scenes[s + 1].first - scene.first
        x0, y0 = rng.uniform(0, pw - clip.width), rng.uniform(0, ph - clip.height)
        dx, dy = rng.uniform(-1, 1) * (pw - clip.width) * 0.3, rng.uniform(-1, 1) * (ph - clip.height) * 0.3
        jx = jy = 0.0
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
            frame = cv2.warpAffine(photo, m, (clip.width, clip.height), flags=cv2.INTER_LINEAR,
                                   borderMode=cv2.BORDER_REFLECT)
            gain = 1.0
            for first, n in clip.fades:
                half = n // 2
                if first <= f < first + half:
                    gain = 1 - (f - first + 1) / half
                elif first + half <= f < first + n:
                    gain = (f - first - half + 1) / (n - half)
            out = frame.astype(np.float32) * gain
            if any(first <= f < first + 2 for first in clip.flashes):
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
        stream.options = {"crf": str(clip.crf), "preset": "veryfast"}
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


def render(clip: Clip, folder: Path) -> Path:
    """Render ``clip`` into ``folder``: the video, its truth SRT, the .ass and a JSON description."""
    folder.mkdir(parents=True, exist_ok=True)
    ext = {"mp4": ".mp4", "mkv": ".mkv", "ts": ".ts"}[clip.container]
    video, ass = folder / f"{clip.name}{ext}", folder / f"{clip.name}.ass"
    ass.write_text(ass_script(clip, _proxy_rate(clip)), encoding="utf-8")
    check_rendered(clip, ass)
    times = encode(clip, _ffmpeg_render(clip, ass, backgrounds(clip), "rgb24"), video)
    cues = truth(clip, times)
    srt = "".join(f"{i}\n{_srt_time(a)} --> {_srt_time(b)}\n{text}\n\n" for i, (a, b, text) in enumerate(cues, 1))
    (folder / f"{clip.name}.srt").write_text(srt, encoding="utf-8")
    desc = asdict(clip)
    desc["fps"] = str(clip.fps)
    (folder / f"{clip.name}.json").write_text(json.dumps(desc, ensure_ascii=False, indent=1), encoding="utf-8")
    return video


def _srt_time(ms: int) -> str:
    h, rest = divmod(ms, 3600000)
    m, rest = divmod(rest, 60000)
    s, milli = divmod(rest, 1000)
    return f"{h:02d}:{m:02d}:{s:02d},{milli:03d}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out", type=Path, help="folder for <half>/<clip>.{mp4,mkv,ts,srt,ass,json}")
    parser.add_argument("--half", choices=["dev", "check", "both"], default="both")
    parser.add_argument("--count", type=int, default=len(THEMES), help="clips per half (themes repeat)")
    parser.add_argument("--only", nargs="*", help="clip names (or themes) to render")
    args = parser.parse_args(argv)
    halves = ["dev", "check"] if args.half == "both" else [args.half]
    for half in halves:
        for index in range(args.count):
            clip = plan(half, index)
            if args.only and not any(o in clip.name for o in args.only):
                continue
            path = render(clip, args.out / half)
            print(f"{half}/{path.name}: {clip.frames} frames, {len(clip.events)} events", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
