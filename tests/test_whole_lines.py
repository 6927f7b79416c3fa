"""Whole-line reads: a line PP-OCR's detector boxed in part (a pale subtitle's glyphs over a light picture) is read
again, recognition only, in the box a whole centred line would have (vidocr.ocrqueue.OcrWorker._whole_lines).

Seen on the libass corpus's new seeds (dev ``17_pale``): cream text with a thin grey outline over a white space suit.
The detector boxed "pen that door!" of "Don't open that door!" (off-centre, so the zone's layout dropped it and the
cue started 31 frames late) and "Why", "any", "do that?" of "Why would anyone do that?".
"""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from support.libass import Clip, Event, Scene, Style
from test_libass_classes import _passes

import vidocr
from vidocr import ocrqueue
from vidocr.engines import OcrEngine
from vidocr.layout import GLYPHS_ONLY_SURE
from vidocr.ocrqueue import WHOLE_SURE, OcrWorker, _filled, _grown, _whole_box, _whole_side
from vidocr.types import Box, OcrLine, OcrPart, OcrResult, Task

PALE = Style("DejaVu Sans", 0.065, colour=(250, 246, 225), outline=0.5, outline_colour=(120, 120, 110))


def _folds(path: Path, light_until: int) -> None:
    """A 1664 x 936 picture: light grey-white cloth folds (levels 225-255) left of column ``light_until``, orange
    right of it."""
    import cv2

    yy, xx = np.mgrid[0:936, 0:1664].astype(np.float32)
    folds = 240 + 8 * np.sin(xx / 3 + yy / 9) + 4 * np.sin(xx / 6.9 - yy / 3)
    picture = np.stack([folds - 3, folds - 1, folds], -1)
    picture[:, light_until:] = (40, 100, 215)
    cv2.imwrite(str(path), np.clip(picture, 0, 255).astype(np.uint8))


def _pale_clip(tmp_path: Path) -> Clip:
    _folds(tmp_path / "folds.png", 700)
    events = [Event(8, 38, "Don't open that door!"), Event(46, 76, "Why would anyone do that?")]
    return Clip(name="pale-part", half="test", seed=1, width=1280, height=720, fps=Fraction(25), frames=84,
                style=PALE, events=events, scenes=[Scene(0, str(tmp_path / "folds.png"), "still")])


def test_a_pale_line_the_detector_boxes_in_part_is_read_whole_with_exact_times(
    tmp_path: Path, rapid_engine: OcrEngine, monkeypatch: pytest.MonkeyPatch
) -> None:
    rendered, info = _passes(_pale_clip(tmp_path), tmp_path, rapid_engine)
    assert info.stats.ocr_whole_kept and info.stats.ocr_whole_reads

    # Without the whole-line reads, the detector's part of each line is all there is.
    monkeypatch.setattr(ocrqueue, "_whole_box", lambda line, width: None)
    cues_iter, info = vidocr.extract(rendered.video, engine=rapid_engine)
    texts = [cue.text for cue in cues_iter]
    assert texts != [cue.text for cue in rendered.cues]
    assert not info.stats.ocr_whole_reads


def _line(text: str, x: int, w: int, parts: tuple[OcrPart, ...] = ()) -> OcrLine:
    return OcrLine(text, 0.99, box=Box(x, 100, w, 50), parts=parts)


def test_the_whole_box_is_the_mirror_of_an_off_centre_line_or_a_gapped_centred_line() -> None:
    width = 1280
    # Off the middle, reaching across it or near it: widened to its mirror image about the middle.
    assert _whole_box(_line("pen that door!", 568, 272), width) == Box(440, 100, 400, 50)
    assert _whole_box(_line("hat door!", 657, 206), width) == Box(417, 100, 446, 50)
    # A sign far to one side is not read again; nor is a centred line of one box.
    assert _whole_box(_line("SALE 50%", 52, 235), width) is None
    assert _whole_box(_line("Where were you?", 440, 400), width) is None
    # A centred line joined from boxes a gap wider than its height apart: its whole box; word gaps are not.
    gapped = (OcrPart(0, 3, Box(365, 100, 80, 50)), OcrPart(4, 7, Box(560, 100, 70, 50)),
              OcrPart(8, 16, Box(700, 100, 199, 50)))
    assert _whole_box(_line("Why any do that?", 365, 534, gapped), width) == Box(365, 100, 534, 50)
    spaced = (OcrPart(0, 3, Box(365, 100, 80, 50)), OcrPart(4, 16, Box(460, 100, 439, 50)))
    assert _whole_box(_line("Why any do that?", 365, 534, spaced), width) is None


