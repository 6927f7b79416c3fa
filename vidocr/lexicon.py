"""Word lists for the recogniser's Latin words: a word it read that no list holds is replaced by a listed word its
own posteriors support nearly as well (see :func:`correct_word`).

At 360p in heavy compression PP-OCR misreads single letters of English words it is unsure of ("tne" for "the",
"dowa" for "down", "bąck" for "back", ``That"s``), while the right letter is its second choice at those steps. The
CTC probability of a listed word over the steps the misread word took (the forward algorithm: every alignment of
its letters, blanks between) is then close to the misread's own; a word it read surely (a name, a word of another
language) leaves every other spelling far behind and is kept. Word lists are pyspellchecker's (word frequencies
from subtitles, one per language, gzipped JSON inside its wheel); they load on first use, once per process.
"""

from __future__ import annotations

import gzip
import itertools
import json
import math
import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from importlib.util import find_spec
from pathlib import Path

import numpy as np

#: ISO 639 codes (and names) ``--lang`` may give, and the word list each picks.
LIST_OF = {
    "en": "en", "eng": "en", "english": "en", "latin": "en",
    "fr": "fr", "fra": "fr", "fre": "fr", "de": "de", "deu": "de", "ger": "de", "es": "es", "spa": "es",
    "it": "it", "ita": "it", "pt": "pt", "por": "pt", "nl": "nl", "nld": "nl", "dut": "nl",
}
#: With ``--lang auto``: English, the common language of Latin-script subtitles (a line of another language is
#: read as the recogniser ranks it, see Lexicon.speaks).
AUTO = ("en",)
#: How much less likely (natural log of the CTC probability) a listed word may be than the word as read to
#: replace it: e^4, 55 times. Misread letters of a 360p line cost 0.3-5; a name read surely leaves every
#: listed spelling 10 and more behind.
MARGIN = 4.0
#: Words longer than this (or with digits) are left as read: their edits are many and rarely a listed word.
MAX_WORD = 14
#: Edits at two places are tried on words of at least this many letters (at one place on shorter ones)...
TWO_EDITS_FROM = 4
#: ...when the posteriors allow at most this many edits of the word (see _edits): pairs of more are too many.
MAX_EDITS = 60

#: The share of a line's words its lists must hold as COMMON for its other words to be read against them.
SPEAKS = 0.5
#: Two words read as one are split only into words at least this frequent in their list (counts from subtitles:
#: "the" 76M, "further" 104k, "cd" 50): a word that is no word split into two rare ones is likelier a name.
COMMON = 10_000

_lock = threading.Lock()
#: Each list's words: all, and those at least COMMON frequent.
_Tiers = tuple[frozenset[str], frozenset[str]]
_loaded: dict[str, _Tiers] = {}


def lists_for(langs: Iterable[str]) -> tuple[str, ...]:
    """The word lists of ``langs`` (``--lang``; empty: auto), those pyspellchecker ships."""
    langs = tuple(langs)
    if not langs:
        return AUTO
    return tuple(dict.fromkeys(LIST_OF[lang.lower()] for lang in langs if lang.lower() in LIST_OF))


def _resources() -> Path | None:
    spec = find_spec("spellchecker")
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations))) / "resources"


def words(name: str) -> _Tiers:
    """The lower-case words of list ``name``: all, and those at least COMMON frequent; empty when pyspellchecker
    is not installed."""
    with _lock:
        if name not in _loaded:
            folder = _resources()
            path = folder / f"{name}.json.gz" if folder else None
            if path is None or not path.is_file():
                _loaded[name] = frozenset(), frozenset()
            else:
                with gzip.open(path, "rt", encoding="utf-8") as fh:
                    counts: dict[str, int] = json.load(fh)
                _loaded[name] = frozenset(counts), frozenset(w for w, n in counts.items() if n >= COMMON)
        return _loaded[name]


def _apostrophes(text: str) -> str:
    """``text`` with the double quotes and backquotes the recogniser reads for apostrophes (``That"s``) as
    apostrophes."""
    return text.replace('"', "'").replace("`", "'")


def _word(text: str) -> bool:
    return len(text) > 1 or text in ("a", "i")


