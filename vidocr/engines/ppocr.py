"""PP-OCR detection + recognition on ONNX Runtime, with the models shipped inside the rapidocr wheel.

The same steps as rapidocr 3.x's pipeline (resize bounds, blank rows padded onto wide images, DB
post-processing, perspective crops, CTC decoding; ``tests/test_ppocr.py`` checks that both give the
same text and boxes), without its Python wrapper: importing ``rapidocr.main`` parses its YAML model
tables with OmegaConf (~0.5 s of GIL-holding Python on our machine, serialised with everything else
the pipeline starts with) and every call walks OmegaConf attributes (~7 ms of Python per band). Here
a read is two ONNX Runtime calls (which release the GIL) and a little NumPy/OpenCV, so threads
sharing one instance run in parallel. One step is ours: a detector kernel that is two lines at different
heights joined end to end (a sign touching a subtitle) is cut in two before boxing (:func:`_step_pieces`).
"""

from __future__ import annotations

import importlib.util
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

from vidocr.lexicon import AUTO, MARGIN, Classes, Lexicon, correct_word, latin_letter
from vidocr.textnorm import is_cjk

DET_MODEL = "PP-OCRv6_det_small.onnx"
REC_MODEL = "PP-OCRv6_rec_small.onnx"


def model_dir() -> Path:
    """The models folder inside the installed rapidocr package (located without importing it)."""
    spec = importlib.util.find_spec("rapidocr")
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError("the rapidocr package is not installed (it ships the PP-OCR models)")
    return Path(next(iter(spec.submodule_search_locations))) / "models"


@dataclass(frozen=True)
class PpOcrConfig:
    """rapidocr's settings for its default PP-OCRv6 small models, and ours where noted."""

    #: Resize bounds applied before anything else (rapidocr ``Global.min/max_side_len``).
    min_side: int = 30
    max_side: int = 2000
    #: Blank rows are added above and below images wider than ``pad_ratio`` times their height
    #: (rapidocr pads to 4:1 with ratio 8; we use 16, see :mod:`vidocr.engines.rapid`).
    pad_ratio: float = 16
    pad_min_height: int = 30
    #: The detector's input: the long side limited to this many pixels (ours; rapidocr: short side).
    det_limit_side: int = 736
    thresh: float = 0.3
    box_thresh: float = 0.5
    unclip_ratio: float = 1.6
    max_candidates: int = 1000
    rec_height: int = 48
    rec_width: int = 320
    rec_batch: int = 6
    #: Lines recognised below this score are dropped (rapidocr ``Global.text_score``).
    text_score: float = 0.5
    #: A space the recogniser gives at least this probability between two characters is kept (ours).
    space_min: float = 0.3
    #: ... between two CJK letters, this probability (ours): Chinese and Japanese subtitles put a space between
    #: phrases ("东西 要我帮你拿吗"), and the recogniser ranks it at 0.005-0.45 there, far below "blank", while
    #: between the letters of a phrase it gives the space nothing (under 1e-4; a gap where a glyph was lost, 0.05-0.4).
    space_min_cjk: float = 0.01
    #: The word lists (:mod:`vidocr.lexicon`) a Latin word read that none holds is checked against (ours);
    #: () reads words as the recogniser ranks them.
    lexicon: tuple[str, ...] = AUTO
    #: How much less likely (natural log) a listed word may be than the word read, to replace it (ours).
    lexicon_margin: float = MARGIN


#: A detected text box (4 corner points, clockwise from top-left, image coordinates), its text, its score.
Piece = tuple[np.ndarray, str, float]
#: Where the recogniser aligned a line's text: its first and last character's columns, as shares of the crop's
#: width (None without text).
Span = tuple[float, float] | None
#: The recogniser's probability of each character of a text.
CharConf = tuple[float, ...]
#: The column of each character of a text (the middle of its CTC steps), as shares of the crop's width.
CharCols = tuple[float, ...]
#: A :data:`Piece` with its text's :data:`Span`, :data:`CharConf` and :data:`CharCols`.
SpannedPiece = tuple[np.ndarray, str, float, Span, CharConf, CharCols]


