"""The change detector on rendered subtitle bands (real font, real text mask; no video needed)."""

from __future__ import annotations

from fractions import Fraction

import cv2
import numpy as np
import pytest
from PIL import Image, ImageDraw, ImageFont
from support.synth import FONT_PATH

from vidocr.detect import (
    BandChangeDetector,
    DetectOptions,
    ReadReason,
    ReadRequest,
    SegmentEnded,
    SegmentStarted,
    changed_line_similarity,
)
from vidocr.textmask import TextLine, analysis_image, analysis_scale, edge_mask, similarity, text_lines
from vidocr.types import Box, Timestamp

TB = Fraction(1, 25)

WIDTH, HEIGHT, FONT = 1280, 150, 44
TEXT_TOP = 70  # the subtitle's rows: 70-120 of the band


def subtitle(draw: ImageDraw.ImageDraw, text: str, fill: int, stroke: int, size: int = FONT) -> None:
    """Draw ``text`` centred on the band's subtitle rows (from TEXT_TOP) with a black outline ``stroke`` wide."""
    font = ImageFont.truetype(str(FONT_PATH), size)
    w = draw.textlength(text, font=font)
    draw.text(((WIDTH - w) / 2, TEXT_TOP), text, font=font, fill=fill, stroke_width=stroke, stroke_fill=0)


def band(text: str | None, ellipse: bool, reach: int = 8) -> np.ndarray:
    """Luma of a band: a dark picture, optionally a bright object right above the subtitle, the subtitle."""
    img = Image.new("L", (WIDTH, HEIGHT), 70)
    draw = ImageDraw.Draw(img)
    if ellipse:
        # A bright shape whose lower outline comes down to the tops of the glyphs (``reach`` pixels below
        # the top of the text's box: 8 touches them, 14 joins them into shapes that are no text line).
        draw.ellipse((560, -40, 760, TEXT_TOP + reach), fill=225)
    if text:
        subtitle(draw, text, fill=240, stroke=3)
    return np.asarray(img)


def first_events(luma: np.ndarray) -> list[type]:
    """The kinds of event the first frame gives; a read of it is the "first" read of the first segment."""
    scale = analysis_scale(WIDTH)
    core = (int(TEXT_TOP * scale), int((TEXT_TOP + FONT + 8) * scale) + 1)
    det = BandChangeDetector(DetectOptions(), 25.0, line_height=FONT * scale, core_rows=core)
    events = list(det.push(Timestamp(0, 1), edge_mask(luma, scale)))
    for event in events:
        if isinstance(event, ReadRequest):
            assert event.reason is ReadReason.FIRST and event.segment is events[0].segment
    return [type(event) for event in events]


def test_subtitle_next_to_a_bright_object_is_still_text() -> None:
    assert first_events(band("好的", ellipse=False)) == [SegmentStarted, ReadRequest]
    assert first_events(band("好的", ellipse=True)) == [SegmentStarted, ReadRequest]


def test_the_bright_object_alone_is_not_text() -> None:
    assert first_events(band(None, ellipse=True)) == [SegmentStarted]
    assert first_events(band(None, ellipse=False)) == [SegmentStarted]


def test_each_segment_starts_is_read_and_ends_with_its_end_time() -> None:
    frames = [band(None, ellipse=False)] * 6 + [band("好的", ellipse=False)] * 10 + [band(None, ellipse=False)] * 6
    scale = analysis_scale(WIDTH)
    det = BandChangeDetector(DetectOptions(), 25.0)
    events = [e for i, luma in enumerate(frames) for e in det.push(Timestamp(i, TB), edge_mask(luma, scale))]
    events += det.finish(Timestamp(len(frames), TB))
    current = None
    spans, reasons = [], []
    for event in events:
        if isinstance(event, SegmentStarted):
            assert current is None
            current = event.segment
        elif isinstance(event, SegmentEnded):
            assert current is not None and event.segment is current and event.end == current.end
            spans.append((current.start.pts, event.end.pts, current.has_text))
            current = None
        else:
            assert event.segment is current
            reasons.append(event.reason)
    assert current is None
    assert spans == [(0, 6, False), (6, 16, True), (16, 22, False)]
    assert reasons and reasons[0] is ReadReason.NEW


def test_subtitle_appearing_under_a_shape_that_joins_its_glyphs_starts_at_its_first_frame() -> None:
    # A bright shape over an empty band; the subtitle appears under it, the shape's edge joined to the
    # glyphs' tops (no text line yet), and the shape goes 5 frames later. The glyphs were all there from
    # frame 5: the subtitle starts there, not where its lines were first found.
    frames = [band(None, True, reach=14)] * 5 + [band("好的", True, reach=14)] * 5 + [band("好的", False)] * 10
    scale = analysis_scale(WIDTH)
    det = BandChangeDetector(DetectOptions(), 25.0)
    starts = []
    for i, luma in enumerate(frames):
        for event in det.push(Timestamp(i, TB), edge_mask(luma, scale)):
            if isinstance(event, SegmentStarted) and event.segment.has_text:
                starts.append(event.segment.start.pts)
    assert starts == [5]


def scene(text: str, blobs: int = 0, ring: bool = False) -> np.ndarray:
    """A band with a subtitle: on a dark picture, optionally with a row of bright round shapes beside it
    (picture detail that the mask takes for more glyphs), or on a bright picture crossed by the dark
    outline of a large shape (its bright edge joins the glyphs into one shape that is no text line)."""
    img = Image.new("L", (WIDTH, HEIGHT), 200 if ring else 70)
    draw = ImageDraw.Draw(img)
    if ring:
        draw.ellipse((400, 10, 900, 145), outline=20, width=3)
    for i in range(blobs):
        x = 880 + i * 48
        draw.ellipse((x, TEXT_TOP, x + 40, TEXT_TOP + FONT), fill=230, outline=0, width=3)
    subtitle(draw, text, fill=240, stroke=2)
    return np.asarray(img)


def test_subtitle_split_by_passing_picture_detail_is_not_ended_when_its_lines_vanish() -> None:
    # Seen on real anime: picture detail beside a subtitle splits its segment (the new mask is half
    # picture); a frame later the picture moves and its edges join the glyphs into shapes that are no
    # text line. The glyphs that stayed through the first segment are still all there: no blank.
    text = "就是个虚拟现实游戏啊"
    frames = [scene(text)] * 10 + [scene(text, blobs=8)] * 5 + [scene(text, ring=True)] * 5 + [scene(text)] * 5
    scale = analysis_scale(WIDTH)
    det = BandChangeDetector(DetectOptions(), 25.0)
    segments = []
    for i, luma in enumerate(frames):
        for event in det.push(Timestamp(i, TB), edge_mask(luma, scale)):
            if isinstance(event, SegmentStarted):
                segments.append(event.segment)
    assert len(segments) >= 2  # the picture detail did split the subtitle's segment...
    assert segments[1].prev_similarity >= 0.3
    assert all(seg.has_text for seg in segments)  # ...but nothing ended it