class Lexicon:
    """The words of one or more lists."""

    def __init__(self, names: Iterable[str]) -> None:
        self.names = tuple(names)
        self._tiers: _Tiers | None = None

    def _lists(self) -> _Tiers:
        if self._tiers is None:
            parts = [words(name) for name in self.names]
            if len(parts) == 1:
                self._tiers = parts[0]
            else:
                self._tiers = frozenset().union(*(p[0] for p in parts)), frozenset().union(*(p[1] for p in parts))
        return self._tiers

    @property
    def words(self) -> frozenset[str]:
        return self._lists()[0]

    def known(self, text: str) -> bool:
        """Whether ``text`` is listed: one word, or words split by single spaces, each COMMON; words of two
        letters or more, "a" and "i"."""
        if " " not in text:
            return text in self._lists()[0] and _word(text)
        common = self._lists()[1]
        return all(p in common and _word(p) for p in text.split(" "))

    def speaks(self, words: Sequence[str]) -> bool:
        """Whether a line whose words are ``words`` is in the lists' language: at least SPEAKS of its words of two
        letters or more are COMMON in them. A line of another language (French, German) shares few
        common words with an English list ("Je ne sais pas où il est allé": none), and its words the list does
        not hold are no misreads; an English line misread at 360p keeps most ("Keep viur volce down, they'li near
        us": 4 of 7)."""
        counted = [_apostrophes(w.lower()) for w in words if len(w) > 1]
        if not counted:
            return False  # no Latin word: the lists need not load
        common = self._lists()[1]
        return sum(w in common for w in counted) >= SPEAKS * len(counted)


def latin_letter(char: str) -> bool:
    """A letter of a Latin word (or its apostrophe): one character, alphabetic, not CJK, Greek or Cyrillic."""
    return len(char) == 1 and (char == "'" or (char.isalpha() and char < "\u0370"))


@dataclass(frozen=True)
class Classes:
    """A CTC recogniser's classes (0: blank), each one's number, and which are Latin letters, the apostrophe or
    the space (what an edit of a word may write)."""

    chars: Sequence[str]
    index: Mapping[str, int]
    latin: np.ndarray

    @classmethod
    def of(cls, chars: Sequence[str]) -> Classes:
        latin = np.array([c == " " or latin_letter(c) for c in chars])
        latin[0] = False
        return cls(chars, {c: i for i, c in enumerate(chars) if i}, latin)


def _runs(probs: np.ndarray) -> list[tuple[int, int, int]]:
    """The greedy path's characters over ``probs``: (class, first step, last step) of each."""
    tokens = probs.argmax(axis=1)
    runs: list[tuple[int, int, int]] = []
    for t, token in enumerate(tokens):
        if token == 0:
            continue
        if runs and runs[-1][0] == token and runs[-1][2] == t - 1:
            runs[-1] = (int(token), runs[-1][1], t)
        else:
            runs.append((int(token), t, t))
    return runs


def _edits(
    probs: np.ndarray, runs: list[tuple[int, int, int]], classes: Classes, floor: float
) -> list[tuple[int, int, str]]:
    """The one-character edits of the word the greedy path spells that the posteriors allow: (position, kind,
    text) with kind 0 a change of the character at the position to ``text``, 1 its removal, 2 ``text`` added
    before it (position len(runs): at the end). A character is changed to another the recogniser gave at
    least ``floor`` at one of its steps, removed where "blank" got that much, and one is added where it got that
    much on the steps between two characters (a space too: two words read as one). A character read surely
    allows none: its word is not searched at all."""
    out: list[tuple[int, int, str]] = []
    chars, letter = classes.chars, classes.latin
    for i, (token, first, last) in enumerate(runs):
        steps = probs[first : last + 1].max(axis=0)
        for k in np.flatnonzero((steps >= floor) & letter):
            if k != token:
                out.append((i, 0, chars[k]))
        if steps[0] >= floor:
            out.append((i, 1, ""))
    bounds = [0, *(r[2] for r in runs)]
    for i in range(len(runs) + 1):
        start = bounds[i]
        end = runs[i][1] if i < len(runs) else len(probs) - 1
        steps = probs[start : end + 1].max(axis=0)
        for k in np.flatnonzero((steps >= floor) & letter):
            out.append((i, 2, chars[k]))
    return out


