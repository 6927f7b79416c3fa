"""Which OCR lines of a band are subtitle lines: printed text in the picture (signs, book pages, shirts) is not.

Subtitles are laid out by a renderer: each line centred on the frame (or the lines of a block sharing a left or
right edge), in one font size through a video. Text in the picture sits wherever the camera put it, at any size.
A :class:`SubtitleLayout` per zone learns this from the reads it sees and keeps only the lines that fit:

- a line is *centred* when its centre is within a few percent of the band's width from the zone's axis: the
  band's middle until AXIS_EVIDENCE centred lines were kept, then their median centre (a band cut from the frame
  off its middle, a renderer whose left and right margins differ: on a real anime strip the subtitles sit 1-3%
  right of the strip's middle, and long lines were dropped once the zone had proven its subtitles centred);
- a line is kept when it is centred, or shares a left or right edge with a centred line of the same read (a dash
  dialogue laid out as a left-aligned block), and its height is that of the subtitle lines seen so far (small
  print and large signs are other sizes);
- a read whose lines are all off-centre is picture text once the zone's subtitles have shown they are centred
  (CENTRED_EVIDENCE reads, nearly all centred); before that, and in zones whose subtitles are not centred
  (positioned signs, left-aligned styles), such reads are kept as they are. A still sign read again and again
  (in every gap between subtitles) is one off-centre text, not as many off-centre reads;
- a line beside the centred lines shares their left or right edge only as a line of their block (a row next to
  theirs): a sign further up the picture may line up with a subtitle's edge by chance.

Reads judged before the zone has that evidence (kept whole without a centred line, or keeping print before the
video showed light glyphs: :meth:`SubtitleLayout.read`) are judged again (:meth:`SubtitleLayout.judged`) when
their segment is merged, which waits for the evidence or HOLD_READS reads (:meth:`SubtitleLayout.waiting`): a
video often opens on a sign or a page before its first subtitle. A line whose text the zone went on to read
centred is kept then: the subtitle's first read, whose text columns were not sure yet.

Only for bands as wide as the frame: a user's box may not be centred on the subtitles.

Independently of where a line is, its *glyph fill* tells subtitle from print (:func:`glyph_fill`): a subtitle
glyph is a light shape closed off by a darker outline, shadow or box, while printed text in the picture (book
pages, letters, labels) is dark ink on light paper, whose light pixels beside the strokes are the open page.
Dark text on a light box is also a subtitle style (short-video captions), so lines measured as print are dropped
only once the zone has shown light-glyph subtitles (LIGHT_EVIDENCE lines); then in every zone, user boxes too.
"""

from __future__ import annotations

import os
import statistics
from collections import OrderedDict, deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from difflib import SequenceMatcher

import cv2
import numpy as np

from vidocr.textmask import closed_light, glyph_pixels
from vidocr.textnorm import comparable, text_similarity
from vidocr.types import Box, OcrLine, OcrPart, OcrResult

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
#: Lines whose glyph fill (see :func:`glyph_fill`) is at most this are print in the picture. Measured on both
#: halves of the libass corpus (bench/libass_corpus.py), the samples and real clips: dark print on pages and
#: labels 0.00-0.13, subtitles 0.27-1.00 in every style (outline, shadow only, boxes, pale, 360p CJK); a
#: subtitle glued to print in one OCR box 0.13-0.27.
PRINT_FILL_MAX = 0.18
#: ... and lines up to this fill may be a subtitle glued to print in one box: such reads are read again with the
#: closed light glyphs alone (:func:`glyph_image`).
GLUED_FILL_MAX = 0.35
#: A line whose columns (in steps of half its height) are subtitle-like (glyph fill above PRINT_FILL_MAX) for at
#: least this many line heights in one run, and print-like for as many beside it, is a subtitle glued to print in
#: one detector box: the run is read alone (see glued_run).
GLUED_RUN = 2.0
#: A line whose text the recogniser read at least this many line heights past its closed light glyphs (the ink) on
#: one side is a subtitle glued to text that has no glyph fill (dark letters on a sign): its glyphs are read alone.
TEXT_PAST_INK = 1.0
#: Lines read with the glyphs alone at least this sure are believed (picture detail read alone gives unsure
#: specks: 0.58-0.78 on the libass corpus; subtitles over pages 0.85-1.0).
GLYPHS_ONLY_SURE = 0.85
#: Text drawn further sideways than this share of its line height, and of the band's width, from where the same
#: text was read before has moved: picture text (where a still line is measured varies by a few pixels: its
#: box may take in picture detail, a short coloured line's glyphs may be measured or not).
MOVED = 0.25
MOVED_WIDTH = 0.02
#: Lines with glyph fill above PRINT_FILL_MAX a zone must have read before it drops print (until then, and in
#: zones whose subtitles are dark text on a light box, such lines are kept).
LIGHT_EVIDENCE = 3
#: Centred lines a zone must have kept before it centres lines on their median centre, not the band's middle.
AXIS_EVIDENCE = 3
#: Reads with text a zone judges before reads it judged on too little evidence are taken as they are (a zone
#: whose subtitles are not centred never proves them centred; cues wait at most this long to come out).
HOLD_READS = 24
#: A line whose box comes within this many pixels of the band's left or right end is cut by the frame's border.
EDGE_PX = 1
#: Texts at least this similar are one subtitle read twice (as vidocr.merge's ``same_read``).
SAME_TEXT = 0.75
#: Reads a text read off-centre must have been in before a subtitle line is cut free of it (a sign's text is read
#: the same again; a subtitle glued to a sign is read differently each time).
SIGN_READS = 2
#: An ellipsis drawn on from a line's glyphs: at least ELLIPSIS_DOTS dots within ELLIPSIS_REACH line heights, each at
#: most DOT_SIZE line heights across and DOT_GAP from the last (see _over_dots).
ELLIPSIS_DOTS = 3
ELLIPSIS_REACH = 4.0
DOT_SIZE = 0.3
DOT_GAP = 0.6
#: A line off the axis is drawn on the subtitles' rows when its top and its bottom are each within this share of its
#: height of those of a line kept centred lately; such a line that reaches at least ROWS_REACH line heights past the
#: axis on either side is a subtitle drawn off-centre (a narrator's lines placed left of the others).
ROWS_SLACK = 0.15
ROWS_REACH = 1.0
#: ... and its height is within these multiples of the kept centred lines' median height, and its text and its light
#: glyphs (its ink, see with_fill) begin and end within ROWS_INK line heights of each other.
ROWS_HEIGHT = (0.75, 1.33)
ROWS_INK = 0.5
#: Closed light regions smaller than this many line heights across, squared, are specks, not glyph fill: the grain of a
#: light plate (a sign beside a subtitle) has one-pixel highlights closed off by darker grain (see _own_glyphs).
SPECK = 0.05
#: Lines of one left- or right-aligned block are at most this many line heights apart (rendered line spacing
#: leaves 0-0.5).
BLOCK_GAP = 0.8


