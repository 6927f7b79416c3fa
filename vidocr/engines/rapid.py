"""The embedded CPU engine ``rapidocr``: the PP-OCRv6 small det/rec ONNX models shipped inside the
rapidocr wheel, run by :mod:`vidocr.engines.ppocr` (rapidocr's own steps without its slow wrapper).

Tuned for subtitle bands (measured on a 2-core machine): the detector limits the LONG side to 736
pixels, the detection model's own working size (rapidocr's default limits the SHORT side and blew a
1280x180 band up to ~5200x736: 30x slower, and it invented text on empty bands); wide crops get blank
rows up to 16:1 rather than rapidocr's 4:1 (half the detector's work; the same text on our samples and
real clips); recognition reads the lines at full resolution from the original crop; no angle
classifier (subtitles are upright). ONNX Runtime runs one thread per call; parallelism comes from
several calls at once on threads sharing one instance, which scaled better than ORT's intra-op
threads on few cores. Only the default models are used: they are inside the wheel, every other
model would be downloaded at run time.

These models do not read Hangul, Cyrillic, Arabic, Thai or Devanagari (empty text or Latin look-alikes).
For those, :mod:`vidocr.engines.tesseract` recognises the lines this detector finds: chosen by ``--lang``, or
with ``auto`` per video from its first lines (:class:`ScriptChooser`).
"""

from __future__ import annotations

import importlib.util
import logging
import os
import re
import threading
import unicodedata
from collections import Counter
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from typing import TYPE_CHECKING, ClassVar, TypeVar

import numpy as np

from vidocr.engines import EngineOptions
from vidocr.engines.ppocr import CharCols, CharConf, PpOcr, PpOcrConfig, Span, SpannedPiece
from vidocr.errors import EngineError
from vidocr.langs import (
    SCRIPTS,
    apt_package,
    installed_packs,
    script_counts,
    tesseract_packs,
)
from vidocr.lexicon import lists_for
from vidocr.types import Box, OcrLine, OcrPart, OcrResult, Task

if TYPE_CHECKING:
    from vidocr.engines.tesseract import TesseractReader

log = logging.getLogger("vidocr")
_T = TypeVar("_T")


#: The detector's input size for a second look at a band where the first found nothing (see read_band).
BLANK_RETRY_LIMIT = 1280
#: ...and the most a band narrower than the detector's input is scaled up for that look.
BLANK_RETRY_UPSCALE = 2.0


def blank_retry(ocr: PpOcr, image: np.ndarray) -> tuple[int, bool] | None:
    """The detector's input size (and whether that scales the band up) for a second look at a band where the
    first found nothing; None where the first look already saw the band as large as a second one would.

    A band wider than the detector's input is looked at again nearer full resolution: shrunk to the input
    size, a short small word ("Oh.") in a wide band is a few pixels high. A band narrower than that (360p video)
    is looked at again scaled up: its ~20-px subtitle in heavy compression noise is often too faint or too
    small for the detector at its own size, while the recogniser still reads the line from the band itself."""
    width = image.shape[1]
    if width > ocr.config.det_limit_side:
        return min(width, BLANK_RETRY_LIMIT), False
    size = min(int(width * BLANK_RETRY_UPSCALE), BLANK_RETRY_LIMIT)
    return (size, True) if size > max(image.shape[:2]) else None


def build_ocr(options: EngineOptions | None = None) -> PpOcr:
    """The PP-OCR runner with our subtitle settings; ``extra["ppocr"]`` overrides :class:`PpOcrConfig` fields."""
    overrides = dict((options.extra if options else {}).get("ppocr", {}))
    base = PpOcrConfig(lexicon=lists_for(options.lang if options else ()))
    try:
        return PpOcr(replace(base, **overrides))
    except TypeError as exc:
        raise EngineError(f"unknown ppocr setting: {exc}") from exc


def read_band(ocr: PpOcr, image: np.ndarray) -> OcrResult:
    """Detect and recognise one BGR band crop and rebuild lines from its boxes (see spanned_pieces)."""
    pieces, cols, chars, at = [], [], [], []
    for found in read_all_again(ocr, image):
        if not ocr.kept(found[:3]):
            continue
        for piece, piece_cols, piece_chars, piece_at in spanned_pieces(*found):
            pieces.append(piece)
            cols.append(piece_cols)
            chars.append(piece_chars)
            at.append(piece_at)
    return OcrResult(lines=tuple(group_lines(pieces, cols=cols, chars=chars, at=at)))


#: A box for group_lines: x0, y0, x1, y1, text, score.
BoxPiece = tuple[float, float, float, float, str, float]
#: A :data:`BoxPiece` with the columns where its text is, its characters' probabilities and the column of each of
#: its characters (in the image), when known.
SpannedBox = tuple[BoxPiece, tuple[float, float] | None, tuple[float, ...] | None, tuple[float, ...] | None]


