"""A cue whose text came from unsure reads is read once more on the mean of the band over its frames
(vidocr.pipeline.ExtractOptions.polish, vidocr.pipeline._Polisher), and takes that read's text where it is surer,
has as many lines and reads like it."""

from __future__ import annotations

from fractions import Fraction
from types import SimpleNamespace

import numpy as np

from vidocr.detect import ReadReason, ReadRequest, Segment, SegmentEnded, SegmentStarted
from vidocr.pipeline import POLISH_MIN_FRAMES, ExtractOptions, _Reads, _Zone
from vidocr.region import Region
from vidocr.types import Box, Cue, OcrLine, OcrResult, Timestamp

FPS = 25
TB = Fraction(1, FPS)
BAND = Box(0, 260, 640, 100)


class _Frame:
    """A decoded frame every pixel of which is ``value``."""

    def __init__(self, index: int, value: int) -> None:
        self.ts = Timestamp(index, TB)
        self.value = value

    def bgr(self, box: Box) -> np.ndarray:
        return np.full((box.h, box.w, 3), self.value, np.uint8)


class _Sent:
    """Stands for the OCR worker: the images sent, by read id."""

    def __init__(self) -> None:
        self.images: dict[int, np.ndarray] = {}

    def submit(self, read_id: int, image: np.ndarray, prior: object = None, *, page: bool = False,
               fused: np.ndarray | None = None) -> None:
        self.images[read_id] = image


def _shown(first: int, last: int, value: int = 100) -> tuple[_Zone, _Sent, _Reads]:
    """A zone that saw blank frames (value 7) before frame ``first``, a text segment of frames ``first``-``last``
    (``value``), and three frames of the next state (250) before the detector told the segment's end."""
    zone = _Zone(Region(BAND, "auto", 12, 48, (320, 340)), ExtractOptions(), float(FPS))
    zone.detector = SimpleNamespace(unlike=False)  # type: ignore[assignment]
    sent = _Sent()
    reads = _Reads(sent, 360)  # type: ignore[arg-type]
    seg = Segment(0, Timestamp(first, TB), True, np.zeros((4, 4), np.uint8), [], 0.0)
    for k in range(first - 5, first):
        zone.handle([], _Frame(k, 7), reads)  # type: ignore[arg-type]
    zone.handle([SegmentStarted(seg), ReadRequest(seg, Timestamp(first, TB), Timestamp(first, TB), ReadReason.NEW)],
                _Frame(first, value), reads)  # type: ignore[arg-type]
    for k in range(first + 1, last + 1):
        zone.handle([], _Frame(k, value), reads)  # type: ignore[arg-type]
    for k in range(last + 1, last + 4):
        zone.handle([], _Frame(k, 250), reads)  # type: ignore[arg-type]
    zone.handle([SegmentEnded(seg, Timestamp(last + 1, TB))], _Frame(last + 4, 250), reads)  # type: ignore[arg-type]
    return zone, sent, reads


