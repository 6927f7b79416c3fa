"""Subtitle-band change detection: which frames to read, and where each subtitle starts and ends.

Every decoded frame gives a text mask of the band (:mod:`vidocr.textmask`). A state machine
compares each sampled frame's mask with the current segment's: a different mask that holds for
``confirm`` samples opens a new segment, whose start is the first frame of the new state (refined to
the exact frame from the masks of the frames between samples when sampling is sparser than the frame
rate). Segments whose band holds no text-like lines are never read. A text segment is read once it
is stable, then again every ``recheck_s`` seconds, after a scene cut, when its mask drifts and when a
line grows beyond where it was at the last read (words added in place): the merger compares those
reads, so a subtitle change the masks missed is still caught (and split where it happened: see
``_change_point``), and OCR noise is voted away.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from enum import Enum

import cv2
import numpy as np
from scenedetect.common import FrameTimecode, Timecode
from scenedetect.detectors import ContentDetector

from vidocr.textmask import TextLine, overlap, similarity, text_lines
from vidocr.types import Timestamp

_KERNEL3 = np.ones((3, 3), np.uint8)
#: Pixels that each of two masks must have where the other has none for :meth:`BandChangeDetector._change_point` to
#: tell them by those alone.
CHANGED_PIXELS = 8
#: Share of a subtitle's glyph pixels still present for it to count as shown when no text line is found.
GLYPHS_HELD = 0.8
#: ... and under this share it was gone: a subtitle gone in every frame from where it was first missing up to where
#: the next state began ended where it was first missing, even when the next subtitle's glyphs cover its place.
GLYPHS_GONE = 0.5
#: ... frames showing GLYPHS_GONE to GLYPHS_HELD of them, this much on average, then one showing less than GLYPHS_GONE:
#: the glyphs arrived there (see BandChangeDetector._held_back).
GLYPHS_LOOSE = 0.65
#: A subtitle whose glyphs were partly lost to a new picture (a cut to dense texture) is still shown while the pixels
#: of its glyphs that every frame since kept (its survivors) are at least this share of them, through at least
#: ``confirm`` frames in which the picture moved (PICTURE_MOVED of its edge pixels changed since the frame before):
#: texture that moves loses its pixels, a still subtitle keeps them; over a still picture nothing is proven.
SURVIVORS = 0.25
PICTURE_MOVED = 0.2
#: A new subtitle with fewer pixels of its own than this share of its glyphs (it is drawn where the old one was) is
#: judged by all of its glyphs when telling whether it was there at the old one's end.
OWN_SHARE = 0.25
#: Fewest stable glyph pixels (analysis resolution) worth judging by: about one small glyph.
GLYPHS_MIN_PIXELS = 24
#: A subtitle fading in or out (see BandChangeDetector._faded) is drawn in the frames of its fade where its glyphs
#: have at least this share of the contrast against their rim (over the band's without it) that they have in its
#: own frames nearby (FADE_REFERENCE of them, at least FADE_CONTRAST_MIN grey levels); a fade's frames are each
#: FADE_STEP of that contrast fainter than the one nearer the subtitle; followed for at most FADE_MAX_S.
FADE_SHARE = 0.2
FADE_STEP = 0.03
FADE_REFERENCE = 4
FADE_CONTRAST_MIN = 40.0
FADE_MAX_S = 1.0
#: A line of the last read whose glyph cores (its mask eroded by a pixel: the rim that the mask fills around each
#: glyph goes) are less alike than this in its box now was redrawn with other glyphs (another line of as many in
#: its place, over a light picture: the filled masks of two such lines are 0.84 alike, their cores 0.19; a still
#: line's cores over a moving picture, 0.82-1.0 on the libass corpus). Asks for a read.
CORES_CHANGED = 0.5
#: ... when the cores of the line keep at least this many pixels (thin strokes erode away: 360p, thin fonts).
CORES_MIN_PIXELS = 2 * GLYPHS_MIN_PIXELS
#: A line of the last read whose column profile (glyph pixels per column) correlates under this with its box's now,
#: at the best shift of up to PROFILE_SHIFT columns, was redrawn with other words (a serif line over a pylon in
#: place of another: 0.45; the same line over a moving picture: 0.98-1.0). Asks for a read, as CORES_CHANGED.
PROFILE_CHANGED = 0.7
PROFILE_SHIFT = 2
#: ... judged on centred lines (where subtitles are) with at least this many glyph pixels (a few words: the profile
#: of a line of picture detail is noise).
PROFILE_MIN_PIXELS = 8 * GLYPHS_MIN_PIXELS
#: How far back a subtitle's start may be moved by _shown_since (seconds).
LOOKBACK_S = 1.0
#: A text mask at least this similar to its segment's held still; if the band's edge pixels changed by at least
#: EDGES_CHANGED of them since the last read meanwhile, something the mask does not see came or went: a subtitle
#: over a busy still picture, whose glyphs merge with picture detail the mask leaves out. An UNSEEN read then
#: (a blank result ends the subtitle where the edges changed: vidocr.merge).
STILL_MASK = 0.9
EDGES_CHANGED = 0.25
#: A new text segment whose mask shares at least this much with the previous text segment's (see
#: textmask.similarity) may be the same subtitle, its mask split by picture detail passing by.
SPLIT_SIMILARITY = 0.3
#: A text line whose centre is within this share of the band's width (plus half its height) of the band's
#: centre is centred, as subtitle lines are (rendered subtitles: 0-1%).
CENTRED = 0.03
#: A centred line with less than this share of its band's mask is judged on its own (see centred_similarity).
SMALL_PART = 0.5
#: Rows and columns of pixels that came or went with at least this share of the median count are a line's.
DENSE = 0.4
#: ... and where more than this share of as many pixels went the other way, picture detail moved there.
MOVED_SHARE = 0.35
#: A band whose edge pixels are at most this share of it is clean (a smooth picture behind the subtitle): only there
#: does the change detector look for lines of thin strokes (see BandChangeDetector._text).
CLEAN_BAND = 0.02


@dataclass(frozen=True)
class DetectOptions:
    """Change-detection settings.

    sample_fps: frames per second whose masks drive decisions (None: every frame). Masks of the
        frames in between are still kept, so boundaries stay frame-accurate.
    confirm: consecutive samples a new band state must hold before it counts (debounce).
    same_threshold: mask similarity (Dice) at or above which two samples show the same subtitle.
    recheck_s: a stable subtitle is read again at most this often (voting + missed-change guard).
    drift_threshold: similarity to the segment's reference below which an extra read is made.
    cut_threshold: after a shot cut, re-read when the similarity dipped below this since the last read.
    scene_cuts: re-read the subtitle after a shot cut (PySceneDetect ContentDetector).
    """

    sample_fps: float | None = None
    confirm: int = 2
    same_threshold: float = 0.65
    recheck_s: float = 2.0
    drift_threshold: float = 0.75
    cut_threshold: float = 0.95
    min_read_gap_s: float = 0.4
    scene_cuts: bool = True


@dataclass
class Segment:
    """A stretch of frames with one band state. ``end`` is the first frame after it."""

    index: int
    start: Timestamp
    has_text: bool
    mask: np.ndarray
    lines: list[TextLine]
    prev_similarity: float
    end: Timestamp | None = None
    #: A blank segment the detector inferred (the subtitle before it left, the next one's glyphs not there yet)
    #: while every sample in it had text lines: it may be a subtitle the masks lost over a moving picture.
    lines_held: bool = False


class ReadReason(Enum):
    """Why the detector asks for a read."""

    FIRST = "first"  # text on the very first frame, read before it can be confirmed
    NEW = "new"  # a new text segment, once it held for ``confirm`` samples
    GROW = "grow"  # a line grew past the last read's lines (words added in place)
    CUT = "cut"  # a shot cut under a subtitle whose mask moved
    DRIFT = "drift"  # the mask drifted from the last read's for ``confirm`` samples
    RECHECK = "recheck"  # ``recheck_s`` passed: a vote, and a guard against changes the masks missed
    UNSEEN = "unseen"  # the band's edges changed by a lot under a mask that held still (see STILL_MASK)
    BACK = "back"  # the shown subtitle's mask came back after frames without its glyphs (a gap, or flicker)


@dataclass(frozen=True)
class SegmentStarted:
    """A new band state (a segment) begins at ``segment.start``; the reads that follow are for it."""

    segment: Segment


@dataclass(frozen=True)
class SegmentEnded:
    """``segment`` ends at ``end`` (the first frame after it); no read for it follows."""

    segment: Segment
    end: Timestamp


@dataclass(frozen=True)
class ReadRequest:
    """OCR the current frame for ``segment``. If this read disagrees with the segment's previous
    one, the subtitle changed unseen: ``split_at`` is where it changed (see ``BandChangeDetector._change_point``)."""

    segment: Segment
    ts: Timestamp
    split_at: Timestamp
    reason: ReadReason
    lines: tuple[TextLine, ...] = ()
    #: A line reaches past the lines of the previous read (words were added), or is on rows where that read
    #: had none (a line was added): not a mere repeat of it.
    grown: bool = False
    #: For a BACK read: the first of the frames without the shown subtitle's glyphs before ``split_at``. If
    #: this read finds other text, the subtitle before it ended there (a gap, not flicker).
    left_at: Timestamp | None = None


#: What :meth:`BandChangeDetector.push` and :meth:`~BandChangeDetector.finish` yield.
DetectorEvent = SegmentStarted | SegmentEnded | ReadRequest


@dataclass
class _Pending:
    first: Timestamp
    mask: np.ndarray
    lines: list[TextLine]
    count: int = 1
    #: The pixels of every sample's mask since ``first`` (within a pixel): the new state's glyphs without the
    #: picture detail that moved meanwhile (a subtitle appearing over shaking grass).
    held: np.ndarray | None = None


@dataclass
class _Sample:
    ts: Timestamp
    edges: np.ndarray
    image: np.ndarray | None = None  # the analysis image the edges came from, when given (see _faded)


@dataclass
class _ReadTrack:
    last_read_s: float = -1e9
    worst_sim: float = 1.0
    worst_ts: Timestamp | None = None
    cut_ts: Timestamp | None = None
    low_run: int = 0  # consecutive samples below the drift threshold
    drifted: bool = False
    #: The first sample of a run in which a line reaches beyond the lines of the last read (words added
    #: in place: typewriter and roll-up captions barely change the mask).
    grow_ts: Timestamp | None = None
    grow_run: int = 0
    edges: int = 0  # edge pixels of the band when it was read
    edges_run: int = 0  # consecutive samples whose edges changed by EDGES_CHANGED under a still mask
    first: bool = False  # the last read was of the video's first frame (ReadReason.FIRST)
    #: The first frame of the shown subtitle's mask back after frames that had lost its glyphs, and the samples
    #: since: a gap between two subtitles whose masks are too alike to tell apart (the same number of glyphs in
    #: the same place, at 360p: the masks of two lines of CJK differ by a few pixels), or flicker. Read again.
    back_ts: Timestamp | None = None
    back_run: int = 0
    #: ... and the first frame of those that had lost its glyphs.
    back_left: Timestamp | None = None
    #: The first sample of a run in which a line of the last read was redrawn (see CORES_CHANGED), and its length.
    cores_ts: Timestamp | None = None
    cores_run: int = 0
    #: The run went on across one sample that looked like the read again (see CORES_LAPSE).
    cores_lapsed: bool = False
    #: The first frame of a run of frames unlike the segment's state that ended at this sample without a new state
    #: holding (None when this sample follows no such run).
    dip_ts: Timestamp | None = None
    #: Where a line redrawn at the sample before this one (the last compared with the read, see _redrawn) would have
    #: changed: its ``dip_ts``, else that sample.
    prev_began: Timestamp | None = None


class BandChangeDetector:
    """Feed every frame's edge mask in order with :meth:`push`, then call :meth:`finish`; they yield
    :data:`DetectorEvent` values: :class:`SegmentStarted`, :class:`SegmentEnded` and :class:`ReadRequest`
    (for the segment started last; a read always refers to the frame just pushed).
    """

    def __init__(
        self,
        options: DetectOptions | None = None,
        fps_hint: float | None = None,
        line_height: float | None = None,
        core_rows: tuple[int, int] | None = None,
    ) -> None:
        self.options = options or DetectOptions()
        # Rows (analysis pixels) where the band finder saw subtitle lines: text elsewhere in the
        # band (picture detail above the subtitles) only counts next to a line in these rows.
        self._core = core_rows
        # Subtitles keep one font size through a video: lines much smaller than the ones the band
        # finder saw (in analysis pixels) are picture detail, not subtitles.
        self._min_height = max(6, int(line_height * 0.35)) if line_height else 6
        self._line_height = line_height
        self._segment: Segment | None = None
        self._pending: _Pending | None = None
        self._lines: tuple[TextLine, ...] = ()
        self._read_lines: tuple[TextLine, ...] = ()  # the lines of the latest read
        self._mask: np.ndarray | None = None  # the latest sample's text mask
        self._read_mask: np.ndarray | None = None  # the text mask of the latest read
        #: ... what tells a line of it redrawn in place (see _redrawn).
        self._read_side: _ReadSide | None = None
        self._prev_text: tuple[np.ndarray, np.ndarray, list[TextLine]] | None = None
        self._left_at: Timestamp | None = None
        #: The first frame of the run of samples unlike the segment's state so far (see _ReadTrack.dip_ts).
        self._dip: Timestamp | None = None
        #: The shown subtitle's survivors fell (see _survival) since it was first missing (``_left_at``): it left, and
        #: survivors of its glyphs' places found later are another subtitle's glyphs drawn there.
        self._fell = False
        #: The latest sample, since the shown subtitle was last seen whole, that had lost its glyphs.
        self._gone: Timestamp | None = None
        #: Pixels of the shown subtitle's mask that have been there in every sample since it appeared:
        #: its glyphs, without the picture detail that passed by (see _step).
        self._glyphs: np.ndarray | None = None
        #: The shown subtitle's glyph pixels that every frame kept since its glyphs were partly lost (see
        #: SURVIVORS), and the frames in which the picture moved meanwhile.
        self._survivors: np.ndarray | None = None
        self._survived = 0
        self._track = _ReadTrack()
        self._between: deque[_Sample] = deque(maxlen=512)
        #: The latest frames' edge masks (sampled or not), to look back from a subtitle's first clear frame.
        self._recent: deque[_Sample] = deque(maxlen=128)
        self._now: _Sample | None = None  # the sample being judged (in _recent once judged)
        self._next_sample_s = 0.0
        self._edges = 0  # edge pixels of the latest sample
        self._lineless: Timestamp | None = None  # the latest sample with no text lines
        self.samples = 0

    # -- public -------------------------------------------------------------------------------
    @property
    def unlike(self) -> bool:
        """The latest sample did not show the current segment's state: a new state is pending, not yet confirmed
        (it may be the next subtitle fading in, whose segment is told from the frame it held still)."""
        return self._pending is not None

    def push(
        self, ts: Timestamp, edges: np.ndarray, cut: bool = False, image: np.ndarray | None = None
    ) -> Iterator[DetectorEvent]:
        """Feed one frame's edge mask; ``cut`` says a shot cut happened at this frame; ``image``: the analysis image
        the mask came from (grey, its shape), which tells a subtitle fading in or out (see _faded)."""
        opts = self.options
        if cut and opts.scene_cuts:
            self._track.cut_ts = ts
        sampled = opts.sample_fps is None or ts.seconds + 1e-9 >= self._next_sample_s
        if not sampled:
            self._between.append(_Sample(ts, edges, image))
            self._recent.append(self._between[-1])
            return
        if opts.sample_fps:
            self._next_sample_s = ts.seconds + 1.0 / opts.sample_fps
        self.samples += 1
        self._now = _Sample(ts, edges, image)
        mask, lines = self._text(edges)
        self._mask, self._lines = mask, tuple(lines)
        if not lines:
            self._lineless = ts
        self._edges = int(np.count_nonzero(edges))
        if self._segment is None:
            self._segment = Segment(0, ts, bool(lines), mask, lines, 0.0)
            self._glyphs = mask if lines else None
            yield SegmentStarted(self._segment)
            if lines:
                # Text on the very first frame: read it now, it may be gone before it can be confirmed.
                yield from self._read(ts, ts, ReadReason.FIRST)
        else:
            yield from self._step(ts, edges, mask, lines)
        self._between.clear()
        self._recent.append(_Sample(ts, edges, image))

    def _text(self, edges: np.ndarray) -> tuple[np.ndarray, list[TextLine]]:
        """Text lines of a sample's edge mask. A mask that barely differs from the previous sample's
        (a still subtitle over a still picture: most frames) reuses that result."""
        prev = self._prev_text
        if prev is not None and prev[0].shape == edges.shape:
            changed = int(np.count_nonzero(prev[0] != edges))
            if changed <= max(8, 0.01 * int(np.count_nonzero(edges))):
                return prev[1], prev[2]
        core = self._core
        mask, lines = self._in_core(*text_lines(edges, min_height=self._min_height, cut_glued=True))
        if not lines and np.count_nonzero(edges) <= CLEAN_BAND * edges.size:
            # No line of glyphs that fill their boxes, in a band otherwise clean: a line of thin strokes (a Ming face
            # at the analysis scale) may be there alone. Looked for only then: in a busy picture or in grain, sparse
            # shapes crossing their middle abound. Its vertical strokes may be as long as the straight picture edges
            # text_lines removes where the band is tight around the subtitle rows: keep runs as tall as those rows.
            rows = core[1] - core[0] if core is not None else 0
            mask, lines = self._in_core(
                *text_lines(edges, min_height=self._min_height, cut_glued=True, thin_strokes=True, line_rows=rows)
            )
        self._prev_text = (edges, mask, lines)
        return mask, lines

    def _in_core(self, mask: np.ndarray, lines: list[TextLine]) -> tuple[np.ndarray, list[TextLine]]:
        """No text when no line is in the rows where the band finder saw subtitle lines."""
        core = self._core
        if core is not None and lines and not any(ln.y0 < core[1] and ln.y1 > core[0] for ln in lines):
            return np.zeros_like(mask), []
        return mask, lines

    def finish(self, end: Timestamp) -> Iterator[DetectorEvent]:
        """Close the last segment at ``end`` (the time just after the last frame)."""
        seg = self._segment
        if seg is None or seg.end is not None:
            return
        left = self._left_at
        if seg.has_text and left is not None and (
            self._gone_between(seg.mask, left, end) or self._survival(seg.mask) is False
        ):
            # The subtitle left and the picture never held still long enough for a new state before the end.
            seg.end = left
            yield SegmentEnded(seg, left)
            yield from _blank(seg.index + 1, left, end, seg.mask, self._lines_since(left))
            return
        seg.end = end
        yield SegmentEnded(seg, end)

    # -- state machine ------------------------------------------------------------------------
    def _step(
        self, ts: Timestamp, edges: np.ndarray, mask: np.ndarray, lines: list[TextLine]
    ) -> Iterator[DetectorEvent]:
        opts = self.options
        seg = self._segment
        assert seg is not None
        sim = similarity(seg.mask, mask) if (seg.has_text or lines) else 1.0
        seen = cv2.dilate(edges, _KERNEL3) if seg.has_text else None
        shown = overlap(self._glyph_set(seg.mask), seen) if seen is not None else 0.0  # share of its glyphs there
        held = sim < opts.same_threshold and shown >= GLYPHS_HELD
        if seen is not None and shown < GLYPHS_HELD:
            self._gone = ts
        if seen is not None:
            self._survive(seg.mask, edges, seen, shown)
            survival = self._survival(seg.mask)
            self._fell = self._fell or (self._left_at is not None and survival is False)
            if sim < opts.same_threshold and survival is True and not self._fell:
                # Its glyphs were partly lost to a moving picture, but the ones left stay: still shown.
                held, self._left_at = True, None
        if sim >= opts.same_threshold and (seg.has_text or lines):
            # The band may look alike only because picture detail fills most of its mask (a small
            # subtitle beside a bright object): judge the centred lines, where subtitles are, on their own.
            sim = min(sim, centred_similarity(seg.mask, seg.lines, mask, lines, self._core))
            sim = min(sim, changed_line_similarity(seg.mask, mask, self._core, self._line_height, seg.lines))
        if held and not lines:
            # The lines vanished but the glyphs did not: picture detail touching them made shapes that
            # are no text. Still this subtitle; a drift read checks it.
            sim = opts.same_threshold
        if sim >= opts.same_threshold:
            gone = self._gone
            left, track = self._left_at, self._track
            # Back after frames without its glyphs (not a line of picture detail that changed beside them).
            if left is not None and gone is not None and gone.seconds >= left.seconds and track.back_ts is None:
                track.back_ts, track.back_left = self._back_at(gone, ts, mask), left
            self._gone = None
            self._pending = None
            dip, self._dip = self._dip, None
            track.dip_ts = dip if dip is not None and dip.seconds > track.last_read_s else None
            self._left_at, self._fell = None, False
            if seen is not None:
                if self._glyphs is not None:
                    self._glyphs = self._glyphs & seen
                yield from self._maybe_recheck(ts, sim)
            return
        if self._left_at is None and not held:
            # The first frame that no longer shows this segment's state: where it ends, whatever
            # flickers in between (picture detail coming and going) before a new state holds. A state
            # that only added to a subtitle whose glyphs all stay has not ended it.
            self._left_at = self._refine_start(ts, seg.mask, mask)
        pend = self._pending
        if pend is not None and (similarity(pend.mask, mask) >= opts.same_threshold or not (lines or pend.lines)):
            pend.count += 1
            pend.held = mask & cv2.dilate(pend.held if pend.held is not None else pend.mask, _KERNEL3)
            pend.mask, pend.lines = mask, lines
        else:
            pend = self._pending = _Pending(self._refine_start(ts, seg.mask, mask), mask, lines)
        self._dip = self._dip or pend.first
        if pend.count < opts.confirm:
            return
        # A new band state has held long enough. A subtitle ends where it was first missing, whatever
        # flickered after it, unless its glyphs were all still there when the new state began (its mask
        # only flickered: it ends there). Text that appears on an empty band starts where its glyphs
        # were first all there; text that follows text starts where the old text ended, or, when its
        # own glyphs were not there yet then, where it began (the frames between are a blank gap).
        self._pending = self._dip = None
        boundary = pend.first
        gap: Timestamp | None = None
        surviving = self._survival(seg.mask) is True and not self._fell
        back, back_left = self._track.back_ts, self._track.back_left
        came_back = False
        if seg.has_text and back is not None and back_left is not None and pend.lines and not surviving:
            # The shown mask came back after a gap and was not read again yet: if the new state's glyphs were there
            # when it came back, the gap ended the old subtitle and this one came then (the picture changed beside
            # it since, making a new state of it).
            at_back = self._edges_at(back, ts, edges)
            glyphs = self._core_glyphs(pend.mask, pend.lines, centred=True)
            came_back = at_back is not None and bool(np.count_nonzero(glyphs) >= GLYPHS_MIN_PIXELS) and bool(
                overlap(glyphs, cv2.dilate(at_back, _KERNEL3)) >= GLYPHS_HELD
            )
        if came_back:
            assert back is not None and back_left is not None
            gap, boundary = back_left, back
        elif seg.has_text and self._left_at is not None and not surviving:
            at_first = self._edges_at(pend.first, ts, edges)
            if (
                at_first is None
                or not self._glyphs_held(seg.mask, cv2.dilate(at_first, _KERNEL3))
                or self._gone_between(seg.mask, self._left_at, pend.first)
            ):
                boundary = self._left_at
                # The new state's own pixels, on its centred lines in the subtitle rows: picture detail elsewhere in
                # the band that a zoom moved since the old state began is no sign that the new subtitle was there.
                # A new subtitle drawn where the old one was has few pixels of its own: then all of its glyphs.
                glyphs = self._core_glyphs(pend.mask, pend.lines, centred=True)
                own = cv2.subtract(glyphs, cv2.dilate(seg.mask, _KERNEL3))
                if np.count_nonzero(own) < max(GLYPHS_MIN_PIXELS, OWN_SHARE * np.count_nonzero(glyphs)):
                    own = glyphs
                if pend.lines and self._left_at.seconds < pend.first.seconds and not self._arrived(
                    own, self._left_at, ts, edges
                ):
                    gap, boundary = self._left_at, self._there_since(pend, self._left_at)
        elif seg.has_text and self._left_at is None and pend.lines:
            # The old state's glyphs all stayed (a sign in the picture, a line that stays): the new state began where
            # its own glyphs were first all there. Over a moving picture the pending state starts again at each
            # frame until one holds, later than the subtitle came.
            glyphs = self._core_glyphs(pend.held if pend.held is not None else pend.mask, pend.lines, centred=True)
            own = cv2.subtract(glyphs, cv2.dilate(seg.mask, _KERNEL3))
            boundary = self._came_at(boundary, own, seg.start)
        if not seg.has_text and pend.lines:
            boundary = self._shown_since(boundary, self._core_glyphs(pend.mask, pend.lines), seg.start)
        if seg.has_text and (gap is not None or not pend.lines):
            # The subtitle left a blank band (or a gap): it may have faded out over the frames its edges were lost in.
            left = gap or boundary
            later = self._faded(left, self._glyph_set(seg.mask), boundary if gap is not None else ts, forward=True)
            if gap is not None:
                gap = later
            else:
                boundary = later
        if pend.lines and (gap is not None or not seg.has_text):
            # A subtitle that came on a blank band may have faded in: its glyphs' contrast was there before its edges.
            boundary = self._faded(boundary, self._core_glyphs(pend.mask, pend.lines), gap or seg.start, forward=False)
        if gap is not None and gap.seconds >= boundary.seconds:
            gap = None  # it faded out until the next one came
        self._left_at = self._gone = None
        self._fell = False
        seg.end = gap or boundary
        yield SegmentEnded(seg, seg.end)
        index = seg.index + 1
        if gap is not None:
            yield from _blank(index, gap, boundary, pend.mask, self._lines_since(gap))
            index += 1
        new = Segment(index, boundary, bool(pend.lines), pend.mask, pend.lines, sim)
        self._segment = new
        self._glyphs = self._carried_glyphs(new, edges) if new.has_text else None
        if surviving and new.has_text:
            self._glyphs = self._survivors
        self._survivors, self._survived = None, 0
        self._track = _ReadTrack()
        yield SegmentStarted(new)
        if new.has_text:
            yield from self._read(ts, boundary, ReadReason.NEW)

    def _lines_since(self, start: Timestamp) -> bool:
        """Every sample since ``start`` had text lines."""
        return self._lineless is None or self._lineless.seconds < start.seconds

    def _arrived(self, glyphs: np.ndarray, when: Timestamp, ts: Timestamp, edges: np.ndarray) -> bool:
        """At least half of ``glyphs`` (the new state's own pixels) are already in the frame at ``when``
        (unknown frames count as arrived: no gap is made without evidence)."""
        at = self._edges_at(when, ts, edges)
        if at is None or np.count_nonzero(glyphs) < GLYPHS_MIN_PIXELS:
            return True
        return overlap(glyphs, cv2.dilate(at, _KERNEL3)) >= 0.5

    def _glyphs_held(self, mask: np.ndarray, seen: np.ndarray) -> bool:
        """Nearly every glyph pixel of the shown subtitle is still a bright pixel with a dark rim
        (``seen``: the frame's edge mask, dilated by a pixel). Its glyphs are the pixels that stayed
        through it (picture detail that was in its mask when it appeared has moved away), while
        there are enough of them; else the segment's mask."""
        return overlap(self._glyph_set(mask), seen) >= GLYPHS_HELD

    def _survive(self, mask: np.ndarray, edges: np.ndarray, seen: np.ndarray, shown: float) -> None:
        """Track the shown subtitle's survivors (see SURVIVORS): reset while its glyphs are all there (``shown``:
        the share of them in ``seen``, the frame's dilated edges)."""
        if shown >= GLYPHS_HELD:
            self._survivors, self._survived = None, 0
            return
        before = self._survivors if self._survivors is not None else self._glyph_set(mask)
        self._survivors = before & seen
        prev = self._recent[-1].edges if self._recent else None
        if prev is not None and prev.shape == edges.shape:
            changed = int(np.count_nonzero(prev != edges))
            if changed >= PICTURE_MOVED * max(1, int(np.count_nonzero(prev | edges))):
                self._survived += 1

    def _survival(self, mask: np.ndarray) -> bool | None:
        """Whether the shown subtitle, its glyphs partly lost to a moving picture, is still there (its survivors
        kept their share, see SURVIVORS) or left (they fell under it: moving texture may cover half of its
        glyphs' places in any one frame, but not the same pixels frame after frame); None while unproven (its
        glyphs are all there, or the picture did not move for ``confirm`` frames since they were not)."""
        survivors = self._survivors
        if survivors is None or self._survived < self.options.confirm:
            return None
        kept = int(np.count_nonzero(survivors))
        return kept >= max(GLYPHS_MIN_PIXELS, SURVIVORS * int(np.count_nonzero(self._glyph_set(mask))))

    def _glyph_set(self, mask: np.ndarray) -> np.ndarray:
        """The shown subtitle's glyphs (see _glyphs_held): those that stayed through it while there are enough of
        them, else ``mask``."""
        glyphs = self._glyphs
        if glyphs is None or np.count_nonzero(glyphs) < max(GLYPHS_MIN_PIXELS, 0.25 * np.count_nonzero(mask)):
            return mask
        return glyphs

    def _gone_between(self, mask: np.ndarray, left: Timestamp, first: Timestamp) -> bool:
        """The shown subtitle's glyphs were gone (under GLYPHS_GONE of them there) in every recent frame from
        ``left`` (where it was first missing) up to ``first`` (where the next state began), and there was such a
        frame: a new subtitle drawn where the old one was may cover its glyphs' place, but the blank frames
        between the two say where it ended."""
        glyphs = self._glyph_set(mask)
        between = [s for s in self._recent if left.seconds <= s.ts.seconds < first.seconds]
        return bool(between) and all(overlap(glyphs, cv2.dilate(s.edges, _KERNEL3)) < GLYPHS_GONE for s in between)

    def _edges_at(self, when: Timestamp, ts: Timestamp, edges: np.ndarray) -> np.ndarray | None:
        """The edge mask of the frame at ``when`` (the current one, ``ts``, or a recent one)."""
        if when == ts:
            return edges
        return next((sample.edges for sample in reversed(self._recent) if sample.ts == when), None)

    def _core_glyphs(self, mask: np.ndarray, lines: list[TextLine], centred: bool = False) -> np.ndarray:
        """``mask``'s pixels on its lines in the core rows (where the band finder saw the subtitles), when it
        has enough of them: picture detail elsewhere in the band counts as text only beside a subtitle line
        (see _text), and was in the frames before the subtitle came, outside the masks. With ``centred``, on
        those of the lines that are centred (as subtitle lines are, see CENTRED) when they have enough."""
        core = self._core
        if core is None:
            return mask
        width = mask.shape[1]
        found = mask
        for only_centred in (False, True) if centred else (False,):
            keep = np.zeros_like(mask)
            for ln in lines:
                if only_centred and not _centred(ln.x0, ln.x1, ln.height, width):
                    continue
                if ln.y0 < core[1] and ln.y1 > core[0]:
                    keep[ln.y0 : ln.y1 + 1, ln.x0 : ln.x1 + 1] = mask[ln.y0 : ln.y1 + 1, ln.x0 : ln.x1 + 1]
            if np.count_nonzero(keep) >= GLYPHS_MIN_PIXELS:
                found = keep
        return found

    def _shown_since(self, first: Timestamp, glyphs: np.ndarray, floor: Timestamp) -> Timestamp:
        """The first frame of a run, ending just before ``first``, in which a subtitle that appears on an
        empty band was already all there: its glyph pixels in place (within a pixel), though not yet
        lines of text (picture detail touching them made other shapes). At most LOOKBACK_S back, and
        from ``floor`` on (the start of the empty segment, which then ends up empty)."""
        return self._held_back(first, glyphs, floor, at_floor=True)[0]

    def _came_at(self, first: Timestamp, glyphs: np.ndarray, floor: Timestamp) -> Timestamp:
        """The first frame of the run, ending just before ``first``, that shows ``glyphs`` (a new state's own
        pixels) all there, when the frame before that run clearly lacks them (less than GLYPHS_GONE of them): they
        arrived there. Else ``first``: pixels that were there all along, as far back as the frames go (LOOKBACK_S,
        after ``floor``), are picture detail, and a run with no clear arrival is no evidence."""
        start, before = self._held_back(first, glyphs, floor, at_floor=False)
        return start if before is not None and before < GLYPHS_GONE else first

    def _held_back(
        self, first: Timestamp, glyphs: np.ndarray, floor: Timestamp, at_floor: bool
    ) -> tuple[Timestamp, float | None]:
        """The first frame of the run of recent frames, ending just before ``first``, that show ``glyphs`` all
        there (GLYPHS_HELD of them, within a pixel), at most LOOKBACK_S back and after ``floor`` (``at_floor``: from
        it on); and the share of them the frame before that run shows, None when the run reached one of those
        bounds or the recent frames' start (or ``glyphs`` are too few to judge: then ``first``)."""
        if np.count_nonzero(glyphs) < GLYPHS_MIN_PIXELS:
            return first, None
        start = first
        # On an empty band (``at_floor``), frames that show most of them but not all (GLYPHS_GONE to GLYPHS_HELD)
        # before the run: over a shaking picture the glyph set holds picture detail that shakes away in other frames.
        # They join the run when it then meets a frame that clearly lacks them and they showed GLYPHS_LOOSE of the
        # glyphs on average: the subtitle stepped in there. (A new state's own pixels after a subtitle, _came_at, are
        # few, picture detail passing by among them: there a run must show them all.)
        loose: list[tuple[Timestamp, float]] = []
        for sample in reversed(self._recent):
            if sample.ts.seconds >= first.seconds:
                continue
            past = sample.ts.seconds < floor.seconds if at_floor else sample.ts.seconds <= floor.seconds
            if past or first.seconds - sample.ts.seconds > LOOKBACK_S:
                return start, None
            shown = overlap(glyphs, cv2.dilate(sample.edges, _KERNEL3))
            if not loose and shown >= GLYPHS_HELD:
                start = sample.ts
            elif at_floor and shown >= GLYPHS_GONE:
                loose.append((sample.ts, shown))
            elif loose and sum(share for _, share in loose) >= GLYPHS_LOOSE * len(loose):
                return loose[-1][0], shown
            else:
                return start, loose[0][1] if loose else shown
        return start, None

    def _faded(self, at: Timestamp, glyphs: np.ndarray, bound: Timestamp, forward: bool) -> Timestamp:
        """Where a subtitle whose ``glyphs`` (edge pixels) leave at ``at`` (``forward``: it faded out, followed up to
        ``bound``, the latest frame it may end at) or come at ``at`` (it faded in, followed back to after ``bound``)
        was last or first drawn. A renderer fades a subtitle (ASS ``\\fad``) by blending it with the picture: its
        glyphs keep their pattern at a share of their contrast against their rim (the outline or shadow around
        them) in frames where the edge mask finds few of them or none (at a third of their strength). Going away
        from the subtitle, a fade is frames each fainter than the one before by FADE_STEP of the strongest
        contrast of the subtitle's own frames nearby; the first frame that is not is the band without it (picture
        detail among the glyph pixels has a contrast of its own, which stays). The subtitle is drawn in the fading
        frames whose contrast over that frame's is at least FADE_SHARE of the strongest one's. A fade in that
        never reaches a frame without the subtitle is no evidence."""
        if np.count_nonzero(glyphs) < GLYPHS_MIN_PIXELS:
            return at
        rim = cv2.subtract(cv2.dilate(glyphs, _KERNEL3), glyphs).astype(bool)
        inside = glyphs.astype(bool)
        if np.count_nonzero(rim) < GLYPHS_MIN_PIXELS:
            return at

        def contrast(sample: _Sample) -> float | None:
            image = sample.image
            if image is None or image.shape != glyphs.shape:
                return None
            return float(image[inside].mean()) - float(image[rim].mean())

        samples = [*self._recent, *([self._now] if self._now is not None else [])]
        if forward:
            own = [s for s in samples if s.ts.seconds < at.seconds][-FADE_REFERENCE:]
            run = [s for s in samples if at.seconds <= s.ts.seconds <= bound.seconds]
            nearest = own[-1:]
        else:
            own = [s for s in samples if s.ts.seconds >= at.seconds][:FADE_REFERENCE]
            run = [s for s in reversed(samples) if bound.seconds < s.ts.seconds < at.seconds]
            nearest = own[:1]
        strongest = max((c for c in map(contrast, own) if c is not None), default=None)
        last = contrast(nearest[0]) if nearest else None
        if strongest is None or last is None or strongest < FADE_CONTRAST_MIN:
            return at
        # Follow the fade away from the subtitle while each frame is fainter than the one before; the first that is
        # not is the band without it (picture detail among its glyph pixels gives it a contrast of its own).
        fading: list[tuple[_Sample, float]] = []
        base = None
        for sample in run:
            c = contrast(sample)
            if c is None or abs(sample.ts.seconds - at.seconds) > FADE_MAX_S:
                break
            if c > last - FADE_STEP * strongest:
                base = c
                break
            fading.append((sample, c))
            last = c
        if base is None:
            # Still fading at ``bound`` (the frame where the next state held, or the next subtitle came): a subtitle
            # fading out is judged against no contrast of the band's own; one fading in from as far back as the
            # frames go is picture.
            if not forward or not fading or fading[-1][0] is not run[-1]:
                return at
            base = 0.0
        edge = at
        for k, (sample, c) in enumerate(fading):
            if c - base < FADE_SHARE * (strongest - base):
                break
            # Drawn in this frame: the subtitle ends with the next one, or starts at it.
            edge = (run[k + 1].ts if k + 1 < len(run) else bound) if forward else sample.ts
        return edge

    def _there_since(self, pend: _Pending, gap: Timestamp) -> Timestamp:
        """Where a subtitle that follows a blank gap (from ``gap``) began: the first frame of the run of frames
        after ``gap`` that still show its glyphs, going back from ``pend.first``. Its glyphs are the pixels that
        stayed through its confirming samples (_Pending.held), which may hold picture detail that was still then:
        the frame before must show at least GLYPHS_GONE of them; from there on, the pixels of every frame of the
        run so far, of which each earlier frame must show GLYPHS_HELD. Over moving texture (shaking grass) the
        masks of a shown subtitle's frames differ too much for a new state to hold until the picture calms
        down; its glyphs were there all along, and the texture's pixels are not."""
        glyphs = pend.held
        if glyphs is None or np.count_nonzero(glyphs) < GLYPHS_MIN_PIXELS:
            return pend.first
        start, least = pend.first, GLYPHS_GONE
        for sample in reversed(self._recent):
            if sample.ts.seconds >= pend.first.seconds:
                continue
            seen = cv2.dilate(sample.edges, _KERNEL3)
            if sample.ts.seconds <= gap.seconds or overlap(glyphs, seen) < least:
                break
            glyphs, least, start = glyphs & seen, GLYPHS_HELD, sample.ts
            if np.count_nonzero(glyphs) < GLYPHS_MIN_PIXELS:
                break
        return start

    def _carried_glyphs(self, new: Segment, edges: np.ndarray) -> np.ndarray:
        """The new text segment's glyphs: the previous subtitle's, when its mask shares enough with the
        previous one's and most of those glyphs are still there (the same subtitle, its mask split by
        picture detail: the new mask may hold as much picture as text, which would end the subtitle as
        soon as the picture moves), else its own mask."""
        old = self._glyphs
        if old is not None and new.prev_similarity >= SPLIT_SIMILARITY:
            carried: np.ndarray = old & cv2.dilate(edges, _KERNEL3)
            if np.count_nonzero(carried) >= max(GLYPHS_MIN_PIXELS, GLYPHS_HELD * np.count_nonzero(old)):
                return carried
        return new.mask

    def _maybe_recheck(self, ts: Timestamp, sim: float) -> Iterator[DetectorEvent]:
        opts = self.options
        track = self._track
        if sim < track.worst_sim:
            track.worst_sim, track.worst_ts = sim, ts
        # A drift counts when it holds (like a change, it must last ``confirm`` samples): one-frame
        # dips are flicker and compression noise, not a subtitle that changed unseen.
        track.low_run = track.low_run + 1 if sim < opts.drift_threshold else 0
        track.drifted = track.drifted or track.low_run >= opts.confirm
        if grew(self._read_lines, self._lines):
            track.grow_ts = track.grow_ts if track.grow_run else ts
            track.grow_run += 1
        else:
            track.grow_run = 0
        if sim >= STILL_MASK and _changed(track.edges, self._edges):
            track.edges_run += 1
        else:
            track.edges_run = 0
        if track.back_ts is not None:
            track.back_run += 1
        if self._read_side is not None and _redrawn(self._read_side, self._mask):
            # A line redrawn over a shaking picture can make the whole band unlike its state for a frame or two
            # (too briefly for a new state to hold) where the glyphs changed: the run starts there.
            began = track.dip_ts or ts
            if self._read_side.stepped_before and track.prev_began is not None:
                # A profile counts as changed once its step held a sample: the line changed at the step.
                began = track.prev_began
            track.cores_ts = track.cores_ts if track.cores_run else began
            track.cores_run += 1
        elif track.cores_run and not track.cores_lapsed:
            # One sample over the bar inside a run is noise (grass behind a redrawn line: 0.41, 0.55, 0.43 ...), not
            # the line drawn back: the run keeps its start, so the split is where the line changed. Two end it.
            track.cores_lapsed = True
        else:
            track.cores_run, track.cores_lapsed = 0, False
        track.prev_began = track.dip_ts or ts
        since = ts.seconds - track.last_read_s
        # A line redrawn in place is read at once, as a new subtitle is (the segment goes on: its mask stayed alike).
        redrawn = track.cores_run >= opts.confirm and track.cores_ts is not None
        cut = track.cut_ts is not None and track.worst_sim < opts.cut_threshold
        if since < opts.min_read_gap_s and not redrawn:
            return
        if track.first:
            # The very first frame's read may have caught the text mid-fade (a video cut from a longer one):
            # read it again once it held, as any new text is.
            assert self._segment is not None
            yield from self._read(ts, self._segment.start, ReadReason.NEW)
        elif track.grow_run >= opts.confirm and track.grow_ts is not None:
            yield from self._read(ts, track.grow_ts, ReadReason.GROW)
        elif track.back_ts is not None and (track.back_run >= opts.confirm or redrawn or track.drifted or cut):
            # The glyphs' return held, or a read is asked for another reason before it did: if the text changed, it
            # changed in the frames without glyphs (a blank gap the moving picture kept from holding as a state).
            yield from self._read(ts, track.back_ts, ReadReason.BACK, track.back_left)
        elif redrawn:
            assert track.cores_ts is not None
            yield from self._read(ts, track.cores_ts, ReadReason.DRIFT)
        elif cut:
            # A shot cut under a subtitle whose mask moved: re-read (an unmoved mask is the same text).
            assert track.cut_ts is not None
            yield from self._read(ts, self._change_point(track.last_read_s) or track.cut_ts, ReadReason.CUT)
        elif track.drifted and track.worst_ts is not None:
            yield from self._read(ts, self._change_point(track.last_read_s) or track.worst_ts, ReadReason.DRIFT)
        elif track.edges_run >= opts.confirm:
            yield from self._read(ts, self._edges_changed_at(ts, track), ReadReason.UNSEEN)
        elif since >= opts.recheck_s:
            split_at = self._change_point(track.last_read_s) or track.worst_ts or ts
            yield from self._read(ts, split_at, ReadReason.RECHECK)

    def _edges_changed_at(self, ts: Timestamp, track: _ReadTrack) -> Timestamp:
        """The first frame of the run, up to ``ts``, of frames since the last read whose edge count is nearer
        the latest sample's than the read's: where what the mask does not see came or went."""
        found: Timestamp | None = None
        for sample in self._recent:
            if sample.ts.seconds <= track.last_read_s:
                continue
            count = int(np.count_nonzero(sample.edges))
            nearer_now = abs(count - self._edges) < abs(count - track.edges)
            found = (found or sample.ts) if nearer_now else None
        return found or ts

    def _change_point(self, since_s: float) -> Timestamp | None:
        """Where to split if this re-read finds other text than the last read: the first frame of the
        run, up to now, of frames since that read that show more of the current mask's glyphs than of
        the last read's (the change the masks were too alike to call; picture detail passing by may
        drag the lowest similarity elsewhere). None when no frame does."""
        old, new = self._read_mask, self._mask
        if old is None or new is None or not new.any():
            return None
        # The glyphs one mask has and the other has not: the lines both share (most of a line changed by a word)
        # and picture detail moving behind them would tip the whole masks' overlaps late over a pan.
        new_only = new & (cv2.dilate(old, _KERNEL3) == 0)
        old_only = old & (cv2.dilate(new, _KERNEL3) == 0)
        if min(np.count_nonzero(new_only), np.count_nonzero(old_only)) >= CHANGED_PIXELS:
            old, new = old_only, new_only
        start: Timestamp | None = None
        for sample in self._recent:
            if sample.ts.seconds <= since_s:
                continue
            seen = cv2.dilate(sample.edges, _KERNEL3)
            if overlap(new, seen) <= overlap(old, seen):
                start = None
            elif start is None:
                start = sample.ts
        return start

    def _read(
        self, ts: Timestamp, split_at: Timestamp, reason: ReadReason, left_at: Timestamp | None = None
    ) -> Iterator[DetectorEvent]:
        seg = self._segment
        assert seg is not None
        self._track = _ReadTrack(last_read_s=ts.seconds, edges=self._edges, first=reason is ReadReason.FIRST)
        grown = grew(self._read_lines, self._lines) or added(self._read_lines, self._lines)
        self._read_lines, self._read_mask = self._lines, self._mask
        self._read_side = _read_side(self._mask, self._lines, self._line_height) if self._mask is not None else None
        yield ReadRequest(seg, ts, split_at, reason, self._lines, grown, left_at)

    def _back_at(self, left: Timestamp, ts: Timestamp, mask: np.ndarray) -> Timestamp:
        """The first frame after ``left`` (where the shown subtitle's glyphs went) that shows most of ``mask``
        again: frames since the last sample, else ``ts``."""
        for sample in self._between:
            if sample.ts.seconds > left.seconds and overlap(mask, cv2.dilate(sample.edges, _KERNEL3)) >= 0.5:
                return sample.ts
        return ts

    def _refine_start(self, ts: Timestamp, old: np.ndarray, new: np.ndarray) -> Timestamp:
        """First frame since the last sample that looks more like the new state than the old one.

        Frames between samples only have raw masks; what decides is how much of each state's text
        they still show (an empty state is "shown" when the other state's text is mostly gone).
        """
        has_old, has_new = bool(old.any()), bool(new.any())
        for sample in self._between:
            seen = cv2.dilate(sample.edges, _KERNEL3)
            p_old = overlap(old, seen) if has_old else None
            p_new = overlap(new, seen) if has_new else None
            if p_new is None:
                changed = p_old is not None and p_old < 0.5
            elif p_old is None:
                changed = p_new >= 0.5
            else:
                changed = p_new > p_old
            if changed:
                return sample.ts
        return ts


def _blank(
    index: int, start: Timestamp, end: Timestamp, like: np.ndarray, lines_held: bool
) -> Iterator[DetectorEvent]:
    """A blank segment (no text, a mask of ``like``'s shape) from ``start`` to ``end``: a gap between subtitles
    (``lines_held``: see Segment)."""
    blank = Segment(index, start, False, np.zeros_like(like), [], 0.0, end=end, lines_held=lines_held)
    yield SegmentStarted(blank)
    yield SegmentEnded(blank, end)


def _changed(before: int, now: int) -> bool:
    return before > 0 and abs(now - before) >= EDGES_CHANGED * max(now, before)


def centred_similarity(
    old: np.ndarray,
    old_lines: list[TextLine],
    new: np.ndarray,
    new_lines: list[TextLine],
    rows: tuple[int, int] | None = None,
) -> float:
    """How alike the two masks are on their centred lines alone, where subtitles are: 1 minus the largest
    share of a centred line's pixels gone from the new mask (a line of the old one) or not in the old mask
    (a line of the new one); 1.0 when neither has a centred line that is a small part of its mask.

    Picture detail in the band is wherever the picture puts it, and when it fills most of the mask, a
    subtitle line coming or going changes the whole masks too little to count. Only the line's own pixels
    count one way: picture detail the camera moves into or out of a still subtitle's box is no change of
    it. A line that is most of its mask is judged by the whole masks already.

    Lines are subtitle-like: centred, within ``rows`` (where the band finder saw the subtitles) when known,
    and not cut by the band's top or bottom edge (picture detail the band's edge runs through)."""
    height, width = old.shape
    worst = 1.0
    for mask, other, lines in ((old, new, old_lines), (new, old, new_lines)):
        total = int(np.count_nonzero(mask))
        for ln in lines:
            if not _centred(ln.x0, ln.x1, ln.height, width):
                continue
            if ln.y0 <= 0 or ln.y1 >= height:
                continue
            if rows is not None and min(ln.y1, rows[1]) - max(ln.y0, rows[0]) < 0.5 * ln.height:
                continue
            y0, y1 = max(0, ln.y0 - 2), ln.y1 + 2
            x0, x1 = max(0, ln.x0 - 2), ln.x1 + 2
            own = mask[y0:y1, x0:x1]
            if np.count_nonzero(own) >= SMALL_PART * total:
                continue
            worst = min(worst, overlap(own, cv2.dilate(other[y0:y1, x0:x1], _KERNEL3)))
    return worst


def changed_line_similarity(
    old: np.ndarray,
    new: np.ndarray,
    rows: tuple[int, int] | None = None,
    line_height: float | None = None,
    old_lines: Sequence[TextLine] = (),
) -> float:
    """How alike the two masks are where pixels came (or went) between them in the shape of a subtitle line:
    1 minus the share of the mask's pixels in that line's box that are new (or gone); 1.0 when the pixels
    that differ make no such line.

    A subtitle drawn over text in the picture (a page of print behind the band) merges with it into one
    block of lines, neither centred nor a small part of the mask (centred_similarity cannot see it), and
    adds too little to the whole mask to count; the pixels it adds are a line of their own. Their box (the
    rows and columns where they are dense, see _dense: the page's edge may run through them) must be centred, on
    ``rows`` when known, not cut by the band's top or bottom edge, and at most two line heights tall when
    ``line_height`` is known (picture detail that moved is spread over the band).

    A subtitle partly over a bright part of the picture (a white shirt, a lit window) keeps the glyphs there out of
    the mask, and what is left of it may sit off the axis: pixels gone from inside a centred line of the old mask
    (``old_lines``, the shown state's lines) are centred as well. Only pixels gone: the new mask's lines are not
    settled (a sign sliding into the band joins them), and counting pixels that came inside them split a two-line
    cue over a sign on the corpus (bench/libass_corpus.py, new seeds, dev ``21_two-line``)."""
    height, width = old.shape
    worst = 1.0
    gained, lost = cv2.subtract(new, cv2.dilate(old, _KERNEL3)), cv2.subtract(old, cv2.dilate(new, _KERNEL3))
    for mask, own, back, lines in ((new, gained, lost, ()), (old, lost, gained, old_lines)):
        if np.count_nonzero(own) < GLYPHS_MIN_PIXELS:
            continue  # (most frames: a still subtitle) taking picture edges away below leaves fewer still
        if line_height is not None:  # straight picture edges longer than any stroke of a glyph
            tall_run = cv2.morphologyEx(own, cv2.MORPH_OPEN, np.ones((max(3, int(1.2 * line_height)), 1), np.uint8))
            long_run = cv2.morphologyEx(own, cv2.MORPH_OPEN, np.ones((1, max(3, int(2 * line_height))), np.uint8))
            own = cv2.subtract(own, cv2.max(tall_run, long_run))
        if np.count_nonzero(own) < GLYPHS_MIN_PIXELS:
            continue
        y0, y1 = _dense(own.sum(axis=1, dtype=np.int32))
        x0, x1 = _dense(own[y0 : y1 + 1].sum(axis=0, dtype=np.int32))
        tall = y1 - y0 + 1
        if y0 <= 0 or y1 >= height - 1 or (line_height is not None and tall > 2 * line_height):
            continue
        if not _centred(x0, x1, tall, width) and not any(
            ln.x0 <= x0 and x1 <= ln.x1 and ln.y0 <= y0 and y1 <= ln.y1 and _centred(ln.x0, ln.x1, ln.height, width)
            for ln in lines
        ):
            continue
        if rows is not None and min(y1, rows[1]) - max(y0, rows[0]) < 0.5 * tall:
            continue
        came = int(np.count_nonzero(own[y0 : y1 + 1, x0 : x1 + 1]))
        if np.count_nonzero(back[y0 : y1 + 1, x0 : x1 + 1]) > MOVED_SHARE * came:
            continue  # as much went as came: picture detail that moved (shake, a pan), not a line drawn or wiped
        left, right = max(0, x0 - int(line_height or tall)), x1 + int(line_height or tall) + 1
        stays = cv2.subtract(mask[y0 : y1 + 1, left:right], own[y0 : y1 + 1, left:right])
        stays[:, x0 - left : x1 + 1 - left] = 0
        if np.count_nonzero(stays) > MOVED_SHARE * came:
            continue  # glyphs of the same line stay beside them: part of a subtitle flickered, none came or went
        shown = max(1, int(np.count_nonzero(mask[y0 : y1 + 1, x0 : x1 + 1])))
        worst = min(worst, 1.0 - came / shown)
    return worst


@dataclass
class _ReadSide:
    """The last read's side of the test for a line redrawn in place (:func:`_redrawn`), made at each read: the
    read's glyph cores (its mask eroded by a pixel: the rim the mask fills around each glyph goes), the boxes of its
    lines whose cores are big enough to tell (CORES_MIN_PIXELS), and the boxes of its centred lines with glyph pixels
    enough to tell (PROFILE_MIN_PIXELS), with their column profiles (glyph pixels per column) at the read and in
    the latest sample, and whether the profile stepped away from the read's there."""

    cores: np.ndarray
    core_boxes: list[tuple[slice, slice]]
    boxes: list[tuple[slice, slice]]
    profiles: list[np.ndarray]
    latest: list[np.ndarray]
    stepped: list[int]
    #: The change counted at this sample is a profile step seen at the sample before (which held since).
    stepped_before: bool = False


def _read_side(mask: np.ndarray, lines: Sequence[TextLine], line_height: float | None = None) -> _ReadSide:
    cores = cv2.erode(mask, _KERNEL3)
    boxes = [(slice(ln.y0, ln.y1), slice(ln.x0, ln.x1)) for ln in lines]
    profiled = [
        (slice(y0, y1), slice(x0, x1))
        for y0, x0, y1, x1 in dict.fromkeys(
            [(ln.y0, ln.x0, ln.y1, ln.x1) for ln in lines] + _text_rows(lines, line_height)
        )
        if _centred(x0, x1, y1 - y0, mask.shape[1])
        and np.count_nonzero(mask[y0:y1, x0:x1]) >= PROFILE_MIN_PIXELS
    ]
    profiles = [_profile(mask[box]) for box in profiled]
    return _ReadSide(
        cores,
        [box for box in boxes if np.count_nonzero(cores[box]) >= CORES_MIN_PIXELS],
        profiled,
        profiles,
        list(profiles),
        [0] * len(profiled),
    )


def _text_rows(lines: Sequence[TextLine], line_height: float | None) -> list[tuple[int, int, int, int]]:
    """Boxes (y0, x0, y1, x1) of the rows of text among ``lines``: a row is the rows of the lines about one line
    height tall on them (``line_height``, else the median line's), across every line that covers half of it. Picture
    detail over a busy gradient or a sign under a subtitle line can break the line into pieces, none of them centred,
    or glue it with the line above into one block: the row is still where the subtitle's glyphs are."""
    if not lines:
        return []
    tall = 1.5 * (line_height or float(np.median([ln.height for ln in lines])))
    rows: list[list[int]] = []
    for ln in sorted((ln for ln in lines if ln.height <= tall), key=lambda ln: ln.y0):
        y0, y1 = rows[-1] if rows else (0, 0)
        if rows and _rows_shared(ln.y0, ln.y1, y0, y1):
            rows[-1] = [min(y0, ln.y0), max(y1, ln.y1)]
        else:
            rows.append([ln.y0, ln.y1])
    boxes = []
    for y0, y1 in rows:
        on = [ln for ln in lines if _rows_shared(ln.y0, ln.y1, y0, y1)]
        boxes.append((y0, min(ln.x0 for ln in on), y1, max(ln.x1 for ln in on)))
    return boxes


def _redrawn(read: _ReadSide, new: np.ndarray | None) -> bool:
    """A line of the last read was redrawn with other glyphs in its place: its glyph cores are less alike than
    CORES_CHANGED now, or its column profile stepped away from the read's (thin strokes, whose cores erode away, and
    lines of glyphs as wide as the old ones, whose masks stay alike: a line's ink per column follows its letters and
    word gaps, which other words put elsewhere). A step: from one sample to the next the profile became unlike both
    the sample before and the read's (PROFILE_CHANGED), then holds (alike from sample to sample, unlike the read's).
    Picture detail moving behind a line changes its profile a little at each frame, not at once; glyphs that come
    and go at random in each frame (heavy compression) change it at each frame, and it never holds."""
    if new is None or new.shape != read.cores.shape:
        return False
    changed = False
    if read.core_boxes:
        eroded = cv2.erode(new, _KERNEL3)
        changed = min(similarity(read.cores[box], eroded[box]) for box in read.core_boxes) < CORES_CHANGED
    read.stepped_before = False
    cores_changed = changed
    for i, box in enumerate(read.boxes):
        now = _profile(new[box])
        unlike = _profiles_alike(read.profiles[i], now) < PROFILE_CHANGED
        held = _profiles_alike(read.latest[i], now) >= PROFILE_CHANGED
        # 0: as read; 1: stepped away at this sample; 2: the new profile held since (counted as changed).
        if not unlike:
            read.stepped[i] = 0
        elif held:
            read.stepped_before = read.stepped_before or (read.stepped[i] == 1 and not cores_changed)
            read.stepped[i] = 2 if read.stepped[i] else 0
        else:
            read.stepped[i] = 1
        read.latest[i] = now
        changed = changed or read.stepped[i] == 2
    return changed


def _profile(mask: np.ndarray) -> np.ndarray:
    profile: np.ndarray = np.count_nonzero(mask, axis=0).astype(np.float64)
    return profile


def _profiles_alike(a: np.ndarray, b: np.ndarray) -> float:
    """The best correlation of two column profiles over shifts of up to PROFILE_SHIFT columns (1.0 when either is
    flat: nothing to tell by)."""
    best = -1.0
    for shift in range(-PROFILE_SHIFT, PROFILE_SHIFT + 1):
        x = a[max(0, shift) : len(a) + min(0, shift)]
        y = b[max(0, -shift) : len(b) + min(0, -shift)]
        x, y = x - x.mean(), y - y.mean()
        norm = float(np.sqrt((x * x).sum() * (y * y).sum()))
        if norm == 0.0:
            return 1.0
        best = max(best, float((x * y).sum()) / norm)
    return best


def _centred(x0: int, x1: int, height: int, width: int) -> bool:
    """A line from column ``x0`` to ``x1``, ``height`` tall, is centred in a band ``width`` wide (see CENTRED)."""
    return abs((x0 + x1) / 2 - width / 2) <= CENTRED * width + 0.5 * height


def _dense(counts: np.ndarray) -> tuple[int, int]:
    """The first and last index whose count is at least DENSE of the count a typical pixel sees (the median
    over pixels, not over indices): where a line's glyph pixels are, without the thin picture edges (one or
    two pixels a column) that run past them."""
    ordered = np.sort(counts[counts > 0])
    typical = ordered[np.searchsorted(np.cumsum(ordered), ordered.sum() / 2)]
    where = np.flatnonzero(counts >= DENSE * float(typical))
    return int(where[0]), int(where[-1])


def added(before: tuple[TextLine, ...], now: tuple[TextLine, ...]) -> bool:
    """A line of ``now`` is on rows where ``before`` had none (a subtitle line appeared beside text that
    stays, such as a sign): a read of ``before``'s boxes alone would miss it."""
    return any(not any(_same_rows(ln, b) for b in before) for ln in now)


def grew(before: tuple[TextLine, ...], now: tuple[TextLine, ...]) -> bool:
    """A line of ``now`` reaches at least 0.8 line heights (about a glyph) past the lines of ``before`` on
    its rows. Lines on other rows are left to the mask similarity (a new line changes it a lot)."""
    for ln in now:
        row = [b for b in before if _same_rows(ln, b)]
        if not row:
            continue
        reach = 0.8 * max(b.height for b in row)
        if ln.x0 < min(b.x0 for b in row) - reach or ln.x1 > max(b.x1 for b in row) + reach:
            return True
    return False


def _same_rows(a: TextLine, b: TextLine) -> bool:
    """Two lines share at least half the height of the smaller one."""
    return _rows_shared(a.y0, a.y1, b.y0, b.y1)


def _rows_shared(a0: int, a1: int, b0: int, b1: int) -> bool:
    """Rows ``a0:a1`` and ``b0:b1`` share at least half of the shorter span."""
    return min(a1, b1) - max(a0, b0) >= 0.5 * min(a1 - a0, b1 - b0)


class SceneCuts:
    """PySceneDetect's ContentDetector fed with small frames and exact timestamps."""

    def __init__(self, fps_hint: float | None) -> None:
        self._fps = fps_hint or 25.0
        self._detector = ContentDetector(min_scene_len=max(2, round(self._fps * 0.25)), luma_only=True)
        self.cuts: list[Timestamp] = []
        self._seen: dict[int, Timestamp] = {}

    def is_cut(self, ts: Timestamp, small_bgr: np.ndarray) -> bool:
        """Feed every frame in order; True at a frame where PySceneDetect reports a cut."""
        tc = FrameTimecode(Timecode(ts.pts, ts.time_base), fps=self._fps)
        found = self._detector.process_frame(tc, small_bgr)
        if found:
            self.cuts.append(ts)
        return bool(found)