def spanned_pieces(
    quad: np.ndarray, text: str, score: float, span: Span, probs: CharConf, at: CharCols
) -> list[SpannedBox]:
    """A recognised box as boxes for group_lines, each with the columns where its text is, its characters'
    probabilities and columns (when known). A box whose text runs from CJK into other letters or back is cut there into
    boxes of its own (see script_runs): they stay parts of one line, and the layout can keep the one that is a
    subtitle."""
    x0, y0 = (float(v) for v in quad.min(axis=0))
    x1, y1 = (float(v) for v in quad.max(axis=0))
    runs = script_runs(text) if len(at) == len(text) == len(probs) else [(0, len(text))]
    if len(runs) > 1:
        w = x1 - x0
        cuts = [x0 + w * (at[_last(text, a, b)] + at[_first(text, b, c)]) / 2
                for (a, b), (_, c) in zip(runs, runs[1:], strict=False)]
        out: list[SpannedBox] = []
        for k, ((a, b), left, right) in enumerate(zip(runs, [x0, *cuts], [*cuts, x1], strict=True)):
            i, j = _first(text, a, b), _last(text, a, b) + 1
            cols = (x0 + w * at[i], x0 + w * at[j - 1])
            j += k < len(runs) - 1 and j < b  # a space between two runs stays, at the end of the first
            part = probs[i:j]
            out.append(((left, y0, right, y1, text[i:j], float(np.mean(part))), cols, part,
                        tuple(x0 + w * a for a in at[i:j])))
        return out
    lead = len(text) - len(text.lstrip())
    whole = (x0 + span[0] * (x1 - x0), x0 + span[1] * (x1 - x0)) if span else None
    chars = probs[lead : lead + len(text.strip())] if len(probs) == len(text) else None
    where = tuple(x0 + (x1 - x0) * a for a in at[lead : lead + len(text.strip())]) if len(at) == len(text) else None
    return [((x0, y0, x1, y1, text.strip(), score), whole, chars, where)]


#: A run of a box's text in one script is cut off as a box of its own from this many letters (or digits) of
#: its script on both sides of the cut: a CJK subtitle glued to an English sign or page in one detector box
#: ("这封信是在他外套里找到的SALE 50%"); the layout keeps the run that is centred (SubtitleLayout._trimmed),
#: and drops the runs of print by their own glyph fill.
SCRIPT_RUN_MIN = 2


def script_runs(text: str) -> list[tuple[int, int]]:
    """``text`` as runs (start, end) of CJK and of other letters and digits, each with the spaces and punctuation
    after it; runs of fewer than SCRIPT_RUN_MIN letters belong to the run before them (or after, at the start)."""
    runs: list[list[int | str]] = []  # [start, end, script, letters]
    for i, char in enumerate(text):
        script = _script_of(char)
        if runs and (script is None or script == runs[-1][2]):
            runs[-1][1] = i + 1
            runs[-1][3] = int(runs[-1][3]) + (script is not None)
        elif script is not None:
            runs.append([i if runs else 0, i + 1, script, 1])
    merged: list[list[int | str]] = []
    for run in runs:
        if merged and (int(run[3]) < SCRIPT_RUN_MIN or run[2] == merged[-1][2]):
            merged[-1][1] = run[1]
            merged[-1][3] = int(merged[-1][3]) + int(run[3])
        elif merged and int(merged[-1][3]) < SCRIPT_RUN_MIN:
            merged[-1][1:] = [run[1], run[2], int(merged[-1][3]) + int(run[3])]
        else:
            merged.append(run)
    if not merged:
        return [(0, len(text))]
    merged[-1][1] = len(text)
    return [(int(r[0]), int(r[1])) for r in merged]


def _script_of(char: str) -> str | None:
    if char.isdigit() and char.isascii():
        return "Latin"
    return next(iter(script_counts(char)), None)


def _first(text: str, start: int, end: int) -> int:
    """The first character of ``text[start:end]`` that is not a space."""
    return next((i for i in range(start, end) if not text[i].isspace()), start)


def _last(text: str, start: int, end: int) -> int:
    """The last character of ``text[start:end]`` that is not a space."""
    return next((i for i in range(end - 1, start - 1, -1) if not text[i].isspace()), end - 1)


def read_all_again(ocr: PpOcr, image: np.ndarray) -> list[SpannedPiece]:
    """``ocr.read_all(image)``, and when that finds no line it is sure of, again with the detector seeing the
    band larger (:func:`blank_retry`). Only reads that find nothing pay for the second look."""
    found = ocr.read_spans(image)
    retry = blank_retry(ocr, image)
    if retry is None or any(ocr.kept(p[:3]) for p in found):
        return found
    again = ocr.read_spans(image, det_limit=retry[0], upscale=retry[1])
    if retry[1] and not any(ocr.kept(p[:3]) for p in again):
        # Scaled up, compression noise in an empty band is boxed as faint specks: only lines read surely
        # count (an unsure speck would vote on the video's script, ScriptChooser).
        return found
    return again


