"""Our PP-OCR runner reads exactly what rapidocr's own pipeline reads, with the same models and settings."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from support.synth import read_srt

from vidocr.engines.ppocr import PpOcr, PpOcrConfig, model_dir
from vidocr.types import Box
from vidocr.video import VideoSource


def bands(video: Path, times: list[float]) -> list[np.ndarray]:
    """Bottom-quarter BGR crops of the frames at ``times`` (seconds)."""
    out = []
    with VideoSource(video) as src:
        height, width = src.info.height, src.info.width
        top = int(height * 0.72)
        wanted = sorted(times)
        for frame in src.frames():
            if wanted and frame.ts.seconds >= wanted[0]:
                wanted.pop(0)
                out.append(frame.bgr(Box(0, top, width, height - top)))
            if not wanted:
                break
    return out


@pytest.fixture(scope="module")
def crops(samples: Path) -> list[np.ndarray]:
    images = []
    for name in ["zh", "en", "bilingual", "short_cue"]:
        truth = read_srt(samples / f"{name}.srt")
        times = [(c.start_ms + c.end_ms) / 2000 for c in truth] + [truth[0].start_ms / 2000 - 0.3]
        images += bands(samples / f"{name}.mp4", [t for t in times if t >= 0])
    # Odd shapes: a short strip (padded to the minimum height) and a tall crop (no padding).
    images.append(np.ascontiguousarray(images[0][20:44]))
    images.append(np.ascontiguousarray(images[1][:, 400:700]))
    return images


def test_models_come_from_the_rapidocr_wheel() -> None:
    folder = model_dir()
    assert (folder / "PP-OCRv6_det_small.onnx").is_file()
    assert (folder / "PP-OCRv6_rec_small.onnx").is_file()


def test_same_text_and_boxes_as_rapidocr(crops: list[np.ndarray]) -> None:
    from rapidocr import RapidOCR

    cfg = PpOcrConfig()
    reference = RapidOCR(
        params={
            "Det.limit_type": "max",
            "Det.limit_side_len": cfg.det_limit_side,
            "Global.use_cls": False,
            "Global.width_height_ratio": cfg.pad_ratio,
            "Global.log_level": "critical",
            "EngineConfig.onnxruntime.intra_op_num_threads": 1,
            "EngineConfig.onnxruntime.inter_op_num_threads": 1,
        }
    )
    ours = PpOcr(replace(cfg, space_min=1.01))  # greedy decoding only, as rapidocr
    texts = 0
    for image in crops:
        want = reference(image)
        got = ours.read(image)
        want_txts = list(want.txts) if want.txts is not None else []
        assert [text for _, text, _ in got] == want_txts
        if want_txts:
            texts += 1
            assert np.array_equal(np.array([box for box, _, _ in got]), np.asarray(want.boxes, np.float32))
            assert np.allclose([score for _, _, score in got], want.scores, atol=1e-3)
    assert texts >= len(crops) // 2  # the comparison covered real text, not only empty bands


def test_recognize_reads_line_crops_in_any_order(crops: list[np.ndarray]) -> None:
    ours = PpOcr()
    pieces = [p for image in crops[:6] for p in ((image, *piece) for piece in ours.read(image))]
    assert len(pieces) >= 4
    lines = []
    for image, box, _, _ in pieces:
        x0, y0 = box.min(axis=0).astype(int)
        x1, y1 = box.max(axis=0).astype(int)
        lines.append(np.ascontiguousarray(image[y0:y1, x0:x1]))
    # Batched (sorted by width inside) and one by one give the same answers, in the caller's order.
    together = ours.recognize(lines[::-1])[::-1]
    alone = [ours.recognize([line])[0] for line in lines]
    assert [t for t, _ in together] == [t for t, _ in alone] == [text for _, _, text, _ in pieces]


def test_extreme_shapes_do_not_fail(crops: list[np.ndarray]) -> None:
    ours = PpOcr()
    wide = np.ascontiguousarray(np.tile(crops[0][:16], (1, 4, 1)))  # 16 rows of a 4K-wide band
    assert wide.shape[1] > 2000
    assert isinstance(ours.read(wide), list)
    assert ours.read(np.zeros((1, 1, 3), np.uint8)) == []
    assert ours.recognize([]) == []


def test_spaces_greedy_decoding_drops_are_kept(samples: Path) -> None:
    """"vidocr 从视频里提取硬字幕": greedy CTC decoding ranks the space just below "blank" and drops it."""
    from vidocr.pipeline import extract

    cues = list(extract(samples / "demo.mp4")[0])
    truth = read_srt(samples / "demo.srt")
    assert [c.text for c in cues] == [t.text for t in truth]


def test_a_band_read_that_finds_nothing_looks_again_nearer_full_resolution() -> None:
    # A short small word in a wide band: shrunk to the detector's input (736 px for a 1280-px band) it is a few
    # pixels high and the detector finds nothing; the band reader looks again at up to 1280 px.
    import cv2
    from PIL import Image, ImageDraw, ImageFont
    from support.synth import FONT_PATH

    from vidocr.engines.rapid import build_ocr, read_band

    img = Image.new("RGB", (1280, 138), (120, 60, 40))
    draw = ImageDraw.Draw(img)
    font = ImageFont.truetype(str(FONT_PATH), 12)
    draw.text(((1280 - draw.textlength("Oh.", font=font)) / 2, 60), "Oh.", font=font, fill=(240, 240, 240),
              stroke_width=1, stroke_fill=(0, 0, 0))
    band = cv2.cvtColor(np.asarray(img), cv2.COLOR_RGB2BGR)
    ocr = build_ocr()
    assert ocr.read(band) == []  # the detector at its usual input size misses it...
    assert read_band(ocr, band).text == "Oh."  # ...the second look reads it


def test_the_recogniser_says_where_in_its_crop_the_text_is() -> None:
    # A detector box can take in bright picture detail beside a subtitle (chrome, a lamp): the box is then
    # off-centre though the text is not. The CTC steps of the first and last character say where the text is.
    import cv2
    from PIL import Image, ImageDraw, ImageFont
    from support.synth import FONT_PATH

    from vidocr.engines.rapid import build_ocr, read_band

    img = Image.new("RGB", (1280, 120), (60, 60, 60))
    draw = ImageDraw.Draw(img)
    font = ImageFont.truetype(str(FONT_PATH), 40)
    text = "Keep your voice down."
    width = draw.textlength(text, font=font)
    left = round((1280 - width) / 2)
    draw.text((left, 40), text, font=font, fill=(245, 245, 245), stroke_width=2, stroke_fill=(0, 0, 0))
    # A bright chrome pipe reaching to just before the text, in the same crop.
    draw.rounded_rectangle((left - 170, 48, left - 12, 78), radius=12, fill=(225, 225, 230), outline=(20, 20, 20))
    band = cv2.cvtColor(np.asarray(img), cv2.COLOR_RGB2BGR)
    ocr = build_ocr()
    crop = np.ascontiguousarray(band[30:100, left - 180 : round(left + width) + 8])
    ((got, _, span),) = ocr.recognize_spans([crop])
    assert got.endswith(text) and span is not None
    columns = span[0] * crop.shape[1], span[1] * crop.shape[1]
    assert abs(columns[0] - 180) <= 24 and abs(columns[1] - (crop.shape[1] - 8)) <= 24, columns
    # A band read gives each line the columns of its text, in the band's pixels.
    (line,) = read_band(ocr, band).lines
    assert line.text_cols is not None
    assert abs(line.text_cols[0] - left) <= 24 and abs(line.text_cols[1] - (left + width)) <= 24


@pytest.mark.parametrize(("raw", "stray"), [
    ("Howmu馆h further is it?", True),  # a sign's glyph inside a Latin word
    ("咖（door slams)", True),  # a sign's glyph and a full-width bracket glued to a caption
    ("Can yu馆ear me now?", True),
    ("OKです", False),  # Japanese with a Latin word: as many kana as letters
    ("我用iPhone", False),
    ("Welcome to 東京", False),  # a CJK word apart from the Latin ones
    ("Where were you last night?", False),
    ("你昨天晚上去哪儿了", False),
])
def test_a_latin_line_with_a_cjk_glyph_glued_to_its_words_is_told(raw: str, stray: bool) -> None:
    from vidocr.engines.ppocr import _stray_cjk

    assert _stray_cjk(raw) is stray


def test_a_stray_cjk_glyph_in_a_latin_line_gives_way_to_the_likeliest_latin_character() -> None:
    """CTC steps spelling "Howmu馆h" with "c" second at the 馆 step decode as "Howmuch"; the same steps in a
    Chinese line ("馆" among Han characters) keep it."""
    ocr = PpOcr()
    index = {char: i for i, char in enumerate(ocr.characters) if char}

    def steps(*path: tuple[str, str | None]) -> np.ndarray:
        pred = np.full((len(path) * 2, len(ocr.characters)), 0.001, np.float32)
        for k, (first, second) in enumerate(path):
            pred[2 * k, index[first]] = 0.6
            if second is not None:
                pred[2 * k, index[second]] = 0.3
            pred[2 * k + 1, 0] = 0.9  # a blank between characters
        return pred

    latin = steps(*((c, None) for c in "Howmu"), ("馆", "c"), ("h", None), (" ", None), *((c, None) for c in "there"))
    text, *_ = ocr._decode(latin)
    assert text == "Howmuch there"
    chinese = steps(("图", None), ("书", None), ("馆", "c"))
    assert ocr._decode(chinese)[0] == "图书馆"


def test_a_space_between_two_phrases_of_a_cjk_line_is_read_where_the_recogniser_barely_ranks_it() -> None:
    """Chinese and Japanese subtitles separate phrases with a space ("东西 要我帮你拿吗"). The recogniser ranks that
    space far under "blank" (0.01-0.45 on libass-rendered lines) and gives it nothing between the letters of a
    phrase: between two CJK letters a space at space_min_cjk is kept; between Latin letters it takes space_min."""
    ocr = PpOcr()
    index = {char: i for i, char in enumerate(ocr.characters) if char}
    space = len(ocr.characters) - 1

    def steps(text: str, gap_space: float) -> np.ndarray:
        """``text`` with "|" where a step gives the space ``gap_space`` (blank the rest), a blank step elsewhere."""
        rows = []
        for char in text:
            row = np.full(len(ocr.characters), 1e-5, np.float32)
            if char == "|":
                row[0], row[space] = 1 - gap_space, gap_space
            else:
                row[index[char]] = 0.95
            rows.append(row)
            blank = np.full(len(ocr.characters), 1e-5, np.float32)
            blank[0] = 0.99
            rows.append(blank)
        return np.array(rows)

    assert ocr._decode(steps("东西|要我", 0.12))[0] == "东西 要我"
    assert ocr._decode(steps("もう|時間", 0.06))[0] == "もう 時間"
    assert ocr._decode(steps("东西|要我", 0.001))[0] == "东西要我"  # within a phrase
    assert ocr._decode(steps("ab|cd", 0.12))[0] == "abcd"
    assert ocr._decode(steps("ab|cd", 0.4))[0] == "ab cd"
