from __future__ import annotations

import html
import io
import json
import os
from pathlib import Path

import av
import pysrt
import pytest
import webvtt

from vidocr.atomic import write_text_atomic
from vidocr.errors import OutputError
from vidocr.formats import get_writer, parse_formats, write_outputs
from vidocr.types import Box, Cue, VideoInfo

CUES = [
    Cue(520, 2520, "你听我说", 0.99, Box(300, 600, 200, 40)),
    Cue(2520, 4000, "I don't know\nSecond line & <more>", 0.95),
    Cue(3_725_001, 3_726_500, "late", 0.9, translation="晚"),
]
INFO = VideoInfo("v.mp4", 1280, 720, 3726.5, 25.0, "h264", stats={"ocr_calls": 3})

GOLDEN_SRT = """1
00:00:00,520 --> 00:00:02,520
你听我说

2
00:00:02,520 --> 00:00:04,000
I don't know
Second line & <more>

3
01:02:05,001 --> 01:02:06,500
late

"""

GOLDEN_VTT = """WEBVTT

1
00:00:00.520 --> 00:00:02.520
你听我说

2
00:00:02.520 --> 00:00:04.000
I don't know
Second line &amp; &lt;more&gt;

3
01:02:05.001 --> 01:02:06.500
late
"""


def test_srt_golden_and_parses_with_pysrt() -> None:
    text = get_writer("srt").render(CUES, INFO)
    assert text == GOLDEN_SRT
    items = pysrt.from_string(text)
    assert [i.start.ordinal for i in items] == [c.start_ms for c in CUES]


def test_vtt_golden_and_parses_with_webvtt() -> None:
    text = get_writer("vtt").render(CUES, INFO)
    assert text == GOLDEN_VTT
    parsed = webvtt.from_buffer(io.StringIO(text))
    assert [html.unescape(c.text) for c in parsed] == ["你听我说", "I don't know\nSecond line & <more>", "late"]
    assert [c.start for c in parsed] == ["00:00:00.520", "00:00:02.520", "01:02:05.001"]


@pytest.mark.parametrize("fmt", ["srt", "vtt", "ass"])
def test_ffmpeg_parses_the_subtitle_files(tmp_path: Path, fmt: str) -> None:
    path = tmp_path / f"x.{fmt}"
    path.write_text(get_writer(fmt).render(CUES, INFO), encoding="utf-8")
    with av.open(str(path)) as container:
        stream = container.streams.subtitles[0]
        starts = [round(float(p.pts * stream.time_base) * 1000) for p in container.demux(stream) if p.pts is not None]
    precision = 10 if fmt == "ass" else 1  # ASS stores centiseconds
    assert [round(s / precision) for s in starts] == [round(c.start_ms / precision) for c in CUES]


def test_json_has_times_lines_confidence_box_and_video() -> None:
    doc = json.loads(get_writer("json").render(CUES, INFO))
    assert doc["video"]["width"] == 1280 and doc["video"]["stats"]["ocr_calls"] == 3
    first = doc["cues"][0]
    assert (first["start_ms"], first["end_ms"], first["lines"]) == (520, 2520, ["你听我说"])
    assert first["box"] == [300, 600, 200, 40]
    assert doc["cues"][1]["lines"] == ["I don't know", "Second line & <more>"]
    assert doc["cues"][2]["translation"] == "晚"


def test_write_outputs_names_and_translation_tracks(tmp_path: Path) -> None:
    paths = write_outputs(CUES, INFO, tmp_path, "movie", ["srt", "json"], translate_to="zh")
    assert sorted(p.name for p in paths) == ["movie.json", "movie.srt", "movie.zh.json", "movie.zh.srt"]
    assert pysrt.open(str(tmp_path / "movie.zh.srt"))[0].text == "晚"
    paths = write_outputs(CUES, INFO, tmp_path / "bi", "movie", ["srt"], translate_to="zh", bilingual_cues=True)
    assert [p.name for p in paths] == ["movie.srt"]
    assert pysrt.open(str(paths[0]))[2].text == "late\n晚"


def test_parse_formats() -> None:
    assert parse_formats("srt, VTT,srt,json") == ["srt", "vtt", "json"]
    with pytest.raises(Exception, match="unknown output format"):
        parse_formats("docx")


def test_atomic_write_never_leaves_a_partial_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "out.srt"
    target.write_text("old complete file")

    def broken_replace(src: str, dst: str) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", broken_replace)
    with pytest.raises(OutputError, match="No space left"):
        write_text_atomic(target, "new content")
    assert target.read_text() == "old complete file"
    assert os.listdir(tmp_path) == ["out.srt"]  # no temp file left behind
