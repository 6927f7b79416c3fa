"""End-to-end: real decoding, real RapidOCR, samples and videos generated here with exact cue times."""

from __future__ import annotations

import statistics
from pathlib import Path

import numpy as np
import pytest
from support.metrics import evaluate, normalize
from support.synth import SynthCue, SynthSpec, TruthCue, read_srt, render_video

from vidocr.detect import DetectOptions
from vidocr.pipeline import ExtractOptions, extract
from vidocr.types import Cue

SAMPLE_NAMES = ["zh", "en", "bilingual", "short_cue", "repeat_gap", "vfr_offset", "demo"]


def run(path: Path, engine: object, **kw: object) -> tuple[list[Cue], dict]:
    cues, info = extract(path, ExtractOptions(**kw), engine=engine)  # type: ignore[arg-type]
    out = list(cues)
    return out, info.stats.as_dict()


def frame_ms(path: Path) -> float:
    import av

    with av.open(str(path)) as c:
        rate = c.streams.video[0].average_rate
    return 1000.0 / float(rate)


def video_of(samples: Path, name: str) -> Path:
    return next(p for p in samples.glob(f"{name}.*") if p.suffix != ".srt")


@pytest.mark.parametrize("name", SAMPLE_NAMES)
def test_samples_match_truth(samples: Path, rapid_engine: object, name: str) -> None:
    video = video_of(samples, name)
    truth = read_srt(samples / f"{name}.srt")
    cues, stats = run(video, rapid_engine)
    report = evaluate(truth, cues)
    # Every truth cue found, with the exact text, boundaries within one frame, nothing invented.
    assert report.missed == 0, [c.text for c in cues]
    assert report.phantom_cues == 0
    assert report.exact_lines == len(truth), [(c.text, t.text) for c, t in zip(cues, truth, strict=False)]
    assert len(cues) == len(truth)
    one_frame = frame_ms(video) + 1
    assert max(report.start_errors_ms + report.end_errors_ms) <= one_frame
    assert report.icpr <= 0.03
    # Only changed bands are read: a handful of OCR calls per cue, not one per frame.
    assert stats["ocr_calls"] <= 4 * len(truth) + 2
    assert stats["frames"] > 10 * stats["ocr_calls"]


def test_line_breaks_and_bilingual_lines_are_kept(samples: Path, rapid_engine: object) -> None:
    cues, _ = run(video_of(samples, "bilingual"), rapid_engine)
    truth = read_srt(samples / "bilingual.srt")
    assert all("\n" in c.text for c in cues)
    assert [c.text.count("\n") for c in cues] == [t.text.count("\n") for t in truth]


def test_vfr_ts_with_start_offset_is_relative_to_first_frame(samples: Path, rapid_engine: object) -> None:
    video = samples / "vfr_offset.ts"
    cues, info = extract(video, ExtractOptions(), engine=rapid_engine)  # type: ignore[arg-type]
    got = list(cues)
    assert info.start_time_s > 1.0  # the stream itself starts late ...
    truth = read_srt(samples / "vfr_offset.srt")
    assert [(c.start_ms, c.end_ms) for c in got] == [(t.start_ms, t.end_ms) for t in truth]  # ... cues do not


def _spec(tmp_path: Path, name: str, **kw: object) -> tuple[Path, list[TruthCue]]:
    spec = SynthSpec(**{"width": 854, "height": 480, "duration": 6.0, **kw})  # type: ignore[arg-type]
    path = tmp_path / name
    return path, render_video(spec, path)


def test_empty_band_is_never_read_and_invents_nothing(tmp_path: Path, rapid_engine: object) -> None:
    path, _ = _spec(tmp_path, "plain.mp4", cues=(), background="dark")
    cues, stats = run(path, rapid_engine)
    assert cues == []
    assert stats["ocr_calls"] == 0
    path, _ = _spec(tmp_path, "photo.mp4", cues=(), background="photo", seed=3)
    cues, stats = run(path, rapid_engine)
    assert cues == []


