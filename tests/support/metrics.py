"""Subtitle accuracy: CER, temporal IoU, the ICPR 2022 MSR subtask-1 score, and a fuller report.

Cues are anything with ``start_ms``, ``end_ms`` and ``text`` (``vidocr.types.Cue``, ``support.synth.TruthCue``).
Texts are compared after ``normalize``, so punctuation, spacing and full-width forms do not count as errors.
"""

from __future__ import annotations

import math
import statistics
import unicodedata
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Protocol

MIN_IOU = 0.5  # a hypothesis cue must overlap a truth cue at least this much (tIoU) to be its match


class CueLike(Protocol):
    @property
    def start_ms(self) -> int: ...
    @property
    def end_ms(self) -> int: ...
    @property
    def text(self) -> str: ...


def normalize(text: str) -> str:
    """NFKC, lowercase, and drop whitespace, punctuation and symbols (Unicode categories Z*, P*, S*)."""
    text = unicodedata.normalize("NFKC", text).lower()
    return "".join(c for c in text if not c.isspace() and unicodedata.category(c)[0] not in "PSZ")


def _strict(text: str) -> str:
    """NFKC with each line's outer whitespace trimmed: what a viewer would see as the same subtitle."""
    return "\n".join(line.strip() for line in unicodedata.normalize("NFKC", text).strip().splitlines())


def edit_distance(a: str, b: str) -> int:
    """Levenshtein distance over code points."""
    if len(a) < len(b):
        a, b = b, a
    row = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        prev, row[0] = row[0], i
        for j, cb in enumerate(b, 1):
            prev, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, prev + (ca != cb))
    return row[-1]


def cer(ref: str, hyp: str, normalized: bool = False) -> float:
    """Character error rate of ``hyp`` against ``ref`` after ``normalize`` (skipped if ``normalized``).

    0.0 when both are empty; 1.0 when only the reference is empty. Not capped: insertions can push it above 1.
    """
    if not normalized:
        ref, hyp = normalize(ref), normalize(hyp)
    if not ref:
        return 0.0 if not hyp else 1.0
    return edit_distance(ref, hyp) / len(ref)


def t_iou(a: CueLike, b: CueLike) -> float:
    """Temporal intersection over union of two cues' [start, end) spans."""
    inter = min(a.end_ms, b.end_ms) - max(a.start_ms, b.start_ms)
    union = max(a.end_ms, b.end_ms) - min(a.start_ms, b.start_ms)
    return max(inter, 0) / union if union > 0 else 0.0


def _best_matches(truth: Sequence[CueLike], hyp: Sequence[CueLike]) -> list[int | None]:
    """For each truth cue, the index of the hypothesis cue of highest tIoU (first on ties), if it reaches MIN_IOU."""
    out: list[int | None] = []
    for t in truth:
        ious = [t_iou(t, h) for h in hyp]
        best = max(range(len(hyp)), key=ious.__getitem__, default=None)
        out.append(best if best is not None and ious[best] >= MIN_IOU else None)
    return out


def _extra_matches(truth: Sequence[CueLike], hyp: Sequence[CueLike], best: Sequence[int | None]) -> int:
    """Hypothesis cues that overlap some truth cue with tIoU >= MIN_IOU but are no truth cue's best match."""
    chosen = set(best)
    return sum(1 for i, h in enumerate(hyp) if i not in chosen and any(t_iou(t, h) >= MIN_IOU for t in truth))


def icpr_score(truth: Sequence[CueLike], hyp: Sequence[CueLike]) -> float:
    """ICPR 2022 MSR subtask-1 error (0 is perfect, 1 the worst).

    Each truth cue scores the CER (capped at 1) against its best-tIoU hypothesis cue, or 1 without a match; each
    extra hypothesis cue (tIoU >= 0.5 with a truth cue but nobody's best match) scores 1; the mean is taken over
    truth cues plus extras. 0.0 when there is no truth cue.
    """
    best = _best_matches(truth, hyp)
    scores = [1.0 if m is None else min(1.0, cer(t.text, hyp[m].text)) for t, m in zip(truth, best, strict=True)]
    scores += [1.0] * _extra_matches(truth, hyp, best)
    return sum(scores) / len(scores) if scores else 0.0


