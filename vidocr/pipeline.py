"""The one library call: ``extract(path, options) -> (iterator of cues, video info)``.

Stages, streaming and bounded: PyAV decodes every frame (FFmpeg threads) -> the band's text mask
and a scene-cut check per frame -> the change detector decides which frames to read -> band crops
are batched to the OCR engine on a background thread through a small queue, so decoding and OCR
overlap -> the merger turns finished segments into cues, yielded as soon as they are final.
"""

from __future__ import annotations

import logging
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import cast

import cv2
import numpy as np

from vidocr.detect import (
    SPLIT_SIMILARITY,
    BandChangeDetector,
    DetectOptions,
    DetectorEvent,
    ReadReason,
    ReadRequest,
    SceneCuts,
    Segment,
    SegmentEnded,
    SegmentStarted,
)
from vidocr.engines import (
    ENGINES,
    BackgroundEngine,
    EngineOptions,
    OcrEngine,
    band_reader,
    engine_spec,
    engines_for_task,
)
from vidocr.errors import ConfigError, VidocrError
from vidocr.hanscript import ScriptKeeper, check_script
from vidocr.layout import GlyphEvidence, SubtitleLayout
from vidocr.merge import CueMerger, MergeOptions, Read, SegmentRecord
from vidocr.ocrqueue import FUSE_BELOW, OcrWorker, Prior
from vidocr.region import BandReader, Region, find_zones, parse_roi, user_zones
from vidocr.textmask import (
    RIM_STEP,
    SMALL_RIM_STEP,
    Chroma,
    TextLine,
    analysis_image,
    analysis_scale,
    closed_glyph_mask,
    edge_mask,
    fine_dark,
    shows_page,
)
from vidocr.textnorm import comparable, normalize_text, text_similarity
from vidocr.types import Box, Cue, OcrLine, OcrResult, Task, Timestamp, VideoInfo, ZoneStats
from vidocr.video import DecodedFrame, VideoSource

log = logging.getLogger("vidocr")


@dataclass(frozen=True)
class ExtractOptions:
    """Everything that shapes one extraction.

    engine: registry name of the OCR engine (``vidocr.engines.ENGINES``).
    task: what to ask the engine for; ``Task.TRANSLATE`` needs ``translate_to``.
    roi: one subtitle band as ``"x,y,w,h"`` (pixels, or fractions <= 1.0) or a :class:`Box`; overrides zones.
    zones: "auto" (every subtitle zone found), "bottom" (the single strongest band), "top", "top,bottom",
        or boxes ``"x,y,w,h;x,y,w,h"``. Each zone is tracked, read and merged on its own.
    keep_static: keep text that stays put (logos, watermarks, clocks); by default it never becomes a cue.
    start, end: seconds on the video's own clock (0 = first frame); cue times stay on that clock.
    queue_size: band crops that may wait for OCR before decoding pauses (bounds memory).
    stream: index of the video stream to read (ffprobe's ``Stream #0:N``); default: the main one.
    lang: languages or scripts of the subtitles (``vidocr.langs.parse_langs``: "ko", "ru", "hangul"...);
        empty: auto (the engine decides per video, see ``vidocr.engines.rapid.ScriptChooser``).
    script: Chinese output script: "auto" (the video's own, stray variant forms converted), "simplified",
        "traditional" or "keep" (see :mod:`vidocr.hanscript`).
    fuse_s: a new segment's first read that comes back unsure (see vidocr.ocrqueue.FUSE_BELOW) is made again on
        the mean of its crop over the frames of this many seconds from the one it was asked for (within its
        segment; 0: never), and the surer of the two is kept. A subtitle stays put while compression noise and
        the picture behind it change from frame to frame: the mean keeps the glyphs and blurs the rest. The
        frames right after a subtitle appears are the worst (an encoder spreads a change over several frames):
        at 360p, heavy compression, reads of the frame after a cue appeared were exact for 4 of 36 cues, means
        over 0.3 s for 12. Not every read: a mean smears a sign moving in the picture into new junk text, and a
        re-read's window may cross a change (see _Fusion). Only for engines whose confidences tell a misread
        (``vidocr.engines.EngineSpec.fuses``: the CPU engine).
    polish: a cue whose text came from an unsure read (see vidocr.ocrqueue.FUSE_BELOW) is read once more, when the
        merger gives it out, on the mean of the band over the frames of its segments (those the detector saw in
        each segment's state), and that read gives the cue its text when it is surer, has as many lines and reads
        like it (see _Polisher). Compression noise and a moving picture average out over a whole subtitle, not
        over 0.3 s: on 72 cues of 360p, heavily compressed libass renders, reads of one frame were exact for 13,
        of the mean over 0.3 s for 18, of the mean over the cue for 40. Same engines as ``fuse_s``.
    """

    engine: str = "rapidocr"
    engine_options: EngineOptions = field(default_factory=EngineOptions)
    task: Task = Task.SUBTITLE
    translate_to: str | None = None
    roi: str | Box | None = None
    zones: str = "auto"
    keep_static: bool = False
    start: float | None = None
    end: float | None = None
    detect: DetectOptions = field(default_factory=DetectOptions)
    merge: MergeOptions = field(default_factory=MergeOptions)
    queue_size: int = 64
    stream: int | None = None
    lang: tuple[str, ...] = ()
    script: str = "auto"
    fuse_s: float = 0.3
    polish: bool = True


