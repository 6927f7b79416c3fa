"""The subtitle layout filter: printed text in the picture is not read into subtitle cues."""

from __future__ import annotations

from vidocr.layout import CENTRED_EVIDENCE, SubtitleLayout
from vidocr.types import Box, OcrLine, OcrResult

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


def test_user_boxes_are_not_filtered() -> None:
    layout = SubtitleLayout(WIDTH, enabled=False)
    read = OcrResult((_line("NO PARKING", 90, 200), _centred("Hello.", 150)))
    assert layout.filter(read).text == "NO PARKING\nHello."
