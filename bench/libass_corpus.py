"""An evaluation corpus independent of tests/support/synth.py: subtitles burned in by libass, the way releases are made.

    python bench/libass_corpus.py OUT [--half dev|check|both] [--only NAME ...]
    python bench/libass_corpus.py OUT2 --start 12 --count 24     # the same themes again, with new seeds

Needs Debian's ``ffmpeg`` (built with libass), font packages and ``mate-backgrounds`` (the *check* half's photos),
and scikit-image (the ``bench`` extra: its wheel ships the *dev* half's photos).

Every clip is planned here, frame by frame: which subtitle events are on screen on each frame, over which photos
with which motion (zoom, pan, handheld shake, cuts, fades to black, flashes, printed text on signs and pages,
grain), in which font and style (outline / shadow / opaque box / half-transparent box, colours, italics, two-line
cues whose lines change one at a time), encoded how (x264, CRF, 24-60 fps, VFR, MPEG-TS with a start offset).
``tests/support/libass.py`` renders it: libass draws the subtitles, and the truth is what it drew at the frame
times stored in the file (see that module).

The two halves use different seeds, fonts and pictures: tune on ``dev``, report both (``bench/accuracy.py
--samples OUT/dev``).
"""

from __future__ import annotations

import argparse
import random
import sys
from fractions import Fraction
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))  # support/: test helpers, kept out of the package

from support import libass  # noqa: E402
from support.libass import Clip, Decor, Event, Scene, Style  # noqa: E402

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
#: The Debian package of each font above: libass falls back to another font silently, so a missing one would make
#: another corpus (session 37 rendered half of it in fallback fonts before this was checked).
FONT_PACKAGES = {
    "DejaVu Sans": "fonts-dejavu-core", "DejaVu Serif": "fonts-dejavu-core", "Liberation Serif": "fonts-liberation2",
    "Liberation Sans": "fonts-liberation2", "Comic Neue": "fonts-comic-neue", "WenQuanYi Zen Hei": "fonts-wqy-zenhei",
    "WenQuanYi Micro Hei": "fonts-wqy-microhei", "IPAGothic": "fonts-ipafont-gothic",
    "IPAPGothic": "fonts-ipafont-gothic", "IPAMincho": "fonts-ipafont-mincho", "AR PL UMing CN": "fonts-arphic-uming",
    "FreeSans": "fonts-freefont-ttf", "Nimbus Roman": "fonts-urw-base35", "URW Gothic": "fonts-urw-base35",
    "C059": "fonts-urw-base35",
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


def render(clip: Clip, folder: Path) -> Path:
    """Render ``clip`` into ``folder`` (video, truth SRT, .ass, JSON) with its half's sign font."""
    decor = Decor(FONTS[clip.half]["sign"][0], "WenQuanYi Zen Hei", tuple(LINES["en"]))
    return libass.render(clip, folder, decor).video


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out", type=Path, help="folder for <half>/<clip>.{mp4,mkv,ts,srt,ass,json}")
    parser.add_argument("--half", choices=["dev", "check", "both"], default="both")
    parser.add_argument("--count", type=int, default=len(THEMES),
                        help="end clip number, exclusive (clips --start .. --count - 1 of each half; themes repeat)")
    parser.add_argument("--start", type=int, default=0,
                        help="first clip number: --start 12 --count 24 renders each theme again with new seeds")
    parser.add_argument("--only", nargs="*", help="clip names (or themes) to render")
    args = parser.parse_args(argv)
    if args.start >= args.count:
        parser.error(f"--count is the end clip number (exclusive), so it must be above --start {args.start}: "
                     f"--start {args.start} --count {args.start + len(THEMES)} renders each theme once more")
    halves = ["dev", "check"] if args.half == "both" else [args.half]
    fonts = {"WenQuanYi Zen Hei"} | {f for half in halves for role in FONTS[half].values() for f in role}
    lacking = sorted(f for f in fonts if not libass.has_font(f))
    if lacking:
        packages = " ".join(sorted({FONT_PACKAGES.get(f, "?") for f in lacking}))
        parser.exit(2, f"libass_corpus: fonts missing: {', '.join(lacking)} (apt-get install {packages})\n")
    for half in halves:
        for index in range(args.start, args.count):
            clip = plan(half, index)
            if args.only and not any(o in clip.name for o in args.only):
                continue
            path = render(clip, args.out / half)
            print(f"{half}/{path.name}: {clip.frames} frames, {len(clip.events)} events", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
