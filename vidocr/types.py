"""Value types shared by every stage: exact timestamps, boxes, OCR results, cues, video info."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field, replace
from fractions import Fraction
from typing import Any


@dataclass(frozen=True, order=True)
class Timestamp:
    """An exact presentation time: ``pts * time_base`` seconds after the video's first frame.

    Kept exact from the decoder to the merger; converted to milliseconds only for cues.
    """

    pts: int
    time_base: Fraction

    @property
    def seconds(self) -> float:
        return float(self.pts * self.time_base)

    @property
    def ms(self) -> int:
        """Milliseconds, rounded half up (exact rational arithmetic, no float drift)."""
        value = self.pts * self.time_base * 1000
        return int(value + Fraction(1, 2)) if value >= 0 else -int(-value + Fraction(1, 2))

    def __str__(self) -> str:
        return f"{self.seconds:.3f}s"


@dataclass(frozen=True)
class Box:
    """Axis-aligned box in pixels: x, y of the top-left corner, width, height."""

    x: int
    y: int
    w: int
    h: int

    def as_list(self) -> list[int]:
        return [self.x, self.y, self.w, self.h]

    def shares_rows(self, other: Box) -> bool:
        """Whether the two boxes share at least half of the shorter one's rows."""
        return min(self.y + self.h, other.y + other.h) - max(self.y, other.y) >= 0.5 * min(self.h, other.h)


class Task(str, enum.Enum):
    """What an engine is asked to do with a subtitle crop."""

    SUBTITLE = "subtitle"
    TEXT = "text"
    TRANSLATE = "translate"
    SPOTTING = "spotting"


@dataclass(frozen=True)
class OcrPart:
    """One of the detector boxes a line was joined from: its text is ``line.text[start:end]``."""

    start: int
    end: int
    box: Box


@dataclass(frozen=True)
class OcrLine:
    """One recognised line of text; ``box`` is relative to the image the engine was given."""

    text: str
    confidence: float
    box: Box | None = None
    #: How much the line's light pixels look like outlined subtitle glyphs rather than print on a page
    #: (:func:`vidocr.layout.glyph_fill`); None when not measured.
    fill: float | None = None
    #: The columns (first, end) of the line's drawn glyphs, in ``box``'s coordinates, when measured.
    ink: tuple[int, int] | None = None
    #: The detector boxes the line was joined from, left to right, when there were several: text in the picture
    #: beside a subtitle on the same row (a sign, a badge) is one of them (see :mod:`vidocr.layout`).
    parts: tuple[OcrPart, ...] = ()
    #: The columns (first, end) where the recogniser aligned the text, in ``box``'s coordinates, when known:
    #: where the text is, whatever picture detail the detector's box took in beside it.
    text_cols: tuple[int, int] | None = None
    #: The recogniser's probability of each character of ``text``, when known (the merger votes per character
    #: between reads that disagree).
    char_conf: tuple[float, ...] | None = None
    #: The column of each character of ``text`` (in the image, as ``box``), where the recogniser aligned it, when
    #: known: where a run of its characters is drawn (a sign glued to a subtitle in one box, see vidocr.layout).
    char_cols: tuple[float, ...] | None = None
    #: The columns (first, end) of a run of subtitle-like glyphs in a line whose other glyphs look like print (a
    #: subtitle glued to print in one box, see :func:`vidocr.layout.glued_run`), in ``box``'s coordinates ...
    glued_cols: tuple[int, int] | None = None
    #: ... and that run read alone, when it was (the layout keeps it when it is centred and the line is not).
    alone: OcrLine | None = None

    def moved(self, dx: int, dy: int) -> OcrLine:
        """The same line with its box, ink, parts and run read alone moved by (dx, dy)."""
        if self.box is None:
            return self
        return replace(
            self,
            box=_moved(self.box, dx, dy),
            ink=(self.ink[0] + dx, self.ink[1] + dx) if self.ink else None,
            text_cols=(self.text_cols[0] + dx, self.text_cols[1] + dx) if self.text_cols else None,
            parts=tuple(replace(p, box=_moved(p.box, dx, dy)) for p in self.parts),
            glued_cols=(self.glued_cols[0] + dx, self.glued_cols[1] + dx) if self.glued_cols else None,
            char_cols=tuple(c + dx for c in self.char_cols) if self.char_cols else None,
            alone=self.alone.moved(dx, dy) if self.alone is not None else None,
        )


