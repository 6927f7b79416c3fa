"""The zone finder's samples on a file whose keyframes are too sparse to sample at (fewer than
region.MIN_KEYFRAMES in range): taken from a stretch at the start of each group of pictures, not from a second
decode of the whole file."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import av
import numpy as np
import pytest

from vidocr import region
from vidocr.video import VideoSource

FPS = 25


def _encode(path: Path, seconds: int, gop: int) -> None:
    with av.open(str(path), "w") as out:
        stream = out.add_stream("libx264", rate=Fraction(FPS))
        stream.width, stream.height, stream.pix_fmt = 320, 180, "yuv420p"
        stream.options = {"g": str(gop), "keyint_min": str(gop), "sc_threshold": "0", "crf": "30",
                          "preset": "ultrafast"}
        for i in range(seconds * FPS):
            img = np.full((180, 320, 3), (i * 3) % 255, np.uint8)
            img[140:160, 40 + i % 100: 200 + i % 100] = 255
            frame = av.VideoFrame.from_ndarray(img, format="rgb24")
            for packet in stream.encode(frame):
                out.mux(packet)
        for packet in stream.encode():
            out.mux(packet)


@pytest.fixture(scope="module")
def sparse(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("sparse") / "sparse.mp4"
    _encode(path, 40, 10 * FPS)  # 4 keyframes: x264's default 10 s interval
    return path


def test_sparse_keyframes_sample_group_starts_not_the_whole_file(sparse: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    decoded: list[float] = []
    frames = VideoSource.frames

    def counting(self: VideoSource, start: float | None = None, end: float | None = None):  # type: ignore[no-untyped-def]
        for frame in frames(self, start, end):
            decoded.append(frame.ts.seconds)
            yield frame

    monkeypatch.setattr(VideoSource, "frames", counting)
    with VideoSource(sparse) as source:
        images = list(region._sample_images(source, None, None, 48, 1.0))
    assert 40 <= len(images) <= 52
    # About DECODE_SHARE of the frames decoded, from every group of pictures (not one full second pass).
    assert len(decoded) <= 40 * FPS * (region.DECODE_SHARE + 0.05)
    assert {int(t // 10) for t in decoded} == {0, 1, 2, 3}
    assert len({img.tobytes() for img, _ in images}) == len(images)  # distinct frames


def test_sparse_keyframes_in_a_range(sparse: Path) -> None:
    with VideoSource(sparse) as source:
        images = list(region._sample_images(source, 5.0, 35.0, 24, 1.0))
    assert 20 <= len(images) <= 28