def test_boundaries_are_exact_whatever_the_sampling_rate(tmp_path: Path, rapid_engine: object) -> None:
    cues = (SynthCue(0.52, 1.96, "第一句字幕"), SynthCue(2.4, 4.12, "Second subtitle"), SynthCue(4.6, 5.5, "最后"))
    path, truth = _spec(tmp_path, "rate.mp4", cues=cues, fps=30)
    for sample_fps in (None, 5.0):
        got, _ = run(path, rapid_engine, detect=DetectOptions(sample_fps=sample_fps))
        assert [normalize(c.text) for c in got] == [normalize(t.text) for t in truth]
        assert [(c.start_ms, c.end_ms) for c in got] == [(t.start_ms, t.end_ms) for t in truth], sample_fps


def test_subtitle_held_across_scene_cuts_is_one_cue(tmp_path: Path, rapid_engine: object) -> None:
    path, truth = _spec(tmp_path, "cuts.mp4", cues=(SynthCue(0.4, 5.6, "一句话跨过好几个镜头"),), cut_every=1.0)
    got, stats = run(path, rapid_engine)
    assert stats["scene_cuts"] >= 3
    assert [(c.start_ms, c.end_ms, normalize(c.text)) for c in got] == [
        (truth[0].start_ms, truth[0].end_ms, normalize(truth[0].text))
    ]
    assert got[0].reads >= 2  # re-read after cuts, voted into one cue
    # Those re-reads only confirm the text: recognised from the first read's boxes, without detection.
    assert 1 <= stats["ocr_confirmed"] <= stats["ocr_calls"] - 1


def test_start_end_window_keeps_the_video_clock(tmp_path: Path, rapid_engine: object) -> None:
    cues = (SynthCue(0.5, 1.5, "前面的"), SynthCue(2.5, 3.5, "中间的"), SynthCue(4.5, 5.5, "后面的"))
    path, truth = _spec(tmp_path, "window.mp4", cues=cues)
    got, _ = run(path, rapid_engine, start=2.0, end=4.0)
    assert [(c.start_ms, c.end_ms, c.text) for c in got] == [(truth[1].start_ms, truth[1].end_ms, "中间的")]


def test_fades_still_give_one_cue_per_line(tmp_path: Path, rapid_engine: object) -> None:
    cues = (SynthCue(0.5, 2.5, "淡入淡出的字幕"), SynthCue(3.0, 5.0, "Fading text here"))
    path, truth = _spec(tmp_path, "fade.mp4", cues=cues, fade_frames=4)
    got, _ = run(path, rapid_engine)
    assert [normalize(c.text) for c in got] == [normalize(t.text) for t in truth]
    errors = [abs(c.start_ms - t.start_ms) for c, t in zip(got, truth, strict=True)]
    errors += [abs(c.end_ms - t.end_ms) for c, t in zip(got, truth, strict=True)]
    assert statistics.median(errors) <= 4 * 40  # inside the fade ramps


def test_parallel_ocr_threads_give_the_same_cues(samples: Path) -> None:
    from vidocr.engines import EngineOptions

    video = video_of(samples, "short_cue")
    cues, info = extract(video, ExtractOptions(engine_options=EngineOptions(workers=2)))
    got = list(cues)
    truth = read_srt(samples / "short_cue.srt")
    assert [(c.start_ms, c.end_ms) for c in got] == [(t.start_ms, t.end_ms) for t in truth]
    assert (info.stats.ocr_calls or 0) >= len(truth)


def test_text_growing_in_place_is_read_again(tmp_path: Path, rapid_engine: object) -> None:
    """Typewriter / roll-up captions: the words already shown stay put and new ones appear after them.

    The new segment shares most of the old one's pixels, so its read starts as a cheap re-read of the old
    text's boxes; those boxes still read the old text, so the new text outside them must force a full read.
    """
    pad = "\u3000"  # a CJK-wide space: both lines have the same width, so the common words stay in place
    cues = (
        SynthCue(0.4, 2.4, "你听我说" + pad * 4),
        SynthCue(2.4, 4.4, "你听我说完这句" + pad),
        SynthCue(4.4, 5.6, "你听我说完这句话"),
    )
    path, truth = _spec(tmp_path, "grow.mp4", cues=cues, background="dark", cut_every=None)
    got, _ = run(path, rapid_engine)
    assert [(c.start_ms, c.end_ms, normalize(c.text)) for c in got] == [
        (t.start_ms, t.end_ms, normalize(t.text)) for t in truth
    ]