def reread_band(
    ocr: PpOcr, image: np.ndarray, prior: OcrResult, reader: TesseractReader | None = None
) -> OcrResult | None:
    """Recognise only ``prior``'s line boxes in ``image`` (no detection: ~40% of a read's cost).

    Returns the prior's lines with fresh confidences when every line reads back the same text
    (whitespace aside), None when it does not or a box is not inside the image: then a full read
    must decide.
    """
    height, width = image.shape[:2]
    crops = []
    for line in prior.lines:
        b = line.box
        if b is None or b.w < 4 or b.h < 4:
            return None
        x0, y0, x1, y1 = max(0, b.x), max(0, b.y), min(width, b.x + b.w), min(height, b.y + b.h)
        if (x1 - x0) < 0.95 * b.w or (y1 - y0) < 0.9 * b.h:
            return None
        crops.append(image[y0:y1, x0:x1] if reader is None else line_crop(image, x0, y0, x1, y1))
    if not crops:
        return None
    lines = []
    texts: Sequence[tuple[str, float, object, tuple[float, ...], tuple[float, ...]]]
    if reader is None:
        texts = ocr.recognize_chars(crops)
    else:
        texts = [(text, score, None, (), ()) for text, score in reader.recognize(crops)]
    min_score = ocr.config.text_score if reader is None else TESS_MIN_CONF
    for line, (text, score, _, probs, _) in zip(prior.lines, texts, strict=True):
        if score < min_score or not _reads_back(_squash(str(text)), _squash(line.text), reader is not None):
            return None
        # This read's character probabilities where it read the line as written (spaces too).
        known = tuple(probs) if str(text) == line.text and len(probs) == len(line.text) else None
        lines.append(replace(line, confidence=float(score), fill=None, ink=None, char_conf=known))
    return OcrResult(lines=tuple(lines), confirmed=True)


#: Tesseract lines read with less (calibrated) confidence than this are dropped (picture detail in a box).
TESS_MIN_CONF = 0.65


def line_crop(image: np.ndarray, x0: float, y0: float, x1: float, y1: float) -> np.ndarray:
    """A detector box with a margin for Tesseract: the box may clip a glyph's outline, and widely spaced
    single leading letters ("И", "В") can fall just outside it."""
    h = max(1.0, y1 - y0)
    height, width = image.shape[:2]
    return image[max(0, int(y0 - 0.1 * h)) : min(height, int(y1 + 0.1 * h) + 1),
                 max(0, int(x0 - 0.3 * h)) : min(width, int(x1 + 0.3 * h) + 1)]


def read_band_tesseract(ocr: PpOcr, reader: TesseractReader, image: np.ndarray) -> OcrResult:
    """PP-OCR's detector finds the lines, Tesseract reads them. As :func:`read_all_again`, a band wider than
    the detector's input where no line is kept is looked at again nearer full resolution (shrunk to the input
    size, a tight crop of one line is a few pixels high, and the detector may box nothing)."""

    def read(quads: np.ndarray) -> list[tuple[float, float, float, float, str, float]]:
        pieces = []
        for quad in quads:
            x0, y0 = quad.min(axis=0)
            x1, y1 = quad.max(axis=0)
            text, conf = reader.read_line(line_crop(image, x0, y0, x1, y1))
            if text and conf >= TESS_MIN_CONF:
                pieces.append((float(x0), float(y0), float(x1), float(y1), text, conf))
        return pieces

    pieces = read(ocr.detect(image))
    if not pieces and image.shape[1] > ocr.config.det_limit_side:
        pieces = read(ocr.detect(image, det_limit=min(image.shape[1], BLANK_RETRY_LIMIT)))
    return OcrResult(lines=tuple(group_lines(pieces, rtl=reader.rtl)))


def _reads_back(new: str, old: str, tesseract: bool) -> bool:
    """Whether a re-read of a line's box shows the line read before. PP-OCR reads a line the same way on
    every frame; Tesseract swaps a character now and then as the picture behind changes ("พรุ่งนี้" /
    "พรุ่งพี้" across a cut), which would split one subtitle into two cues: one swap in 8 characters is the
    same line (a changed subtitle changes its length or more characters)."""
    if new == old:
        return True
    if not tesseract or len(new) != len(old):
        return False
    return sum(a != b for a, b in zip(new, old, strict=True)) <= len(old) // 8


def _squash(text: str) -> str:
    return "".join(unicodedata.normalize("NFKC", text).split())


