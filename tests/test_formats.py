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
from vidocr.types import Box, Cue, RunStats, VideoInfo

CUES = [
    Cue(520, 2520, "你听我说", 0.99, Box(300, 600, 200, 40)),
    Cue(2520, 4000, "I don't know\nSecond line & <more>", 0.95),
    Cue(3_725_001, 3_726_500, "late", 0.9, translation="晚"),
]
INFO = VideoInfo("v.mp4", 1280, 720, 3726.5, 25.0, "h264", stats=RunStats(ocr_calls=3))

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


def test_run_stats_give_the_json_stats_in_their_order_leaving_out_what_a_run_did_not_reach() -> None:
    from vidocr.types import StageTimes, ZoneStats

    band = Box(0, 560, 1280, 160)
    stats = RunStats(StageTimes(0.5, 1.25, 0.75, 0.125, 2.0), band, "auto",
                     (ZoneStats("bottom", band, "auto", (Box(1100, 600, 100, 40),), True),),
                     rescaled_frames=2, timestamp_discontinuities=0, ended_early=False, frames=250, corrupt_frames=1,
                     samples=250, ocr_calls=7, frames_read=7, ocr_confirmed=3, cues=4, scene_cuts=1, static_texts=1,
                     static_lines_dropped=2, picture_lines_dropped=0, page_frames=5, duration_decoded_s=10.0,
                     ocr_batches=3, ocr_rereads=3, ocr_glyph_reads=2, ocr_run_reads=1,
                     ocr_fused_reads=2, ocr_fused_kept=1, max_batch=4, seconds=4.5)
    assert json.dumps(stats.as_dict()) == (
        '{"times_s": {"zones": 0.5, "decode": 1.25, "detect": 0.75, "merge": 0.125, "ocr": 2.0}, '
        '"band": [0, 560, 1280, 160], "band_source": "auto", "zones": [{"name": "bottom", "box": [0, 560, 1280, 160], '
        '"source": "auto", "static": [[1100, 600, 100, 40]], "colour": true, "small_text": false}], '
        '"rescaled_frames": 2, '
        '"timestamp_discontinuities": 0, "ended_early": false, "frames": 250, "corrupt_frames": 1, "samples": 250, '
        '"ocr_calls": 7, "frames_read": 7, "ocr_confirmed": 3, "cues": 4, "scene_cuts": 1, "static_texts": 1, '
        '"static_lines_dropped": 2, "picture_lines_dropped": 0, "page_frames": 5, "duration_decoded_s": 10.0, '
        '"ocr_batches": 3, "ocr_rereads": 3, "ocr_glyph_reads": 2, "ocr_run_reads": 1, "ocr_fused_reads": 2, '
        '"ocr_fused_kept": 1, "max_batch": 4, "seconds": 4.5}'
    )
    # A run stopped after its zones were found: what it reached, no counts.
    early = RunStats(StageTimes(zones=0.5), band, "user", seconds=0.75)
    assert early.as_dict() == {"times_s": {"zones": 0.5}, "band": [0, 560, 1280, 160], "band_source": "user",
                               "seconds": 0.75}


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


# --- positions, encodings, modes, all-or-none ------------------------------------------------------------------

ZONED = [
    Cue(1000, 2000, "地铁站", 0.9, zone="top"),
    Cue(1000, 2500, "bottom line", 0.9),
    Cue(3000, 4000, "note", 0.9, zone="top2"),
]


def test_top_zone_cues_are_positioned_in_srt_and_vtt_bottom_ones_unchanged() -> None:
    srt = get_writer("srt").render(ZONED, INFO)
    assert srt == (
        "1\n00:00:01,000 --> 00:00:02,000\n{\\an8}地铁站\n\n"
        "2\n00:00:01,000 --> 00:00:02,500\nbottom line\n\n"
        "3\n00:00:03,000 --> 00:00:04,000\n{\\an8}note\n\n"
    )
    vtt = get_writer("vtt").render(ZONED, INFO)
    assert vtt == (
        "WEBVTT\n\n"
        "1\n00:00:01.000 --> 00:00:02.000 line:0\n地铁站\n\n"
        "2\n00:00:01.000 --> 00:00:02.500\nbottom line\n\n"
        "3\n00:00:03.000 --> 00:00:04.000 line:0\nnote\n"
    )
    parsed = webvtt.from_buffer(io.StringIO(vtt))
    assert [c.text for c in parsed] == ["地铁站", "bottom line", "note"]
    assert "{\\an8}" in get_writer("ass").render(ZONED, INFO)
    middle = [Cue(0, 1000, "caption", 0.9, zone="middle1")]
    assert "\n{\\an5}caption\n" in get_writer("srt").render(middle, INFO)
    assert "00:00:00.000 --> 00:00:01.000 line:50%,center\n" in get_writer("vtt").render(middle, INFO)