class PpOcr:
    """One detector and one recogniser session; ``read`` and ``recognize`` may run on several threads."""

    def __init__(self, config: PpOcrConfig | None = None, models: Path | None = None) -> None:
        import onnxruntime as ort

        self.config = config or PpOcrConfig()
        folder = models or model_dir()
        options = ort.SessionOptions()
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        # ONNX Runtime's own memory arena: buffers are reused across calls of every shape, so resident
        # memory levels off early (without it, malloc churn from several threads kept growing RSS).
        options.enable_cpu_mem_arena = True
        options.log_severity_level = 3
        cpu = ["CPUExecutionProvider"]
        self._det = ort.InferenceSession(str(folder / DET_MODEL), options, providers=cpu)
        self._rec = ort.InferenceSession(str(folder / REC_MODEL), options, providers=cpu)
        self._det_input = self._det.get_inputs()[0].name
        self._rec_input = self._rec.get_inputs()[0].name
        characters = self._rec.get_modelmeta().custom_metadata_map["character"].splitlines()
        # CTC: index 0 is the blank, the dictionary follows, a space comes last.
        self.characters = ["", *characters, " "]
        #: The dictionary's CJK entries (Han, kana, Hangul, CJK punctuation, full-width forms): see _stray_cjk.
        self._cjk = np.array([any(_is_cjk(c) for c in entry) for entry in self.characters])
        #: The classes as word lists' edits see them (vidocr.lexicon.Classes).
        self._classes = Classes.of(self.characters)
        #: Word lists Latin words are read against (see _listed); None: none. They load with the first line of
        #: Latin words read, not here: a video of other scripts never pays for them. Without pyspellchecker the
        #: lists are empty, no line is in their language (Lexicon.speaks) and words are read as ranked.
        self.lexicon = Lexicon(self.config.lexicon) if self.config.lexicon else None

    # -- full read ------------------------------------------------------------------------------
    def read(self, image: np.ndarray) -> list[Piece]:
        """Detect and recognise the text boxes of a BGR image, top to bottom, left to right."""
        return [piece for piece in self.read_all(image) if self.kept(piece)]

    def kept(self, piece: Piece) -> bool:
        """Whether :meth:`read` keeps a piece: some text, recognised at least ``config.text_score`` sure."""
        return bool(piece[1].strip()) and piece[2] >= self.config.text_score

    def read_all(self, image: np.ndarray, det_limit: int | None = None) -> list[Piece]:
        """:meth:`read` without dropping empty or unsure lines (a script probe looks at those too).
        ``det_limit``: the detector's input size for this call (default ``config.det_limit_side``)."""
        return [(box, text, score) for box, text, score, *_ in self.read_spans(image, det_limit)]

    def read_spans(
        self, image: np.ndarray, det_limit: int | None = None, upscale: bool = False
    ) -> list[SpannedPiece]:
        """:meth:`read_all`, with where in each box the recogniser found the text (see :meth:`recognize_spans`).
        ``upscale``: an image smaller than ``det_limit`` is scaled up to it for detection (recognition still
        reads the lines from the image itself)."""
        if image.ndim == 2:
            image = cv2.cvtColor(image, cv2.COLOR_GRAY2BGR)
        img, top, ratio_h, ratio_w, boxes = self._detect_scaled(image, det_limit, upscale)
        if not len(boxes):
            return []
        crops = [_crop_quad(img, box) for box in boxes]
        if ratio_h != 1.0 or ratio_w != 1.0:
            crops = [
                cv2.resize(c, (round(c.shape[1] * ratio_w), round(c.shape[0] * ratio_h))) for c in crops
            ]
        texts = self.recognize_chars(crops)
        boxes = _to_image(boxes, top, ratio_h, ratio_w, image.shape[1], image.shape[0])
        return [(box, *read) for box, read in zip(boxes, texts, strict=True)]

    def detect(self, image: np.ndarray, det_limit: int | None = None, upscale: bool = False) -> np.ndarray:
        """The text boxes of a BGR image alone (N x 4 corner points in image coordinates, reading order).
        ``det_limit``: the detector's input size for this call (default ``config.det_limit_side``); ``upscale``:
        a smaller image is scaled up to it."""
        if image.ndim == 2:
            image = cv2.cvtColor(image, cv2.COLOR_GRAY2BGR)
        _, top, ratio_h, ratio_w, boxes = self._detect_scaled(image, det_limit, upscale)
        if not len(boxes):
            return np.zeros((0, 4, 2), np.float32)
        return _to_image(boxes, top, ratio_h, ratio_w, image.shape[1], image.shape[0])

    def _detect_scaled(
        self, image: np.ndarray, det_limit: int | None = None, upscale: bool = False
    ) -> tuple[np.ndarray, int, float, float, np.ndarray]:
        cfg = self.config
        img, ratio_h, ratio_w = _within_bounds(image, cfg.min_side, cfg.max_side)
        img, top = _pad_rows(img, cfg.pad_ratio, cfg.pad_min_height)
        return img, top, ratio_h, ratio_w, self._detect(img, det_limit or cfg.det_limit_side, upscale)

    # -- recognition ------------------------------------------------------------------------------
    def recognize(self, crops: Sequence[np.ndarray]) -> list[tuple[str, float]]:
        """Text and score of each crop (one line of text each), in order."""
        return [(text, score) for text, score, _ in self.recognize_spans(crops)]

    def recognize_spans(self, crops: Sequence[np.ndarray]) -> list[tuple[str, float, Span]]:
        """Text, score and :data:`Span` of each crop: the columns of the CTC steps of its first and last
        character (where the text is in the crop, whatever picture detail the crop took in beside it)."""
        return [(text, score, span) for text, score, span, *_ in self.recognize_chars(crops)]

    def recognize_chars(self, crops: Sequence[np.ndarray]) -> list[tuple[str, float, Span, CharConf, CharCols]]:
        """:meth:`recognize_spans` with the probability and the column of each character of the text
        (:data:`CharConf`, :data:`CharCols`)."""
        cfg = self.config
        out: list[tuple[str, float, Span, CharConf, CharCols]] = [("", 0.0, None, (), ())] * len(crops)
        ratios = [c.shape[1] / float(c.shape[0]) for c in crops]
        order = np.argsort(np.array(ratios))
        for start in range(0, len(crops), cfg.rec_batch):
            idx = [int(i) for i in order[start : start + cfg.rec_batch]]
            max_ratio = max(cfg.rec_width / cfg.rec_height, *(ratios[i] for i in idx))
            batch_width = int(cfg.rec_height * max_ratio)
            batch = np.zeros((len(idx), 3, cfg.rec_height, batch_width), np.float32)
            for row, i in enumerate(idx):
                resized_w = min(batch_width, int(math.ceil(cfg.rec_height * ratios[i])))
                resized = cv2.resize(crops[i], (resized_w, cfg.rec_height)).astype(np.float32)
                batch[row, :, :, :resized_w] = (resized.transpose(2, 0, 1) / 255 - 0.5) / 0.5
            preds = self._rec.run(None, {self._rec_input: batch})[0]
            for row, i in enumerate(idx):
                resized_w = min(batch_width, int(math.ceil(cfg.rec_height * ratios[i])))
                text, score, steps, probs, at = self._decode(preds[row])
                span = None
                step_w = batch_width / preds.shape[1] / resized_w  # a step's share of the resized crop
                if steps is not None:
                    span = (min(1.0, steps[0] * step_w), min(1.0, (steps[1] + 1) * step_w))
                cols = tuple(min(1.0, (a + 0.5) * step_w) for a in at)
                out[i] = (text, score, span, probs, cols)
        return out

    def _decode(
        self, pred: np.ndarray
    ) -> tuple[str, float, tuple[int, int] | None, CharConf, tuple[float, ...]]:
        """Greedy CTC decoding (as rapidocr), plus the spaces greedy decoding drops: between two characters,
        a step where the space is the likeliest character and at least ``space_min`` likely is a space
        (a word gap the model saw but ranked just below "blank": "vidocr从", "Weneed"; between two CJK letters
        ``space_min_cjk``: a phrase gap, "东西 要我"). Also the probability
        of each character of the text (an added space: the most its gap gave the space) and the step it was
        read at (an added space: the middle of its gap)."""
        tokens = pred.argmax(axis=1)
        if self._cjk[tokens].any() and _stray_cjk("".join(self.characters[t] for t in tokens[tokens != 0])):
            pred = np.where(self._cjk, np.float32(0), pred)  # a Latin line: no CJK glyph inside its words
            tokens = pred.argmax(axis=1)
        probs = pred.max(axis=1)
        keep = np.ones(len(tokens), dtype=bool)
        keep[1:] = tokens[1:] != tokens[:-1]
        keep &= tokens != 0
        confs = [round(float(p), 5) for p in probs[keep]] or [0.0]
        score = round(float(np.mean(confs)), 5)
        steps = np.flatnonzero(keep)
        space = len(self.characters) - 1
        text: list[str] = []
        char_conf: list[float] = []
        at: list[float] = []
        runs: list[tuple[int, int]] = []  # the steps of each entry of text
        for i, step in enumerate(steps):
            char = self.characters[tokens[step]]
            if i and char != " " and text[-1] != " ":
                gap = pred[steps[i - 1] + 1 : step]
                least = self.config.space_min_cjk if is_cjk(text[-1][-1]) and is_cjk(char[0]) else self.config.space_min
                if len(gap) and self._spaced(gap, space, least):
                    text.append(" ")
                    char_conf.append(round(float(gap[:, space].max()), 5))
                    at.append((steps[i - 1] + step) / 2)
                    middle = (runs[-1][1] + int(step)) // 2
                    runs.append((middle, middle))
            text.append(char)
            char_conf.extend([round(float(probs[step]), 5)] * len(char))
            end = step
            while end + 1 < len(tokens) and tokens[end + 1] == tokens[step]:
                end += 1  # the character's run of steps
            at.extend([(step + end) / 2] * len(char))
            runs.append((int(step), int(end)))
        if self.lexicon is not None:
            self._listed(pred, text, char_conf, at, runs)
        chars = [int(step) for step in steps if tokens[step] != space]
        if not chars:
            return "".join(text), score, None, tuple(char_conf), tuple(at)
        last = chars[-1]
        while last + 1 < len(tokens) and tokens[last + 1] == tokens[chars[-1]]:
            last += 1  # the last character's run of steps
        return "".join(text), score, (chars[0], last), tuple(char_conf), tuple(at)

    def _listed(
        self, pred: np.ndarray, text: list[str], char_conf: list[float], at: list[float], runs: list[tuple[int, int]]
    ) -> None:
        """Each Latin word of ``text`` no word list holds, replaced in place by the listed word the recogniser's
        posteriors over its steps support nearly as well (:func:`vidocr.lexicon.correct_word`), in a line of
        the lists' language (:meth:`vidocr.lexicon.Lexicon.speaks`). A replaced word's characters take its least
        probability (it stays as unsure as it was read) and columns spread over its steps. ``text`` entries are
        single characters here (the Latin dictionary's are)."""
        lexicon = self.lexicon
        assert lexicon is not None
        wordy = [latin_letter(c) for c in text]
        for k in range(1, len(text) - 1):
            if text[k] in "\"`." and wordy[k - 1] and latin_letter(text[k + 1]):
                wordy[k] = True  # an apostrophe read as a double quote, a letter as a full stop ("dow.a")
        spans: list[tuple[int, int]] = []  # each word's entries, right to left
        k = len(text)
        while k > 0:
            if not wordy[k - 1]:
                k -= 1
                continue
            j = k
            while j > 0 and wordy[j - 1]:
                j -= 1
            spans.append((j, k))
            k = j
        if not lexicon.speaks(["".join(text[j:k]) for j, k in spans]):
            return
        for j, k in spans:  # right to left: replacing a word changes the positions after it
            word = "".join(text[j:k])
            first = runs[j - 1][1] + 1 if j > 0 else 0
            last = runs[k][0] - 1 if k < len(text) else len(pred) - 1
            new = correct_word(
                lexicon, word, pred[first : last + 1], self._classes, self.config.lexicon_margin
            )
            if new is None or new == word:
                continue
            offset = sum(len(t) for t in text[:j])  # char_conf and at count characters
            size = sum(len(t) for t in text[j:k])
            least = min(char_conf[offset : offset + size])
            left, right = at[offset], at[offset + size - 1]
            char_conf[offset : offset + size] = [least] * len(new)
            at[offset : offset + size] = [left + (right - left) * n / max(1, len(new) - 1) for n in range(len(new))]
            text[j:k] = list(new)
            runs[j:k] = [(runs[j][0], runs[k - 1][1])] * len(new)

    def _spaced(self, gap: np.ndarray, space: int, least: float) -> bool:
        rest = gap[:, 1:].max(axis=1)  # the likeliest non-blank character at each step
        return bool(np.any((gap[:, space] >= least) & (gap[:, space] >= rest)))

    # -- detection (DB) ---------------------------------------------------------------------------
    def _detect(self, img: np.ndarray, limit: int, upscale: bool = False) -> np.ndarray:
        cfg = self.config
        height, width = img.shape[:2]
        ratio = limit / max(height, width) if max(height, width) > limit or upscale else 1.0
        resize_h, resize_w = _mult32(height * ratio), _mult32(width * ratio)
        if resize_h <= 0 or resize_w <= 0:
            return np.zeros((0, 4, 2), np.float32)
        # The same arithmetic as rapidocr (scaled in float32, centred in float64), so that scores on a
        # threshold's edge fall the same way.
        scaled = cv2.resize(img, (resize_w, resize_h)).astype(np.float32) * (1 / 255.0)
        x = ((scaled.astype(np.float64) - 0.5) / 0.5).astype(np.float32)
        pred = self._det.run(None, {self._det_input: x.transpose(2, 0, 1)[np.newaxis]})[0][0, 0]
        mask = cv2.dilate((pred > cfg.thresh).astype(np.uint8), np.ones((2, 2), np.uint8))
        boxes = self._boxes(pred, mask, width, height)
        return _sorted_boxes(boxes)

    def _boxes(self, pred: np.ndarray, bitmap: np.ndarray, dest_w: int, dest_h: int) -> np.ndarray:
        cfg = self.config
        height, width = bitmap.shape
        contours, _ = cv2.findContours(bitmap * 255, cv2.RETR_LIST, cv2.CHAIN_APPROX_SIMPLE)
        found = []
        for contour in [piece for whole in contours[: cfg.max_candidates] for piece in _step_pieces(whole)]:
            points, short = _mini_box(contour)
            if short < 3:
                continue
            if _box_score(pred, points) < cfg.box_thresh:
                continue
            box, short = _mini_box(_unclip(points, cfg.unclip_ratio))
            if short < 5:
                continue
            box[:, 0] = np.clip(np.round(box[:, 0] / width * dest_w), 0, dest_w)
            box[:, 1] = np.clip(np.round(box[:, 1] / height * dest_h), 0, dest_h)
            box = _clockwise(box.astype(np.int32).astype(np.float32))
            box[:, 0] = np.clip(box[:, 0], 0, dest_w - 1).astype(np.int32)
            box[:, 1] = np.clip(box[:, 1], 0, dest_h - 1).astype(np.int32)
            if int(np.linalg.norm(box[0] - box[1])) <= 3 or int(np.linalg.norm(box[0] - box[3])) <= 3:
                continue
            found.append(box)
        return np.array(found, np.float32).reshape(-1, 4, 2)