@dataclass(frozen=True)
class Progress:
    """A progress report. ``phase``: "zones" (finding the subtitle zones, before any cue can come), "decode"
    (frames are being read; ``seconds_done`` is the last frame's time), "finish" (every frame read: the last
    reads and merges), "done"."""

    path: str
    seconds_done: float
    seconds_total: float | None
    frames: int
    reads: int
    cues: int
    phase: str = "decode"


ProgressFn = Callable[[Progress], None]


def check_task(engine_name: str, task: Task, translate_to: str | None) -> None:
    """Refuse, before any work, a task the engine cannot do."""
    spec = engine_spec(engine_name)
    if task not in spec.tasks:
        able = ", ".join(engines_for_task(task)) or "none installed"
        raise ConfigError(f"engine {engine_name!r} cannot do task {task.value!r}; engines that can: {able}")
    if task is Task.TRANSLATE and not translate_to:
        raise ConfigError("translation needs a target language ({param} LANG)", param="translate_to")


def extract(
    path: str | Path,
    options: ExtractOptions | None = None,
    *,
    engine: OcrEngine | None = None,
    progress: ProgressFn | None = None,
    zone_reader: BandReader | None = None,
) -> tuple[Iterator[Cue], VideoInfo]:
    """Open ``path``, locate the subtitle band and return a lazy iterator of cues plus video info.

    Bad input raises :class:`~vidocr.errors.InputError` here, before anything is returned.
    ``engine`` reuses an engine across files (the caller closes it); otherwise one is created
    for this call and closed when the iterator ends. ``info.stats`` (:class:`~vidocr.types.RunStats`) has the
    zones when this returns and is final once the iterator is exhausted: the iterator stays lazy, so the
    counts of a run exist only when it has run.
    ``zone_reader``: the zone finder's OCR check (where votes cannot tell a subtitle zone) when the engine reads
    no line boxes of its own (:func:`vidocr.engines.band_reader`); None: one built for this call if needed.
    """
    options = options or ExtractOptions()
    check_task(options.engine if engine is None else engine.name, options.task, options.translate_to)
    check_script(options.script)
    source = VideoSource(path, options.stream)
    own_engine: BackgroundEngine | None = None
    try:
        info = source.info
        if engine is None:
            # Models load on a background thread while the band is being found.
            own_engine = BackgroundEngine(options.engine, _engine_options(options))
            engine = cast(OcrEngine, own_engine)
        if progress is not None:
            _report(progress, Progress(str(source.path), 0.0, info.duration_s, 0, 0, 0, "zones"))
        zones_started = time.perf_counter()
        regions = _regions(source, options, band_reader(engine) or zone_reader)
        info.stats.times.zones = round(time.perf_counter() - zones_started, 3)
    except BaseException:
        source.close()
        if own_engine is not None:
            own_engine.close()
        raise
    stats = info.stats
    stats.band, stats.band_source = regions[0].box, regions[0].source
    stats.zones = tuple(ZoneStats(r.name, r.box, r.source, r.static, r.colour, r.small) for r in regions)
    assert engine is not None
    return _run(source, regions, options, engine, own_engine is not None, progress), info


def _regions(source: VideoSource, options: ExtractOptions, read: BandReader | None) -> list[Region]:
    info = source.info
    spec = options.zones.strip().lower()
    if options.roi is None and not any(ch.isdigit() for ch in spec):
        return find_zones(source, options.start, options.end, spec, keep_static=options.keep_static, read=read)
    if options.roi is not None:
        box = options.roi if isinstance(options.roi, Box) else parse_roi(options.roi, info.width, info.height)
        named = [(_position_name(box, info.height), box)]
    else:
        boxes = [parse_roi(part, info.width, info.height) for part in spec.split(";") if part.strip()]
        named = [(f"{_position_name(b, info.height)}{i + 1}", b) for i, b in enumerate(boxes)]
    return user_zones(source, named, options.start, options.end, options.keep_static)


def _position_name(box: Box, height: int) -> str:
    centre = (box.y + box.h / 2) / max(height, 1)
    return "bottom" if centre >= 0.55 else "top" if centre <= 0.4 else "middle"


def _engine_options(options: ExtractOptions) -> EngineOptions:
    engine_opts = options.engine_options
    if options.translate_to and not engine_opts.translate_to:
        engine_opts = replace(engine_opts, translate_to=options.translate_to)
    if options.lang and not engine_opts.lang:
        engine_opts = replace(engine_opts, lang=tuple(options.lang))
    return engine_opts


@dataclass
class _PendingSegment:
    """A segment waiting to be merged: until it has ended and every read of it is back."""

    segment: Segment
    end: Timestamp | None = None
    reads: list[tuple[int, ReadRequest]] = field(default_factory=list)


