"""The subtitle layout filter: printed text in the picture is not read into subtitle cues."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import cv2
import numpy as np
import pytest

from vidocr.engines import OcrEngine
from vidocr.layout import (
    CENTRED_EVIDENCE,
    GLUED_FILL_MAX,
    GLYPHS_ONLY_SURE,
    HOLD_READS,
    LIGHT_EVIDENCE,
    PRINT_FILL_MAX,
    GlyphEvidence,
    SubtitleLayout,
    glyph_fill,
    glyph_image,
    with_fill,
)
from vidocr.types import Box, OcrLine, OcrResult, Task

WIDTH = 1280


def _line(text: str, x: int, w: int, h: int = 48, y: int = 100) -> OcrLine:
    return OcrLine(text, 0.95, Box(x, y, w, h))


def _centred(text: str, w: int, h: int = 48, y: int = 100) -> OcrLine:
    return _line(text, (WIDTH - w) // 2, w, h, y)


def test_a_sign_beside_a_centred_subtitle_is_dropped() -> None:
    layout = SubtitleLayout(WIDTH)
    read = OcrResult((_line("NO PARKING", 90, 200, 60, y=40), _centred("Where were you last night?", 600)))
    assert layout.filter(read).text == "Where were you last night?"
    assert layout.dropped == 1


def test_small_print_is_dropped_once_the_subtitle_size_is_known() -> None:
    layout = SubtitleLayout(WIDTH)
    for i in range(3):
        layout.filter(OcrResult((_centred(f"line {i}", 300),)))
    page = _centred("the train leaves at half past nine and we", 520, h=20, y=40)
    read = OcrResult((page, _centred("Keep your voice down.", 420)))
    assert layout.filter(read).text == "Keep your voice down."


def test_subtitles_centred_off_the_bands_middle_are_centred_on_their_own_axis() -> None:
    # A band cut from the frame off its middle (the real anime strip: subtitles 1-3% right of the strip's
    # middle, long lines the furthest): once centred lines were kept, lines are centred on their median centre.
    layout = SubtitleLayout(WIDTH)
    axis = WIDTH // 2 + 16  # 1.25% right
    for i, w in enumerate((300, 420, 360, 500)):
        assert layout.filter(OcrResult((_line(f"subtitle {i}", axis - w // 2, w),))).text == f"subtitle {i}"
    assert layout.axis == axis
    long = _line("a long line drawn further right", axis + 12 - 420, 840)  # 2.2% right of the middle
    assert not SubtitleLayout(WIDTH).centred(long.box)  # type: ignore[arg-type]
    assert layout.filter(OcrResult((long,))).text == "a long line drawn further right"
    assert layout.filter(OcrResult((_line("EXIT", 100, 90),))).text == ""  # a sign is still off-centre


def test_off_centre_text_alone_is_kept_until_the_subtitles_proved_centred() -> None:
    layout = SubtitleLayout(WIDTH)
    sign = OcrResult((_line("EXIT", 100, 90),))
    assert layout.filter(sign).text == "EXIT"  # nothing known yet: kept
    for i in range(CENTRED_EVIDENCE + 1):  # the sign above was one read without a centred line
        layout.filter(OcrResult((_centred(f"subtitle {i}", 400),)))
    assert layout.filter(sign).text == ""


def test_left_aligned_dialogue_lines_stay_together() -> None:
    layout = SubtitleLayout(WIDTH)
    longest = _centred("- Where were you last night?", 640, y=40)
    box = longest.box
    assert box is not None
    second = _line("- At home.", box.x, 220, y=100)
    assert layout.filter(OcrResult((longest, second))).text == "- Where were you last night?\n- At home."


def test_subtitles_that_are_not_centred_are_never_dropped() -> None:
    layout = SubtitleLayout(WIDTH)
    for i in range(10):
        read = OcrResult((_line(f"left aligned subtitle {i}", 60, 500),))
        assert layout.filter(read).text == f"left aligned subtitle {i}"


def test_text_cut_by_the_frames_border_is_dropped_from_the_first_read() -> None:
    # A sign the camera pans past, cut by the frame's border ("ING" of "NO PARKING"), in the gaps between
    # subtitles: each read a new text, it kept the zone from proving its subtitles centred, and became cues.
    layout = SubtitleLayout(WIDTH)
    for text, x, w in (("ING", 0, 60), ("EX", WIDTH - 40, 40), ("RKING", 1, 90)):
        assert layout.filter(OcrResult((_line(text, x, w),))).text == "", text
    # A centred line as wide as the frame, and a subtitle glued to the cut sign (across the axis), stay.
    assert layout.filter(OcrResult((_line("Where were you last night, and why?", 0, WIDTH),))).text
    assert layout.filter(OcrResult((_line("ING Where were you last night?", 0, 900),))).text
    assert layout.filter(OcrResult((_line("left aligned subtitle", 2, 500),))).text == "left aligned subtitle"


def test_user_boxes_are_not_filtered() -> None:
    layout = SubtitleLayout(WIDTH, enabled=False)
    read = OcrResult((_line("NO PARKING", 90, 200), _centred("Hello.", 150)))
    assert layout.filter(read).text == "NO PARKING\nHello."


# Glyph fill: subtitles are light glyphs closed off by a dark rim; print is dark ink on light paper.


def _subtitle(background: np.ndarray, text: str, scale: float = 1.6, outline: int = 3) -> tuple[np.ndarray, Box]:
    """White glyphs with a black outline ``outline`` pixels wide, centred on ``background``."""
    image = cv2.cvtColor(background, cv2.COLOR_GRAY2BGR)
    (w, h), base = cv2.getTextSize(text, cv2.FONT_HERSHEY_DUPLEX, scale, 3)
    org = ((image.shape[1] - w) // 2, (image.shape[0] + h) // 2)
    fill = np.zeros(background.shape, np.uint8)
    cv2.putText(fill, text, org, cv2.FONT_HERSHEY_DUPLEX, scale, 255, 3)
    rim = cv2.dilate(fill, np.ones((2 * outline + 1, 2 * outline + 1), np.uint8))
    image[rim > 0] = 0
    image[fill > 0] = 255
    return image, Box(org[0] - 4, org[1] - h - 4, w + 8, h + base + 8)


def _page(lines: int = 6) -> tuple[np.ndarray, list[Box]]:
    image = np.full((240, 900, 3), 232, np.uint8)
    boxes = []
    for i in range(lines):
        text = "the train leaves at half past nine, we should go" if i % 2 else "Nobody knows where he went that night"
        (w, h), base = cv2.getTextSize(text, cv2.FONT_HERSHEY_COMPLEX, 0.9, 2)
        y = 30 + i * 36
        cv2.putText(image, text, (20, y), cv2.FONT_HERSHEY_COMPLEX, 0.9, (40, 40, 40), 2, cv2.LINE_AA)
        boxes.append(Box(18, y - h - 2, w + 4, h + base + 4))
    return image, boxes


def _backgrounds() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(7)
    noise = rng.integers(0, 256, (160, 1000), dtype=np.uint8)
    return {
        "dark": np.full((160, 1000), 30, np.uint8),
        "bright": np.full((160, 1000), 235, np.uint8),
        "noise": cv2.GaussianBlur(noise, (0, 0), 3),
        "gradient": np.tile(np.linspace(0, 255, 1000, dtype=np.uint8), (160, 1)),
    }


def test_outlined_subtitles_have_glyph_fill_on_any_background() -> None:
    for name, background in _backgrounds().items():
        image, box = _subtitle(background, "Where were you last night?")
        fill = glyph_fill(image, box)
        assert fill is not None and fill > 2 * PRINT_FILL_MAX, (name, fill)


def test_print_on_a_page_has_almost_no_glyph_fill() -> None:
    image, boxes = _page()
    for box in boxes:
        fill = glyph_fill(image, box)
        assert fill is not None and fill <= PRINT_FILL_MAX / 2, (box, fill)


def test_dark_text_is_not_judged() -> None:
    image = np.full((80, 600, 3), 20, np.uint8)
    cv2.putText(image, "dark on dark", (20, 50), cv2.FONT_HERSHEY_DUPLEX, 1.2, (60, 60, 60), 2)
    assert glyph_fill(image, Box(15, 15, 400, 50)) is None


def test_print_lines_are_dropped_once_the_zone_has_shown_light_subtitles() -> None:
    page, boxes = _page(2)
    sub, box = _subtitle(np.full((160, 1000), 60, np.uint8), "Keep your voice down.")
    printed = with_fill(OcrResult((OcrLine("the train leaves", 0.9, boxes[0]),)), page).lines[0]
    said = with_fill(OcrResult((OcrLine("Keep your voice down.", 0.9, box),)), sub).lines[0]
    for layout in (SubtitleLayout(WIDTH), SubtitleLayout(WIDTH, enabled=False)):
        for _ in range(LIGHT_EVIDENCE - 1):
            assert layout.filter(OcrResult((printed, said))).text == "the train leaves\nKeep your voice down."
        assert layout.filter(OcrResult((printed, said))).text == "Keep your voice down."
        assert layout.dropped == 1
    unmeasured = OcrLine("the train leaves", 0.9, None)  # engines without boxes: nothing to measure
    assert SubtitleLayout(WIDTH).filter(OcrResult((unmeasured,))).text == "the train leaves"


def test_dark_text_on_a_light_box_is_kept_when_it_is_the_zones_style() -> None:
    page, boxes = _page(1)
    boxed = with_fill(OcrResult((OcrLine("Nobody knows where he went", 0.9, boxes[0]),)), page)
    layout = SubtitleLayout(WIDTH, enabled=False)
    for _ in range(10):
        assert layout.filter(boxed).text == "Nobody knows where he went"
    assert layout.dropped == 0


def test_zones_of_one_video_share_what_its_subtitles_look_like() -> None:
    # A zone over a book page sees only print; the video's subtitles, read in another zone, showed light glyphs.
    page, boxes = _page(2)
    sub, box = _subtitle(np.full((160, 1000), 60, np.uint8), "Keep your voice down.")
    printed = with_fill(OcrResult((OcrLine("the train leaves", 0.9, boxes[0]),)), page)
    said = with_fill(OcrResult((OcrLine("Keep your voice down.", 0.9, box),)), sub)
    glyphs = GlyphEvidence()
    bottom, middle = SubtitleLayout(WIDTH, glyphs=glyphs), SubtitleLayout(WIDTH, glyphs=glyphs)
    assert middle.filter(printed).text == "the train leaves"  # nothing known of the subtitles yet
    for _ in range(LIGHT_EVIDENCE):
        bottom.filter(said)
    assert middle.filter(printed).text == ""
    assert SubtitleLayout(WIDTH).filter(printed).text == "the train leaves"  # another video: nothing known


def test_a_centred_subtitle_stays_centred_when_its_box_takes_in_picture_detail_beside_it() -> None:
    # The detector's box runs on over a bright blob right of the text; the drawn glyphs are centred.
    background = np.full((160, WIDTH), 60, np.uint8)
    image, box = _subtitle(background, "Where were you last night?")
    cv2.rectangle(image, (box.x + box.w, box.y), (box.x + box.w + 60, box.y + box.h), (230, 230, 230), -1)
    wide = Box(box.x, box.y, box.w + 60, box.h)
    line = with_fill(OcrResult((OcrLine("Where were you last night?", 0.9, wide),)), image).lines[0]
    layout = SubtitleLayout(WIDTH)
    assert not layout.centred(wide)  # by its box alone, off-centre
    assert line.ink is not None and layout.centred(wide, line.ink)
    for _ in range(CENTRED_EVIDENCE + 1):
        assert layout.filter(OcrResult((line,))).text == "Where were you last night?"
    moved = OcrResult((line,)).shifted(5, 7).lines[0]  # into band coordinates: the ink moves with the box
    assert moved.ink == (line.ink[0] + 5, line.ink[1] + 5)


def test_text_that_moves_sideways_between_reads_is_picture_text() -> None:
    # A sign panning past: its text is read again further along; the subtitle stays where it was drawn.
    layout = SubtitleLayout(WIDTH)
    for step in range(4):
        sign = _centred("CITY LIBRARY", 300, h=40, y=20)
        sign = replace(sign, box=Box(sign.box.x + 40 * step, 20, 300, 40)) if sign.box else sign
        read = layout.filter(OcrResult((sign, _centred("Where were you last night?", 600))))
        expected = "CITY LIBRARY\nWhere were you last night?" if step == 0 else "Where were you last night?"
        assert read.text == expected, step
    # The same subtitle line again later, one line higher (the upper line of a two-line cue): not moved.
    again = _centred("Where were you last night?", 600, y=40)
    assert layout.filter(OcrResult((again,))).text == "Where were you last night?"


# A subtitle and text in the picture on its row (a badge, a sign) are joined into one line by the engine.


def _row(*pieces: tuple[int, int, str], h: int = 48) -> OcrLine:
    """The line rapidocr's group_lines makes of detector boxes (x0, x1, text) on one row."""
    from vidocr.engines.rapid import group_lines

    (line,) = group_lines([(float(x0), 100.0, float(x1), 100.0 + h, text, 0.95) for x0, x1, text in pieces])
    return line


