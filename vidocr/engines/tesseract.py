"""Tesseract 5 LSTM as the line recogniser for scripts PP-OCR cannot read (Hangul, Cyrillic, Arabic, Thai,
Devanagari...), on the line boxes of the PP-OCR detector (:mod:`vidocr.engines.rapid` runs both).

Measured on subtitle-like lines (white text, black outline, photo backgrounds): Tesseract needs the glyphs
binarised black on white (3-10x worse without), one text line per call (``PSM.RAW_LINE``: ``SINGLE_LINE`` gave
empty text for many Arabic lines) and a crop tight around the ink (blank margins become ":" or "." at the ends
of a raw line). Glyph pixels are found the way the text mask finds them (:mod:`vidocr.textmask`): bright on
the strongest colour channel (so yellow and coloured subtitles too) with a dark rim nearby; a bright region is
a glyph only when its outline encloses it (picture next to the outline, or touching the crop's edge, is not).

One ``PyTessBaseAPI`` per OCR thread (the API object is not thread-safe; tesserocr releases the GIL while it
recognises), each with one OpenMP thread.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from vidocr.errors import EngineError, EngineUnavailable
from vidocr.langs import RTL, SCRIPTS, UNSPACED, apt_package, installed_packs, main_script, tessdata_dir
from vidocr.textmask import BRIGHT_MIN, edge_mask

os.environ.setdefault("OMP_THREAD_LIMIT", "1")  # parallelism comes from our threads, as with ONNX Runtime

_BIDI_MARKS = str.maketrans("", "", "\u200e\u200f\u202a\u202b\u202c")


#: Glyph pixels for Tesseract are at least this bright: stricter than the text mask's BRIGHT_MIN, which wants
#: every glyph pixel, where Tesseract wants clean strokes (compressed edges bled into neighbours at 140).
GLYPH_MIN = max(BRIGHT_MIN, 170)
#: A bright region is a glyph when at least this share of its boundary has a dark rim (a glyph is enclosed by
#: its outline; picture next to the outline touches it on one side only).
RIMMED_SHARE = 0.8
_KERNEL3 = np.ones((3, 3), np.uint8)


def glyph_image(crop: np.ndarray) -> np.ndarray | None:
    """A BGR line crop -> its glyphs black on white, cut tight around them with a margin (None: no glyphs)."""
    bright = crop.max(axis=2) if crop.ndim == 3 else crop
    rimmed = edge_mask(bright, 1.0)  # the text mask's glyph pixels: bright, with a dark pixel within two
    glyph = (bright >= GLYPH_MIN).view(np.uint8)
    count, labels = cv2.connectedComponents(glyph, connectivity=8)
    inner: np.ndarray = cv2.erode(glyph, _KERNEL3)
    boundary = (glyph > 0) & (inner == 0)
    edge_px = np.bincount(labels[boundary], minlength=count)
    rim_px = np.bincount(labels[boundary & (rimmed > 0)], minlength=count)
    keep = (edge_px > 0) & (rim_px >= RIMMED_SHARE * edge_px)
    keep[0] = False
    keep[np.unique(np.concatenate([labels[0], labels[-1], labels[:, 0], labels[:, -1]]))] = False
    ink = keep[labels]
    ys, xs = np.nonzero(ink)
    if not len(xs):
        return None
    ink = ink[ys.min() : ys.max() + 1, xs.min() : xs.max() + 1]
    pad = max(2, int(0.2 * ink.shape[0]))
    image = np.where(ink, 0, 255).astype(np.uint8)
    return cv2.copyMakeBorder(image, pad, pad, pad, pad, cv2.BORDER_CONSTANT, value=255)


class TesseractReader:
    """Recognise single text lines with one language pack combination (``"kor"``, ``"rus+eng"``)."""

    def __init__(self, lang: str, folder: Path | None = None) -> None:
        try:
            import tesserocr
        except ImportError as exc:
            raise EngineUnavailable("Tesseract is not installed: pip install 'vidocr[tesseract]'") from exc
        self._tesserocr: Any = tesserocr
        self.lang = lang
        self.folder = folder or tessdata_dir()
        have = installed_packs()
        missing = [p for p in lang.split("+") if p not in have]
        if missing or self.folder is None:
            names = " ".join(apt_package(p) for p in missing or lang.split("+"))
            raise EngineUnavailable(f"Tesseract language pack not installed: apt-get install {names}")
        scripts = {s.name for s in SCRIPTS.values() if s.pack in lang.split("+")}
        self.unspaced = bool(scripts & UNSPACED)
        self.rtl = bool(scripts & RTL)
        self._local = threading.local()
        self._apis: list[Any] = []
        self._lock = threading.Lock()
        self._api()  # a broken pack fails now, in one line, not on the first read

    def _api(self) -> Any:
        api = getattr(self._local, "api", None)
        if api is None:
            tess = self._tesserocr
            try:
                api = tess.PyTessBaseAPI(path=str(self.folder), lang=self.lang, psm=tess.PSM.RAW_LINE,
                                         oem=tess.OEM.LSTM_ONLY)
            except RuntimeError as exc:
                raise EngineError(f"Tesseract could not load {self.lang!r} from {self.folder}: {exc}") from exc
            self._local.api = api
            with self._lock:
                self._apis.append(api)
        return api

    def recognize(self, crops: Sequence[np.ndarray]) -> list[tuple[str, float]]:
        """Text and confidence (0-1) of each BGR line crop, in order."""
        return [self.read_line(crop) for crop in crops]

    def read_line(self, crop: np.ndarray) -> tuple[str, float]:
        image = glyph_image(crop)
        if image is None:
            return "", 0.0
        return self.read_glyphs(image)

    def read_glyphs(self, image: np.ndarray) -> tuple[str, float]:
        """Read a black-on-white line image (from :func:`glyph_image`)."""
        from PIL import Image

        tess = self._tesserocr
        api = self._api()
        api.SetImage(Image.fromarray(image))
        api.Recognize()
        # Logical order for right-to-left text; Tesseract wraps RTL runs in direction marks.
        text = " ".join(api.GetUTF8Text().translate(_BIDI_MARKS).split())
        conf = _calibrated(api.MeanTextConf() / 100.0)
        # Words Tesseract made up in blank space (a raw line's ends: ":", ".", "|") have no ink under them.
        junk = []
        for word in tess.iterate_level(api.GetIterator(), tess.RIL.WORD):
            box = word.BoundingBox(tess.RIL.WORD)
            if box is None:
                continue
            x0, y0, x1, y1 = box
            if not np.any(image[y0:y1, x0:x1] == 0):
                junk.append(" ".join(word.GetUTF8Text(tess.RIL.WORD).translate(_BIDI_MARKS).split()))
        text = _strip_ends(text, [j for j in junk if j])
        if self.unspaced:
            text = _unspace(text)
        return text, conf

    def close(self) -> None:
        with self._lock:
            apis, self._apis = self._apis, []
        for api in apis:
            api.End()


def _calibrated(mean_word_conf: float) -> float:
    """Tesseract's mean word confidence on PP-OCR's scale, as the merger reads it (it ignores reads under 0.7):
    one wrong short word pulls Tesseract's mean to ~0.5 on a line that is ~90% right, where PP-OCR would say
    ~0.85; on our subtitle lines a mean of 0.4 or more was a mostly right line."""
    return 0.5 + 0.5 * min(1.0, max(0.0, mean_word_conf))


def _strip_ends(text: str, junk: list[str]) -> str:
    changed = True
    while changed and text:
        changed = False
        for word in junk:
            if text.startswith(word):
                text, changed = text[len(word) :].strip(), True
            if word and text.endswith(word):
                text, changed = text[: -len(word)].strip(), True
    return text


def _unspace(text: str) -> str:
    """Drop spaces between two letters of an unspaced script (Thai): the recogniser's word guesses, not gaps."""
    parts = text.split(" ")
    out = parts[0]
    for part in parts[1:]:
        if out and part and main_script(out[-1]) in UNSPACED and main_script(part[0]) in UNSPACED:
            out += part
        else:
            out += " " + part
    return out