@dataclass
class GlyphEvidence:
    """What a video's reads showed of its subtitles' glyphs so far (shared by its zones)."""

    light: int = 0  # lines with light, outlined glyphs (glyph fill above PRINT_FILL_MAX)


class SubtitleLayout:
    """Learns a zone's subtitle layout from its reads (in time order) and drops the lines that do not fit."""

    def __init__(self, band_width: int, enabled: bool = True, glyphs: GlyphEvidence | None = None) -> None:
        self.width = band_width
        self.enabled = enabled
        self._heights: deque[int] = deque(maxlen=64)  # heights of kept centred lines
        self._centres: deque[float] = deque(maxlen=32)  # where the kept centred lines' text was centred
        self._centred: deque[bool] = deque(maxlen=20)  # per read with text: had a centred line
        self._offcentre: OrderedDict[str, None] = OrderedDict()  # texts of the reads without a centred line
        self._reads = 0  # reads with text judged
        self._said: deque[str] = deque(maxlen=32)  # texts of the latest centred lines
        self._rows: deque[tuple[int, int]] = deque(maxlen=32)  # the rows (top, bottom) of the latest centred lines
        #: Texts of the latest lines read off-centre (signs, print), the columns their text was drawn at last and
        #: how many reads had them.
        self._aside: OrderedDict[str, tuple[tuple[int, int], int]] = OrderedDict()
        #: Lines read with light, outlined glyphs (see glyph_fill), shared by the zones of a video: a zone over a
        #: book page may see none of the video's subtitles.
        self.glyphs = glyphs or GlyphEvidence()
        #: Where each recent text was drawn (its first and end column), and the texts seen to move sideways.
        self._columns: OrderedDict[str, tuple[int, int]] = OrderedDict()
        self._moving: set[str] = set()
        self._refused: OrderedDict[str, None] = OrderedDict()  # texts of lines dropped as not fitting the layout
        self.dropped = 0

    def centred(self, box: Box, cols: tuple[int, int] | None = None) -> bool:
        """Whether a line's text is centred: by ``cols`` when known (where the text is, :func:`_text_cols`: the
        detector's box may take in picture detail beside it), else by its box."""
        return centred_about(box, cols, self.axis, self.width)

    def _line_centred(self, line: OcrLine) -> bool:
        return self.centred(_box(line), self._centred_cols(line))

    def _centred_cols(self, line: OcrLine) -> tuple[int, int] | None:
        """Where a line's text is drawn, to centre it by (see centred): where the recogniser aligned it, unless
        that is off-centre and the line's closed light glyphs (its ink), which take in all it aligned, are
        centred: the recogniser skipped a first or last glyph it could not read ("诶？" read "？"). Text it
        aligned outside the glyphs is a sign glued to the line."""
        box, cols, ink = _box(line), _text_cols(line), line.ink
        if self.centred(box, cols) or ink is None or cols is None:
            return cols
        slack = 0.25 * box.h
        inside = ink[0] - slack <= cols[0] and cols[1] <= ink[1] + slack
        return ink if inside and self.centred(box, ink) else cols

    @property
    def axis(self) -> float:
        """The column the zone's subtitles are centred on: the band's middle until AXIS_EVIDENCE centred lines
        were kept, then the median of their centres (a band cut from the frame off its middle, a renderer whose
        margins differ left and right)."""
        if len(self._centres) < AXIS_EVIDENCE:
            return self.width / 2
        return statistics.median(self._centres)

    def _height_fits(self, box: Box) -> bool:
        if len(self._heights) < 3:
            return True
        median = statistics.median(self._heights)
        return HEIGHT_RANGE[0] * median <= box.h <= HEIGHT_RANGE[1] * median

    def _proven_centred(self) -> bool:
        seen = self._centred
        return sum(seen) >= CENTRED_EVIDENCE and sum(seen) >= CENTRED_SHARE * len(seen)

    def filter(self, result: OcrResult) -> OcrResult:
        """``result`` (boxes in band coordinates) without the lines that are not subtitle lines; the layout
        learns from it."""
        return self.read(result)[0]

    def read(self, result: OcrResult) -> tuple[OcrResult, bool]:
        """:meth:`filter`, and whether ``result`` was judged on too little evidence (kept whole without a
        centred line before the zone proved its subtitles centred, or with lines of print before the video
        showed light glyphs; never once the zone judged HOLD_READS reads with text): then
        :meth:`judged` judges it again once :meth:`waiting` says the evidence is in."""
        self.glyphs.light += sum(ln.fill is not None and ln.fill > PRINT_FILL_MAX for ln in result.lines)
        early = self._reads < HOLD_READS
        kept, dropped, unsure = self._judge(result, learn=True)
        self.dropped += dropped
        return kept, early and unsure

    def waiting(self, result: OcrResult) -> bool:
        """Whether a read that :meth:`read` judged on too little evidence still waits for it."""
        return self._reads < HOLD_READS and self._judge(result, learn=False)[2]

    def judged(self, result: OcrResult, earlier: OcrResult) -> OcrResult:
        """``result`` (a read given to :meth:`read`, which kept ``earlier`` of it) judged again on what the
        zone knows now, learning nothing from it."""
        again, _, _ = self._judge(result, learn=False)
        self.dropped += max(0, len(earlier.lines) - len(again.lines))
        return again

    def _judge(self, result: OcrResult, learn: bool) -> tuple[OcrResult, int, bool]:
        """``result`` without the lines that are not subtitle lines, how many lines were dropped (print, then
        lines that do not fit the layout; lines added from its glyphs-only read do not count), and whether
        evidence still to come may drop lines it keeps (lines of print before the video showed light glyphs, or
        lines none of which is centred before the zone proved its subtitles centred); ``learn``: the layout learns
        from it."""
        light = self.glyphs.light >= LIGHT_EVIDENCE
        unsure = self.enabled and not light and any(_fill_at_most(ln, PRINT_FILL_MAX) for ln in result.lines)
        doubtful = self._doubtful_glyphs(result) if light else ()
        result, dropped = self._without_print(result, drop=light)
        if not self.enabled or not result.lines or any(ln.box is None for ln in result.lines):
            return _with_doubtful(result, doubtful), dropped, unsure
        lines = self._still(tuple(ln for ln in map(self._trimmed, result.lines) if not self._cut_by_frame(ln)), learn)
        anchors = self._anchors(lines)
        proven = self._proven_centred()
        unsure = unsure or (not proven and bool(lines) and not anchors)
        aside = self._off_axis(lines, anchors) if proven else []
        if anchors or aside:
            kept = self._block(lines, [*anchors, *aside])
        elif proven:
            # Judged again: a line the zone went on to read centred was its subtitle, read before it was sure
            # where the line's text was drawn (its first read at low resolution).
            kept = () if learn else tuple(ln for ln in lines if self._said_centred(ln.text))
        else:
            kept = lines
        if learn:
            self._learn(lines, anchors, kept)
        if kept == result.lines:
            return result, dropped, unsure
        return _with_doubtful(replace(result, lines=kept), doubtful), dropped + len(result.lines) - len(kept), unsure

    def _doubtful_glyphs(self, result: OcrResult) -> tuple[OcrLine, ...]:
        """The centred lines of ``result``'s glyphs-only read too unsure to take (under GLYPHS_ONLY_SURE): a subtitle
        over a page of print its first frames read unsurely, or print the glyph image kept. Once the zone proved
        where its subtitles are drawn."""
        alone = result.glyphs_only
        if alone is None or not self._proven_centred():
            return ()
        return tuple(
            ln for ln in alone.lines
            if ln.box is not None and ln.confidence < GLYPHS_ONLY_SURE and comparable(ln.text)
            and self._line_centred(ln) and self._height_fits(ln.box)
        )

    def _part_of_said(self, text: str) -> bool:
        """``text`` is most of a part of a longer text read centred lately: its characters, in order, make up at least
        SAME_TEXT of it."""
        key = comparable(text)
        return any(len(comparable(said)) > len(key) and _reads_within(text, said) for said in dict.fromkeys(self._said))

    def _said_centred(self, text: str) -> bool:
        return any(text_similarity(text, said) >= SAME_TEXT for said in self._said)

    def _anchors(self, lines: tuple[OcrLine, ...]) -> list[OcrLine]:
        return [ln for ln in lines if self._line_centred(ln) and self._height_fits(_box(ln))]

    def _off_axis(self, lines: tuple[OcrLine, ...], anchors: list[OcrLine]) -> list[OcrLine]:
        """Lines of ``lines`` that are subtitles drawn off-centre, once the zone proved its subtitles centred: on the
        rows centred lines were drawn on lately (top and bottom within ROWS_SLACK of a line height) at their size
        (ROWS_HEIGHT), across the axis (at least ROWS_REACH line heights each side), their text (where the
        recogniser aligned it) where their light glyphs are (ROWS_INK), no anchor on their rows, and not a part of a
        text read centred lately. Text in the picture seldom lies on those rows at that size across the middle; a
        subtitle placed off the axis (a narrator's lines drawn left of the others) does."""
        if len(self._heights) < 3:
            return []
        usual = statistics.median(self._heights)
        found = []
        for ln in lines:
            box, cols, ink = _box(ln), ln.text_cols, ln.ink
            if ln in anchors or cols is None or ink is None or _fill_at_most(ln, PRINT_FILL_MAX):
                continue
            reach, slack = ROWS_REACH * box.h, ROWS_SLACK * box.h
            if not ROWS_HEIGHT[0] * usual <= box.h <= ROWS_HEIGHT[1] * usual or max(
                abs(ink[0] - cols[0]), abs(ink[1] - cols[1])
            ) > ROWS_INK * box.h:
                # Another size, text read past its light glyphs (glued to a sign or print), or glyphs past its text
                # (a centred line read in part: the recogniser lost its end).
                continue
            on_rows = any(abs(y0 - box.y) <= slack and abs(y1 - box.y - box.h) <= slack for y0, y1 in self._rows)
            if not on_rows or not cols[0] + reach <= self.axis <= cols[1] - reach or any(
                _same_rows(ln, a) for a in anchors
            ):
                continue
            # Last (it compares texts): a centred subtitle read in part (a pale end lost) only looks off-centre.
            if not self._part_of_said(ln.text):
                found.append(ln)
        return found

    def _learn(self, lines: tuple[OcrLine, ...], anchors: list[OcrLine], kept: tuple[OcrLine, ...]) -> None:
        """Count a read with text as centred or not; a read without a centred line whose texts were all read
        before without one (a still sign, read in every gap between subtitles) counts once. Remember the texts of
        the lines not ``kept``."""
        texts = {comparable(ln.text) for ln in lines} - {""}
        if any(ln.text.strip() for ln in lines):
            self._reads += 1
            if anchors:
                self._centred.append(True)
            elif not texts or not texts <= self._offcentre.keys():
                self._centred.append(False)
            if not anchors:
                _remember(self._offcentre, texts)
        _remember(self._refused, (key for ln in lines if ln not in kept and len(key := comparable(ln.text)) >= 2))
        self._heights.extend(_box(ln).h for ln in anchors)
        self._centres.extend(_centre(_box(ln), self._centred_cols(ln)) for ln in anchors)
        self._said.extend(ln.text for ln in anchors)
        self._rows.extend((_box(ln).y, _box(ln).y + _box(ln).h) for ln in anchors)
        for ln in lines:
            cols = _text_cols(ln)
            if ln not in anchors and cols is not None and comparable(ln.text):
                _, seen = self._aside.pop(ln.text, (cols, 0))
                self._aside[ln.text] = (cols, seen + 1)
        while len(self._aside) > 32:
            self._aside.popitem(last=False)

    def _without_print(self, result: OcrResult, drop: bool) -> tuple[OcrResult, int]:
        """``result`` without its lines of print (with ``drop``: once the zone has shown light subtitles; before
        that, dark text on a light box may be the subtitles' style), and how many of its lines it lost; a line
        that may be a subtitle glued to print (glyph fill up to GLUED_FILL_MAX) gives way to the lines read on the
        same rows with the closed light glyphs alone (``result.glyphs_only``), which are added where no other line
        is. A light box is a closed light region too: its text reads the same glyphs only. Such a line on whose rows
        the glyphs read alone gave nothing, not even an unsure speck, has no light glyphs to read: print too (a maker's
        name on a bright engine cover, a page's line), once the zone has shown light subtitles."""
        alone = [ln for ln in result.glyphs_only.lines if ln.box is not None] if result.glyphs_only else []
        printed = [ln for ln in result.lines if _fill_at_most(ln, PRINT_FILL_MAX)] if drop else []
        if drop and result.glyphs_only is not None:
            printed += [ln for ln in result.lines if ln not in printed and _fill_at_most(ln, GLUED_FILL_MAX)
                        and not any(_same_rows(ln, c) for c in alone)]
        clean = [ln for ln in alone if ln.confidence >= GLYPHS_ONLY_SURE]
        if not printed and not clean:
            return result, 0
        kept = [ln for ln in result.lines if ln not in printed]
        kept = [ln for ln in kept if not (_fill_at_most(ln, GLUED_FILL_MAX) and any(_same_rows(ln, c) for c in clean))]
        # A line that is a piece of a line the glyphs alone read, inside it, gives way to it: the detector boxed the
        # rest of the subtitle with the print it is drawn over ("way." of "Thank you for coming all this way.").
        kept = [ln for ln in kept if not any(_piece_of(ln, c) for c in clean)]
        if self._proven_centred():
            # A line off the axis gives way to a sure, centred line the glyphs alone read on its rows, unless it reads
            # that line's text too (a subtitle glued to print, cut out of it by characters: _without_aside): a line of
            # a page the subtitle is drawn over, its fill raised by the subtitle's glyphs past a glued line's.
            sure = [c for c in clean if self._line_centred(c)]
            kept = [ln for ln in kept if self._line_centred(ln) or not any(
                _same_rows(ln, c) and not _reads_within(c.text, ln.text) for c in sure)]
        added = [c for c in clean if not any(_same_rows(c, ln) for ln in kept)]
        lines = sorted([*kept, *added], key=lambda ln: _box(ln).y if ln.box is not None else 0)
        return replace(result, lines=tuple(lines), glyphs_only=None), len(result.lines) - len(kept)

    def _trimmed(self, line: OcrLine) -> OcrLine:
        """A line joined from several detector boxes that is not centred, cut to the longest run of its boxes
        that is (text in the picture beside a subtitle on its row, read into the subtitle's line); else the
        line as it is."""
        parts = line.parts
        if self._line_centred(line):
            return self._without_aside(line, centred=True) or line
        alone = line.alone  # its run of subtitle-like glyphs read alone (a Latin subtitle glued to Latin print)
        if alone is not None and alone.box is not None and self.centred(alone.box, _text_cols(alone)) and (
            self._height_fits(alone.box)
        ):
            return alone
        said = self._said_prefix_or_suffix(line) or self._without_aside(line, centred=False)
        if said is not None:
            return said
        if not parts:
            return line
        best: tuple[int, int] | None = None  # (first, last) part of the longest centred run
        for i in range(len(parts)):
            for j in range(i, len(parts)):
                run = _union(p.box for p in parts[i : j + 1])
                longer = best is None or _chars(parts[i : j + 1]) > _chars(parts[best[0] : best[1] + 1])
                if j - i < len(parts) - 1 and longer and self.centred(run) and self._height_fits(run):
                    best = (i, j)
        if best is None:
            return line
        kept = parts[best[0] : best[1] + 1]
        start, end = min(p.start for p in kept), max(p.end for p in kept)
        return _cut(line, start, end, _union(p.box for p in kept),
                    tuple(replace(p, start=p.start - start, end=p.end - start) for p in kept) if len(kept) > 1 else ())

    def _said_prefix_or_suffix(self, line: OcrLine) -> OcrLine | None:
        """``line`` cut to a text the zone read centred lately (see _said) that it starts or ends with, when that
        text's share of the line's text columns (by characters) is centred: a subtitle read whole and centred, then
        glued in one detector box to a sign the moving picture brought under it ("(sighs)KING"); else None."""
        cols = _text_cols(line)
        text = line.text
        if cols is None or not self._said or len(text) < 4:
            return None
        box = _box(line)
        for said in dict.fromkeys(reversed(self._said)):
            if len(said) < 2 or len(said) > len(text) - 2:
                continue
            if text.startswith(said):
                start, end = 0, len(said)
            elif text.endswith(said):
                start, end = len(text) - len(said), len(text)
            else:
                continue
            run = _chars_run(line, cols, start, end)
            if self.centred(box, run):
                return _cut_to(line, start, end, run)
        return None

    def _without_aside(self, line: OcrLine, centred: bool) -> OcrLine | None:
        """``line`` without a first or last run of characters that a text read off-centre in several reads lately,
        wholly on one side of the axis (see _aside: a sign, a shop front), starts or ends with: the detector glued
        the sign to the subtitle's line when the subtitle came ("咖啡别打开那扇门" under a sign "咖啡馆" the subtitle
        half covers). Cut when the rest is a text the zone read centred lately (see _said) and the whole line is
        ``centred``, or when the run is drawn where the sign was and the rest is centred (by characters) and, for a
        ``centred`` line, more centred than the whole; else None. A text read across the axis is a subtitle judged
        off-centre (drawn a little aside), whose first characters the next subtitle may share where it has them."""
        cols = _text_cols(line)
        text = line.text
        if cols is None or not self._aside or len(text) < 3:
            return None
        box = _box(line)
        step = (cols[1] - cols[0]) / len(text)
        off = abs(_centre(box, cols) - self.axis)
        for sign, ((s0, s1), seen) in reversed(self._aside.items()):
            if sign == text or seen < SIGN_READS or s0 <= self.axis <= s1:
                continue
            head = len(os.path.commonprefix([text, sign]))
            tail = len(os.path.commonprefix([text[::-1], sign[::-1]]))
            for glued in ((0, head), (len(text) - tail, len(text))):
                if not comparable(text[glued[0] : glued[1]]):
                    continue
                start, end = (glued[1], len(text)) if glued[0] == 0 else (0, glued[0])
                while start < end and text[start].isspace():
                    start += 1
                while end > start and text[end - 1].isspace():
                    end -= 1
                if len(comparable(text[start:end])) < 2:
                    continue
                if centred and text[start:end] in self._said:
                    return _cut(line, start, end, box, ())
                g0, g1 = _chars_run(line, cols, *glued)
                if g0 < s0 - step or g1 > s1 + step:
                    continue
                run = _chars_run(line, cols, start, end)
                if self.centred(box, run) and (not centred or abs(_centre(box, run) - self.axis) < off):
                    return _cut_to(line, start, end, run)
        return None

    def _cut_by_frame(self, line: OcrLine) -> bool:
        """Whether ``line`` is text cut by the frame's left or right border (a sign the camera pans past, "ING" of
        "NO PARKING"): its box reaches the band's end (the layout judges bands that span the frame) on one side of
        the axis, not across it. A renderer draws every subtitle inside the frame, within its margins; a centred
        line as wide as the frame reaches across the axis and is kept."""
        box, axis = _box(line), self.axis
        x0, x1 = box.x, box.x + box.w
        return (x0 <= EDGE_PX and x1 < axis) or (x1 >= self.width - EDGE_PX and x0 > axis)

    def _still(self, lines: tuple[OcrLine, ...], learn: bool = True) -> tuple[OcrLine, ...]:
        """``lines`` without text that moved sideways since an earlier read of the same text: a renderer draws
        a subtitle line where it drew it before; signs and pages move with the camera. ``learn``: remember
        where these lines were drawn."""
        for ln in lines if learn else ():
            key = comparable(ln.text)
            if len(key) < 2:
                continue
            box = _box(ln)
            edges = _text_cols(ln) or (box.x, box.x + box.w)
            before = self._columns.pop(key, None)
            if before is not None:
                far = max(MOVED * box.h, MOVED_WIDTH * self.width)
                shifts = (edges[0] - before[0], edges[1] - before[1])
                # Both edges, one way: a box or ink that took in picture detail on one side moves one edge.
                if min(map(abs, shifts)) > far and (shifts[0] > 0) == (shifts[1] > 0):
                    self._moving.add(key)
            self._columns[key] = edges
            while len(self._columns) > 256:
                self._columns.popitem(last=False)
        return tuple(ln for ln in lines if comparable(ln.text) not in self._moving)

    def _block(self, lines: tuple[OcrLine, ...], anchors: list[OcrLine]) -> tuple[OcrLine, ...]:
        """The anchors and the lines of their left- or right-aligned block: lines aligned with an anchor on rows
        next to the block's (BLOCK_GAP), the block growing by each line kept. A line whose text the zone dropped
        before is not one of them: a sign above or below a subtitle, read beside an earlier subtitle too, lines up
        with this one's edge by chance. Nor is a line on a kept line's rows (half of the shorter one's): a block's
        lines lie one above the other, and a sign drawn over a subtitle's end only lines up with it."""
        kept = list(anchors)
        grown = True
        while grown:
            grown = False
            for ln in lines:
                if ln not in kept and self._aligned(ln, anchors) and any(_next_rows(ln, k) for k in kept) and (
                    comparable(ln.text) not in self._refused
                ) and not any(_same_rows(ln, k) for k in kept):
                    kept.append(ln)
                    grown = True
        return tuple(ln for ln in lines if ln in kept)

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