def test_subtitle_stays_while_picture_detail_touches_it(tmp_path: Path, rapid_engine: object) -> None:
    """In this scene the second subtitle ends up between two dark shapes: for its last ~0.4 s the light picture
    edges along them join its glyphs into shapes that are no text line, but the glyphs are all still in place,
    so the cue must not end early."""
    cues = (SynthCue(0.4, 2.0, "他来了"), SynthCue(2.0, 3.6, "他们来了"))
    path, truth = _spec(tmp_path, "touch.mp4", cues=cues, background="photo", seed=5, duration=4.0)
    got, _ = run(path, rapid_engine)
    assert [(c.start_ms, c.end_ms, normalize(c.text)) for c in got] == [
        (t.start_ms, t.end_ms, normalize(t.text)) for t in truth
    ]


def test_coloured_subtitles_are_found_and_white_ones_keep_luma_masks(tmp_path: Path, rapid_engine: object) -> None:
    # Red, blue and green glyphs have the luma of a mid grey: luma masks barely see them, and the band
    # finder switches this video to colour masks. Over the same picture, white subtitles keep luma masks
    # (saturated picture detail would only add clutter).
    cues = (
        SynthCue(0.4, 1.8, "今天天气很好", colour="red"),
        SynthCue(2.2, 3.8, "We should go home now.", colour="blue"),
        SynthCue(4.2, 5.6, "我们明天再见吧", colour="green"),
    )
    path, truth = _spec(tmp_path, "colour.mp4", cues=cues, background="photo", seed=5)
    got, stats = run(path, rapid_engine)
    assert [z["colour"] for z in stats["zones"]] == [True]
    assert [c.text for c in got] == [t.text for t in truth]
    assert [(c.start_ms, c.end_ms) for c in got] == [(t.start_ms, t.end_ms) for t in truth]
    white = tuple(SynthCue(c.start, c.end, c.text) for c in cues)
    path, truth = _spec(tmp_path, "white.mp4", cues=white, background="photo", seed=5)
    got, stats = run(path, rapid_engine)
    assert [z["colour"] for z in stats["zones"]] == [False]
    assert [c.text for c in got] == [t.text for t in truth]


def test_text_flashed_for_two_frames_is_no_cue(tmp_path: Path, rapid_engine: object) -> None:
    # Real footage flashes glyph-like picture detail for a frame or two (between subtitles, at cuts);
    # no subtitle is that short. Three frames at 25 fps (0.12 s) still count.
    cues = (
        SynthCue(0.8, 0.88, "今天天气很好"),
        SynthCue(2.0, 3.6, "我们明天再见吧"),
        SynthCue(4.4, 4.52, "好"),
    )
    path, truth = _spec(tmp_path, "flash.mp4", cues=cues, fps=25)
    assert [t.end_ms - t.start_ms for t in truth] == [80, 1600, 120]
    got, stats = run(path, rapid_engine)
    assert stats["ocr_calls"] >= 3  # the flash was seen and read, then dropped
    assert [(c.text, c.start_ms, c.end_ms) for c in got] == [(t.text, t.start_ms, t.end_ms) for t in truth[1:]]


@pytest.mark.parametrize(("colour", "box"), [("white", "dark"), ("black", "light")])
def test_subtitles_on_a_box_are_read_with_exact_times(
    tmp_path: Path, rapid_engine: object, colour: str, box: str
) -> None:
    # No outline: white text on a half-transparent black box, and black text on an opaque white box (the box
    # between the strokes is then what the mask sees as bright glyph pixels with a dark rim).
    lines = ((0.4, 1.8, "今天天气很好"), (2.2, 3.8, "We should go home now."), (4.2, 5.6, "我们明天再见吧"))
    cues = tuple(SynthCue(start, end, text, colour=colour, box=box) for start, end, text in lines)
    path, truth = _spec(tmp_path, f"box_{box}.mp4", cues=cues, background="photo", seed=6)
    got, _ = run(path, rapid_engine)
    assert [(c.text, c.start_ms, c.end_ms) for c in got] == [(t.text, t.start_ms, t.end_ms) for t in truth]


