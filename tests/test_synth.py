from __future__ import annotations

import dataclasses
from fractions import Fraction
from pathlib import Path
from typing import Any

import av
import numpy as np
import pytest
from support.synth import SynthCue, SynthSpec, TruthCue, frame_times, read_srt, render_video, write_srt

SMALL = SynthSpec(width=320, height=180, font_size=26, cut_every=1.0)


def small(**changes: Any) -> SynthSpec:
    return dataclasses.replace(SMALL, **changes)


@dataclasses.dataclass
class Decoded:
    times: list[Fraction]  # relative to the first frame
    frames: list[np.ndarray]  # RGB
    start: Fraction | None  # the stream's start time in seconds
    rotations: list[int]


def decode(path: Path) -> Decoded:
    with av.open(str(path)) as container:
        stream = container.streams.video[0]
        frames = list(container.decode(stream))
        tb, start_pts = stream.time_base, stream.start_time
    times = []
    for f in frames:
        assert f.pts is not None and f.time_base is not None
        times.append(f.pts * f.time_base)
    start = start_pts * tb if start_pts is not None and tb is not None else None
    rgb = [f.to_ndarray(format="rgb24") for f in frames]
    return Decoded([t - times[0] for t in times], rgb, start, [f.rotation for f in frames])


def text_pixels(with_text: np.ndarray, without: np.ndarray) -> float:
    """Fraction of pixels that the subtitle changed strongly (the same seed renders the same background)."""
    return float((np.abs(with_text.astype(int) - without.astype(int)).max(axis=2) > 80).mean())


def white_rows(rgb: np.ndarray) -> np.ndarray:
    """Indices of rows holding subtitle-white pixels."""
    return np.nonzero(np.any(np.all(rgb > 235, axis=2), axis=1))[0]


def shown_frames(times: list[Fraction], cue: TruthCue) -> list[bool]:
    return [cue.start_ms <= round(t * 1000) < cue.end_ms for t in times]


def test_cfr_truth_is_exact_and_matches_decoded_frames(tmp_path: Path) -> None:
    cues = (SynthCue(0.5, 1.23, "你好"), SynthCue(1.5, 9.0, "end"), SynthCue(0.01, 0.02, "on no frame"))
    spec = small(fps=25, duration=2.0, cues=cues, background="flat")
    truth = render_video(spec, tmp_path / "a.mp4")
    # 25 fps: the first frame at or after 0.5 s is 0.52 s; the last before 1.23 s is 1.20 s, which ends at 1.24 s.
    assert truth == [TruthCue(520, 1240, "你好"), TruthCue(1520, 2000, "end")]
    video = decode(tmp_path / "a.mp4")
    assert video.times == [Fraction(i, 25) for i in range(50)] == frame_times(spec)[:-1]
    assert video.start == 0


@pytest.mark.parametrize("background", ["photo", "flat", "dark"])
def test_subtitle_pixels_present_exactly_on_cue_frames(tmp_path: Path, background: str) -> None:
    cue = SynthCue(0.3, 1.1, "字幕在这里", position="bottom")
    spec = small(fps=25, duration=1.6, cues=(cue,), background=background, seed=5)
    (truth,) = render_video(spec, tmp_path / "with.mp4")
    render_video(dataclasses.replace(spec, cues=()), tmp_path / "without.mp4")
    video = decode(tmp_path / "with.mp4")
    times, with_text = video.times, video.frames
    without = decode(tmp_path / "without.mp4").frames
    band, top = slice(120, 180), slice(0, 100)
    for t, shown, a, b in zip(times, shown_frames(times, truth), with_text, without, strict=True):
        assert text_pixels(a[top], b[top]) < 0.002, t
        if shown:
            assert text_pixels(a[band], b[band]) > 0.03, t
        else:
            assert text_pixels(a[band], b[band]) < 0.002, t


def test_vfr_mpegts_keeps_exact_pts_and_start_offset(tmp_path: Path) -> None:
    cue = SynthCue(0.7, 1.9, "VFR")
    spec = small(vfr=True, duration=3.0, container="ts", start_offset=1.4, cues=(cue,), seed=2)
    (truth,) = render_video(spec, tmp_path / "v.ts")
    video = decode(tmp_path / "v.ts")
    assert video.start == Fraction(14, 10)
    times = video.times
    assert times == frame_times(spec)[:-1]
    steps = {b - a for a, b in zip(times, times[1:], strict=False)}
    assert {Fraction(1, 30), Fraction(1, 24), Fraction(1, 15)} <= steps
    assert steps & {Fraction(2, 30), Fraction(2, 24), Fraction(2, 15)}, "expected a dropped-frame gap"
    # Truth recomputed from the decoded times alone.
    shown = [i for i, t in enumerate(times) if Fraction(7, 10) <= t < Fraction(19, 10)]
    assert (truth.start_ms, truth.end_ms) == (round(times[shown[0]] * 1000), round(times[shown[-1] + 1] * 1000))