def group_lines(
    pieces: list[tuple[float, float, float, float, str, float]],
    rtl: bool = False,
    cols: Sequence[tuple[float, float] | None] | None = None,
    chars: Sequence[tuple[float, ...] | None] | None = None,
    at: Sequence[tuple[float, ...] | None] | None = None,
) -> list[OcrLine]:
    """Group detected boxes into visual lines (top to bottom) and join each line's boxes left to right
    (right to left for ``rtl`` scripts: the text stays in logical order). ``cols``: for each piece, the
    columns where the recogniser found its text (see PpOcr.recognize_spans), when known; ``chars``: the
    probability of each character of its text, when known (a space joining two boxes counts as sure); ``at``: the
    column of each character of its text, when known (a space joining two boxes is between them).

    Boxes on one line are joined with a space when the gap between them is wider than a third of the
    line height (the recogniser drops such spaces; CJK subtitles use them between phrases too).
    """
    Piece = tuple[float, float, float, float, str, float]
    Item = tuple[Piece, tuple[float, float] | None, tuple[float, ...] | None, tuple[float, ...] | None]
    nothing: list[None] = [None] * len(pieces)
    items: list[Item] = sorted(
        zip(pieces, cols or nothing, chars or nothing, at or nothing, strict=True),
        key=lambda i: i[0][1] + i[0][3],
    )
    rows: list[list[Item]] = []
    for item in items:
        p = item[0]
        cy, h = (p[1] + p[3]) / 2, p[3] - p[1]
        for grouped in rows:
            ry0 = min(q[1] for q, *_ in grouped)
            ry1 = max(q[3] for q, *_ in grouped)
            if ry0 <= cy <= ry1 and 0.5 <= h / max(ry1 - ry0, 1.0) <= 2.0 and not any(
                _stacked(p, q) for q, *_ in grouped
            ):
                grouped.append(item)
                break
        else:
            rows.append([item])
    lines = []
    for row_items in rows:
        row_items.sort(key=lambda i: i[0][0])
        row = [q for q, *_ in row_items]
        probs = [c for _, _, c, _ in row_items]
        places = [a for *_, a in row_items]
        height = max(q[3] - q[1] for q in row)
        spaces = [" " if right[0] - left[2] > height / 3 else "" for left, right in zip(row, row[1:], strict=False)]
        order = list(range(len(row)))[::-1] if rtl else list(range(len(row)))  # the text's (logical) order
        text, spans = "", {}
        char_conf: list[float] | None = [] if all(c is not None for c in probs) else None
        char_cols: list[float] | None = [] if all(a is not None for a in places) else None
        for k, i in enumerate(order):
            if k:
                left = min(i, order[k - 1])  # the box left of the space (its right neighbour is the next box)
                space = spaces[left]
                text += space
                if char_conf is not None:
                    char_conf.extend([1.0] * len(space))
                if char_cols is not None:
                    char_cols.extend([(row[left][2] + row[left + 1][0]) / 2] * len(space))
            spans[i] = (len(text), len(text) + len(row[i][4]))
            text += row[i][4]
            if char_conf is not None:
                char_conf.extend(probs[i] or ())
            if char_cols is not None:
                char_cols.extend(places[i] or ())
        total = sum(len(q[4]) for q in row)
        conf = sum(q[5] * len(q[4]) for q in row) / max(total, 1)
        parts = tuple(OcrPart(*spans[i], _box_of(q)) for i, q in enumerate(row)) if len(row) > 1 else ()
        first, last = row_items[0][1], row_items[-1][1]
        text_cols = (int(first[0]), int(round(last[1]))) if first is not None and last is not None else None
        known = tuple(char_conf) if char_conf is not None and len(char_conf) == len(text) else None
        placed = tuple(char_cols) if char_cols is not None and len(char_cols) == len(text) else None
        lines.append(
            OcrLine(text=text, confidence=conf, box=_box_of(*row), parts=parts, text_cols=text_cols, char_conf=known,
                    char_cols=placed)
        )
    return lines


#: Two boxes whose columns overlap by more than this share of the narrower one's, and whose middles are more than
#: STACKED_OFFSET of the taller one's height apart, are one above the other, not side by side on a line (a sign just
#: above a subtitle: 0.40-0.43; a sign's plate low beside a subtitle's first word, on its rows: 0.29; the recogniser's
#: boxes of one line, overlapping where it cut a word: under 0.2).
STACKED = 0.3
STACKED_OFFSET = 0.35


def _stacked(a: BoxPiece, b: BoxPiece) -> bool:
    """Boxes ``a`` and ``b`` share columns, one above the other: a sign in the picture just above a subtitle line,
    whose rows the line's reach; joined left to right, its words would land inside the subtitle's ("Where were you
    last night?NO PARKING")."""
    shared = min(a[2], b[2]) - max(a[0], b[0])
    offset = abs((a[1] + a[3]) - (b[1] + b[3])) / 2
    return shared > STACKED * min(a[2] - a[0], b[2] - b[0]) and offset > STACKED_OFFSET * max(a[3] - a[1], b[3] - b[1])