def _remember(recent: OrderedDict[str, None], keys: Iterable[str], most: int = 256) -> None:
    """Add ``keys`` to ``recent`` as its latest, keeping the ``most`` latest."""
    for key in keys:
        recent[key] = None
        recent.move_to_end(key)
    while len(recent) > most:
        recent.popitem(last=False)


def _next_rows(a: OcrLine, b: OcrLine) -> bool:
    """Whether two lines are on rows next to each other (at most BLOCK_GAP line heights between them)."""
    box_a, box_b = _box(a), _box(b)
    gap = max(box_a.y, box_b.y) - min(box_a.y + box_a.h, box_b.y + box_b.h)
    return gap <= BLOCK_GAP * max(box_a.h, box_b.h)


def _fill_at_most(line: OcrLine, most: float) -> bool:
    return line.fill is not None and line.fill <= most


def _piece_of(part: OcrLine, whole: OcrLine) -> bool:
    """``part`` lies inside ``whole`` (on its rows, within its columns) and reads as a piece of it: its text, fewer
    characters, in ``whole``'s."""
    if part.box is None or whole.box is None or not _same_rows(part, whole):
        return False
    a, b = comparable(part.text), comparable(whole.text)
    slack = whole.box.h / 2
    return (
        bool(a) and len(a) < len(b) and a in b
        and whole.box.x - slack <= part.box.x and part.box.x + part.box.w <= whole.box.x + whole.box.w + slack
    )


