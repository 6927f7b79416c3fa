"""--lang reads with Tesseract on PP-OCR's detector boxes: a band wider than the detector's input where the
detector boxes nothing is looked at again nearer full resolution, as PP-OCR's own band read does (a tight
720p crop of one Arabic line, shrunk to the detector's 736 px input, gave no box and the cue was missed)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from vidocr.engines.rapid import BLANK_RETRY_LIMIT, read_band_tesseract


@dataclass
class _Config:
    det_limit_side: int = 736


class _Detector:
    """Boxes the line only when its input is large enough (as the real detector on a thin line)."""

    def __init__(self, needs: int) -> None:
        self.config = _Config()
        self.needs = needs
        self.calls: list[int | None] = []

    def detect(self, image: np.ndarray, det_limit: int | None = None) -> np.ndarray:
        self.calls.append(det_limit)
        if (det_limit or self.config.det_limit_side) < self.needs:
            return np.zeros((0, 4, 2), np.float32)
        return np.array([[[500, 10], [700, 10], [700, 44], [500, 44]]], np.float32)


class _Reader:
    rtl = True

    def read_line(self, crop: np.ndarray) -> tuple[str, float]:
        return ("سنلتقي غدا صباحا", 0.94) if crop.size else ("", 0.0)


def test_a_wide_band_without_boxes_is_detected_again_nearer_full_resolution() -> None:
    image = np.zeros((54, 1280, 3), np.uint8)
    ocr = _Detector(needs=1280)
    result = read_band_tesseract(ocr, _Reader(), image)  # type: ignore[arg-type]
    assert result.text == "سنلتقي غدا صباحا"
    assert ocr.calls == [None, min(1280, BLANK_RETRY_LIMIT)]


def test_the_second_look_only_when_nothing_is_found_in_a_band_wider_than_the_input() -> None:
    found = _Detector(needs=0)
    assert read_band_tesseract(found, _Reader(), np.zeros((54, 1280, 3), np.uint8)).text  # type: ignore[arg-type]
    assert found.calls == [None]
    narrow = _Detector(needs=10_000)
    assert read_band_tesseract(narrow, _Reader(), np.zeros((54, 640, 3), np.uint8)).text == ""  # type: ignore[arg-type]
    assert narrow.calls == [None]