def test_small_red_subtitles_at_the_top_are_found(tmp_path: Path, rapid_engine: object) -> None:
    # Found by a randomised style sweep: small red text over a photo. Luma misses it, and in the colour
    # masks each line is one component (the glyphs touch at analysis resolution): the zone finder must
    # still take its line height from such lines.
    lines = (
        (1.02, 2.02, "We should go home now."),
        (2.02, 2.49, "好的"),
        (2.99, 4.41, "今天天气很好"),
        (4.91, 5.4, "好的"),
        (5.6, 6.67, "Wait, what did you just say?"),
    )
    cues = tuple(SynthCue(s, e, t, position="top", colour="red", scale=0.7) for s, e, t in lines)
    spec = {"width": 1280, "height": 720, "fps": 30, "duration": 8.0, "seed": 18, "cut_every": None}
    path, truth = _spec(tmp_path, "red_top.mp4", cues=cues, **spec)
    got, stats = run(path, rapid_engine)
    assert [(z["name"], z["colour"]) for z in stats["zones"]] == [("top", True)]
    assert [(c.text, c.start_ms, c.end_ms) for c in got] == [(t.text, t.start_ms, t.end_ms) for t in truth]


def test_a_change_the_masks_barely_see_is_split_where_it_happened(tmp_path: Path, rapid_engine: object) -> None:
    # Found by the style sweep: black text on a white box changes to a line of similar length at 5.59 s;
    # the box-shaped masks stay alike, and the re-read after the shot cut at 6.0 s finds the new text.
    # The split goes to the first frame showing more of the new mask than of the old read's, not to the cut.
    lines = (
        (1.21, 2.95, "你听我说"),
        (5.08, 5.59, "今天天气很好"),
        (5.59, 6.2, "我们明天再见吧"),
        (6.2, 7.03, "我也不知道，过去看看就明白了"),
    )
    cues = tuple(SynthCue(s, e, t, colour="black", box="light") for s, e, t in lines)
    spec = {"width": 1280, "height": 720, "fps": 30, "duration": 8.0, "seed": 376, "cut_every": 1.5}
    path, truth = _spec(tmp_path, "box_change.mp4", cues=cues, **spec)
    got, _ = run(path, rapid_engine)
    assert [(c.text, c.start_ms, c.end_ms) for c in got] == [(t.text, t.start_ms, t.end_ms) for t in truth]


def test_one_blank_frame_between_two_subtitles_is_a_gap(tmp_path: Path, rapid_engine: object) -> None:
    # Subtitles one frame apart (a common minimum gap in subtitle files): the blank frame belongs to
    # neither. The next subtitle used to start on it (the previous one's end), one frame early.
    lines = ((0.4, 2.0, "今天天气很好"), (2.04, 3.6, "我们明天再见吧"), (3.6, 4.4, "We should go home now."))
    cues = tuple(SynthCue(s, e, t) for s, e, t in lines) + (SynthCue(4.48, 5.6, "It's late, we should go home now."),)
    for background in ("dark", "flat"):
        path, truth = _spec(tmp_path, f"gap_{background}.mp4", cues=cues, fps=25, background=background, seed=9)
        got, _ = run(path, rapid_engine)
        assert [(c.text, c.start_ms, c.end_ms) for c in got] == [(t.text, t.start_ms, t.end_ms) for t in truth]


SWEEP_940 = (
    (1.23, 3.14, "我也不知道，过去看看就明白了"),
    (3.34, 5.17, "It's late, we should go home now."),
    (5.67, 6.24, "我也不知道，过去看看就明白了"),
    (6.44, 6.9, "We should go home now."),
    (6.9, 7.8, "欢迎你来这里\nWelcome, make yourself at home."),
)
SWEEP_705 = (
    (0.93, 2.59, "We should go home now."),
    (2.59, 3.69, "我们明天再见吧"),
    (3.69, 5.44, "It's late, we should go home now."),
    (5.44, 6.56, "欢迎你来这里\nWelcome, make yourself at home."),
    (6.56, 7.8, "好的"),
)


@pytest.mark.parametrize(
    ("seed", "position", "colour", "cut_every", "lines"),
    [
        # Picture detail joins the band a frame before the second subtitle ends: the band's state changed,
        # but the subtitle's glyphs all stayed, so it ends where they went (it ended 1 frame early).
        (940, "bottom", "white", None, SWEEP_940),
        # "好的" replaces the two-line subtitle while picture detail joined to it hides its lines for 0.3 s:
        # it starts on the frame the band emptied (it started 1 frame late, at first 15 frames late).
        (705, "top", "yellow", 3.0, SWEEP_705),
    ],
)
def test_style_sweep_boundaries(
    tmp_path: Path, rapid_engine: object, seed: int, position: str, colour: str, cut_every: float | None, lines: tuple
) -> None:
    # Cases found by a randomised style sweep (854x480 at 50 fps over a photo), kept as they were found.
    cues = tuple(SynthCue(s, e, t, position=position, colour=colour) for s, e, t in lines)
    spec = {"fps": 50, "duration": 8.0, "seed": seed, "cut_every": cut_every}
    path, truth = _spec(tmp_path, f"sweep_{seed}.mp4", cues=cues, **spec)
    got, _ = run(path, rapid_engine)
    want = [(normalize(t.text), t.start_ms, t.end_ms) for t in truth]
    assert [(normalize(c.text), c.start_ms, c.end_ms) for c in got] == want