def test_a_line_joined_from_several_boxes_knows_each_boxs_text() -> None:
    from vidocr.engines.rapid import group_lines

    line = _row((260, 354, "HAWLEY"), (430, 847, "Don't open that door!"))
    assert line.text == "HAWLEY Don't open that door!"
    assert [line.text[p.start : p.end] for p in line.parts] == ["HAWLEY", "Don't open that door!"]
    assert [p.box.x for p in line.parts] == [260, 430]
    (rtl,) = group_lines([(100.0, 0.0, 300.0, 40.0, "غدا", 0.9), (320.0, 0.0, 600.0, 40.0, "سنلتقي", 0.9)], rtl=True)
    assert rtl.text == "سنلتقي غدا"
    assert [rtl.text[p.start : p.end] for p in rtl.parts] == ["غدا", "سنلتقي"]  # left to right on screen
    assert _line("one box", 10, 100).parts == ()


def test_text_in_the_picture_read_into_a_subtitles_line_is_cut_off() -> None:
    layout = SubtitleLayout(WIDTH)
    glued = _row((260, 354, "HAWLEY"), (430, 847, "Don't open that door!"))
    kept = layout.filter(OcrResult((glued,)))
    assert kept.text == "Don't open that door!"
    assert kept.lines[0].box == Box(430, 100, 417, 48)
    right = _row((433, 850, "Don't open that door!"), (900, 1100, "EXIT 12"))
    assert layout.filter(OcrResult((right,))).text == "Don't open that door!"
    # The characters' probabilities are cut with the text (the merger votes per character on them).
    probs = tuple(0.5 + i / 100 for i in range(len(glued.text)))
    (cut,) = layout.filter(OcrResult((replace(glued, char_conf=probs),))).lines
    assert cut.char_conf == probs[len("HAWLEY ") :]
    # Moved with its result (a band crop's offset): the parts move with the box.
    moved = OcrResult((glued,)).shifted(5, 7).lines[0]
    assert [p.box.x for p in moved.parts] == [265, 435] and moved.parts[0].box.y == 107