def _with_doubtful(result: OcrResult, doubtful: tuple[OcrLine, ...]) -> OcrResult:
    """``result``, judged blank, keeping ``doubtful`` (see SubtitleLayout._doubtful_glyphs) as its glyphs-only read:
    no text of its own, but what the merger may start the next read's subtitle by (vidocr.merge's lead)."""
    if result.lines or not doubtful:
        return result
    return replace(result, glyphs_only=OcrResult(doubtful))


def _reads_within(text: str, other: str) -> bool:
    """``text``'s characters, in order, make up at least SAME_TEXT of it within ``other``."""
    key, within = comparable(text), comparable(other)
    if not key:
        return False
    matcher = SequenceMatcher(None, key, within, autojunk=False)
    return sum(block.size for block in matcher.get_matching_blocks()) >= SAME_TEXT * len(key)


def _same_rows(a: OcrLine, b: OcrLine) -> bool:
    """Whether two lines share at least half of the shorter one's rows."""
    return a.box is not None and b.box is not None and a.box.shares_rows(b.box)


def centred_about(
    box: Box, cols: tuple[int, int] | None, axis: float, width: int, tolerance: float = CENTRE_TOLERANCE
) -> bool:
    """Whether a line's text (``cols`` when known, else its ``box``) is centred on column ``axis`` of a band
    ``width`` wide: within ``tolerance`` of the width plus a share of the line's height (punctuation, italics)."""
    return abs(_centre(box, cols) - axis) <= tolerance * width + 0.15 * box.h


