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


class Task(str, enum.Enum):
    """What an engine is asked to do with a subtitle crop."""

    SUBTITLE = "subtitle"
    TEXT = "text"
    TRANSLATE = "translate"
    SPOTTING = "spotting"


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

    def shifted(self, dx: int, dy: int) -> OcrResult:
        """The same result with its line boxes moved by (dx, dy)."""
        if not dx and not dy:
            return self
        lines = tuple(
            replace(
                ln,
                box=Box(ln.box.x + dx, ln.box.y + dy, ln.box.w, ln.box.h),
                ink=(ln.ink[0] + dx, ln.ink[1] + dx) if ln.ink else None,
            )
            if ln.box
            else ln
            for ln in self.lines
        )
        return replace(self, lines=lines)

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
class VideoInfo:
    """What the probe learnt about a video, plus counters filled in while it is processed."""

    path: str
    width: int
    height: int
    duration_s: float | None
    fps: float | None
    codec: str
    rotation: int = 0
    start_time_s: float = 0.0
    frame_count_estimate: int | None = None
    stats: dict[str, Any] = field(default_factory=dict, compare=False)

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
            "stats": dict(self.stats),
        }
