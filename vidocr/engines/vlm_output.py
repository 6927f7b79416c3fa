"""Turn a vision-language model's raw answer into an :class:`OcrResult`, and count the bad ones.

Steps: strip template/special tokens -> cut a looping tail -> per task: spotting boxes (0..1000 coordinates
scaled to the image), bilingual split (original lines vs target-language lines), or plain lines.
Empty, garbage and overlong answers are counted in :class:`OutputStats` and logged once per kind; they become
empty results, never exceptions.
"""

from __future__ import annotations

import logging
import re
import threading
from collections import Counter
from dataclasses import dataclass

from vidocr.types import Box, OcrLine, OcrResult, Task

log = logging.getLogger("vidocr")

SPECIAL_TOKEN_RE = re.compile(r"<｜[^｜>]{1,64}｜>|<\|[A-Za-z0-9_▁ .:-]{1,64}\|>")
SPOT_RE = re.compile(r"(?P<text>.*?)\(\s*(\d{1,4})\s*,\s*(\d{1,4})\s*\)\s*,\s*\(\s*(\d{1,4})\s*,\s*(\d{1,4})\s*\)")
_HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_KANA_HANGUL = re.compile(r"[\u3040-\u30ff\uac00-\ud7af]")
_LATIN = re.compile(r"[A-Za-z]")
_WORDLIKE = re.compile(r"\w")


@dataclass(frozen=True)
class Parsed:
    result: OcrResult
    flags: tuple[str, ...] = ()


class OutputStats:
    """Thread-safe counters of answer kinds: requests, empty, garbage, overlong, loop_cut, tiny, failed."""

    def __init__(self) -> None:
        self.counts: Counter[str] = Counter()
        self._lock = threading.Lock()

    def record(self, parsed: Parsed, engine: str) -> None:
        with self._lock:
            self.counts["requests"] += 1
            first = [f for f in parsed.flags if self.counts[f] == 0]
            self.counts.update(parsed.flags)
        for flag in first:  # once per kind: a long video must not flood the log
            raw = (parsed.result.raw or "")[:80]
            log.warning("%s: first %s model answer (counted in engine stats): %r", engine, flag, raw)

    def add(self, key: str, n: int = 1) -> None:
        with self._lock:
            self.counts[key] += n

    def snapshot(self) -> dict[str, int]:
        with self._lock:
            return dict(self.counts)


def strip_special(text: str) -> str:
    return SPECIAL_TOKEN_RE.sub("", text)


def cut_loop(text: str, min_repeats: int = 3, min_span: int = 6) -> tuple[str, bool]:
    """Cut a tail where one unit repeats ``min_repeats``+ times back to back (keeps one copy)."""
    n = len(text)
    best: tuple[int, int] | None = None  # (start of the repeated run, unit length)
    for unit in range(1, n // min_repeats + 1):
        tail = text[n - unit :]
        count, start = 1, n - unit
        while start - unit >= 0 and text[start - unit : start] == tail:
            count += 1
            start -= unit
        if count >= min_repeats and count * unit >= min_span and (best is None or start < best[0]):
            best = (start, unit)
    if best is None:
        return text, False
    start, unit = best
    return text[: start + unit].rstrip(), True


def _is_target(line: str, lang: str) -> bool:
    if lang.startswith("zh"):
        return bool(_HAN.search(line)) and not _KANA_HANGUL.search(line)
    if lang in ("ja", "ko"):
        return bool(_KANA_HANGUL.search(line))
    letters = len(_LATIN.findall(line))
    return letters > 0 and not _HAN.search(line) and not _KANA_HANGUL.search(line)


def split_bilingual(lines: list[str], target: str) -> tuple[list[str], list[str]]:
    """(original lines, translation lines) from an answer that holds both, one language per line."""
    if len(lines) < 2:
        return lines, lines
    tags = [_is_target(line, target.lower()) for line in lines]
    if any(tags) and not all(tags) and tags == sorted(tags):  # originals first, then translations
        cut = tags.index(True)
        return lines[:cut], lines[cut:]
    if len(lines) % 2 == 0:  # same script both sides (or mixed): the model writes originals first
        half = len(lines) // 2
        return lines[:half], lines[half:]
    return [line for line, t in zip(lines, tags, strict=True) if not t] or lines, [
        line for line, t in zip(lines, tags, strict=True) if t
    ] or lines


def parse_spotting(text: str, width: int, height: int) -> list[OcrLine]:
    out = []
    for m in SPOT_RE.finditer(text):
        x1, y1, x2, y2 = (int(v) for v in m.groups()[1:])
        line = m.group("text").strip(" ,;")
        if not line:
            continue
        x1, x2 = sorted((min(x1, 1000), min(x2, 1000)))
        y1, y2 = sorted((min(y1, 1000), min(y2, 1000)))
        box = Box(round(x1 * width / 1000), round(y1 * height / 1000),
                  max(1, round((x2 - x1) * width / 1000)), max(1, round((y2 - y1) * height / 1000)))
        out.append(OcrLine(line, 1.0, box))
    return sorted(out, key=lambda ln: (ln.box.y, ln.box.x) if ln.box else (0, 0))


def parse_output(
    raw: str,
    task: Task,
    *,
    size: tuple[int, int],
    translate_to: str | None = None,
    truncated: bool = False,
    confidence: float = 1.0,
    max_chars: int = 400,
) -> Parsed:
    """Parse one answer. ``size`` = (width, height) of the image as given; ``truncated`` = hit max_tokens."""
    flags: list[str] = []
    # U+FFFD: bytes of a character cut by max_tokens or a byte-level token soup; never subtitle text.
    text = strip_special(raw).replace("\r", "").replace("\ufffd", "").strip()
    if truncated:
        flags.append("overlong")
    # A capped answer is a likely loop: cut short repeats; otherwise only long ones ("哈哈哈" is a real subtitle).
    text, looped = cut_loop(text, 3, 6) if truncated else cut_loop(text, 4, 24)
    if looped:
        flags.append("loop_cut")
    if len(text) > max_chars:
        text = text[:max_chars]
        if "overlong" not in flags:
            flags.append("overlong")
    lines = [line.strip() for line in text.split("\n") if line.strip()]
    if not lines:
        return Parsed(OcrResult(raw=raw), (*flags, "empty"))
    if not _WORDLIKE.search(text):
        return Parsed(OcrResult(raw=raw), (*flags, "garbage"))
    conf = max(0.0, min(1.0, confidence))
    if task is Task.SPOTTING:
        spotted = parse_spotting(text, *size)
        if spotted:
            return Parsed(OcrResult(tuple(spotted), raw=raw), tuple(flags))
        flags.append("no_boxes")
    if task is Task.TRANSLATE and translate_to:
        original, translated = split_bilingual(lines, translate_to)
        result = OcrResult(tuple(OcrLine(x, conf) for x in original), translation="\n".join(translated), raw=raw)
        return Parsed(result, tuple(flags))
    return Parsed(OcrResult(tuple(OcrLine(x, conf) for x in lines), raw=raw), tuple(flags))