def _run(
    source: VideoSource,
    regions: list[Region],
    options: ExtractOptions,
    engine: OcrEngine,
    own_engine: bool,
    progress: ProgressFn | None,
) -> Iterator[Cue]:
    info = source.info
    worker: OcrWorker | None = None
    started = time.monotonic()
    try:
        begin = getattr(engine, "begin_video", None)
        if callable(begin):
            begin(str(source.path))  # an engine that picks the script per video (--lang auto) starts afresh
        batch = options.engine_options.batch_size or engine.preferred_batch
        spec = ENGINES.get(engine.name)
        if spec is None or not spec.fuses:
            options = replace(options, fuse_s=0.0, polish=False)
        worker = OcrWorker(engine, options.task, batch, options.queue_size)
        yield from _stream(source, regions, options, worker, progress)
        stats = info.stats
        stats.ocr_batches = len(worker.batches)
        stats.ocr_rereads = worker.rereads
        stats.ocr_glyph_reads = worker.glyph_reads
        stats.ocr_run_reads = worker.run_reads
        stats.ocr_fused_reads, stats.ocr_fused_kept = worker.fused_reads, worker.fused_kept
        stats.ocr_whole_reads, stats.ocr_whole_kept = worker.whole_reads, worker.whole_kept
        stats.max_batch = max(worker.batches, default=0)
        stats.times.ocr = round(worker.busy_s, 3)
    except BaseException:
        if worker is not None:
            worker.abort()
            worker = None
        raise
    finally:
        if worker is not None:
            worker.close()
        if own_engine:
            engine.close()
        info.stats.rescaled_frames = source.rescaled_frames
        source.close()
        info.stats.seconds = round(time.monotonic() - started, 3)


class _Reads:
    """The reads of one run, over every zone: numbered in the order they are asked for, each remembered with
    its zone and crop offset until its result is back from the OCR thread, then kept (in band coordinates,
    filtered by its zone) until its segment is merged."""

    def __init__(self, worker: OcrWorker, frame_height: int) -> None:
        self.worker = worker
        self.frame_height = frame_height
        self.count = 0  # reads asked for (each one frame read by OCR)
        self.confirmed = 0  # re-reads answered without detection
        self.results: dict[int, OcrResult] = {}
        #: Reads their zone's layout judged on too little evidence, as they came (SubtitleLayout.read).
        self.unsure: dict[int, OcrResult] = {}
        self._asked: dict[int, tuple[_Zone, int, int]] = {}

    def ask(self, zone: _Zone, frame: DecodedFrame, request: ReadRequest) -> _Fusion:
        """Number ``request``'s read and start its crop with ``frame`` (see _Fusion; :meth:`send` queues it)."""
        self.count += 1
        read_id = self.count
        crop = ocr_crop(zone.box, request.lines, zone.scale, self.frame_height)
        self._asked[read_id] = (zone, crop.x, crop.y)
        ahead = request.reason in (ReadReason.NEW, ReadReason.FIRST)
        fusion = _Fusion(read_id, request.segment, crop, zone.prior(request, crop), zone.page, ahead)
        fusion.add(frame, zone.box)
        zone.last_read = (read_id, crop.y, request.segment.index)
        return fusion

    def polish(self, zone: _Zone, crop: Box, image: np.ndarray) -> int:
        """Number and queue a read of a cue's band mean over its frames (see _Polisher)."""
        self.count += 1
        self._asked[self.count] = (zone, crop.x, crop.y)
        self.worker.submit(self.count, image, None, page=zone.page)
        return self.count

    def send(self, fusion: _Fusion) -> None:
        """Queue a read's crop for OCR, with its mean over frames to read if the crop reads unsure."""
        self.worker.submit(fusion.read_id, fusion.frames[0][1], fusion.prior, page=fusion.page, fused=fusion.image())

    def judged(self, read_id: int, layout: SubtitleLayout) -> OcrResult:
        """The result of read ``read_id`` (back), judged again by its zone's ``layout`` when that judged it on too
        little evidence as it came (see SubtitleLayout.judged)."""
        result = self.results[read_id]
        if read_id in self.unsure:
            result = layout.judged(self.unsure.pop(read_id), result)
        return result

    @property
    def all_back(self) -> bool:
        """Whether every read asked for is back from the OCR thread."""
        return not self._asked

    def collect(self, wait: float = 0.0) -> None:
        """Take the results the OCR thread has finished (waiting up to ``wait`` seconds for one)."""
        for read_id, result in self.worker.take(wait).items():
            self.confirmed += result.confirmed
            zone, dx, dy = self._asked.pop(read_id)
            came = zone.drop_static(result.shifted(dx, dy))
            self.results[read_id], unsure = zone.layout.read(came)
            if unsure:
                self.unsure[read_id] = came


@dataclass
class _Fusion:
    """A read's crop over the frames of its first ``ExtractOptions.fuse_s`` seconds, until it is sent (the first is
    the read's own); frames from its segment's end on (which the detector tells a few frames late) are left out."""

    read_id: int
    segment: Segment
    crop: Box
    prior: Prior | None
    page: bool
    #: A new segment's first read gathers frames; a re-read's window could cross a change the masks did not see (a
    #: line redrawn in place with as many glyphs: the real Russian clip's "В ЭМОЦИЯХ" -> "В ЧУВСТВАХ"), and a mean
    #: across it reads a blend of both ("В ЧУВС ВХ", surer than the frame's own read, split the cue 3 frames early).
    ahead: bool = True
    frames: list[tuple[float, np.ndarray]] = field(default_factory=list)
    end_s: float | None = None  # the segment's end, once it ended
    after: int = 0  # frames seen since the window closed

    def add(self, frame: DecodedFrame, box: Box) -> None:
        self.frames.append((frame.ts.seconds, ocr_image(frame, box, self.crop)))

    def image(self) -> np.ndarray | None:
        """The mean of the crop over the frames of the segment; None when there is only the first."""
        first = self.frames[0][1]
        kept = [img for ts, img in self.frames[1:] if self.end_s is None or ts < self.end_s]
        if not kept:
            return None
        total = first.astype(np.float32)
        for img in kept:
            total += img
        return np.clip(total / (len(kept) + 1) + 0.5, 0, 255).astype(np.uint8)


