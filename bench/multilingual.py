"""Scripts PP-OCR cannot read, read by Tesseract on PP-OCR's line boxes: CER per script and speed vs PP-OCR.

    python bench/multilingual.py                 # ko ru ar th hi, 3 fonts each, 8 lines per video
    python bench/multilingual.py --scripts ko,ru --fonts 1
    python bench/multilingual.py --libass        # the same lines drawn by libass, 720p and 360p
    python bench/multilingual.py --real          # the real Russian clip in ../shared/data/real, --lang ru

For each script, one synthetic 720p video per Debian font (tests/support/synth.py, white text with a black
outline over moving photo-like scenery, H.264 CRF 30) is extracted with ``--lang`` and with ``auto``; cues are
matched to the truth by time. Printed per script: the character error rate (edit distance over truth
characters, whitespace and NFKC aside) with --lang and with auto, the share of truth cues found with exact times,
how many videos auto gave to the right recogniser (zh/en samples included as videos it must leave to PP-OCR),
and the speed of Tesseract against PP-OCR on the same band crops in this one run (single thread): a full read
(detection + recognition) of each cue's middle frame by both, and recognition alone of the same line boxes.
Needs vidocr[tesseract], the Debian packs tesseract-ocr-kor/-rus/-ara/-tha/-hin and fonts-nanum, fonts-noto-core,
fonts-dejavu-core, fonts-thai-tlwg, fonts-freefont-ttf.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
import unicodedata
from collections.abc import Sequence
from fractions import Fraction
from pathlib import Path
from typing import Any

import av
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from support import synth  # noqa: E402
from support.metrics import CueLike, edit_distance  # noqa: E402
from support.synth import SynthCue, SynthSpec, TruthCue, render_video  # noqa: E402

import vidocr  # noqa: E402
from vidocr.engines import EngineOptions  # noqa: E402
from vidocr.engines.rapid import RapidOcrEngine, line_crop, read_band, read_band_tesseract  # noqa: E402

F = Path("/usr/share/fonts/truetype")
SCRIPTS: dict[str, tuple[list[Path], list[str]]] = {
    "ko": ([F / "nanum/NanumGothic.ttf", F / "nanum/NanumBarunGothic.ttf", F / "nanum/NanumMyeongjoBold.ttf"],
           ["지금 어디 가는 거예요?", "나도 잘 모르겠어", "우리 내일 다시 만나요", "그건 정말 좋은 생각이야",
            "조심해서 가세요", "아무도 믿지 마", "왜 이렇게 늦었어?", "오늘 밤에 전화할게"]),
    "ru": ([F / "dejavu/DejaVuSans.ttf", F / "freefont/FreeSans.ttf", F / "noto/NotoSerif-Regular.ttf"],
           ["Куда ты идёшь?", "Я не знаю, что делать", "Встретимся завтра утром", "Это очень хорошая идея",
            "В ЧУВСТВАХ", "Никому не доверяй", "Почему ты так поздно?", "Я позвоню тебе вечером"]),
    "ar": ([F / "noto/NotoSansArabic-Regular.ttf", F / "noto/NotoNaskhArabic-Regular.ttf",
            F / "noto/NotoKufiArabic-Regular.ttf"],
           ["إلى أين أنت ذاهب؟", "لا أعرف ماذا أفعل", "سنلتقي غدا صباحا", "هذه فكرة جيدة جدا", "لا تثق بأحد",
            "أين كنت طوال الليل", "لماذا تأخرت كثيرا؟", "سأتصل بك في المساء"]),
    "th": ([F / "noto/NotoSansThai-Regular.ttf", F / "tlwg/Garuda.ttf", F / "noto/NotoSerifThai-Regular.ttf"],
           ["คุณจะไปไหน", "ฉันไม่รู้ว่าจะทำอะไร", "พรุ่งนี้เจอกันนะ", "นั่นเป็นความคิดที่ดีมาก", "อย่าไว้ใจใคร",
            "เธออยู่ที่ไหนทั้งคืน", "ทำไมมาสายจัง", "คืนนี้จะโทรหานะ"]),
    "hi": ([F / "noto/NotoSansDevanagari-Regular.ttf", F / "freefont/FreeSans.ttf",
            F / "noto/NotoSerifDevanagari-Regular.ttf"],
           ["तुम कहाँ जा रहे हो?", "मुझे नहीं पता क्या करना है", "कल सुबह मिलते हैं", "यह बहुत अच्छा विचार है",
            "किसी पर भरोसा मत करो", "तुम पूरी रात कहाँ थे", "तुम इतनी देर से क्यों आए?", "मैं शाम को फोन करूँगा"]),
}
PACKS = {"ko": "kor", "ru": "rus", "ar": "ara", "th": "tha", "hi": "hin"}


def edits(got: str, want: str) -> int:
    """Levenshtein distance on NFKC text without whitespace."""
    a = "".join(unicodedata.normalize("NFKC", got).split())
    b = "".join(unicodedata.normalize("NFKC", want).split())
    return edit_distance(a, b)


def render(font: Path, lines: list[str], path: Path, seed: int) -> list[TruthCue]:
    saved = synth.FONT_PATH
    synth.FONT_PATH = font
    synth._font.cache_clear()
    synth._has_glyph.cache_clear()
    try:
        cues = tuple(SynthCue(0.52 + 1.6 * i, 1.92 + 1.6 * i, text) for i, text in enumerate(lines))
        return render_video(SynthSpec(duration=1.6 * len(lines) + 0.6, cues=cues, seed=seed), path)
    finally:
        synth.FONT_PATH = saved
        synth._font.cache_clear()
        synth._has_glyph.cache_clear()


def over_most(cues: list[vidocr.Cue], start_ms: int, end_ms: int) -> vidocr.Cue | None:
    """The cue that overlaps [start_ms, end_ms) most; None when none overlaps it."""
    best = max(cues, key=lambda c: min(c.end_ms, end_ms) - max(c.start_ms, start_ms), default=None)
    return best if best is not None and min(best.end_ms, end_ms) > max(best.start_ms, start_ms) else None


def score(cues: list[vidocr.Cue], truth: Sequence[CueLike]) -> tuple[int, int, int]:
    """(edits, truth characters, truth cues found with exact times): each truth cue against the cue that
    overlaps it most (none: every character is an error)."""
    errors = chars = exact = 0
    for t in truth:
        best = over_most(cues, t.start_ms, t.end_ms)
        n = len("".join(t.text.split()))
        chars += n
        errors += edits(best.text, t.text) if best is not None else n
        exact += bool(best is not None and (best.start_ms, best.end_ms) == (t.start_ms, t.end_ms))
    return errors, chars, exact


def middle_frames(path: Path, truth: list[TruthCue]) -> list[np.ndarray]:
    wanted = [(t.start_ms + t.end_ms) / 2000 for t in truth]
    out = []
    with av.open(str(path)) as container:
        for frame in container.decode(video=0):
            if wanted and frame.time is not None and frame.time >= wanted[0]:
                wanted.pop(0)
                image = frame.to_ndarray(format="bgr24")
                out.append(image[int(image.shape[0] * 0.75) :])  # the bottom band, as the zone finder gives it
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scripts", default=",".join(SCRIPTS))
    ap.add_argument("--fonts", type=int, default=3, help="fonts per script (videos per script)")
    ap.add_argument("--upscale", action="append", default=[], metavar="SCRIPT=FACTOR",
                    help="try another enlargement of a script's crops (vidocr.engines.tesseract.UPSCALE)")
    ap.add_argument("--no-auto", action="store_true", help="skip the auto runs")
    ap.add_argument("--libass", action="store_true",
                    help="subtitles drawn by libass (FFmpeg's ass filter, tests/support/libass.py) instead of PIL, "
                         "at 720p (43 px text) and 360p (27 px), through vidocr.extract with --lang and auto")
    ap.add_argument("--sizes", default=",".join(LIBASS_SIZES), help="--libass: which of " + ", ".join(LIBASS_SIZES))
    ap.add_argument("--real", action="store_true",
                    help="only the real Russian clip (../shared/data/real/ru_stylised_8s.mp4) with --lang ru: CER")
    args = ap.parse_args()
    from vidocr.engines import tesseract

    for item in args.upscale:
        name, _, factor = item.partition("=")
        tesseract.UPSCALE[name] = float(factor)
    if args.real:
        return real_russian()
    if args.libass:
        return libass_mode(args.scripts.split(","), args.fonts, args.sizes.split(","))
    samples = Path(__file__).resolve().parent.parent / "samples"
    auto_right = auto_total = 0
    print(f"{'script':6} {'CER --lang':>10} {'CER auto':>9} {'exact':>7} {'auto ok':>8} "
          f"{'read ms pp/tess':>16} {'rec ms pp/tess':>15} {'tess/pp speed':>13}")
    with tempfile.TemporaryDirectory() as tmp:
        for code in args.scripts.split(","):
            fonts, lines = SCRIPTS[code]
            fixed = RapidOcrEngine(EngineOptions(workers=1, lang=(code,)))
            auto = RapidOcrEngine(EngineOptions(workers=1))
            totals = {"fixed": [0, 0, 0], "auto": [0, 0, 0]}
            right = 0
            timing = {"pp_read": 0.0, "tess_read": 0.0, "pp_rec": 0.0, "tess_rec": 0.0}
            crops = 0
            for k, font in enumerate(fonts[: args.fonts]):
                path = Path(tmp) / f"{code}{k}.mp4"
                truth = render(font, lines, path, seed=k)
                for name, engine in (("fixed", fixed), ("auto", auto))[: 1 if args.no_auto else 2]:
                    cues = list(vidocr.extract(path, vidocr.ExtractOptions(), engine=engine)[0])
                    for i, v in enumerate(score(cues, truth)):
                        totals[name][i] += v
                chooser = auto._chooser
                right += chooser is not None and chooser.decided == PACKS[code]
                assert fixed._ocr is not None and fixed._tesseract is not None
                ocr, reader = fixed._ocr, fixed._tesseract
                for band in middle_frames(path, truth):
                    t0 = time.perf_counter()
                    read_band(ocr, band)
                    t1 = time.perf_counter()
                    read_band_tesseract(ocr, reader, band)
                    t2 = time.perf_counter()
                    boxes = ocr.detect(band)
                    line_crops = [line_crop(band, *q.min(axis=0), *q.max(axis=0)) for q in boxes]
                    t3 = time.perf_counter()
                    ocr.recognize(line_crops)
                    t4 = time.perf_counter()
                    reader.recognize(line_crops)
                    t5 = time.perf_counter()
                    timing["pp_read"] += t1 - t0
                    timing["tess_read"] += t2 - t1
                    timing["pp_rec"] += t4 - t3
                    timing["tess_rec"] += t5 - t4
                    crops += 1
            auto_right += right
            auto_total += min(len(fonts), args.fonts)
            fixed.close()
            auto.close()
            cer_fixed = totals["fixed"][0] / max(1, totals["fixed"][1])
            cer_auto = totals["auto"][0] / max(1, totals["auto"][1])
            n = max(1, crops)
            videos = min(len(fonts), args.fonts)
            print(f"{code:6} {cer_fixed:10.1%} {cer_auto:9.1%} {totals['fixed'][2]:3}/{len(lines) * videos:<3} "
                  f"{right:3}/{videos:<4} "
                  f"{1000 * timing['pp_read'] / n:7.0f}/{1000 * timing['tess_read'] / n:<8.0f} "
                  f"{1000 * timing['pp_rec'] / n:6.0f}/{1000 * timing['tess_rec'] / n:<8.0f} "
                  f"{timing['pp_read'] / max(timing['tess_read'], 1e-9):13.2f}", flush=True)
        auto = RapidOcrEngine(EngineOptions(workers=1))
        for name in ("zh", "en", "demo", "bilingual"):
            list(vidocr.extract(samples / f"{name}.mp4", vidocr.ExtractOptions(), engine=auto)[0])
            chooser = auto._chooser
            auto_right += chooser is not None and chooser.decided in ("ppocr", None)
            auto_total += 1
        auto.close()
    print(f"auto chose the right recogniser for {auto_right}/{auto_total} videos (zh/en samples included)")
    return 0


#: --libass: per script, three fontconfig families libass draws with (Debian: fonts-nanum, fonts-dejavu-core,
#: fonts-freefont-ttf, fonts-noto-core, fonts-thai-tlwg).
LIBASS_FONTS = {
    "ko": ["NanumGothic", "NanumBarunGothic", "NanumMyeongjo"],
    "ru": ["DejaVu Sans", "FreeSans", "Noto Serif"],
    "ar": ["Noto Sans Arabic", "Noto Naskh Arabic", "Noto Kufi Arabic"],
    "th": ["Noto Sans Thai", "Garuda", "Noto Serif Thai"],
    "hi": ["Noto Sans Devanagari", "FreeSans", "Noto Serif Devanagari"],
}
#: --libass sizes: (width, height, text size as a share of the height): 43 px text as on a 720p release, and
#: 27 px text as on a 360p one.
LIBASS_SIZES = {"720p": (1280, 720, 0.06), "360p": (640, 360, 0.075)}


def libass_clip(code: str, font: str, k: int, size: str) -> Any:
    """8 lines of 1.2 s, 0.4 s apart, from 0.32 s, 25 fps, over a generated picture that pans, zooms or shakes."""
    from support.libass import GENERATED, Clip, Event, Scene, Style

    width, height, share = LIBASS_SIZES[size]
    lines = SCRIPTS[code][1]
    events = [Event(8 + 40 * i, 38 + 40 * i, text) for i, text in enumerate(lines)]
    frames = events[-1].last + 8
    motion = ("pan", "zoom", "shake")[k % 3]
    return Clip(name=f"{code}{k}-{size}", half="bench", seed=k + 1, width=width, height=height, fps=Fraction(25),
                frames=frames, style=Style(font, share, outline=4.0), events=events,
                scenes=[Scene(0, f"{GENERATED}{10 + 7 * k + len(code)}", motion)])


def libass_mode(scripts: list[str], fonts: int, sizes: list[str]) -> int:
    """CER, cue times and auto's choice on subtitles libass drew, through vidocr.extract (--lang and auto)."""
    from support import libass

    if not libass.have_ffmpeg_ass():
        print("needs ffmpeg with libass (Debian's ffmpeg)")
        return 2
    print(f"{'script':6} {'size':5} {'CER --lang':>10} {'CER auto':>9} {'cues found':>10} {'times <=1 frame':>15} "
          f"{'exact':>7} {'auto ok':>8}  missed / worst")
    with tempfile.TemporaryDirectory() as tmp:
        for size in sizes:
            for code in scripts:
                fixed = RapidOcrEngine(EngineOptions(workers=1, lang=(code,)))
                auto = RapidOcrEngine(EngineOptions(workers=1))
                errors = {"fixed": 0, "auto": 0}
                chars = found = within = exact = truths = right = videos = 0
                notes: list[str] = []
                for k, font in enumerate(LIBASS_FONTS[code][:fonts]):
                    if not libass.has_font(font):
                        notes.append(f"no font {font!r}")
                        continue
                    rendered = libass.render(libass_clip(code, font, k, size), Path(tmp))
                    videos += 1
                    for name, engine in (("fixed", fixed), ("auto", auto)):
                        cues = list(vidocr.extract(rendered.video, vidocr.ExtractOptions(), engine=engine)[0])
                        for t in rendered.cues:
                            best = over_most(cues, t.start_ms, t.end_ms)
                            n = len("".join(t.text.split()))
                            e = edits(best.text, t.text) if best is not None else n
                            errors[name] += e
                            if name != "fixed":
                                continue
                            chars += n
                            truths += 1
                            if best is None:
                                notes.append(f"{font}: missed {t.text!r}")
                                continue
                            found += 1
                            off = (rendered.frame_at(best.start_ms) - t.first, rendered.frame_at(best.end_ms) - t.last)
                            within += max(abs(off[0]), abs(off[1])) <= 1.05
                            exact += max(abs(off[0]), abs(off[1])) <= 0.05
                            if e > 0.1 * n:
                                notes.append(f"{font}: {best.text!r} for {t.text!r}")
                    chooser = auto._chooser
                    right += chooser is not None and chooser.decided == PACKS[code]
                fixed.close()
                auto.close()
                cer_fixed, cer_auto = errors["fixed"] / max(1, chars), errors["auto"] / max(1, chars)
                print(f"{code:6} {size:5} {cer_fixed:10.1%} {cer_auto:9.1%} "
                      f"{found:4}/{truths:<5} {within:9}/{truths:<5} {exact:3}/{truths:<3} {right:4}/{videos:<3}  "
                      + "; ".join(notes[:4]), flush=True)
    return 0


