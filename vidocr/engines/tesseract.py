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
from vidocr.langs import (
    RTL,
    SCRIPTS,
    UNSPACED,
    apt_package,
    cyrillic_twins,
    installed_packs,
    main_script,
    tessdata_dir,
)
from vidocr.textmask import BRIGHT_MIN, edge_mask


def load_tesserocr() -> Any:
    """tesserocr, with its OpenMP limited to one thread (parallelism comes from our threads, as with ONNX
    Runtime). OMP_THREAD_LIMIT is read when the library loads; it is set for the import only: left in the
    environment it reaches every process started later, and vLLM's CPU engine computes wrong logits under it."""
    saved = os.environ.get("OMP_THREAD_LIMIT")
    os.environ.setdefault("OMP_THREAD_LIMIT", "1")
    try:
        import tesserocr

        return tesserocr
    finally:
        if saved is None:
            os.environ.pop("OMP_THREAD_LIMIT", None)

_BIDI_MARKS = str.maketrans("", "", "\u200e\u200f\u202a\u202b\u202c")


#: Glyph pixels for Tesseract are at least this bright: stricter than the text mask's BRIGHT_MIN, which wants
#: every glyph pixel, where Tesseract wants clean strokes (compressed edges bled into neighbours at 140).
GLYPH_MIN = max(BRIGHT_MIN, 170)
#: A bright region is a glyph when at least this share of its boundary has a dark rim (a glyph is enclosed by
#: its outline; picture next to the outline touches it on one side only).
RIMMED_SHARE = 0.8
_KERNEL3 = np.ones((3, 3), np.uint8)
#: Kept regions whose mean colour is further than this (BGR distance) from the text's are picture in a hole.
TEXT_COLOUR_DISTANCE = 60.0
#: Crops of these scripts are enlarged before binarising: Hangul packs many strokes into a syllable and Thai
#: stacks small marks, and at subtitle sizes (~40 px) neighbouring strokes merge (bench/multilingual.py, CER at
#: 1x -> 2x: Hangul 5.1% -> 2.1%, Thai 2.6% -> 1.3%; Cyrillic, Arabic, Devanagari: within 0.3%, 1.3-1.5x slower).
UPSCALE = {"Hangul": 2.0, "Thai": 2.0}
#: Line crops shorter than this (pixels, the detector's box with line_crop's margins) are enlarged to it, up to
#: MAX_UPSCALE: Tesseract reads small text (360p releases: ~27 px letters, ~38 px crops) and Arabic dots far
#: better from a crop enlarged before binarising, where the threshold then follows the strokes at sub-pixel
#: detail (libass lines, CER at 1x -> this: Arabic 720p 3.0% -> 1.8%, 360p 39% -> 21% on the fonts it was tuned
#: on, 1.3% -> 0.4% and 36% -> 13% on others; Russian 360p 4.9% -> 0.0%; bench/multilingual.py --libass).
MIN_HEIGHT = 120
MAX_UPSCALE = 4.0


def glyph_image(crop: np.ndarray) -> np.ndarray | None:
    """A BGR line crop -> its glyphs black on white, cut tight around them with a margin (None: no glyphs)."""
    bright = crop.max(axis=2) if crop.ndim == 3 else crop
    rimmed = edge_mask(bright, 1.0)  # the text mask's glyph pixels: bright, with a dark pixel within two
    ink = _enclosed(crop, (bright >= GLYPH_MIN).view(np.uint8), rimmed, RIMMED_SHARE)
    if np.count_nonzero(ink.any(axis=0)) < 0.3 * crop.shape[1]:
        # Text without an outline on a light picture (thin captions): its glyphs merge with the picture at a
        # fixed level; the crop's own Otsu level (text brighter than what surrounds it) separates them.
        level, _ = cv2.threshold(bright, 0, 255, cv2.THRESH_BINARY + cv2.THRESH_OTSU)
        ink = _enclosed(crop, (bright > level).view(np.uint8), rimmed, 0.0)
    ink = _fill_gaps(crop, bright, rimmed, ink)
    ys, xs = np.nonzero(ink)
    if not len(xs):
        return None
    ink = ink[ys.min() : ys.max() + 1, xs.min() : xs.max() + 1]
    pad = max(2, int(0.2 * ink.shape[0]))
    image = np.where(ink, 0, 255).astype(np.uint8)
    return cv2.copyMakeBorder(image, pad, pad, pad, pad, cv2.BORDER_CONSTANT, value=255)


