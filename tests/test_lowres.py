"""360p, heavily compressed subtitles (issue #11's low-resolution class): a blank read of a narrow band looks again
with the band scaled up, an unsure misread is not a cue of its own, and reads vote per character with the
recogniser's character probabilities."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from test_textnorm_merge import run

from vidocr.engines.rapid import BLANK_RETRY_LIMIT, blank_retry, group_lines, read_all_again
from vidocr.merge import Read, SegmentRecord, _vote_chars
from vidocr.textnorm import text_similarity
from vidocr.types import Box, OcrLine, OcrResult


def _noisy_band(text: str, size: int = 14, quality: int = 15) -> np.ndarray:
    """A 640x79 band (360p) of coarse grey texture with ``text`` drawn small and outlined, JPEG-compressed hard."""
    import cv2
    from PIL import Image, ImageDraw, ImageFont
    from support.synth import FONT_PATH

    rng = np.random.default_rng(0)
    texture = cv2.resize(rng.integers(60, 200, (20, 160)).astype(np.uint8), (640, 79), interpolation=cv2.INTER_CUBIC)
    img = Image.fromarray(cv2.cvtColor(texture, cv2.COLOR_GRAY2RGB))
    draw = ImageDraw.Draw(img)
    font = ImageFont.truetype(str(FONT_PATH), size)
    draw.text(((640 - draw.textlength(text, font=font)) / 2, 40), text, font=font, fill=(235, 235, 235),
              stroke_width=1, stroke_fill=(20, 20, 20))
    band = cv2.cvtColor(np.asarray(img), cv2.COLOR_RGB2BGR)
    _, jpeg = cv2.imencode(".jpg", band, [cv2.IMWRITE_JPEG_QUALITY, quality])
    return cv2.imdecode(jpeg, cv2.IMREAD_COLOR)


def test_a_blank_read_of_a_narrow_noisy_band_looks_again_scaled_up() -> None:
    from vidocr.engines.rapid import build_ocr, read_band

    text = "Give me five more minutes."
    band = _noisy_band(text)
    ocr = build_ocr()
    assert ocr.read(band) == []  # the detector at the band's own size boxes nothing...
    (line,) = read_band(ocr, band).lines  # ...scaled up it finds the line, read from the band itself
    assert text_similarity(line.text, text) >= 0.6, line.text
    assert line.box is not None and line.box.x >= 0 and line.box.x + line.box.w <= 640 and line.box.y + line.box.h <= 79


@dataclass
class _Config:
    det_limit_side: int = 736
    text_score: float = 0.5


class _Ocr:
    """The first look finds nothing; the second finds what it is given."""

    def __init__(self, second: list[tuple[str, float]]) -> None:
        self.config = _Config()
        self.second = second
        self.calls: list[tuple[int | None, bool]] = []

    def kept(self, piece: tuple[np.ndarray, str, float]) -> bool:
        return bool(piece[1].strip()) and piece[2] >= self.config.text_score

    def read_spans(self, image: np.ndarray, det_limit: int | None = None, upscale: bool = False) -> list[tuple]:
        self.calls.append((det_limit, upscale))
        quad = np.array([[10, 10], [100, 10], [100, 30], [10, 30]], np.float32)
        found = self.second if len(self.calls) > 1 else []
        return [(quad, text, score, None, (score,) * len(text)) for text, score in found]


def test_the_second_look_scales_a_narrow_band_up_and_keeps_only_sure_lines() -> None:
    narrow = np.zeros((79, 640, 3), np.uint8)
    ocr = _Ocr([("Give me", 0.9)])
    assert [p[1] for p in read_all_again(ocr, narrow)] == ["Give me"]  # type: ignore[arg-type]
    assert ocr.calls == [(None, False), (min(1280, BLANK_RETRY_LIMIT), True)]
    # Scaled up, compression noise in an empty band is boxed as unsure specks: those are not read.
    specks = _Ocr([("1", 0.31)])
    assert read_all_again(specks, narrow) == []  # type: ignore[arg-type]
    # A wide band looks again nearer full resolution, as before (not scaled up).
    assert blank_retry(ocr, np.zeros((54, 1920, 3), np.uint8)) == (BLANK_RETRY_LIMIT, False)  # type: ignore[arg-type]
    # A band the first look saw at least as large as a second look would: no second look.
    assert blank_retry(ocr, np.zeros((700, 300, 3), np.uint8)) is None  # type: ignore[arg-type]


def _result(text: str, conf: float, chars: tuple[float, ...] | None = None) -> OcrResult:
    return OcrResult((OcrLine(text, conf, char_conf=chars),))


def test_an_unsure_misread_before_a_surer_read_of_the_same_line_is_not_a_cue() -> None:
    # 360p: the segment's first read is garbled and unsure, a later one (the band a little changed) is sure.
    cues = run(SegmentRecord(9500, 11917, [
        Read(9542, 9500, _result("谢你犬老远而元来", 0.74)),
        Read(10542, 10333, _result("谢谢你大老远跑过来", 0.95)),
    ]))
    assert cues == [(9500, 11917, "谢谢你大老远跑过来")]
    # A sure read that differs is another subtitle, as before.
    cues = run(SegmentRecord(0, 3000, [
        Read(40, 0, _result("谢你犬老远而元来", 0.95)), Read(2000, 1240, _result("谢谢你大老远跑过来", 0.97)),
    ]))
    assert cues == [(0, 1240, "谢你犬老远而元来"), (1240, 3000, "谢谢你大老远跑过来")]
    # A two-line cue changing one line while the other stays is a new subtitle, however unsure.
    two = OcrResult((OcrLine("第一行字幕", 0.99), OcrLine("你先走吧", 0.6)))
    cues = run(SegmentRecord(0, 3000, [
        Read(40, 0, two), Read(2000, 1240, OcrResult((OcrLine("第一行字幕", 0.99), OcrLine("你先走吧我等", 0.99)))),
    ]))
    assert [c[2] for c in cues] == ["第一行字幕\n你先走吧", "第一行字幕\n你先走吧我等"]


def test_a_brief_unsure_segment_before_a_surer_read_of_the_same_line_joins_it() -> None:
    first = SegmentRecord(4458, 4625, [Read(4500, 4458, _result("Wihen. wer list h'gi", 0.71))])
    second = SegmentRecord(4625, 6542, [Read(4667, 4625, _result("Where were you last night?", 0.95))], 0.19)
    assert run(first, second) == [(4458, 6542, "Where were you last night?")]
    # Long enough to be a subtitle of its own: two cues, as before.
    first = SegmentRecord(3500, 4625, [Read(3542, 3500, _result("Wihen. wer list h'gi", 0.71))])
    assert len(run(first, second)) == 2


def test_reads_vote_per_character_with_the_recognisers_probabilities() -> None:
    def read(ts: int, text: str, odd: float, at: int) -> Read:
        chars = tuple(odd if i == at else 0.99 for i in range(len(text)))
        return Read(ts, ts, _result(text, sum(chars) / len(chars), chars))

    # Two unsure reads of 袍 and one sure read of 跑: the whole-read vote picks a 袍 read, the character vote 跑.
    cues = run(SegmentRecord(0, 3000, [
        read(40, "谢谢你大老远袍过来", 0.41, 6), read(1000, "谢谢你大老远袍过来", 0.52, 6),
        read(2000, "谢谢你大老远跑过来", 1.0, 6),
    ]))
    assert cues == [(0, 3000, "谢谢你大老远跑过来")]
    # Without the recogniser's character probabilities the whole-read vote stands.
    cues = run(SegmentRecord(0, 3000, [
        Read(40, 40, _result("谢谢你大老远袍过来", 0.88)), Read(1000, 1000, _result("谢谢你大老远袍过来", 0.9)),
        Read(2000, 2000, _result("谢谢你大老远跑过来", 0.99)),
    ]))
    assert cues == [(0, 3000, "谢谢你大老远袍过来")]
    # Letter case and punctuation stay as the whole-read vote's winner read them.
    cues = run(SegmentRecord(0, 3000, [
        Read(40, 40, _result("we should go", 0.95, (0.99,) + (0.95,) * 11)),
        Read(1000, 1000, _result("We should go.", 0.97, (0.9,) + (0.99,) * 11 + (0.5,))),
    ]))
    assert cues == [(0, 3000, "We should go.")]


def test_a_glyph_the_winning_read_lost_is_put_back_where_half_the_reads_have_one() -> None:
    """Seen on the corpus (check ``37_cuts``): a CJK subtitle over a page of print read "小点" twice and "小声点",
    "小严点" once each; the whole-read vote picked a read without the glyph. Two reads or more, at least half of
    them, that have a glyph in the same place inside the line put it back, read as the likeliest of theirs."""

    def read(ts: int, text: str, conf: float, odd: dict[int, float] | None = None) -> Read:
        chars = tuple((odd or {}).get(i, 0.99) for i in range(len(text)))
        return Read(ts, ts, OcrResult((OcrLine(text, conf, box=Box(464, 20, 352, 42), char_conf=chars),)))

    seen = [read(40, "小声点他们会听见的", 0.91, {1: 0.7}), read(1000, "小严点他们会听见的", 0.94, {1: 0.4})]
    lost = [read(2000, "小点他们会听见的", 0.96), read(3000, "小点他们会听见的", 0.99)]
    assert run(SegmentRecord(0, 4000, [*seen, *lost])) == [(0, 4000, "小声点他们会听见的")]
    # One read of four with the glyph is not enough; nor are glyphs before the line's first or after its last
    # character (picture detail beside the line), nor punctuation.
    one = [seen[0], read(1000, "小点他们会听见的", 0.94)]
    assert run(SegmentRecord(0, 4000, [*one, *lost])) == [(0, 4000, "小点他们会听见的")]
    plain = lost[1].result
    for added in ("小点他们会听见的1", "“小点他们会听见的", "小点他们，会听见的"):
        assert _vote_chars(plain, [r.result for r in (read(0, added, 0.9), read(1, added, 0.9), lost[0])]) == (
            "小点他们会听见的"), added


def test_lines_carry_the_probability_of_each_character() -> None:
    lines = group_lines(
        [(0, 0, 50, 20, "Give", 0.9), (70, 0, 120, 20, "me", 0.8)], chars=[(0.9, 0.8, 1.0, 0.9), (0.7, 0.9)]
    )
    assert [(ln.text, ln.char_conf) for ln in lines] == [("Give me", (0.9, 0.8, 1.0, 0.9, 1.0, 0.7, 0.9))]
    assert group_lines([(0, 0, 50, 20, "Give", 0.9)], chars=[None])[0].char_conf is None

    from vidocr.engines.rapid import build_ocr, read_band, reread_band

    band = _noisy_band("Where were you last night?", size=16, quality=60)
    ocr = build_ocr()
    (line,) = read_band(ocr, band).lines
    assert line.char_conf is not None and len(line.char_conf) == len(line.text)
    assert all(0.0 < p <= 1.0 for p in line.char_conf)
    again = reread_band(ocr, band, OcrResult((line,)))
    assert again is not None and again.lines[0].char_conf is not None
    assert len(again.lines[0].char_conf) == len(line.text)
    # --lang auto reads a video's first lines through the script chooser: they carry them too.
    from vidocr.engines.rapid import ScriptChooser

    clean = _noisy_band("Where were you last night?", size=18, quality=95)
    clean[:] = np.where(clean > 200, 240, 40).astype(np.uint8)  # light text on a plain dark band
    (line,) = ScriptChooser(ocr).read(clean).lines
    assert line.char_conf is not None and len(line.char_conf) == len(line.text), line