REAL = Path(__file__).resolve().parent.parent.parent / "shared" / "data" / "real"
#: The captions of ru_stylised_8s.mp4, written from its frames (times to ~0.1 s; cues are matched by overlap).
RU_REAL_TRUTH = [(0, 670, "ЭТО УЛЫБКА"), (670, 1400, "И СМЕХ"), (1400, 3000, "ЭТО ГЛАЗА, В КОТОРЫХ ЦЕЛЫЙ ОКЕАН"),
                 (3000, 4470, "КРАСОТА В МЫСЛЯХ"), (4470, 6200, "В ЭМОЦИЯХ"), (6370, 7630, "В ЧУВСТВАХ"),
                 (7630, 8000, "ОНА НЕОСЯЗАЕМА")]


def russian_clip_cer(cues: list[vidocr.Cue]) -> tuple[float, list[str]]:
    """CER of the real Russian clip's cues against RU_REAL_TRUTH (each caption against the cue over it most)."""
    errors = chars = 0
    lines = []
    for start, end, text in RU_REAL_TRUTH:
        best = over_most(cues, start, end)
        n = len("".join(text.split()))
        e = edits(best.text, text) if best is not None else n
        errors, chars = errors + e, chars + n
        lines.append(f"{text!r} <- {best.text if best is not None else None!r} ({e} edits)")
    return errors / chars, lines


def real_russian() -> int:
    clip = REAL / "ru_stylised_8s.mp4"
    if not clip.is_file():
        print(f"no {clip}")
        return 2
    cues = list(vidocr.extract(clip, vidocr.ExtractOptions(lang=("ru",)))[0])
    cer, lines = russian_clip_cer(cues)
    print("\n".join(lines))
    print(f"{clip.name} --lang ru: CER {cer:.1%}, {len(cues)} cues")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
