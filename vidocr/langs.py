"""Languages and scripts: what ``--lang`` accepts, which recogniser reads each script, where language packs live.

PP-OCRv6 (the embedded rapidocr models) reads Chinese, Japanese and Latin scripts, and reads Hangul, Cyrillic,
Arabic, Thai or Devanagari as nothing or as confident look-alikes ("В ЧУВСТВАХ" -> "B 4YBCTBAX"). Those go to
Tesseract 5 (the ``tesserocr`` wheel, extra ``vidocr[tesseract]``) with the Debian language pack of the script
(``tesseract-ocr-kor``, ``-rus``...: ``/usr/share/tesseract-ocr/5/tessdata``).
"""

from __future__ import annotations

import importlib.util
import os
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from vidocr.errors import ConfigError, EngineUnavailable

#: Read by PP-OCR: ISO 639-1/-3 codes and script names.
_PPOCR_WORDS = (
    "zh zho chi ja jpn en eng fr fra de deu es spa it ita pt por nl nld sv swe da dan no nb nor fi fin pl pol cs ces "
    "sk slk sl slv hr hrv ro ron hu hun tr tur vi vie id ind ms msa tl fil sq et est lv lav lt lit ca cat eu gl la af "
    "sw yue cmn han chinese japanese latin english"
)
PPOCR_LANGS = frozenset(_PPOCR_WORDS.split())


@dataclass(frozen=True)
class Script:
    """A script Tesseract reads for us: its name, the language pack used for it by default, its code points."""

    name: str
    pack: str
    ranges: tuple[tuple[int, int], ...]


SCRIPTS: dict[str, Script] = {
    s.name: s
    for s in (
        Script("Hangul", "kor", ((0xAC00, 0xD7AF), (0x1100, 0x11FF), (0x3130, 0x318F))),
        Script("Cyrillic", "rus", ((0x0400, 0x052F),)),
        Script("Arabic", "ara", ((0x0600, 0x06FF), (0x0750, 0x077F), (0xFB50, 0xFDFF), (0xFE70, 0xFEFF))),
        Script("Hebrew", "heb", ((0x0590, 0x05FF),)),
        Script("Thai", "tha", ((0x0E00, 0x0E7F),)),
        Script("Devanagari", "hin", ((0x0900, 0x097F),)),
        Script("Greek", "ell", ((0x0370, 0x03FF),)),
        Script("Bengali", "ben", ((0x0980, 0x09FF),)),
        Script("Tamil", "tam", ((0x0B80, 0x0BFF),)),
    )
}

#: ``--lang`` values read by Tesseract -> (language pack, script name).
TESSERACT_LANGS: dict[str, tuple[str, str]] = {
    **{k: ("kor", "Hangul") for k in ("ko", "kor", "korean", "hangul")},
    **{k: ("rus", "Cyrillic") for k in ("ru", "rus", "russian", "cyrillic")},
    **{k: ("ukr", "Cyrillic") for k in ("uk", "ukr", "ukrainian")},
    **{k: ("bul", "Cyrillic") for k in ("bg", "bul", "bulgarian")},
    **{k: ("srp", "Cyrillic") for k in ("sr", "srp", "serbian")},
    **{k: ("ara", "Arabic") for k in ("ar", "ara", "arabic")},
    **{k: ("fas", "Arabic") for k in ("fa", "fas", "per", "persian")},
    **{k: ("urd", "Arabic") for k in ("ur", "urd", "urdu")},
    **{k: ("heb", "Hebrew") for k in ("he", "heb", "hebrew")},
    **{k: ("tha", "Thai") for k in ("th", "tha", "thai")},
    **{k: ("hin", "Devanagari") for k in ("hi", "hin", "hindi", "devanagari")},
    **{k: ("mar", "Devanagari") for k in ("mr", "mar", "marathi")},
    **{k: ("nep", "Devanagari") for k in ("ne", "nep", "nepali")},
    **{k: ("ell", "Greek") for k in ("el", "ell", "gre", "greek")},
    **{k: ("ben", "Bengali") for k in ("bn", "ben", "bengali")},
    **{k: ("tam", "Tamil") for k in ("ta", "tam", "tamil")},
}

#: Scripts written right to left: boxes of one line are joined right to left (logical order).
RTL = frozenset({"Arabic", "Hebrew"})

#: Scripts written without spaces between words: a space comes only from a visible gap between boxes.
UNSPACED = frozenset({"Thai"})


def apt_package(pack: str) -> str:
    """Debian's package of a Tesseract language pack."""
    return f"tesseract-ocr-{pack.replace('_', '-').lower()}"