def _is_cjk(char: str) -> bool:
    """Han, kana, Hangul, CJK punctuation and full-width forms (from the CJK radicals block up): wider than
    vidocr.textnorm.is_cjk (letters only), since a full-width bracket in a Latin line ("咖（door") is as stray."""
    return ord(char) >= 0x2E80


#: A line has at least this many Latin letters per CJK character for a CJK glyph inside its words to be a stray.
LATIN_PER_CJK = 4


def _stray_cjk(raw: str) -> bool:
    """Whether a greedy CTC reading (repeats not collapsed) is a Latin line with CJK characters glued to its words:
    at least LATIN_PER_CJK Latin letters per CJK character, and a run of CJK characters touching a Latin letter
    or an ASCII bracket with no space between. A Latin subtitle has no Han glyph inside a word: it is a sign's
    glyph behind the line read into it ("Howmu馆h further is it?", "咖（door slams)" under a café sign's
    "咖啡馆"); the line is decoded again without the CJK entries, where the step's likeliest Latin character (or
    none) takes its place. "OKです", "我用iPhone" and "Welcome to 東京" are left as read."""
    text = "".join(ch for i, ch in enumerate(raw) if i == 0 or ch != raw[i - 1])
    cjk = sum(_is_cjk(c) for c in text)
    latin = sum(c.isascii() and c.isalpha() for c in text)
    if not cjk or latin < LATIN_PER_CJK * cjk:
        return False
    glue = set("()[]")
    return any(_is_cjk(a) != _is_cjk(b) and (a.isascii() and (a.isalpha() or a in glue) or
                                             b.isascii() and (b.isalpha() or b in glue))
               for a, b in zip(text, text[1:], strict=False))