def _box_of(*pieces: tuple[float, float, float, float, str, float]) -> Box:
    x0, y0 = min(q[0] for q in pieces), min(q[1] for q in pieces)
    x1, y1 = max(q[2] for q in pieces), max(q[3] for q in pieces)
    return Box(int(x0), int(y0), int(round(x1 - x0)), int(round(y1 - y0)))


#: A PP-OCR line at least this sure, without look-alike signs, is in a script PP-OCR reads.
SURE_SCORE = 0.8
#: A probe reading at least this sure (calibrated), in the pack's own script, names the script.
PROBE_CONF = 0.8
#: ...with at least this share of its characters letters of the pack's own script.
PROBE_SHARE = 0.75
#: Lines of a video that decide its script (more when they disagree).
DECIDE_AFTER = 3
DECIDE_MAX = 12
#: A read of at most SPECK_CHARS characters in a box narrower than SPECK_ASPECT times its height is picture
#: detail as often as text (a speck read "1" at 0.2-0.56 before a 360p English video's first subtitle): when no
#: pack reads it surely it does not vote "none" (a pack that does still gets its vote: PP-OCR boxes Arabic words
#: one by one). A box that long read as one or two characters votes as any line ("早" for a line of Hangul).
SPECK_CHARS = 2
SPECK_ASPECT = 4.0
#: ... and the vote a pack gets for a speck counts this much less than a line's while the video is undecided.
SPECK_WEIGHT = 0.5
# Cyrillic or Greek read as Latin look-alikes mixes digits into capital words ("B 4YBCTBAX").
_LOOKALIKE = re.compile(r"\b(?=[A-Z0-9]*[A-Z])(?=[A-Z0-9]*[0-9])[A-Z0-9]{3,}\b")
_PROBE_SCRIPTS = tuple(SCRIPTS.values())
_MAIN_PACKS = ("kor", "rus", "ara", "tha", "hin")
_WITH_ENGLISH = frozenset({"rus"})  # named when no pack reads a video's script


def _sure(text: str, score: float, aspect: float = 0.0) -> bool:
    """Whether a PP-OCR read is surely in a script PP-OCR reads. ``aspect``: its box's width / height; a read
    with far fewer characters than the box holds ("早" for a whole line of Hangul) is not sure."""
    letters = sum(script_counts(text).values())
    short = len("".join(text.split())) < 0.35 * aspect
    return score >= SURE_SCORE and letters > 0 and not short and not _LOOKALIKE.search(text)


