"""Real-world layouts: several subtitle zones, logos and watermarks, vertical video, letterbox, scene text."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.metrics import evaluate, normalize
from support.synth import SynthCue, SynthSpec, TruthCue, render_video

from vidocr.formats import get_writer
from vidocr.pipeline import ExtractOptions, extract
from vidocr.types import Cue

LOGO = SynthCue(0.0, 60.0, "CCTV-9 纪录", position="corner", subtitle=False, scale=0.6)


def run(path: Path, engine: object, **kw: object) -> tuple[list[Cue], dict]:
    cues, info = extract(path, ExtractOptions(**kw), engine=engine)  # type: ignore[arg-type]
    return list(cues), info.stats.as_dict()


def render(tmp_path: Path, name: str, **kw: object) -> tuple[Path, list[TruthCue]]:
    path = tmp_path / name
    spec = SynthSpec(**{"width": 1280, "height": 720, "duration": 12.0, **kw})  # type: ignore[arg-type]
    return path, render_video(spec, path)


def score_ok(truth: list[TruthCue], got: list[Cue]) -> None:
    report = evaluate(truth, got)
    assert report.icpr <= 0.05, ([c.text for c in got], report)
    assert report.phantom_cues == 0


def test_top_and_bottom_subtitles_overlapping_in_time_stay_separate(tmp_path: Path, rapid_engine: object) -> None:
    cues = (
        SynthCue(0.5, 5.5, "屏幕上方的注释文字", position="top"),
        SynthCue(0.8, 2.8, "下面是对话第一句"),
        SynthCue(3.2, 5.2, "Dialogue line two"),
        SynthCue(6.0, 11.0, "Translator's note up here", position="top"),
        SynthCue(6.4, 8.6, "对话第三句"),
        SynthCue(9.0, 11.4, "And the fourth line"),
    )
    path, truth = render(tmp_path, "topbottom.mp4", cues=cues)
    got, stats = run(path, rapid_engine)
    assert sorted(z["name"] for z in stats["zones"]) == ["bottom", "top"]
    score_ok(truth, got)
    top = [c for c in got if c.zone == "top"]
    assert [normalize(c.text) for c in top] == [normalize("屏幕上方的注释文字"), normalize("Translator's note up here")]
    # --zones bottom: the classic single-track result, only the dialogue.
    classic, stats = run(path, rapid_engine, zones="bottom")
    assert len(stats["zones"]) == 1
    dialogue = [t for t in truth if "note" not in t.text and "注释" not in t.text]
    assert len(classic) == len(dialogue)
    score_ok(dialogue, classic)
    # ASS keeps the top zone at the top.
    ass = get_writer("ass").render(got, _info(path))
    assert "{\\an8}屏幕上方的注释文字" in ass
    assert "Dialogue: 0,0:00:00.80,0:00:02.80,Default,,0,0,0,,下面是对话第一句" in ass


def _info(path: Path):  # type: ignore[no-untyped-def]
    from vidocr.video import VideoSource

    with VideoSource(path) as src:
        return src.info


def test_corner_logo_for_the_whole_video_never_becomes_a_cue(tmp_path: Path, rapid_engine: object) -> None:
    cues = (LOGO, SynthCue(1.0, 3.0, "第一句对话"), SynthCue(4.0, 6.5, "Second line"), SynthCue(8.0, 10.0, "第三句"))
    path, truth = render(tmp_path, "logo.mp4", cues=cues)
    got, _ = run(path, rapid_engine)
    score_ok(truth, got)
    assert not any("CCTV" in c.text or "纪录" in c.text for c in got)


def test_logo_inside_the_subtitle_band_is_suppressed(tmp_path: Path, rapid_engine: object) -> None:
    # A watermark in the bottom band itself, on every frame: static text, masked out and dropped from reads.
    logo = SynthCue(0.0, 60.0, "WATERMARK", position="corner", subtitle=False, scale=0.7)
    cues = (SynthCue(1.0, 3.5, "字幕一"), SynthCue(4.5, 7.0, "字幕二号"), SynthCue(8.0, 11.0, "第三条字幕"))
    spec = SynthSpec(width=1280, height=720, duration=12.0, cues=(logo, *cues))
    path = tmp_path / "inband.mp4"
    truth = render_video(spec, path)
    got, stats = run(path, rapid_engine, roi="0,0,1280,120")  # a band that holds the corner logo only
    assert not any("WATERMARK" in c.text.upper() for c in got)
    got, stats = run(path, rapid_engine, zones="0,0,1280,120;0,560,1280,160")
    assert not any("WATERMARK" in c.text.upper() for c in got)
    assert [normalize(c.text) for c in got] == [normalize(t.text) for t in truth]
    kept, _ = run(path, rapid_engine, zones="0,0,1280,120;0,560,1280,160", keep_static=True)
    assert any("WATERMARK" in c.text.upper() for c in kept)


def test_vertical_video_captions_mid_low(tmp_path: Path, rapid_engine: object) -> None:
    cues = (
        SynthCue(0.5, 2.5, "竖屏视频的字幕", position="middle-low"),
        SynthCue(3.0, 5.5, "在画面中下方", position="middle-low"),
    )
    path, truth = render(tmp_path, "vertical.mp4", width=720, height=1280, duration=6.0, cues=cues, font_size=44)
    got, stats = run(path, rapid_engine)
    score_ok(truth, got)
    band = stats["zones"][0]["box"]
    assert band[1] < 0.7 * 1280 < band[1] + band[3]


def test_letterbox_subtitles_in_the_bar(tmp_path: Path, rapid_engine: object) -> None:
    cues = (SynthCue(0.5, 3.0, "黑边里的字幕"), SynthCue(3.5, 6.0, "Subtitles in the black bar"))
    path, truth = render(tmp_path, "scope.mp4", duration=6.5, letterbox=True, cues=cues)
    got, _ = run(path, rapid_engine)
    score_ok(truth, got)


def test_scene_text_distractor_is_not_a_cue(tmp_path: Path, rapid_engine: object) -> None:
    sign = SynthCue(0.0, 12.0, "OPEN 营业中", position="sign", subtitle=False, scale=1.4)
    cues = (
        sign,
        SynthCue(1.0, 3.0, "这是对话"),
        SynthCue(4.0, 6.0, "Another subtitle"),
        SynthCue(7.5, 10.0, "最后一句"),
    )
    path, truth = render(tmp_path, "sign.mp4", cues=cues, cut_every=None)
    got, _ = run(path, rapid_engine)
    score_ok(truth, got)
    assert not any("OPEN" in c.text or "营业" in c.text for c in got)


def test_scrolling_ticker_never_becomes_a_cue(tmp_path: Path, rapid_engine: object) -> None:
    ticker = SynthCue(0.0, 12.0, "BREAKING NEWS 今日新闻快讯 markets rally as stocks climb 股市上涨",
                      position="ticker", subtitle=False, scale=0.7)
    cues = (ticker, SynthCue(1.0, 3.0, "这是对话"), SynthCue(4.0, 6.0, "Another subtitle"), SynthCue(7.0, 10.0, "最后"))
    path, truth = render(tmp_path, "ticker.mp4", cues=cues)
    got, stats = run(path, rapid_engine)
    score_ok(truth, got)
    assert not any("NEWS" in c.text or "股市" in c.text or "markets" in c.text for c in got)
    assert stats["static_texts"] >= 1  # the ticker strip is reported as suppressed static text


@pytest.mark.real
def test_real_fansub_watermark_is_not_a_cue(real_data: Path, rapid_engine: object) -> None:
    got, stats = run(real_data / "en_fansub_watermark_6s.mp4", rapid_engine)
    assert got, "the subtitle itself must be found"
    assert not any("yami" in c.text.lower() or "sukehiro" in c.text.lower() for c in got)
    assert any("decided" in c.text.lower() for c in got)
