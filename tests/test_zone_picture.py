"""The zone finder against picture content that votes like subtitles: a book page (rows of dark print away from
the subtitles: it reads as text, but is no subtitle zone) and a shaking picture full of glyph-like detail (it
votes on every row: the band must still be the subtitle's rows)."""

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


def test_a_band_tall_from_picture_detail_shrinks_to_the_subtitle_rows() -> None:
    # Analysis images (640x360): glyph-like picture detail shakes over rows 150-300, a subtitle sits at 315-338.
    from vidocr.region import PpOcrBandReader, _sample_mask, _subtitle_rows, _tall

    rng = np.random.default_rng(11)
    images = []
    for i in range(8):
        image = np.full((360, 640), 80, np.uint8)
        for _ in range(60):
            x, y = int(rng.integers(0, 630)), int(rng.integers(150, 290))
            cv2.rectangle(image, (x - 1, y - 1), (x + 6, y + 12), 10, -1)
            cv2.rectangle(image, (x, y), (x + 5, y + 11), 235, -1)
        text = ["Where were you last night?", "Keep your voice down."][i % 2]
        fill = np.zeros_like(image)
        (w, _), _ = cv2.getTextSize(text, cv2.FONT_HERSHEY_DUPLEX, 0.8, 2)
        cv2.putText(fill, text, ((640 - w) // 2, 333), cv2.FONT_HERSHEY_DUPLEX, 0.8, 255, 2)
        image[cv2.dilate(fill, np.ones((5, 5), np.uint8)) > 0] = 0
        image[fill > 0] = 255
        images.append(image)
    sampled = [_sample_mask(image, 1.0) for image in images]
    found = [(ln.y0, ln.y1, 1.0) for _, lines in sampled for ln in lines]
    assert _tall((150, 340), found)
    read = PpOcrBandReader()
    rows = _subtitle_rows(read, (150, 340), images, sampled)
    assert rows is not None
    lo, hi = rows
    assert 305 <= lo <= 318 and 334 <= hi <= 340, (lo, hi)
    # No centred text read in the rows: the run stays as it is.
    blank = [np.full((360, 640), 80, np.uint8) for _ in images]
    assert _subtitle_rows(read, (150, 340), blank, sampled) == (150, 340)


def test_a_strongest_band_that_reads_as_no_text_gives_way_to_one_that_does() -> None:
    # A panning picture full of bright strokes outvotes short subtitles ("嗯", "Oh.") many times over; where the
    # votes are in doubt, OCR checks the strongest band, and a weaker one that reads as text takes its place.
    from vidocr.region import ZoneWeights, _readable_first
    from vidocr.textmask import TextLine
    from vidocr.types import Box, OcrLine, OcrResult

    image = np.full((100, 64), 20, np.uint8)
    image[60:90] = 200  # where the subtitles are, the fake reader reads text
    images = [image] * 4
    sampled = [(np.zeros((100, 64), np.uint8), [TextLine(0, 10, 50, 16, 3), TextLine(10, 70, 40, 80, 3)])] * 4
    votes = np.zeros(100)
    votes[10:16], votes[70:80] = 3.0, 0.5  # the subtitle run is under the second-zone share of the peak

    def read(crop: np.ndarray) -> OcrResult:
        if crop.mean() < 100:
            return OcrResult()
        return OcrResult(lines=(OcrLine("Oh. OK.", 0.95, Box(0, crop.shape[0] // 2 - 5, 20, 10)),))

    weights = ZoneWeights()
    assert _readable_first(read, [(10, 16)], votes, 6, images, sampled, weights) == [(70, 80)]
    # No band reads as text: none (the caller falls back to the default band).
    assert _readable_first(lambda crop: OcrResult(), [(10, 16)], votes, 6, images, sampled, weights) == []
    # A strongest band that reads is kept as it is.
    assert _readable_first(read, [(70, 80)], votes, 6, images, sampled, weights) == [(70, 80)]


def test_a_band_of_short_cues_is_found_in_the_few_samples_that_show_them() -> None:
    # Cues of 0.3-0.6 s are in few of the zone finder's samples; most samples with lines in the band's rows show the
    # picture between them. Two of eight show a subtitle: the band is a subtitle band.
    from vidocr.region import ZoneWeights, _readable_first
    from vidocr.textmask import TextLine
    from vidocr.types import Box, OcrLine, OcrResult

    picture, subtitle = np.full((100, 64), 20, np.uint8), np.full((100, 64), 200, np.uint8)
    images = [subtitle if k in (1, 6) else picture for k in range(8)]
    sampled = [(np.zeros((100, 64), np.uint8), [TextLine(10, 70, 40, 80, 3)])] * 8
    votes = np.zeros(100)
    votes[70:80] = 3.0

    def read(crop: np.ndarray) -> OcrResult:
        if crop.mean() < 100:
            return OcrResult()
        return OcrResult(lines=(OcrLine("OK.", 0.95, Box(0, crop.shape[0] // 2 - 5, 20, 10)),))

    assert _readable_first(read, [(70, 80)], votes, 6, images, sampled, ZoneWeights()) == [(70, 80)]


def _sign(frame: np.ndarray, text: str, x: int, y: int, plate: tuple[int, int, int]) -> None:
    """Light text on a coloured plate, as shop signs are: closed light glyphs like a subtitle's, no outline."""
    (w, h), _ = cv2.getTextSize(text, cv2.FONT_HERSHEY_DUPLEX, 1.2, 2)
    cv2.rectangle(frame, (x - 14, y - h - 14), (x + w + 14, y + 16), plate, -1)
    cv2.putText(frame, text, (x, y), cv2.FONT_HERSHEY_DUPLEX, 1.2, (245, 245, 245), 2, cv2.LINE_AA)


def test_signs_moving_with_the_picture_above_the_subtitles_are_no_part_of_their_zone(tmp_path: Path) -> None:
    # The libass corpus's third seeds (check 43_ts-signs): shop signs pan through the rows above the subtitles,
    # centred now and then, and read as text at other places in each sample. The band was cut from the signs'
    # rows down to the subtitles' (a 342-pixel band over half the frame), and a sign there was read as a cue
    # before the first subtitle. A renderer draws a subtitle where it drew the one before; text read at another
    # place in another sample moves with the picture: the band is the subtitles' rows.
    lines = ["Where were you last night?", "Keep your voice down.", "I never asked for any of this.", "Turn left."]
    path = tmp_path / "signs.mp4"
    ground = np.tile(np.linspace(70, 150, 720, dtype=np.uint8)[:, None, None], (1, 1280, 3))
    with av.open(str(path), "w") as out:
        stream = out.add_stream("libx264", rate=25)
        stream.width, stream.height, stream.pix_fmt = 1280, 720, "yuv420p"
        for i in range(250):  # 10 s: the camera pans up and across; a subtitle a second, 0.8 s each
            frame = ground.copy()
            _sign(frame, "SALE 50%", 260 + 2 * i, 560 - (i * 3) // 4, (60, 20, 200))
            _sign(frame, "Main Street", 900 - 2 * i, 430 + (i * 2) // 5, (140, 120, 30))
            if i % 25 < 20:
                _subtitle(frame, lines[(i // 25) % len(lines)])
            out.mux(stream.encode(av.VideoFrame.from_ndarray(frame, format="bgr24")))
        out.mux(stream.encode())
    with VideoSource(path) as source:
        zones = find_zones(source, None, None)
    assert len(zones) == 1, [zone.box for zone in zones]
    box = zones[0].box
    # The subtitle's rows (about 628-670) with room for a second line above them, not the signs' rows up to 370.
    assert 540 <= box.y <= 628 and box.y + box.h >= 670, box


def test_text_read_at_another_place_in_another_sample_moves_with_the_picture() -> None:
    from vidocr.region import _moving_texts
    from vidocr.types import Box, OcrLine

    def line(text: str, x: int, y: int, w: int = 120, h: int = 24) -> OcrLine:
        return OcrLine(text, 0.99, Box(x, y, w, h))

    subtitle = line("Where were you last night?", 200, 300)
    # A subtitle shown across two samples is drawn where it was: it does not move; a sign 30 px higher does, and
    # so does one read 60 px to the side on the same rows.
    assert _moving_texts([(0, subtitle), (1, line("Where were you last night?", 202, 301))]) == set()
    assert _moving_texts([(0, line("SALE 50%", 300, 200)), (3, line("SALE 50%", 300, 170))]) == {"sale50"}
    assert _moving_texts([(0, line("EXIT", 100, 200)), (2, line("EXIT", 160, 200))]) == {"exit"}
    # Two signs that met are read as one line: its parts moved when its rows are elsewhere (texts as compared:
    # vidocr.textnorm.comparable).
    glued = _moving_texts([(0, line("咖啡馆 SALE 50%", 150, 136, 200, 47)), (1, line("咖啡馆", 80, 100, 60, 26))])
    assert glued == {"咖啡馆sale50", "咖啡馆"}, glued
    # Two lines of one sample are not one text moving.
    assert _moving_texts([(0, line("EXIT", 100, 200)), (0, line("EXIT", 400, 100))]) == set()