def test_a_line_the_layout_calls_centred_is_read_whole_when_a_glyph_at_one_end_is_missing() -> None:
    """Seen on the corpus (third dev ``38_kana-shadow``): the detector boxed "橋のところで左に曲がっ" of
    "橋のところで左に曲がって" (its last kana over a brown motor block), 19 px off the middle of a 1280 px band,
    within what the layout calls centred; the whole read reads the last kana. A line half a glyph or more off the
    middle is read whole in its mirror box; a line off by less (punctuation, rounding) is not."""
    width = 1280
    assert _whole_box(_line("橋のところで左に曲がっ", 374, 494), width) == Box(374, 100, 532, 50)
    assert _whole_side(_line("橋のところで左に曲がっ", 374, 494), width) == 1  # grows rightwards
    assert _whole_side(_line("のところで左に曲がって", 412, 494), width) == -1
    assert _whole_box(_line("Where were you?", 436, 400), width) is None  # 4 px off
    assert _whole_box(_line("Where were you?", 431, 400), width) is None  # 9 px off: a fifth of its height


def test_a_glyph_the_glyphs_alone_lost_inside_a_word_is_taken_from_the_picture() -> None:
    """Seen on the corpus (third check ``37_cuts``): a CJK subtitle over a page of print, read with its glyphs
    alone as "他说明天上回来" (0.99; 早's outline ran into the print), read in the picture inside the line's box as
    "他说明天早上回来" (0.986). The picture read is kept when sure (GLYPHS_ONLY_SURE) and it adds characters
    inside the glyph read's words only: print behind the line is read beside it or in its word gaps."""
    assert _filled("他说明天上回来", "他说明天早上回来")
    assert _filled("I found the leter", "I found the letter")
    assert not _filled("他说明天早上回来", "他说明天早上回来")  # nothing added
    assert not _filled("他说明天上回来", "他说明天早上回来了")  # after its last character
    assert not _filled("他说明天上回来", "er他说明天早上回来")  # before its first
    assert not _filled("Where were you", "Where werexyou")  # in place of a space
    assert not _filled("Where were you", "Wherewereyou")

    class Picture:
        """Reads every image as ``text`` (the line's box cut from the picture)."""

        name, tasks, preferred_batch = "picture", frozenset({Task.SUBTITLE}), 8

        def __init__(self, text: str, sure: float) -> None:
            self.text, self.sure = text, sure

        def recognize(self, images: list[np.ndarray], task: Task) -> list[OcrResult]:
            return [OcrResult((OcrLine(self.text, self.sure, box=Box(4, 4, 200, 36)),)) for _ in images]

        def close(self) -> None:
            pass

    glyphs = OcrResult((OcrLine("他说明天上回来", 0.99, box=Box(497, 58, 284, 40)),))
    crop = np.zeros((128, 1280, 3), np.uint8)
    for text, sure, kept in (("他说明天早上回来", 0.986, "他说明天早上回来"),
                             ("他说明天早上回来", GLYPHS_ONLY_SURE - 0.05, "他说明天上回来"),
                             ("他说明天早上回来了", 0.986, "他说明天上回来")):
        worker = OcrWorker(Picture(text, sure), Task.SUBTITLE, batch=8, queue_size=8)  # type: ignore[arg-type]
        assert worker._in_picture([glyphs], [crop])[0].text == kept, (text, sure)
        worker.close()


