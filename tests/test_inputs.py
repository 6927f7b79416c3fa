"""Video source and bad input: exact timestamps, rotation, one clear error per broken file."""

from __future__ import annotations

import random
import shutil
import threading
from pathlib import Path

import av
import numpy as np
import pytest
from hostile_media import CONTAINERS, convert, with_preview
from support.synth import SynthCue, SynthSpec, render_video

from vidocr.errors import InputError, VidocrError
from vidocr.pipeline import ExtractOptions, extract
from vidocr.region import find_band, parse_roi
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
    y, h = info.stats.band.y, info.stats.band.h
    assert y + h > 720 - 140  # in the bottom bar


def test_user_roi_is_used(small_video: Path, rapid_engine: object) -> None:
    cues, info = extract(small_video, ExtractOptions(roi="0,0.75,1.0,0.25"), engine=rapid_engine)  # type: ignore[arg-type]
    assert [c.text for c in cues] == ["你好世界"]
    assert info.stats.band_source == "user"
    # A region without the subtitle finds nothing, and says where it looked.
    cues, info = extract(small_video, ExtractOptions(roi="0,0,1.0,0.3"), engine=rapid_engine)  # type: ignore[arg-type]
    assert list(cues) == [] and info.stats.band == Box(0, 0, 640, 108)


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
    assert info.stats.frames > 0
    assert info.stats.corrupt_frames > 0 or info.stats.frames < 75
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


# --- hostile media (issue 13) ---------------------------------------------------------------------------------


def _bit_flips(data: bytes, seed: int, count: int = 100) -> bytes:
    buf = bytearray(data)
    rng = random.Random(seed)
    for _ in range(count):
        i = rng.randrange(len(buf))
        buf[i] ^= 1 << rng.randrange(8)
    return bytes(buf)


@pytest.mark.parametrize("seed", [25, 26])
def test_corrupt_mpegts_is_decoded_as_far_as_it_goes_never_a_pyav_exception(
    tmp_path: Path, samples: Path, seed: int
) -> None:
    # These flips make a damaged table announce a new stream: PyAV's demuxer raised IndexError at the end.
    path = tmp_path / "flipped.ts"
    path.write_bytes(_bit_flips((samples / "vfr_offset.ts").read_bytes(), seed))
    with VideoSource(path) as src:
        times = [f.ts.pts for f in src.frames()]
    assert len(times) > 150 and times == sorted(set(times))


def test_a_corrupt_file_does_not_stop_the_rest_of_a_folder(tmp_path: Path, samples: Path, small_video: Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    from vidocr._cli import main

    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "a_flipped.ts").write_bytes(_bit_flips((samples / "vfr_offset.ts").read_bytes(), 25))
    (folder / "b_garbage.mkv").write_bytes(_bit_flips(small_video.read_bytes()[:3000], 1, 500))
    shutil.copy(small_video, folder / "c_good.mp4")
    code = main(["extract", str(folder), "-o", str(tmp_path / "out"), "-q", "--zones", "bottom"])
    err = capsys.readouterr().err
    assert "Traceback" not in err and code in (0, 1)
    assert "你好世界" in (tmp_path / "out" / "c_good.srt").read_text()
    for line in err.splitlines():
        assert line.startswith("error: ") and str(folder) in line


def _recording(path: Path, text: str, seed: int) -> Path:
    render_video(SynthSpec(width=640, height=360, duration=3.0, container="ts", start_offset=1.4, seed=seed,
                           background="dark", cues=(SynthCue(0.6, 2.4, text),)), path)
    return path


def test_restarting_mpegts_timestamps_keep_a_monotonic_clock(tmp_path: Path, rapid_engine: object,
                                                             caplog: pytest.LogCaptureFixture) -> None:
    # Two recordings concatenated (DVB, cameras): the second one's timestamps start again at 1.4 s.
    first, second = _recording(tmp_path / "a.ts", "第一段录像", 1), _recording(tmp_path / "b.ts", "第二段录像", 2)
    path = tmp_path / "joined.ts"
    path.write_bytes(first.read_bytes() + second.read_bytes())
    with VideoSource(path) as src:
        times = [f.ts.ms for f in src.frames()]
        assert src.discontinuities == 1
    assert len(times) == 150  # every frame of both (75 each); all were dropped after the restart before
    assert times == sorted(set(times)) and times[75] == 3000  # one frame step after the first recording's last
    assert any("timestamps restart" in r.getMessage() for r in caplog.records)
    with VideoSource(path) as src:  # a seek by the file's timestamps would land in the other recording
        assert [f.ts.ms for f in src.frames(3.5)] == times[88:]
    cues, info = extract(path, ExtractOptions(zones="bottom"), engine=rapid_engine)  # type: ignore[arg-type]
    got = [(c.start_ms, c.end_ms, c.text) for c in cues]
    assert got == [(600, 2400, "第一段录像"), (3600, 5400, "第二段录像")]
    assert info.stats.timestamp_discontinuities == 1


