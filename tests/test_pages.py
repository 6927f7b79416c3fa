"""A page of print behind the subtitles (a book, a letter, a screen of text): its paper, light beside every dark
stroke, looks like subtitle glyphs to the edge mask. The band is told to be a page by its thin dark strokes
(textmask.print_share) and is then judged by its closed light glyphs only (textmask.closed_glyph_mask). The
libass class "print-page" (tests/test_libass_classes.py) is such a video, read end to end."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
from support import libass
from support.libass import Style
from test_layout import _page, _subtitle
from test_libass_classes import _clip, _need, _two, missing, problems

from vidocr.engines import OcrEngine
from vidocr.textmask import (
    PAGE_SMALL,
    PRINT_ON,
    closed_glyph_mask,
    edge_mask,
    print_share,
    shows_page,
    small_ink_share,
    text_lines,
)


def _over_page() -> tuple[np.ndarray, tuple[int, int], list[tuple[int, int]]]:
    """A 1280 x 240 grey band with a page of print and a white, outlined subtitle over its middle; the
    subtitle's rows, and the rows of the print lines above and below them."""
    band = np.full((240, 1280, 3), 60, np.uint8)
    page, boxes = _page(6)
    band[:, 190:1090] = page
    image, box = _subtitle(cv2.cvtColor(band, cv2.COLOR_BGR2GRAY), "Where were you last night?")
    rows = [(b.y, b.y + b.h) for b in boxes if b.y + b.h < box.y or b.y > box.y + box.h]
    return cv2.cvtColor(image, cv2.COLOR_BGR2GRAY), (box.y, box.y + box.h), rows


def _is_page(image: np.ndarray, was: bool = False) -> bool:
    return shows_page(image, edge_mask(image, 1.0), was)


def test_a_page_of_print_is_told_from_subtitles_on_light_and_busy_pictures() -> None:
    page, _, _ = _over_page()
    half = cv2.resize(page, None, fx=0.5, fy=0.5, interpolation=cv2.INTER_AREA)
    assert print_share(half) >= PRINT_ON and _is_page(half)
    # Outlined subtitles in a 1280 x 240 band, at half resolution as a 720p video's: on a bright picture (its
    # outline is thin dark ink on light ground as well), a dark one and fine texture.
    rng = np.random.default_rng(3)
    grass = cv2.GaussianBlur(rng.integers(0, 256, (240, 1280), dtype=np.uint8), (0, 0), 2)
    for background in (np.full((240, 1280), 230, np.uint8), np.full((240, 1280), 40, np.uint8), grass):
        for outline in (1, 3):
            image, _ = _subtitle(background, "I found the letter in his coat.", outline=outline)
            small = cv2.resize(cv2.cvtColor(image, cv2.COLOR_BGR2GRAY), None, fx=0.5, fy=0.5,
                               interpolation=cv2.INTER_AREA)
            assert not _is_page(small), (outline, print_share(small))


def test_a_subtitle_with_a_thin_outline_on_a_light_picture_in_a_tight_band_is_not_a_page() -> None:
    """Its outline is as much thin dark ink on light ground as a page's print, with as many edge-mask pixels
    around it (a real anime clip: a white subtitle with a thin grey outline over white faces lost a cue to the
    closed glyph mask); but its strokes are glyph-sized, not letters of print (small_ink_share)."""
    for outline in (1, 3):
        image, _ = _subtitle(np.full((96, 1280), 230, np.uint8), "I found the letter in his coat.", outline=outline)
        small = cv2.resize(cv2.cvtColor(image, cv2.COLOR_BGR2GRAY), None, fx=0.5, fy=0.5, interpolation=cv2.INTER_AREA)
        assert print_share(small) >= PRINT_ON  # the ink alone would call it a page
        assert small_ink_share(small) < PAGE_SMALL and not _is_page(small), outline


def test_a_subtitle_on_a_flat_light_picture_taken_for_a_page_keeps_its_glyphs() -> None:
    """In a tight band, an outlined subtitle on a flat light picture can have as much thin dark ink as a page
    (its outline). Its outline closes its fill off, so the closed glyph mask still holds the whole line."""
    image, box = _subtitle(np.full((96, 1280), 230, np.uint8), "I found the letter in his coat.", outline=1)
    grey = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
    lines = text_lines(closed_glyph_mask(grey, 0.5))[1]
    assert len(lines) == 1 and lines[0].width >= 0.9 * box.w / 2, (lines, box)


def test_the_closed_glyph_mask_keeps_the_subtitle_and_drops_the_page() -> None:
    image, (top, bottom), print_rows = _over_page()
    edges, closed = edge_mask(image, 0.5), closed_glyph_mask(image, 0.5)
    assert edges.shape == closed.shape
    for y0, y1 in print_rows:  # the edge mask sees the print as glyphs; the closed mask only letter counters
        assert np.count_nonzero(closed[y0 // 2 : y1 // 2]) < 0.2 * np.count_nonzero(edges[y0 // 2 : y1 // 2])
    lines = text_lines(closed)[1]
    assert len(lines) == 1 and top // 2 - 2 <= lines[0].y0 and lines[0].y1 <= bottom // 2 + 2, lines
    assert lines[0].width > 250  # the whole subtitle, not a piece of it
    assert len(text_lines(edges)[1]) > 1  # the print's lines, which hide the subtitle's coming and going


def test_dark_text_on_a_light_box_is_not_a_page(tmp_path: Path, rapid_engine: OcrEngine) -> None:
    """Short-video captions (dark text on a light box) are dark strokes on light ground too; small ones at 360p and
    720p are not taken for a page (whose closed glyph mask would lose a box wider than half the band)."""
    import vidocr

    for width, height, size in ((640, 360, 0.045), (1280, 720, 0.035)):
        clip = _clip(f"light-box-{height}", _two(), style=Style("DejaVu Sans", size, colour=(20, 20, 20), box="light"))
        clip.width, clip.height = width, height
        lacking = missing(clip)
        if lacking:
            _need(", ".join(lacking))
        rendered = libass.render(clip, tmp_path / clip.name)
        cues, info = vidocr.extract(rendered.video, engine=rapid_engine)
        found = problems(rendered, list(cues))
        assert info.stats.page_frames == 0 and not found, (height, info.stats.page_frames, found)