def test_a_centred_line_of_several_boxes_stays_whole() -> None:
    layout = SubtitleLayout(WIDTH)
    phrases = _row((300, 600, "东西"), (680, 980, "要我帮你"))  # a wide phrase gap, centred as a whole
    assert layout.filter(OcrResult((phrases,))).text == "东西 要我帮你"
    sign = _row((60, 200, "CITY"), (230, 420, "LIBRARY"))  # no run of it is centred: left as it is
    assert layout.filter(OcrResult((sign,))).text == "CITY LIBRARY"


def test_a_subtitle_read_centred_then_glued_to_a_sign_is_cut_back_to_its_text() -> None:
    # Seen on a libass clip (new seeds, check 17_pale): "(sighs)" read whole and centred, then, as the picture panned
    # a "NO PARKING" sign under it, read in one detector box with the sign's end: "(sighs)KING", off-centre, dropped.
    layout = SubtitleLayout(WIDTH)
    for _ in range(CENTRED_EVIDENCE + 1):
        assert layout.filter(OcrResult((_centred("(sighs)", 150),))).text == "(sighs)"
    glued = replace(_line("(sighs)KING", 565, 248), text_cols=(565, 813))
    assert layout.filter(OcrResult((glued,))).text == "(sighs)"
    # A text the zone never read centred is not cut out of a line, nor one whose share of the line is off-centre.
    assert SubtitleLayout(WIDTH).filter(OcrResult((glued,))).text == "(sighs)KING"  # nothing proven: kept as read
    sign = replace(_line("(sighs) PARKING", 300, 400), text_cols=(300, 700))
    assert layout.filter(OcrResult((sign,))).text == ""


def test_a_sign_read_alone_then_glued_to_a_subtitle_is_cut_off_it() -> None:
    # Seen on a libass clip (new seeds, dev 19_ts-signs): a shop sign "咖啡馆" read alone in the gaps, then glued by
    # PP-OCR's detector to the subtitle that half covers it: "咖啡别打开那扇门", off-centre, dropped (a cue lost).
    def read_sign(layout: SubtitleLayout, times: int) -> None:
        for _ in range(times):
            assert layout.filter(OcrResult((replace(_line("咖啡馆", 480, 96), text_cols=(480, 576)),))).text == ""

    def proven() -> SubtitleLayout:
        layout = SubtitleLayout(WIDTH)
        for i in range(CENTRED_EVIDENCE + 1):
            layout.filter(OcrResult((_centred(f"subtitle {i}", 500),)))
        return layout

    glued = replace(_line("咖啡别打开那扇门", 480, 256), text_cols=(480, 736))
    layout = proven()
    read_sign(layout, 2)
    assert layout.filter(OcrResult((glued,))).text == "别打开那扇门"
    # A text read off-centre once may be a subtitle glued to a sign (read differently each time): nothing is cut.
    once = proven()
    read_sign(once, 1)
    assert once.filter(OcrResult((glued,))).text == ""
    # A text read off-centre across the axis is a subtitle drawn a little aside (seen on a real clip: "这也太真实了吧.",
    # then "这真的是游戏么" lost its "这"), not a sign.
    aside = proven()
    for _ in range(3):
        aside.filter(OcrResult((replace(_line("这也太真实了吧.", 520, 330), text_cols=(520, 850)),)))
    follows = replace(_line("这真的是游戏么", 512, 224), text_cols=(512, 736))
    assert aside.filter(OcrResult((follows,))).text == "这真的是游戏么"
    # The sign's first characters drawn away from where the sign was are not the sign.
    elsewhere = replace(_line("咖啡别打开那扇门", 700, 256), text_cols=(700, 956))
    assert layout.filter(OcrResult((elsewhere,))).text == ""
    # A centred line is cut only where its rest is more centred than it...
    layout = proven()
    read_sign(layout, 2)
    centred = replace(_line("咖啡别打开那扇门", 512, 256), text_cols=(512, 768))
    assert layout.filter(OcrResult((centred,))).text == "咖啡别打开那扇门"
    shifted = replace(_line("咖啡别打开那扇门", 490, 256), text_cols=(490, 746))
    assert layout.filter(OcrResult((shifted,))).text == "别打开那扇门"
    # ... or is a text the zone read centred (here "SALE 50%" drawn over the subtitle's start: no columns tell).
    for _ in range(2):
        layout.filter(OcrResult((replace(_line("SALE 50%", 200, 160), text_cols=(200, 360)),)))
    layout.filter(OcrResult((_centred("Put the box on the table, please.", 600),)))
    sale = replace(_centred("SALE 50%Put the box on the table, please.", 640), text_cols=(320, 960))
    assert layout.filter(OcrResult((sale,))).text == "Put the box on the table, please."
    unsaid = replace(sale, text="SALE 50%Put the cup on the table, please.")
    assert layout.filter(OcrResult((unsaid,))).text == "SALE 50%Put the cup on the table, please."


def test_a_line_is_centred_by_where_the_recogniser_found_its_text() -> None:
    # The detector's box took in bright chrome left of the subtitle (and glyph ink can too: closed light
    # shapes); the recogniser's first and last characters are where the text is.
    layout = SubtitleLayout(WIDTH)
    for i in range(CENTRED_EVIDENCE + 1):
        layout.filter(OcrResult((_centred(f"subtitle {i}", 500),)))
    line = replace(_line("Keep your voice down, they'll hear us.", 180, 840), ink=(180, 1016))
    assert layout.filter(OcrResult((line,))).text == ""  # by its box and ink: off-centre, dropped
    spanned = replace(line, text_cols=(262, 1016))
    assert layout.filter(OcrResult((spanned,))).text == "Keep your voice down, they'll hear us."
    moved = OcrResult((spanned,)).shifted(4, 0).lines[0]
    assert moved.text_cols == (266, 1020)


def test_an_ellipsis_the_detector_left_out_of_a_line_is_part_of_its_ink() -> None:
    # Seen on the real zh_strip clip: "怎么回事啊......" boxed and read without its dots, so its text looked off-centre
    # by half their width and the subtitle was dropped (eight of the clip's subtitles).
    background = np.full((120, WIDTH), 60, np.uint8)
    image, whole = _subtitle(background, "Wait......")
    (word, _), _ = cv2.getTextSize("Wait", cv2.FONT_HERSHEY_DUPLEX, 1.6, 3)
    box = Box(whole.x, whole.y, word + 8, whole.h)
    line = with_fill(OcrResult((OcrLine("Wait", 0.9, box, text_cols=(box.x + 4, box.x + box.w - 4)),)), image).lines[0]
    assert line.ink is not None and abs(line.ink[1] - (whole.x + whole.w - 4)) <= 6, (line.ink, whole)
    layout = SubtitleLayout(WIDTH)
    for i in range(CENTRED_EVIDENCE + 1):
        layout.filter(OcrResult((_centred(f"subtitle {i}", 500),)))
    assert layout.filter(OcrResult((line,))).text == "Wait"
    # A full stop is no ellipsis, nor are shapes unlike one another after it: the ink ends at the stop.
    (stop, _), _ = cv2.getTextSize("Wait.", cv2.FONT_HERSHEY_DUPLEX, 1.6, 3)
    for text in ("Wait.", "Wait. . o O"):
        image, whole = _subtitle(background, text)
        box = Box(whole.x, whole.y, word + 8, whole.h)
        line = with_fill(OcrResult((OcrLine("Wait", 0.9, box),)), image).lines[0]
        assert line.ink is not None and line.ink[1] <= whole.x + 4 + stop + 2, (text, line.ink, whole)


