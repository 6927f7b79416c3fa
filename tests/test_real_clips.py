"""Real footage from other projects' public test files (skipped when ../shared/data/real is absent)."""

from __future__ import annotations

from pathlib import Path

from support.metrics import evaluate, normalize
from support.synth import read_srt

from vidocr.pipeline import ExtractOptions, extract


def test_zh_anime_reaches_all_three_cues(real_data: Path, rapid_engine: object) -> None:
    truth = read_srt(real_data / "zh_anime_3s.truth.srt")
    cues, _ = extract(real_data / "zh_anime_3s.mp4", ExtractOptions(), engine=rapid_engine)  # type: ignore[arg-type]
    got = list(cues)
    assert [normalize(c.text) for c in got] == [normalize(t.text) for t in truth]
    report = evaluate(truth, got)
    assert report.missed == 0 and report.phantom_cues == 0
    # 24 fps: within one frame, except the first cue, which the truth starts one frame late although
    # its text is already on the first decoded frame (pts 0).
    assert max(report.start_errors_ms[1:] + report.end_errors_ms) <= 42
    assert report.start_errors_ms[0] <= 42


def test_zh_strip_window_against_peer_output(real_data: Path, rapid_engine: object) -> None:
    # A 1120x90 strip that is already the subtitle band; compare a 24 s window with a peer's published cues.
    peer = read_srt(real_data / "zh_strip_586s.peer_7m10s-7m34s.srt")
    cues, info = extract(real_data / "zh_strip_586s.mp4", ExtractOptions(start=430.0, end=454.0), engine=rapid_engine)  # type: ignore[arg-type]
    got = list(cues)
    texts = {normalize(c.text) for c in got}
    found = sum(1 for p in peer[1:] if normalize(p.text) in texts)  # the peer's first cue is cut by its window
    assert found >= len(peer[1:]) - 2, [c.text for c in got]
    assert all(c.start_ms >= 430_000 - 50 for c in got)
