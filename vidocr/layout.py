"""Which OCR lines of a band are subtitle lines: printed text in the picture (signs, book pages, shirts) is not.

Subtitles are laid out by a renderer: each line centred on the frame (or the lines of a block sharing a left or
right edge), in one font size through a video. Text in the picture sits wherever the camera put it, at any size.
A :class:`SubtitleLayout` per zone learns this from the reads it sees and keeps only the lines that fit:

- a line is *centred* when its centre is within a few percent of the band's width from the band's centre;
- a line is kept when it is centred, or shares a left or right edge with a centred line of the same read (a dash
  dialogue laid out as a left-aligned block), and its height is that of the subtitle lines seen so far (small
  print and large signs are other sizes);
- a read whose lines are all off-centre is picture text once the zone's subtitles have shown they are centred
  (CENTRED_EVIDENCE reads, nearly all centred); before that, and in zones whose subtitles are not centred
  (positioned signs, left-aligned styles), such reads are kept as they are.

Only for bands as wide as the frame: a user's box may not be centred on the subtitles.
"""

from __future__ import annotations

import statistics
from collections import deque
from dataclasses import replace

from vidocr.types import Box, OcrLine, OcrResult

#: A centred line's centre lies within this share of the band width (plus a share of its height, for
#: punctuation and italics) of the band's centre. Measured: rendered subtitles 0-0.8% (libass, PIL, real
#: footage), signs and pages in the picture 2-20%.
CENTRE_TOLERANCE = 0.012
#: Lines whose height is outside these multiples of the subtitle lines' median height are another text.
HEIGHT_RANGE = (0.55, 1.8)
#: Reads with a centred line that it takes before off-centre reads count as picture text.
CENTRED_EVIDENCE = 3
#: ... and the share of recent reads with text that must have had a centred line.
CENTRED_SHARE = 0.8


class SubtitleLayout:
    """Learns a zone's subtitle layout from its reads (in time order) and drops the lines that do not fit."""

    def __init__(self, band_width: int, enabled: bool = True) -> None:
        self.width = band_width
        self.enabled = enabled
        self._heights: deque[int] = deque(maxlen=64)  # heights of kept centred lines
        self._centred: deque[bool] = deque(maxlen=20)  # per read with text: had a centred line
        self.dropped = 0

    def centred(self, box: Box) -> bool:
        centre = box.x + box.w / 2
        return abs(centre - self.width / 2) <= CENTRE_TOLERANCE * self.width + 0.15 * box.h

    def _height_fits(self, box: Box) -> bool:
        if len(self._heights) < 3:
            return True
        median = statistics.median(self._heights)
        return HEIGHT_RANGE[0] * median <= box.h <= HEIGHT_RANGE[1] * median

    def _proven_centred(self) -> bool:
        seen = self._centred
        return sum(seen) >= CENTRED_EVIDENCE and sum(seen) >= CENTRED_SHARE * len(seen)

    def filter(self, result: OcrResult) -> OcrResult:
        """``result`` (boxes in band coordinates) without the lines that are not subtitle lines."""
        if not self.enabled or not result.lines or any(ln.box is None for ln in result.lines):
            return result
        lines = result.lines
        anchors = [ln for ln in lines if self.centred(_box(ln)) and self._height_fits(_box(ln))]
        if anchors:
            kept = tuple(ln for ln in lines if ln in anchors or self._aligned(ln, anchors))
        elif self._proven_centred():
            kept = ()
        else:
            kept = lines
        if any(ln.text.strip() for ln in lines):
            self._centred.append(bool(anchors))
        self._heights.extend(_box(ln).h for ln in anchors)
        if len(kept) == len(lines):
            return result
        self.dropped += len(lines) - len(kept)
        return replace(result, lines=kept)

    def _aligned(self, line: OcrLine, anchors: list[OcrLine]) -> bool:
        """A line of a left- or right-aligned block whose longest line is centred, at the same size."""
        box = _box(line)
        if not self._height_fits(box):
            return False
        for anchor in anchors:
            a = _box(anchor)
            slack = 0.5 * max(a.h, box.h)
            if HEIGHT_RANGE[0] * a.h <= box.h <= HEIGHT_RANGE[1] * a.h and (
                abs(a.x - box.x) <= slack or abs((a.x + a.w) - (box.x + box.w)) <= slack
            ):
                return True
        return False


def _box(line: OcrLine) -> Box:
    assert line.box is not None
    return line.box
