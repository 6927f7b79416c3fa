"""Fused reads: a read that comes back unsure is made again on the mean of its crop over the frames that follow it
in its segment (vidocr.pipeline.ExtractOptions.fuse_s, vidocr.ocrqueue.FUSE_BELOW).

The clip here loses a random 70% of its subtitle's pixels on every frame (what heavy compression and noise do
to thin glyphs, pushed far): each frame alone reads as junk, their mean as the subtitle. Real RapidOCR.
"""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import av
import numpy as np
import pytest
from PIL import Image, ImageDraw
from support.synth import X264_REPEATABLE, _font

from vidocr.detect import ReadReason, ReadRequest, Segment, SegmentStarted
from vidocr.ocrqueue import FUSE_BELOW, OcrWorker
from vidocr.pipeline import FUSE_SETTLE_FRAMES, ExtractOptions, _Fusion, _Reads, _Zone, extract
from vidocr.region import Region
from vidocr.types import Box, OcrLine, OcrResult, Task, Timestamp

FPS = 25
TEXTS = ("Where were you last night?", "Put the box on the table, please.", "She'll be back by tomorrow morning.")
TB = Fraction(1, FPS)
SHOWN = 34  # frames each subtitle is shown, after 10 blank ones; 6 blank frames between subtitles
DROP = 0.7  # share of a subtitle's pixels (glyphs and outline) missing on each frame, drawn anew per frame