def _centre(box: Box, cols: tuple[int, int] | None) -> float:
    return (cols[0] + cols[1]) / 2 if cols is not None else box.x + box.w / 2


def _text_cols(line: OcrLine) -> tuple[int, int] | None:
    """Where a line's text is drawn, when known: the columns the recogniser aligned its characters to, else
    the columns of its closed light glyphs (ink; picture detail can be closed light shapes too)."""
    return line.text_cols if line.text_cols is not None else line.ink


def _clipped(cols: tuple[int, int] | None, box: Box) -> tuple[int, int] | None:
    if cols is None:
        return None
    x0, x1 = max(cols[0], box.x), min(cols[1], box.x + box.w)
    return (x0, x1) if x0 < x1 else None


def _cut(line: OcrLine, start: int, end: int, box: Box, parts: tuple[OcrPart, ...] = ()) -> OcrLine:
    """``line`` cut to its characters ``start:end``, drawn in ``box`` (``parts``: the detector boxes it keeps)."""
    probs, at = line.char_conf, line.char_cols
    return replace(
        line,
        text=line.text[start:end],
        box=box,
        ink=_clipped(line.ink, box),
        text_cols=_clipped(line.text_cols, box),
        parts=parts,
        char_conf=probs[start:end] if probs is not None and len(probs) == len(line.text) else None,
        char_cols=at[start:end] if at is not None and len(at) == len(line.text) else None,
    )