#: Frames a read waits, once its window is full, for its segment's end to be told (the detector confirms a
#: change ``DetectOptions.confirm`` samples late): frames of the next subtitle must not be in its mean.
FUSE_SETTLE_FRAMES = 3

#: A cue's band over fewer frames than this is not read again (see ExtractOptions.polish): its fused first read
#: (ExtractOptions.fuse_s) had about as many.
POLISH_MIN_FRAMES = 8
#: Frames per second of a text segment added to its band's sum (every frame at 10 fps and below): averaging more
#: gains little and each costs a crop's conversion.
POLISH_FPS = 10
#: A cue whose confidence is below this is read again on its band's mean.
POLISH_BELOW = FUSE_BELOW
#: How alike the read of a cue's band mean and the cue's own text must be for the read to give the cue its text.
POLISH_SIMILARITY = 0.5
#: Sampled frames per sum (_BandSum): a cue takes the sums inside it.
POLISH_CHUNK = 4
#: Sums kept for cues the merger has not given out yet (bounds memory).
POLISH_KEEP = 64


class _BandSum:
    """The band summed over up to POLISH_CHUNK sampled frames of one text segment (those the detector saw in its
    state), from ``start_ms`` to ``end_ms``: a cue takes the sums that lie inside it (the merger may split a segment
    where its reads changed). The latest few frames are held apart until the segment's end is told: frames of the
    next state must not count."""

    def __init__(self, start_ms: int) -> None:
        self.start_ms = start_ms
        self.end_ms: int | None = None
        self.total: np.ndarray | None = None
        self.count = 0

    def add(self, image: np.ndarray) -> None:
        if self.total is None:
            self.total = image.astype(np.float32)
        else:
            self.total += image
        self.count += 1