def test_a_line_whose_first_glyph_the_recogniser_skipped_is_centred_by_its_glyphs() -> None:
    # Seen on the real zh_strip clip: "诶？这些不都是动物吗？" read "？这些不都是动物吗？", the recogniser's columns
    # starting after the glyph it skipped, off-centre: four real subtitles of the clip were dropped so.
    layout = SubtitleLayout(WIDTH)
    for i in range(CENTRED_EVIDENCE + 1):
        layout.filter(OcrResult((_centred(f"subtitle {i}", 500),)))
    skipped = replace(_line("？这些不都是动物吗？", 430, 420), text_cols=(500, 838), ink=(440, 840))
    assert layout.filter(OcrResult((skipped,))).text == "？这些不都是动物吗？"
    # Text the recogniser aligned outside the glyphs is a sign glued to the line: judged where it was read.
    glued = replace(_line("CITY LIBItold you, I was at the office.", 290, 560), text_cols=(300, 840), ink=(440, 840))
    assert layout.filter(OcrResult((glued,))).text == ""


def _drawn(text: str, x: int, w: int, h: int = 48, y: int = 100) -> OcrLine:
    """A line whose text and light glyphs (its ink) take up its box."""
    return replace(_line(text, x, w, h, y), text_cols=(x + 8, x + w - 8), ink=(x + 6, x + w - 6), fill=0.6)


def test_a_subtitle_drawn_off_the_axis_on_the_subtitle_rows_is_kept() -> None:
    # Seen on the real zh_strip clip: a narrator's lines ("七月初三，就是明天了", "你们知道这是什么游戏么？") drawn
    # 40-60 px left of the other subtitles, on their rows, at their size, across the middle: dropped as off-centre.
    def kept(line: OcrLine, said: str = "") -> str:
        layout = SubtitleLayout(WIDTH)
        for text in [f"subtitle number {i}" for i in range(CENTRED_EVIDENCE + 1)] + [said] * bool(said):
            layout.filter(OcrResult((replace(_centred(text, 500), ink=(396, 884), fill=0.6),)))
        return layout.filter(OcrResult((line,))).text

    axis = WIDTH // 2
    narrator = _drawn("你们知道这是什么游戏么？", axis - 300, 480)  # centred 60 px left of the axis
    assert not SubtitleLayout(WIDTH).centred(narrator.box, narrator.text_cols)  # type: ignore[arg-type]
    assert kept(narrator) == "你们知道这是什么游戏么？"
    # Not: text wholly on one side of the axis, on other rows, at another size, print, text read past its glyphs (a
    # sign glued to it), glyphs past its text (read in part), a part of a subtitle read centred lately.
    assert kept(_drawn("OPEN 24 HOURS", 100, 480)) == ""
    assert kept(_drawn("OPEN 24 HOURS", axis - 300, 480, y=30)) == ""
    assert kept(_drawn("OPEN 24 HOURS", axis - 300, 480, h=30, y=109)) == ""
    assert kept(replace(_drawn("the page of a book", axis - 300, 480), fill=0.05)) == ""
    assert kept(replace(_drawn("NO PARKINGKeep your voice down", axis - 300, 480), ink=(axis - 100, axis + 172))) == ""
    assert kept(replace(_drawn("We're running out", axis - 300, 480), ink=(axis - 294, axis + 400))) == ""
    assert kept(_drawn("We're running out", axis - 300, 480), said="We're running out of time.") == ""
    assert kept(_drawn("We're running out", axis - 300, 480)) == "We're running out"


# A subtitle over a page of print: read again with its closed light glyphs alone.


def _subtitle_over_page() -> tuple[np.ndarray, Box, list[Box]]:
    """A 1280 x 240 band: a page of six lines of print, and a white, outlined subtitle drawn over its middle."""
    band = np.full((240, WIDTH, 3), 60, np.uint8)
    page, boxes = _page(6)
    band[:, 190:1090] = page
    image, box = _subtitle(cv2.cvtColor(band, cv2.COLOR_BGR2GRAY), "Where were you last night?")
    return image, box, [Box(b.x + 190, b.y, b.w, b.h) for b in boxes]


def test_the_glyph_image_of_a_subtitle_over_a_page_holds_the_subtitle_without_the_print() -> None:
    from vidocr.engines.rapid import build_ocr, read_band

    image, box, print_boxes = _subtitle_over_page()
    ocr = build_ocr()
    raw = read_band(ocr, image)
    assert "Where were you last night?" not in raw.text.split("\n")  # read together with the print
    glyphs = glyph_image(image, box.h)
    assert glyphs is not None
    lit = glyphs.max(axis=2) > 0
    for b in print_boxes:  # print outside the subtitle's rows is gone
        if b.y + b.h < box.y or b.y > box.y + box.h:
            assert np.count_nonzero(lit[b.y : b.y + b.h, b.x : b.x + b.w]) < 0.01 * b.w * b.h, b
    assert read_band(ocr, glyphs).text == "Where were you last night?"


def test_the_ocr_worker_reads_a_block_of_print_again_glyphs_only_and_the_layout_believes_it() -> None:
    from vidocr.engines import EngineOptions
    from vidocr.engines.rapid import RapidOcrEngine
    from vidocr.ocrqueue import OcrWorker
    from vidocr.types import Task

    image, _, _ = _subtitle_over_page()
    with RapidOcrEngine(EngineOptions(workers=1)) as engine:
        worker = OcrWorker(engine, Task.SUBTITLE, batch=1, queue_size=2)
        worker.submit(1, image)
        worker.close()
        result = worker.take()[1]
    assert worker.glyph_reads == 1 and result.glyphs_only is not None
    assert result.glyphs_only.text == "Where were you last night?"
    # The line read glued to print gives way to it, before the video has shown light subtitles and after.
    assert SubtitleLayout(WIDTH).filter(result).text == "Where were you last night?"
    assert _proven(SubtitleLayout(WIDTH)).filter(result).text == "Where were you last night?"


@pytest.fixture
def no_whole_reads(monkeypatch: pytest.MonkeyPatch) -> None:
    """The worker's glyph reads alone, in the order the scripted engine answers them: no line is read again whole
    (vidocr.ocrqueue.OcrWorker._whole_lines, tests/test_whole_lines.py), which the page's print lines near the
    middle would ask for."""
    from vidocr import ocrqueue

    monkeypatch.setattr(ocrqueue, "_whole_box", lambda line, width: None)


@pytest.mark.usefixtures("no_whole_reads")
def test_a_read_that_found_nothing_but_a_line_of_print_is_read_again_glyphs_only() -> None:
    """The detector boxed one line of the page and not the subtitle over it (libass corpus, new seeds, dev 13_cuts:
    a CJK subtitle over a page just cut to): the band is read again with its closed light glyphs alone. A lone
    line of print beside a line that is not print (a sign beside the subtitle) is not: its specks read alone are
    junk."""
    from vidocr.ocrqueue import OcrWorker

    image, box, print_boxes = _subtitle_over_page()
    printed = OcrLine("the train leaves at half past nine", 0.9, print_boxes[0])
    subtitle = OcrLine("Where were you last night?", 0.9, box)
    alone = OcrResult((OcrLine("Where were you last night?", 0.95, box),))
    for band, again in [(OcrResult((printed,)), True), (OcrResult((printed, subtitle)), False)]:
        engine = _ScriptedEngine([band, alone, OcrResult(()), OcrResult(())])
        worker = OcrWorker(engine, Task.SUBTITLE, batch=1, queue_size=2)  # type: ignore[arg-type]
        worker.submit(1, image)
        worker.close()
        result = worker.take()[1]
        assert result.lines[0].fill is not None and result.lines[0].fill <= GLUED_FILL_MAX  # measured as print
        assert worker.glyph_reads == int(again), band.text
        if again:
            assert result.glyphs_only is not None and result.glyphs_only.text == "Where were you last night?"
            assert SubtitleLayout(WIDTH).filter(result).text == "Where were you last night?"
        else:
            assert result.glyphs_only is None and len(engine.calls) == 1