def _to_image(boxes: np.ndarray, top: int, ratio_h: float, ratio_w: float, width: int, height: int) -> np.ndarray:
    """Boxes found on the resized, padded image -> the original image's coordinates."""
    boxes = boxes.astype(np.float32)
    boxes[:, :, 1] -= top
    boxes[:, :, 0] *= ratio_w
    boxes[:, :, 1] *= ratio_h
    boxes = np.maximum(boxes, 0)
    boxes[..., 0] = np.minimum(boxes[..., 0], width)
    boxes[..., 1] = np.minimum(boxes[..., 1], height)
    return boxes


def _within_bounds(img: np.ndarray, min_side: int, max_side: int) -> tuple[np.ndarray, float, float]:
    ratio_h = ratio_w = 1.0
    if max(img.shape[:2]) > max_side:
        img, ratio_h, ratio_w = _resize_to(img, max_side / max(img.shape[:2]))
    if min(img.shape[:2]) < min_side:
        img, ratio_h, ratio_w = _resize_to(img, min_side / min(img.shape[:2]))
    return img, ratio_h, ratio_w


def _mult32(size: float) -> int:
    """The nearest multiple of 32 to ``int(size)`` (rapidocr's rounding; the networks need it)."""
    return int(round(int(size) / 32) * 32)