def _cue(first: int, last: int, text: str, confidence: float) -> Cue:
    return Cue(first * 1000 // FPS, (last + 1) * 1000 // FPS, text, confidence, box=Box(100, 300, 400, 20))


def _result(text: str, confidence: float) -> OcrResult:
    return OcrResult(tuple(OcrLine(line, confidence, box=Box(100, 20, 400, 24)) for line in text.split("\n")))


def test_an_unsure_cue_is_read_on_the_mean_of_its_own_frames_and_takes_the_surer_text() -> None:
    zone, sent, reads = _shown(10, 60)
    polish_ids = set(sent.images) - {1}  # read 1: the segment's own read (its fused mean is not of interest here)
    assert not polish_ids
    zone.polisher.hold(_cue(10, 60, "Wherewere yoi", 0.8), zone, reads)  # type: ignore[union-attr]
    (read_id,) = set(sent.images) - {1}
    mean = sent.images[read_id]
    # Neither the blank frames before it nor the next state's frames, seen before its end was told, are in it.
    assert mean.min() == mean.max() == 100
    assert mean.shape[1] == BAND.w and mean.shape[0] < BAND.h  # the cue's rows with a line's margin
    assert list(zone.named([], reads, last=True)) == []  # held until its read is back
    reads.results[read_id] = _result("Where were you", 0.99)
    assert list(zone.named([], reads)) == []  # and, the merger not done, until the cue after it is known
    (cue,) = zone.named([], reads, last=True)
    assert (cue.text, cue.confidence) == ("Where were you", 0.99)
    assert zone.polisher.kept == 1  # type: ignore[union-attr]


def test_a_sure_cue_or_one_of_few_frames_is_not_read_again_and_later_cues_wait_in_order() -> None:
    zone, sent, reads = _shown(10, 60)
    zone.polisher.hold(_cue(10, 60, "Where were you", 0.99), zone, reads)  # type: ignore[union-attr]
    assert set(sent.images) == {1}
    few = 2 * POLISH_MIN_FRAMES - 4  # every other frame is summed (10 of 25 fps): fewer than POLISH_MIN_FRAMES
    zone, sent, reads = _shown(10, 10 + few)
    zone.polisher.hold(_cue(10, 10 + few, "Wherewere yoi", 0.8), zone, reads)  # type: ignore[union-attr]
    assert set(sent.images) == {1}
    # A cue whose read is out holds back the sure cue after it.
    zone, sent, reads = _shown(10, 60)
    out = list(zone.named([_cue(10, 60, "Wherewere yoi", 0.8), _cue(62, 90, "Yes.", 1.0)], reads))
    assert out == []
    (read_id,) = set(sent.images) - {1}
    reads.results[read_id] = _result("Where were you", 0.99)
    assert [c.text for c in zone.named([], reads)] == ["Where were you"]
    assert [c.text for c in zone.named([], reads, last=True)] == ["Yes."]


def test_the_means_read_is_not_taken_when_it_is_less_sure_other_text_or_has_another_line_count() -> None:
    for read, why in (
        (_result("Wherewere yoi", 0.7), "less sure"),
        (_result("Main Street", 0.99), "other text: a blend of two subtitles, or a sign"),
        (_result("Where were you\nMain Street", 0.99), "a line more"),
    ):
        zone, sent, reads = _shown(10, 60)
        zone.polisher.hold(_cue(10, 60, "Wherewere yoi", 0.8), zone, reads)  # type: ignore[union-attr]
        (read_id,) = set(sent.images) - {1}
        reads.results[read_id] = read
        (cue,) = zone.named([], reads, last=True)
        assert (cue.text, cue.confidence) == ("Wherewere yoi", 0.8), why


def test_two_cues_that_meet_and_read_the_same_once_read_again_are_one() -> None:
    # Seen at 360p (fourth seeds dev 54_lowres): "Don't open that door!", then over a cut "Don't open that docr!"
    # voted from unsure reads; the merger keeps same-length texts apart when the masks differ (a line changed in
    # place by a glyph). Read again on its mean, the second reads as the first: one subtitle, as the merger joins.
    zone, sent, reads = _shown(30, 60)
    first = _cue(10, 29, "Don't open that door!", 0.97)
    out = list(zone.named([first, _cue(30, 60, "Don't open that docr!", 0.93), _cue(62, 90, "Yes.", 1.0)], reads))
    assert out == []
    (read_id,) = set(sent.images) - {1}
    reads.results[read_id] = _result("Don't open that door!", 0.99)
    (cue,) = zone.named([], reads)
    assert (cue.start_ms, cue.end_ms, cue.text) == (first.start_ms, 61 * 1000 // FPS, "Don't open that door!")
    assert [c.text for c in zone.named([], reads, last=True)] == ["Yes."]
    # Not when a frame lies between them (a gap), nor when they still read differently.
    for gap, text in ((1, "Don't open that door!"), (0, "Don't open that docr!")):
        zone, sent, reads = _shown(30, 60)
        cues = [_cue(10, 29 - gap, "Don't open that door!", 0.97), _cue(30, 60, "Don't open that docr!", 0.93)]
        assert list(zone.named(cues, reads)) == []
        (read_id,) = set(sent.images) - {1}
        reads.results[read_id] = _result(text, 0.99 if gap else 0.6)
        assert len(list(zone.named([], reads, last=True))) == 2, (gap, text)