def _glued_read(sure: float = 0.95) -> OcrResult:
    """Print above a line where the subtitle was read glued to print; its glyphs-only read found the subtitle."""
    printed = replace(_line("the train leaves at half past nine", 200, 700, h=26, y=40), fill=0.05)
    glued = replace(_line("the trainWhere wereyou last night?", 200, 760, y=98), fill=0.25)
    alone = replace(_centred("Where were you last night?", 640, h=46, y=100), fill=0.9, confidence=sure)
    return OcrResult((printed, glued), glyphs_only=OcrResult((alone,)))


def _proven(layout: SubtitleLayout) -> SubtitleLayout:
    light = OcrResult((replace(_centred("Keep your voice down.", 560), fill=0.9),))
    for _ in range(LIGHT_EVIDENCE):
        layout.filter(light)
    return layout


def test_a_glued_line_gives_way_to_the_glyphs_only_line_on_its_rows() -> None:
    assert _proven(SubtitleLayout(WIDTH)).filter(_glued_read()).text == "Where were you last night?"
    # Before light subtitles have shown, print is not dropped for being print (dark text on a light box may be the
    # style), but the glued line still gives way.
    assert SubtitleLayout(WIDTH, enabled=False).filter(_glued_read()).text == (
        "the train leaves at half past nine\nWhere were you last night?")
    # An unsure glyphs-only read (picture specks read alone) is not believed: the glued line stays (and the
    # layout judges it as any line).
    unsure = _proven(SubtitleLayout(WIDTH, enabled=False)).filter(_glued_read(GLYPHS_ONLY_SURE - 0.1))
    assert unsure.text == "the trainWhere wereyou last night?"
    # A light line read on the same rows is the subtitle as read: the glyphs-only line does not replace it.
    read = _glued_read()
    light = replace(read.lines[1], text="Where were you last night?", fill=0.8)
    kept = _proven(SubtitleLayout(WIDTH, enabled=False)).filter(replace(read, lines=(read.lines[0], light)))
    assert kept.text == "Where were you last night?" and kept.lines[0] is light


def test_a_piece_of_the_subtitle_boxed_apart_from_the_print_gives_way_to_the_glyphs_only_line() -> None:
    """Seen on the corpus (third seeds dev ``44_yellow-page``): a yellow italic subtitle over a page of print. The
    detector boxed "Thank" ... "this way." with the print ("morning. Thankh tis way. She'B be bach", glued) and
    "way." alone, a subtitle-like piece at the line's right end; the glyphs alone read the whole line on those
    rows. The piece kept the glyphs-only line out (it is added only where no kept line is), then the layout dropped
    the off-centre piece, and the cue was missed. A kept line inside the glyphs-only line, reading a piece of it,
    gives way to it; a line beside it, or reading other text, does not."""
    printed = replace(_line("it? Put the box on the table, please.", 167, 659, h=29, y=2), fill=0.05)
    glued = replace(_line("morning. Thankh tis way. She'B be bach", 169, 605, h=36, y=23), fill=0.25)
    piece = replace(_line("way.", 859, 88, h=38, y=42), fill=0.95)
    alone = replace(_line("Thank you for coming all this way.", 320, 682, h=64, y=26), fill=1.0, confidence=0.93)
    read = OcrResult((printed, glued, piece), glyphs_only=OcrResult((alone,)))
    assert _proven(SubtitleLayout(WIDTH)).filter(read).text == "Thank you for coming all this way."
    # Judged by the piece rule alone (light glyphs shown, where subtitles are drawn not proved yet: an off-centre
    # line gives way to a centred glyphs-only line on its rows only once it is).
    light = SubtitleLayout(WIDTH)
    light.glyphs.light = LIGHT_EVIDENCE
    assert light.filter(read).text == "Thank you for coming all this way."
    for other in (replace(piece, text="OK"), replace(piece, box=Box(1010, 42, 88, 38))):
        light = SubtitleLayout(WIDTH)
        light.glyphs.light = LIGHT_EVIDENCE
        assert light.filter(replace(read, lines=(printed, glued, other))).text != (
            "Thank you for coming all this way."), other


def test_an_off_centre_line_of_print_gives_way_to_a_centred_glyphs_only_line_on_its_rows() -> None:
    """Seen on the corpus (dev ``08_yellow-page``): a yellow subtitle appears over a page of print. The first read
    boxed a line of the page across the subtitle's rows; the subtitle's glyphs raised its fill (0.42) above a glued
    line's (GLUED_FILL_MAX), so it was kept, and it kept the sure glyphs-only line ("Can you hear me now?", centred)
    out; then the layout dropped the off-centre print and the read was blank: the cue started 20 frames late, at the
    next read. Once the zone has proved its subtitles centred, a line that is not centred gives way to a sure,
    centred glyphs-only line on its rows; a centred line keeps its place, and an off-centre glyphs-only line wins
    nothing."""
    page = replace(_line("We're running you", 245, 663, h=31, y=103), fill=0.42)
    below = replace(_line("sure this is the right fouse? I", 245, 689, h=30, y=130), fill=0.24)
    alone = replace(_line("Can you hear me now?", 398, 481, h=60, y=100), fill=1.0, confidence=0.97)
    read = OcrResult((page, below), glyphs_only=OcrResult((alone,)))
    assert _proven(SubtitleLayout(WIDTH)).filter(read).text == "Can you hear me now?"
    # Before the zone proved its subtitles centred, nothing is known of where they are drawn: unchanged.
    assert SubtitleLayout(WIDTH).filter(read).text != "Can you hear me now?"
    centred = replace(_centred("I told you, I was at the office.", 583, h=31, y=103), fill=0.42)
    assert _proven(SubtitleLayout(WIDTH)).filter(replace(read, lines=(centred, below))).text == centred.text
    aside = replace(alone, box=Box(90, 100, 481, 60))
    assert _proven(SubtitleLayout(WIDTH)).filter(replace(read, glyphs_only=OcrResult((aside,)))).text != alone.text
    # A line that reads the glyphs-only line's text too is the subtitle glued to print: the layout cuts the subtitle
    # out of it by characters, the picture's read of all of its glyphs (new seeds check ``13_cuts``: the glyphs alone
    # read "他说明天上回来", without 早).
    latin, cjk = "leave before the rain starts. Put the", "他说明天早上回来"
    cols = tuple(165 + 8.4 * i for i in range(len(latin))) + tuple(494 + 42 * i for i in range(len(cjk)))
    glued = replace(_line(latin + cjk, 157, 650, h=41, y=99), fill=0.37, text_cols=(157, 807), char_cols=cols)
    short = replace(_line("他说明天上回来", 461, 351, h=69, y=79), fill=1.0, confidence=0.99)
    layout = _proven(SubtitleLayout(WIDTH))
    layout.filter(OcrResult((replace(_centred("他说明天早上回来", 334, h=54, y=89), fill=0.8),)))
    assert layout.filter(OcrResult((glued,), glyphs_only=OcrResult((short,)))).text == "他说明天早上回来"