class ScriptChooser:
    """``--lang auto``: picks the recogniser of each video from its first lines.

    A line PP-OCR reads surely (no look-alike signs) votes for PP-OCR. Any other line is probed: each installed
    language pack of a script PP-OCR cannot read (kor, rus, ara, tha, hin...) reads it, and a reading that is
    sure and in that pack's own script votes for the pack (a wrong pack reads other scripts as unsure text in
    its own). Lines nobody reads vote "none". After DECIDE_AFTER agreeing lines the video's recogniser is
    fixed; "none" keeps PP-OCR, drops its unsure lines and says once which package to install.
    """

    def __init__(self, ppocr: PpOcr) -> None:
        self._ocr = ppocr
        self._lock = threading.Lock()
        self._readers: dict[str, TesseractReader] = {}
        self._packs: list[str] | None = None
        self.begin_video("")

    def begin_video(self, name: str) -> None:
        with self._lock:
            self.video = name
            self.votes: Counter[str] = Counter()
            self.specks: Counter[str] = Counter()  # the votes of self.votes that specks gave
            self.decided: str | None = None
            self.unread: list[np.ndarray] = []  # crops of lines nothing read, for Tesseract's script detection

    def packs(self) -> list[str]:
        """Installed packs to probe with (none without tesserocr)."""
        if self._packs is None:
            if importlib.util.find_spec("tesserocr") is None:
                self._packs = []
            else:
                have = installed_packs()
                self._packs = [s.pack for s in _PROBE_SCRIPTS if s.pack in have]
        return self._packs

    def reader(self, pack: str) -> TesseractReader:
        with self._lock:
            reader = self._readers.get(pack)
            if reader is None:
                from vidocr.engines.tesseract import TesseractReader

                reader = self._readers[pack] = TesseractReader(pack)
            return reader

    def final(self, pack: str) -> TesseractReader:
        """The reader of a decided pack: Russian with English too where its pack is installed (brand names and
        English words in Russian lines: "iPhone" read by rus alone is "1РНопе"; pure Russian lines read the
        same, bench/multilingual.py; Korean lost accuracy with English added: 2.6% -> 5.6% CER)."""
        if pack in _WITH_ENGLISH and "eng" in installed_packs():
            return self.reader(f"{pack}+eng")
        return self.reader(pack)

    def read(self, image: np.ndarray) -> OcrResult:
        decided = self.decided
        if decided == "ppocr":
            return read_band(self._ocr, image)
        if decided == "none":
            return _sure_only(read_band(self._ocr, image))
        if decided is not None:
            return read_band_tesseract(self._ocr, self.final(decided), image)
        lines = []  # (box, vote, PP-OCR's text and score, the voted pack's text and confidence, crop)
        spanned = []  # each line as PP-OCR read it, for group_lines (spanned_pieces)
        votes = []  # of the lines that are not specks, and of specks a pack read surely
        specks: list[str] = []  # ... those specks' votes
        for found in read_all_again(self._ocr, image):
            quad, text, score = found[:3]
            x0, y0 = quad.min(axis=0)
            x1, y1 = quad.max(axis=0)
            box = (float(x0), float(y0), float(x1), float(y1))
            spanned.append(spanned_pieces(*found))
            text = text.strip()
            crop = line_crop(image, x0, y0, x1, y1)
            aspect = (box[2] - box[0]) / max(1.0, box[3] - box[1])
            if _sure(text, score, aspect):
                lines.append((box, "ppocr", text, score, "", 0.0, crop))
                votes.append("ppocr")
                continue
            speck = len("".join(text.split())) <= SPECK_CHARS and aspect < SPECK_ASPECT
            best: tuple[float, str, str, float] | None = None
            for script in _PROBE_SCRIPTS:
                if script.pack not in self.packs():
                    continue
                probe, conf = self.reader(script.pack).read_line(crop)
                # A wrong pack reads other scripts as its letters mixed with digits and marks ("[10380พห |]อทท").
                share = script_counts(probe).get(script.name, 0) / max(1, len("".join(probe.split())))
                sure = conf >= PROBE_CONF and share >= PROBE_SHARE and len(probe) >= 2
                if sure and (best is None or conf * share > best[0]):
                    best = (conf * share, script.pack, probe, conf)
            if best is not None:
                lines.append((box, best[1], text, score, best[2], best[3], crop))
                if speck:
                    specks.append(best[1])
            else:
                lines.append((box, "none", text, score, "", 0.0, crop))
                if speck:
                    continue  # kept as a line nothing reads, without a vote
                if len(self.unread) < 8:
                    self.unread.append(crop)
            votes.append(lines[-1][1])
        self._vote(votes, specks)
        leader = self.decided or self._leader()
        pieces: list[BoxPiece] = []
        cols: list[tuple[float, float] | None] = []
        chars: list[tuple[float, ...] | None] = []
        at: list[tuple[float, ...] | None] = []
        for (box, vote, text, score, probe, conf, crop), ppocr in zip(lines, spanned, strict=True):
            if leader not in (None, "ppocr", "none"):
                # Lines another recogniser won are read again with the video's (a wrong pack can be surer
                # than the right one on one line; PP-OCR can be sure of a look-alike).
                if vote != leader or leader in _WITH_ENGLISH:
                    probe, conf = self.final(str(leader)).read_line(crop)
                if conf >= TESS_MIN_CONF and probe:
                    pieces.append((*box, probe, conf))
                    cols.append(None)
                    chars.append(None)
                    at.append(None)
            elif vote == "none" and leader == "none":
                continue  # nothing reads it: no look-alike garbage
            elif text and score >= self._ocr.config.text_score:
                for piece, piece_cols, piece_chars, piece_at in ppocr:  # PP-OCR, as without --lang
                    pieces.append(piece)
                    cols.append(piece_cols)
                    chars.append(piece_chars)
                    at.append(piece_at)
        rtl = leader not in (None, "ppocr", "none") and self.reader(str(leader)).rtl
        return OcrResult(lines=tuple(group_lines(pieces, rtl=rtl, cols=cols, chars=chars, at=at)))

    def _leader(self) -> str | None:
        """The recogniser the video leans to before it is decided: the most voted one, "none" only alone. A speck's
        vote (see SPECK_CHARS) counts half here, and a pack wins a tie with PP-OCR, which can be sure of a look-alike
        ("B YYBCTBAX"): an English video's first read boxed a speck the Thai pack read surely, the next read's line
        PP-OCR read surely, and a 1-1 tie re-read that line with the Thai pack, a cue of Thai letters."""
        with self._lock:
            real = [(n - SPECK_WEIGHT * self.specks[k], k != "ppocr", k) for k, n in self.votes.items() if k != "none"]
            if real:
                return max(real)[2]
            return "none" if self.votes else None

    def _vote(self, votes: list[str], specks: list[str]) -> None:
        with self._lock:
            if self.decided is not None or not votes:
                return
            self.votes.update(votes)
            self.specks.update(specks)
            unread = self.votes["none"]
            real = Counter({k: n for k, n in self.votes.items() if k != "none"})
            seen = sum(real.values())
            choice, count = real.most_common(1)[0] if real else ("none", 0)
            if count >= DECIDE_AFTER and count >= 0.6 * seen:
                self.decided = choice  # picture detail that nothing reads ("none") does not count against it
            elif unread >= DECIDE_AFTER + 1 and unread >= 3 * seen:
                self.decided = choice = "none"
            elif seen + unread >= DECIDE_MAX:
                self.decided = choice = choice if unread <= 2 * seen else "none"
            else:
                return
        name = f"{self.video}: " if self.video else ""
        if choice == "none":
            log.warning("%s%s", name, self._uncovered_hint())
        elif choice != "ppocr":
            log.info("%sscript %s: reading with Tesseract (%s)", name, _script_of_pack(choice), choice)

    def _uncovered_hint(self) -> str:
        missing = [s for s in _PROBE_SCRIPTS if s.pack in _MAIN_PACKS and s.pack not in self.packs()]
        what = "the subtitles are in no script the installed recognisers read (not Chinese, Japanese or Latin; " \
               "unsure lines dropped)"
        if not missing:
            return f"{what}; installed Tesseract packs that did not read them: {', '.join(self.packs())}"
        guess = _osd_script(self.unread)
        named = [s for s in missing if s.name == guess]
        if named:
            pack = apt_package(named[0].pack)
            return f"{what}; they look like {guess} script: apt-get install {pack}; then --lang or auto"
        how = ", ".join(f"{apt_package(s.pack)} ({s.name})" for s in missing)
        need = "pip install 'vidocr[tesseract]' and " if importlib.util.find_spec("tesserocr") is None else ""
        return f"{what}: {need}apt-get install the language pack of their script: {how}; then --lang or auto"

    def close(self) -> None:
        with self._lock:
            readers, self._readers = list(self._readers.values()), {}
        for reader in readers:
            reader.close()


