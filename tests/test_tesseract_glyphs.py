"""Binarising a line crop for Tesseract (vidocr.engines.tesseract.glyph_image): glyphs without an outline."""

from __future__ import annotations

import cv2
import numpy as np

from vidocr.engines.tesseract import glyph_image


def _glyphs(image: np.ndarray) -> int:
    binary = glyph_image(np.ascontiguousarray(image))
    assert binary is not None
    count: int = cv2.connectedComponents((binary == 0).view(np.uint8))[0]
    return count - 1


def test_a_glyph_at_the_end_of_a_line_over_a_lighter_picture_is_kept() -> None:
    """Outline-less letters: those over the darker picture have a rim and pass the fixed level; the first one, over
    a lighter part (too little step to a rim there), merges with it at that level, and one glyph is narrower than a
    stretch worth its own level inside a line. At the crop's end it gets one (the real Russian clip's "ОНА
    НЕОСЯЗАЕМА" read "НА НЕОСЯЗАЕМА")."""
    crop = np.full((48, 200, 3), 100, np.uint8)
    crop[:, :44] = 160
    cv2.circle(crop, (20, 24), 10, (210, 210, 210), 3)
    for x in (60, 92, 124, 156):
        cv2.circle(crop, (x, 24), 10, (235, 235, 235), 3)
    assert _glyphs(crop) == 5
    assert _glyphs(crop[:, ::-1]) == 5  # the last glyph of a line the same
    # A plain end of the crop, lighter or not, adds nothing.
    crop[:, :44] = 160
    assert _glyphs(crop) == 4
    crop[:, :44] = 100
    assert _glyphs(crop) == 4