def test_a_damaged_timestamp_is_not_a_restart(tmp_path: Path, small_video: Path) -> None:
    # One frame whose time is 20 s off in an MPEG-TS, then the clock as before: no lasting jump.
    broken = tmp_path / "glitch.ts"
    with av.open(str(small_video)) as inp, av.open(str(broken), "w", format="mpegts") as out:
        ins = inp.streams.video[0]
        ost = out.add_stream_from_template(ins)
        for n, packet in enumerate(p for p in inp.demux(ins) if p.dts is not None):
            if n == 40:
                packet.pts += 20 * int(1 / ins.time_base)
            packet.stream = ost
            out.mux(packet)
    with VideoSource(broken) as src:
        times = [f.ts.ms for f in src.frames()]
        assert src.discontinuities == 0
    assert times == sorted(set(times)) and len(times) >= 73 and times[-1] < 3000


def test_the_main_video_stream_is_read_not_a_preview_or_a_cover(tmp_path: Path, small_video: Path,
                                                                rapid_engine: object) -> None:
    preview = with_preview(small_video, tmp_path / "preview.mkv")
    with VideoSource(preview) as src:
        assert (src.info.width, src.info.height) == (640, 360)
    with VideoSource(preview, stream=0) as src:
        assert (src.info.width, src.info.height) == (160, 90)
    with pytest.raises(InputError, match="no video stream 7 \\(video streams: 0, 1\\)"):
        VideoSource(preview, stream=7)
    cues, info = extract(preview, ExtractOptions(), engine=rapid_engine)  # type: ignore[arg-type]
    assert [c.text for c in cues] == ["你好世界"] and info.width == 640
    cover = with_preview(small_video, tmp_path / "cover.mp4", cover=True)
    with VideoSource(cover) as src:
        assert (src.info.width, src.info.height) == (640, 360)