#: Tesseract's OSD script names -> ours.
_OSD_SCRIPTS = {"Cyrillic": "Cyrillic", "Arabic": "Arabic", "Thai": "Thai", "Devanagari": "Devanagari",
                "Hangul": "Hangul", "Korean": "Hangul", "Hebrew": "Hebrew", "Greek": "Greek", "Bengali": "Bengali",
                "Tamil": "Tamil"}
#: OSD's script confidence needed to name the script (measured on 6 stacked subtitle lines: Cyrillic 3-22,
#: Arabic 30-63, Thai 63-153; Hangul 0.4-1.1, often called Japanese, so not named).
OSD_MIN_CONF = 2.0


def _osd_script(crops: list[np.ndarray]) -> str | None:
    """The script Tesseract's orientation and script detection sees in lines stacked into one image, when it
    is sure (one line alone is rarely enough); None without tesserocr or its osd pack."""
    if not crops or importlib.util.find_spec("tesserocr") is None or "osd" not in installed_packs():
        return None
    from PIL import Image

    from vidocr.engines.tesseract import glyph_image, load_tesserocr

    tesserocr = load_tesserocr()
    from vidocr.langs import tessdata_dir

    images = [g for g in (glyph_image(c) for c in crops) if g is not None]
    if not images:
        return None
    width = max(g.shape[1] for g in images)
    stacked = np.vstack([np.pad(g, ((4, 4), (0, width - g.shape[1])), constant_values=255) for g in images])
    api = tesserocr.PyTessBaseAPI(path=str(tessdata_dir()), lang="osd", psm=tesserocr.PSM.OSD_ONLY)
    try:
        api.SetImage(Image.fromarray(stacked))
        found = api.DetectOrientationScript()
    except RuntimeError:
        return None
    finally:
        api.End()
    if not found or found.get("script_conf", 0.0) < OSD_MIN_CONF:
        return None
    return _OSD_SCRIPTS.get(str(found.get("script_name")))


def _script_of_pack(pack: str) -> str:
    return next((s.name for s in SCRIPTS.values() if s.pack == pack), pack)


def _sure_only(result: OcrResult) -> OcrResult:
    def sure(line: OcrLine) -> bool:
        aspect = line.box.w / max(1, line.box.h) if line.box is not None else 0.0
        return _sure(line.text, line.confidence, aspect)

    return replace(result, lines=tuple(line for line in result.lines if sure(line)))