def test_a_whole_read_is_kept_when_it_adds_characters_on_its_side_and_has_the_first_reads_words_in_order() -> None:
    assert _grown("pen that door!", "Don't open that door!", -1)  # widened leftwards
    assert _grown("Don't open", "Don't open that door!", 1)  # rightwards
    assert _grown("Why any do that?", "Why would anyone do that?", 0)  # between its boxes
    assert not _grown("Why would anyone dothat?", "why would anyone dothat?", 0)  # not more characters
    assert not _grown("that door!", "door! that is", -1)  # the words out of order
    assert not _grown("OPEN 24 HOURS", "OPEN 2A HOURS x", -1)  # a word not in it
    # Characters added on the other side are picture detail (a sign's plate edge read "K").
    assert not _grown("OPEN 24 HOURS", "OPEN 24 HOURSK", -1)
    assert not _grown("Don't open", "ADon't open", 1)
    assert not _grown("Why any do that?", "Why would anyone do that? I", 0)


class _Band:
    """A band-wide image (as wide as a band crop) reads as part of the line, off-centre; a narrower one (the line's
    whole box) as ``whole``, centred in the band. Images whose first pixel is 1 read the part unsure."""

    name = "band"
    tasks = frozenset({Task.SUBTITLE})
    preferred_batch = 8

    def __init__(self, whole: tuple[str, float]) -> None:
        self.whole, self.lines_read = whole, 0

    def recognize(self, images: list[np.ndarray], task: Task) -> list[OcrResult]:
        out = []
        for image in images:
            if image.shape[1] >= 1280:
                sure = 0.8 if image[0, 0, 0] == 1 else 0.998
                out.append(OcrResult((OcrLine("pen that door!", sure, box=Box(568, 20, 272, 60)),)))
            else:
                self.lines_read += 1
                height, width = image.shape[:2]
                out.append(OcrResult((OcrLine(*self.whole, box=Box(8, 4, width - 16, height - 8)),)))
        return out

    def close(self) -> None:
        pass


@pytest.mark.parametrize(("whole", "kept"), [
    (("Don't open that door!", 0.98), "Don't open that door!"),
    (("Don't open that door!", WHOLE_SURE - 0.05), "pen that door!"),  # not sure enough
    (("Dont ope that dor", 0.99), "pen that door!"),  # not the first read's words
])
def test_the_worker_reads_a_part_boxed_line_whole_and_keeps_it_only_when_sure_and_grown(
    whole: tuple[str, float], kept: str
) -> None:
    engine = _Band(whole)
    worker = OcrWorker(engine, Task.SUBTITLE, batch=8, queue_size=8)  # type: ignore[arg-type]
    worker.submit(1, np.zeros((100, 1280, 3), np.uint8))
    worker.close()
    line = worker.take()[1].lines[0]
    assert line.text == kept
    assert (worker.whole_reads, worker.whole_kept, engine.lines_read) == (1, int(kept != "pen that door!"), 1)
    if kept != "pen that door!":
        # The whole read's box, moved into the crop's pixels: the part's mirror image about the middle (440-840).
        assert line.box is not None and abs(line.box.x - 440) <= 2 and abs(line.box.x + line.box.w - 840) <= 2


def test_a_read_of_the_mean_over_frames_is_not_read_whole() -> None:
    """A fused read (vidocr.ocrqueue.FUSE_BELOW) may hold a few faint frames of the next subtitle: its lines are
    not read again whole (on the corpus, a gap's mean read a kana line that started 5 frames later)."""
    engine = _Band(("Don't open that door!", 0.98))
    worker = OcrWorker(engine, Task.SUBTITLE, batch=8, queue_size=8)  # type: ignore[arg-type]
    worker.submit(1, np.ones((100, 1280, 3), np.uint8), fused=np.zeros((100, 1280, 3), np.uint8))
    worker.close()
    assert worker.take()[1].text == "pen that door!"
    assert (worker.fused_kept, worker.whole_reads, engine.lines_read) == (1, 0, 0)
