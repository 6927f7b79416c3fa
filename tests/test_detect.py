"""The change detector on rendered subtitle bands (real font, real text mask; no video needed)."""

from __future__ import annotations

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from vidocr.detect import BandChangeDetector, DetectOptions
from vidocr.synth import FONT_PATH
from vidocr.textmask import analysis_scale, edge_mask
from vidocr.types import Timestamp

WIDTH, HEIGHT, FONT = 1280, 150, 44
TEXT_TOP = 70  # the subtitle's rows: 70-120 of the band


def band(text: str | None, ellipse: bool) -> np.ndarray:
    """Luma of a band: a dark picture, optionally a bright object right above the subtitle, the subtitle."""
    img = Image.new("L", (WIDTH, HEIGHT), 70)
    draw = ImageDraw.Draw(img)
    if ellipse:
        # A bright shape whose lower outline comes down to the tops of the glyphs.
        draw.ellipse((560, -40, 760, TEXT_TOP + 8), fill=225)
    if text:
        font = ImageFont.truetype(str(FONT_PATH), FONT)
        w = draw.textlength(text, font=font)
        draw.text(((WIDTH - w) / 2, TEXT_TOP), text, font=font, fill=240, stroke_width=3, stroke_fill=0)
    return np.asarray(img)


def first_events(luma: np.ndarray) -> list[str]:
    scale = analysis_scale(WIDTH)
    core = (int(TEXT_TOP * scale), int((TEXT_TOP + FONT + 8) * scale) + 1)
    det = BandChangeDetector(DetectOptions(), 25.0, line_height=FONT * scale, core_rows=core)
    return [kind for kind, _ in det.push(Timestamp(0, 1), edge_mask(luma, scale))]


def test_subtitle_next_to_a_bright_object_is_still_text() -> None:
    assert first_events(band("好的", ellipse=False)) == ["start", "read"]
    assert first_events(band("好的", ellipse=True)) == ["start", "read"]


def test_the_bright_object_alone_is_not_text() -> None:
    assert first_events(band(None, ellipse=True)) == ["start"]
    assert first_events(band(None, ellipse=False)) == ["start"]
