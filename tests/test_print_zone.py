"""A book page in the picture, printed text filling rows away from the subtitles: its rows vote like a second
subtitle band and OCR reads text there, but it is dark print, not a subtitle zone."""

from __future__ import annotations

from pathlib import Path

import av
import cv2
import numpy as np

from vidocr.region import find_zones
from vidocr.video import VideoSource

WORDS = [
    "the",
    "train",
    "leaves",
    "at",
    "half",
    "past",
    "nine",
    "and",
    "nobody",
    "knows",
    "where",
    "he",
    "went",
    "that",
    "night",
    "we",
    "should",
    "go",
]


def _page(rng: np.random.Generator) -> np.ndarray:
    page = np.full((230, 760, 3), 228, np.uint8)
    for i in range(7):
        text = " ".join(rng.choice(WORDS, 9))
        cv2.putText(page, text, (16, 28 + i * 30), cv2.FONT_HERSHEY_COMPLEX, 0.75, (35, 35, 35), 2, cv2.LINE_AA)
    return page


def _subtitle(frame: np.ndarray, text: str) -> None:
    fill = np.zeros(frame.shape[:2], np.uint8)
    (w, _), _ = cv2.getTextSize(text, cv2.FONT_HERSHEY_DUPLEX, 1.5, 3)
    cv2.putText(fill, text, ((frame.shape[1] - w) // 2, 660), cv2.FONT_HERSHEY_DUPLEX, 1.5, 255, 3)
    frame[cv2.dilate(fill, np.ones((7, 7), np.uint8)) > 0] = 0
    frame[fill > 0] = 255


def _video(path: Path) -> None:
    rng = np.random.default_rng(3)
    lines = ["Where were you last night?", "Keep your voice down.", "I never asked for any of this.", "Turn left."]
    pages = [_page(rng) for _ in range(4)]
    sky = np.tile(np.linspace(60, 140, 720, dtype=np.uint8)[:, None, None], (1, 1280, 3))
    with av.open(str(path), "w") as out:
        stream = out.add_stream("libx264", rate=25)
        stream.width, stream.height, stream.pix_fmt = 1280, 720, "yuv420p"
        for i in range(200):  # 8 s: a page turned every 2 s, drifting with a slow pan; a subtitle a second
            frame = sky.copy()
            x = 200 + (i % 50) * 2
            frame[180:410, x : x + 760] = pages[i // 50]
            if i % 25 < 20:
                _subtitle(frame, lines[(i // 25) % len(lines)])
            out.mux(stream.encode(av.VideoFrame.from_ndarray(frame, format="bgr24")))
        out.mux(stream.encode())


def test_a_book_page_is_no_subtitle_zone(tmp_path: Path) -> None:
    path = tmp_path / "page.mp4"
    _video(path)
    with VideoSource(path) as source:
        zones = find_zones(source, None, None)
    assert zones, "the subtitles' zone is found"
    assert all(zone.box.y >= 450 for zone in zones), [zone.box for zone in zones]
    assert any(zone.box.y <= 640 <= zone.box.y + zone.box.h for zone in zones)