def parse_langs(value: str | Iterable[str] | None) -> tuple[str, ...]:
    """``--lang`` values (comma-separated and/or repeated) -> normalised codes; ``()`` means auto."""
    items = [value] if isinstance(value, str) else list(value or [])
    out: list[str] = []
    for item in items:
        for part in str(item).split(","):
            code = part.strip().lower().replace("_", "-")
            if not code:
                continue
            if code == "auto":
                continue
            base = code.split("-")[0] if code not in PPOCR_LANGS and code not in TESSERACT_LANGS else code
            if base not in PPOCR_LANGS and base not in TESSERACT_LANGS:
                raise ConfigError(
                    f"{{param}}: unknown language or script {part.strip()!r}; use ISO 639 codes (ko, ru, ar, th, hi, "
                    "zh, en...) or script names (hangul, cyrillic, arabic, thai, devanagari, latin), or auto",
                    param="lang",
                )
            if base not in out:
                out.append(base)
    return tuple(out)


def tesseract_packs(langs: Sequence[str]) -> list[str]:
    """The Tesseract language packs that ``langs`` need (none when PP-OCR reads them all)."""
    packs: list[str] = []
    for code in langs:
        if code in TESSERACT_LANGS and TESSERACT_LANGS[code][0] not in packs:
            packs.append(TESSERACT_LANGS[code][0])
    return packs


_TESSDATA_DIRS = ("/usr/share/tesseract-ocr/5/tessdata", "/usr/share/tesseract-ocr/4.00/tessdata",
                  "/usr/share/tessdata", "/usr/local/share/tessdata")


def tessdata_dir() -> Path | None:
    """Where the language packs are: ``$TESSDATA_PREFIX`` (Tesseract's own variable), else Debian's folder."""
    env = os.environ.get("TESSDATA_PREFIX")
    candidates = [Path(env)] if env else []
    candidates += [Path(p) for p in _TESSDATA_DIRS]
    for folder in candidates:
        if folder.is_dir():
            return folder
    return None


def installed_packs() -> set[str]:
    folder = tessdata_dir()
    if folder is None:
        return set()
    return {p.name[: -len(".traineddata")] for p in folder.glob("*.traineddata")}


def check_langs(langs: Sequence[str]) -> None:
    """Refuse, before any work, languages whose recogniser is not installed: one line naming what to install."""
    packs = tesseract_packs(langs)
    if not packs:
        return
    if importlib.util.find_spec("tesserocr") is None:
        raise EngineUnavailable(f"{{param}} {','.join(langs)} needs Tesseract: pip install 'vidocr[tesseract]'",
                                param="lang")
    missing = [p for p in packs if p not in installed_packs()]
    if missing:
        names = " ".join(apt_package(p) for p in missing)
        raise ConfigError(f"{{param}} {','.join(langs)}: language pack not installed: apt-get install {names}",
                          param="lang")


def script_counts(text: str) -> dict[str, int]:
    """Letters of ``text`` per script (the SCRIPTS above, plus Latin and Han/kana as "Latin" and "CJK")."""
    counts: dict[str, int] = {}
    for char in text:
        if not char.isalpha() and unicodedata.category(char) not in ("Mn", "Mc"):
            continue
        cp = ord(char)
        name = "other"
        for script in SCRIPTS.values():
            if any(lo <= cp <= hi for lo, hi in script.ranges):
                name = script.name
                break
        else:
            if cp < 0x0250 or 0x1E00 <= cp <= 0x1EFF:
                name = "Latin"
            elif 0x3040 <= cp <= 0x30FF or 0x4E00 <= cp <= 0x9FFF or 0x3400 <= cp <= 0x4DBF:
                name = "CJK"
        counts[name] = counts.get(name, 0) + 1
    return counts


def main_script(text: str) -> str | None:
    counts = script_counts(text)
    return max(counts, key=lambda k: counts[k]) if counts else None


#: Latin letters drawn like Cyrillic ones in subtitle fonts, and the Cyrillic letter each stands for.
_CYRILLIC_TWINS = str.maketrans("ABCEHKMOPTXYaceopxy", "АВСЕНКМОРТХУасеорху")


def cyrillic_twins(text: str) -> str:
    """``text`` with each word written in Latin letters that all have a Cyrillic twin (A, B, C, E, H, K, M, O, P, T,
    X, Y; a, c, e, o, p, x, y) written in Cyrillic, when the text's other letters are Cyrillic: a recogniser reading
    Russian with English beside it reads a lone "В" as the Latin "B" ("B ЭМОЦИЯХ"), and no word of Latin letters
    alone stands among Cyrillic words made of just those. A word with another Latin letter stays ("iPhone")."""
    counts = script_counts(text)
    latin, cyrillic = counts.get("Latin", 0), counts.get("Cyrillic", 0)
    if not latin or cyrillic <= latin:
        return text
    words = []
    for word in text.split(" "):
        letters = [c for c in word if c.isalpha()]
        twins = all(c.translate(_CYRILLIC_TWINS) != c or main_script(c) == "Cyrillic" for c in letters)
        words.append(word.translate(_CYRILLIC_TWINS) if letters and twins else word)
    return " ".join(words)