def _fill_gaps(crop: np.ndarray, bright: np.ndarray, rimmed: np.ndarray, ink: np.ndarray) -> np.ndarray:
    """Stretches of the crop without ink, 1.5x wider than the crop is tall, beside or between found glyphs: part
    of a line without an outline over a lighter picture, where the fixed level takes the picture too (the real
    Russian clip lost "ЭТО ГЛАЗА, В КОТ" of a line over a light eyebrow); each is binarised with its own Otsu
    level, as a whole crop is when little ink is found. Outlined lines have no such stretches (libass lines of
    the five scripts read the same).

    At either end of the crop a single such glyph is narrower than that (the real clip's "ОНА НЕОСЯЗАЕМА" read
    "НА ...": its "О" over a lighter part of the picture merged with it at the fixed level): a stretch from the
    crop's edge to the first or last found glyph, whatever its width, is binarised the same way, and only what is
    shaped like a glyph of the line is taken from it (see _line_glyphs): a blank margin's Otsu level splits noise
    and picture, not glyphs."""
    height, width = bright.shape
    has = np.asarray(ink.any(axis=0), dtype=bool)
    if not has.any():
        return ink
    rows = np.flatnonzero(ink.any(axis=1))
    out = ink
    x = 0
    while x < width:
        if has[x]:
            x += 1
            continue
        end = x
        while end < width and not has[end]:
            end += 1
        wide = end - x >= 1.5 * height
        if wide or x == 0 or end == width:
            part = bright[:, x:end]
            level, _ = cv2.threshold(part, 0, 255, cv2.THRESH_BINARY + cv2.THRESH_OTSU)
            found = _enclosed(crop[:, x:end], (part > level).view(np.uint8), rimmed[:, x:end], 0.0)
            if not wide:
                found = _line_glyphs(found, int(rows[0]), int(rows[-1]))
            if found.any():
                out = out.copy() if out is ink else out
                out[:, x:end] |= found
        x = end
    return out


def _line_glyphs(found: np.ndarray, top: int, bottom: int) -> np.ndarray:
    """The regions of ``found`` shaped like a glyph of the line whose found ink spans rows ``top`` to ``bottom``:
    at least half as tall as that, and on those rows (their middle row inside them)."""
    _, labels, stats, _ = cv2.connectedComponentsWithStats(found.view(np.uint8), connectivity=8)
    y, h = stats[:, cv2.CC_STAT_TOP], stats[:, cv2.CC_STAT_HEIGHT]
    middle = y + h / 2
    keep = (h >= 0.5 * (bottom - top + 1)) & (middle >= top) & (middle <= bottom + 1)
    keep[0] = False
    kept: np.ndarray = keep[labels]
    return kept