class _Polisher:
    """A zone's cues on their way out, each read again on the mean of the band over its segments' frames when its
    text came from unsure reads (see ExtractOptions.polish), and given that read's text where it is surer and reads
    like it. Cues leave in order; one waiting for its read holds back those after it."""

    def __init__(self, fps: float | None) -> None:
        self.every = max(1, round((fps or 25.0) / POLISH_FPS))
        self.frames = 0
        self.sums: deque[_BandSum] = deque()
        self.segment: Segment | None = None  # the text segment being summed
        self.chunk: _BandSum | None = None  # its latest sum
        self.recent: deque[tuple[Timestamp, np.ndarray]] = deque()  # its latest frames, not summed yet
        self.held: deque[tuple[Cue, int | None]] = deque()
        self.reads = 0  # cues read again
        self.kept = 0  # of those, given the read's text

    def begin(self, segment: Segment) -> None:
        """Start summing the band for ``segment``, which asked for its first read (it shows text lines)."""
        if self.segment is not segment:
            self._close(None)
            self.segment = segment

    def add(self, frame: DecodedFrame, box: Box) -> None:
        self.frames += 1
        if self.segment is not None and self.frames % self.every == 0:
            self.recent.append((frame.ts, frame.bgr(box)))
            if len(self.recent) > FUSE_SETTLE_FRAMES:
                self._sum(*self.recent.popleft())

    def end(self, segment: Segment, end: Timestamp) -> None:
        if self.segment is segment:
            self._close(end)

    def _sum(self, ts: Timestamp, image: np.ndarray) -> None:
        chunk = self.chunk
        if chunk is None or chunk.count >= POLISH_CHUNK:
            if chunk is not None:
                chunk.end_ms = ts.ms
            assert self.segment is not None
            self.chunk = chunk = _BandSum(self.segment.start.ms if chunk is None else ts.ms)
            self.sums.append(chunk)
            while len(self.sums) > POLISH_KEEP:
                self.sums.popleft()
        chunk.add(image)

    def _close(self, end: Timestamp | None) -> None:
        """The segment ended at ``end`` (None: its end is unknown, its latest frames are left out)."""
        if end is not None:
            for ts, image in self.recent:
                if ts.seconds < end.seconds:
                    self._sum(ts, image)
        if self.chunk is not None:
            self.chunk.end_ms = end.ms if end is not None else self.chunk.start_ms  # no cue takes an unended sum
        self.recent.clear()
        self.segment = self.chunk = None

    def hold(self, cue: Cue, zone: _Zone, reads: _Reads) -> None:
        """Queue ``cue``, asking for the read of its band's mean when its text came from unsure reads."""
        parts = [
            s for s in self.sums
            if s.end_ms is not None and s.total is not None and cue.start_ms <= s.start_ms and s.end_ms <= cue.end_ms
        ]
        while self.sums and self.sums[0].end_ms is not None and self.sums[0].end_ms <= cue.end_ms:
            self.sums.popleft()
        count = sum(s.count for s in parts)
        if cue.translation or cue.confidence >= POLISH_BELOW or cue.box is None or count < POLISH_MIN_FRAMES:
            self.held.append((cue, None))
            return
        total = parts[0].total
        assert total is not None
        for part in parts[1:]:
            total = total + cast(np.ndarray, part.total)
        band = zone.box
        top = cue.box.y - band.y
        crop = _rows_crop(band, top, top + cue.box.h, cue.box.h / len(cue.lines), band.h)
        mean = np.clip(total[crop.y : crop.y + crop.h] / count + 0.5, 0, 255).astype(np.uint8)
        self.reads += 1
        self.held.append((cue, reads.polish(zone, crop, mean)))

    def released(self, zone: _Zone, reads: _Reads, last: bool = False) -> Iterator[Cue]:
        """The held cues, oldest first, up to the first whose read is not back; each once the cue after it is known
        (or ``last``: the merger gave out its last cue). Two cues that meet and read the same once read again are
        one subtitle, as the merger joins them (a misread the merger could not tell from a change: "Don't open
        that docr!" after "Don't open that door!" over a cut, 360p)."""
        held = self.held
        while held and self._ready(0, zone, reads):
            if len(held) < 2:
                if not last:
                    return
                yield held.popleft()[0]
                continue
            if not self._ready(1, zone, reads):
                return
            (cue, _), (after, _) = held[0], held[1]
            if cue.end_ms == after.start_ms and comparable(cue.text) == comparable(after.text) and (
                cue.translation == after.translation
            ):
                held.popleft()
                surer = cue if cue.confidence >= after.confidence else after
                joined = replace(surer, start_ms=cue.start_ms, end_ms=after.end_ms, reads=cue.reads + after.reads)
                held[0] = (joined, None)
                continue
            yield held.popleft()[0]

    def _ready(self, k: int, zone: _Zone, reads: _Reads) -> bool:
        """Whether the ``k``-th held cue is final: not read again, or its read is back (then taken in)."""
        cue, read_id = self.held[k]
        if read_id is None:
            return True
        if read_id not in reads.results:
            return False
        result = reads.judged(read_id, zone.layout)
        del reads.results[read_id]
        self.held[k] = (self._better(cue, result), None)
        return True

    def _better(self, cue: Cue, result: OcrResult) -> Cue:
        """``cue`` with the text of ``result`` (the read of its band's mean) where that read is sure (POLISH_BELOW),
        surer than the cue, has as many lines and reads like it: a mean across two subtitles the reads did not tell
        apart reads a blend; a mean over a page of print moving behind a subtitle, an unsure junk glyph
        ("think'äbout", 0.94, over "think about", new seeds check 20)."""
        if (
            result.confidence >= POLISH_BELOW
            and result.confidence > cue.confidence
            and len(result.lines) == len(cue.lines)
            and text_similarity(result.text, cue.text) >= POLISH_SIMILARITY
        ):
            self.kept += 1
            return replace(cue, text=normalize_text(result.text), confidence=result.confidence)
        return cue


