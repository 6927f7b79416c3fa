"""The OCR stage's queue: band crops are batched to the engine on a background thread.

Decoding and change detection go on while the engine works (neither the decoder nor a GPU waits for the
other); the queue is bounded, so a slow engine pauses decoding instead of filling memory.
"""

from __future__ import annotations

import queue
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, replace
from itertools import pairwise
from typing import cast

import numpy as np

from vidocr.engines import OcrEngine, Rereader, supports_reread
from vidocr.errors import EngineError, VidocrError
from vidocr.layout import (
    CENTRE_TOLERANCE,
    GLUED_FILL_MAX,
    GLYPHS_ONLY_SURE,
    SAME_TEXT,
    centred_about,
    glyph_image,
    glyph_view,
    with_fill,
)
from vidocr.textnorm import in_order, text_similarity
from vidocr.types import Box, OcrLine, OcrResult, Task

#: A read below this confidence (``OcrResult.confidence``) is made again on its crop's mean over frames, when the
#: pipeline gave one (see vidocr.pipeline.ExtractOptions.fuse_s), and the surer read is kept.
FUSE_BELOW = 0.95

#: A line read again whole (see OcrWorker._whole_lines) is believed at least this sure.
WHOLE_SURE = 0.9
#: An off-centre line is read again whole when it reaches to within this many of its heights of the crop's middle.
WHOLE_REACH = 2.0
#: A line the layout calls centred is read again whole when its middle is off the crop's by at least this many of its
#: heights: a CJK glyph (one height wide) lost at one end puts the line's middle half a height off; punctuation a
#: fifth at most (see vidocr.layout.centred_about's share of the height).
WHOLE_OFF = 0.3

#: Lines that look like print (glyph fill up to GLUED_FILL_MAX) a read must have to be read again glyphs only
#: (one is enough when the read has no other line).
PRINT_BLOCK = 2


@dataclass(frozen=True)
class Prior:
    """What a re-read starts from: the earlier read of the same subtitle (by read id) and the rows to
    add to its boxes to place them in this crop."""

    read_id: int
    dy: int = 0


_Item = tuple[int, np.ndarray, Prior | None]


