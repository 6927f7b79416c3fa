"""Cheap per-frame text evidence from the luma plane.

Burned-in subtitles are light strokes (white, yellow, pastel, or a saturated colour) with a dark
outline, shadow or box, held still for a while. "Light" is measured on each pixel's strongest colour
channel, max(R, G, B), not on luma: a red or blue subtitle (luma 60-100) is as bright there as a white
one, while greys, and so dark outlines, stay at their luma. We keep bright pixels that have a much
darker pixel within two pixels
(glyph interiors next to their outline), which drops most picture detail: dark line art, texture
and shading rarely pair a bright core with a dark rim. Then we keep only connected components shaped
and aligned like a line of glyphs. The result is a binary
"text mask" at a fixed analysis resolution; comparing masks of consecutive frames tells when the
subtitle changed, to the frame, for ~0.3 ms a frame. It is a gate and a change signal, not a
recogniser: OCR confirms.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

from vidocr.types import Box

#: Analysis width in pixels: the band is scaled to this width (never up) before masking.
ANALYSIS_WIDTH = 960
#: A glyph pixel is at least this bright (0-255 luma)...
BRIGHT_MIN = 140
#: ...and at least this much brighter than the darkest pixel within two pixels (its outline/shadow; vidocr.layout
#: measures an OCR line's glyphs within a radius set by its height). Outlined or shadowed subtitles give 150-220;
#: anti-aliasing and downscaling keep them above ~80.
RIM_STEP = 60
#: Subtitle rows at most this many analysis pixels high (16 px at 720p and 1080p, 32 at 4K) are small text: their
#: zone is masked at twice the analysis resolution (full resolution up to 1080p), where their one-pixel strokes keep
#: their contrast, and with SMALL_RIM_STEP (see vidocr.pipeline). Downscaling averages a 1-px stroke with its surround:
#: white capitals 12 px high without an outline over a light picture step ~70 at full resolution, ~30 at half.
SMALL_TEXT_PX = 8
SMALL_RIM_STEP = 45

_KERNEL5 = np.ones((5, 5), np.uint8)


def analysis_scale(width: int) -> float:
    """1/k for the smallest integer k that brings ``width`` to at most ANALYSIS_WIDTH
    (integer factors take OpenCV's fast area-averaging path)."""
    return 1.0 / max(1, -(-width // ANALYSIS_WIDTH))


def _colour_lift() -> np.ndarray:
    """max(R, G, B) - Y for every (U, V) pair (BT.601 full swing), indexed by ``U << 8 | V``: how much
    brighter a pixel's strongest channel is than its luma. Never negative; 0 for greys."""
    cb = np.arange(256, dtype=np.float32)[:, None] - 128.0
    cr = np.arange(256, dtype=np.float32)[None, :] - 128.0
    lift = np.maximum(np.maximum(1.402 * cr, -0.344136 * cb - 0.714136 * cr), 1.772 * cb)
    table: np.ndarray = np.clip(np.rint(lift), 0, 255).astype(np.uint8).reshape(-1)
    return table


_LIFT = _colour_lift()

#: A frame's U and V planes (see ``DecodedFrame.chroma``).
Chroma = tuple[np.ndarray, np.ndarray]


def analysis_image(
    luma: np.ndarray, chroma: Chroma | None, box: Box | None, scale: float
) -> np.ndarray:
    """The image text masks are made from: ``box`` of the frame (all of it when None) scaled by
    ``scale``, each pixel as bright as its strongest colour channel (luma alone when the frame has
    no chroma planes). Chroma planes may be subsampled: they are cropped and resized to match."""
    height, width = luma.shape
    if box is not None:
        luma = luma[box.y : box.y + box.h, box.x : box.x + box.w]
    if scale < 1.0 and min(luma.shape) * scale >= 1:
        small = cv2.resize(luma, None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA)
    else:
        small = np.ascontiguousarray(luma)
    if chroma is None:
        return small
    planes = []
    for plane in chroma:
        ch, cw = plane.shape
        if box is not None:
            y0, y1 = box.y * ch // height, max(box.y * ch // height + 1, -(-(box.y + box.h) * ch // height))
            x0, x1 = box.x * cw // width, max(box.x * cw // width + 1, -(-(box.x + box.w) * cw // width))
            plane = plane[y0:y1, x0:x1]
        if plane.shape != small.shape:
            shrink = plane.shape[0] > small.shape[0] or plane.shape[1] > small.shape[1]
            plane = cv2.resize(
                plane, (small.shape[1], small.shape[0]), interpolation=cv2.INTER_AREA if shrink else cv2.INTER_LINEAR
            )
        planes.append(plane)
    index = planes[0].astype(np.uint16) << 8
    index |= planes[1]
    return cv2.add(small, _LIFT[index])


def edge_mask(y: np.ndarray, scale: float, rim_step: int = RIM_STEP, dark: np.ndarray | None = None) -> np.ndarray:
    """Bright pixels with a dark rim, at analysis resolution (uint8 0/1); ``dark``: see :func:`glyph_pixels`."""
    if scale < 1.0 and min(y.shape) * scale >= 1:
        y = cv2.resize(y, None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA)
    return glyph_pixels(y, rim_step=rim_step, dark=dark).view(np.uint8)


def glyph_pixels(
    image: np.ndarray, radius: int = 2, rim_step: int = RIM_STEP, dark: np.ndarray | None = None
) -> np.ndarray:
    """``image``'s glyph pixels (bool): at least BRIGHT_MIN bright, with a pixel at least ``rim_step`` darker
    within ``radius`` pixels (the outline, shadow or box around a glyph's fill). ``dark``: the darkest pixel
    within that radius of each pixel, when known better than from ``image`` itself (see :func:`fine_dark`)."""
    if dark is None:
        kernel = _KERNEL5 if radius == 2 else np.ones((2 * radius + 1, 2 * radius + 1), np.uint8)
        dark = cv2.erode(image, kernel)
    glyph: np.ndarray = (image >= BRIGHT_MIN) & (cv2.subtract(image, dark) >= rim_step)
    return glyph


def fine_dark(luma: np.ndarray, box: Box, scale: float, shape: tuple[int, ...]) -> np.ndarray | None:
    """For each pixel of ``box`` of a frame's ``luma`` scaled by ``scale`` (to ``shape``, by an integer factor: see
    analysis_scale), the darkest full-resolution pixel within two of its pixels; None when not scaled down.

    Scaling down averages a glyph's thin outline (one or two pixels at full resolution) with the fill and the
    picture beside it: a pale glyph with a thin grey outline on a light picture (fill 240, outline 175, picture
    195) keeps a rim of ~65 at full resolution and ~45 scaled down by two, under RIM_STEP: its subtitle was never
    seen. Measured here, where the outline is drawn."""
    factor = round(1 / scale) if scale < 1.0 else 1
    if factor < 2:
        return None
    full = luma[box.y : box.y + box.h, box.x : box.x + box.w]
    side = 4 * factor + 1  # two analysis pixels each way
    # The full-resolution pixel at the middle of each analysis pixel's footprint, then the rows and columns the
    # area scaling kept.
    dark = cv2.erode(full, np.ones((side, side), np.uint8))[factor // 2 :: factor, factor // 2 :: factor]
    dark = dark[: shape[0], : shape[1]]
    return np.ascontiguousarray(dark) if dark.shape == tuple(shape[:2]) else None


#: A light region is closed (see closed_light) when it is at most this share of the image's height and of its
#: width: a band's glyphs are smaller than the band; the picture or page around them is not.
CLOSED_HEIGHT, CLOSED_WIDTH = 0.6, 0.5


def closed_light(light: np.ndarray, most: tuple[float, float] | None = None) -> np.ndarray:
    """The pixels of ``light`` (bool: an image's light pixels at some cut) in light regions closed off from the
    image's edges (bool): 4-connected regions that touch no edge and are at most ``most`` (width, height) in
    pixels, by default CLOSED_WIDTH and CLOSED_HEIGHT of the image's.

    A subtitle glyph's fill is closed off from everything around it by its outline, shadow or box; the paper
    around dark print, or the picture around a glyph whose outline breaks, is one open region reaching past the
    text. Measured by :func:`closed_glyph_mask` (pages in the band) and by vidocr.layout's glyph fill and glyph
    image (an OCR line's light glyphs)."""
    height, width = light.shape
    most_width, most_height = most or (CLOSED_WIDTH * width, CLOSED_HEIGHT * height)
    _, labels, stats, _ = cv2.connectedComponentsWithStats(light.view(np.uint8), connectivity=4, ltype=cv2.CV_32S)
    x, y, w, h = stats[:, 0], stats[:, 1], stats[:, 2], stats[:, 3]
    open_ = (x == 0) | (y == 0) | (x + w >= width) | (y + h >= height) | (w > most_width) | (h > most_height)
    open_[0] = True  # the pixels that are not light
    closed: np.ndarray = (~open_)[labels]
    return closed


#: A band is a page of print (see closed_glyph_mask) from this share of thin dark strokes on light ground
#: (print_share), until the share falls under PRINT_OFF. Measured on the libass corpus at analysis
#: resolution: frames with a book page 4-11% (1.4-3% while it slides out of view), signs on light plates up
#: to 3.4%, all others (pale text on bright pictures, grass, 360p noise, shaking photos) 0-1.3%; but an
#: outlined subtitle on a light grey picture in a tight band 3.5-5.6% (its outline is thin and dark on light
#: ground too), so a page also needs PAGE_GLYPHS (PAGE_GLYPHS_OFF to stay) times as many edge-mask pixels as
#: ink pixels: the paper beside every stroke of print is "light with a dark rim" on both sides, a subtitle's
#: fill is less than its outline at analysis resolution. Measured: pages 2.3-6 (5th percentile 2.8), outlined
#: subtitles on light pictures 1.4-2.1 (bench/speed.py's video, the samples).
PRINT_ON, PRINT_OFF = 0.03, 0.02
PAGE_GLYPHS, PAGE_GLYPHS_OFF = 2.2, 1.9
#: ... and print is small: at least PAGE_SMALL (PAGE_SMALL_OFF to stay) of the ink is in strokes at most
#: SMALL_INK analysis pixels high (letters of print). Measured: pages' frames median 0.65-0.8 (5th percentile
#: 0.23-0.7); a real anime clip's white subtitle with a thin grey outline over white line-art faces, whose
#: outline is the ink, 0.24-0.30 (bigger glyphs): taken for a page, it lost a cue.
PAGE_SMALL, PAGE_SMALL_OFF, SMALL_INK = 0.4, 0.2, 8
_KERNEL3 = np.ones((3, 3), np.uint8)


def _ink(image: np.ndarray) -> np.ndarray:
    """Thin dark strokes (one or two pixels wide) on light ground: the ink of print on a page, and the outline
    of light glyphs on a light picture (bool)."""
    closed = cv2.morphologyEx(image, cv2.MORPH_CLOSE, _KERNEL3)
    ink: np.ndarray = (closed >= BRIGHT_MIN) & (cv2.subtract(closed, image) >= RIM_STEP)
    return ink


def print_share(image: np.ndarray) -> float:
    """The share of ``image``'s pixels that are thin dark strokes on light ground (see _ink)."""
    return _share(_ink(image))


def small_ink_share(image: np.ndarray) -> float:
    """The share of ``image``'s ink (see _ink) in strokes at most SMALL_INK pixels high: letters of print, not
    the outline of a subtitle's glyphs."""
    return _small_share(_ink(image))


def _share(ink: np.ndarray) -> float:
    return int(np.count_nonzero(ink)) / max(1, ink.size)


def _small_share(ink: np.ndarray) -> float:
    _, _, stats, _ = cv2.connectedComponentsWithStats(ink.view(np.uint8), connectivity=8, ltype=cv2.CV_32S)
    area, height = stats[1:, 4], stats[1:, 3]
    return int(area[height <= SMALL_INK].sum()) / max(1, int(area.sum()))


def shows_page(image: np.ndarray, edges: np.ndarray, was: bool) -> bool:
    """Whether a band (``image`` at analysis resolution and its :func:`edge_mask`) shows a page of print;
    ``was``: whether the band's previous frame did (the thresholds are lower to stay a page than to become
    one, so that a page sliding out of view does not flip the band's mask kind from frame to frame)."""
    ink = _ink(image)  # measured once for the three tests
    share = _share(ink)
    if share < (PRINT_OFF if was else PRINT_ON):
        return False
    if _share(edges) < (PAGE_GLYPHS_OFF if was else PAGE_GLYPHS) * share:
        return False
    return _small_share(ink) >= (PAGE_SMALL_OFF if was else PAGE_SMALL)


def closed_glyph_mask(y: np.ndarray, scale: float, rim_step: int = RIM_STEP) -> np.ndarray:
    """:func:`edge_mask`'s pixels that lie in light regions (at least BRIGHT_MIN) closed off from the image's
    edges (:func:`closed_light`), at analysis resolution (uint8 0/1); ``y`` is at full resolution.

    Over a page of dark print on light paper, the paper beside every stroke is "bright with a dark rim" too,
    and the page's lines of print fill the edge mask and hide a subtitle's coming and going. A subtitle's
    fill is closed off by its outline; the paper is one open light region (only letter counters are closed,
    specks too small to be glyphs). Outlines are one or two pixels wide, so this is measured before
    scaling: ~5 ms for a 1280x200 band, paid only by frames whose band shows a page (:func:`shows_page`).
    A pale subtitle whose thin outline breaks on a bright picture loses those glyphs here: not for every video.
    """
    closed: np.ndarray = (glyph_pixels(y, rim_step=rim_step) & closed_light(y >= BRIGHT_MIN)).view(np.uint8)
    if scale < 1.0 and min(y.shape) * scale >= 1:
        # As analysis_image scales (the same call: masks of both kinds have one shape).
        small: np.ndarray = cv2.resize(closed * 255, None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA)
        closed = (small >= 64).view(np.uint8)
    return closed


#: Lines of print (smaller than PRINT_HEIGHT of the subtitle's line height, wide) that make a band a page.
PRINT_LINES = 3
PRINT_HEIGHT = 0.7


def shows_print(edges: np.ndarray, line_height: float) -> bool:
    """Whether an edge mask holds a block of print: PRINT_LINES or more lines of text smaller than the
    subtitle's (``line_height``, analysis pixels) and at least four times as wide as high (a page, a letter,
    a screen of text): then :func:`closed_glyph_mask` tells the subtitle apart."""
    _, lines = text_lines(edges, min_height=max(4, int(0.25 * line_height)))
    small = [ln for ln in lines if ln.height <= PRINT_HEIGHT * line_height and ln.width >= 4 * ln.height]
    return len(small) >= PRINT_LINES


@dataclass(frozen=True)
class TextLine:
    """A horizontal run of glyph-like components, in analysis pixels."""

    x0: int
    y0: int
    x1: int
    y1: int
    glyphs: int

    @property
    def height(self) -> int:
        return self.y1 - self.y0

    @property
    def width(self) -> int:
        return self.x1 - self.x0


def text_lines(
    edges: np.ndarray,
    min_height: int = 6,
    max_height: int | None = None,
    cut_glued: bool = False,
    thin_strokes: bool = False,
    line_rows: int = 0,
) -> tuple[np.ndarray, list[TextLine]]:
    """Keep the components of ``edges`` that form lines of text.

    Returns the mask of the kept pixels (uint8 0/1) and the lines found. A line is two or more
    glyph-sized components of similar height whose vertical centres agree and whose gaps are at
    most about two glyph heights, or a single wide component (a word whose letters touch through
    their outline). Texture gives components too, but rarely this regular; OCR has the last word.
    With ``cut_glued``, components rejected whole are first cut at their thin rows (:func:`_thin_rows`:
    a subtitle glued to a sign's frame); the change detector asks for it, the zone finder does not. With
    ``thin_strokes``, sparse components whose strokes cross their middle count as glyphs too (see :func:`_candidates`):
    the change detector asks for it, inside the zone the finder found; the finder, looking at the whole frame, does not
    (it would find picture detail). ``line_rows``: how tall the subtitle lines are where known (the change detector
    knows the rows the zone finder saw them in): straight runs up to that long are kept, a glyph's strokes.
    """
    height = edges.shape[0]
    max_height = max(min_height + 1, int(max_height or height * 0.9))
    # Long straight runs are picture edges (a bright wall next to a shadow), not strokes: remove
    # them so that they do not glue glyphs into one tall component.
    run = max(8, min(max_height, max(int(height * 0.5), line_rows + 1)))
    vertical: np.ndarray = cv2.morphologyEx(edges, cv2.MORPH_OPEN, np.ones((run, 1), np.uint8))
    horizontal: np.ndarray = cv2.morphologyEx(edges, cv2.MORPH_OPEN, np.ones((1, 3 * run), np.uint8))
    edges = edges & ~(vertical | horizontal) & 1
    # Close small gaps so a glyph's outline forms one component; vertical closing stays small
    # so that two subtitle lines are not glued together.
    closed = cv2.morphologyEx(edges, cv2.MORPH_CLOSE, np.ones((3, 3), np.uint8))
    # 16-bit labels are ~3x faster here; distinct 8-connected components never touch, so each one
    # owns a cell of a 2x2 grid and a small mask cannot have more labels than 16 bits hold.
    cells = ((closed.shape[0] + 1) // 2) * ((closed.shape[1] + 1) // 2)
    ltype = cv2.CV_16U if cells < 65535 else cv2.CV_32S
    count, labels, stats, _ = cv2.connectedComponentsWithStats(closed, connectivity=8, ltype=ltype)
    glyphs = _candidates(stats, min_height, max_height, labels if thin_strokes else None)
    thin = _thin_rows(labels, stats, glyphs, min_height) if cut_glued else None
    if thin is not None:
        # Components glued by a thin line (a sign's frame touching a subtitle) are cut apart there.
        closed = cv2.bitwise_and(closed, 1 - thin)
        count, labels, stats, _ = cv2.connectedComponentsWithStats(closed, connectivity=8, ltype=ltype)
        glyphs = _candidates(stats, min_height, max_height, labels if thin_strokes else None)
    cands = [(*(int(v) for v in stats[i, :4]), int(i)) for i in np.flatnonzero(glyphs)]
    if not cands:
        return np.zeros_like(edges), []
    cands.sort(key=lambda c: c[0])
    used = [False] * len(cands)
    lines: list[TextLine] = []
    keep_ids: list[int] = []
    for a in range(len(cands)):
        if used[a]:
            continue
        group = [a]
        used[a] = True
        x0, y0, w0, h0, _ = cands[a]
        gx1, gy0, gy1 = x0 + w0, y0, y0 + h0
        # The line's reference: mean centre and tallest glyph of its members (not the union box,
        # which would grow across to a second subtitle line).
        centres, ref_h = [y0 + h0 / 2], h0
        for b in range(a + 1, len(cands)):
            if used[b]:
                continue
            x, y, w, h, _ = cands[b]
            gap = x - gx1
            if gap > 6 * max(ref_h, h):
                break  # candidates are sorted by x: every later one is further away
            if gap > 2.5 * max(ref_h, h):
                continue
            cy, ref_cy = y + h / 2, sum(centres) / len(centres)
            if abs(cy - ref_cy) > 0.5 * max(ref_h, h) or not (0.4 <= h / max(ref_h, 1) <= 2.2):
                continue
            group.append(b)
            used[b] = True
            centres.append(cy)
            ref_h = max(ref_h, h)
            gx1 = max(gx1, x + w)
            gy0, gy1 = min(gy0, y), max(gy1, y + h)
        gx0 = cands[group[0]][0]
        line_h = gy1 - gy0
        width = gx1 - gx0
        # A lone component is a line only if it fills its box as glyphs do: a sparse one (see _candidates) may be a
        # blade of grass or a blob of grain, and counts only beside others.
        single = (
            len(group) == 1
            and _dense(stats[cands[a][4]])
            and (width >= 2.0 * line_h or _glyph_like(stats[cands[a][4]], min_height))
        )
        if (len(group) >= 2 and width >= 1.2 * line_h) or single:
            lines.append(TextLine(gx0, gy0, gx1, gy1, len(group)))
            keep_ids.extend(cands[g][4] for g in group)
    if not keep_ids:
        return np.zeros_like(edges), []
    lut = np.zeros(count, np.uint8)
    lut[keep_ids] = 1
    mask = lut[labels] & edges
    lines.sort(key=lambda ln: ln.y0)
    return mask, lines


#: A component filling less than DENSE of its box is a glyph only if it fills at least SPARSE of it and at least
#: CROSSING of its pixels lie in the middle half of its box (both ways): strokes crossing the glyph, not an outline.
DENSE = 0.2
SPARSE = 0.12
CROSSING = 0.3


def _dense(stat: np.ndarray) -> bool:
    """A component fills at least DENSE of its box."""
    return int(stat[cv2.CC_STAT_AREA]) >= DENSE * int(stat[cv2.CC_STAT_WIDTH]) * int(stat[cv2.CC_STAT_HEIGHT])


def _candidates(stats: np.ndarray, min_height: int, max_height: int, labels: np.ndarray | None) -> np.ndarray:
    """Which components (rows of connectedComponentsWithStats' ``stats``; the background's is never one) may be a
    glyph, or glyphs merged into one (bool). Sparse ones are looked at only given ``labels``."""
    w, h, area = stats[:, cv2.CC_STAT_WIDTH], stats[:, cv2.CC_STAT_HEIGHT], stats[:, cv2.CC_STAT_AREA]
    # Hollow shapes (edges of a flat object) and thin vertical strokes (poles, legs, frame edges) are not
    # glyphs; dense blobs are: glyphs merge into one at low resolution. Longer than 40 heights: straight
    # edges (horizon, frame borders).
    shaped = (h >= min_height) & (h <= max_height) & (w >= 0.2 * h) & (w <= 40 * h)
    ok: np.ndarray = shaped & (area >= DENSE * w * h)
    # A thin-stroked glyph (a Ming face at the analysis scale, its strokes one pixel wide) fills as little of its box
    # as an outline does, but its strokes cross its middle ("火", "车", "开"), where an outline has none.
    if labels is not None:
        for i in np.flatnonzero(shaped & ~ok & (area >= SPARSE * w * h)):
            x, y, cw, ch = (int(v) for v in stats[i, :4])
            middle = labels[y + ch // 4 : y + ch - ch // 4, x + cw // 4 : x + cw - cw // 4] == i
            ok[i] = np.count_nonzero(middle) >= CROSSING * int(area[i])
    ok[0] = False
    return ok


#: A component's row holding fewer of its pixels than THIN_ROW of its fullest row is "thin": only lines
#: cross it (a frame's sides, a pole), where a line of glyphs fills every row it spans.
THIN_ROW = 0.1
#: A component whose rows are thin for more than THIN_SHARE of its height is cut at those rows.
THIN_SHARE = 0.4


def _thin_rows(labels: np.ndarray, stats: np.ndarray, glyphs: np.ndarray, min_height: int) -> np.ndarray | None:
    """The pixels to clear (uint8 0/1, None when none) to cut apart components glued by thin lines.

    A subtitle touching a sign's frame or a pole makes one component with the frame: taller than a
    line, hollow, and rejected with the subtitle inside it. Its rows tell the parts apart: the
    subtitle's rows are full of edges, the frame's only crossed by its sides. A component that is
    thin in more than THIN_SHARE of its rows loses its pixels in those rows; what is left is tested
    as components of its own. Glyphs and words are full in most rows and stay whole. ``glyphs``: the
    components kept as they are (:func:`_candidates`); only the others, rejected whole, are cut.
    """
    clear: np.ndarray | None = None
    heights, areas = stats[:, cv2.CC_STAT_HEIGHT], stats[:, cv2.CC_STAT_AREA]
    tall = (heights >= 4 * min_height) & (areas >= 4 * heights) & ~glyphs
    tall[0] = False
    for i in np.flatnonzero(tall):
        x, y, w, h = (int(v) for v in stats[i, :4])
        own = labels[y : y + h, x : x + w] == i
        rows = np.count_nonzero(own, axis=1)
        thin = rows < max(3, THIN_ROW * int(rows.max()))
        if np.count_nonzero(thin) <= THIN_SHARE * h or _longest_run(~thin) < min_height:
            continue  # mostly full rows, or no part tall enough to be a glyph (a hollow frame): nothing to gain
        if clear is None:
            clear = np.zeros(labels.shape, np.uint8)
        clear[y : y + h, x : x + w][thin] |= own[thin].view(np.uint8)
    return clear


def _longest_run(flags: np.ndarray) -> int:
    """The length of the longest run of True in a 1-D bool array."""
    padded = np.concatenate(([0], flags.view(np.int8), [0]))
    edges = np.flatnonzero(np.diff(padded))
    return int((edges[1::2] - edges[::2]).max()) if edges.size else 0


def _glyph_like(stat: np.ndarray, min_height: int) -> bool:
    """A lone component shaped like one or two CJK characters merged by their outline ("嗯", "好的")."""
    _, _, w, h, area = (int(v) for v in stat)
    return h >= max(12, 1.5 * min_height) and w >= 0.6 * h and area / float(w * h) >= 0.25


def overlap(a: np.ndarray, b: np.ndarray) -> float:
    """Fraction of ``a``'s pixels also set in ``b`` (1.0 when ``a`` is empty)."""
    na = int(np.count_nonzero(a))
    if na == 0:
        return 1.0
    return int(np.count_nonzero(a & b)) / na


def similarity(a: np.ndarray, b: np.ndarray) -> float:
    """1 minus the larger of the parts of ``a`` missing from ``b`` and of ``b`` missing from ``a``.

    One-pixel shifts are tolerated (compression noise, sub-pixel jitter). Taking the larger side
    keeps the measure sensitive when static picture detail shares the band: a subtitle appearing
    next to it is "half of the new mask is new", where Dice would still call the masks alike.
    """
    na, nb = int(np.count_nonzero(a)), int(np.count_nonzero(b))
    if na == 0 and nb == 0:
        return 1.0
    if na == 0 or nb == 0:
        return 0.0
    lost = na - int(np.count_nonzero(a & cv2.dilate(b, _KERNEL3)))
    gained = nb - int(np.count_nonzero(b & cv2.dilate(a, _KERNEL3)))
    return 1.0 - max(lost / na, gained / nb)