class _Zone:
    """Per-zone tracker: its band, detector and merger, the segments waiting for their reads, and its counts."""

    def __init__(
        self,
        region: Region,
        options: ExtractOptions,
        fps: float | None,
        glyphs: GlyphEvidence | None = None,
        script: ScriptKeeper | None = None,
    ) -> None:
        self.region = region
        self.script = script or ScriptKeeper(options.script)
        self.name = region.name
        self.box = box = region.box
        # Small text is masked at twice the resolution, where its thin strokes keep their contrast (SMALL_TEXT_PX).
        scale = analysis_scale(box.w)
        self.scale = scale = min(1.0, 2 * scale) if region.small else scale
        self.rim_step = SMALL_RIM_STEP if region.small else RIM_STEP
        core = None
        if region.core is not None:
            core = (int((region.core[0] - box.y) * scale), int((region.core[1] - box.y) * scale) + 1)
        line_h = region.line_height * scale if region.line_height else None
        self.page = False  # the band shows a page of print (see edges)
        self.page_frames = 0
        self.detector = BandChangeDetector(options.detect, fps, line_h, core)
        self.merger = CueMerger(options.merge)
        self.pending: deque[_PendingSegment] = deque()
        self.fuse_s = options.fuse_s
        self.polisher = _Polisher(fps) if options.polish else None
        self.fusing: list[_Fusion] = []  # reads asked for, not yet sent (see _Fusion)
        # Static text (logos, watermarks) in band coordinates, and as analysis-resolution rectangles.
        self.static = [Box(b.x - box.x, b.y - box.y, b.w, b.h) for b in region.static]
        self._static_px = [
            (int(b.y * scale), int((b.y + b.h) * scale) + 1, int(b.x * scale), int((b.x + b.w) * scale) + 1)
            for b in self.static
        ]
        self.suppressed = 0
        # Signs and pages in the picture are not subtitle lines (bands found automatically span the frame).
        self.layout = SubtitleLayout(box.w, enabled=region.source != "user", glyphs=glyphs)
        #: (read id, crop top row, segment index) of the zone's latest read.
        self.last_read: tuple[int, int, int] | None = None
        self.cues = 0  # cues given out

    def handle(self, events: Iterable[DetectorEvent], frame: DecodedFrame | None, reads: _Reads) -> None:
        """Track the detector's events: a segment started or ended, a read of ``frame`` asked for; add ``frame`` to
        the reads still gathering frames and send those that are done (all of them once ``frame`` is None)."""
        fusing = list(self.fusing)
        for event in events:
            if isinstance(event, SegmentStarted):
                self.pending.append(_PendingSegment(event.segment))
            elif isinstance(event, SegmentEnded):
                current = self.pending[-1]  # a segment ends before the next one starts
                assert current.segment is event.segment
                current.end = event.end
                if self.polisher is not None:
                    self.polisher.end(event.segment, event.end)
                for fusion in self.fusing:
                    if fusion.segment is event.segment:
                        fusion.end_s = event.end.seconds
            elif frame is not None:
                fusion = reads.ask(self, frame, event)
                current = self.pending[-1]
                current.reads.append((fusion.read_id, event))
                self.fusing.append(fusion)
                if self.polisher is not None and fusion.ahead and current.end is None:
                    self.polisher.begin(current.segment)
        if self.polisher is not None and frame is not None and not self.detector.unlike:
            self.polisher.add(frame, self.box)
        done = []
        for fusion in self.fusing:
            if frame is None or fusion.end_s is not None or self.fuse_s <= 0 or not fusion.ahead:
                done.append(fusion)
            elif fusion in fusing:  # not asked for at this frame
                if frame.ts.seconds - fusion.frames[0][0] < self.fuse_s:
                    if not self.detector.unlike:
                        fusion.add(frame, self.box)
                else:
                    fusion.after += 1
                    if fusion.after >= FUSE_SETTLE_FRAMES:
                        done.append(fusion)
        for fusion in done:
            self.fusing.remove(fusion)
            reads.send(fusion)

    def merged(self, reads: _Reads, clock: _StageClock, final: bool = False) -> Iterator[Cue]:
        """Cues of the segments, oldest first, that have ended and have all their reads back; a segment with
        reads the layout judged on too little evidence waits for it (or, once ``final``, for every read to be
        back), then they are judged again."""
        pending = self.pending
        while pending and pending[0].end is not None and all(rid in reads.results for rid, _ in pending[0].reads):
            held = [rid for rid, _ in pending[0].reads if rid in reads.unsure]
            if not (final and reads.all_back) and any(self.layout.waiting(reads.unsure[rid]) for rid in held):
                break
            for rid in held:
                reads.results[rid] = reads.judged(rid, self.layout)
            done = pending.popleft()
            t0 = time.perf_counter()
            cues = self.merger.push(_record(done, reads.results, self.box, self.scale))
            clock.merge += time.perf_counter() - t0
            yield from self.named(cues, reads)
        yield from self.named([], reads)

    def named(self, cues: list[Cue], reads: _Reads, last: bool = False) -> Iterator[Cue]:
        """``cues`` given out as the zone's (after their reads of the band's mean, see _Polisher), in order;
        ``last``: the merger has given out its last cue."""
        if self.polisher is None:
            out: Iterable[Cue] = cues
        else:
            for cue in cues:
                self.polisher.hold(cue, self, reads)
            out = self.polisher.released(self, reads, last)
        for cue in out:
            self.cues += 1
            yield replace(cue, zone=self.name, text=self.script.fix(cue.text))

    @property
    def holding(self) -> bool:
        """Whether cues wait for their reads of the band's mean."""
        return self.polisher is not None and bool(self.polisher.held)

    def prior(self, request: ReadRequest, crop: Box) -> Prior | None:
        """The earlier read that this read probably repeats, for a cheap re-read (see OcrWorker):
        the segment's own last read for re-reads; for a new segment right after a text segment
        whose mask it partly shares (at least SPLIT_SIMILARITY: a split caused by the picture behind a
        subtitle, or a change), that segment's last read (cheap when it is the same subtitle, a wasted
        recognition when not). None when the mask saw a line grow past the lines of that
        read: the recogniser would read the old words in the old boxes and miss the new ones. Otherwise
        only cost depends on it: a re-read that does not read back the same text is a full read."""
        if self.last_read is None or request.grown:
            return None
        read_id, top, index = self.last_read
        seg = request.segment
        if request.reason is ReadReason.NEW:
            if index != seg.index - 1 or seg.prev_similarity < SPLIT_SIMILARITY:
                return None
        elif request.reason is ReadReason.FIRST or index != seg.index:
            return None
        return Prior(read_id, top - crop.y)

    def edges(self, luma: np.ndarray, chroma: Chroma | None) -> tuple[np.ndarray, np.ndarray]:
        """The band's edge mask (see vidocr.textmask.edge_mask) and the analysis image it came from."""
        chroma = chroma if self.region.colour else None
        image = analysis_image(luma, chroma, self.box, self.scale)
        # Thin outlines are measured at full resolution (a colour zone's glyphs are judged by their strongest
        # channel, which the luma's darkest pixel does not match).
        dark = fine_dark(luma, self.box, self.scale, image.shape) if chroma is None else None
        edges = edge_mask(image, 1.0, self.rim_step, dark)
        self.page = shows_page(image, edges, self.page)
        if self.page:
            # A page of print behind the subtitles: the paper beside its strokes fills the edge mask.
            edges = closed_glyph_mask(analysis_image(luma, chroma, self.box, 1.0), self.scale, self.rim_step)
            self.page_frames += 1
        for y0, y1, x0, x1 in self._static_px:
            edges[max(0, y0) : y1, max(0, x0) : x1] = 0
        return edges, image

    def drop_static(self, result: OcrResult) -> OcrResult:
        """OCR lines centred inside a static text box are the logo, not the subtitle."""
        if not self.static or not result.lines:
            return result
        kept = self._not_static(result.lines)
        self.suppressed += len(result.lines) - len(kept)
        alone = result.glyphs_only  # the crop read with its glyphs alone (see vidocr.layout)
        if alone is not None:
            result = replace(result, glyphs_only=replace(alone, lines=self._not_static(alone.lines)))
        return replace(result, lines=kept) if len(kept) != len(result.lines) else result

    def _not_static(self, lines: tuple[OcrLine, ...]) -> tuple[OcrLine, ...]:
        return tuple(ln for ln in lines if ln.box is None or not _on_static(ln.box, self.static))


