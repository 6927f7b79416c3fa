"""Accuracy of ``vidocr.extract`` on the samples (and the real clip, when present) against their truth SRTs.

    python bench/accuracy.py [--engine rapidocr] [--samples samples] [--real ../shared/data/real] [--json] [--misses]

ICPR is the ICPR 2022 MSR subtask-1 error (lower is better); "timed" counts truth cues read exactly whose start and
end are each within one frame (timed-exact); boundaries are |start| and |end| errors of matched cues,
in ms and in frames at the video's frame rate. ``--misses`` lists, per file, each truth cue that is not
timed-exact beside the cues that came out over it, and the phantom cues, in frames.

``--zone-phase F`` (0 <= F < 1) takes the zone finder's samples F of their spacing later than usual (files
decoded through for samples; files sampled at keyframes are not moved): how much the figures owe to which frames
the zone finder happened to sample. Session 12, libass corpus: dev 101 -> 96, check 109 -> 104 timed-exact at 0.5.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from vidocr.errors import VidocrError
from vidocr.pipeline import ExtractOptions, extract

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))  # support/: test helpers, kept out of the package

from support.metrics import Report, combine, evaluate, normalize  # noqa: E402
from support.synth import read_srt  # noqa: E402

VIDEO_SUFFIXES = (".mp4", ".mkv", ".ts", ".mov", ".webm")
REAL_CLIPS = {"zh_anime_3s.mp4": "zh_anime_3s.truth.srt"}


def find_cases(samples: Path, real: Path | None) -> list[tuple[Path, Path]]:
    """(video, truth SRT) pairs: every ``samples/<name>.srt`` with a video beside it, then the real clips."""
    cases = []
    for srt in sorted(samples.glob("*.srt")):
        videos = [srt.with_suffix(s) for s in VIDEO_SUFFIXES if srt.with_suffix(s).exists()]
        if videos:
            cases.append((videos[0], srt))
    if real is not None and real.is_dir():
        cases += [(real / v, real / t) for v, t in REAL_CLIPS.items() if (real / v).exists() and (real / t).exists()]
    return cases


def run_case(video: Path, srt: Path, engine: str) -> dict[str, Any]:
    started = time.perf_counter()
    try:
        cues_iter, info = extract(video, ExtractOptions(engine=engine))
        hyp = list(cues_iter)
    except VidocrError as exc:
        return {"file": video.name, "error": str(exc)}
    report = evaluate(read_srt(srt), hyp, 1000 / info.fps if info.fps else None)
    return {
        "file": video.name,
        "seconds": round(time.perf_counter() - started, 2),
        "fps": info.fps,
        "report": report,
        "cues": [c.to_dict() for c in hyp],
        "truth": [{"start_ms": t.start_ms, "end_ms": t.end_ms, "text": t.text} for t in read_srt(srt)],
    }


def _fmt(value: float | None, spec: str = ".0f") -> str:
    return "-" if value is None else format(value, spec)


def _median_p90(values: list[float]) -> tuple[float | None, float | None]:
    ordered = sorted(values)  # nearest-rank p90, as support.metrics.Report does
    if not ordered:
        return None, None
    return statistics.median(ordered), ordered[math.ceil(0.9 * len(ordered)) - 1]


def _frame_errors(results: list[dict[str, Any]]) -> list[float]:
    """Boundary errors in frames of each file's own rate, pooled."""
    return [
        ms * r["fps"] / 1000 for r in results if "report" in r and r["fps"] for ms in r["report"].boundary_errors_ms
    ]


HEADER = (
    "file", "truth", "hyp", "ICPR", "exact", "strict", "timed", "phantom", "missed",
    "med_ms", "p90_ms", "med_fr", "p90_fr", "s",
)
WIDTHS = (22, 5, 4, 6, 7, 7, 7, 7, 6, 7, 6, 6, 6, 7)


def _line(cells: tuple[str, ...]) -> str:
    return " ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(cells, WIDTHS, strict=True)))


def _row(name: str, r: Report, frame_errors: list[float], seconds: float) -> str:
    med_fr, p90_fr = _median_p90(frame_errors)
    counts = (
        name, str(r.truth_cues), str(r.hyp_cues), f"{r.icpr:.3f}", f"{r.exact_lines}/{r.truth_cues}",
        f"{r.exact_strings}/{r.truth_cues}", f"{r.timed_exact}/{r.truth_cues}",
    )
    misses = (str(r.phantom_cues), str(r.missed))
    bounds = (_fmt(r.boundary_median_ms), _fmt(r.boundary_p90_ms), _fmt(med_fr, ".1f"), _fmt(p90_fr, ".1f"))
    return _line(counts + misses + bounds + (f"{seconds:.1f}",))