def test_a_read_judged_blank_keeps_its_unsure_centred_glyphs_only_lines_as_evidence() -> None:
    """Fourth seeds check ``49_cuts``: a subtitle over a moving page of print, its glyphs alone read at 0.84, under
    GLYPHS_ONLY_SURE: the lines of print are dropped and the read is blank, but it keeps the unsure centred line as
    its glyphs-only read, evidence the merger may start the next read's subtitle by (vidocr.merge's lead). Not a line
    off-centre, nor before the zone proved where its subtitles are drawn; a sure line is taken as before."""
    page = tuple(replace(_line(text, 94, 461, h=20, y=y), fill=0.1) for text, y in (
        ("running out of time. Where were you last night?", 21), ("house? Don't open that door!", 45),
        ("I found the letter in his coat.", 70)))
    alone = replace(_centred("谢谢你大老远跑过来", 242, h=45, y=37), confidence=0.84, fill=1.0)
    judged = _proven(SubtitleLayout(WIDTH)).filter(OcrResult(page, glyphs_only=OcrResult((alone,))))
    assert judged.text == "" and judged.glyphs_only is not None and judged.glyphs_only.text == alone.text
    aside = replace(alone, box=Box(60, 37, 242, 45))
    judged = _proven(SubtitleLayout(WIDTH)).filter(OcrResult(page, glyphs_only=OcrResult((aside,))))
    assert judged.text == "" and judged.glyphs_only is None
    unproven = SubtitleLayout(WIDTH)
    unproven.glyphs.light = LIGHT_EVIDENCE
    assert unproven.filter(OcrResult(page, glyphs_only=OcrResult((alone,)))).glyphs_only is None
    sure = replace(alone, confidence=0.9)
    assert _proven(SubtitleLayout(WIDTH)).filter(OcrResult(page, glyphs_only=OcrResult((sure,)))).text == sure.text


def test_a_line_that_may_be_glued_but_has_no_light_glyphs_to_read_is_print() -> None:
    # A maker's name on a bright engine cover, centred over the band at the subtitles' size range (new-seed corpus,
    # "YAMAHA"): its fill looked glued (between PRINT_FILL_MAX and GLUED_FILL_MAX), and its glyphs read alone gave
    # nothing at all on its rows.
    logo = replace(_centred("YAMAHA", 60, h=34, y=0), fill=(PRINT_FILL_MAX + GLUED_FILL_MAX) / 2)
    subtitle = replace(_centred("(sighs)", 140, h=56, y=30), fill=0.9)
    empty = OcrResult((logo,), glyphs_only=OcrResult(()))
    assert _proven(SubtitleLayout(WIDTH)).filter(empty).text == ""
    # Glyphs read alone on other rows (the subtitle) do not save it; the subtitle is kept.
    beside = OcrResult((logo, subtitle), glyphs_only=OcrResult((subtitle,)))
    assert _proven(SubtitleLayout(WIDTH)).filter(beside).text == "(sighs)"
    # Before light subtitles have shown, it may be the style (dark text on a light box): kept.
    assert SubtitleLayout(WIDTH).filter(empty).text == "YAMAHA"
    # Any glyphs read alone on its rows, even an unsure speck, keep it to the layout's other rules.
    speck = replace(_centred("Y", 20, h=30, y=2), confidence=0.5)
    assert _proven(SubtitleLayout(WIDTH)).filter(replace(empty, glyphs_only=OcrResult((speck,)))).text == "YAMAHA"
    # Not read glyphs-only at all: nothing is known of its glyphs; kept.
    assert _proven(SubtitleLayout(WIDTH)).filter(OcrResult((logo,))).text == "YAMAHA"


class _ScriptedEngine:
    """Answers each call from a script: the band's read, its glyphs-only read, the line read in the picture."""

    name = "scripted"
    tasks = frozenset({Task.SUBTITLE})
    preferred_batch = 1

    def __init__(self, answers: list[OcrResult]) -> None:
        self.answers = answers
        self.calls: list[tuple[int, int]] = []

    def recognize(self, images: list[np.ndarray], task: Task) -> list[OcrResult]:
        self.calls.extend(image.shape[:2] for image in images)
        return [self.answers.pop(0) for _ in images]

    def close(self) -> None:
        pass


