"""One Chinese script per video: simplified or traditional, whatever the recogniser's variant forms.

PP-OCR reads the characters it sees, and where a simplified and a traditional form look alike it sometimes
returns the other one: "別打开那扇门" in a simplified line (別 is the traditional 别). Players and search show such
a cue with a stray character. ``--script`` makes the output consistent:

- ``auto`` (default): the script is decided per video from the characters that exist in one script only (开 is
  simplified, 開 traditional; most characters are both), counted over the cues so far and the cue itself; a
  cue whose characters disagree with a clear majority (at least SURE_COUNT of them and SURE_RATIO times the
  other script) is converted to it with OpenCC. Nothing is converted until the evidence is clear, and never
  in a video that showed kana (Japanese kanji are neither script).
- ``simplified`` / ``traditional``: every cue converted (OpenCC ``t2s`` / ``s2t``, phrase-aware).
- ``keep``: the recogniser's characters as they are.

Only cue text: a translation is the engine's own output.
"""

from __future__ import annotations

from functools import lru_cache
from importlib import resources
from typing import Any

from vidocr.errors import ConfigError
from vidocr.textnorm import is_cjk

SCRIPTS = ("auto", "simplified", "traditional", "keep")
#: A video's script is clear once one script's own characters number at least this many...
SURE_COUNT = 2
#: ...and this many times the other script's.
SURE_RATIO = 3.0
OPENCC_PACKAGE = "opencc-python-reimplemented==0.1.7"


def check_script(mode: str) -> str:
    """``mode`` when it is one of SCRIPTS, else a ConfigError naming the parameter."""
    if mode not in SCRIPTS:
        raise ConfigError(f"{{param}} must be one of {', '.join(SCRIPTS)}, not {mode!r}", param="script")
    return mode


@lru_cache(maxsize=1)
def _own_characters() -> tuple[frozenset[str], frozenset[str]]:
    """(characters only simplified Chinese uses, characters only traditional Chinese uses), from OpenCC's
    character tables: a character with a different form in the other script."""
    folder = resources.files("opencc") / "dictionary"

    def table(name: str) -> dict[str, list[str]]:
        out = {}
        for line in (folder / name).read_text("utf-8").splitlines():
            key, _, values = line.partition("\t")
            if len(key) == 1:
                out[key] = values.split()
        return out

    to_simple, to_trad = table("TSCharacters.txt"), table("STCharacters.txt")
    traditional = frozenset(k for k, v in to_simple.items() if k not in v)
    simplified = frozenset(k for k, v in to_trad.items() if k not in v) - traditional
    return simplified, traditional - simplified


@lru_cache(maxsize=2)
def _converter(config: str) -> Any:
    try:
        import opencc
    except ImportError:  # pragma: no cover - a dependency of vidocr
        raise ConfigError(f"{{param}} needs OpenCC: pip install '{OPENCC_PACKAGE}'", param="script") from None
    return opencc.OpenCC(config)


def _kana(ch: str) -> bool:
    return 0x3040 <= ord(ch) <= 0x30FF


class ScriptKeeper:
    """Makes a video's cue texts one Chinese script (see the module docstring). One per video, cues in order."""

    def __init__(self, mode: str = "auto") -> None:
        self.mode = check_script(mode)
        self.simplified = 0  # characters of each script's own seen in the video's cues so far
        self.traditional = 0
        self.japanese = False
        self.converted = 0

    def fix(self, text: str) -> str:
        if self.mode == "keep" or not any(is_cjk(ch) for ch in text):
            return text
        if any(_kana(ch) for ch in text):
            self.japanese = True
            return text
        if self.mode in ("simplified", "traditional"):
            return self._convert(text, "t2s" if self.mode == "simplified" else "s2t")
        if self.japanese:
            return text
        own_s, own_t = _own_characters()
        simplified = sum(ch in own_s for ch in text)
        traditional = sum(ch in own_t for ch in text)
        total_s, total_t = self.simplified + simplified, self.traditional + traditional
        self.simplified, self.traditional = total_s, total_t
        if traditional and total_s >= SURE_COUNT and total_s >= SURE_RATIO * total_t:
            return self._convert(text, "t2s")
        if simplified and total_t >= SURE_COUNT and total_t >= SURE_RATIO * total_s:
            return self._convert(text, "s2t")
        return text

    def _convert(self, text: str, config: str) -> str:
        converted = str(_converter(config).convert(text))
        if converted != text:
            self.converted += 1
        return converted