class OcrWorker:
    """Runs engine.recognize on batches in a background thread; results come back by read id.

    A crop submitted with a ``prior`` (an earlier read of the same subtitle) goes to the engine's
    ``reread`` when the engine has one and that earlier result is known by then: most re-reads only
    confirm the text, which costs an engine like RapidOCR its recogniser alone.
    """

    #: Recent results kept for re-reads (by read id).
    RECENT = 256

    def __init__(self, engine: OcrEngine, task: Task, batch: int, queue_size: int) -> None:
        self.engine, self.task, self.batch_size = engine, task, max(1, batch)
        self._todo: queue.Queue[list[_Item] | None] = queue.Queue(
            maxsize=max(1, queue_size // self.batch_size)
        )
        self.results: dict[int, OcrResult] = {}
        self._lock = threading.Lock()
        self._ready = threading.Condition(self._lock)
        self._error: BaseException | None = None
        self._batch: list[_Item] = []
        self._recent: OrderedDict[int, OcrResult] = OrderedDict()
        self._rereader = supports_reread(engine)
        self.calls = 0
        self.rereads = 0
        #: Reads made again with a crop's closed light glyphs alone (see _collect), and the reads of pages.
        self.glyph_reads = 0
        #: Runs of subtitle-like glyphs glued to print read alone (see _runs_alone).
        self.run_reads = 0
        #: Lines the detector may have boxed in part, read again whole (see _whole_lines), and those kept.
        self.whole_reads = 0
        self.whole_kept = 0
        self._pages: set[int] = set()
        self._fused: dict[int, np.ndarray] = {}
        #: Reads made again on a crop's mean over frames (see FUSE_BELOW), and how many of those were kept.
        self.fused_reads = 0
        self.fused_kept = 0
        self.batches: list[int] = []
        #: Seconds the engine spent on this worker's batches (on the OCR thread, overlapping decoding).
        self.busy_s = 0.0
        self._thread = threading.Thread(target=self._loop, name="vidocr-ocr", daemon=True)
        self._thread.start()

    def submit(
        self,
        read_id: int,
        crop: np.ndarray,
        prior: Prior | None = None,
        page: bool = False,
        fused: np.ndarray | None = None,
    ) -> None:
        """Queue a crop; ``page``: the band shows a page of print, so the crop is read glyphs only too (see
        _collect) whatever its first read finds (the subtitle may not be boxed at all); ``fused``: the crop's mean
        over frames, read when the crop's read is unsure (FUSE_BELOW)."""
        if page:
            self._pages.add(read_id)
        if fused is not None:
            self._fused[read_id] = fused
        self._batch.append((read_id, crop, prior))
        if len(self._batch) >= self.batch_size:
            self.flush()

    def flush(self) -> None:
        if self._batch:
            batch, self._batch = self._batch, []
            while True:
                self.raise_error()
                try:
                    self._todo.put(batch, timeout=0.5)
                    break
                except queue.Full:
                    continue

    def take(self, wait: float = 0.0) -> dict[int, OcrResult]:
        """Results that came back since the last call; with ``wait``, block up to that many seconds
        for at least one (or an engine error)."""
        self.raise_error()
        with self._ready:
            if wait > 0 and not self.results and self._error is None:
                self._ready.wait(wait)
            out, self.results = self.results, {}
        self.raise_error()
        return out

    def raise_error(self) -> None:
        if self._error is not None:
            err = self._error
            if isinstance(err, VidocrError):
                raise err
            raise EngineError(f"{self.engine.name} failed: {err}") from err

    def close(self) -> None:
        self.flush()
        self._todo.put(None)
        self._thread.join()
        self.raise_error()

    def abort(self) -> None:
        self._batch = []
        try:
            while True:
                self._todo.get_nowait()
        except queue.Empty:
            pass
        self._todo.put(None)
        self._thread.join(timeout=30)

    def _loop(self) -> None:
        while True:
            batch = self._todo.get()
            if batch is None:
                return
            if self._error is not None:
                continue
            started = time.perf_counter()
            try:
                done = self._read(batch)
            except BaseException as exc:  # noqa: BLE001 - re-raised in the consumer thread
                with self._ready:
                    self._error = exc
                    self._ready.notify_all()
                continue
            finally:
                self.busy_s += time.perf_counter() - started
            self.calls += len(batch)
            self.batches.append(len(batch))
            with self._ready:
                self.results.update(done)
                self._ready.notify_all()
            for read_id, result in done.items():
                self._recent[read_id] = result
            while len(self._recent) > self.RECENT:
                self._recent.popitem(last=False)

    def _read(self, batch: list[_Item]) -> dict[int, OcrResult]:
        """Read a batch; re-reads whose earlier read is in the same batch wait for it (a second wave)."""
        done: dict[int, OcrResult] = {}
        todo = batch
        while todo:
            waiting = {item[0] for item in todo}
            fresh: list[_Item] = []
            again: list[tuple[_Item, OcrResult]] = []
            for item in todo:
                prior = self._prior(item, done)
                if prior is not None:
                    again.append((item, prior))
                elif not (self._rereader and item[2] is not None and item[2].read_id in waiting):
                    fresh.append(item)
            if not fresh and not again:
                fresh = todo
            if fresh:
                self._collect(done, fresh, self.engine.recognize([crop for _, crop, _ in fresh], self.task))
            if again:
                items = [item for item, _ in again]
                engine = cast(Rereader, self.engine)
                self._collect(done, items, engine.reread([it[1] for it in items], [p for _, p in again], self.task))
                self.rereads += len(items)
            todo = [item for item in todo if item[0] not in done]
        return done

    def _prior(self, item: _Item, done: dict[int, OcrResult]) -> OcrResult | None:
        """The earlier result a re-read can start from, moved into this crop's rows; None if unknown."""
        prior = item[2]
        if not self._rereader or prior is None:
            return None
        known = done.get(prior.read_id) or self._recent.get(prior.read_id)
        if known is None:
            return None
        return known.shifted(0, prior.dy)

    def _in_picture(self, reads: list[OcrResult], crops: list[np.ndarray]) -> list[OcrResult]:
        """Glyphs-only ``reads`` with each line read again in the picture itself, inside the line's box: kept
        when that read is one line, surer and of as many words. The glyphs alone lose what their outline drew
        (at 360p, the gap between two words: "Where wereyou"); inside the box found glyphs only, print is mostly
        outside, but what is behind the line can fill its word gaps ("Wherewereyou lastnight?"). Nor where the
        glyphs alone lost a glyph inside a word that the picture read has (GLYPHS_ONLY_SURE sure): a glyph whose
        outline ran into the print behind it is not closed off ("他说明天上回来" for "他说明天早上回来")."""
        found, _ = self._lines_alone(reads, crops, lambda ln, _: ln.box)
        better = {}
        for (i, j), alone in found.items():
            glyph = reads[i].lines[j]
            # The same line (print behind it can be read instead: a page's line under a CJK subtitle), surer, and
            # of as many words: print behind the line can fill the gaps between its words in the picture.
            if (
                alone.confidence > glyph.confidence
                and len(alone.text.split()) >= len(glyph.text.split())
                and text_similarity(alone.text, glyph.text) >= SAME_TEXT
            ) or (alone.confidence >= GLYPHS_ONLY_SURE and _filled(glyph.text, alone.text)):
                better[i, j] = alone
        return _replaced(reads, better)

    def _whole_lines(self, reads: list[OcrResult], crops: list[np.ndarray], frame: list[bool]) -> list[OcrResult]:
        """``reads`` with each line the detector may have boxed in part read again in the whole box a centred
        subtitle line would have (crops are as wide as the band, centred on it): kept when that read is one line,
        at least WHOLE_SURE sure, with more characters and the first read's words in it, in order. The detector
        misses glyphs of a pale subtitle over a light picture: its box took "pen that door!" of "Don't open that
        door!" (off-centre, so the zone's layout dropped it), or "Why", "any" and "do that?" of "Why would anyone
        do that?" (two boxes a gap apart); a read of the whole box alone reads the whole line (the detector sees
        the line larger there)."""
        found, asked = self._lines_alone(reads, crops, _whole_box, only=frame)
        self.whole_reads += asked
        kept = {}
        for (i, j), line in found.items():
            first, width = reads[i].lines[j], crops[i].shape[1]
            if line.confidence >= WHOLE_SURE and _centred_in(line, width) and (
                _grown(first.text, line.text, _whole_side(first, width))
            ):
                kept[i, j] = line
        self.whole_kept += len(kept)
        return _replaced(reads, kept)

    def _surer_fused(self, items: list[_Item], results: list[OcrResult]) -> tuple[list[_Item], list[OcrResult]]:
        """``items`` and their ``results`` with each unsure read (FUSE_BELOW) of a crop that has a mean over frames
        replaced by the read of that mean, and the mean as its crop, where that read is surer. Decided here, on
        the OCR thread, from the reads alone: the same video gives the same reads whatever the timing."""
        means = [self._fused.pop(item[0], None) for item in items]
        again = [k for k, (mean, result) in enumerate(zip(means, results, strict=True))
                 if mean is not None and _unsure(result)]
        if not again:
            return items, results
        fused = self.engine.recognize([cast(np.ndarray, means[k]) for k in again], self.task)
        self.fused_reads += len(again)
        items, results = list(items), list(results)
        for k, read in zip(again, fused, strict=True):
            if read.confidence > results[k].confidence and not _lost_only(read.text, results[k].text):
                items[k] = (items[k][0], cast(np.ndarray, means[k]), items[k][2])
                results[k] = read
                self.fused_kept += 1
        return items, results

    def _glyphs_read(self, glued: list[tuple[int, np.ndarray, int]]) -> list[OcrResult]:
        """The reads of glyph images ((read index, image, line height), vidocr.layout.glyph_image): each image is
        read as it is and cut to its glyphs on grey (vidocr.layout.glyph_view), and the surer read is kept
        (``OcrResult.confidence``: its lines' mean, weighted by their characters). PP-OCR's detector often boxes
        nothing, or drops a glyph, in a band-wide image of light glyphs on black (a CJK subtitle half over a page);
        on grey, picture specks beside a subtitle that black hides can be read as characters (a '"' before a Latin
        line)."""
        images = [image for _, image, _ in glued]
        views = [glyph_view(image, height) for _, image, height in glued]
        reads = self.engine.recognize([*images, *(view for view, _ in views)], self.task)
        return [
            seen.shifted(x0, 0) if seen.confidence > read.confidence else read
            for read, seen, (_, x0) in zip(reads[: len(glued)], reads[len(glued) :], views, strict=True)
        ]

    def _runs_alone(self, reads: list[OcrResult], crops: list[np.ndarray]) -> list[OcrResult]:
        """``reads`` with each line's run of subtitle-like glyphs glued to print (``glued_cols``, see
        vidocr.layout.glued_run) read alone, inside the line's rows: kept as the line's ``alone`` when it reads as
        one line (the zone's layout takes it when it is centred and the whole line is not)."""

        def run_box(line: OcrLine, _: int) -> Box | None:
            if line.glued_cols is None or line.box is None:
                return None
            first, end = line.glued_cols
            return Box(first, line.box.y, end - first, line.box.h)

        found, asked = self._lines_alone(reads, crops, run_box, cut_off=True)
        self.run_reads += asked
        return _replaced(reads, {(i, j): replace(reads[i].lines[j], alone=alone) for (i, j), alone in found.items()})

    def _lines_alone(
        self,
        reads: list[OcrResult],
        crops: list[np.ndarray],
        box_of: Callable[[OcrLine, int], Box | None],
        only: list[bool] | None = None,
        cut_off: bool = False,
    ) -> tuple[dict[tuple[int, int], OcrLine], int]:
        """Each line of ``reads`` that ``box_of`` (given the line and its crop's width) gives a box read again
        alone, inside that box of its crop (with a margin), in the reads ``only`` marks (default: all): the reads
        that found one line (with ``cut_off``: one the crop does not cut, see _one_line), moved into the crop's
        pixels, by (read, line) index; and how many were read."""
        where = [(i, j, box) for i, result in enumerate(reads) if only is None or only[i]
                 for j, ln in enumerate(result.lines) if (box := box_of(ln, crops[i].shape[1])) is not None]
        if not where:
            return {}, 0
        cut = [_line_crop(crops[i], box) for i, _, box in where]
        again = self.engine.recognize([c for c, _, _ in cut], self.task)
        found = {(i, j): line.moved(x0, y0)
                 for (i, j, _), (image, x0, y0), alone in zip(where, cut, again, strict=True)
                 if (line := _one_line(alone, image.shape[0] if cut_off else None)) is not None}
        return found, len(where)

    def _collect(self, done: dict[int, OcrResult], items: list[_Item], results: list[OcrResult]) -> None:
        if len(results) != len(items):
            raise EngineError(f"{self.engine.name} returned {len(results)} results for {len(items)} images")
        frames = [crop for _, crop, _ in items]
        items, results = self._surer_fused(items, results)
        # Not on a mean over frames: its window may have taken in a few frames of the next subtitle, faint, which
        # the whole line's box would read.
        results = self._whole_lines(results, [crop for _, crop, _ in items],
                                    [crop is frame for (_, crop, _), frame in zip(items, frames, strict=True)])
        # Measured here, on the OCR thread, while the crop is at hand (print is dropped by the zone's layout).
        measured = [with_fill(result, crop) for (_, crop, _), result in zip(items, results, strict=True)]
        # A read with lines that look like print (a page, a letter, a screen of text) is read again with the
        # crop's closed light glyphs alone: a subtitle over the print, without the print (the zone's layout
        # decides which read to believe). So is a read that found a line of print and nothing else: the detector
        # boxed the page's line and not the subtitle over it. A lone sign beside other lines is not worth it: its
        # specks read alone are junk.
        glued = []
        for k, ((read_id, crop, _), result) in enumerate(zip(items, measured, strict=True)):
            low = [ln.box.h for ln in result.lines if ln.box is not None and _printlike(ln)]
            page = read_id in self._pages
            self._pages.discard(read_id)
            height = max(low or [ln.box.h for ln in result.lines if ln.box is not None] or [crop.shape[0] // 3])
            only_print = bool(low) and len(low) == sum(ln.box is not None for ln in result.lines)
            image = glyph_image(crop, height) if len(low) >= PRINT_BLOCK or page or only_print else None
            if image is not None:
                glued.append((k, image, height))
        measured = self._runs_alone(measured, [crop for _, crop, _ in items])
        if glued:
            again = self._glyphs_read(glued)
            again = self._in_picture(again, [items[k][1] for k, _, _ in glued])
            for (k, image, _), clean in zip(glued, again, strict=True):
                measured[k] = replace(measured[k], glyphs_only=with_fill(clean, image))
            self.glyph_reads += len(glued)
        for (read_id, _, _), result in zip(items, measured, strict=True):
            done[read_id] = result


def _lost_only(fused: str, single: str) -> bool:
    """``fused`` is ``single`` less some of its characters (spaces aside): surer for leaving out what it could not
    read ("没有" for "没有......"); a glyph lost is a common miss, one made up is not (as in vidocr.merge._vote)."""
    a, b = "".join(fused.split()), "".join(single.split())
    return len(a) < len(b) and in_order(a, b)


def _filled(first: str, again: str) -> bool:
    """``again`` is ``first`` with characters added inside its words (spaces aside, none before its first character,
    after its last one or in place of a space): glyphs a read lost between others of the same word."""
    words, more = first.split(), again.split()
    if len(words) != len(more) or len("".join(more)) <= len("".join(words)):
        return False
    return all(a[:1] == b[:1] and a[-1:] == b[-1:] and in_order(a, b) for a, b in zip(words, more, strict=True))


def _whole_side(line: OcrLine, width: int) -> int:
    """The side a line's whole box (_whole_box) grows it on: -1 left (the line is right of the middle), 1 right,
    0 neither (a line centred within WHOLE_OFF of its height, read whole between its boxes)."""
    box = cast(Box, line.box)
    off = box.x + box.w / 2 - width / 2
    if abs(off) < WHOLE_OFF * box.h and centred_about(box, None, width / 2, width):
        return 0
    return -1 if off > 0 else 1


def _whole_box(line: OcrLine, width: int) -> Box | None:
    """The box a line the detector may have boxed in part would have as a whole centred line in a crop ``width``
    wide (see OcrWorker._whole_lines), or None: a line off the middle that reaches near it (WHOLE_REACH), widened
    to its mirror image about the middle (one the layout calls centred too: the detector's box left out the
    last glyph, "曲がっ" of "曲がって"); a centred line joined from boxes with a gap wider than its height between
    two of them (a word gap is a third of it), whole. A line far to one side (a sign) is not read again."""
    box = line.box
    if box is None or box.h < 4:
        return None
    middle, x1 = width / 2, box.x + box.w
    if _whole_side(line, width):
        if box.x - middle > WHOLE_REACH * box.h or middle - x1 > WHOLE_REACH * box.h:
            return None
        left = int(min(box.x, width - x1))
        return Box(left, box.y, width - left - left, box.h)
    gaps = [b.box.x - (a.box.x + a.box.w) for a, b in pairwise(line.parts)]
    return box if gaps and max(gaps) > box.h else None


def _centred_in(line: OcrLine, width: int) -> bool:
    """Whether ``line``'s text (where the recogniser aligned it, else its box) is centred in a crop ``width`` wide,
    within twice the zone layout's tolerance (its axis may be a little off the band's middle)."""
    return line.box is not None and centred_about(line.box, line.text_cols, width / 2, width, 2 * CENTRE_TOLERANCE)


def _grown(first: str, again: str, side: int) -> bool:
    """``again`` has more characters than ``first`` (spaces aside) and each word of ``first``, in order, with the
    characters it adds on ``side`` of them: -1 before, 1 after, 0 between (a line read again in a box widened on
    that side, or whole between its boxes; picture detail at the other end is not part of the line)."""
    if len("".join(again.split())) <= len("".join(first.split())):
        return False
    at, start = 0, None
    for word in first.split():
        found = again.find(word, at)
        if found < 0:
            return False
        start = found if start is None else start
        at = found + len(word)
    before, after = bool(again[: start or 0].strip()), bool(again[at:].strip())
    return not (after and side <= 0) and not (before and side >= 0)


def _unsure(result: OcrResult) -> bool:
    return bool(result.text.strip()) and result.confidence < FUSE_BELOW


def _replaced(reads: list[OcrResult], lines: dict[tuple[int, int], OcrLine]) -> list[OcrResult]:
    """``reads`` with the lines given by (read, line) index replaced."""
    return [replace(read, lines=tuple(lines.get((i, j), ln) for j, ln in enumerate(read.lines)))
            if any(key[0] == i for key in lines) else read for i, read in enumerate(reads)]


def _one_line(result: OcrResult, height: int | None) -> OcrLine | None:
    """The one line of a line's crop read alone: its only line, or of several, given the crop's ``height``, the only
    one the crop's top or bottom does not cut (a detector box taller than its text, joined to a sign's plate, takes
    in the lower part of the subtitle line above); else None."""
    lines = result.lines
    if len(lines) > 1 and height is not None:
        lines = tuple(ln for ln in lines if ln.box is None or (ln.box.y > 0 and ln.box.y + ln.box.h < height))
    return lines[0] if len(lines) == 1 else None


def _line_crop(crop: np.ndarray, box: Box) -> tuple[np.ndarray, int, int]:
    """``box`` of ``crop`` with a margin of an eighth of its height (at least two pixels), and its offset."""
    pad = max(2, box.h // 8)
    x0, y0 = max(0, box.x - pad), max(0, box.y - pad)
    return crop[y0 : box.y + box.h + pad, x0 : box.x + box.w + pad], x0, y0


def _printlike(line: OcrLine) -> bool:
    return line.fill is not None and line.fill <= GLUED_FILL_MAX