def _enclosed(crop: np.ndarray, glyph: np.ndarray, rimmed: np.ndarray, share: float) -> np.ndarray:
    """The regions of ``glyph`` (uint8 0/1) whose boundary is at least ``share`` rimmed, that do not touch
    the crop's edge (picture continues past it; a glyph lies inside its box) and that have the text's colour:
    the picture seen through a letter's hole ("ㅇ", "o") is enclosed by the outline too."""
    count, labels = cv2.connectedComponents(glyph, connectivity=8)
    inner: np.ndarray = cv2.erode(glyph, _KERNEL3)
    boundary = (glyph > 0) & (inner == 0)
    edge_px = np.bincount(labels[boundary], minlength=count)
    rim_px = np.bincount(labels[boundary & (rimmed > 0)], minlength=count)
    keep = (edge_px > 0) & (rim_px >= share * edge_px)
    keep[0] = False
    keep[np.unique(np.concatenate([labels[0], labels[-1], labels[:, 0], labels[:, -1]]))] = False
    if crop.ndim == 3 and np.count_nonzero(keep) > 1:
        area = np.bincount(labels.ravel(), minlength=count).astype(np.float64)
        colour = np.stack(
            [np.bincount(labels.ravel(), crop[..., c].ravel().astype(np.float64), count) for c in range(3)], axis=1
        ) / np.maximum(area, 1)[:, None]
        ids = np.flatnonzero(keep)
        # The text's colour: the area-weighted median of the kept regions (holes are few and small).
        order = ids[np.argsort(colour[ids].sum(axis=1))]
        cumulative = np.cumsum(area[order])
        text = colour[order[np.searchsorted(cumulative, cumulative[-1] / 2)]]
        keep[ids] = np.linalg.norm(colour[ids] - text, axis=1) <= TEXT_COLOUR_DISTANCE
    ink = keep[labels].view(np.uint8)
    # A region inside another's hole (the picture inside "ㅇ" or "ㅁ", past the ring of the outline) is a
    # counter, not a glyph: no script we read nests one glyph in another's hole.
    contours, hierarchy = cv2.findContours(ink, cv2.RETR_TREE, cv2.CHAIN_APPROX_SIMPLE)
    if hierarchy is not None:
        parents = hierarchy[0][:, 3]
        nested = [c for i, c in enumerate(contours) if parents[i] >= 0 and parents[parents[i]] >= 0]
        if nested:
            ink = ink.copy()
            cv2.drawContours(ink, nested, -1, 0, thickness=cv2.FILLED)
    kept: np.ndarray = ink > 0
    return kept


class TesseractReader:
    """Recognise single text lines with one language pack combination (``"kor"``, ``"rus+eng"``)."""

    def __init__(self, lang: str, folder: Path | None = None) -> None:
        try:
            tesserocr = load_tesserocr()
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
        self.cyrillic = "Cyrillic" in scripts
        self.upscale = max((UPSCALE.get(name, 1.0) for name in scripts), default=1.0)
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
            # Our images are always black glyphs on white: Tesseract 5 would recognise a line again inverted
            # when it is unsure of it (~10% of its recognition time on Hangul lines, same text).
            api.SetVariable("tessedit_do_invert", "0")
            self._local.api = api
            with self._lock:
                self._apis.append(api)
        return api

    def recognize(self, crops: Sequence[np.ndarray]) -> list[tuple[str, float]]:
        """Text and confidence (0-1) of each BGR line crop, in order."""
        return [self.read_line(crop) for crop in crops]

    def scale(self, height: int) -> float:
        """How much a line crop ``height`` pixels tall is enlarged before binarising."""
        return max(self.upscale, min(MAX_UPSCALE, MIN_HEIGHT / max(1, height)))

    def read_line(self, crop: np.ndarray) -> tuple[str, float]:
        factor = self.scale(crop.shape[0])
        if factor > 1.0:
            crop = cv2.resize(crop, None, fx=factor, fy=factor, interpolation=cv2.INTER_CUBIC)
        image = glyph_image(crop)
        if image is None:
            return "", 0.0
        return self.read_glyphs(image)

    def read_glyphs(self, image: np.ndarray) -> tuple[str, float]:
        """Read a black-on-white line image (from :func:`glyph_image`)."""
        tess = self._tesserocr
        api = self._api()
        # Raw 8-bit pixels: SetImage(PIL image) encodes and decodes an image file while holding the GIL.
        image = np.ascontiguousarray(image, dtype=np.uint8)
        api.SetImageBytes(image.tobytes(), image.shape[1], image.shape[0], 1, image.shape[1])
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
        if self.cyrillic:
            text = cyrillic_twins(text)
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