def test_mkv_ntsc_rate_is_stored_in_milliseconds(tmp_path: Path) -> None:
    spec = small(fps=Fraction(30000, 1001), duration=1.0, container="mkv", cues=(SynthCue(0.1, 0.5, "a"),))
    (truth,) = render_video(spec, tmp_path / "n.mkv")
    times = decode(tmp_path / "n.mkv").times
    assert times == frame_times(spec)[:-1]
    assert times[:4] == [Fraction(0), Fraction(33, 1000), Fraction(67, 1000), Fraction(1, 10)]
    # Frame 15 is at 500.5 ms, stored as 500 ms: not before 0.5 s, so the cue ends there.
    assert truth == TruthCue(100, 500, "a")


def test_rotation_metadata_and_upright_display(tmp_path: Path) -> None:
    cue = SynthCue(0.0, 1.0, "竖屏字幕", position="middle-low")
    spec = SynthSpec(width=180, height=320, font_size=24, duration=0.4, cues=(cue,), background="flat", rotation=-90)
    render_video(spec, tmp_path / "r.mp4")
    video = decode(tmp_path / "r.mp4")
    assert video.rotations[0] == -90 and video.frames[0].shape == (180, 320, 3)  # stored landscape
    display = np.rot90(video.frames[0], k=video.rotations[0] // 90)
    assert display.shape == (320, 180, 3)
    rows = white_rows(display)
    assert 0.6 * 320 < rows.mean() < 0.8 * 320  # the caption sits at ~70% of the display height


def test_letterbox_subtitle_sits_in_the_bottom_bar(tmp_path: Path) -> None:
    spec = small(font_size=16, duration=0.2, letterbox=True, cues=(SynthCue(0, 1, "bar"),))
    render_video(spec, tmp_path / "l.mp4")
    frames = decode(tmp_path / "l.mp4").frames
    rows = white_rows(frames[0])
    assert rows.min() > 180 - (180 - 136) // 2 and rows.max() < 180
    assert frames[0][:15].max() < 24  # the top bar stays black


def test_fade_ramps_alpha_but_keeps_truth(tmp_path: Path) -> None:
    cue = SynthCue(0.2, 1.0, "渐变")
    spec = small(duration=1.2, cues=(cue,), fade_frames=3, background="flat")
    plain = render_video(dataclasses.replace(spec, fade_frames=0), tmp_path / "p.mp4")
    assert render_video(spec, tmp_path / "f.mp4") == plain
    faded, unfaded = decode(tmp_path / "f.mp4"), decode(tmp_path / "p.mp4")
    times, frames, plain_frames = faded.times, faded.frames, unfaded.frames
    first = shown_frames(times, plain[0]).index(True)
    peak = [float(np.abs(frames[i].astype(int) - plain_frames[first - 1]).mean()) for i in range(first, first + 5)]
    assert peak[0] < peak[1] < peak[2] < peak[3] and peak[3] == pytest.approx(peak[4], rel=0.15)


def test_rejects_missing_glyphs_and_text_too_wide(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="glyph"):
        render_video(small(duration=0.2, cues=(SynthCue(0, 1, "한국어"),)), tmp_path / "k.mp4")
    with pytest.raises(ValueError, match="wider"):
        render_video(small(duration=0.2, cues=(SynthCue(0, 1, "x" * 80),)), tmp_path / "w.mp4")


def test_srt_round_trip(tmp_path: Path) -> None:
    cues = [TruthCue(0, 1234, "第一行\nsecond line"), TruthCue(3_600_001, 3_600_500, "later, it's fine")]
    write_srt(cues, tmp_path / "a.srt")
    text = (tmp_path / "a.srt").read_text(encoding="utf-8")
    assert "1\n00:00:00,000 --> 00:00:01,234\n第一行\nsecond line\n" in text
    assert "01:00:00,001 --> 01:00:00,500" in text
    assert read_srt(tmp_path / "a.srt") == cues


def test_the_same_spec_renders_the_same_file_every_time(tmp_path: Path) -> None:
    """Test clips and the libass corpus are the same clip on every render (support.synth.X264_REPEATABLE): with
    x264's AVX-512 code, encodes of the same frames differed (this spec: 2 different files of 3 renders), and a
    test's figures moved from run to run and machine to machine."""
    spec = SynthSpec(width=854, height=480, font_size=40, cues=(SynthCue(1.0, 4.0, "Same every time"),))
    files = [tmp_path / f"{i}.mp4" for i in range(3)]
    for path in files:
        render_video(spec, path)
    assert len({path.read_bytes() for path in files}) == 1