def _on_static(box: Box, boxes: Sequence[Box]) -> bool:
    """Whether a line is static text: its centre in a static box, or half its columns in the static boxes on its
    rows (a logo of several words, each its own static box, read as one line whose centre falls between them)."""
    cx, cy = box.x + box.w / 2, box.y + box.h / 2
    if any(b.x <= cx <= b.x + b.w and b.y <= cy <= b.y + b.h for b in boxes):
        return True
    spans = sorted((max(box.x, b.x), min(box.x + box.w, b.x + b.w)) for b in boxes if b.y <= cy <= b.y + b.h)
    covered, reach = 0, box.x
    for x0, x1 in spans:
        x0 = max(x0, reach)
        if x1 > x0:
            covered, reach = covered + x1 - x0, x1
    return covered >= 0.5 * box.w


def _stream(
    source: VideoSource,
    regions: list[Region],
    options: ExtractOptions,
    worker: OcrWorker,
    progress: ProgressFn | None,
) -> Iterator[Cue]:
    info = source.info
    glyphs = GlyphEvidence()  # one video's subtitles: print is dropped in every zone once they showed light glyphs
    script = ScriptKeeper(options.script)  # one Chinese script for the video's cues (all zones)
    zones = [_Zone(region, options, info.fps, glyphs, script) for region in regions]
    cuts = SceneCuts(info.fps) if options.detect.scene_cuts else None
    colour = any(region.colour for region in regions)
    reads = _Reads(worker, info.height)
    frames = 0
    last_ts: Timestamp | None = None
    step = source.frame_step()
    last_report = 0.0
    total = (options.end or info.duration_s or 0) - (options.start or 0) or None
    clock = _StageClock()

    def ready(wait: float = 0.0, final: bool = False) -> Iterator[Cue]:
        reads.collect(wait)
        for zone in zones:
            yield from zone.merged(reads, clock, final)

    def report(seconds: float, phase: str = "decode") -> None:
        if progress is not None:
            cues = sum(zone.cues for zone in zones)
            _report(progress, Progress(str(source.path), seconds, total, frames, reads.count, cues, phase))

    for frame in clock.decoding(source.frames(options.start, options.end)):
        t0 = time.perf_counter()
        frames += 1
        luma = frame.luma()
        chroma = frame.chroma() if colour else None
        cut = False
        if cuts is not None:
            # A strided view is enough for shot cuts and costs nothing (a full-frame area resize: ~4 ms).
            stride = max(1, luma.shape[1] // 128)
            small = cv2.cvtColor(np.ascontiguousarray(luma[::stride, ::stride]), cv2.COLOR_GRAY2BGR)
            cut = cuts.is_cut(frame.ts, small)
        for zone in zones:
            edges, image = zone.edges(luma, chroma)
            zone.handle(zone.detector.push(frame.ts, edges, cut, image), frame, reads)
        last_ts = frame.ts
        clock.detect += time.perf_counter() - t0
        yield from ready()
        if progress is not None:
            now = time.monotonic()
            if now - last_report >= 0.25:
                last_report = now
                report(frame.ts.seconds)
    if last_ts is None:
        raise VidocrError("no video frames in the requested range", str(source.path))
    end = Timestamp(last_ts.pts + step.pts, last_ts.time_base)
    report(last_ts.seconds, "finish")
    for zone in zones:
        zone.handle(zone.detector.finish(end), None, reads)
    worker.flush()
    yield from ready()
    while any(zone.pending for zone in zones):
        worker.flush()  # reads of cues' band means are asked for as segments are merged (see _Polisher)
        yield from ready(wait=0.5, final=True)
    for zone in zones:
        t0 = time.perf_counter()
        cues = zone.merger.flush()
        clock.merge += time.perf_counter() - t0
        yield from zone.named(cues, reads, last=True)
    while any(zone.holding for zone in zones):
        worker.flush()
        reads.collect(0.5)
        for zone in zones:
            yield from zone.named([], reads, last=True)
    report(end.seconds, "done")
    stats = info.stats
    stats.times.decode, stats.times.detect = round(clock.decode, 3), round(clock.detect, 3)
    stats.times.merge = round(clock.merge, 3)
    stats.timestamp_discontinuities, stats.ended_early = source.discontinuities, source.ended_early
    stats.frames = frames
    stats.corrupt_frames = source.corrupt_frames
    stats.samples = sum(zone.detector.samples for zone in zones)
    stats.ocr_calls = stats.frames_read = reads.count
    stats.ocr_confirmed = reads.confirmed
    stats.cues = sum(zone.cues for zone in zones)
    stats.scene_cuts = len(cuts.cuts) if cuts else 0
    stats.static_texts = sum(len(zone.static) for zone in zones)
    stats.static_lines_dropped = sum(zone.suppressed for zone in zones)
    stats.picture_lines_dropped = sum(zone.layout.dropped for zone in zones)
    stats.page_frames = sum(zone.page_frames for zone in zones)
    polishers = [zone.polisher for zone in zones if zone.polisher is not None]
    if polishers:
        stats.ocr_polish_reads = sum(p.reads for p in polishers)
        stats.ocr_polish_kept = sum(p.kept for p in polishers)
    stats.duration_decoded_s = round(end.seconds, 3)


class _StageClock:
    """Seconds spent per stage on the pipeline's thread (``RunStats.times``; OCR is timed on its own thread)."""

    def __init__(self) -> None:
        self.decode = self.detect = self.merge = 0.0

    def decoding(self, frames: Iterator[DecodedFrame]) -> Iterator[DecodedFrame]:
        """``frames``, adding the time spent producing each one to ``decode``."""
        t0 = time.perf_counter()
        for frame in frames:
            self.decode += time.perf_counter() - t0
            yield frame
            t0 = time.perf_counter()
        self.decode += time.perf_counter() - t0


def ocr_crop(box: Box, lines: Sequence[TextLine], scale: float, frame_height: int | None = None) -> Box:
    """The rows of the band to read: those of the text lines the mask found, with a line's height
    of margin, in band coordinates; always the full band width (words the mask missed at either end
    of a line must still be read). A line cut by the band's bottom edge goes on below it (the lower
    line of a two-line subtitle centred where single lines were seen, descenders): then the margin
    below reaches into the frame under the band (up to ``frame_height``). Not above: picture detail
    cut by a bottom band's top edge is common, and reading it would add its text to the subtitle.
    OCR cost grows with the area it is given; the whole band when no line is known."""
    if not lines:
        return Box(0, 0, box.w, box.h)
    bottom = max(ln.y1 for ln in lines)
    limit = box.h
    if frame_height is not None and bottom >= round(box.h * scale) - 1:
        limit = frame_height - box.y
    height = max(ln.height for ln in lines) / scale
    return _rows_crop(box, min(ln.y0 for ln in lines) / scale, bottom / scale, height, limit)


def _rows_crop(box: Box, top: float, bottom: float, margin: float, limit: int) -> Box:
    """The band ``box``'s full width on rows ``top`` to ``bottom`` (band pixels) with ``margin`` above and below, down
    to row ``limit`` at most; the whole band when that is under 16 rows (too few to read)."""
    y0 = max(0, int(top - margin))
    y1 = min(limit, int(bottom + margin + 1))
    if y1 - y0 < 16:
        return Box(0, 0, box.w, box.h)
    return Box(0, y0, box.w, y1 - y0)


def ocr_image(frame: DecodedFrame, box: Box, crop: Box) -> np.ndarray:
    """The BGR image to read, at full resolution (recognisers need the detail)."""
    return frame.bgr(Box(box.x + crop.x, box.y + crop.y, crop.w, crop.h))


def _record(done: _PendingSegment, results: dict[int, OcrResult], box: Box, scale: float) -> SegmentRecord:
    seg, end = done.segment, done.end
    assert end is not None
    reads = [
        Read(
            req.ts.ms,
            req.split_at.ms,
            results.pop(rid).shifted(box.x, box.y),  # in the frame, as the cue's box (see vidocr.merge._emit)
            req.reason is not ReadReason.RECHECK,
            blank_ends=req.reason is ReadReason.UNSEEN,
            left_ms=req.left_at.ms if req.left_at is not None else None,
        )
        for rid, req in done.reads
    ]
    text_box = None
    if seg.lines:
        x0 = min(ln.x0 for ln in seg.lines)
        y0 = min(ln.y0 for ln in seg.lines)
        x1 = max(ln.x1 for ln in seg.lines)
        y1 = max(ln.y1 for ln in seg.lines)
        text_box = Box(box.x + int(x0 / scale), box.y + int(y0 / scale), int((x1 - x0) / scale), int((y1 - y0) / scale))
    return SegmentRecord(seg.start.ms, end.ms, reads, seg.prev_similarity, text_box, seg.lines_held)


def _report(progress: ProgressFn, value: Progress) -> None:
    try:
        progress(value)
    except Exception:  # noqa: BLE001 - a progress callback must never break a run
        log.debug("progress callback failed", exc_info=True)