@pytest.mark.parametrize("container", ["faststart", "mkv", "ts"])
def test_a_truncated_streamable_file_says_it_ended_early(tmp_path: Path, samples: Path, container: str,
                                                         caplog: pytest.LogCaptureFixture) -> None:
    whole = convert(samples / "zh.mp4", tmp_path / f"whole{CONTAINERS[container][0]}", container)
    cut = tmp_path / f"cut{whole.suffix}"
    data = whole.read_bytes()
    cut.write_bytes(data[: len(data) // 2])
    with VideoSource(whole) as src:
        assert sum(1 for _ in src.frames()) == 300
        assert src.ended_early is False
    assert not caplog.records
    with VideoSource(cut) as src:
        count = sum(1 for _ in src.frames())
        assert 100 < count < 200 and src.ended_early is True
    assert any("ended early" in r.getMessage() and str(cut) in r.getMessage() for r in caplog.records)


def test_stream_option_chooses_the_video_stream(tmp_path: Path, small_video: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    import json

    from vidocr._cli import main

    preview = with_preview(small_video, tmp_path / "preview.mkv")
    out = tmp_path / "out"
    assert main(["extract", str(preview), "-o", str(out), "--stream", "0", "--json", "-q", "--workers", "1"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["counts"]["empty"] == 1  # the blank 160x90 preview was read, zone finding included
    assert main(["extract", str(preview), "-o", str(out), "--stream", "7", "-q"]) == 1
    err = capsys.readouterr().err
    assert err.strip() == f"error: {preview}: no video stream 7 (video streams: 0, 1)"
    assert main(["extract", str(preview), "--stream", "-1", "-q"]) == 2
    assert "--stream must be a number from 0 to 65535" in capsys.readouterr().err


def _open_gop(path: Path, frames: int = 300) -> Path:
    """A 320x240 H.264 clip with open GOPs (I-frames that B-frames before them in display order refer across)
    and a keyframe every 40 frames; each frame's picture differs (a moving bar over noise)."""
    rng = np.random.default_rng(5)
    noise = rng.integers(0, 255, (240, 320, 3), dtype=np.uint8)
    with av.open(str(path), "w") as out:
        stream = out.add_stream("libx264", rate=25)
        stream.width, stream.height, stream.pix_fmt = 320, 240, "yuv420p"
        stream.options = {"x264-params": "open-gop=1:keyint=40:min-keyint=40:bframes=3:scenecut=0"}
        for i in range(frames):
            image = noise.copy()
            image[:, (i * 3) % 300 : (i * 3) % 300 + 20] = 255
            for packet in stream.encode(av.VideoFrame.from_ndarray(image, format="rgb24")):
                out.mux(packet)
        for packet in stream.encode():
            out.mux(packet)
    return path


@pytest.mark.parametrize("name", ["zh.mp4", "open-gop.mp4", "open-gop.mkv"])
def test_sampling_decoded_in_parts_at_once_gives_the_frames_of_a_full_decode(
    name: str, samples: Path, tmp_path: Path
) -> None:
    # The zone finder's samples of a short file decoded by several threads, each from a keyframe to the
    # next part's: the same pictures, in the same order, as one pass; open GOPs too (the frames shown before a
    # keyframe but decoded after it belong to the part before it, which decodes past the keyframe for them).
    path = samples / name if name == "zh.mp4" else _open_gop(tmp_path / name)
    threads: set[str] = set()

    def convert(frame: object) -> tuple[int, np.ndarray]:
        threads.add(threading.current_thread().name)
        return frame.ts.pts, frame.luma().copy()  # type: ignore[attr-defined]

    for start, end in ((None, None), (3.0, 9.5)):
        with VideoSource(path) as src:
            want = [(f.ts.pts, f.luma().copy()) for f in list(src.frames(start, end))[::7]]
            for parts in (1, 2, 4):
                threads.clear()
                got = src.map_every_nth(7, convert, start, end, threads=parts)
                assert [t for t, _ in got] == [t for t, _ in want], parts
                assert all(np.array_equal(a, b) for (_, a), (_, b) in zip(got, want, strict=True)), parts
                assert len(threads) == parts if start is None else len(threads) >= min(parts, 2)


def test_keyframes_sought_in_runs_at_once_are_those_of_one_pass(tmp_path: Path) -> None:
    # The zone finder's samples of a long file: seeks cut into runs, each run by its own thread and container,
    # give the keyframes one pass gives, in order (a run may land once more on the keyframe the run before
    # it ended on: each keyframe is kept once).
    path = _open_gop(tmp_path / "keys.mp4")
    times = [12.0 * (k + 0.5) / 30 for k in range(30)]
    with VideoSource(path) as src:
        want = list({f.ts.pts: f.luma().copy() for f in src.keyframes_near(times)}.items())
        assert len(want) == 8
        threads: set[str] = set()

        def convert(frame: object) -> tuple[int, np.ndarray]:
            threads.add(threading.current_thread().name)
            return frame.ts.pts, frame.luma().copy()  # type: ignore[attr-defined]

        for runs in (1, 2, 4):
            threads.clear()
            got = list(dict(src.map_keyframes_near(times, convert, threads=runs)).items())
            assert [t for t, _ in got] == [t for t, _ in want], runs
            assert all(np.array_equal(a, b) for (_, a), (_, b) in zip(got, want, strict=True)), runs
            assert len(threads) == runs


def test_a_picture_size_change_mid_stream_is_scaled_to_the_stream_size(tmp_path: Path, rapid_engine: object) -> None:
    # A broadcast switching from HD to SD (or a damaged header): later stages assume one frame size.
    first = tmp_path / "hd.ts"
    render_video(SynthSpec(width=640, height=360, duration=3.0, container="ts", background="dark",
                           cues=(SynthCue(0.6, 2.4, "第一段录像"),)), first)
    second = tmp_path / "sd.ts"
    render_video(SynthSpec(width=320, height=180, duration=3.0, container="ts", background="dark", seed=3,
                           cues=(SynthCue(0.6, 2.4, "第二段录像"),)), second)
    path = tmp_path / "switch.ts"
    path.write_bytes(first.read_bytes() + second.read_bytes())
    with VideoSource(path) as src:
        sizes = {f.luma().shape for f in src.frames()}
        assert sizes == {(360, 640)} and src.rescaled_frames == 75
    cues, info = extract(path, ExtractOptions(zones="bottom"), engine=rapid_engine)  # type: ignore[arg-type]
    assert [c.text for c in cues] == ["第一段录像", "第二段录像"] and info.stats.rescaled_frames == 75


def test_every_nth_frame_gives_the_frames_of_a_full_decode_decoding_fewer(
    samples: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The zone finder's samples of a file with sparse keyframes: the same pictures as decoding every frame,
    # without decoding the frames nobody refers to (x264's B-frames) unless they are wanted.
    path = samples / "zh.mp4"
    for start, end in ((None, None), (3.0, 7.5)):
        with VideoSource(path) as src:
            every = [f for f in src.frames(start, end)]
            full = [(f.ts.pts, f.luma().copy()) for f in every[::7]]
        with VideoSource(path) as src:
            nth = [(f.ts.pts, f.luma().copy()) for f in src.every_nth(7, start, end)]
        assert [t for t, _ in nth] == [t for t, _ in full]
        assert all(np.array_equal(a, b) for (_, a), (_, b) in zip(nth, full, strict=True))

    decoded = []

    class Counted:  # a packet that counts the pictures its decoding gives
        def __init__(self, packet: av.Packet) -> None:
            self.packet, self.pts, self.size, self.is_keyframe = packet, packet.pts, packet.size, packet.is_keyframe

        def decode(self) -> list[av.VideoFrame]:
            frames = self.packet.decode()
            decoded.extend(frames)
            return frames

    class Container:
        def __init__(self, inner: av.container.InputContainer) -> None:
            self.inner = inner

        def __getattr__(self, name: str) -> object:
            return getattr(self.inner, name)

        def __enter__(self) -> Container:
            return self

        def __exit__(self, *exc: object) -> None:
            self.inner.close()

        def demux(self, stream: av.VideoStream) -> object:
            return (Counted(p) for p in self.inner.demux(stream))

    with VideoSource(path) as src:
        count = sum(1 for _ in src.frames())
        opened = src._open
        monkeypatch.setattr(src, "_open", lambda: Container(opened()))
        assert len(list(src.every_nth(7))) == len(range(0, count, 7))
    assert len(range(0, count, 7)) <= len(decoded) < 0.8 * count