def print_table(results: list[dict[str, Any]], total: Report) -> None:
    print(_line(HEADER))
    for res in results:
        if "error" in res:
            print(f"{res['file']:22} ERROR {res['error']}")
        else:
            print(_row(res["file"], res["report"], _frame_errors([res]), res["seconds"]))
    print(_row("TOTAL", total, _frame_errors(results), sum(r.get("seconds", 0.0) for r in results)))


def _span(cue: dict[str, Any], fps: float) -> str:
    return f"{cue['start_ms'] * fps / 1000:7.1f}-{cue['end_ms'] * fps / 1000:7.1f} {cue['text']!r}"


def _over(a: dict[str, Any], b: dict[str, Any]) -> bool:
    return bool(min(a["end_ms"], b["end_ms"]) > max(a["start_ms"], b["start_ms"]))


def print_misses(results: list[dict[str, Any]]) -> None:
    """Each truth cue that is not timed-exact, with the cues over it; and the cues over no truth cue."""
    for res in results:
        if "report" not in res or not res["fps"]:
            continue
        frame_ms, fps = 1000 / res["fps"], res["fps"]

        lines = []
        for t in res["truth"]:
            near = [h for h in res["cues"] if _over(h, t)]
            timed = any(
                normalize(h["text"]) == normalize(t["text"])
                and max(abs(h["start_ms"] - t["start_ms"]), abs(h["end_ms"] - t["end_ms"])) <= frame_ms + 1
                for h in near
            )
            if not timed:
                lines.append(f"  truth {_span(t, fps)}")
                lines += [f"    got {_span(h, fps)}" for h in near] or ["    got nothing"]
        lines += [f"  phantom {_span(h, fps)}" for h in res["cues"] if not any(_over(h, t) for t in res["truth"])]
        if lines:
            print(f"{res['file']} (frames at {fps:g} fps)")
            print("\n".join(lines))


def shift_zone_samples(phase: float) -> None:
    """Make the zone finder sample every n-th frame from frame ``round(phase * n)`` instead of the first
    (instrumentation of VideoSource's private sampling helpers, for --zone-phase)."""
    from vidocr.video import VideoSource

    if not 0.0 <= phase < 1.0:
        raise SystemExit("--zone-phase must be at least 0 and under 1")
    stamps, decoded = VideoSource._nth_stamps, VideoSource._nth_decoded

    def nth_stamps(self: Any, step: int, start: Any, end: Any, origin: int) -> tuple[list[int], list[int]] | None:
        every = stamps(self, 1, start, end, origin)
        return None if every is None else (every[0][round(phase * step) % step :: step], every[1])

    def nth_decoded(self: Any, step: int, start: Any, end: Any) -> Any:
        first = round(phase * step) % step
        return (f for f in decoded(self, 1, start, end) if f.index % step == first)

    VideoSource._nth_stamps = nth_stamps  # type: ignore[method-assign]
    VideoSource._nth_decoded = nth_decoded  # type: ignore[method-assign]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--engine", default="rapidocr")
    parser.add_argument("--samples", type=Path, default=Path("samples"))
    parser.add_argument("--real", type=Path, default=Path("../shared/data/real"))
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    parser.add_argument("--misses", action="store_true", help="also list the cues that are not timed-exact")
    parser.add_argument("--zone-phase", type=float, default=0.0,
                        help="take the zone finder's samples this share of their spacing later (0 <= F < 1)")
    args = parser.parse_args(argv)
    if args.zone_phase:
        shift_zone_samples(args.zone_phase)
    cases = find_cases(args.samples, args.real)
    if not cases:
        print(f"no <name>.srt with a video beside it in {args.samples}", file=sys.stderr)
        return 2
    results = [run_case(video, srt, args.engine) for video, srt in cases]
    total = combine([r["report"] for r in results if "report" in r])
    if args.json:
        med_fr, p90_fr = _median_p90(_frame_errors(results))
        for r in results:
            if "report" in r:
                r["boundary_frames"] = _median_p90(_frame_errors([r]))
                r["report"] = r["report"].to_dict()
        summary = {**total.to_dict(), "boundary_frames": [med_fr, p90_fr]}
        print(json.dumps({"engine": args.engine, "files": results, "total": summary}, ensure_ascii=False))
    else:
        print_table(results, total)
    if args.misses:
        print_misses(results)
    return 1 if any("error" in r for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
