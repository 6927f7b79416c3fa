"""textmask.closed_light: the light regions closed off from an image's edges, which the page mask
(textmask.closed_glyph_mask), the glyph fill of a line and the glyph image (vidocr.layout) all keep."""

from __future__ import annotations

import numpy as np

from vidocr.textmask import closed_light, glyph_pixels


def test_a_light_region_is_closed_when_it_touches_no_edge_and_fits() -> None:
    light = np.zeros((50, 100), bool)
    light[20:30, 40:50] = True  # a glyph's fill: closed
    light[0:10, 5:15] = True  # touches the top edge: open
    light[35:45, 60:99] = True  # not on an edge, but 39 of 100 wide
    light[12:16, 70:74] = True  # a speck beside them: closed
    closed = closed_light(light)
    assert closed.dtype == bool and closed.shape == light.shape
    assert closed[20:30, 40:50].all() and closed[12:16, 70:74].all()
    assert not closed[0:10, 5:15].any()
    assert not (closed & ~light).any()
    assert closed[35:45, 60:99].all()  # at most half of the width by default
    assert not closed_light(light, (30, 30))[35:45, 60:99].any()  # wider than 30 pixels
    assert closed_light(light, (30, 30))[20:30, 40:50].all()


def test_regions_joined_through_a_diagonal_are_separate_and_one_reaching_the_edge_is_open() -> None:
    light = np.zeros((40, 40), bool)
    light[10:20, 10:20] = True
    light[20:40, 20] = True  # meets the square only at a corner, and reaches the bottom edge
    closed = closed_light(light)
    assert closed[10:20, 10:20].all()
    assert not closed[20:40, 20].any()


def test_glyph_pixels_are_light_pixels_beside_a_darker_rim() -> None:
    image = np.full((30, 60), 40, np.uint8)
    image[10:20, 10:50] = 230  # white fill on a dark picture: the fill's border is glyph pixels
    image[0:30, 55:60] = 120  # grey: not light enough
    glyph = glyph_pixels(image)
    assert glyph[10, 10] and glyph[11, 30] and not glyph[15, 30]  # two pixels from the rim at most
    assert glyph_pixels(image, radius=5)[15, 30]
    assert not glyph[:, 55:].any() and not glyph[0:8].any()