@pytest.mark.usefixtures("no_whole_reads")
def test_a_glyphs_only_line_is_read_again_in_the_picture_inside_its_box_and_the_surer_read_kept() -> None:
    from vidocr.ocrqueue import OcrWorker

    image, box, print_boxes = _subtitle_over_page()
    band = OcrResult(tuple(OcrLine("the train leaves at half past nine", 0.9, b) for b in print_boxes[:2]))
    alone = OcrResult((OcrLine("Where wereyou last night?", 0.9, box),))
    cases = [
        ("Where were you last night?", 0.97, "Where were you last night?"),  # surer, as many words: kept
        ("Where were you last night?", 0.8, "Where wereyou last night?"),  # less sure
        ("Wherewereyou lastnight?", 0.99, "Where wereyou last night?"),  # print behind filled its word gaps
        ("the train leaves at half past", 0.99, "Where wereyou last night?"),  # another line: the print behind
    ]
    for text, sure, expected in cases:
        in_box = OcrResult((OcrLine(text, sure, Box(4, 3, box.w, box.h)),))
        engine = _ScriptedEngine([band, alone, OcrResult(()), in_box])  # nothing read on grey (glyph_view)
        worker = OcrWorker(engine, Task.SUBTITLE, batch=1, queue_size=2)  # type: ignore[arg-type]
        worker.submit(1, image)
        worker.close()
        result = worker.take()[1]
        assert result.glyphs_only is not None and result.glyphs_only.text == expected, sure
        pad = max(2, box.h // 8)
        assert engine.calls[-1] == (box.h + 2 * pad, box.w + 2 * pad)  # the line's box in the picture, padded
        if expected == text:
            found = result.glyphs_only.lines[0].box
            assert found is not None and (found.x, found.y) == (box.x - pad + 4, box.y - pad + 3)


@pytest.mark.usefixtures("no_whole_reads")
def test_a_glyph_image_is_read_also_cut_to_its_glyphs_on_grey_and_the_surer_read_kept() -> None:
    """PP-OCR's detector often boxes nothing, or drops a glyph, in a band-wide image of light glyphs on black
    (libass corpus, new seeds, dev 13_cuts: a CJK subtitle half over a page): the glyph image is also read cut to
    its glyphs, on grey, and the surer read is kept (grey shows specks that black hides: not always that one)."""
    from vidocr.layout import glyph_view
    from vidocr.ocrqueue import OcrWorker

    image, box, print_boxes = _subtitle_over_page()
    band = OcrResult(tuple(OcrLine("the train leaves at half past nine", 0.9, b) for b in print_boxes[:2]))
    height = max(b.h for b in print_boxes[:2])
    glyphs = glyph_image(image, height)
    assert glyphs is not None
    view, x0 = glyph_view(glyphs, height)
    assert x0 > 0 and view.shape[1] < WIDTH and view.shape[0] == image.shape[0]
    ground = view[~(glyphs.max(axis=2) > 0)[:, x0 : x0 + view.shape[1]]]
    assert ground.size and (ground == ground[0]).all() and 64 <= ground[0, 0] <= 160  # grey, not black
    on_grey = OcrResult((OcrLine("Where were you last night?", 0.9, replace(box, x=box.x - x0)),))
    on_black = [
        (OcrResult(()), "Where were you last night?"),  # nothing boxed on black
        (OcrResult((OcrLine("here were you last night?", 0.8, box),)), "Where were you last night?"),  # less sure
        (OcrResult((OcrLine('"Where were you last night?', 0.95, box),)), '"Where were you last night?'),  # surer
    ]
    for black, expected in on_black:
        in_box = OcrResult((OcrLine(expected, 0.5, box),))  # the line read in the picture: less sure
        engine = _ScriptedEngine([band, black, on_grey, in_box])
        worker = OcrWorker(engine, Task.SUBTITLE, batch=1, queue_size=2)  # type: ignore[arg-type]
        worker.submit(1, image)
        worker.close()
        result = worker.take()[1]
        assert engine.calls[1:3] == [image.shape[:2], view.shape[:2]]
        assert result.glyphs_only is not None and result.glyphs_only.text == expected
        found = result.glyphs_only.lines[0].box
        assert found is not None and found.x == box.x  # in the band's pixels


# Reads judged before the zone has evidence of its subtitles are judged again when their segment is merged.


def _sign() -> OcrResult:
    return OcrResult((_line("SALE 50%", 750, 220, h=60, y=8),))


def test_a_sign_read_before_the_first_subtitle_is_judged_again_once_the_subtitles_proved_centred() -> None:
    layout = SubtitleLayout(WIDTH)
    kept, unsure = layout.read(_sign())
    assert kept.text == "SALE 50%" and unsure  # nothing known yet: kept, on too little evidence
    assert layout.waiting(_sign())
    for i in range(CENTRED_EVIDENCE + 1):
        _, unsure = layout.read(OcrResult((_centred(f"subtitle {i}", 400),)))
        assert not unsure  # a centred line is judged on its own
    assert not layout.waiting(_sign())
    assert layout.judged(_sign(), kept).text == ""
    assert layout.dropped == 1


def test_print_read_before_the_video_showed_light_subtitles_is_judged_again() -> None:
    page = OcrResult((replace(_centred("the train leaves at half past nine", 500, h=26, y=40), fill=0.05),))
    layout = SubtitleLayout(WIDTH)
    kept, unsure = layout.read(page)
    assert kept.text == "the train leaves at half past nine" and unsure
    _proven(layout)
    assert not layout.waiting(page)
    assert layout.judged(page, kept).text == ""


def test_reads_judged_on_too_little_evidence_wait_at_most_hold_reads() -> None:
    # A zone whose subtitles are not centred never proves them centred: its first reads are taken as they are.
    layout = SubtitleLayout(WIDTH)
    kept, unsure = layout.read(_sign())
    assert unsure
    for i in range(HOLD_READS - 2):
        layout.read(OcrResult((_line(f"left aligned subtitle {i}", 60, 500),)))
    assert layout.waiting(_sign())
    layout.read(OcrResult((_line("left aligned subtitle", 60, 500),)))
    assert not layout.waiting(_sign())
    assert layout.judged(_sign(), kept).text == "SALE 50%"
    assert not layout.read(_sign())[1]


def test_a_still_sign_read_in_every_gap_counts_as_one_off_centre_text() -> None:
    # The sign is read alone before the first subtitle and in every gap between subtitles: once, not as many
    # reads, against the subtitles' centred reads.
    layout = SubtitleLayout(WIDTH)
    for i in range(CENTRED_EVIDENCE + 1):
        layout.filter(_sign())
        layout.filter(OcrResult((_centred(f"subtitle {i}", 400),)))
    assert layout.filter(_sign()).text == ""
    # Text not read before still counts against the share (a zone whose subtitles are not all centred).
    assert layout.filter(OcrResult((_line("CITY LIBRARY SALE 50%", 200, 500, y=8),))).text == ""
    assert layout.filter(OcrResult((_line("left aligned subtitle", 60, 500),))).text == "left aligned subtitle"


def test_a_sign_lined_up_with_a_subtitles_edge_by_chance_is_not_a_line_of_its_block() -> None:
    layout = SubtitleLayout(WIDTH)
    subtitle = _centred("你确定是这栋房子吗", 390, h=50, y=173)
    assert subtitle.box is not None
    sign = _line("CITY LIBRARY", subtitle.box.x - 12, 224, h=38, y=79)  # two lines up, its left edge in line
    assert layout.filter(OcrResult((sign, subtitle))).text == "你确定是这栋房子吗"
    # The lines of a left-aligned block stay, the block growing line by line.
    longest = _centred("- Where were you last night?", 640, y=40)
    assert longest.box is not None
    block = (_line("- At home.", longest.box.x, 220, y=100), _line("- Alone?", longest.box.x, 180, y=160))
    assert layout.filter(OcrResult((longest, *block))).text == "- Where were you last night?\n- At home.\n- Alone?"


def test_a_sign_drawn_over_a_subtitles_end_is_not_a_line_of_its_block() -> None:
    """Seen on the corpus (fourth seeds dev ``53_pale``): a small sign "出口" drawn over the right end of a pale
    subtitle, its box on the top half of the subtitle's rows and its right edge within the block slack of the
    subtitle's: it was kept as a right-aligned block's line, and the cue "出口\nWhy would anyone do that?" split the
    subtitle in two. A block's lines lie one above the other: a line on a kept line's rows is not one of them."""
    subtitle = _line("Why would anyone do that?", 269, 313, h=38, y=36)
    sign = _line("出口", 522, 54, h=30, y=25)
    assert SubtitleLayout(854).filter(OcrResult((sign, subtitle))).text == "Why would anyone do that?"
    # The same sign a line up, on rows of its own, lines up as a block's line (it was never dropped before).
    above = replace(sign, box=Box(522, 0, 54, 30))
    assert SubtitleLayout(854).filter(OcrResult((above, replace(subtitle, box=Box(269, 40, 313, 38))))).text == (
        "出口\nWhy would anyone do that?")


def test_a_sign_dropped_beside_one_subtitle_is_not_a_line_of_the_next_ones_block() -> None:
    # Seen on the corpus's new seeds (check 19): the sign "咖啡馆" above a subtitle, off-centre and dropped, then
    # above the next one with its left edge within the block slack of that one's: kept as a line of its cue.
    layout = SubtitleLayout(WIDTH)
    first = _centred("今天真是漫长的一天", 314, h=45, y=78)
    assert layout.filter(OcrResult((_line("咖啡馆", 527, 150, h=46, y=47), first))).text == "今天真是漫长的一天"
    second = _centred("再给我五分钟就好", 273, h=41, y=80)
    assert second.box is not None
    sign = _line("咖啡馆", second.box.x + 26, 141, h=61, y=9)  # lined up with the subtitle's left edge by chance
    assert layout.filter(OcrResult((sign, second))).text == "再给我五分钟就好"
    # Without having been dropped before, such a line is one of the block (a left-aligned dialogue's short line).
    fresh = SubtitleLayout(WIDTH)
    assert fresh.filter(OcrResult((sign, second))).text == "咖啡馆\n再给我五分钟就好"


def test_a_sign_shown_before_and_between_the_subtitles_is_no_cue(tmp_path: Path, rapid_engine: OcrEngine) -> None:
    # libass clip: an off-centre sign on a plate above the subtitle line, from frame 0 (half a second before the
    # first subtitle) to the end, read alone before, between and after the subtitles. Before the hold and the
    # one-count of a still text, it came out as a cue before and after the subtitles and in every gap.
    from test_libass_classes import EN, _clip, _events, _need, missing, problems, run

    clip = _clip("sign-first", _events(12, (EN[0], 24, 6), (EN[1], 24, 6), (EN[2], 24, 6), (EN[3], 24, 0)),
                 signs=[("SALE 50%", 0.7, 0.6)])
    lacking = missing(clip)
    if lacking:
        _need(", ".join(lacking))
    rendered, cues = run(clip, tmp_path, rapid_engine)
    found = problems(rendered, cues)
    assert not found, "\n".join(found)


def test_a_first_read_measured_off_centre_is_kept_when_the_zone_read_its_text_centred_later() -> None:
    # 360p: a subtitle's first read, its text columns not sure yet, measured off-centre before the zone proved its
    # subtitles centred; later reads of the same subtitle are centred.
    layout = SubtitleLayout(WIDTH)
    first = OcrResult((_line("We re runhing oi t of time", 700, 560, h=48),))
    kept, unsure = layout.read(first)
    assert unsure
    for i in range(CENTRED_EVIDENCE):
        layout.read(OcrResult((_centred(f"subtitle {i}", 400),)))
    layout.read(OcrResult((_centred("We're running out of time", 560),)))
    assert not layout.waiting(first)
    assert layout.judged(first, kept).text == "We re runhing oi t of time"
    assert layout.judged(_sign(), _sign()).text == ""


def test_a_lines_glyphs_are_its_own_not_the_line_above_nor_specks_beside_it() -> None:
    # Seen on the libass corpus (third seeds check 45_two-line): the lower line of a two-line subtitle was boxed with a
    # sign beside it ("咖啡馆 SAIt's been a long day, hasn't it?", the box as tall as the sign's plate), and its glyphs
    # (ink) were measured from the line above and the grain of the plate: the line never showed text read past its
    # glyphs, was not read alone, and its cue was lost for 54 frames.
    from vidocr.layout import _own_glyphs

    image = np.full((200, WIDTH, 3), 70, np.uint8)
    fill, outline = np.zeros(image.shape[:2], np.uint8), np.ones((7, 7), np.uint8)
    upper, lower = "Are you sure this is the right house?", "Give me five more minutes."
    (uw, _), _ = cv2.getTextSize(upper, cv2.FONT_HERSHEY_DUPLEX, 1.4, 3)
    (lw, lh), _ = cv2.getTextSize(lower, cv2.FONT_HERSHEY_DUPLEX, 1.4, 3)
    cv2.putText(fill, upper, ((WIDTH - uw) // 2, 60), cv2.FONT_HERSHEY_DUPLEX, 1.4, 255, 3)
    cv2.putText(fill, lower, ((WIDTH - lw) // 2, 125), cv2.FONT_HERSHEY_DUPLEX, 1.4, 255, 3)
    image[cv2.dilate(fill, outline) > 0] = 0
    image[fill > 0] = 255
    left = (WIDTH - lw) // 2
    box = Box(left - 4 * lh, 66, 5 * lh + lw + 6, 90)  # reaches into the upper line's rows, and left of the text
    line = OcrLine("EXIT Give me five more minutes.", 0.9, box, text_cols=(box.x + 6, left + lw))
    measured = with_fill(OcrResult((line,)), image).lines[0]
    assert measured.ink is not None and abs(measured.ink[0] - left) <= 6, (measured.ink, left)
    # The text was read a line height and more past those glyphs: a sign glued to the subtitle, read alone.
    assert measured.glued_cols is not None and abs(measured.glued_cols[0] - left) <= 6, measured.glued_cols
    # A plate's grain leaves highlights of a few pixels closed off by darker grain: specks, not glyphs.
    closed = np.zeros((160, 100), bool)
    closed[40:100, 50:56] = True  # a stroke on the rows of a line 100 px high
    closed[70, 10] = closed[70:73, 20:23] = True  # specks
    own = _own_glyphs(closed, 20, 100)
    assert own[40:100, 50:56].all() and not own[:, :30].any()


def test_a_subtitle_glued_to_a_cjk_sign_is_cut_where_the_recogniser_placed_its_characters() -> None:
    # The libass check set of third seeds (45_two-line): after a cut, "Give me five more minutes." over a painting
    # with a café sign "咖啡馆" and a "SALE 50%" plate beside it, read as one line of two detector boxes,
    # "咖啡馆 SAL Give me five more minutes.". The text was read centred just before, but counted as characters of
    # one width, its share of the line began 120 px left of where it is drawn (the sign's three CJK glyphs are as
    # wide as ten Latin letters): off-centre, the line was dropped for 14 frames and the cue ended there. Where the
    # recogniser aligned each character (char_cols) tells where the subtitle's words are; they keep the rows of the
    # box they were read in, not the taller sign's.
    from vidocr.engines.rapid import group_lines

    said = "Give me five more minutes."
    layout = SubtitleLayout(WIDTH)
    for _ in range(CENTRED_EVIDENCE + 1):
        assert layout.filter(OcrResult((_centred(said, 480, h=53, y=96),))).text == said
    sub = "SAL " + said
    at = (330.0, 352.0, 374.0, 392.0, *(float(c) for c in np.linspace(410, 876, len(said))))
    pieces = [(70.0, 57.0, 238.0, 141.0, "咖啡馆", 0.99), (318.0, 96.0, 883.0, 149.0, sub, 0.99)]
    (glued,) = group_lines(pieces, cols=[(85.0, 225.0), (325.0, 883.0)], chars=[(0.99,) * 3, (0.99,) * len(sub)],
                           at=[(100.0, 150.0, 200.0), at])
    assert glued.text == "咖啡馆 " + sub and glued.char_cols is not None and len(glued.char_cols) == len(glued.text)
    (kept,) = layout.filter(OcrResult((glued,))).lines
    assert kept.text == said
    assert kept.box is not None and (kept.box.y, kept.box.h) == (96, 53) and 400 <= kept.box.x <= 410
    # Counted as characters of one width, the same line is off-centre and dropped.
    assert layout.filter(OcrResult((replace(glued, char_cols=None),))).text == ""
    # Moved with its result, the characters' columns move too.
    moved = OcrResult((glued,)).shifted(5, 7).lines[0]
    assert moved.char_cols == tuple(c + 5 for c in glued.char_cols)


def test_a_sign_just_above_a_subtitle_line_is_not_joined_into_its_words() -> None:
    # The libass check set of new seeds (17_pale): a "NO PARKING" sign the camera panned just above "Where were you
    # last night?": its box's middle was inside the line's rows, so the two boxes were joined left to right into
    # "Where were you last night?NO PARKING", the sign's words inside the subtitle's columns. Boxes that share most
    # of their columns lie one above the other: two lines.
    from vidocr.engines.rapid import group_lines

    pieces = [(353.0, 60.0, 927.0, 120.0, "Where were you last night?", 0.98),
              (542.0, 37.0, 786.0, 91.0, "NO PARKING", 0.97)]
    assert [ln.text for ln in group_lines(pieces)] == ["NO PARKING", "Where were you last night?"]
    layout = SubtitleLayout(WIDTH)
    for _ in range(CENTRED_EVIDENCE + 1):
        layout.filter(OcrResult((_centred("(sighs)", 150, y=60),)))
    assert layout.filter(OcrResult(tuple(group_lines(pieces)))).text == "Where were you last night?"
    # Boxes side by side on a row (a badge before the subtitle, phrases of a CJK line) are still one line.
    assert [ln.text for ln in group_lines([(100.0, 60.0, 300.0, 120.0, "东西", 0.9),
                                          (380.0, 62.0, 700.0, 118.0, "要我帮你", 0.9)])] == ["东西 要我帮你"]
    # ... and so are two boxes of one line that overlap where the detector cut a word (the corpus's dev 08: 0.18 of
    # a line height apart), or a sign's plate low beside a subtitle's first word, on its rows (fourth seeds dev
    # 53_pale: 0.29; the layout cuts the sign off as text read off-centre).
    assert len(group_lines([(400.0, 89.0, 880.0, 135.0, "Can you hear me no", 0.9),
                            (864.0, 94.0, 903.0, 132.0, "w?", 0.9)])) == 1
    assert len(group_lines([(232.0, 44.0, 430.0, 72.0, "Why would an", 0.9),
                            (214.0, 51.0, 272.0, 84.0, "COLLINS", 0.9)])) == 1