def truth() -> list[tuple[int, int, str]]:
    return [((10 + 40 * k) * 1000 // FPS, (10 + 40 * k + SHOWN) * 1000 // FPS, text) for k, text in enumerate(TEXTS)]


@pytest.fixture(scope="module")
def lossy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _clip(tmp_path_factory.mktemp("fused") / "lossy.mp4", DROP)


@pytest.fixture(scope="module")
def noisy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Less lost per frame (60%): frames read the subtitles with a few glyphs wrong, each its own way."""
    return _clip(tmp_path_factory.mktemp("fused") / "noisy.mp4", 0.6)


def _clip(path: Path, drop: float) -> Path:
    width, height, rng = 640, 360, np.random.default_rng(7)
    layers = []
    for text in TEXTS:
        glyphs, ring = Image.new("L", (width, height)), Image.new("L", (width, height))
        for image, stroke in ((glyphs, 0), (ring, 2)):
            ImageDraw.Draw(image).text((width // 2, int(height * 0.88)), text, font=_font(20), fill=255, anchor="ms",
                                       stroke_width=stroke)
        layers.append((np.asarray(glyphs) > 128, np.asarray(ring) > 128))
    picture = np.full((height, width, 3), (110, 110, 150), np.uint8)
    with av.open(str(path), "w") as out:
        stream = out.add_stream("libx264", rate=FPS)
        stream.width, stream.height, stream.pix_fmt = width, height, "yuv420p"
        stream.options = {"crf": "23", "preset": "veryfast", **X264_REPEATABLE}
        for i in range(40 * len(TEXTS) + 20):
            rgb = picture.copy()
            k, into = divmod(i - 10, 40)
            if 0 <= k < len(TEXTS) and into < SHOWN:
                glyphs, ring = layers[k]
                kept = rng.random((height, width)) >= drop
                rgb[ring & kept] = 0
                rgb[glyphs & kept] = 255
            out.mux(stream.encode(av.VideoFrame.from_ndarray(rgb, format="rgb24")))
        out.mux(stream.encode(None))
    return path


def _cues(path: Path, fuse_s: float, polish: bool = False) -> list[tuple[int, int, str]]:
    cues, _ = extract(path, ExtractOptions(lang=("en",), fuse_s=fuse_s, polish=polish))
    return [(c.start_ms, c.end_ms, c.text) for c in cues]


def test_a_subtitle_each_frame_of_which_is_junk_is_read_from_their_mean_with_exact_times(lossy: Path) -> None:
    assert _cues(lossy, ExtractOptions().fuse_s) == truth()
    # Frame by frame, the same reads are junk: the mean is what reads them.
    alone = _cues(lossy, 0.0)
    assert sum(cue in alone for cue in truth()) <= 1


def test_a_cue_whose_frames_each_read_it_wrong_is_read_right_on_the_mean_of_all_its_frames(noisy: Path) -> None:
    # vidocr.pipeline.ExtractOptions.polish, without the fused first read: each cue, voted from reads that each
    # get a few glyphs wrong, is read again on the band's mean over its frames, which gives it its text; its
    # times stay the detector's.
    plain = _cues(noisy, 0.0)
    assert sum(cue in plain for cue in truth()) <= 1, plain
    polished = _cues(noisy, 0.0, polish=True)
    assert sum(cue in polished for cue in truth()) >= 2, polished
    assert [(start, end) for start, end, _ in polished] == [(start, end) for start, end, _ in truth()]


class _Scripted:
    """Reads an image by its first pixel: 1 -> an unsure misread, 2 -> the subtitle, surely, 3 -> a worse misread."""

    name = "scripted"
    tasks = frozenset({Task.SUBTITLE})
    preferred_batch = 8
    READS = {1: ("Wherewere yoi", 0.8), 2: ("Where were you", 0.99), 3: ("Wh", 0.6), 4: ("没有......", 0.85),
             5: ("没有", 1.0)}

    def __init__(self) -> None:
        self.images = 0

    def recognize(self, images: list[np.ndarray], task: Task) -> list[OcrResult]:
        self.images += len(images)
        return [OcrResult((OcrLine(*self.READS[int(image[0, 0, 0])], box=Box(0, 0, 8, 8)),)) for image in images]

    def close(self) -> None:
        pass


def _image(value: int) -> np.ndarray:
    return np.full((8, 8, 3), value, np.uint8)


def test_only_unsure_reads_are_made_again_on_the_mean_and_the_surer_read_is_kept() -> None:
    engine = _Scripted()
    worker = OcrWorker(engine, Task.SUBTITLE, batch=8, queue_size=8)  # type: ignore[arg-type]
    worker.submit(1, _image(1), fused=_image(2))  # unsure; the mean reads surely: kept
    worker.submit(2, _image(2), fused=_image(1))  # sure: its mean is not read
    worker.submit(3, _image(1), fused=_image(3))  # unsure; the mean reads worse: the read stays
    worker.submit(4, _image(1))  # unsure, no mean (a segment of one frame)
    worker.submit(5, _image(4), fused=_image(5))  # the mean's read is surer for leaving characters out: not kept
    worker.close()
    results = worker.take()
    assert [results[i].text for i in (1, 2, 3, 4, 5)] == ["Where were you", "Where were you", "Wherewere yoi",
                                                          "Wherewere yoi", "没有......"]
    assert (worker.fused_reads, worker.fused_kept, engine.images) == (3, 1, 8)
    assert 0.8 < FUSE_BELOW <= 0.99


class _Frame:
    def __init__(self, seconds: float, value: int) -> None:
        self.ts = type("T", (), {"seconds": seconds})()
        self.value = value

    def bgr(self, box: Box) -> np.ndarray:
        return np.full((box.h, box.w, 3), self.value, np.uint8)


def test_the_mean_leaves_out_the_frames_from_the_segments_end_on() -> None:
    fusion = _Fusion(1, None, Box(0, 0, 4, 2), None, False)  # type: ignore[arg-type]
    for k, value in enumerate((10, 20, 30, 200)):
        fusion.add(_Frame(k / 25, value), Box(0, 0, 4, 2))  # type: ignore[arg-type]
    assert int(fusion.image()[0, 0, 0]) == 65  # type: ignore[index]
    fusion.end_s = 3 / 25  # the detector told, frames late, that the next state began at the fourth frame
    assert int(fusion.image()[0, 0, 0]) == 20  # type: ignore[index]
    fusion.end_s = 1 / 25
    assert fusion.image() is None  # the read's own frame alone: nothing to fuse


class _Sent:
    """Stands for the OCR worker: what each read was sent with (its read id, its mean over frames)."""

    def __init__(self) -> None:
        self.fused: list[tuple[int, np.ndarray | None]] = []

    def submit(self, read_id: int, image: np.ndarray, prior: object = None, *, page: bool = False,
               fused: np.ndarray | None = None) -> None:
        self.fused.append((read_id, fused))


def _gathering_zone() -> tuple[_Zone, _Sent, _Reads, Segment, list[_Frame]]:
    """A zone whose reads gather 0.2 s of frames, what it sends, its reads, a text segment from frame 10 and 40
    frames of 25 fps whose pixels are 5 times their number."""
    zone = _Zone(Region(Box(0, 300, 640, 60), "auto", 12, 48, (320, 340)), ExtractOptions(fuse_s=0.2), 25.0)
    sent = _Sent()
    reads = _Reads(sent, 360)  # type: ignore[arg-type]
    seg = Segment(0, Timestamp(10, TB), True, np.zeros((4, 4), np.uint8), [], 0.0)
    return zone, sent, reads, seg, [_Frame(k / 25, 5 * k) for k in range(40)]


def test_a_new_segments_read_gathers_frames_and_a_re_read_is_sent_at_once() -> None:
    # A re-read's window may cross a change the masks did not see (a line redrawn in place): its mean would read
    # a blend of both subtitles. Only a new segment's first read waits for the frames of its window.
    zone, sent, reads, seg, frames = _gathering_zone()
    zone.handle([SegmentStarted(seg), ReadRequest(seg, Timestamp(12, TB), Timestamp(10, TB), ReadReason.NEW)],
                frames[12], reads)  # type: ignore[arg-type]
    for k in range(13, 22):
        zone.handle([], frames[k], reads)  # type: ignore[arg-type]
        if k < 12 + 5 + FUSE_SETTLE_FRAMES - 1:
            assert sent.fused == [], k  # gathering its 0.2 s (5 frames), then waiting for the segment's end
    assert len(sent.fused) == 1 and sent.fused[0][1] is not None
    assert int(sent.fused[0][1][0, 0, 0]) == 70  # the mean of frames 12-16  # type: ignore[index]
    for reason in (ReadReason.RECHECK, ReadReason.UNSEEN, ReadReason.DRIFT, ReadReason.GROW, ReadReason.BACK):
        zone.handle([ReadRequest(seg, Timestamp(30, TB), Timestamp(29, TB), reason)], frames[30], reads)  # type: ignore[arg-type]
        assert len(sent.fused) == 2 and sent.fused[1][1] is None, reason  # sent with the frame it was asked at
        sent.fused.pop()


def test_frames_the_detector_found_unlike_the_segment_stay_out_of_the_mean() -> None:
    # Seen on the libass corpus (dev 09_two-line): a read of signs alone gathered the frames in which the next
    # subtitle had come over a moving picture, before the detector confirmed the change; the mean read that
    # subtitle, and its cue began 4 frames early. Frames in which a new state is pending are not the read's.
    from types import SimpleNamespace

    zone, sent, reads, seg, frames = _gathering_zone()
    zone.detector = SimpleNamespace(unlike=False)  # type: ignore[assignment]
    zone.handle([SegmentStarted(seg), ReadRequest(seg, Timestamp(12, TB), Timestamp(10, TB), ReadReason.NEW)],
                frames[12], reads)  # type: ignore[arg-type]
    for k in range(13, 22):
        zone.detector.unlike = k in (15, 16)  # type: ignore[misc]
        zone.handle([], frames[k], reads)  # type: ignore[arg-type]
    assert len(sent.fused) == 1 and sent.fused[0][1] is not None
    assert int(sent.fused[0][1][0, 0, 0]) == 65  # the mean of frames 12-14, not 12-16 (70)  # type: ignore[index]