def test_a_second_line_below_the_band_is_read_whole(tmp_path: Path, rapid_engine: object) -> None:
    # Found by the style sweep: a top zone learnt from one-line subtitles cuts the lower line of the one
    # two-line subtitle at its descenders ("yourself" read "vourself"). A line cut by the band's bottom edge
    # is read on into the frame below.
    lines = (
        (1.1, 1.64, "今天天气很好"),
        (1.64, 2.18, "Wait, what did you just say?"),
        (3.26, 4.53, "欢迎你来这里\nWelcome, make yourself at home."),
        (4.53, 6.49, "今天天气很好"),
        (6.49, 7.7, "We should go home now."),
    )
    cues = tuple(SynthCue(s, e, t, position="top", scale=1.3) for s, e, t in lines)
    spec = {"fps": 60, "duration": 8.0, "seed": 622, "cut_every": 1.5, "background": "flat"}
    path, truth = _spec(tmp_path, "two_lines_top.mp4", cues=cues, **spec)
    got, stats = run(path, rapid_engine)
    band = stats["zones"][0]["box"]
    assert band[1] + band[3] < 140  # the band does end inside the two-line subtitle's lower line
    assert [(c.text, c.start_ms, c.end_ms) for c in got] == [(t.text, t.start_ms, t.end_ms) for t in truth]


def test_a_small_text_zone_is_masked_at_twice_the_analysis_resolution() -> None:
    # Full resolution up to 1080p; at 4K half resolution (4x the usual masking cost, not 16x).
    from vidocr.pipeline import _Zone
    from vidocr.region import Region
    from vidocr.textmask import RIM_STEP, SMALL_RIM_STEP
    from vidocr.types import Box

    for width, small, scale, rim in ((1280, False, 0.5, RIM_STEP), (1280, True, 1.0, SMALL_RIM_STEP),
                                     (1920, True, 1.0, SMALL_RIM_STEP), (3840, True, 0.5, SMALL_RIM_STEP),
                                     (640, True, 1.0, SMALL_RIM_STEP)):
        zone = _Zone(Region(Box(0, 600, width, 80), "auto", 12, 48, (620, 640), small=small), ExtractOptions(), 25.0)
        assert (zone.scale, zone.rim_step) == (scale, rim), width
        assert zone.edges(np.zeros((700, width), np.uint8), None)[0].shape == (round(80 * scale), round(width * scale))


def test_a_back_read_carries_where_the_glyphs_left_to_the_merger() -> None:
    # vidocr.detect's BACK read knows where the shown subtitle's glyphs left; the merger ends that subtitle there
    # when the read finds other text (tests/test_textnorm_merge.py), so the record must carry it.
    from fractions import Fraction

    from vidocr.detect import ReadReason, ReadRequest, Segment
    from vidocr.pipeline import _PendingSegment, _record
    from vidocr.types import Box, OcrResult, Timestamp

    tb = Fraction(1, 25)
    seg = Segment(0, Timestamp(10, tb), True, np.zeros((4, 4), np.uint8), [], 0.0)
    back = ReadRequest(seg, Timestamp(45, tb), Timestamp(42, tb), ReadReason.BACK, left_at=Timestamp(39, tb))
    new = ReadRequest(seg, Timestamp(11, tb), Timestamp(10, tb), ReadReason.NEW)
    done = _PendingSegment(seg, Timestamp(80, tb), [(1, new), (2, back)])
    record = _record(done, {1: OcrResult(()), 2: OcrResult(())}, Box(0, 0, 4, 4), 1.0)
    assert [(r.split_ms, r.left_ms) for r in record.reads] == [(400, None), (1680, 1560)]