@pytest.mark.parametrize("fmt", ["srt", "vtt"])
def test_ffmpeg_reads_positioned_cues(tmp_path: Path, fmt: str) -> None:
    path = tmp_path / f"x.{fmt}"
    path.write_text(get_writer(fmt).render(ZONED, INFO), encoding="utf-8")
    with av.open(str(path)) as container:
        stream = container.streams.subtitles[0]
        packets = [p for p in container.demux(stream) if p.pts is not None]
    assert len(packets) == 3


def test_vidocr_srt_imported_as_a_sidecar_loses_the_position_override(tmp_path: Path) -> None:
    from vidocr.index.sidecars import read_sidecar

    path = tmp_path / "x.srt"
    path.write_text(get_writer("srt").render(ZONED, INFO), encoding="utf-8")
    assert [text for _, _, text in read_sidecar(path)] == ["地铁站", "bottom line", "note"]


def test_json_is_utf8_not_escaped(tmp_path: Path) -> None:
    (path,) = write_outputs(CUES, INFO, tmp_path, "movie", ["json"])
    raw = path.read_bytes()
    assert "你听我说".encode() in raw and b"\\u" not in raw


@pytest.mark.parametrize("umask, mode", [(0o022, 0o644), (0o027, 0o640), (0o077, 0o600)])
def test_new_outputs_honour_the_umask(tmp_path: Path, umask: int, mode: int) -> None:
    old = os.umask(umask)
    try:
        paths = write_outputs(CUES, INFO, tmp_path, "movie", ["srt", "vtt"])
    finally:
        os.umask(old)
    assert [oct(p.stat().st_mode & 0o777) for p in paths] == [oct(mode)] * 2


def test_a_replaced_output_keeps_its_mode(tmp_path: Path) -> None:
    target = tmp_path / "movie.srt"
    target.write_text("old")
    target.chmod(0o664)
    old = os.umask(0o077)
    try:
        write_text_atomic(target, "new")
    finally:
        os.umask(old)
    assert target.read_text() == "new" and target.stat().st_mode & 0o777 == 0o664


def test_several_formats_are_written_all_or_none(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for ext in ("srt", "vtt", "json"):
        (tmp_path / f"movie.{ext}").write_text(f"old {ext}")
    real_fsync, calls = os.fsync, []

    def fsync_fails_on_the_third_file(fd: int) -> None:
        calls.append(fd)
        if len(calls) == 3:
            raise OSError(28, "No space left on device")
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync_fails_on_the_third_file)
    with pytest.raises(OutputError, match="No space left"):
        write_outputs(CUES, INFO, tmp_path, "movie", ["srt", "vtt", "json"])
    assert sorted(os.listdir(tmp_path)) == ["movie.json", "movie.srt", "movie.vtt"]  # no temp file left
    assert [(tmp_path / f"movie.{e}").read_text() for e in ("srt", "vtt", "json")] == ["old srt", "old vtt", "old json"]
    monkeypatch.undo()
    # A folder where one output should go is found before anything is replaced.
    (tmp_path / "movie.json").unlink()
    (tmp_path / "movie.json").mkdir()
    with pytest.raises(OutputError, match="a folder has that name"):
        write_outputs(CUES, INFO, tmp_path, "movie", ["srt", "vtt", "json"])
    assert (tmp_path / "movie.srt").read_text() == "old srt" and (tmp_path / "movie.vtt").read_text() == "old vtt"
    assert sorted(os.listdir(tmp_path)) == ["movie.json", "movie.srt", "movie.vtt"]