def _resize_to(img: np.ndarray, ratio: float) -> tuple[np.ndarray, float, float]:
    h, w = img.shape[:2]
    # Multiples of 32, never 0 (rapidocr raises there: a 16-row crop of a 4K band would fail a whole video).
    resize_h, resize_w = max(32, _mult32(h * ratio)), max(32, _mult32(w * ratio))
    return cv2.resize(img, (resize_w, resize_h)), h / resize_h, w / resize_w


def _pad_rows(img: np.ndarray, ratio: float, min_height: int) -> tuple[np.ndarray, int]:
    h, w = img.shape[:2]
    if h > min_height and w / h <= ratio:
        return img, 0
    pad = int(abs(max(int(w / ratio), min_height) * 2 - h) / 2)
    return cv2.copyMakeBorder(img, pad, pad, 0, 0, cv2.BORDER_CONSTANT, value=(0, 0, 0)), pad


def _mini_box(contour: np.ndarray) -> tuple[np.ndarray, float]:
    rect = cv2.minAreaRect(contour)
    points = sorted(cv2.boxPoints(rect).tolist(), key=lambda p: p[0])
    a, d = (0, 1) if points[1][1] > points[0][1] else (1, 0)
    b, c = (2, 3) if points[3][1] > points[2][1] else (3, 2)
    return np.array([points[a], points[b], points[c], points[d]], np.float32), min(rect[1])