def test_analysis_image_is_the_strongest_colour_channel() -> None:
    # A 4:2:0 frame of flat colour patches (8x8 pixels each), cropped and halved like a band.
    colours = [(255, 255, 255), (128, 128, 128), (0, 0, 0), (230, 40, 40), (60, 120, 255), (40, 200, 40)]
    colours.append((255, 235, 40))
    rgb = np.zeros((16, 8 * len(colours), 3), np.uint8)
    for i, colour in enumerate(colours):
        rgb[:, 8 * i : 8 * i + 8] = colour
    i420 = cv2.cvtColor(rgb, cv2.COLOR_RGB2YUV_I420)
    h, w = rgb.shape[:2]
    luma = i420[:h]
    u = i420[h : h + h // 4].reshape(h // 2, w // 2)
    v = i420[h + h // 4 :].reshape(h // 2, w // 2)
    image = analysis_image(luma, (u, v), Box(0, 8, w, 8), 0.5)
    grey = analysis_image(luma, None, Box(0, 8, w, 8), 0.5)  # luma only
    assert image.shape == grey.shape == (4, w // 2)
    got = [(int(image[2, 4 * i + 2]), int(grey[2, 4 * i + 2])) for i in range(len(colours))]
    white = got[0][0]
    for colour, (bright, luma_value) in zip(colours, got, strict=True):
        if len(set(colour)) == 1:
            assert bright == luma_value, colour  # greys keep their luma: outlines stay dark
        else:
            # As bright as white in its strongest channel, within the codec's rounding.
            assert bright >= 0.9 * white * max(colour) / 255, (colour, got)
    # In luma alone, red, blue and green are mid greys, far below white.
    assert all(got[i][1] < 0.65 * white for i in (3, 4, 5)), got


def picture_and(text: str | None) -> np.ndarray:
    """A band whose mask is mostly picture detail: two rows of bright outlined shapes off to the right
    (a lamp, highlights on a spoon), still; optionally a short subtitle, centred."""
    img = Image.new("L", (WIDTH, HEIGHT), 70)
    draw = ImageDraw.Draw(img)
    for row in range(2):
        for i in range(8):
            x, y = 860 + i * 50, 20 + row * 60
            draw.ellipse((x, y, x + 40, y + 40), fill=230, outline=0, width=3)
    if text:
        subtitle(draw, text, fill=240, stroke=2, size=30)
    return np.asarray(img)


def test_a_short_subtitle_beside_a_busy_still_picture_starts_and_ends_at_its_frames() -> None:
    # Seen on libass-rendered clips: a small "Oh." is a tenth of a band mask that holds bright picture
    # detail; the whole masks stay alike when it comes and goes. Its centred line decides.
    frames = [picture_and(None)] * 8 + [picture_and("Oh.")] * 10 + [picture_and(None)] * 8
    scale = analysis_scale(WIDTH)
    det = BandChangeDetector(DetectOptions(), 25.0)
    starts, ends = [], []
    for i, luma in enumerate(frames):
        for event in det.push(Timestamp(i, TB), edge_mask(luma, scale)):
            if isinstance(event, SegmentStarted):
                starts.append(event.segment)
            elif isinstance(event, SegmentEnded):
                ends.append(event.end.pts)
    edges = [seg.start.pts for seg in starts]
    assert 8 in edges and 18 in edges, edges
    oh = next(seg for seg in starts if seg.start.pts == 8)
    assert oh.has_text and oh.end is not None and oh.end.pts == 18


def sign_and(text: str | None) -> np.ndarray:
    """A band with a still sign in the picture on its upper rows, and optionally a subtitle below it."""
    img = Image.new("L", (WIDTH, HEIGHT), 90)
    draw = ImageDraw.Draw(img)
    font = ImageFont.truetype(str(FONT_PATH), 28)
    draw.rectangle((500, 4, 780, 44), fill=20)
    draw.text((520, 8), "CITY LIBRARY", font=font, fill=235)
    if text:
        big = ImageFont.truetype(str(FONT_PATH), FONT)
        w = draw.textlength(text, font=big)
        draw.text(((WIDTH - w) / 2, TEXT_TOP + 20), text, font=big, fill=240, stroke_width=3, stroke_fill=0)
    return np.asarray(img)


def test_a_read_of_a_subtitle_appearing_beside_a_still_sign_is_no_repeat_of_the_signs_read() -> None:
    # The pipeline re-reads only the previous read's boxes when a new segment shares its mask (cheap when it
    # is the same text); a subtitle line on rows where that read had none would never be detected then.
    frames = [sign_and(None)] * 8 + [sign_and("Where were you last night?")] * 10
    scale = analysis_scale(WIDTH)
    det = BandChangeDetector(DetectOptions(), 25.0)
    reads = []
    for i, luma in enumerate(frames):
        reads += [e for e in det.push(Timestamp(i, TB), edge_mask(luma, scale)) if isinstance(e, ReadRequest)]
    assert [r.ts.pts for r in reads] == [0, 9] and reads[1].grown, [(r.ts.pts, r.grown) for r in reads]


def page_and(text: str | None, shift: int = 0) -> np.ndarray:
    """A band with a page of small dark print on light paper over its upper rows, off to the left, its
    lines of print reaching into the top of the subtitle's rows; optionally the subtitle, centred, over it."""
    img = Image.new("L", (WIDTH, HEIGHT), 60)
    draw = ImageDraw.Draw(img)
    small = ImageFont.truetype(str(FONT_PATH), 18)
    draw.rectangle((180 + shift, 0, 900 + shift, TEXT_TOP + 30), fill=225)
    for row, y in enumerate(range(4, TEXT_TOP + 16, 22)):
        line = "the train leaves at half past nine and we should be back by tomorrow morning"
        draw.text((190 + shift, y), line[row:], font=small, fill=35)
    if text:
        subtitle(draw, text, fill=240, stroke=3)
    return np.asarray(img)


def _segment_starts(frames: list[np.ndarray]) -> list[int]:
    scale = analysis_scale(WIDTH)
    core = (int(TEXT_TOP * scale), int((TEXT_TOP + FONT + 8) * scale) + 1)
    det = BandChangeDetector(DetectOptions(), 25.0, line_height=FONT * scale, core_rows=core)
    starts = []
    for i, luma in enumerate(frames):
        starts += [e.segment.start.pts for e in det.push(Timestamp(i, TB), edge_mask(luma, scale))
                   if isinstance(e, SegmentStarted)]
    return starts


def test_a_subtitle_drawn_over_a_page_of_print_starts_and_ends_a_segment() -> None:
    # Seen on libass-rendered clips: the subtitle's glyphs merge with the page's lines into one block, neither
    # centred nor a small part of the mask, and the masks stay alike (0.8); the pixels it adds are a line.
    scale = analysis_scale(WIDTH)
    page, over = edge_mask(page_and(None), scale), edge_mask(page_and("I told you, I was at the office."), scale)
    core = (int(TEXT_TOP * scale), int((TEXT_TOP + FONT + 8) * scale) + 1)
    assert similarity(page, over) >= DetectOptions().same_threshold  # the whole masks cannot tell
    assert changed_line_similarity(page, over, core, FONT * scale) < DetectOptions().same_threshold
    assert changed_line_similarity(over, page, core, FONT * scale) < DetectOptions().same_threshold
    frames = [page_and(None)] * 8 + [page_and("I told you, I was at the office.")] * 10 + [page_and(None)] * 8
    assert _segment_starts(frames) == [0, 8, 18]


def test_a_subtitle_half_lost_to_a_bright_picture_that_goes_is_a_changed_line() -> None:
    # Seen on the corpus's new seeds (dev ``17_pale``): cream text with a thin outline over an orange shirt with a
    # white front and badges. The mask kept only "Why would anyone do" (the rest over the white front), merged with
    # the badges' borders into one line down through the band's bottom (so centred_similarity skips it), and the
    # glyphs left sit off the axis: when the subtitle went, nothing counted it (masks 0.82 alike) and the cue ran on
    # into the gap. Pixels gone from inside a centred line of the old mask are judged as centred.
    height, width = 75, 640
    picture = np.zeros((height, width), np.uint8)
    for x in (90, 140, 440, 490):  # the badges' borders, down through the band's bottom edge
        picture[25:, x : x + 3] = 1
    picture[25:28, 90:143] = 1
    picture[25:28, 440:493] = 1
    picture[4:16, 150:480:2] = 1  # a sign in the picture above the subtitle's rows
    shown = picture.copy()
    for x in range(192, 395, 7):  # the glyphs left of the subtitle: short strokes, rows 50-61, centre 293 of 320
        shown[50:62, x : x + 2] = 1
        shown[50:52, x : x + 5] = 1
    lines = [TextLine(87, 20, 500, height, 40)]  # picture and glyphs in one line, centred by its extent
    core, line_height = (8, 70), 17.0
    threshold = DetectOptions().same_threshold
    assert similarity(shown, picture) >= threshold  # the whole masks cannot tell
    assert changed_line_similarity(shown, picture, core, line_height) == 1.0  # nor a line of its own: off the axis
    assert changed_line_similarity(shown, picture, core, line_height, lines) < threshold
    # Pixels that came are not judged by the old lines: the same glyphs appearing still need a centred box.
    assert changed_line_similarity(picture, shown, core, line_height, lines) == 1.0


def test_a_page_of_print_that_moves_is_no_new_line() -> None:
    scale = analysis_scale(WIDTH)
    core = (int(TEXT_TOP * scale), int((TEXT_TOP + FONT + 8) * scale) + 1)
    for shift in (2, 4, 8):
        before, after = edge_mask(page_and(None), scale), edge_mask(page_and(None, shift), scale)
        assert changed_line_similarity(before, after, core, FONT * scale) >= DetectOptions().same_threshold
    text = "I told you, I was at the office."
    assert _segment_starts([page_and(text, shift) for shift in range(0, 20, 2)]) == [0]


def framed_and(text: str | None, width_of: str) -> np.ndarray:
    """A band with a sign's frame in the picture (a bright outline) whose lower left corner sits on the top
    right of the subtitle ``width_of`` would draw; optionally the subtitle ``text``."""
    img = Image.new("L", (WIDTH, HEIGHT), 80)
    draw = ImageDraw.Draw(img)
    right = (WIDTH + draw.textlength(width_of, font=ImageFont.truetype(str(FONT_PATH), FONT))) / 2
    draw.rectangle((right - 30, TEXT_TOP - 56, right + 170, TEXT_TOP + 12), outline=235, width=3)
    if text:
        subtitle(draw, text, fill=240, stroke=3)
    return np.asarray(img)


def test_a_subtitle_touching_a_signs_frame_is_cut_from_it() -> None:
    # Seen on the libass corpus (check 07 with a band 4 px taller): a subtitle 2 px below a sign's box, glued to
    # it into one hollow component 70 rows high that was dropped whole: the subtitle vanished for 78 frames.
    scale = analysis_scale(WIDTH)
    min_height = int(0.35 * FONT * scale)
    for text in ("就好", "再给我五分钟就好"):
        edges = edge_mask(framed_and(text, text), scale)
        glued = text_lines(edges, min_height=min_height)[1]
        lines = text_lines(edges, min_height=min_height, cut_glued=True)[1]
        assert len(lines) == 1 and lines[0].y1 - lines[0].y0 <= FONT * scale + 4, lines
        # All of it, up to the glyph under the frame's corner, where the glued component lost it.
        assert lines[0].x1 >= scale * (WIDTH + 0.9 * FONT * len(text)) / 2, (lines, glued)
        assert not glued or glued[0].x1 < lines[0].x1, (glued, lines)
        assert text_lines(edge_mask(framed_and(None, text), scale), min_height=min_height, cut_glued=True)[1] == []
    frames = [framed_and(None, "就好")] * 8 + [framed_and("就好", "就好")] * 10 + [framed_and(None, "就好")] * 8
    core = (int(TEXT_TOP * scale), int((TEXT_TOP + FONT + 8) * scale) + 1)
    det = BandChangeDetector(DetectOptions(), 25.0, line_height=FONT * scale, core_rows=core)
    events = [e for i, luma in enumerate(frames) for e in det.push(Timestamp(i, TB), edge_mask(luma, scale))]
    events += det.finish(Timestamp(len(frames), TB))
    spans = [(e.segment.start.pts, e.segment.has_text) for e in events if isinstance(e, SegmentStarted)]
    assert spans == [(0, False), (8, True), (18, False)], spans


def shapes_and(text: str | None) -> np.ndarray:
    """A band whose upper rows hold still, bright outlined picture detail across its width (text-like shapes:
    a shelf of labelled boxes), and optionally a short subtitle on its lower rows."""
    img = Image.new("L", (WIDTH, HEIGHT), 150)
    draw = ImageDraw.Draw(img)
    small = ImageFont.truetype(str(FONT_PATH), 22)
    for i in range(18):
        draw.text((60 + (i % 9) * 135, 2 + (i // 9) * 28), "BOX", font=small, fill=250, stroke_width=2, stroke_fill=0)
    if text:
        subtitle(draw, text, fill=250, stroke=2)
    return np.asarray(img)


def test_a_subtitle_under_still_picture_detail_starts_at_its_own_first_frame() -> None:
    # Picture detail off the subtitle rows is no text until a subtitle line is beside it; then it is part of
    # the new state's mask, and it was there all along: the start must be judged on the subtitle's line.
    frames = [shapes_and(None)] * 8 + [shapes_and("Run!")] * 10
    assert _segment_starts(frames) == [0, 8]


def test_edges_that_change_by_a_third_under_a_still_mask_ask_for_a_read_where_they_changed() -> None:
    # A subtitle over a busy still picture can merge with picture detail the mask leaves out: when it leaves,
    # the mask holds still but the band's edge pixels drop. Here the unseen pixels are specks no line takes in.
    text = edge_mask(band("Where were you last night?", ellipse=False), analysis_scale(WIDTH))
    rng = np.random.default_rng(0)
    specks = np.zeros_like(text)
    ys, xs = rng.integers(0, text.shape[0], 900), rng.integers(0, text.shape[1], 900)
    specks[ys, xs] = 255
    specks[cv2.dilate(text, np.ones((9, 9), np.uint8)) > 0] = 0
    det = BandChangeDetector(DetectOptions(), 25.0)
    reads = []
    for i in range(60):
        edges = np.maximum(text, specks) if i < 30 else text
        reads += [e for e in det.push(Timestamp(i, TB), edges) if isinstance(e, ReadRequest)]
    unseen = [r for r in reads if r.reason is ReadReason.UNSEEN]
    assert len(unseen) == 1 and unseen[0].split_at.pts == 30, [(r.ts.pts, r.split_at.pts, r.reason) for r in reads]
    # Edges that stay as they were ask for nothing but the periodic recheck.
    det = BandChangeDetector(DetectOptions(), 25.0)
    steady = [e for i in range(60) for e in det.push(Timestamp(i, TB), np.maximum(text, specks))]
    assert not [e for e in steady if isinstance(e, ReadRequest) and e.reason is ReadReason.UNSEEN]


def test_a_subtitle_gone_for_frames_ends_there_though_the_next_one_covers_its_place() -> None:
    # Seen on a libass clip (dev 01): a CJK cue leaves, the 3 frames of the gap flicker (a cut, picture detail that
    # is a line for one frame), and a longer cue appears where it was. Its glyphs cover 85% of the first one's
    # place: "held" at the new cue's first frame, which alone would stretch the first cue over the gap.
    old, new = "我们没有时间了", "你确定是这栋房子吗"
    gap = [scene(""), scene("", blobs=3), scene("")]
    frames = [scene(old)] * 10 + gap + [scene(new)] * 10
    scale = analysis_scale(WIDTH)
    det = BandChangeDetector(DetectOptions(), 25.0)
    ended: dict[int, int] = {}
    texts = []
    for i, luma in enumerate(frames):
        for event in det.push(Timestamp(i, TB), edge_mask(luma, scale)):
            if isinstance(event, SegmentEnded):
                ended[event.segment.start.pts] = event.end.pts
            elif isinstance(event, SegmentStarted) and event.segment.has_text:
                texts.append(event.segment.start.pts)
    assert texts == [0, 13]
    assert ended[0] == 10  # the first cue ends at its last frame, not where the next one began


def _grass(draw: ImageDraw.ImageDraw, seed: int, strokes: tuple[tuple[int, int, int], ...]) -> None:
    """40 blades of grass placed at random from ``seed``, each drawn as ``strokes``: (offset to the right, fill,
    width) of one line each."""
    rng = np.random.default_rng(seed)
    for _ in range(40):
        x, y = int(rng.integers(0, WIDTH)), int(rng.integers(0, HEIGHT))
        for dx, fill, width in strokes:
            draw.line((x + dx, y, x + dx + int(rng.integers(-30, 30)), y + int(rng.integers(10, 40))), fill=fill,
                      width=width)


def busy(text: str | None, seed: int) -> np.ndarray:
    """A band over moving texture (bright blades with dark rims, placed anew in every frame: shaking grass), and
    optionally a subtitle drawn over it."""
    img = Image.new("L", (WIDTH, HEIGHT), 110)
    draw = ImageDraw.Draw(img)
    _grass(draw, seed, ((0, 235, 5), (4, 20, 2)))
    if text:
        subtitle(draw, text, fill=245, stroke=3)
    return np.asarray(img)


def test_a_subtitle_after_a_gap_over_moving_texture_starts_at_its_first_frame() -> None:
    # Seen on a libass clip (dev 09): over shaking grass every frame's mask differs from the one before, so the new
    # state holds only once the picture calms down (here from frame 24); the subtitle's glyphs were there from 14.
    frames = [busy("Give me five more minutes.", 0)] * 10
    frames += [busy(None, 100 + i) for i in range(4)]
    frames += [busy("That's not what your sister said.", 200 + i) for i in range(10)]
    frames += [busy("That's not what your sister said.", 300)] * 6
    scale = analysis_scale(WIDTH)
    core = (int(TEXT_TOP * scale), int((TEXT_TOP + FONT + 8) * scale) + 1)
    det = BandChangeDetector(DetectOptions(), 25.0, line_height=FONT * scale, core_rows=core)
    reads = [e for i, luma in enumerate(frames) for e in det.push(Timestamp(i, TB), edge_mask(luma, scale))
             if isinstance(e, ReadRequest)]
    assert [r.segment.start.pts for r in reads if r.reason is ReadReason.NEW][-1] == 14, [
        (r.ts.pts, r.segment.start.pts, r.reason) for r in reads]


def test_a_subtitle_partly_lost_to_moving_texture_holds_until_its_glyphs_go() -> None:
    # Seen on a libass clip (check 10): after a cut to a dense painting with shake, a third of the subtitle's glyph
    # pixels are lost to the picture in every frame, and the texture's lines never hold, so the cue was split by a
    # blank gap and then ran to the end of the video. The glyph pixels left stay frame after frame while the
    # texture's move; when the subtitle leaves they go at once.
    scale = analysis_scale(WIDTH)
    text = edge_mask(band("到了桥那边往左拐", ellipse=False), scale)
    rng = np.random.default_rng(1)
    lost = (rng.random(text.shape) < 0.35).astype(np.uint8)  # the glyph pixels the new picture hides
    hidden = text & (1 - lost) * 255

    def texture(seed: int) -> np.ndarray:
        specks = np.zeros_like(text)
        r = np.random.default_rng(seed)
        for _ in range(260):  # short bright strokes with dark rims, placed anew each frame: shaking texture
            y, x = int(r.integers(0, text.shape[0] - 8)), int(r.integers(0, text.shape[1] - 8))
            specks[y : y + int(r.integers(3, 8)), x : x + int(r.integers(2, 6))] = 255
        return specks

    frames = [text] * 10 + [np.maximum(hidden, texture(i)) for i in range(10, 30)] + [texture(i) for i in range(30, 40)]
    det = BandChangeDetector(DetectOptions(), 25.0)
    spans: list[tuple[int, int, bool]] = []
    for i, edges in enumerate(frames):
        spans += [(e.segment.start.pts, e.end.pts, e.segment.has_text) for e in det.push(Timestamp(i, TB), edges)
                  if isinstance(e, SegmentEnded)]
    spans += [(e.segment.start.pts, e.end.pts, e.segment.has_text) for e in det.finish(Timestamp(40, TB))
              if isinstance(e, SegmentEnded)]
    shown = [(a, b) for a, b, has_text in spans if has_text]
    assert shown[0][0] == 0 and shown[-1][1] == 30, spans  # shown from 0 to 30...
    assert all(b == a2 for (_, b), (a2, _) in zip(shown, shown[1:], strict=False)), spans  # ...with no gap


def test_a_subtitle_gone_over_moving_texture_ends_there_though_the_next_covers_its_place() -> None:
    # Seen on a libass clip (new seeds, dev 16, a half-transparent box over a panning motorbike): a subtitle leaves
    # and its glyphs are gone for ten frames (their survivors fell); then the next subtitle, drawn over their place,
    # covers all of it in one frame and most of it after, while the moving picture keeps the next state from holding.
    # The frame that covered it all restarted the survivors, which then "survived" in the next subtitle's strokes:
    # the old subtitle was taken for still shown, and its cue ran on across the gap into the next one's start.
    scale = analysis_scale(WIDTH)
    old = edge_mask(band("到了桥那边往左拐", ellipse=False), scale)
    img = Image.fromarray(band(None, ellipse=False))
    font = ImageFont.truetype(str(FONT_PATH), FONT)
    ImageDraw.Draw(img).text((400, 12), "你昨天晚上去哪儿了", font=font, fill=240, stroke_width=3, stroke_fill=0)
    top = edge_mask(np.asarray(img), scale)  # the next subtitle's first line; its second covers the old one's place
    covering = np.maximum(top, old)
    cols = np.flatnonzero(old.any(axis=0))
    cut = cols[0] + int(0.7 * (cols[-1] - cols[0]))
    most = covering.copy()  # after the first frame, the old line's right 30% is not covered
    most[:, cut:] = top[:, cut:]

    def texture(seed: int) -> np.ndarray:
        specks = np.zeros_like(old)
        r = np.random.default_rng(seed)
        for _ in range(300):  # short bright strokes with dark rims, placed anew each frame: a moving picture
            y, x = int(r.integers(0, old.shape[0] - 8)), int(r.integers(0, old.shape[1] - 8))
            specks[y : y + int(r.integers(3, 8)), x : x + int(r.integers(2, 6))] = 255
        return specks

    frames = ([old] * 10 + [texture(i) for i in range(10, 20)] + [np.maximum(covering, texture(20))]
              + [np.maximum(most, texture(i)) for i in range(21, 26)] + [most] * 10)
    det = BandChangeDetector(DetectOptions(), 25.0)
    spans: list[tuple[int, int, bool]] = []
    for i, edges in enumerate(frames):
        spans += [(e.segment.start.pts, e.end.pts, e.segment.has_text) for e in det.push(Timestamp(i, TB), edges)
                  if isinstance(e, SegmentEnded)]
    spans += [(e.segment.start.pts, e.end.pts, e.segment.has_text) for e in det.finish(Timestamp(len(frames), TB))
              if isinstance(e, SegmentEnded)]
    assert spans[0] == (0, 10, True), spans  # the old subtitle ends where it left
    assert spans[-1][2] and spans[-1][0] <= 21, spans


def test_text_on_the_first_frame_is_read_again_once_it_held() -> None:
    # A video cut from a longer one can start in a subtitle's fade-in (the real Russian clip: "ЭТО У БКА" at 0.70
    # on frame 0, "ЭТО УЛЫБКА" 12 frames later). The first frame is read at once, as it may be gone before it
    # can be confirmed, and again min_read_gap_s later: a new segment's read, split at the segment's start.
    frames = [band("好的", ellipse=False)] * 30
    scale = analysis_scale(WIDTH)
    det = BandChangeDetector(DetectOptions(), 25.0)
    reads = [e for i, luma in enumerate(frames) for e in det.push(Timestamp(i, TB), edge_mask(luma, scale))
             if isinstance(e, ReadRequest)]
    assert [(r.ts.pts, r.reason, r.split_at.pts) for r in reads] == [
        (0, ReadReason.FIRST, 0), (10, ReadReason.NEW, 0)], reads


def test_a_subtitle_back_after_frames_without_its_glyphs_is_read_again_split_there() -> None:
    # Seen on a 360p CJK clip (CRF 42, grain) of new seeds: three lines of nine glyphs in one place, 1 and 2 frames
    # apart. Their masks are as alike (Dice 0.8) as one line's over two frames, so each blank gap looked like flicker
    # and the next line like the first one back: one segment, and only periodic re-reads (whose differences are
    # taken for OCR noise). A mask back after frames that lost its glyphs is read again, split where it came back.
    scale = analysis_scale(WIDTH)
    line = edge_mask(band("你昨天晚上去哪儿了", ellipse=False), scale)
    blank = edge_mask(band(None, ellipse=False), scale)

    def reads(frames: list[np.ndarray]) -> list[tuple[int, ReadReason, int]]:
        det = BandChangeDetector(DetectOptions(), 25.0)
        return [(e.ts.pts, e.reason, e.split_at.pts) for i, edges in enumerate(frames)
                for e in det.push(Timestamp(i, TB), edges) if isinstance(e, ReadRequest)]

    gap = reads([line] * 30 + [blank] + [line] * 29)
    back = [r for r in gap if r[1] is ReadReason.BACK]
    assert len(back) == 1 and back[0][2] == 31 and back[0][0] <= 31 + 12, gap
    # The read says where the glyphs left too: if it reads other text, the subtitle before ended there.
    det = BandChangeDetector(DetectOptions(), 25.0)
    left = [e.left_at.pts if e.left_at is not None else None
            for i, edges in enumerate([line] * 30 + [blank] + [line] * 29) for e in det.push(Timestamp(i, TB), edges)
            if isinstance(e, ReadRequest) and e.reason is ReadReason.BACK]
    assert left == [30], left
    # A line of picture detail changing beside the glyphs (they stay whole) is no gap.
    busy = edge_mask(scene("你昨天晚上去哪儿了", blobs=3), scale)
    still = reads([busy] * 30 + [edge_mask(scene("你昨天晚上去哪儿了"), scale)] + [busy] * 29)
    assert not [r for r in still if r[1] is ReadReason.BACK], still
    assert not [r for r in reads([line] * 60) if r[1] is ReadReason.BACK]


def test_a_subtitle_back_after_a_gap_then_changed_by_the_picture_starts_where_it_came_back() -> None:
    # The libass check set of new seeds (12_gaps): a 1-frame gap, the next line back in the first one's place (alike
    # masks), and 2 frames later picture detail above it makes a new band state, before the line could be read
    # again. The old line ends at the gap and the new one starts where it came back, not where the picture changed.
    scale = analysis_scale(WIDTH)
    line = edge_mask(scene("你昨天晚上去哪儿了"), scale)
    img = Image.new("L", (WIDTH, HEIGHT), 70)
    draw = ImageDraw.Draw(img)
    for i in range(8):  # bright round shapes above the subtitle: a line of picture detail of its own
        draw.ellipse((200 + i * 110, 8, 260 + i * 110, 52), fill=230, outline=0, width=3)
    subtitle(draw, "你昨天晚上去哪儿了", fill=240, stroke=2)
    beside = edge_mask(np.asarray(img), scale)
    blank = edge_mask(scene(""), scale)
    # The line comes at 20 (read at once), goes at 26 for a frame, and is back before a read could be made again
    # (min_read_gap_s): the picture changes at 29.
    frames = [blank] * 20 + [line] * 6 + [blank] + [line] * 2 + [beside] * 31
    core = (int(TEXT_TOP * scale), int((TEXT_TOP + FONT + 8) * scale) + 1)  # the subtitle rows, as the zone gives
    det = BandChangeDetector(DetectOptions(), 25.0, line_height=FONT * scale, core_rows=core)
    spans = []
    for i, edges in enumerate(frames):
        for event in det.push(Timestamp(i, TB), edges):
            if isinstance(event, SegmentEnded):
                spans.append((event.segment.start.pts, event.end.pts, event.segment.has_text))
    spans += [(e.segment.start.pts, e.end.pts, e.segment.has_text) for e in det.finish(Timestamp(60, TB))
              if isinstance(e, SegmentEnded)]
    assert spans[:4] == [(0, 20, False), (20, 26, True), (26, 27, False), (27, 60, True)], spans


def _light_line(text: str, stroke: int = 2, shaken: int | None = None) -> np.ndarray:
    """The edge mask of a white line with a thin dark outline (``stroke`` wide) over a light picture (the glyphs and
    their outline fill into one shape); with ``shaken``, dark grass from that seed across the band (a frame of a
    shaking picture)."""
    img = Image.new("L", (WIDTH, HEIGHT), 190)
    draw = ImageDraw.Draw(img)
    if shaken is not None:
        _grass(draw, shaken, ((0, 40, 4),))
    font = ImageFont.truetype(str(FONT_PATH), FONT)
    w = draw.textlength(text, font=font)
    draw.text(((WIDTH - w) / 2, TEXT_TOP), text, font=font, fill=250, stroke_width=stroke, stroke_fill=60)
    return edge_mask(np.asarray(img), analysis_scale(WIDTH))


def test_a_line_redrawn_in_place_with_other_glyphs_over_a_light_picture_is_read_split_there() -> None:
    # The libass check set of new seeds (21_two-line): over a light picture the mask fills each glyph and its thin
    # outline into one shape, and "How much further is it?" redrawn as "Turn left at the bridge." in its place
    # leaves a mask 0.90 alike: the same band state, read again only 2 s later (taken for OCR noise). The glyphs'
    # cores (the masks eroded by a pixel) are 0.13 alike: a read, split where the line changed.
    def reads(frames: list[np.ndarray]) -> list[tuple[int, ReadReason, int]]:
        det = BandChangeDetector(DetectOptions(), 25.0)
        found = [(e.ts.pts, e.reason, e.split_at.pts, e.segment.index) for i, edges in enumerate(frames)
                 for e in det.push(Timestamp(i, TB), edges) if isinstance(e, ReadRequest)]
        assert len({index for *_, index in found}) == 1, found  # one band state throughout: the masks are alike
        return [r[:3] for r in found]

    first, then = _light_line("How much further is it?"), _light_line("Turn left at the bridge.")
    changed = reads([first] * 30 + [then] * 30)
    assert [r for r in changed if r[0] > 10] == [(31, ReadReason.DRIFT, 30)], changed
    assert [r for r in reads([first] * 60) if r[0] > 10 and r[1] is not ReadReason.RECHECK] == []


def test_a_line_redrawn_in_place_is_split_where_it_changed_though_one_frame_after_looks_like_the_old_one() -> None:
    # The libass check set of new seeds (21_two-line, a sign's plate and grass behind the lines): the lower line
    # changes at frame 456 and the glyph cores compare 0.41, 0.55, 0.43, 0.39 ... with the read's. One sample back
    # over the bar inside the run is no line redrawn back: the run, and the split, start at the change.
    def drift_reads(frames: list[np.ndarray]) -> list[tuple[int, int]]:
        det = BandChangeDetector(DetectOptions(), 25.0)
        return [(e.ts.pts, e.split_at.pts) for i, edges in enumerate(frames) for e in det.push(Timestamp(i, TB), edges)
                if isinstance(e, ReadRequest) and e.reason is ReadReason.DRIFT]

    first, then = _light_line("How much further is it?"), _light_line("Turn left at the bridge.")
    assert drift_reads([first] * 30 + [then, first] + [then] * 28) == [(32, 30)]
    # Two samples like the old line again end the run: the change is counted from where it held.
    assert drift_reads([first] * 30 + [then, first, first] + [then] * 27) == [(34, 33)]


def test_an_inferred_gap_says_whether_text_lines_stayed_in_the_band() -> None:
    # A gap the detector infers between two subtitles (the first one's glyphs left, the next one's not there yet)
    # carries whether every sample in it had text lines (Segment.lines_held): over moving texture they do, and the
    # merger may take such a gap between two equal reads for the subtitle the masks lost (see
    # vidocr.merge.MergeOptions.unread_ms); over a plain picture the gap's frames have none: a gap.
    scale = analysis_scale(WIDTH)
    core = (int(TEXT_TOP * scale), int((TEXT_TOP + FONT + 8) * scale) + 1)

    def blanks(frames: list[np.ndarray], det: BandChangeDetector) -> list[tuple[int, int, bool]]:
        return [(e.segment.start.pts, e.end.pts, e.segment.lines_held)
                for i, luma in enumerate(frames) for e in det.push(Timestamp(i, TB), edge_mask(luma, scale))
                if isinstance(e, SegmentEnded) and not e.segment.has_text]

    texture = [busy("Give me five more minutes.", 0)] * 10 + [busy(None, 100 + i) for i in range(4)]
    texture += [busy("That's not what your sister said.", 200 + i) for i in range(10)]
    texture += [busy("That's not what your sister said.", 300)] * 6
    busy_det = BandChangeDetector(DetectOptions(), 25.0, line_height=FONT * scale, core_rows=core)
    assert blanks(texture, busy_det) == [(10, 14, True)]
    plain = [scene("我们没有时间了")] * 10 + [scene(""), scene("", blobs=3), scene("")]
    plain += [scene("你确定是这栋房子吗")] * 10
    assert blanks(plain, BandChangeDetector(DetectOptions(), 25.0)) == [(10, 13, False)]


def sign_beside(text: str | None, blobs_at: int | None = None) -> np.ndarray:
    """A band with a still sign on the subtitle's rows, far to the left; optionally bright round shapes from
    ``blobs_at`` above the subtitle's rows (picture detail), and the subtitle."""
    img = Image.new("L", (WIDTH, HEIGHT), 70)
    draw = ImageDraw.Draw(img)
    draw.rectangle((20, TEXT_TOP - 4, 260, TEXT_TOP + 40), fill=20)
    draw.text((30, TEXT_TOP), "NO PARKING", font=ImageFont.truetype(str(FONT_PATH), 30), fill=235)
    if blobs_at is not None:
        for i in range(8):
            x = blobs_at + i * 48
            draw.ellipse((x, 8, x + 40, 8 + FONT), fill=230, outline=0, width=3)
    if text:
        subtitle(draw, text, fill=240, stroke=3)
    return np.asarray(img)


def test_a_subtitle_coming_beside_a_still_sign_while_picture_detail_flickers_starts_at_its_first_frame(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Seen on the libass corpus (dev 09_two-line): a two-line subtitle came over a panning picture while a sign
    # stayed; picture detail above it changed the mask in each of its first frames, so the new state held only
    # from its third frame, and the sign's segment ended there. Its own glyphs were all there from the first.
    text = "I never asked for any of this."
    frames = [sign_beside(None)] * 10
    frames += [sign_beside(text, 300), sign_beside(text, 700), sign_beside(text, 400)] + [sign_beside(text)] * 10
    assert _segment_starts(frames) == [0, 10]
    monkeypatch.setattr(BandChangeDetector, "_came_at", lambda self, first, glyphs, floor: first)
    assert _segment_starts(frames)[-1] > 10  # the state that held


def _spans(frames: list[np.ndarray], images: bool = True) -> list[tuple[int, int]]:
    """(start, end) of the text segments the detector makes of ``frames`` (luma of bands), given each frame's
    analysis image beside its edge mask, or not."""
    scale = analysis_scale(WIDTH)
    core = (int(TEXT_TOP * scale), int((TEXT_TOP + FONT + 8) * scale) + 1)
    det = BandChangeDetector(DetectOptions(), 25.0, line_height=FONT * scale, core_rows=core)
    events = []
    for i, luma in enumerate(frames):
        image = cv2.resize(luma, None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA)
        events += det.push(Timestamp(i, TB), edge_mask(image, 1.0), image=image if images else None)
    events += det.finish(Timestamp(len(frames), TB))
    starts = {
        id(e.segment): e.segment.start.pts for e in events if isinstance(e, SegmentStarted) and e.segment.has_text
    }
    return [
        (starts[id(e.segment)], e.end.pts) for e in events if isinstance(e, SegmentEnded) and id(e.segment) in starts
    ]


def test_a_subtitle_that_fades_in_and_out_starts_and_ends_with_its_faint_frames() -> None:
    # ASS \fad: the renderer blends the subtitle with the picture over its first and last frames. At a third of its
    # strength the edge mask finds none of its glyphs, at two thirds few: it started 2 frames late and ended 1-2
    # early. The glyphs' contrast against their rim fades with it (BandChangeDetector._faded).
    blank = band(None, ellipse=False).astype(np.float32)
    full = band("Where were you last night?", ellipse=False).astype(np.float32)

    def at(alpha: float) -> np.ndarray:
        return np.clip(blank + alpha * (full - blank) + 0.5, 0, 255).astype(np.uint8)

    for fades in ([1 / 3, 2 / 3], [0.2, 0.4, 0.6, 0.8]):
        frames = [at(0)] * 8 + [at(a) for a in fades] + [at(1)] * 20 + [at(a) for a in reversed(fades)] + [at(0)] * 8
        drawn = (8, 8 + 2 * len(fades) + 20)  # every frame with any of the subtitle
        [(start, end)] = _spans(frames)
        assert abs(start - drawn[0]) <= 1 and abs(end - drawn[1]) <= 1, ((start, end), drawn)
    [(start, end)] = _spans(frames, images=False)  # the edge masks alone
    assert start - drawn[0] >= 2 and drawn[1] - end >= 2, ((start, end), drawn)
    # A subtitle that comes and goes at once keeps its frames.
    sharp = [at(0)] * 8 + [at(1)] * 22 + [at(0)] * 8
    assert _spans(sharp) == _spans(sharp, images=False) == [(8, 30)]


def _two_lines(upper: str, lower: str) -> np.ndarray:
    """The edge mask of a band 200 rows tall with two centred lines, white with a thin dark outline."""
    img = Image.new("L", (WIDTH, 200), 70)
    draw = ImageDraw.Draw(img)
    font = ImageFont.truetype(str(FONT_PATH), FONT)
    for text, top in ((upper, 40), (lower, 110)):
        w = draw.textlength(text, font=font)
        draw.text(((WIDTH - w) / 2, top), text, font=font, fill=240, stroke_width=2, stroke_fill=0)
    return edge_mask(np.asarray(img), analysis_scale(WIDTH))


def test_a_line_in_pieces_none_of_them_centred_is_watched_on_its_row() -> None:
    # The libass dev set of third seeds (45_two-line): over a hue gradient, with a sign's plate under the lower line,
    # the band's lines came in pieces: the upper line in three, its middle glued to the lower line's end and the
    # sign in one block two lines tall, the lower line's start alone. None was centred, so no column profile watched
    # the lower line, and the block's glyph cores (the sign's, the upper line's) stayed alike: when the lower line
    # changed, nothing asked for a read for 11 frames (until a cut). Its row, across every piece on it, is centred.
    from vidocr.detect import _read_side, _redrawn, _text_rows

    before = _two_lines("Thank you for coming all this way.", "I found the letter in his coat.")
    after = _two_lines("Thank you for coming all this way.", "Nobody knows where he went.")
    _, whole = text_lines(before)
    (up, low) = sorted(whole, key=lambda ln: ln.y0)
    # As on the corpus, scaled: the upper line's start, its middle glued to the lower line's end and a sign's plate
    # past it, its end (overlapping the block), the lower line's start.
    cut = (up.x0 + up.x1) // 2 - 20
    pieces = [TextLine(up.x0, up.y0, cut - 2, up.y1, 5), TextLine(cut, up.y0, low.x1 + 10, low.y1, 10),
              TextLine(cut + 90, up.y0, up.x1, up.y1, 5), TextLine(low.x0, low.y0, cut - 2, low.y1, 4)]
    width = before.shape[1]
    assert not any(abs((p.x0 + p.x1) / 2 - width / 2) <= 0.03 * width + 0.5 * p.height for p in pieces)
    height = FONT * analysis_scale(WIDTH)
    rows = _text_rows(pieces, height)
    assert [(y0, y1) for y0, _, y1, _ in rows] == [(up.y0, up.y1), (low.y0, low.y1)], rows
    assert all(abs((x0 + x1) / 2 - width / 2) <= 0.03 * width for _, x0, _, x1 in rows), rows

    def redrawn(frames: list[np.ndarray]) -> list[bool]:
        side = _read_side(before, pieces, height)
        side.core_boxes = []  # the column profiles alone (the corpus's cores stayed alike)
        return [_redrawn(side, mask) for mask in frames]

    assert redrawn([before] * 4) == [False] * 4
    assert redrawn([before, after, after, after]) == [False, False, True, True]


def test_a_read_asked_for_another_reason_as_the_glyphs_come_back_after_a_gap_is_split_at_the_gap() -> None:
    # The libass check set of fourth seeds (55_ts-signs): a pale CJK line over a panning picture of water drops, whose
    # detail fills most of the band's mask. The line left for 3 frames (224-226), but the frames between flickered
    # (no lines, a sign's line, no lines) and no blank state held; at 227 the next line came in the old one's place,
    # the masks alike (0.68). The mask had drifted under the moving picture just before the gap, so the drift read
    # came at 227, in the same sample that saw the glyphs come back: it was split where the drift began (220), not
    # at the gap, and the first cue ended 4 frames early, the next started 7 frames early. A read made for any other
    # reason when the glyphs came back is the read of their return: split where they came back, after the gap.
    from vidocr.detect import _ReadTrack

    scale = analysis_scale(WIDTH)
    line = edge_mask(band("这可不是你姐姐说的", ellipse=False), scale)
    det = BandChangeDetector(DetectOptions(), 25.0)
    for i in range(26):
        list(det.push(Timestamp(i, TB), line))
    assert det._track.last_read_s == pytest.approx(10 / 25)  # the NEW read, 0.4 s after the line came

    def read_at_27(track: _ReadTrack) -> list[tuple[ReadReason, int, int | None]]:
        det._track = track
        return [(e.reason, e.split_at.pts, e.left_at.pts if e.left_at is not None else None)
                for e in det._maybe_recheck(Timestamp(27, TB), 0.68) if isinstance(e, ReadRequest)]

    # One sample under the drift threshold before the gap; the glyphs left at 24 and came back at 27.
    gap = _ReadTrack(last_read_s=10 / 25, edges=det._edges, low_run=1, back_ts=Timestamp(27, TB),
                     back_left=Timestamp(24, TB))
    assert read_at_27(gap) == [(ReadReason.BACK, 27, 24)]
    # Without the gap, the same drift is a drift read.
    assert [r[0] for r in read_at_27(_ReadTrack(last_read_s=10 / 25, edges=det._edges, low_run=1))] == [
        ReadReason.DRIFT]


def _drift_splits(frames: list[np.ndarray]) -> list[int]:
    """Where the drift reads of ``frames`` (edge masks, one band state throughout) split."""
    det = BandChangeDetector(DetectOptions(), 25.0)
    found = [(e.split_at.pts, e.reason, e.segment.index) for i, edges in enumerate(frames)
             for e in det.push(Timestamp(i, TB), edges) if isinstance(e, ReadRequest)]
    assert {index for *_, index in found} == {0}, found  # one band state throughout
    return [split for split, reason, _ in found if reason is ReadReason.DRIFT]


@pytest.mark.parametrize("seed", range(3))
def test_a_line_redrawn_in_place_as_the_picture_shakes_is_split_where_it_changed(seed: int) -> None:
    # The libass check set of third seeds (45_two-line, a shaking picture behind a two-line cue): the lower line
    # changes at frame 228, where the shaking picture made the band unlike its state for a frame or two, too briefly
    # for a new state to hold; the glyph cores then showed the line redrawn from the next sample on, and the cue
    # was split two frames late. The frames unlike the state that led into the redrawn run are where it changed.
    old, new = "How much further is it?", "Turn left at the bridge."
    first, then = _light_line(old), _light_line(new)
    assert _drift_splits([first] * 30 + [_light_line(new, shaken=seed)] + [then] * 28) == [30]
    # The picture shaking over the old line is no change: a change later is split where it came.
    assert _drift_splits([first] * 30 + [_light_line(old, shaken=seed)] + [first] * 9 + [then] * 20) == [40]


def test_a_subtitle_coming_on_an_empty_band_over_shaking_texture_starts_at_its_first_frame() -> None:
    # The libass dev set of fourth seeds (58_cjk-shake): over a shaking picture the new state holds only once the
    # picture calms down (here from frame 22), and the glyph set it holds takes in texture that each earlier frame
    # has elsewhere: those frames show 0.6-0.75 of it, no frame 0.8, and the subtitle started 8 frames late. They
    # showed most of it from where the band before clearly lacked it: the subtitle's first frame.
    text = "That's not what your sister said."
    plain = np.full((HEIGHT, WIDTH), 110, np.uint8)
    scale = analysis_scale(WIDTH)
    core = (int(TEXT_TOP * scale), int((TEXT_TOP + FONT + 8) * scale) + 1)

    def starts(frames: list[np.ndarray]) -> list[int]:
        det = BandChangeDetector(DetectOptions(), 25.0, line_height=FONT * scale, core_rows=core)
        events = [e for i, luma in enumerate(frames) for e in det.push(Timestamp(i, TB), edge_mask(luma, scale))]
        return [e.segment.start.pts for e in events if isinstance(e, ReadRequest) and e.reason is ReadReason.NEW]

    shaking = [busy(text, 200 + i) for i in range(8)] + [busy(text, 300)] * 6
    assert starts([plain] * 14 + shaking) == [14]
    # The texture shaking before the subtitle came: it starts where its glyphs did, not with the texture.
    assert starts([plain] * 10 + [busy(None, 100 + i) for i in range(4)] + shaking)[-1:] == [14]


def test_a_line_redrawn_in_place_seen_by_its_profile_alone_is_split_where_its_profile_stepped() -> None:
    # The libass dev set of new seeds (21_two-line, a serif lower line with a thin outline over a zooming rocket): the
    # cores of thin strokes erode away, and the line's change shows in its column profile alone, which counts once
    # the new profile held a sample: the change was where it stepped, a sample before (the cue ended 2 frames late).
    first, then = _light_line("The train leaves at half past nine.", 1), _light_line("Nobody knows where he went.", 1)
    assert _drift_splits([first] * 30 + [then] * 30) == [30]


def _thin_band(shapes: str) -> np.ndarray:
    """A 30-row band's edge mask (0/1) with a line of 21-row shapes drawn in one-pixel strokes: "g" a glyph whose
    strokes cross its middle (a "干" of a Ming face at the analysis scale, filling 0.14 of its box), "o" an outline
    as large (a frame, a box's edges), "w" one sparse shape three glyphs wide."""
    mask = np.zeros((30, 640), np.uint8)  # the glyphs take 1% of it: a clean band (detect.CLEAN_BAND)
    for i, kind in enumerate(shapes):
        x, y = 20 + 24 * i, 4
        if kind == "g":
            cv2.line(mask, (x, y + 2), (x + 17, y + 2), 1)
            cv2.line(mask, (x + 1, y + 10), (x + 16, y + 10), 1)
            cv2.line(mask, (x + 9, y), (x + 9, y + 20), 1)
        elif kind == "w":  # one wide sparse shape (grass blades, grain), three glyphs wide
            for row in (y + 8, y + 12):
                cv2.line(mask, (x, row), (x + 59, row), 1)
            for col in (x + 15, x + 30, x + 45):
                cv2.line(mask, (col, y), (col, y + 20), 1)
        else:
            cv2.rectangle(mask, (x, y), (x + 17, y + 20), 1)
    return mask


def test_a_line_of_thin_strokes_is_text_where_outlines_are_not() -> None:
    # Fourth seeds check 58_cjk-shake: "火车九点半开" in AR PL UMing over a dark picture from frame 18; its glyphs'
    # masks fill 0.15-0.18 of their boxes, under the 0.2 an outline's edges fill, so no text line was found until a cut
    # put grass behind them 37 frames later. With a band as tight as the line, its vertical strokes were also as long as
    # the straight picture edges text_lines removes.
    glyphs, outlines = _thin_band("gggg"), _thin_band("oooo")
    assert text_lines(glyphs, min_height=6, cut_glued=True)[1] == []
    assert text_lines(glyphs, min_height=6, cut_glued=True, thin_strokes=True)[1] == []  # the strokes cut away
    lines = text_lines(glyphs, min_height=6, cut_glued=True, thin_strokes=True, line_rows=22)[1]
    assert [(ln.x0, ln.x1, ln.glyphs) for ln in lines] == [(20, 20 + 24 * 3 + 18, 4)], lines
    assert text_lines(outlines, min_height=6, cut_glued=True, thin_strokes=True, line_rows=22)[1] == []
    # A lone sparse component is no line, however wide (a dense one is: a word whose letters touch).
    assert text_lines(_thin_band("w"), min_height=6, cut_glued=True, thin_strokes=True, line_rows=22)[1] == []
    # The change detector looks for thin strokes where it finds no other text line in the band.
    det = BandChangeDetector(DetectOptions(), 25.0, core_rows=(3, 26))
    blank = np.zeros_like(glyphs)
    frames = [blank] * 6 + [glyphs] * 10 + [blank] * 6
    events = [e for i, edges in enumerate(frames) for e in det.push(Timestamp(i, TB), edges)]
    events += det.finish(Timestamp(len(frames), TB))
    spans = [(e.segment.start.pts, e.segment.has_text) for e in events if isinstance(e, SegmentStarted)]
    assert spans == [(0, False), (6, True), (16, False)], spans
