"""Scripts PP-OCR cannot read, read by Tesseract on PP-OCR's line boxes: CER per script and speed vs PP-OCR.

    python bench/multilingual.py                 # ko ru ar th hi, 3 fonts each, 8 lines per video
    python bench/multilingual.py --scripts ko,ru --fonts 1

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
from pathlib import Path

import av
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from support import synth  # noqa: E402
from support.metrics import edit_distance  # noqa: E402
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


def score(cues: list[vidocr.Cue], truth: list[TruthCue]) -> tuple[int, int, int]:
    """(edits, truth characters, truth cues found with exact times): each truth cue against the cue that
    overlaps it most (none: every character is an error)."""
    errors = chars = exact = 0
    for t in truth:
        best = max(cues, key=lambda c: min(c.end_ms, t.end_ms) - max(c.start_ms, t.start_ms), default=None)
        overlap = best is not None and min(best.end_ms, t.end_ms) > max(best.start_ms, t.start_ms)
        n = len("".join(t.text.split()))
        chars += n
        errors += edits(best.text, t.text) if best is not None and overlap else n
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
    ap.add_argument("--rtf", action="store_true",
                    help="only the real-time factor of a 60 s 720p Korean video (24 cues, as bench/speed.py's), read "
                         "with --lang ko, auto and (for the cost of PP-OCR on the same frames) --lang zh")
    args = ap.parse_args()
    from vidocr.engines import tesseract

    for item in args.upscale:
        name, _, factor = item.partition("=")
        tesseract.UPSCALE[name] = float(factor)
    if args.rtf:
        return real_time()
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


def real_time() -> int:
    fonts, lines = SCRIPTS["ko"]
    saved = synth.FONT_PATH
    synth.FONT_PATH = fonts[0]
    synth._font.cache_clear()
    synth._has_glyph.cache_clear()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "ko60.mp4"
        cues = tuple(SynthCue(0.5 + 2.5 * i, 2.5 + 2.5 * i, lines[i % len(lines)]) for i in range(24))
        render_video(SynthSpec(duration=60, cues=cues, seed=1), path)
        synth.FONT_PATH = saved
        for _ in range(2):
            for lang in (("ko",), (), ("zh",)):
                t0 = time.perf_counter()
                out, info = vidocr.extract(path, vidocr.ExtractOptions(lang=lang))
                n = len(list(out))
                wall = time.perf_counter() - t0
                print(f"--lang {','.join(lang) or 'auto':4}: {n:2} cues, {wall:5.2f} s, {60 / wall:5.1f}x real time")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