#: A text kernel filling less of its rotated bounding rectangle than this is looked at for steps (a line's
#: kernel is a band, so a straight line fills most of its rectangle, tilted or not).
STEP_FILL = 0.85


def _step_pieces(contour: np.ndarray) -> list[np.ndarray]:
    """A text kernel that is two lines at different heights joined end to end, cut into the two (ours).

    A sign or caption in the picture drawn beside a subtitle line, a little higher or lower, touches it
    in the detector's map: the kernel is a step, its rotated rectangle takes in both heights and the empty
    corners, and DB scores it under its threshold (the subtitle line is never boxed) or boxes both lines
    in one slanted crop (the recogniser reads a mix). A kernel that fills its rectangle (a line, tilted or
    not) is returned as it is. Otherwise its columns are grouped by the middle of the kernel in them: a
    group ends where the middle moves by half the kernel's thickness from the group's, and columns thicker
    than a line and a half are no group's. Groups at least twice as long as the kernel is thick are lines;
    two such at one height are one (a capital or a bracket stood above the rest between them). With two
    lines or more the kernel is cut: each line keeps its own rows, over its columns and the joins beside
    it (a glyph of either line may be drawn in a join)."""
    x, y, w, h = cv2.boundingRect(contour)
    rect = cv2.minAreaRect(contour)
    area = rect[1][0] * rect[1][1]
    if not area or cv2.contourArea(contour) >= STEP_FILL * area:
        return [contour]
    mask = np.zeros((h, w), np.uint8)
    cv2.drawContours(mask, [contour - np.array([x, y])], -1, 1, thickness=-1)
    inked = mask.max(axis=0) > 0
    top = np.argmax(mask, axis=0)
    bottom = h - 1 - np.argmax(mask[::-1], axis=0)
    thick = np.where(inked, bottom - top + 1, 0)
    mids = (top + bottom) / 2

    def middle(columns: list[int]) -> float:
        return float(np.median(mids[columns]))

    line = float(np.median(thick[inked]))
    groups: list[list[int]] = []
    for col in range(w):
        if not inked[col] or thick[col] > 1.4 * line:
            continue
        if groups and groups[-1][-1] == col - 1 and abs(mids[col] - middle(groups[-1])) <= line / 2:
            groups[-1].append(col)
        else:
            groups.append([col])
    lines: list[list[int]] = []
    for group in (g for g in groups if len(g) >= 2 * line):
        if lines and abs(middle(group) - middle(lines[-1])) <= line / 2:
            lines[-1] = lines[-1] + group
        else:
            lines.append(group)
    if len(lines) < 2:
        return [contour]
    # A line's core: its columns within a quarter of the kernel's thickness of its height (a join that tapers
    # from one height to the other is no line's).
    cores = [[c for c in g if abs(mids[c] - middle(g)) <= line / 4] or g for g in lines]
    pieces: list[np.ndarray] = []
    for i, group in enumerate(lines):
        x0 = cores[i - 1][-1] + 1 if i else 0
        x1 = cores[i + 1][0] - 1 if i + 1 < len(lines) else w - 1
        y0, y1 = int(np.median(top[group])), int(np.median(bottom[group]))
        part = np.zeros_like(mask)
        part[y0 : y1 + 1, x0 : x1 + 1] = mask[y0 : y1 + 1, x0 : x1 + 1]
        found, _ = cv2.findContours(part * 255, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
        pieces.extend(c + np.array([x, y]) for c in found)
    return pieces


def _box_score(bitmap: np.ndarray, box: np.ndarray) -> float:
    """Mean probability inside the box (DB's "fast" score)."""
    h, w = bitmap.shape[:2]
    xmin = int(np.clip(np.floor(box[:, 0].min()), 0, w - 1))
    xmax = int(np.clip(np.ceil(box[:, 0].max()), 0, w - 1))
    ymin = int(np.clip(np.floor(box[:, 1].min()), 0, h - 1))
    ymax = int(np.clip(np.ceil(box[:, 1].max()), 0, h - 1))
    mask = np.zeros((ymax - ymin + 1, xmax - xmin + 1), np.uint8)
    shifted = box - np.array([xmin, ymin], np.float32)
    cv2.fillPoly(mask, [shifted.reshape(-1, 2).astype(np.int32)], 1)
    return float(cv2.mean(bitmap[ymin : ymax + 1, xmin : xmax + 1], mask)[0])


def _unclip(box: np.ndarray, ratio: float) -> np.ndarray:
    """Grow the shrunk text kernel back by DB's offset distance (area * ratio / perimeter)."""
    import pyclipper

    x, y = box[:, 0].astype(np.float64), box[:, 1].astype(np.float64)
    area = 0.5 * abs(float(np.dot(x, np.roll(y, -1)) - np.dot(y, np.roll(x, -1))))
    length = float(np.sum(np.hypot(np.roll(x, -1) - x, np.roll(y, -1) - y)))
    offset = pyclipper.PyclipperOffset()
    offset.AddPath(box, pyclipper.JT_ROUND, pyclipper.ET_CLOSEDPOLYGON)
    return np.array(offset.Execute(area * ratio / length)).reshape((-1, 1, 2))


def _clockwise(pts: np.ndarray) -> np.ndarray:
    by_x = pts[np.argsort(pts[:, 0]), :]
    left, right = by_x[:2], by_x[2:]
    tl, bl = left[np.argsort(left[:, 1]), :]
    tr, br = right[np.argsort(right[:, 1]), :]
    return np.array([tl, tr, br, bl], np.float32)


def _sorted_boxes(boxes: np.ndarray) -> np.ndarray:
    """Top to bottom, then left to right within a line (tops closer than 10 px share a line)."""
    if not len(boxes):
        return boxes
    y_order = np.argsort(boxes[:, 0, 1], kind="stable")
    boxes = boxes[y_order]
    lines = np.concatenate([[0], np.cumsum(np.diff(boxes[:, 0, 1]) >= 10)])
    ordered: np.ndarray = boxes[np.lexsort((boxes[:, 0, 0], lines))]
    return ordered


def _crop_quad(img: np.ndarray, points: np.ndarray) -> np.ndarray:
    width = int(max(np.linalg.norm(points[0] - points[1]), np.linalg.norm(points[2] - points[3])))
    height = int(max(np.linalg.norm(points[0] - points[3]), np.linalg.norm(points[1] - points[2])))
    target = np.array([[0, 0], [width, 0], [width, height], [0, height]], np.float32)
    matrix = cv2.getPerspectiveTransform(points.astype(np.float32), target)
    crop = cv2.warpPerspective(img, matrix, (width, height), borderMode=cv2.BORDER_REPLICATE, flags=cv2.INTER_CUBIC)
    if crop.shape[0] * 1.0 / crop.shape[1] >= 1.5:
        crop = np.rot90(crop)
    return crop