def _chars_run(line: OcrLine, cols: tuple[int, int], start: int, end: int) -> tuple[int, int]:
    """The columns characters ``start:end`` of ``line`` take in its text columns ``cols``: from half-way between
    the characters beside them where the recogniser aligned each (``char_cols``: a CJK sign's glyphs are twice as
    wide as a Latin subtitle's letters), else estimated by characters (all as wide)."""
    at, length = line.char_cols, len(line.text)
    if at is None or len(at) != length or length < 2 or at[0] > at[-1]:
        step = (cols[1] - cols[0]) / length
        return round(cols[0] + start * step), round(cols[0] + end * step)
    edges = [float(cols[0]), *((a + b) / 2 for a, b in zip(at, at[1:], strict=False)), float(cols[1])]
    return round(edges[start]), round(edges[end])


def _cut_to(line: OcrLine, start: int, end: int, run: tuple[int, int]) -> OcrLine:
    """``line`` cut to its characters ``start:end``, drawn in the columns ``run`` on the rows of the detector boxes
    they were read in (``parts``, when the line was joined from several: a sign glued to the line stands higher or
    lower than the subtitle), else on the line's rows."""
    box = _box(line)
    rows = [p.box for p in line.parts if p.start < end and start < p.end] or [box]
    y0, y1 = min(b.y for b in rows), max(b.y + b.h for b in rows)
    return _cut(line, start, end, Box(run[0], y0, run[1] - run[0], y1 - y0))


def _chars(parts: Sequence[OcrPart]) -> int:
    return sum(p.end - p.start for p in parts)


def _union(boxes: Iterable[Box]) -> Box:
    found = list(boxes)
    x0, y0 = min(b.x for b in found), min(b.y for b in found)
    x1, y1 = max(b.x + b.w for b in found), max(b.y + b.h for b in found)
    return Box(x0, y0, x1 - x0, y1 - y0)


def _box(line: OcrLine) -> Box:
    assert line.box is not None
    return line.box


def glyph_fill(image: np.ndarray, box: Box) -> float | None:
    """How much a text line's light glyph pixels look like subtitle fill rather than the page around print.

    Glyph pixels are light pixels with a much darker pixel within a rim radius (a sixteenth of the line
    height): in a subtitle, the fill of the strokes (the outline, shadow or box is the dark rim); around dark
    print on light paper, the paper beside the strokes. A subtitle's fill is closed off from everything around
    it by its rim; the paper is one open region reaching past the line. The measure is the share of glyph
    pixels in closed light regions: ~0 for print (only the counters of letters are closed), 0.3-1 for
    subtitles. It is taken twice and the larger kept: with light cut 30 levels under the median glyph pixel,
    and on the brightest glyph pixels alone (cut 15 under their median) for white text with a thin, broken
    outline on a bright picture, where only the fill is brighter than its surroundings; on luma and on the
    strongest colour channel (red or blue glyphs are dark in luma), the larger kept. None when the line has
    no light glyph pixels (dark text: not judged). ``image`` is BGR or grey, ``box`` in its pixels.
    """
    measured = measure_line(image, box)
    return None if measured is None else measured[0]


#: What measure_line finds: the glyph fill, the columns its closed glyphs span, and the columns of a run of
#: subtitle-like glyphs in a line whose other glyphs are print (see glued_run), in the image's pixels.
Measured = tuple[float, tuple[int, int] | None, tuple[int, int] | None]


def measure_line(image: np.ndarray, box: Box) -> Measured | None:
    """The line's :func:`glyph_fill`, the columns its closed glyphs span (where the text is drawn, in ``image``'s
    pixels: the detector's box may take in picture detail beside it), and its :func:`glued_run`; None when not
    judged."""
    fills = [_fill(grey, box) for grey in _planes(image)]
    known = [f for f in fills if f is not None]
    return max(known, key=lambda f: f[0]) if known else None


def _read_past(line: OcrLine, ink: tuple[int, int]) -> tuple[int, int] | None:
    """The columns of ``line``'s subtitle when the recogniser read its text at least TEXT_PAST_INK line heights past
    its closed light glyphs (``ink``) on one side, else None: dark text on a light sign or plate glued to a subtitle
    in one detector box ("CITY LIBItold you, I was at the office.": the sign's letters are dark, its plate is no
    glyph fill). The run is ``ink`` on that side and the box's edge on the other; it is read alone, as a run glued
    to print is (see glued_run)."""
    cols, box = line.text_cols, line.box
    if cols is None or box is None:
        return None
    least = TEXT_PAST_INK * box.h
    left, right = ink[0] - cols[0] >= least, cols[1] - ink[1] >= least
    if not (left or right):
        return None
    return (ink[0] if left else box.x, ink[1] if right else box.x + box.w)