class RapidOcrEngine:
    """One RapidOCR instance read from ``workers`` threads (default: one per CPU core).

    ONNX Runtime releases the GIL while a model runs and a session may be run from several threads,
    so threads sharing one instance read as fast as one process per core did (measured: 146 bands,
    2 cores: 3.6 s vs 3.8 s), load the models once instead of once per process (~0.6 CPU-s each)
    and need no pickling of images.
    """

    name: ClassVar[str] = "rapidocr"
    tasks: ClassVar[frozenset[Task]] = frozenset({Task.SUBTITLE, Task.TEXT})

    def __init__(self, options: EngineOptions | None = None) -> None:
        options = options or EngineOptions()
        self.workers = options.workers or max(1, min(os.cpu_count() or 1, 8))
        self.preferred_batch = options.batch_size or 2 * self.workers
        try:
            self._ocr: PpOcr | None = build_ocr(options)
        except EngineError:
            raise
        except Exception as exc:  # onnxruntime raises assorted errors when models can't load
            raise EngineError(f"rapidocr failed to start: {exc}") from exc
        #: ``--lang``: () is auto; PP-OCR languages only keep today's path; others read with Tesseract.
        self.langs = tuple(options.lang)
        self._tesseract: TesseractReader | None = None
        self._chooser: ScriptChooser | None = None
        packs = tesseract_packs(self.langs)
        english = set(self.langs) & {"en", "eng", "english", "latin"} or set(packs) & _WITH_ENGLISH
        if packs and english and "eng" in installed_packs():
            packs.append("eng")  # English words among the lines (Tesseract's "rus+eng"), as auto reads Russian
        if packs:
            from vidocr.engines.tesseract import TesseractReader

            self._tesseract = TesseractReader("+".join(packs))
        elif not self.langs and self._ocr is not None:
            self._chooser = ScriptChooser(self._ocr)
        self._threads: ThreadPoolExecutor | None = None
        if self.workers > 1:
            self._threads = ThreadPoolExecutor(self.workers, thread_name_prefix="vidocr-rapidocr")

    def begin_video(self, name: str) -> None:
        """A new video starts: ``auto`` decides its script afresh."""
        if self._chooser is not None:
            self._chooser.begin_video(name)

    def _read(self, ocr: PpOcr, image: np.ndarray) -> OcrResult:
        if self._tesseract is not None:
            return read_band_tesseract(ocr, self._tesseract, image)
        if self._chooser is not None:
            return self._chooser.read(image)
        return read_band(ocr, image)

    def _reader(self) -> TesseractReader | None:
        """The Tesseract reader of the video's script, when it is read with Tesseract."""
        if self._tesseract is not None:
            return self._tesseract
        chooser = self._chooser
        if chooser is not None and chooser.decided not in (None, "ppocr", "none"):
            return chooser.final(str(chooser.decided))
        return None

    def recognize(self, images: Sequence[np.ndarray], task: Task = Task.SUBTITLE) -> list[OcrResult]:
        if self._chooser is not None and self._chooser.decided is None:
            # The first reads of a video decide its script: one after another, so each sees the votes before it.
            return self._each(task, list(images), self._read, in_order=True)
        return self._each(task, list(images), self._read)

    def reread(
        self, images: Sequence[np.ndarray], priors: Sequence[OcrResult], task: Task = Task.SUBTITLE
    ) -> list[OcrResult]:
        """Confirm earlier reads by recognising their boxes only; a full read where that fails."""

        def again(ocr: PpOcr, pair: tuple[np.ndarray, OcrResult]) -> OcrResult:
            image, prior = pair
            if self._chooser is not None and self._chooser.decided is None:
                # Before the script is decided, a line PP-OCR reads back the same from its boxes is confirmed
                # as usual (a line in another script does not read back: it gets a full read, which votes).
                return reread_band(ocr, image, prior) or self._read(ocr, image)
            return reread_band(ocr, image, prior, self._reader()) or self._read(ocr, image)

        return self._each(task, list(zip(images, priors, strict=True)), again)

    def _each(
        self, task: Task, items: list[_T], read: Callable[[PpOcr, _T], OcrResult], in_order: bool = False
    ) -> list[OcrResult]:
        """``read`` every item, in order, on the engine's threads (one after another with ``in_order``)."""
        if task not in self.tasks:
            raise EngineError(f"engine {self.name!r} cannot do task {task.value!r}")
        ocr = self._ocr
        if ocr is None:
            raise EngineError("rapidocr engine is closed")
        try:
            if self._threads is None or len(items) < 2 or in_order:
                return [read(ocr, item) for item in items]
            return list(self._threads.map(lambda item: read(ocr, item), items))
        except Exception as exc:
            raise EngineError(f"rapidocr failed: {exc}") from exc

    def close(self) -> None:
        if self._threads is not None:
            self._threads.shutdown(wait=True)
            self._threads = None
        self._ocr = None
        if self._tesseract is not None:
            self._tesseract.close()
            self._tesseract = None
        if self._chooser is not None:
            self._chooser.close()
            self._chooser = None

    def __enter__(self) -> RapidOcrEngine:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