def _moved(box: Box, dx: int, dy: int) -> Box:
    return Box(box.x + dx, box.y + dy, box.w, box.h)


@dataclass(frozen=True)
class OcrResult:
    """An engine's answer for one image: lines top to bottom (empty tuple = no text).

    ``translation`` is filled by engines that translate (``Task.TRANSLATE``). ``confirmed``: a re-read
    that found an earlier read's text in its boxes without running detection.
    """

    lines: tuple[OcrLine, ...] = ()
    translation: str | None = None
    raw: str | None = None
    confirmed: bool = False
    #: The read of the same image with only its closed light glyphs kept (:func:`vidocr.layout.glyph_image`),
    #: made when a line looked like print: a subtitle drawn over a page of print, read without the print.
    glyphs_only: OcrResult | None = None

    def shifted(self, dx: int, dy: int) -> OcrResult:
        """The same result with its line boxes moved by (dx, dy)."""
        if not dx and not dy:
            return self
        glyphs = self.glyphs_only.shifted(dx, dy) if self.glyphs_only is not None else None
        return replace(self, lines=tuple(ln.moved(dx, dy) for ln in self.lines), glyphs_only=glyphs)

    @property
    def text(self) -> str:
        return "\n".join(line.text for line in self.lines if line.text)

    @property
    def confidence(self) -> float:
        if not self.lines:
            return 0.0
        total = sum(max(len(line.text), 1) for line in self.lines)
        return sum(line.confidence * max(len(line.text), 1) for line in self.lines) / total


@dataclass(frozen=True)
class Cue:
    """A subtitle cue: start inclusive, end exclusive, in integer milliseconds from the first frame."""

    start_ms: int
    end_ms: int
    text: str
    confidence: float = 1.0
    box: Box | None = None
    translation: str | None = None
    zone: str = "bottom"
    reads: int = 1

    @property
    def lines(self) -> list[str]:
        return self.text.split("\n")

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "start_ms": self.start_ms,
            "end_ms": self.end_ms,
            "text": self.text,
            "lines": self.lines,
            "confidence": round(self.confidence, 4),
            "box": self.box.as_list() if self.box else None,
            "zone": self.zone,
            "reads": self.reads,
        }
        if self.translation is not None:
            out["translation"] = self.translation
        return out


@dataclass(frozen=True)
class ZoneStats:
    """A subtitle zone as a run reports it: its name, band, how it was found, its static text, its kind of mask
    (``colour``), and whether its text is small (masked at twice the resolution: vidocr.textmask.SMALL_TEXT_PX)."""

    name: str
    box: Box
    source: str
    static: tuple[Box, ...] = ()
    colour: bool = False
    small: bool = False

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "box": self.box.as_list(),
            "source": self.source,
            "static": [b.as_list() for b in self.static],
            "colour": self.colour,
            "small_text": self.small,
        }


@dataclass
class StageTimes:
    """Seconds spent per stage (None: the stage has not finished). OCR runs on its own thread, overlapping
    decode and detect; the others run on the pipeline's thread."""

    zones: float | None = None
    decode: float | None = None
    detect: float | None = None
    merge: float | None = None
    ocr: float | None = None

    def as_dict(self) -> dict[str, float]:
        named = (("zones", self.zones), ("decode", self.decode), ("detect", self.detect), ("merge", self.merge),
                 ("ocr", self.ocr))
        return {key: value for key, value in named if value is not None}