def _apply(word: list[str], edits: Sequence[tuple[int, int, str]]) -> str:
    """``word`` (its characters) with ``edits`` (see _edits, at distinct positions) made."""
    out = list(word) + [""]
    for pos, kind, text in edits:
        if kind == 0:
            out[pos] = text
        elif kind == 1:
            out[pos] = ""
    for pos, kind, text in sorted(edits, reverse=True):
        if kind == 2:
            out[pos] = text + out[pos]
    return "".join(out)


def ctc_log_prob(probs: np.ndarray, labels: list[int]) -> float:
    """log P(labels | probs) under CTC (blank = 0): ``probs`` is T steps x classes, softmax output."""
    steps = probs.shape[0]
    ext = [0]
    for label in labels:
        ext += [label, 0]
    size = len(ext)
    if steps == 0 or size > 2 * steps + 1:
        return float("-inf")
    ext_arr = np.array(ext)
    logp = np.log(np.maximum(probs[:, ext_arr], 1e-30))
    # A state may skip the blank before it unless it repeats the label two states back.
    skip = np.zeros(size, dtype=bool)
    skip[2:] = (ext_arr[2:] != 0) & (ext_arr[2:] != ext_arr[:-2])
    alpha = np.full(size, -np.inf)
    alpha[0] = logp[0, 0]
    if size > 1:
        alpha[1] = logp[0, 1]
    for t in range(1, steps):
        moved = alpha.copy()
        moved[1:] = np.logaddexp(moved[1:], alpha[:-1])
        moved[2:] = np.where(skip[2:], np.logaddexp(moved[2:], alpha[:-2]), moved[2:])
        alpha = moved + logp[t]
    return float(np.logaddexp(alpha[-1], alpha[-2]) if size > 1 else alpha[-1])


def correct_word(
    lexicon: Lexicon,
    word: str,
    probs: np.ndarray,
    classes: Classes,
    margin: float = MARGIN,
) -> str | None:
    """A listed word to write for ``word`` (read over the CTC steps ``probs`` of a recogniser of ``classes``),
    or None to keep it.

    The spellings up to two edits from ``word`` that the posteriors allow (:func:`_edits`, edits at two places
    only for words of TWO_EDITS_FROM letters and more) and a list holds (lower-case, capitalised as the word was
    and, for a word read all in capitals, in capitals) are scored by their CTC probability over the steps; the
    likeliest replaces the word when within ``margin`` of the word as read. A listed word is kept. ``word`` may
    hold an apostrophe
    read as a double quote or backquote between letters (``That"s``): that is compared as an apostrophe."""
    plain = _apostrophes(word)
    core = plain.strip("'")
    if len(core) < 2 or len(core) > MAX_WORD or any(c.isdigit() for c in core):
        return None
    if lexicon.known(core.lower()) and plain == word:
        return None
    chars, index = classes.chars, classes.index
    runs = _runs(probs)
    if "".join(chars[r[0]] for r in runs) != word:
        return None  # not the greedy path's word (the caller's steps are off): leave it
    edits = _edits(probs, runs, classes, math.exp(-margin - 1))
    letters = list(word)
    spelled = {plain} | {_apply(letters, [e]) for e in edits}
    if len(core) >= TWO_EDITS_FROM and len(edits) <= MAX_EDITS:
        for x, y in itertools.combinations(edits, 2):
            if x[0] != y[0] or (x[1] == 2) != (y[1] == 2):
                spelled.add(_apply(letters, [x, y]))
    read = ctc_log_prob(probs, [index[c] for c in word])
    best, best_score = None, float("-inf")
    for text in spelled:
        text = _apostrophes(text)
        inner = text.strip("'")
        if not inner or inner.startswith(" ") or inner.endswith(" ") or not lexicon.known(inner.lower()):
            continue
        spellings = {text, text.lower()}
        if core[:1].isupper():
            spellings.add(text[:1].upper() + text[1:].lower())
        if core.isupper() and len(core) > 1:
            spellings.add(text.upper())
        for spelling in spellings - {word}:
            if any(c not in index for c in spelling):
                continue
            score = ctc_log_prob(probs, [index[c] for c in spelling])
            if score > best_score:
                best, best_score = spelling, score
    if best is None or best_score < read - margin:
        return None
    return best
