"""Temporal merger: per-segment OCR reads become cues with exact start and end.

Input is the detector's segments, in order, each with the OCR results of its reads. Within a
segment, reads that disagree mean the subtitle changed without the mask noticing: the segment is
split at the frame where the mask changed most. Reads of one subtitle vote for its text (the read
most similar to all others, weighted by confidence), so a single bad read loses. Consecutive
segments with no gap between them are joined when their text is the same (a cut or a transient
occlusion split them); a blank segment between two identical lines keeps them apart, and a
different line, even a near-identical one, starts a new cue.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from vidocr.textnorm import comparable, normalize_text, text_similarity
from vidocr.types import Box, Cue, OcrResult


@dataclass(frozen=True)
class MergeOptions:
    """same_read: similarity at which two reads inside one segment count as the same subtitle.
    join_similarity: similarity at which same-length texts of adjacent segments are joined when the
        detector saw their masks as alike (``mask_similarity`` >= join_mask).
    min_confidence: reads below this engine confidence are ignored.
    min_duration_ms: cues shorter than this are dropped (flicker).
    """

    same_read: float = 0.75
    join_similarity: float = 0.75
    join_mask: float = 0.35
    min_confidence: float = 0.7
    min_duration_ms: int = 40


@dataclass(frozen=True)
class Read:
    """One OCR read: when it was taken, where to split if it disagrees with the previous read."""

    ts_ms: int
    split_ms: int
    result: OcrResult


@dataclass
class SegmentRecord:
    """A finished detector segment with its reads (in time order)."""

    start_ms: int
    end_ms: int
    reads: list[Read]
    mask_similarity: float = 0.0
    box: Box | None = None


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

    def push(self, segment: SegmentRecord) -> list[Cue]:
        out: list[Cue] = []
        pieces = self._split(segment)
        for i, piece in enumerate(pieces):
            mask_sim = segment.mask_similarity if i == 0 else 0.0
            out.extend(self._add(piece, mask_sim))
        if not pieces:
            out.extend(self._close())
        return out

    def flush(self) -> list[Cue]:
        return self._close()

    # -- internals ----------------------------------------------------------------------------
    def _usable(self, result: OcrResult) -> bool:
        return bool(comparable(result.text)) and result.confidence >= self.options.min_confidence

    def _split(self, seg: SegmentRecord) -> list[_Open]:
        """Group the segment's usable reads into runs of the same subtitle."""
        reads = [r for r in seg.reads if self._usable(r.result)]
        if not reads:
            return []
        pieces: list[_Open] = []
        current = _Open(seg.start_ms, seg.end_ms, [reads[0].result], seg.box)
        for read in reads[1:]:
            if self._same_subtitle(current.text(), read.result.text):
                current.results.append(read.result)
                continue
            cut = min(max(read.split_ms, current.start_ms + 1), seg.end_ms - 1)
            current.end_ms = cut
            pieces.append(current)
            current = _Open(cut, seg.end_ms, [read.result], seg.box)
        pieces.append(current)
        return pieces

    def _same_subtitle(self, a: str, b: str) -> bool:
        """Two reads of one segment show the same subtitle: equal, or differing like OCR noise does.

        OCR noise mostly swaps characters; a changed subtitle usually adds or drops some
        ("你听我说" -> "你听我说完"), so texts of different length must be much closer to count.
        """
        ca, cb = comparable(a), comparable(b)
        if ca == cb:
            return True
        sim = text_similarity(ca, cb)
        if len(ca) == len(cb):
            return sim >= self.options.same_read
        return sim >= 0.92

    def _add(self, piece: _Open, mask_sim: float) -> list[Cue]:
        prev = self._open
        if prev is not None and prev.end_ms == piece.start_ms and self._joinable(prev, piece, mask_sim):
            prev.end_ms = piece.end_ms
            prev.results.extend(piece.results)
            return []
        out = self._close()
        self._open = piece
        return out

    def _joinable(self, a: _Open, b: _Open, mask_sim: float) -> bool:
        ta, tb = comparable(a.text()), comparable(b.text())
        if ta == tb:
            return True
        if len(ta) != len(tb) or mask_sim < self.options.join_mask:
            return False
        return text_similarity(ta, tb) >= self.options.join_similarity

    def _close(self) -> list[Cue]:
        piece, self._open = self._open, None
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
                box=piece.box,
                translation=translation,
                reads=len(piece.results),
            )
        ]


def _vote(results: Sequence[OcrResult]) -> tuple[str, float, str | None]:
    """The read most similar to all others (confidence-weighted), its confidence and translation."""
    if not results:
        return "", 0.0, None
    texts = [normalize_text(r.text) for r in results]
    if len(results) <= 2:
        best = max(range(len(results)), key=lambda i: (results[i].confidence, len(texts[i])))
    else:
        scores = []
        for i, ti in enumerate(texts):
            support = sum(
                text_similarity(ti, tj) * results[j].confidence for j, tj in enumerate(texts) if j != i
            )
            scores.append((support + 0.5 * results[i].confidence, len(ti)))
        best = max(range(len(results)), key=lambda i: scores[i])
    winner = results[best]
    translation = normalize_text(winner.translation) if winner.translation else None
    return texts[best], winner.confidence, translation