@dataclass
class RunStats:
    """What one extraction found out and did, for reports, metrics and the JSON output's ``video.stats``.

    It is filled in by the pipeline in three steps, each complete when it is made: the zones when
    :func:`vidocr.extract` returns; the decoding, reading and merging counts when the last cue has been
    given out; ``ocr_*``/``max_batch`` and ``seconds`` when the cue iterator ends (exhausted, or closed:
    ``seconds`` only). So it is final once the cue iterator is exhausted; a field that is None was not
    reached (a run stopped early). The iterator stays lazy: nothing here is computed ahead of the cues.
    """

    times: StageTimes = field(default_factory=StageTimes)
    #: The first zone's band and how it was found ("user", "auto", "default", "strip").
    band: Box | None = None
    band_source: str | None = None
    zones: tuple[ZoneStats, ...] | None = None
    #: Decoded frames scaled to the stream's picture size (see :class:`vidocr.video.VideoSource`).
    rescaled_frames: int = 0
    #: Times the timestamps restarted or jumped; whether the file ended before its announced end.
    timestamp_discontinuities: int | None = None
    ended_early: bool | None = None
    frames: int | None = None
    corrupt_frames: int | None = None
    #: Band states the change detectors sampled, over every zone.
    samples: int | None = None
    #: Reads asked of the OCR engine (each one frame's band crop): ``frames_read`` is the same count.
    ocr_calls: int | None = None
    frames_read: int | None = None
    #: Re-reads the engine answered without running detection.
    ocr_confirmed: int | None = None
    cues: int | None = None
    scene_cuts: int | None = None
    #: Static texts (logos, watermarks, tickers) suppressed, and the OCR lines dropped inside them.
    static_texts: int | None = None
    static_lines_dropped: int | None = None
    #: OCR lines dropped as text in the picture (signs, pages), not subtitles.
    picture_lines_dropped: int | None = None
    #: Frames whose band showed a page of print (judged by closed glyphs), and reads made again glyphs only.
    page_frames: int | None = None
    ocr_glyph_reads: int | None = None
    #: Runs of subtitle-like glyphs glued to print in one line, read alone (vidocr.layout.glued_run).
    ocr_run_reads: int | None = None
    #: Unsure reads made again on their crop's mean over frames, and how many of those were kept (surer).
    ocr_fused_reads: int | None = None
    ocr_fused_kept: int | None = None
    #: Lines the detector may have boxed in part read again whole, and how many of those were kept.
    ocr_whole_reads: int | None = None
    ocr_whole_kept: int | None = None
    #: Cues read again on the mean of their band over their frames, and how many took that read's text.
    ocr_polish_reads: int | None = None
    ocr_polish_kept: int | None = None
    duration_decoded_s: float | None = None
    ocr_batches: int | None = None
    ocr_rereads: int | None = None
    max_batch: int | None = None
    #: Wall-clock seconds of the run, from the first read to the iterator's end.
    seconds: float | None = None

    def as_dict(self) -> dict[str, Any]:
        """The stats as plain JSON values, in the JSON output's order; fields not reached are left out."""
        out: dict[str, Any] = {}
        times = self.times.as_dict()
        if times:
            out["times_s"] = times
        if self.band is not None:
            out["band"] = self.band.as_list()
        if self.band_source is not None:
            out["band_source"] = self.band_source
        if self.zones is not None:
            out["zones"] = [zone.as_dict() for zone in self.zones]
        if self.rescaled_frames:
            out["rescaled_frames"] = self.rescaled_frames
        for name in _COUNTS:
            value = getattr(self, name)
            if value is not None:
                out[name] = value
        return out


#: RunStats' plain fields, in the order ``as_dict`` gives them.
_COUNTS = (
    "timestamp_discontinuities", "ended_early", "frames", "corrupt_frames", "samples", "ocr_calls", "frames_read",
    "ocr_confirmed", "cues", "scene_cuts", "static_texts", "static_lines_dropped", "picture_lines_dropped",
    "page_frames", "duration_decoded_s", "ocr_batches", "ocr_rereads", "ocr_glyph_reads", "ocr_run_reads",
    "ocr_fused_reads", "ocr_fused_kept", "ocr_whole_reads",
    "ocr_whole_kept", "ocr_polish_reads", "ocr_polish_kept", "max_batch", "seconds",
)


@dataclass(frozen=True)
class VideoInfo:
    """What the probe learnt about a video, and the run's :class:`RunStats` (final once the cue iterator is
    exhausted: see there)."""

    path: str
    width: int
    height: int
    duration_s: float | None
    fps: float | None
    codec: str
    rotation: int = 0
    start_time_s: float = 0.0
    frame_count_estimate: int | None = None
    stats: RunStats = field(default_factory=RunStats, compare=False)

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "width": self.width,
            "height": self.height,
            "duration_s": self.duration_s,
            "fps": self.fps,
            "codec": self.codec,
            "rotation": self.rotation,
            "start_time_s": self.start_time_s,
            "stats": self.stats.as_dict(),
        }
