"""Text normalisation for cues and for comparing OCR reads."""

from __future__ import annotations

import re
import unicodedata
from difflib import SequenceMatcher

_SPACES = re.compile(r"[ \t\u00a0\u3000]+")
# ASCII punctuation that NFKC produces from full-width forms; restored next to CJK text, where
# readers expect the full-width form.
_FULLWIDTH = {",": "，", "!": "！", "?": "？", ":": "：", ";": "；", "(": "（", ")": "）"}
# A vertical bar where a word starts in Latin text is a capital I the recogniser read as "|" (thin sans-serif
# glyphs, 360p): "| was", "|'m", "|t's". No subtitle writes a bar there (Subtitle Edit's OCR fixes do the same).
_BAR_AS_I = re.compile(r"(?:(?<=^)|(?<=[\s\"'(\[¿¡-]))\|(?=$|[\s'’.,!?;:)\]a-z])")


def is_cjk(ch: str) -> bool:
    code = ord(ch)
    return (
        0x4E00 <= code <= 0x9FFF
        or 0x3400 <= code <= 0x4DBF
        or 0x3040 <= code <= 0x30FF
        or 0xAC00 <= code <= 0xD7AF
        or 0xF900 <= code <= 0xFAFF
        or 0x20000 <= code <= 0x2FA1F
    )


def normalize_text(text: str) -> str:
    """NFKC, one space between words, no empty lines, line breaks kept; full-width punctuation kept in CJK."""
    text = unicodedata.normalize("NFKC", text)
    lines = []
    for raw in text.replace("\r", "\n").split("\n"):
        line = _SPACES.sub(" ", raw).strip()
        if not line:
            continue
        if "|" in line and any("a" <= c.lower() <= "z" for c in line):
            line = _BAR_AS_I.sub("I", line)
        lines.append(_restore_fullwidth(line))
    return "\n".join(lines)


def _restore_fullwidth(line: str) -> str:
    if not any(is_cjk(c) for c in line):
        return line
    out = []
    for i, ch in enumerate(line):
        if ch in _FULLWIDTH:
            prev = line[i - 1] if i > 0 else ""
            nxt = line[i + 1] if i + 1 < len(line) else ""
            if (prev and is_cjk(prev)) or (nxt and is_cjk(nxt)):
                out.append(_FULLWIDTH[ch])
                continue
        out.append(ch)
    result = "".join(out)
    # A space after full-width punctuation is redundant in CJK text ("你好， 世界" -> "你好，世界").
    return re.sub(r"([，！？：；）])\s+(?=[^\x00-\x7f])", r"\1", result)


def comparable(text: str) -> str:
    """The form used to compare reads: normalised, case-folded, no whitespace or punctuation."""
    text = unicodedata.normalize("NFKC", text).casefold()
    return "".join(c for c in text if unicodedata.category(c)[0] not in "PZSC")


def in_order(part: str, whole: str) -> bool:
    """``part`` is ``whole`` with characters left out (or all of it): each of its characters is in ``whole``, in
    the same order."""
    rest = iter(whole)
    return all(char in rest for char in part)


def text_similarity(a: str, b: str) -> float:
    """Similarity of two texts in [0, 1] on their comparable forms (1.0 when both are empty)."""
    ca, cb = comparable(a), comparable(b)
    if not ca and not cb:
        return 1.0
    if not ca or not cb:
        return 0.0
    return SequenceMatcher(None, ca, cb, autojunk=False).ratio()
