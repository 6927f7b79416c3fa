"""Video source and bad input: exact timestamps, rotation, one clear error per broken file."""

from __future__ import annotations

import shutil
from pathlib import Path

import av
import numpy as np
import pytest

from vidocr.errors import InputError, VidocrError
from vidocr.pipeline import ExtractOptions, extract
from vidocr.region import find_band, parse_roi
from vidocr.synth import SynthCue, SynthSpec, render_video
from vidocr.types import Box
from vidocr.video import VideoSource


@pytest.fixture(scope="module")
def small_video(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("v") / "small.mp4"
    render_video(SynthSpec(width=640, height=360, duration=3.0, cues=(SynthCue(0.5, 2.5, "你好世界"),)), path)
    return path


def test_timestamps_are_exact_and_start_at_zero(samples: Path) -> None:
    with VideoSource(samples / "vfr_offset.ts") as src:
        assert src.info.start_time_s == pytest.approx(1.4, abs=0.01)
        times = [f.ts for f in src.frames()]
    with av.open(str(samples / "vfr_offset.ts")) as c:
        raw = [f.pts for f in c.decode(video=0)]
    assert times[0].pts == 0
    assert [t.pts for t in times] == [p - raw[0] for p in raw]
    steps = {round((b.seconds - a.seconds) * 1000) for a, b in zip(times, times[1:], strict=False)}
    assert len(steps) >= 3  # variable frame rate survives


@pytest.mark.parametrize("rotation", [-90, 90])
def test_rotation_metadata_gives_upright_frames_and_band(tmp_path: Path, rotation: int) -> None:
    path = tmp_path / "rot.mp4"
    spec = SynthSpec(width=360, height=640, duration=2.0, rotation=rotation, background="dark", font_size=28,
                     cues=(SynthCue(0.2, 1.8, "竖屏字幕", position="middle-low"),))
    render_video(spec, path)
    with VideoSource(path) as src:
        assert (src.info.width, src.info.height) == (360, 640)
        frame = next(src.frames(0.5))
        assert frame.luma().shape == (640, 360)
        band = find_band(src, None, None).box
    # 9:16 captions sit at ~70% of the height: the band must contain that row.
    assert band.y <= 0.7 * 640 <= band.y + band.h


def test_parse_roi_pixels_and_fractions() -> None:
    assert parse_roi("0,600,1280,120", 1280, 720) == Box(0, 600, 1280, 120)
    assert parse_roi("0,0.8,1.0,0.2", 1280, 720) == Box(0, 576, 1280, 144)
    assert parse_roi("0,700,2000,500", 1280, 720) == Box(0, 700, 1280, 20)  # clipped to the frame
    for bad in ("1,2,3", "a,b,c,d", "0,719,1280,1", "-1,0,10,10"):
        with pytest.raises(VidocrError):
            parse_roi(bad, 1280, 720)


def test_letterboxed_subtitles_in_the_bar_are_found(tmp_path: Path, rapid_engine: object) -> None:
    path = tmp_path / "scope.mp4"
    cues = (SynthCue(0.4, 2.0, "字幕在黑边里"), SynthCue(2.4, 3.6, "Letterbox subtitle"))
    truth = render_video(SynthSpec(width=1280, height=720, duration=4.0, letterbox=True, cues=cues), path)
    got, info = extract(path, ExtractOptions(), engine=rapid_engine)  # type: ignore[arg-type]
    out = list(got)
    assert [c.text for c in out] == [t.text for t in truth]
    y, h = info.stats["band"][1], info.stats["band"][3]
    assert y + h > 720 - 140  # in the bottom bar


def test_user_roi_is_used(small_video: Path, rapid_engine: object) -> None:
    cues, info = extract(small_video, ExtractOptions(roi="0,0.75,1.0,0.25"), engine=rapid_engine)  # type: ignore[arg-type]
    assert [c.text for c in cues] == ["你好世界"]
    assert info.stats["band_source"] == "user"
    # A region without the subtitle finds nothing, and says where it looked.
    cues, info = extract(small_video, ExtractOptions(roi="0,0,1.0,0.3"), engine=rapid_engine)  # type: ignore[arg-type]
    assert list(cues) == [] and info.stats["band"] == [0, 0, 640, 108]


def _audio_only(path: Path) -> None:
    with av.open(str(path), "w") as c:
        s = c.add_stream("aac", rate=44100)
        frame = av.AudioFrame.from_ndarray(np.zeros((1, 1024), np.float32), format="fltp", layout="mono")
        frame.sample_rate = 44100
        for p in s.encode(frame):
            c.mux(p)
        for p in s.encode(None):
            c.mux(p)


@pytest.mark.parametrize(
    "kind, reason",
    [
        ("missing", "not found"),
        ("empty", "empty"),
        ("text", "not a video"),
        ("truncated", "not a video"),
        ("audio", "audio-only"),
        ("folder", "folder"),
    ],
)
def test_bad_inputs_raise_one_clear_error(tmp_path: Path, small_video: Path, kind: str, reason: str) -> None:
    path = tmp_path / f"{kind}.mp4"
    if kind == "empty":
        path.write_bytes(b"")
    elif kind == "text":
        path.write_text("this is not a video\n" * 50)
    elif kind == "truncated":
        path.write_bytes(small_video.read_bytes()[:4000])
    elif kind == "audio":
        path = tmp_path / "audio.m4a"
        _audio_only(path)
    elif kind == "folder":
        path.mkdir()
    with pytest.raises(InputError) as info:
        extract(path, ExtractOptions())
    message = str(info.value)
    assert str(path) in message and reason in message and "\n" not in message


def test_corrupt_packets_inside_a_valid_file_are_skipped_and_counted(tmp_path: Path, rapid_engine: object) -> None:
    src = tmp_path / "clean.ts"
    render_video(SynthSpec(width=640, height=360, duration=3.0, container="ts", background="dark",
                           cues=(SynthCue(0.3, 2.7, "坏帧也不怕"),)), src)
    data = bytearray(src.read_bytes())
    rng = np.random.default_rng(1)
    # Scribble over payload bytes in the middle third (TS packets are 188 bytes; keep sync bytes).
    for start in range(len(data) // 3, 2 * len(data) // 3, 188 * 7):
        data[start + 8 : start + 180] = rng.integers(0, 255, 172, dtype=np.uint8).tobytes()
    broken = tmp_path / "broken.ts"
    broken.write_bytes(bytes(data))
    cues, info = extract(broken, ExtractOptions(), engine=rapid_engine)  # type: ignore[arg-type]
    out = list(cues)
    assert info.stats["frames"] > 0
    assert info.stats["corrupt_frames"] > 0 or info.stats["frames"] < 75
    assert any("坏帧" in c.text for c in out)


def test_file_with_a_destroyed_header_is_a_clear_error(tmp_path: Path, small_video: Path) -> None:
    # The container header is gone: nothing can tell what the bytes are.
    path = tmp_path / "weird.mkv"
    shutil.copy(small_video, path)
    data = bytearray(path.read_bytes())
    data[: min(len(data), 64)] = b"\x00" * min(len(data), 64)
    path.write_bytes(bytes(data))
    with pytest.raises(InputError) as info:
        extract(path, ExtractOptions())
    assert str(path) in str(info.value)