@dataclass
class Report:
    """Accuracy of one hypothesis against one truth (or several, see ``combine``)."""

    truth_cues: int
    hyp_cues: int
    icpr: float  # lower is better
    extra_matches: int  # hypothesis cues counted as errors by ICPR besides the truth cues
    exact_lines: int  # truth cues whose match has the same normalised text
    phantom_cues: int  # hypothesis cues overlapping no truth cue at all
    missed: int  # truth cues without a match
    start_errors_ms: list[int] = field(default_factory=list)  # |start difference| per matched pair
    end_errors_ms: list[int] = field(default_factory=list)
    #: truth cues whose match is the same string, spaces, punctuation and line breaks included (after NFKC)
    exact_strings: int = 0
    #: truth cues whose match has the same normalised text and starts and ends within one frame of it
    #: (counted when ``evaluate`` is given the frame duration)
    timed_exact: int = 0

    @property
    def exact_line_rate(self) -> float:
        return self.exact_lines / self.truth_cues if self.truth_cues else 1.0

    @property
    def boundary_errors_ms(self) -> list[int]:
        return self.start_errors_ms + self.end_errors_ms

    @property
    def boundary_median_ms(self) -> float | None:
        errors = self.boundary_errors_ms
        return float(statistics.median(errors)) if errors else None

    @property
    def boundary_p90_ms(self) -> float | None:
        errors = sorted(self.boundary_errors_ms)  # nearest-rank percentile: an actual observed error
        return float(errors[math.ceil(0.9 * len(errors)) - 1]) if errors else None

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        for name in ("exact_line_rate", "boundary_median_ms", "boundary_p90_ms"):
            out[name] = getattr(self, name)
        return out


def evaluate(truth: Sequence[CueLike], hyp: Sequence[CueLike], frame_ms: float | None = None) -> Report:
    """Score ``hyp`` against ``truth``: ICPR error, exact lines, phantom and missed cues, boundary errors, and
    with ``frame_ms`` (one frame's duration) the cues that are exact and timed within one frame."""
    best = _best_matches(truth, hyp)
    pairs = [(t, hyp[m]) for t, m in zip(truth, best, strict=True) if m is not None]
    phantoms = [h for h in hyp if not any(min(h.end_ms, t.end_ms) > max(h.start_ms, t.start_ms) for t in truth)]
    return Report(
        truth_cues=len(truth),
        hyp_cues=len(hyp),
        icpr=icpr_score(truth, hyp),
        extra_matches=_extra_matches(truth, hyp, best),
        exact_lines=sum(1 for t, h in pairs if normalize(t.text) == normalize(h.text)),
        phantom_cues=len(phantoms),
        missed=len(truth) - len(pairs),
        exact_strings=sum(1 for t, h in pairs if _strict(t.text) == _strict(h.text)),
        timed_exact=0 if frame_ms is None else sum(
            1
            for t, h in pairs
            if normalize(t.text) == normalize(h.text)
            and max(abs(h.start_ms - t.start_ms), abs(h.end_ms - t.end_ms)) <= frame_ms + 1
        ),
        start_errors_ms=[abs(h.start_ms - t.start_ms) for t, h in pairs],
        end_errors_ms=[abs(h.end_ms - t.end_ms) for t, h in pairs],
    )


def combine(reports: Sequence[Report]) -> Report:
    """Pool several files' reports: counts add up, ICPR is the mean over all files' scored items."""
    weights = [r.truth_cues + r.extra_matches for r in reports]
    total = sum(weights)
    return Report(
        truth_cues=sum(r.truth_cues for r in reports),
        hyp_cues=sum(r.hyp_cues for r in reports),
        icpr=sum(r.icpr * w for r, w in zip(reports, weights, strict=True)) / total if total else 0.0,
        extra_matches=sum(r.extra_matches for r in reports),
        exact_lines=sum(r.exact_lines for r in reports),
        phantom_cues=sum(r.phantom_cues for r in reports),
        missed=sum(r.missed for r in reports),
        exact_strings=sum(r.exact_strings for r in reports),
        timed_exact=sum(r.timed_exact for r in reports),
        start_errors_ms=[e for r in reports for e in r.start_errors_ms],
        end_errors_ms=[e for r in reports for e in r.end_errors_ms],
    )
