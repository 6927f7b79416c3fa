"""Temporal merger: per-segment OCR reads become cues with exact start and end.

Input is the detector's segments, in order, each with the OCR results of its reads. Within a
segment, reads that disagree mean the subtitle changed without the mask noticing: the segment is
split at the read's ``split_ms`` (where the detector saw it change). Reads of one subtitle vote for
its text (the read most similar to all others, weighted by confidence), so a single bad read loses. Consecutive
segments with no gap between them are joined when their text is the same (a cut or a transient
occlusion split them); a blank segment between two identical lines keeps them apart, and a
different line, even a near-identical one, starts a new cue.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from difflib import SequenceMatcher

from vidocr.textnorm import comparable, in_order, is_cjk, normalize_text, text_similarity
from vidocr.types import Box, Cue, OcrLine, OcrResult

#: Single glyphs that recognisers read off straight edges and bars (after `comparable`).
_STROKES = frozenset("一丨丶丿乀亅〇口0oOlI1|_-—~")


@dataclass(frozen=True)
class MergeOptions:
    """same_read: similarity at which two reads inside one segment count as the same subtitle.
    join_similarity: similarity at which same-length texts of adjacent segments are joined when the
        detector saw their masks as alike (``mask_similarity`` >= join_mask).
    min_confidence: reads below this engine confidence are ignored.
    min_duration_ms: cues shorter than this are dropped: no subtitle is shown for under ~0.12 s (2 frames
        at 24-30 fps; guidelines ask for 0.5-1 s), while picture detail that reads as a glyph or two for
        a frame or two between subtitles, or in a flash at a cut, is common in real footage.
    settle_ms: a segment's first read that disagrees with a better read made less than this after the
        segment began is a read of text still settling, not a subtitle of its own (the detector saw no
        change in between; no subtitle is shown that briefly).
    bridge_ms: a blank segment shorter than this between two reads of the same text (or of texts alike the way
        OCR noise makes them, as reads within a segment: a glyph misread after a cut) is that subtitle's mask
        flickering (picture detail, shake; one or two frames), not a gap: a renderer does not blank a line for a
        frame or two to show it again (a subtitle repeated after a real gap, 0.28 s in samples/repeat_gap.mp4,
        stays two cues).
    unread_ms: blank segments of up to this much in all, between two reads of the same subtitle, are that
        subtitle when the detector held text lines in every one of them (it asked for reads), the first one's
        mask alike the subtitle's (``join_mask``) or its lines where the subtitle's were (a cut under the line
        changes the mask, not the lines' place), and the recogniser read nothing there: a line it lost for a
        moment over a moving picture, not a gap (a gap's frames show no text lines, or another mask).
    line_similarity: a piece of a subtitle read once, touching another, is that subtitle misread when each of its lines
        is at least this like the other's line and its read is less sure than the other's surest (see
        :func:`_lone_misread`).
    sure_char: two reads of a line that differ where each read every character it does not share with the other at
        least this surely (the recogniser's own probability of that character) show two subtitles, however alike: a
        line changed in place by a word ("... the rain starts." -> "... the snow starts.", "我们明天再见吧" ->
        "我们后天再见吧", changed glyphs read at 0.993-1.0), where a misread's odd glyph is read less surely (after
        cuts, over print: "火" for "人" and "ü" for "u" at 0.97; see :func:`_sure_change`).
    unsure: a lone read below this confidence that is like (``misread_similarity``) a surer read right
        after it, sharing no line with it, is a misread of that read's subtitle, not a subtitle of its own
        (360p, heavy compression: "Wihen. wer list h'gi" 0.71 before "Where were you last night?" 0.95).
    """

    same_read: float = 0.75
    join_similarity: float = 0.75
    join_mask: float = 0.35
    min_confidence: float = 0.7
    min_duration_ms: int = 120
    settle_ms: int = 250
    unsure: float = 0.8
    misread_similarity: float = 0.5
    bridge_ms: int = 100
    unread_ms: int = 1000
    line_similarity: float = 0.6
    sure_char: float = 0.99


@dataclass(frozen=True)
class Read:
    """One OCR read: when it was taken, where to split if it disagrees with the previous read."""

    ts_ms: int
    split_ms: int
    result: OcrResult
    #: The mask changed (a little) since the previous read; False for periodic re-reads of a mask
    #: that stayed put, whose differences can only be OCR noise.
    mask_moved: bool = True
    #: Read because the band changed unseen by the mask (vidocr.detect's UNSEEN): blank, it ends the subtitle
    #: at ``split_ms`` (other blank reads may be the recogniser missing a line that is still there).
    blank_ends: bool = False
    #: Where the subtitle before this read left, when frames without its glyphs came before ``split_ms`` (see
    #: vidocr.detect's BACK): if this read shows other text, that subtitle ends here and this one starts at
    #: ``split_ms``, the blank frames between them a gap.
    left_ms: int | None = None


@dataclass
class SegmentRecord:
    """A finished detector segment with its reads (in time order)."""

    start_ms: int
    end_ms: int
    reads: list[Read]
    mask_similarity: float = 0.0
    box: Box | None = None
    #: A blank segment the detector inferred while text lines were in the band all along (vidocr.detect's
    #: Segment.lines_held): like a segment whose reads found nothing, it may be the subtitle (see unread_ms).
    lines_held: bool = False


@dataclass
class _Open:
    start_ms: int
    end_ms: int
    results: list[OcrResult] = field(default_factory=list)
    box: Box | None = None

    def text(self) -> str:
        return _vote(self.results)[0]


class CueMerger:
    """Push finished segments in order; get cues as soon as they can no longer grow."""

    def __init__(self, options: MergeOptions | None = None) -> None:
        self.options = options or MergeOptions()
        self._open: _Open | None = None
        # Blank segments right after _open that may be its subtitle (see bridge_ms, unread_ms): where they start
        # and end, and whether all of them held text the recogniser did not read.
        self._blank: tuple[int, int, bool] | None = None
        # The segment just pushed when none of its reads was sure enough to count: where it starts and ends, and
        # its likeliest read (see _led).
        self._lead: tuple[int, int, str] | None = None
        # The cue before ``_open``, held back one step: A, then a brief near-copy B, then A again
        # is one subtitle whose middle read lost a character (an A-B-A is re-joined).
        self._prev: _Open | None = None

    def push(self, segment: SegmentRecord) -> list[Cue]:
        out: list[Cue] = []
        pieces = self._split(segment)
        blank, self._blank = self._blank, None
        lead, self._lead = self._lead, None
        if not pieces:
            opts, current = self.options, self._open
            ended = any(r.blank_ends for r in segment.reads)  # an UNSEEN read found the band blank
            unsure = [e for e in (_evidence(r.result) for r in segment.reads) if comparable(e.text)]
            if unsure and not ended:
                self._lead = (segment.start_ms, segment.end_ms, max(unsure, key=lambda r: r.confidence).text)
            if current is None or (blank[1] if blank is not None else current.end_ms) != segment.start_ms:
                return self._close()
            unread = (blank is None or blank[2]) and (
                segment.lines_held
                or (
                    bool(segment.reads)
                    and not ended
                    and (
                        blank is not None
                        or segment.mask_similarity >= opts.join_mask
                        or _same_place(segment.box, current.box)
                    )
                )
            )
            start = blank[0] if blank is not None else segment.start_ms
            brief = blank is None and segment.end_ms - start < opts.bridge_ms
            if brief or (unread and segment.end_ms - start <= opts.unread_ms):
                self._blank = (start, segment.end_ms, unread)  # the same text may come right back
                return out
            return self._close()
        current = self._open
        if blank is not None:
            if (
                current is not None
                and pieces[0].start_ms == blank[1]
                and self._same_subtitle(
                    current.text(), pieces[0].text(), _extent(current.results), _extent(pieces[0].results)
                )
            ):
                current.end_ms = blank[1]  # one subtitle: _add joins the piece to it
            else:
                out.extend(self._close())
        if lead is not None and (self._open is None or self._open.end_ms != segment.start_ms):
            self._led(lead, segment, pieces[0])
        for i, piece in enumerate(pieces):
            mask_sim = segment.mask_similarity if i == 0 else 0.0
            out.extend(self._add(piece, mask_sim))
        return out

    def flush(self) -> list[Cue]:
        self._blank = self._lead = None
        return self._close()

    # -- internals ----------------------------------------------------------------------------
    def _usable(self, result: OcrResult) -> bool:
        return bool(comparable(result.text)) and result.confidence >= self.options.min_confidence

    def _came_unsure(self, read: Read) -> bool:
        """``read`` was taken where a subtitle's glyphs came back after frames without them (a BACK read: the
        detector saw the shown subtitle leave at ``left_ms``) and is too unsure to count, but read text: at 360p,
        the first frames of the next subtitle ("即果你也过在心章" 0.52 where "我跟你说过我在办公室" came after a
        2-frame gap)."""
        return (
            read.left_ms is not None
            and not read.blank_ends
            and not self._usable(read.result)
            and bool(comparable(read.result.text))
        )

    def _split(self, seg: SegmentRecord) -> list[_Open]:
        """Group the segment's usable reads into runs of the same subtitle."""
        reads = [replace(r, result=_without_picture_glyphs(r.result)) for r in seg.reads]
        # The segment began without text the reader could see (its first read was blank: picture detail, a sign
        # the layout dropped): text a later read finds came where that read's change began (a subtitle fading in
        # beside a sign, seen by a drift read before its own segment).
        blank_first = bool(reads) and not comparable(reads[0].result.text) and not reads[0].blank_ends
        reads = [r for r in reads if self._usable(r.result) or r.blank_ends or self._came_unsure(r)]
        while reads and not self._usable(reads[0].result):
            reads.pop(0)
        if not reads:
            return []
        pieces: list[_Open] = []
        start = min(max(reads[0].split_ms, seg.start_ms), seg.end_ms - 1) if blank_first else seg.start_ms
        current: _Open | None = _Open(start, seg.end_ms, [reads[0].result], seg.box)
        # An unsure read of other text taken where the shown subtitle's glyphs came back after frames without
        # them (see CueMerger._came_unsure): if the next sure read shows other text too, the change was there.
        came: Read | None = None
        for read in reads[1:]:
            if self._came_unsure(read):
                if current is not None and not self._same_subtitle(
                    current.text(), read.result.text, _extent(current.results), _extent([read.result])
                ):
                    came = came or read
                continue
            if not self._usable(read.result):  # blank_ends: the subtitle left
                if current is not None:
                    current.end_ms = min(max(read.split_ms, current.start_ms + 1), seg.end_ms - 1)
                    pieces.append(current)
                    current = None
                came = None
                continue
            if current is None:  # text again after it left: from this read's change point
                current = _Open(min(read.split_ms, seg.end_ms - 1), seg.end_ms, [read.result], seg.box)
                continue
            text = current.text()
            same = self._same_subtitle(text, read.result.text, _extent(current.results), _extent([read.result]))
            if (same or (not read.mask_moved and text_similarity(text, read.result.text) >= 0.5)) and not _sure_change(
                _voted_read(current, text), read.result, self.options.sure_char
            ):
                current.results.append(read.result)
                came = None
                continue
            if came is not None:  # the change was where the unsure read's glyphs came
                read, came = replace(read, split_ms=came.split_ms, left_ms=came.left_ms), None
            cut = min(max(read.split_ms, current.start_ms + 1), seg.end_ms - 1)
            if len(current.results) == 1 and not self._still_shown(seg, current) and (
                (
                    cut - current.start_ms < self.options.settle_ms
                    and read.result.confidence >= current.results[0].confidence
                )
                or self._misread(current.results[0], read.result)
                or _part_misread(current.results[0], read.result)
            ):
                # The segment's first read, taken as its text appeared, disagrees with one a moment
                # later while the band did not change: a read of text still settling (the frames
                # after a cut or at a cue's start are the most compressed), or an unsure misread of
                # the same line. The later read wins.
                current.results = [read.result]
                continue
            current.end_ms = cut if read.left_ms is None else min(cut, max(read.left_ms, current.start_ms + 1))
            pieces.append(current)
            current = _Open(cut, seg.end_ms, [read.result], seg.box)
        if current is not None:
            pieces.append(current)
        return pieces

    def _led(self, lead: tuple[int, int, str], segment: SegmentRecord, piece: _Open) -> None:
        """Start ``piece`` (the first of ``segment``) where the segment before it began when that segment's reads were
        all too unsure to count (below ``min_confidence``: the first frames of a subtitle at 360p, heavily
        compressed, "人车九点" 0.55 before "火车九点半开" 1.0) and the likeliest of them reads like ``piece``
        (``misread_similarity``), the detector having seen the two segments' masks as alike (``join_mask``): that
        subtitle, read as it appeared."""
        opts = self.options
        start, end, text = lead
        if (
            end == segment.start_ms == piece.start_ms
            and segment.mask_similarity >= opts.join_mask
            and text_similarity(text, piece.text()) >= opts.misread_similarity
        ):
            piece.start_ms = start

    def _still_shown(self, seg: SegmentRecord, piece: _Open) -> bool:
        """``piece`` (a segment's first read) reads what the open cue, which ends where the segment starts, reads:
        the subtitle before it still shown (a sign or picture detail began the segment), not text settling."""
        shown = self._open
        return (
            shown is not None
            and shown.end_ms == seg.start_ms
            and piece.start_ms == seg.start_ms
            and comparable(shown.text()) == comparable(piece.text())
        )

    def _same_subtitle(self, a: str, b: str, box_a: Box | None, box_b: Box | None) -> bool:
        """Two reads show the same subtitle: equal, or differing the way OCR noise does.

        OCR noise swaps characters, or drops one while the detected line keeps its full width; a
        changed subtitle ("你听我说" -> "你听我说完") adds or drops characters AND changes the line's
        extent. So texts of different length count as the same only when their boxes agree.
        """
        ca, cb = comparable(a), comparable(b)
        if ca == cb:
            return True
        sim = text_similarity(ca, cb)
        if len(ca) == len(cb):
            return sim >= self.options.same_read
        return sim >= self.options.same_read and _boxes_agree(box_a, box_b)

    def _misread(self, lone: OcrResult, later: OcrResult) -> bool:
        """``lone``, an unsure read, is a misread of the subtitle a surer ``later`` read shows: its text is
        like ``later``'s and no line of it is read the same (a line of a two-line cue changing alone is)."""
        opts = self.options
        if lone.confidence >= min(opts.unsure, later.confidence) or len(lone.lines) != len(later.lines):
            return False
        if {comparable(ln.text) for ln in lone.lines} & {comparable(ln.text) for ln in later.lines}:
            return False
        return text_similarity(lone.text, later.text) >= opts.misread_similarity

    def _add(self, piece: _Open, mask_sim: float) -> list[Cue]:
        self._rejoin()
        prev, current = self._prev, self._open
        if (
            current is not None
            and current.end_ms == piece.start_ms
            and len(current.results) == 1
            and current.end_ms - current.start_ms < self.options.settle_ms
            and self._misread(current.results[0], piece.results[0])
        ):
            # A segment too brief to be a subtitle of its own, read once, unsure, and like the surer read
            # of the segment right after it: that subtitle, still settling as it appeared.
            current.end_ms = piece.end_ms
            current.results = list(piece.results)
            return []
        if (
            current is not None
            and current.end_ms == piece.start_ms
            and len(current.results) == 1
            and current.end_ms - current.start_ms < self.options.settle_ms
            and _part_misread(current.results[0], piece.results[0], self.options.unsure)
        ):
            # A segment too brief to be a subtitle of its own, read once, unsure, as something else than a small
            # part of the surer line right after it, inside that line: no subtitle. 360p, third seeds check
            # 42_lowres: a blob inside the next line's place in the 3-frame gap before it, read "yc" (0.75). Whether
            # such a blob is the next line's first glyph or a remnant in the gap, the next line starts where its
            # own segment does (its start unchanged), and the blob is no cue.
            self._open = current = None
        if current is not None and current.end_ms == piece.start_ms and self._joinable(current, piece, mask_sim):
            current.end_ms = piece.end_ms
            current.results.extend(piece.results)
            return []
        if (
            prev is not None
            and current is not None
            and prev.end_ms == current.start_ms
            and current.end_ms == piece.start_ms
            and comparable(prev.text()) == comparable(piece.text())
            and text_similarity(prev.text(), current.text()) >= self.options.same_read
        ):
            prev.end_ms = piece.end_ms
            prev.results.extend(current.results + piece.results)
            self._open, self._prev = prev, None
            return []
        if self._folded(prev, current):
            self._open = piece  # the cue before it is held back still
            return []
        out = self._emit(prev)
        self._prev, self._open = current, piece
        return out

    def _folded(self, prev: _Open | None, current: _Open | None) -> bool:
        """Whether ``current``, too brief to be a subtitle (``min_duration_ms``), right after ``prev`` and read like it
        (``misread_similarity``), was the end of that subtitle misread (the frames after a cut under it are the most
        compressed: "你确定是这称房字吧" for 2 frames after "你确定是这栋房子吗"): then ``prev`` ends where it did."""
        if (
            prev is not None
            and current is not None
            and prev.end_ms == current.start_ms
            and current.end_ms - current.start_ms < self.options.min_duration_ms
            and text_similarity(prev.text(), current.text()) >= self.options.misread_similarity
        ):
            prev.end_ms = current.end_ms
            return True
        return False

    def _joinable(self, a: _Open, b: _Open, mask_sim: float) -> bool:
        text_a, text_b = a.text(), b.text()
        ta, tb = comparable(text_a), comparable(text_b)
        if ta == tb:
            return True
        if _sure_change(_voted_read(a, text_a), _voted_read(b, text_b), self.options.sure_char):
            return False
        least = self.options.line_similarity
        if _lone_misread(a, b, text_b, least) or _lone_misread(b, a, text_a, least):
            return True
        if tb and tb in ta and _within(_extent(b.results), _extent(a.results)):
            # The later read lost glyphs of the same line (a cut put a bright background behind them):
            # subtitles do not shrink in place, while growing ones ("你听我说" -> "你听我说完") do exist.
            return True
        if len(ta) != len(tb):
            # Some read of each saw the line at the same extent: one read's box may take in print or detail
            # beside the line, while a subtitle changed in place changes the extent of every read.
            return text_similarity(ta, tb) >= self.options.join_similarity and (
                any(_boxes_agree(_extent([ra]), _extent([rb])) for ra in a.results for rb in b.results)
                or _glyphs_lost(ta, _extent(a.results), tb, _extent(b.results))
            )
        if mask_sim < self.options.join_mask:
            return False
        return text_similarity(ta, tb) >= self.options.join_similarity

    def _rejoin(self) -> None:
        """Join the held-back cue and the open one when they meet and their votes now give the same text: one
        subtitle, split where a misread differed from the reads before it ("Istanyone there?" after "Is anyone
        there?"), which the reads after it outvoted."""
        prev, current = self._prev, self._open
        if prev is not None and current is not None and prev.end_ms == current.start_ms and (
            comparable(prev.text()) == comparable(current.text())
        ):
            prev.end_ms = current.end_ms
            prev.results.extend(current.results)
            self._prev, self._open = None, prev

    def _close(self) -> list[Cue]:
        self._rejoin()
        prev, current = self._prev, self._open
        self._prev = self._open = None
        if self._folded(prev, current):
            current = None
        return self._emit(prev) + self._emit(current)

    def _emit(self, piece: _Open | None) -> list[Cue]:
        if piece is None or piece.end_ms - piece.start_ms < self.options.min_duration_ms:
            return []
        text, conf, translation = _vote(piece.results)
        if not text:
            return []
        return [
            Cue(
                start_ms=piece.start_ms,
                end_ms=piece.end_ms,
                text=text,
                confidence=conf,
                # Where its reads' lines are (the lines the layout kept: the subtitle's text), else where the
                # detector saw text lines (which may take in a sign or picture detail beside it).
                box=_extent(piece.results) or piece.box,
                translation=translation,
                reads=len(piece.results),
            )
        ]


def _without_picture_glyphs(result: OcrResult) -> OcrResult:
    """Drop lines that are one bar-shaped glyph (an edge in the picture) or one Latin letter or digit
    (a curve of line art: "U", "°S", a "1" beside a subtitle): no subtitle line is that. A line of one
    CJK character is ("嗯", "好")."""
    kept = tuple(ln for ln in result.lines if not _picture_glyph(ln.text))
    return result if len(kept) == len(result.lines) else replace(result, lines=kept)


def _picture_glyph(text: str) -> bool:
    text = comparable(text)
    return text in _STROKES or (len(text) == 1 and text.isascii())


#: A segment's first read with at most this share of a later read's characters may be a part of its line misread.
PART_SHARE = 0.34


def _part_misread(lone: OcrResult, later: OcrResult, unsure: float = 1.0) -> bool:
    """``lone`` (a segment's first read, the band unchanged since) read part of the line ``later`` reads, as
    something else: one line lying inside ``later``'s line, less sure, of at most PART_SHARE of its characters, and
    not its characters in order (text that grows in place, "你听我说" -> "你听我说完", keeps both states). At 360p the
    mask may hold a glyph or two of a new line before the rest: that glyph's read ("卜" before
    "我们得在下雨之前出发", its "下") had made a cue of its own."""
    if len(lone.lines) != 1 or lone.confidence >= min(later.confidence, unsure):
        return False
    part, whole = comparable(lone.text), comparable(later.text)
    if not part or len(part) > PART_SHARE * len(whole) or in_order(part, whole):
        return False
    box = lone.lines[0].box
    return box is not None and any(
        line.box is not None and _within(box, line.box) and line.box.y <= box.y + box.h / 2 <= line.box.y + line.box.h
        for line in later.lines
    )


#: Comparable characters the longer text needs for :func:`_lone_misread`: short lines ("Hey you.", "Why you?") are
#: alike by chance.
LONE_MIN_CHARS = 8


def _lone_misread(lone: _Open, sure: _Open, text: str, line_similarity: float) -> bool:
    """``lone``, read once, touching ``sure`` (whose reads voted for ``text``), is ``sure``'s subtitle misread: its read
    is less sure than ``sure``'s surest, it has as many lines, each like (``line_similarity``) the line of ``text`` in
    its place, and neither text is the other with characters left out (text growing or shrinking in place, "他来了" ->
    "他们来了", changes the subtitle). The frames at a cut, a fade or over print moving behind a line are the most
    compressed or cluttered, and a read there may take in a glyph of the picture or lose one ("东西要我郑你鸣" 0.88
    after four reads of "东西 要我帮你拿吗" 1.0, "oKeep your yoice ..." 0.975 before "Keep your voice ..." 0.993), while
    subtitles that follow each other are lines unalike (a two-line cue whose lower line changes keeps its upper one:
    the changed line is unlike its former self)."""
    if len(lone.results) != 1:
        return False
    read = lone.results[0]
    if read.confidence >= max(r.confidence for r in sure.results):
        return False
    a, b = comparable(read.text), comparable(text)
    if max(len(a), len(b)) < LONE_MIN_CHARS or in_order(a, b) or in_order(b, a):
        return False
    lines_a = [ln.text for ln in read.lines if comparable(ln.text)]
    lines_b = [ln for ln in normalize_text(text).split("\n") if comparable(ln)]
    return len(lines_a) == len(lines_b) and all(
        text_similarity(x, y) >= line_similarity for x, y in zip(lines_a, lines_b, strict=True)
    )


def _voted_read(piece: _Open, text: str) -> OcrResult | None:
    """The surest of ``piece``'s reads that read ``text``, what its reads voted for (None when none did: a vote of
    characters)."""
    voted = comparable(text)
    agreeing = [r for r in piece.results if comparable(r.text) == voted]
    return max(agreeing, key=lambda r: r.confidence) if agreeing else None


def _sure_change(a: OcrResult | None, b: OcrResult | None, sure: float) -> bool:
    """``a`` and ``b`` read other text on as many lines, and each read every character the other does not share
    with it at least ``sure`` (the recogniser's probability of that character), one at least in place of another:
    the line changed ("... the rain starts." -> "... the snow starts."). OCR noise that makes two reads of one line
    differ puts an odd glyph where the image is hard to read, and the recogniser is unsure of it (360p:
    "谢谢你大老远袍过来", 袍 at 0.41); a read that lost a glyph or took one from the picture beside the line replaces
    none (see :func:`_glyphs_lost`). False when a read has no per-character probabilities."""
    if a is None or b is None:
        return False
    lines_a = [_sure_chars(ln) for ln in a.lines if comparable(ln.text)]
    lines_b = [_sure_chars(ln) for ln in b.lines if comparable(ln.text)]
    if not lines_a or len(lines_a) != len(lines_b) or any(x is None for x in lines_a + lines_b):
        return False
    replaced = False
    for la, lb in zip(lines_a, lines_b, strict=True):
        assert la is not None and lb is not None
        text_a, text_b = "".join(c for c, _ in la), "".join(c for c, _ in lb)
        for op, i1, i2, j1, j2 in SequenceMatcher(None, text_a, text_b, autojunk=False).get_opcodes():
            if op == "equal":
                continue
            if any(p < sure for _, p in la[i1:i2]) or any(p < sure for _, p in lb[j1:j2]):
                return False
            replaced = replaced or op == "replace"
    return replaced


def _sure_chars(line: OcrLine) -> list[tuple[str, float]] | None:
    """The line's characters in their comparable form, each with the recogniser's probability (None without them)."""
    if line.char_conf is None or len(line.char_conf) != len(line.text):
        return None
    return [(c, p) for char, p in zip(line.text, line.char_conf, strict=True) for c in comparable(char)]


def _extent(results: Sequence[OcrResult]) -> Box | None:
    """Union of the line boxes of the reads (None when the engine gave no boxes)."""
    boxes = [line.box for r in results for line in r.lines if line.box is not None]
    if not boxes:
        return None
    x0, y0 = min(b.x for b in boxes), min(b.y for b in boxes)
    x1, y1 = max(b.x + b.w for b in boxes), max(b.y + b.h for b in boxes)
    return Box(x0, y0, x1 - x0, y1 - y0)


def _within(inner: Box | None, outer: Box | None, tolerance: float = 0.04) -> bool:
    """``inner`` lies inside ``outer`` (with a few percent of slack)."""
    if inner is None or outer is None:
        return False
    slack = tolerance * max(outer.w, 1)
    return inner.x >= outer.x - slack and inner.x + inner.w <= outer.x + outer.w + slack


def _glyphs_lost(ta: str, box_a: Box | None, tb: str, box_b: Box | None) -> bool:
    """The shorter of two texts (comparable forms) is the longer with characters lost, read on a line as wide: its
    characters in the same order, and its extent narrower by less than half the width the lost characters take
    in the longer. A read that lost glyphs of a line (a cut put bright picture behind them, a glyph image read
    without one) keeps the line's extent; a subtitle changed in place to fewer characters is narrower by them."""
    if box_a is None or box_b is None or len(ta) == len(tb):
        return False
    (short, short_box), (long, long_box) = sorted(((ta, box_a), (tb, box_b)), key=lambda t: len(t[0]))
    if not in_order(short, long):
        return False
    glyph = long_box.w / len(long)
    return short_box.w > long_box.w - 0.5 * glyph * (len(long) - len(short))


def _same_place(a: Box | None, b: Box | None) -> bool:
    """Two segments' text lines (the detector's boxes) are in the same place: the same extent (:func:`_boxes_agree`)
    on rows that overlap by at least half the shorter one's height."""
    return a is not None and b is not None and _boxes_agree(a, b) and a.shares_rows(b)


def _boxes_agree(a: Box | None, b: Box | None, tolerance: float = 0.04) -> bool:
    """Same line extent within a few percent of its width (left and right edges both)."""
    if a is None or b is None:
        return False
    slack = tolerance * max(a.w, b.w, 1)
    return abs(a.x - b.x) <= slack and abs((a.x + a.w) - (b.x + b.w)) <= slack


def _vote(results: Sequence[OcrResult]) -> tuple[str, float, str | None]:
    """The read most similar to all others (confidence-weighted), its confidence and translation; where the
    reads disagree on single characters, each such character is voted on as well (:func:`_vote_chars`)."""
    if not results:
        return "", 0.0, None
    texts = [normalize_text(r.text) for r in results]
    plain = [comparable(t) for t in texts]
    if len(results) <= 2:
        # Two reads, one a part of the other: the other saw more of the line (a glyph lost to a fade
        # or an occlusion is a common miss, an invented one is not); not a read with a line more (a sign the
        # moving picture brought beside the subtitle for one read, boxed as a line of its own), as below.
        if len(results) == 2 and plain[0] != plain[1] and (plain[0] in plain[1] or plain[1] in plain[0]) and (
            len(results[0].lines) == len(results[1].lines)
        ):
            best = 0 if len(plain[0]) > len(plain[1]) else 1
        else:
            best = max(range(len(results)), key=lambda i: (results[i].confidence, len(texts[i])))
    else:
        scores = []
        for i, ti in enumerate(texts):
            support = sum(
                text_similarity(ti, tj) * results[j].confidence for j, tj in enumerate(texts) if j != i
            )
            scores.append((support + 0.5 * results[i].confidence, len(ti)))
        best = max(range(len(results)), key=lambda i: scores[i])
        # A read at least as sure that holds the winner and more saw more of the line, as with two reads above (a
        # faint glyph at a pale line's start read by two reads of six); not a read with a line more (a sign's word
        # boxed as a line above a two-line cue by one read of six).
        more = [i for i in range(len(results)) if len(plain[i]) > len(plain[best]) and plain[best] in plain[i]
                and results[i].confidence >= results[best].confidence
                and len(results[i].lines) == len(results[best].lines)]
        if more:
            best = max(more, key=lambda i: scores[i])
    winner = results[best]
    translation = normalize_text(winner.translation) if winner.translation else None
    text = texts[best]
    if len(results) >= 2 and not winner.translation and len(set(texts)) > 1:
        text = _vote_chars(winner, [r for i, r in enumerate(results) if i != best]) or text
        text = _vote_phrase_spaces(text, texts)
    return text, winner.confidence, translation


def _phrases(line: str) -> tuple[str, frozenset[int]]:
    """``line`` without the spaces between two CJK letters, and where they stood (in the letters of that text)."""
    kept: list[str] = []
    at = set()
    for i, char in enumerate(line):
        if char == " " and 0 < i < len(line) - 1 and is_cjk(line[i - 1]) and is_cjk(line[i + 1]):
            at.add(len(kept))
        else:
            kept.append(char)
    return "".join(kept), frozenset(at)


def _vote_phrase_spaces(text: str, texts: Sequence[str]) -> str:
    """``text`` with a space between two of its CJK letters where more than half the reads of its letters put one,
    and none where fewer than half do (the reads with as many letters vote; a tie keeps ``text``'s): the recogniser
    ranks a space between two phrases of a Chinese or Japanese line barely above nothing (see
    PpOcrConfig.space_min_cjk), so one read may miss it or, where a glyph was lost beside it, add one."""
    lines = text.split("\n")
    others = [t.split("\n") for t in texts]
    voted = []
    for k, line in enumerate(lines):
        letters, mine = _phrases(line)
        theirs = [_phrases(o[k]) for o in others if len(o) == len(lines)]
        votes = [at for same, at in theirs if len(same) == len(letters)]  # the same letters, some read otherwise
        if not votes:
            voted.append(line)
            continue
        said = Counter(i for at in votes for i in at)
        spaced = {i for i, n in said.items() if 2 * n > len(votes) or (2 * n == len(votes) and i in mine)}
        voted.append("".join((" " if i in spaced else "") + char for i, char in enumerate(letters)))
    return "\n".join(voted)


def _vote_chars(winner: OcrResult, others: Sequence[OcrResult]) -> str | None:
    """``winner``'s text with each character that other reads of its lines read as another single character
    replaced by the likeliest one (:func:`_likeliest`): the recogniser's probabilities of that character summed
    per reading, the winner's own included (360p: "谢谢你大老远袍过来" read twice with 袍 at 0.41 and 0.52 loses
    to one read of 跑 at 1.0; the whole-read vote above picks the read with most support). Only reads with as
    many lines as ``winner`` and the recogniser's per-character probabilities vote; characters that reads add
    or drop are left as ``winner`` has them. None when ``winner`` has no such probabilities."""
    lines = winner.lines
    if not lines or any(ln.char_conf is None or len(ln.char_conf) != len(ln.text) for ln in lines):
        return None
    voted = []
    for k, line in enumerate(lines):
        assert line.char_conf is not None
        votes: list[dict[str, float]] = [{c: p} for c, p in zip(line.text, line.char_conf, strict=True)]
        added: list[dict[str, float]] = [{} for _ in range(len(line.text) + 1)]
        adders, voters = [0] * (len(line.text) + 1), 1
        for other in others:
            if len(other.lines) != len(lines):
                continue
            theirs = other.lines[k]
            if theirs.char_conf is None or len(theirs.char_conf) != len(theirs.text):
                continue
            voters += 1
            matcher = SequenceMatcher(None, line.text, theirs.text, autojunk=False)
            for op, i1, i2, j1, j2 in matcher.get_opcodes():
                if op == "insert" and j2 - j1 == 1 and 0 < i1 < len(line.text) and theirs.text[j1].isalnum():
                    added[i1][theirs.text[j1]] = added[i1].get(theirs.text[j1], 0.0) + theirs.char_conf[j1]
                    adders[i1] += 1
                if op not in ("equal", "replace") or i2 - i1 != j2 - j1:
                    continue
                for i, j in zip(range(i1, i2), range(j1, j2), strict=True):
                    char = theirs.text[j]
                    votes[i][char] = votes[i].get(char, 0.0) + theirs.char_conf[j]
        chars = [_likeliest(v, own) for v, own in zip(votes, line.text, strict=True)]
        # A glyph inside the line that the winner lost and at least half the reads (two or more) have, whatever
        # they read it as: a glyph lost is a common miss, one made up in the same place by two reads is not (CJK
        # over a page of print: "小点" twice, "小声点" and "小严点" once each).
        for i in range(len(line.text) - 1, 0, -1):
            if adders[i] >= 2 and 2 * adders[i] >= voters:
                chars.insert(i, max(added[i], key=lambda c: added[i][c]))
        voted.append("".join(chars))
    return normalize_text("\n".join(voted))


def _likeliest(votes: dict[str, float], own: str) -> str:
    """The character read likeliest over the reads, ``own`` (the winner's) unless another one that compares
    differently won: letter case and punctuation, which do not make a text another, stay as the winner read
    them; ties keep ``own``."""
    keys: dict[str, float] = {}
    for char, weight in votes.items():
        keys[comparable(char)] = keys.get(comparable(char), 0.0) + weight
    best = max(keys, key=lambda k: (keys[k], k == comparable(own)))
    if best == comparable(own):
        return own
    return max((c for c in votes if comparable(c) == best), key=lambda c: votes[c])


def _evidence(result: OcrResult) -> OcrResult:
    """What a read too unsure to count shows: its text, or for a read the layout judged blank, the glyphs-only
    lines it kept as too unsure to take (vidocr.layout's _with_doubtful)."""
    if not comparable(result.text) and result.glyphs_only is not None:
        return result.glyphs_only
    return result
