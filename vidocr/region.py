"""Where the subtitles are: an automatic band finder and the ``--roi`` parser.

The finder samples frames spread over the video, finds lines of glyph-like components in each
(:func:`vidocr.textmask.text_lines`), and votes for the rows they occupy. Text that is new since the
previous sample votes most (subtitles change; logos and picture detail stay). Lines near the horizontal
centre count more (subtitles are centred; logos and watermarks sit in corners), and so do lines in
the lower half (where dialogue subtitles are placed by convention, including the black bar of a
letterboxed film and the mid-low captions of vertical videos). The band is the strongest run of
voted rows, joined across the gap between two subtitle lines, padded, and grown upward by one line
when only single-line subtitles were seen (a two-line cue must still fit). OCR then reads only the
band: ~3.5x cheaper than whole frames.

Where votes alone cannot tell (a run of voted rows too tall for subtitle lines, a second candidate zone), OCR
decides: the finder is given a :data:`BandReader` by the pipeline (the active engine's when it reads line boxes,
else one PP-OCR reader shared by every video of an :class:`~vidocr.extractor.Extractor`), so it builds no engine
of its own. Its scoring weights are the fields of :class:`ZoneWeights`.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, cast

import cv2
import numpy as np

from vidocr.errors import ConfigError
from vidocr.textmask import SMALL_TEXT_PX, Chroma, TextLine, analysis_image, analysis_scale, edge_mask, text_lines
from vidocr.types import Box, OcrLine, OcrResult
from vidocr.video import DecodedFrame, VideoSource

if TYPE_CHECKING:
    from vidocr.engines.ppocr import PpOcr

log = logging.getLogger("vidocr")
_KERNEL = np.ones((3, 3), np.uint8)


@dataclass(frozen=True)
class Region:
    """A subtitle zone: the band OCR reads, and what the finder learnt about it."""

    box: Box
    source: str  # "user", "auto", "default" or "strip"
    line_height: int | None = None
    samples: int = 0
    #: Frame rows where subtitle lines were actually seen (the band adds margins and room for a
    #: second line). A band state counts as text only if one of its lines touches these rows.
    core: tuple[int, int] | None = None
    name: str = "bottom"
    #: Boxes (frame pixels) of text that stayed put through the sampled frames: logos, watermarks,
    #: burned-in clocks. Masked out of change detection; OCR lines inside them are dropped.
    static: tuple[Box, ...] = ()
    #: Masks are made from colour brightness, max(R, G, B), instead of luma (see ``_survey``).
    colour: bool = False
    #: The subtitle rows seen are small text (at most SMALL_TEXT_PX analysis pixels high, vidocr.textmask): the
    #: zone is masked at twice the analysis resolution with a lower rim step (see vidocr.pipeline).
    small: bool = False


#: Colour-aware text masks are used for a video when luma masks hold less than this share of the text
#: pixels that colour masks find in their strongest band: red, blue, green or magenta subtitles, whose
#: luma is too dark to count as a glyph (measured: white/yellow subtitles 0.64-1.0, coloured ones with a
#: dark outline 0-0.29). Otherwise luma, as colour masks also take in saturated picture detail.
LUMA_SHARE_MIN = 0.45
#: Sampled frames compared in both kinds of mask for that decision.
COLOUR_PROBES = 12

#: Reads one BGR band image (rows of a sampled frame) into its text lines, top to bottom, each with its box
#: in the image: the zone finder's OCR check. Given by the pipeline (see :func:`find_zones`).
BandReader = Callable[[np.ndarray], OcrResult]


class PpOcrBandReader:
    """A :data:`BandReader` on PP-OCR with the default models, built at its first read (most videos find their
    zones without OCR) and kept for later reads and videos until :meth:`close`. The zone finder's reader when
    the active engine reads no line boxes of its own (Tesseract-only, vision-language models, a server)."""

    def __init__(self) -> None:
        self._ocr: PpOcr | None = None

    def __call__(self, image: np.ndarray) -> OcrResult:
        from vidocr.engines.rapid import build_ocr, read_band

        if self._ocr is None:
            self._ocr = build_ocr()
        return read_band(self._ocr, image)

    def close(self) -> None:
        """Free the models (idempotent; a later read builds them again)."""
        self._ocr = None


@dataclass(frozen=True)
class ZoneWeights:
    """How the zone finder scores text lines and picks bands; the defaults are the tuned values (the samples,
    the real clips and the libass classes of ``bench/`` depend on them).

    A line's vote on its rows is ``centred * lower * glyphs * (novelty_floor + novelty)``:
    centre_floor: ``centred`` of a line at a side edge (1.0 when centred, linear between): subtitles are
        centred; logos and watermarks sit in corners.
    upper_half: ``lower`` of a line in the upper half of the frame (1.0 in the lower half, where dialogue is).
    full_glyphs: glyphs for a full ``glyphs`` factor (fewer count in proportion): subtitle lines are runs of
        many glyphs; picture detail that lines up gives two or three.
    first_novelty: ``novelty`` of the lines of the first sample (later: the share of a line's pixels that were
        not text in the previous sample).
    novelty_floor: what a line that was already there (a logo, a sign) still earns.

    Bands from the votes:
    run_floor: rows with at least this share of the peak vote belong to the peak's run.
    run_gap_lines: gaps of up to this many line heights inside a run are jumped (between two subtitle lines).
    second_zone_share: a second or third zone needs this share of the strongest zone's peak vote (upper zones
        vote at ``upper_half``), and OCR must read text in it: picture detail can vote as strongly.
    tall_run_lines: a run of voted rows taller than this many subtitle lines holds picture detail too (shaking
        or panning pictures vote on every row): OCR tells which of its rows hold the subtitle lines.

    The OCR check (:data:`BandReader`):
    read_confidence, read_chars: a line counts as text read when its confidence and its count of letters and
        digits reach these.
    centre_margin, centre_margin_lines: a line read in a tall run is a subtitle line when its centre is within
        ``centre_margin`` of the band's width plus ``centre_margin_lines`` of its own height of the middle.
    fallback_share, fallback_runs: where the strongest run is in doubt (several candidates, or colour masks) and
        OCR reads no text in it, up to ``fallback_runs`` weaker runs with at least ``fallback_share`` of the
        peak vote are tried in turn; none reading as text gives the default band.
    """

    centre_floor: float = 0.15
    upper_half: float = 0.6
    full_glyphs: float = 6.0
    first_novelty: float = 0.5
    novelty_floor: float = 0.1
    run_floor: float = 0.35
    run_gap_lines: float = 1.0
    second_zone_share: float = 0.3
    tall_run_lines: float = 2.5
    read_confidence: float = 0.8
    read_chars: int = 2
    centre_margin: float = 0.05
    centre_margin_lines: float = 0.15
    fallback_share: float = 0.1
    fallback_runs: int = 6


_WEIGHTS = ZoneWeights()


def parse_roi(spec: str, width: int, height: int) -> Box:
    """``x,y,w,h`` in pixels, or as fractions of the frame when every value is <= 1 with a decimal point."""
    parts = [p.strip() for p in spec.replace(";", ",").split(",")]
    try:
        values = [float(p) for p in parts]
    except ValueError:
        raise ConfigError(f"{{param}} must be x,y,w,h numbers, got {spec!r}", param="roi") from None
    if len(values) != 4 or any(v < 0 for v in values):
        raise ConfigError(f"{{param}} must be four non-negative numbers x,y,w,h, got {spec!r}", param="roi")
    fractional = all(v <= 1.0 for v in values) and any("." in p for p in parts)
    if fractional:
        x, y, w, h = values[0] * width, values[1] * height, values[2] * width, values[3] * height
    else:
        x, y, w, h = values
    x0, y0 = max(0, int(round(x))), max(0, int(round(y)))
    x1, y1 = min(width, int(round(x + w))), min(height, int(round(y + h)))
    if x1 - x0 < 8 or y1 - y0 < 8:
        raise ConfigError(f"{{param}} {spec!r} leaves no usable area inside the {width}x{height} frame", param="roi")
    return Box(x0, y0, x1 - x0, y1 - y0)


def default_band(width: int, height: int) -> Box:
    top = int(height * 0.70)
    return Box(0, top, width, height - top)


ZONE_MODES = ("auto", "bottom", "top", "top,bottom")
#: Static-text suppression needs evidence: text present in this share of the sampled frames, over at
#: least this many seconds (a single subtitle held through a short clip is not a logo).
STATIC_SHARE = 0.95
STATIC_MIN_SPAN_S = 10.0


def find_band(
    source: VideoSource, start: float | None, end: float | None, samples: int = 48, *, read: BandReader | None = None
) -> Region:
    """The single strongest subtitle band (the classic one-track result)."""
    return find_zones(source, start, end, "bottom", samples, read=read)[0]


def find_zones(
    source: VideoSource,
    start: float | None,
    end: float | None,
    mode: str = "auto",
    samples: int = 48,
    keep_static: bool = False,
    *,
    read: BandReader | None = None,
    weights: ZoneWeights = _WEIGHTS,
) -> list[Region]:
    """Find subtitle zones from frames sampled across [start, end).

    ``mode``: "bottom" (the strongest band, wherever it is: bottom dialogue, letterbox bar, mid-low
    captions), "top" (strongest in the upper half), "top,bottom", or "auto" (every band with at least
    ``weights.second_zone_share`` of the strongest band's votes, up to three).
    ``read``: the OCR check, called only where votes cannot decide; None: a :class:`PpOcrBandReader` for this
    call (the pipeline gives its own, built once per run of videos).
    """
    if mode not in ZONE_MODES:
        raise ConfigError(
            f"{{param}} must be one of {', '.join(ZONE_MODES)} or x,y,w,h;x,y,w,h boxes, got {mode!r}", param="zones"
        )
    info = source.info
    width, height = info.width, info.height
    scale = analysis_scale(width)
    images, sampled, colour = _survey(list(_sample_images(source, start, end, samples, scale)), weights)
    if width >= 4 * height:
        # Already a strip (a pre-cropped subtitle band, a ticker): read all of it.
        return [Region(Box(0, 0, width, height), "strip", None, 0, colour=colour)]
    span = (end if end is not None else info.duration_s or 0.0) - (start or 0.0)
    static: np.ndarray = np.zeros(0, np.uint8)
    static_boxes: tuple[Box, ...] = ()
    if not keep_static:
        static = _static_mask(sampled, span)
        static_boxes = _boxes(static, scale) if static.size else ()
    tickers = () if keep_static else _tickers(sampled, scale, width)
    static_boxes += tickers
    votes, found = _vote(
        sampled, static, [(int(b.y * scale), int((b.y + b.h) * scale) + 1) for b in tickers], weights
    )
    rows = len(votes)
    if not found or votes.max() <= 0:
        defaults = [_default_zone(name, width, height, len(sampled), static_boxes) for name in _default_names(mode)]
        return [replace(zone, colour=colour) for zone in defaults]
    median_h = int(np.median([y1 - y0 for y0, y1, _ in found]))
    runs = _runs(votes, median_h, 3 if mode == "auto" else 1 if mode == "bottom" else 2, weights)
    if read is None:
        read = PpOcrBandReader()  # built only if a read is needed
    if any(_tall(run, found, weights) for run in runs):
        shrunk = [_subtitle_rows(read, run, images, sampled, weights) if _tall(run, found, weights) else run
                  for run in runs]
        runs = [run for run in shrunk if run is not None] or runs
    seen: dict[tuple[int, int, int], OcrResult] = {}  # each band sample is read once, whichever checks ask
    if mode in ("auto", "bottom") and (colour or len(runs) > 1):
        runs = _readable_first(read, runs, votes, median_h, images, sampled, weights, seen)
        if not runs:  # no band reads as text: the votes were picture detail
            defaults = [_default_zone(name, width, height, len(sampled), static_boxes) for name in _default_names(mode)]
            return [replace(zone, colour=colour) for zone in defaults]
    zones: list[Region] = []
    if mode in ("top", "top,bottom"):
        upper = [r for r in runs if (r[0] + r[1]) / 2 < rows * 0.5]
        lower = [r for r in runs if (r[0] + r[1]) / 2 >= rows * 0.5]
        picks = [("top", upper[:1])] + ([("bottom", lower[:1])] if mode == "top,bottom" else [])
        for name, run in picks:
            zones += [_zone(r, found, scale, width, height, len(sampled), static_boxes, name) for r in run]
            if not run:
                zones.append(_default_zone(name, width, height, len(sampled), static_boxes))
    else:
        # The strongest band is the subtitle band; another one must also be read as text by OCR
        # (picture detail — faces, foliage — can vote as strongly as a second subtitle line).
        if len(runs) > 1:
            # Print in the picture (a book page, a letter) reads as text too; once the strongest zone's
            # subtitles show light, outlined glyphs, a zone of dark print only is not a subtitle zone.
            light = _reads_as_text(read, runs[0], images, sampled, weights, light_only=True, seen=seen)
            runs = runs[:1] + [
                r for r in runs[1:] if _reads_as_text(read, r, images, sampled, weights, light_only=light, seen=seen)
            ]
        zones = [_zone(r, found, scale, width, height, len(sampled), static_boxes) for r in runs]
    return [replace(zone, colour=colour) for zone in _merge_overlapping(zones)]


def user_zones(
    source: VideoSource,
    named: Sequence[tuple[str, Box]],
    start: float | None,
    end: float | None,
    keep_static: bool = False,
    samples: int = 48,
    weights: ZoneWeights = _WEIGHTS,
) -> list[Region]:
    """Regions for user-given boxes, with what the sampled frames tell about them: the text that stays
    put inside them (logos, watermarks, tickers; none with ``keep_static``) and the kind of mask."""
    scale = analysis_scale(source.info.width)
    _, sampled, colour = _survey(list(_sample_images(source, start, end, samples, scale)), weights)
    static: tuple[Box, ...] = ()
    if not keep_static:
        span = (end if end is not None else source.info.duration_s or 0.0) - (start or 0.0)
        mask = _static_mask(sampled, span)
        static = (_boxes(mask, scale) if mask.size else ()) + _tickers(sampled, scale, source.info.width)
    return [Region(box, "user", name=name, static=_overlapping(static, box), colour=colour) for name, box in named]


def _overlapping(boxes: Sequence[Box], band: Box) -> tuple[Box, ...]:
    return tuple(b for b in boxes if b.y < band.y + band.h and b.y + b.h > band.y)


Sampled = list[tuple[np.ndarray, list[TextLine]]]


def _survey(samples: list[_Sample], weights: ZoneWeights = _WEIGHTS) -> tuple[list[np.ndarray], Sampled, bool]:
    """The analysis images to use, their text masks and lines, and whether they are colour images
    (see LUMA_SHARE_MIN; compared on COLOUR_PROBES of the samples)."""
    lumas = [luma for luma, _, _ in samples]
    sampled = [mask for _, _, mask in samples]
    pairs = [(luma, chroma) for luma, chroma, _ in samples]
    spread = np.linspace(0, len(pairs) - 1, min(len(pairs), COLOUR_PROBES)).round().astype(int)
    probes = [int(i) for i in dict.fromkeys(spread.tolist()) if pairs[i][1] is not None]
    in_colour = [_sample_mask(analysis_image(*pairs[i], None, 1.0), 1.0) for i in probes]
    votes, _ = _vote(in_colour, np.zeros(0, np.uint8), (), weights)
    heights = [line.height for _, lines in in_colour for line in lines]
    if not heights or votes.max() <= 0:
        return lumas, sampled, False
    lo, hi = _strongest_run(votes, int(np.median(heights)), weights)
    text = seen = 0
    for i, (mask, _) in zip(probes, in_colour, strict=True):
        band = mask[lo:hi]
        text += int(np.count_nonzero(band))
        seen += int(np.count_nonzero(band & cv2.dilate(sampled[i][0][lo:hi], _KERNEL)))
    share = seen / max(1, text)
    if share >= LUMA_SHARE_MIN:
        return lumas, sampled, False
    log.debug("colour masks: luma sees %.2f of the text in rows %d-%d", share, lo, hi)
    colours = [analysis_image(luma, chroma, None, 1.0) for luma, chroma in pairs]
    return colours, [_sample_mask(image, 1.0) for image in colours], True


def _static_mask(sampled: list[tuple[np.ndarray, list[TextLine]]], span: float) -> np.ndarray:
    """Text pixels present in nearly every sampled frame, given enough time and samples for evidence."""
    if not sampled or span < STATIC_MIN_SPAN_S or len(sampled) < 8:
        return np.zeros(0, np.uint8)
    presence = np.sum([m for m, _ in sampled], axis=0, dtype=np.int32)
    return np.asarray(presence >= STATIC_SHARE * len(sampled), dtype=np.uint8)


#: Samples read at most when OCR checks whether the video has a subtitle band at all (see _readable_first; a
#: second zone is checked on four). On the libass corpus with the zone finder's samples shifted by half their
#: spacing, four missed the band of a clip of 0.3-0.6 s cues (check 11_short), which then used the default band.
ZONE_CHECK_TRIES = 8


def _readable_first(
    read: BandReader,
    runs: list[tuple[int, int]],
    votes: np.ndarray,
    line_h: int,
    images: list[np.ndarray],
    sampled: list[tuple[np.ndarray, list[TextLine]]],
    weights: ZoneWeights,
    seen: dict[tuple[int, int, int], OcrResult] | None = None,
) -> list[tuple[int, int]]:
    """``runs`` with the strongest one checked by OCR where the votes are in doubt (several candidates, or text
    only colour masks see): when it reads as no text, the strongest of the weaker runs (down to
    ``weights.fallback_share`` of the peak vote) that does takes its place; none when no run reads as text.
    A panning picture full of bright strokes can outvote short subtitles ("嗯", "Oh.") many times over. Each run
    is read in up to ZONE_CHECK_TRIES samples (stopping at the second with text): cues of 0.3-0.6 s are in few of
    them, and most samples with lines in the run's rows show the picture between them."""
    if _reads_as_text(read, runs[0], images, sampled, weights, tries=ZONE_CHECK_TRIES, seen=seen):
        return runs
    more = _runs(votes, line_h, weights.fallback_runs, replace(weights, second_zone_share=weights.fallback_share))
    for run in more:
        if run == runs[0] or not _reads_as_text(read, run, images, sampled, weights, tries=ZONE_CHECK_TRIES, seen=seen):
            continue
        return [run] + [r for r in runs[1:] if r[1] <= run[0] - line_h or r[0] >= run[1] + line_h]
    return []


def _reads_as_text(
    read: BandReader,
    run: tuple[int, int],
    images: list[np.ndarray],
    sampled: list[tuple[np.ndarray, list[TextLine]]],
    weights: ZoneWeights = _WEIGHTS,
    tries: int = 4,
    light_only: bool = False,
    seen: dict[tuple[int, int, int], OcrResult] | None = None,
) -> bool:
    """OCR a few samples whose lines fall in ``run``: text in two of them? With ``light_only``, only lines of
    light, outlined glyphs count (not print: see vidocr.layout.glyph_fill). ``seen``: reads already made by a
    check of the same run (sample, first and end row -> result), so that a second check reads nothing again."""
    from vidocr.layout import PRINT_FILL_MAX, with_fill
    from vidocr.textnorm import comparable

    seen = {} if seen is None else seen
    lo, hi = run
    picks = _spread(run, sampled, tries)
    if not picks:
        return False
    margin = max(4, (hi - lo) // 2)
    reads: list[tuple[int, OcrResult]] = []
    hits = 0
    for i in picks:
        top = max(0, lo - margin)
        crop = images[i][top : hi + margin]
        key = (i, top, hi + margin)
        if key not in seen:
            seen[key] = read(cv2.cvtColor(np.ascontiguousarray(crop), cv2.COLOR_GRAY2BGR))
        result = seen[key]
        if light_only:
            result = with_fill(result, crop)
            result = replace(result, lines=tuple(ln for ln in result.lines if (ln.fill or 0.0) > PRINT_FILL_MAX))
        # Only lines centred in the run's rows: the margin may reach the lines of another zone.
        inside = tuple(ln for ln in result.lines if ln.box is None or lo <= top + ln.box.y + ln.box.h / 2 < hi)
        reads.append((i, replace(result, lines=inside)))
        # Text read at two places in two samples moves with the picture (signs, pages): it is not subtitles.
        moving = _moving_texts([(k, ln) for k, r in reads for ln in r.lines])
        hits = 0
        for _, result in reads:
            result = replace(result, lines=tuple(ln for ln in result.lines if comparable(ln.text) not in moving))
            if len(comparable(result.text)) >= weights.read_chars and result.confidence >= weights.read_confidence:
                hits += 1
        if hits >= 2:
            return True
    return hits >= min(2, len(picks))


def _moving_texts(lines: Sequence[tuple[int, OcrLine]]) -> set[str]:
    """The texts (``comparable``) of ``lines`` ((sample, line), boxes in one band's pixels) read in two samples at
    places more than half a line height apart up or down, or a line height sideways: a renderer draws a subtitle
    where it drew it before (the same text in two samples is one cue shown across both), while signs, shirts and
    pages move with the camera (as vidocr.layout's SubtitleLayout tells of the lines it reads). A text read as
    part of another one (two signs that met, read as one line) is compared by its rows alone."""
    from vidocr.textnorm import comparable

    placed = [
        (i, comparable(ln.text), ln.box) for i, ln in lines if ln.box is not None and len(comparable(ln.text)) >= 2
    ]
    moving: set[str] = set()
    for n, (i, key, box) in enumerate(placed):
        for k, other, at in placed[n + 1 :]:
            if k == i or not (key in other or other in key):
                continue
            size = max(box.h, at.h)
            rows = abs(box.y + box.h / 2 - at.y - at.h / 2) > 0.5 * size
            sideways = key == other and abs(box.x + box.w / 2 - at.x - at.w / 2) > size
            if rows or sideways:
                moving.update((key, other))
    return moving


def _spread(run: tuple[int, int], sampled: list[tuple[np.ndarray, list[TextLine]]], tries: int) -> list[int]:
    """Up to ``tries`` samples with text lines in ``run``'s rows, spread evenly over them (indices, in order)."""
    lo, hi = run
    candidates = [i for i, (_, lines) in enumerate(sampled) if any(ln.y0 < hi and ln.y1 > lo for ln in lines)]
    if not candidates:
        return []
    count = min(tries, len(candidates))
    return list(dict.fromkeys(candidates[round(k * (len(candidates) - 1) / max(1, count - 1))] for k in range(count)))


def _tall(run: tuple[int, int], found: list[tuple[int, int, float]], weights: ZoneWeights = _WEIGHTS) -> bool:
    line_h = _line_height(run, found)
    return line_h is not None and run[1] - run[0] > weights.tall_run_lines * line_h


def _line_height(run: tuple[int, int], found: list[tuple[int, int, float]]) -> int | None:
    """The subtitle's line height in ``run``: the typical height of the lines that voted for its rows."""
    lo, hi = run
    inside = [(y1 - y0, w) for y0, y1, w in found if y0 < hi and y1 > lo]
    return _weighted_median(inside) if inside else None


def _subtitle_rows(
    read: BandReader,
    run: tuple[int, int],
    images: list[np.ndarray],
    sampled: list[tuple[np.ndarray, list[TextLine]]],
    weights: ZoneWeights = _WEIGHTS,
    tries: int = 6,
) -> tuple[int, int] | None:
    """The rows of ``run`` where OCR reads centred lines of text (subtitle lines) in at least two of a few
    samples spread over the video: the run shrunk to them, or the run as it is when OCR finds none there; None
    when all the text it reads there moves with the picture (see _moving_texts: signs in a panning shot).
    Lines of dark print (vidocr.layout.glyph_fill) do not count once light, outlined lines were read."""
    from vidocr.layout import PRINT_FILL_MAX, with_fill
    from vidocr.textnorm import comparable

    lo, hi = run
    picks = _spread(run, sampled, tries)
    read_lines: list[tuple[int, OcrLine]] = []  # (sample, line) of the lines read as text
    for i in picks:
        crop = np.ascontiguousarray(images[i][lo:hi])
        result = with_fill(read(cv2.cvtColor(crop, cv2.COLOR_GRAY2BGR)), crop)
        read_lines += [
            (i, ln) for ln in result.lines
            if ln.box is not None and ln.confidence >= weights.read_confidence
            and len(comparable(ln.text)) >= weights.read_chars
        ]
    moving = _moving_texts(read_lines)
    rows: list[tuple[int, int, bool]] = []  # (top, bottom, light) of centred lines read, analysis pixels
    found: set[int] = set()
    for i, ln in read_lines:
        box, width = cast(Box, ln.box), images[i].shape[1]
        margin = weights.centre_margin * width + weights.centre_margin_lines * box.h
        if abs(box.x + box.w / 2 - width / 2) > margin or comparable(ln.text) in moving:
            continue  # off-centre, or moving with the picture: a sign, picture detail
        rows.append((lo + box.y, lo + box.y + box.h, (ln.fill or 0.0) > PRINT_FILL_MAX))
        found.add(i)
    seen = len(found)
    if any(light for _, _, light in rows):
        rows = [row for row in rows if row[2]]
    if not rows and moving and all(comparable(ln.text) in moving for _, ln in read_lines):
        return None
    if seen < 2 or not rows:
        return run
    return max(lo, min(r[0] for r in rows)), min(hi, max(r[1] for r in rows))


def _sample_mask(image: np.ndarray, scale: float) -> tuple[np.ndarray, list[TextLine]]:
    edges = edge_mask(image, scale)
    # Subtitle lines are 2-15% of the picture height; taller components are picture content.
    return text_lines(edges, min_height=max(5, round(edges.shape[0] * 0.012)), max_height=round(edges.shape[0] * 0.15))


#: A ticker (news crawl) is text cut by the left or right frame edge in at least this share of the
#: samples: it scrolls in from one edge and out at the other, which subtitles never do.
TICKER_SHARE = 0.5


def _tickers(sampled: list[tuple[np.ndarray, list[TextLine]]], scale: float, width: int) -> tuple[Box, ...]:
    """Full-width strips (frame pixels) where text runs off a frame edge in most sampled frames."""
    if len(sampled) < 8:
        return ()
    rows = sampled[0][0].shape[0]
    cols = sampled[0][0].shape[1]
    hits = np.zeros(rows + 1, np.int32)
    for _, lines in sampled:
        seen = np.zeros(rows + 1, bool)
        for ln in lines:
            if ln.x0 <= max(1, 0.005 * cols) or ln.x1 >= cols - max(1, 0.005 * cols):
                seen[ln.y0 : ln.y1] = True
        hits += seen
    strips = []
    flagged = hits >= TICKER_SHARE * len(sampled)
    y = 0
    while y < len(flagged):
        if flagged[y]:
            y1 = y
            while y1 < len(flagged) and flagged[y1]:
                y1 += 1
            pad = max(2, (y1 - y) // 4)
            top, bottom = max(0, y - pad), min(rows, y1 + pad)
            strips.append(Box(0, int(top / scale), width, int(np.ceil((bottom - top) / scale))))
            y = y1
        y += 1
    return tuple(strips)


def _vote(
    sampled: list[tuple[np.ndarray, list[TextLine]]],
    static: np.ndarray,
    skip_rows: Sequence[tuple[int, int]] = (),
    weights: ZoneWeights = _WEIGHTS,
) -> tuple[np.ndarray, list[tuple[int, int, float]]]:
    """Row votes of the sampled text lines: new, centred, lower-half, wide lines count most (see
    :class:`ZoneWeights`). Lines in ``skip_rows`` (tickers) do not vote."""
    rows = sampled[0][0].shape[0] if sampled else 1
    votes = np.zeros(rows + 1, np.float64)
    found: list[tuple[int, int, float]] = []
    glued: list[tuple[int, int, float]] = []
    previous: np.ndarray | None = None
    for mask, lines in sampled:
        if static.size:
            mask = mask & (1 - static)
        before = cv2.dilate(previous, _KERNEL) if previous is not None else None
        previous = mask
        mid = mask.shape[1] / 2
        for line in lines:
            if any(line.y0 < hi and line.y1 > lo for lo, hi in skip_rows):
                continue
            part = mask[line.y0 : line.y1, line.x0 : line.x1]
            pixels = int(np.count_nonzero(part))
            if pixels == 0:
                continue  # all of it static
            centre = (line.x0 + line.x1) / 2
            centred = max(weights.centre_floor, 1.0 - abs(centre - mid) / mid)
            lower = 1.0 if (line.y0 + line.y1) / 2 >= rows * 0.5 else weights.upper_half
            # Subtitles come and go; text that is still there from the last sample (logos, signs,
            # static picture detail) earns little. The first sample counts as partly new.
            if before is None:
                novelty = weights.first_novelty
            else:
                kept = int(np.count_nonzero(part & before[line.y0 : line.y1, line.x0 : line.x1]))
                novelty = 1.0 - kept / pixels
            # Subtitle lines are runs of many glyphs; picture detail that lines up gives two or three.
            glyphs = max(line.glyphs, line.width / max(line.height, 1))
            weight = centred * lower * min(1.0, glyphs / weights.full_glyphs) * (weights.novelty_floor + novelty)
            votes[line.y0 : line.y1] += weight
            # Heights are learnt from lines of separate glyphs; one wide component may be two lines
            # glued together. When every line is one component (small CJK text, whose glyphs touch at
            # analysis resolution), those are all there is.
            (found if line.glyphs >= 2 else glued).append((line.y0, line.y1, weight))
    return votes, found or glued


def _runs(votes: np.ndarray, line_h: int, limit: int, weights: ZoneWeights = _WEIGHTS) -> list[tuple[int, int]]:
    """The strongest runs of voted rows, strongest first."""
    votes = votes.copy()
    top = float(votes.max())
    runs: list[tuple[int, int]] = []
    while len(runs) < limit and votes.max() >= weights.second_zone_share * top and votes.max() > 0:
        lo, hi = _strongest_run(votes, line_h, weights)
        runs.append((lo, hi))
        votes[max(0, lo - line_h) : hi + line_h] = 0
    return runs


def _zone(
    run: tuple[int, int],
    found: list[tuple[int, int, float]],
    scale: float,
    width: int,
    height: int,
    samples: int,
    static: tuple[Box, ...],
    name: str | None = None,
) -> Region:
    lo, hi = run
    small = hi - lo <= SMALL_TEXT_PX  # before the pads below
    rows = round(height * scale)
    line_h = _line_height(run, found) or hi - lo
    core = (int(lo / scale), int(np.ceil(hi / scale)))
    centre = (lo + hi) / 2 / max(rows, 1)
    name = name or ("bottom" if centre >= 0.55 else "top" if centre <= 0.4 else "middle")
    # Pad by half a line, and make room for a second line: above a bottom or middle band (two-line
    # subtitles grow upwards), below a top one.
    pad = max(2, line_h // 2)
    if hi - lo < 1.8 * line_h:
        if name == "top":
            hi += int(1.3 * line_h)
        else:
            lo -= int(1.3 * line_h)
    lo, hi = max(0, lo - pad), min(rows, hi + pad)
    y0, y1 = int(lo / scale), min(height, int(np.ceil(hi / scale)))
    min_h = int(height * 0.08)
    if y1 - y0 < min_h:
        grow = min_h - (y1 - y0)
        y0 = max(0, y0 - grow // 2)
        y1 = min(height, y0 + min_h)
    box = Box(0, y0, width, y1 - y0)
    return Region(box, "auto", int(line_h / scale), samples, core, name, _inside(static, box), small=small)


def _default_names(mode: str) -> list[str]:
    return ["top", "bottom"] if mode == "top,bottom" else ["top"] if mode == "top" else ["bottom"]


def _default_zone(name: str, width: int, height: int, samples: int, static: tuple[Box, ...]) -> Region:
    box = Box(0, 0, width, int(height * 0.2)) if name == "top" else default_band(width, height)
    return Region(box, "default", None, samples, None, name, _inside(static, box))


def _merge_overlapping(zones: list[Region]) -> list[Region]:
    """Zones whose bands overlap become one (two subtitle lines at nearby heights)."""
    zones = sorted(zones, key=lambda z: z.box.y)
    out: list[Region] = []
    for zone in zones:
        if out and zone.box.y < out[-1].box.y + out[-1].box.h:
            prev = out[-1]
            y0, y1 = prev.box.y, max(prev.box.y + prev.box.h, zone.box.y + zone.box.h)
            core = None
            if prev.core and zone.core:
                core = (min(prev.core[0], zone.core[0]), max(prev.core[1], zone.core[1]))
            box = Box(0, y0, prev.box.w, y1 - y0)
            out[-1] = replace(prev, box=box, core=core, static=tuple(set(prev.static) | set(zone.static)))
            continue
        out.append(zone)
    # Strongest-first order is lost by sorting; name clashes get a number.
    names: dict[str, int] = {}
    for i, zone in enumerate(out):
        names[zone.name] = names.get(zone.name, 0) + 1
        if names[zone.name] > 1:
            out[i] = replace(zone, name=f"{zone.name}{names[zone.name]}")
    return out


def _boxes(mask: np.ndarray, scale: float) -> tuple[Box, ...]:
    """Bounding boxes (frame pixels, slightly grown) of the components of an analysis-resolution mask."""
    grown = cv2.dilate(mask, np.ones((5, 5), np.uint8))
    count, _, stats, _ = cv2.connectedComponentsWithStats(grown, connectivity=8)
    out = []
    for i in range(1, count):
        x, y, w, h, area = (int(v) for v in stats[i])
        if area >= 30:
            out.append(Box(int(x / scale), int(y / scale), int(np.ceil(w / scale)), int(np.ceil(h / scale))))
    return tuple(out)


def _inside(boxes: tuple[Box, ...], band: Box) -> tuple[Box, ...]:
    return tuple(b for b in boxes if b.y < band.y + band.h and b.y + b.h > band.y)


def _weighted_median(values: list[tuple[int, float]]) -> int:
    values = sorted(values)
    half = sum(w for _, w in values) / 2
    acc = 0.0
    for value, weight in values:
        acc += weight
        if acc >= half:
            return value
    return values[-1][0]


def _strongest_run(votes: np.ndarray, line_h: int, weights: ZoneWeights = _WEIGHTS) -> tuple[int, int]:
    peak = int(np.argmax(votes))
    floor = weights.run_floor * votes[peak]
    gap = max(2, int(weights.run_gap_lines * line_h))
    lo = hi = peak
    # Walk outwards while rows are voted, jumping gaps up to one line tall (between two lines).
    i, miss = peak, 0
    while i > 0 and miss <= gap:
        i -= 1
        miss = 0 if votes[i] >= floor else miss + 1
        if miss == 0:
            lo = i
    i, miss = peak, 0
    while i < len(votes) - 1 and miss <= gap:
        i += 1
        miss = 0 if votes[i] >= floor else miss + 1
        if miss == 0:
            hi = i
    return lo, hi + 1


#: Shorter ranges are decoded through (a few seconds of video cost less than the seeks); longer ones are
#: sampled at keyframes (one keyframe decode per seek), unless their keyframes are too sparse to give
#: MIN_KEYFRAMES distinct frames.
SEEK_MIN_SPAN_S = 15.0
MIN_KEYFRAMES = 12
#: Sampling decodes that run at once (parts of the range cut at keyframes), up to two per core: the parts'
#: decoding costs differ (motion, the frames between a part's keyframe and its first sample), so more, smaller
#: parts finish closer together.
SAMPLE_THREADS = 4


#: A sample: a frame's luma analysis image, its U, V planes at the same size, and the image's text mask and lines.
_Sample = tuple[np.ndarray, Chroma | None, tuple[np.ndarray, list[TextLine]]]


def _sample(luma: np.ndarray, chroma: Chroma | None, scale: float) -> _Sample:
    """A frame's luma analysis image and its U, V planes at the same size (copies: the decoder reuses
    its frames), and the image's text mask and lines (made here, in the thread that decoded the frame).
    Colour images are made from the planes only when needed (see _survey)."""
    small = analysis_image(luma, None, None, scale)
    if small.base is not None:
        small = small.copy()
    mask = _sample_mask(small, 1.0)
    if chroma is None:
        return small, None, mask
    size = (small.shape[1], small.shape[0])
    u, v = (cv2.resize(plane, size, interpolation=cv2.INTER_AREA) for plane in chroma)
    return small, (u, v), mask


def _sample_images(
    source: VideoSource, start: float | None, end: float | None, samples: int, scale: float = 1.0
) -> Iterator[_Sample]:
    """Luma analysis images (:func:`~vidocr.textmask.analysis_image`, at ``scale``) of about ``samples``
    frames spread over the range, from a separate decoder, each with its chroma planes and text mask (see
    _sample)."""
    info = source.info
    t0 = start or 0.0
    t1 = end if end is not None else (info.duration_s or 0.0)
    span = max(0.0, t1 - t0)
    fps = info.fps or 25.0
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    threads = min(SAMPLE_THREADS, 2 * cores)

    def sample(frame: DecodedFrame) -> tuple[int, _Sample]:
        return frame.ts.pts, _sample(frame.luma(), frame.chroma(), scale)

    if span > SEEK_MIN_SPAN_S:
        times = [t0 + span * (k + 0.5) / samples for k in range(samples)]
        found = dict(source.map_keyframes_near(times, sample, threads))  # in order, each keyframe once
        if len(found) >= min(MIN_KEYFRAMES, samples):
            yield from found.values()
            return
    step = max(1, int(span * fps / samples)) if span else 1
    yield from (image for _, image in source.map_every_nth(step, sample, start, end, threads))