def glued_run(glyph: np.ndarray, closed: np.ndarray, height: int) -> tuple[int, int] | None:
    """The columns (first, end) of a run of subtitle-like glyphs in a line glued to print, or None.

    ``glyph`` and ``closed``: a line's glyph pixels and those in closed light regions (see glyph_fill), per
    column. Each step of half the line ``height`` with glyph pixels is subtitle-like when its share of closed ones
    is above PRINT_FILL_MAX, else print-like; runs of one step take the kind of the run before them. A line that
    is one run of each kind, or print on both sides of one subtitle-like run, each at least GLUED_RUN line
    heights, is a subtitle glued to print (a Latin subtitle and Latin print read into one box, which script runs
    cannot cut): the subtitle-like run is returned. A subtitle whose outline broke in places alternates kinds
    and is left whole."""
    step = max(2, height // 2)
    kinds: list[tuple[int, bool]] = []  # (first column, subtitle-like) of each step with glyph pixels
    for x in range(0, len(glyph), step):
        g = int(glyph[x : x + step].sum())
        if g >= step:
            kinds.append((x, int(closed[x : x + step].sum()) > PRINT_FILL_MAX * g))
    runs: list[list[int]] = []  # [kind, first column, end column, steps]
    for x, kind in kinds:
        if runs and runs[-1][0] == kind:
            runs[-1][2], runs[-1][3] = x + step, runs[-1][3] + 1
        else:
            runs.append([int(kind), x, x + step, 1])
    merged: list[list[int]] = []
    for run in runs:
        if merged and (run[3] < 2 or run[0] == merged[-1][0]):
            merged[-1][2], merged[-1][3] = run[2], merged[-1][3] + run[3]
        else:
            merged.append(run)
    least = GLUED_RUN * 2  # steps of half a line height
    shape = [r[0] for r in merged]
    if shape not in ([1, 0], [0, 1], [0, 1, 0]) or any(r[3] < least for r in merged if r[0] == 1):
        return None
    if sum(r[3] for r in merged if r[0] == 0) < least:
        return None
    found = next(r for r in merged if r[0] == 1)
    # Steps are coarse: near each of the run's ends that faces print, it ends at the stretch of columns (a third of
    # the line height or more) that are drawn but have nothing closed: print beside the subtitle (whose strokes are
    # open paper; its letters' counters are closed, so closed pixels alone cannot tell).
    first, end = found[1], min(found[2], len(glyph))
    bare = (glyph >= 2) & (closed == 0)
    gap = max(3, height // 3)
    if found is not merged[-1]:
        stretch = _bare_stretches(bare, max(first, end - 2 * step), min(len(glyph), end + step), gap)
        end = stretch[0][0] if stretch else end
    if found is not merged[0]:
        stretch = _bare_stretches(bare, max(0, first - step), min(end, first + 2 * step), gap)
        first = stretch[-1][1] if stretch else first
    return (first, end) if end > first else None


def _bare_stretches(bare: np.ndarray, start: int, stop: int, least: int) -> list[tuple[int, int]]:
    """The runs (first, end) of at least ``least`` True columns of ``bare[start:stop]``, in its columns."""
    out, run = [], None
    for x in range(start, stop):
        if bare[x]:
            run = x if run is None else run
        else:
            if run is not None and x - run >= least:
                out.append((run, x))
            run = None
    if run is not None and stop - run >= least:
        out.append((run, stop))
    return out


def _planes(image: np.ndarray) -> tuple[np.ndarray, ...]:
    """The planes glyphs are measured on: a grey ``image`` itself; of a BGR one, luma and the strongest colour
    channel for coloured glyphs (the text mask's brightness): a red or blue fill is dark in luma. Print is dark
    ink on light paper in both."""
    return (image,) if image.ndim == 2 else (cv2.cvtColor(image, cv2.COLOR_BGR2GRAY), image.max(axis=2))


def _fill(grey: np.ndarray, box: Box) -> Measured | None:
    pad = max(3, box.h // 3)
    y0, y1 = max(0, box.y - pad), min(grey.shape[0], box.y + box.h + pad)
    x0, x1 = max(0, box.x - pad), min(grey.shape[1], box.x + box.w + pad)
    if y1 - y0 < 3 or x1 - x0 < 3:
        return None
    # Closed: the light regions that do not reach the region's edge and fit in the line's box (a light box
    # behind dark text is closed too, but wider). The share of each cut's glyph pixels in them, the larger kept.
    cuts = _closed_cuts(np.ascontiguousarray(grey[y0:y1, x0:x1]), box.h, (box.w, box.h))
    if not cuts:
        return None
    found = []
    for glyph, light in cuts:
        closed = glyph & light
        found.append((float(np.count_nonzero(closed)) / max(1, int(np.count_nonzero(glyph))), closed))
    best = max(range(len(found)), key=lambda k: found[k][0])
    share, closed = found[best]
    run = glued_run(cuts[best][0].sum(axis=0), closed.sum(axis=0), box.h) if share > PRINT_FILL_MAX else None
    glued = (x0 + run[0], x0 + run[1]) if run is not None else None
    cols = np.flatnonzero(_own_glyphs(closed, box.y - y0, box.h).any(axis=0))
    if cols.size < 2:
        return share, None, glued
    first, last = _reach(cols, int(np.percentile(cols, 1)), int(np.percentile(cols, 99)), max(2, box.h // 2))
    return share, (x0 + first, x0 + last + 1), glued


def _own_glyphs(closed: np.ndarray, top: int, height: int) -> np.ndarray:
    """The line's own closed glyph pixels of ``closed`` (measured with a margin above and below the line's box, whose
    rows are ``top`` to ``top + height``): the regions centred on the box's rows and larger than a speck (SPECK line
    heights across, squared). Not the line's: the glyphs of a subtitle line above or below, in the margin (a detector
    box taller than its text, joined to a sign's plate, reaches into the next line); the one-pixel highlights closed
    off in the grain of a light plate beside it."""
    count, labels, stats, centroids = cv2.connectedComponentsWithStats(closed.view(np.uint8), connectivity=8)
    if count <= 1:
        return closed
    kept = (
        (centroids[:, 1] >= top) & (centroids[:, 1] < top + height)
        & (stats[:, cv2.CC_STAT_AREA] >= max(4.0, (SPECK * height) ** 2))
    )
    kept[0] = False
    own: np.ndarray = kept[labels]
    return own


def _reach(cols: np.ndarray, first: int, last: int, gap: int) -> tuple[int, int]:
    """``first`` and ``last`` (columns of ``cols``, sorted columns with closed glyph pixels: percentiles that leave
    out specks far from the text) moved out over the columns of ``cols`` at most ``gap`` from them, step by step:
    a thin first or last glyph ("I", "."), a word space away at most (half a line height: "I told" at 360p leaves
    0.43 of it), is the text's, however few its columns."""
    i = int(np.searchsorted(cols, first))
    while i > 0 and cols[i] - cols[i - 1] <= gap:
        i -= 1
    j = int(np.searchsorted(cols, last, side="right")) - 1
    while j < cols.size - 1 and cols[j + 1] - cols[j] <= gap:
        j += 1
    return int(cols[i]), int(cols[j])


def _closed_cuts(
    grey: np.ndarray, line_height: int, most: tuple[float, float] | None = None
) -> list[tuple[np.ndarray, np.ndarray]]:
    """The two cuts of :func:`glyph_fill` on a plane: (glyph pixels, the light pixels of the regions closed off
    at the cut (:func:`vidocr.textmask.closed_light`, ``most`` as there)), for all glyph pixels with light cut
    30 levels under their median, and for the brightest ones alone (within 25 levels of their 95th percentile)
    cut 15 under theirs; none when ``grey`` has no glyph pixels. The rim radius is a sixteenth of
    ``line_height``, the height of the lines measured."""
    glyph = glyph_pixels(grey, max(2, round(line_height * 0.06)))
    if not glyph.any():
        return []
    brightest = glyph & (grey >= float(np.percentile(grey[glyph], 95)) - 25)
    return [
        (glyph, closed_light(grey > float(np.median(grey[glyph])) - 30, most)),
        (brightest, closed_light(grey > float(np.median(grey[brightest])) - 15, most)),
    ]


def glyph_image(image: np.ndarray, line_height: int) -> np.ndarray | None:
    """``image`` (BGR) with only its closed light glyphs kept and black elsewhere; None when it has none.

    A subtitle drawn over a page of print is read together with the print (the detector boxes both as one
    text, or boxes only the print). Its fill, closed off from the page by its outline, is what
    :func:`glyph_fill` measures; the page beside dark print is one open light region, and the print's letter
    counters are small closed specks. Kept: light regions closed off from the image's edges
    (:func:`vidocr.textmask.closed_light`: by default no taller than 60% of the image nor wider than half of
    it), at the cuts :func:`glyph_fill` uses (:func:`_closed_cuts`), on the planes it measures; of those, the
    tall ones (at least half the tallest) and the small ones beside them (the dots and short strokes of a
    glyph). ``line_height``: the height of the lines read in ``image``, which sets the rim radius as in
    :func:`glyph_fill`.
    """
    closed = np.zeros(image.shape[:2], bool)
    for grey in _planes(image):
        for _, light in _closed_cuts(np.ascontiguousarray(grey), line_height):
            closed |= light
    count, labels, stats, _ = cv2.connectedComponentsWithStats(closed.view(np.uint8), connectivity=8)
    if count <= 1:
        return None
    x, y, w, h = (stats[1:, i].astype(np.float64) for i in range(4))
    tall = h >= 0.5 * h.max()
    # A small region is kept beside a tall one: within half the tall one's height sideways, a third up or down
    # (the dots and short strokes of a CJK glyph, punctuation).
    cx, cy = x + w / 2, y + h / 2
    tx, ty, tw, th = x[tall], y[tall], w[tall], h[tall]
    beside = (
        (cx[:, None] >= tx - 0.5 * th) & (cx[:, None] <= tx + tw + 0.5 * th)
        & (cy[:, None] >= ty - 0.35 * th) & (cy[:, None] <= ty + 1.35 * th)
    ).any(axis=1)
    keep = np.concatenate(([False], tall | beside))
    mask = keep[labels] & closed
    out = np.zeros_like(image)
    out[mask] = image[mask]
    return out


def glyph_view(glyphs: np.ndarray, line_height: int) -> tuple[np.ndarray, int]:
    """What the recogniser is shown of a glyph image (:func:`glyph_image`), and the column it starts at: its
    columns from a line height before its first glyph pixel to a line height past its last, in grey levels, on a
    ground of half the glyphs' median level (for white glyphs, mid-grey; a colour's darkest channel is not
    taken for the ground's: yellow glyphs are light in grey levels, dark in blue).

    PP-OCR's detector, trained on pictures, often boxes nothing in a band-wide image of light glyphs on black
    (session 17: 6 of 12 glyph images of one subtitle over a page, libass new-seeds dev ``13_cuts``, read
    empty); cut to the glyphs on grey it boxed a line in all 12. The worker reads both and keeps the surer
    (vidocr.ocrqueue; tests/test_libass_classes.py: 23 of 41 glyph reads of a subtitle over a panning page exact,
    10 band-wide on black alone)."""
    lit = np.asarray(glyphs.max(axis=2) > 0)
    cols = np.flatnonzero(lit.any(axis=0))
    if not cols.size:
        return glyphs, 0
    x0 = max(0, int(cols[0]) - line_height)
    x1 = int(cols[-1]) + 1 + line_height
    grey = cv2.cvtColor(np.ascontiguousarray(glyphs[:, x0:x1]), cv2.COLOR_BGR2GRAY)
    shown = lit[:, x0:x1]
    grey[~shown] = int(np.median(grey[shown])) // 2
    return cv2.cvtColor(grey, cv2.COLOR_GRAY2BGR), x0


def _over_dots(image: np.ndarray, box: Box, ink: tuple[int, int]) -> tuple[int, int]:
    """``ink`` (a line's glyph columns in ``image``) moved out over a run of at least ELLIPSIS_DOTS dots drawn on
    from either end (an ellipsis, "......" or "……": the detector leaves it out of the line's box, the recogniser
    reads one dot of it or none, and the line looked off-centre by half its width). A dot: light fill with a dark
    rim, at most DOT_SIZE line heights wide and tall; each dot at most DOT_GAP line heights from the last, on the
    first one's rows and of its size (within a factor of two)."""
    h = box.h
    y0, y1 = max(0, box.y - 2), min(image.shape[0], box.y + h + 2)
    first, last = ink
    reach = int(ELLIPSIS_REACH * h)
    for side in (1, -1):
        x0, x1 = (last, min(image.shape[1], last + reach)) if side > 0 else (max(0, first - reach), first)
        if x1 - x0 < 3 or y1 - y0 < 3:
            continue
        window = np.ascontiguousarray(image[y0:y1, x0:x1])
        if window.ndim == 3:  # only the columns looked at, not the whole crop, for each line
            window = cv2.cvtColor(window, cv2.COLOR_BGR2GRAY)
        light = glyph_pixels(window, max(2, round(h * 0.06)))
        count, _, stats, _ = cv2.connectedComponentsWithStats(light.view(np.uint8), connectivity=8)
        most = DOT_SIZE * h
        dots = sorted(
            (int(x), int(y), int(w), int(hh))
            for x, y, w, hh, _ in stats[1:count]
            if w <= most and hh <= most
        )
        if side < 0:
            dots = [(window.shape[1] - (x + w), y, w, hh) for x, y, w, hh in reversed(dots)]
        end, run, shape = 0, 0, None  # end: columns from the ink so far
        for x, y, w, hh in dots:
            if x <= end:
                continue  # cut by the window's edge: part of a glyph of the ink
            if x - end > DOT_GAP * h:
                break
            if shape is not None and not (
                abs((y + hh / 2) - shape[0]) <= 0.2 * h and 0.5 <= w / shape[1] <= 2 and 0.5 <= hh / shape[2] <= 2
            ):
                break
            shape = shape or (y + hh / 2, w, hh)
            end, run = x + w, run + 1
        if run >= ELLIPSIS_DOTS:
            first, last = (first, last + end) if side > 0 else (first - end, last)
    return first, last


def with_fill(result: OcrResult, image: np.ndarray) -> OcrResult:
    """``result`` with each boxed line's glyph fill and ink columns (:func:`measure_line`) measured on ``image``
    (the crop it was read from)."""
    if not any(ln.box is not None for ln in result.lines):
        return result
    lines = []
    for ln in result.lines:
        measured = measure_line(image, ln.box) if ln.box is not None else None
        if measured is not None:
            share, ink, glued = measured
            ink = ink if share > PRINT_FILL_MAX else None
            if glued is None and ink is not None:
                glued = _read_past(ln, ink)
            if ink is not None and ln.box is not None:
                ink = _over_dots(image, ln.box, ink)
            ln = replace(ln, fill=share, ink=ink, glued_cols=glued)
        lines.append(ln)
    return replace(result, lines=tuple(lines))
