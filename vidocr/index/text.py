"""How cue text is tokenised for full-text search, how queries are turned into FTS5 expressions, and highlighting.

The scheme, one FTS5 table with the ``unicode61`` tokenizer (``remove_diacritics 2``, ``prefix='1'``):

* Text is NFKC-normalised (full-width Latin and half-width kana fold to their usual forms).
* Words in space-separated scripts (English, French, ...) are indexed as words, so queries match whole words,
  case- and accent-insensitively, and ``word*`` matches a prefix.
* Runs of CJK characters (Han, kana, Hangul) have no spaces, so each run is indexed as its overlapping
  **bigrams plus the run's last character**: ``我知道了`` -> ``我知 知道 道了 了``. Every character of a run
  thus starts exactly one token, at consecutive positions. Queries use that:

  - 2 characters (``知道``): the single token ``知道``;
  - 3+ characters (``不知道``): the phrase ``"不知" + "知道"`` (overlapping bigrams at consecutive positions);
  - 1 character (``知``): the prefix ``"知"*``: every token that starts with it, and the ``prefix='1'`` index
    answers that from one list instead of merging every bigram that starts with the character;
  - a run followed by more query text (``知道ok``) adds the run's last character: ``"知道" + "道" + "ok"``.

  This is exact substring search inside CJK runs for every length, with bm25 statistics per bigram.
  Measured by ``bench/search.py --compare`` on its synthetic 1,000,000 cues (2 cores, warm cache), ranked top 20:

  ==========================  ============  ============================  ===========================
  scheme                      FTS size      1-2 characters (我 / 我们)     3-4 characters (为什么 / 我们知道)
  ==========================  ============  ============================  ===========================
  bigrams (this one)          77 MB         103 / 19 ms                   8 / 1.2 ms
  trigram tokenizer           105 MB        impossible: LIKE finds        7 / 0.6 ms
                                            nothing under 3 characters,
                                            a scan of all cues ~120 ms
  single characters, phrases  40 MB         103 / 27 ms                   10 / 4.9 ms
  ==========================  ============  ============================  ===========================

  (A very common character, 的 here, matches a fifth of all cues: :mod:`vidocr.index.search` bounds that cost by
  ranking only its newest 10,000 matches, ~15 ms.)

Changing :func:`fts_body` changes what the index holds: it needs a schema migration that rebuilds ``cue_fts``.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from vidocr.errors import ConfigError

#: Scripts written without spaces between words: kana, CJK ideographs (BMP, compatibility, extensions), Hangul.
CJK_RANGES = "\u3040-\u30ff\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af\U00020000-\U0003134f"
_CJK_RUN = re.compile(f"[{CJK_RANGES}]+")
# A query unit: a CJK run, or a word (letters/digits that are not CJK), optionally ending with "*".
_UNIT = re.compile(f"(?P<cjk>[{CJK_RANGES}]+)|(?P<word>[^\\W_{CJK_RANGES}]+)(?P<star>\\*)?")
_TERM = re.compile(r'"([^"]*)"(\*?)|(\S+)')
_SEP = r"[\W_]*"  # what FTS5's unicode61 skips between two tokens of a phrase


def fts_body(text: str) -> str:
    """The string given to FTS5 for a cue's text (registered in SQLite as ``vidocr_fts_body``)."""
    return _CJK_RUN.sub(_expand_run, unicodedata.normalize("NFKC", text))


def _expand_run(match: re.Match[str]) -> str:
    run = match.group(0)
    return " " + " ".join([run[i : i + 2] for i in range(len(run) - 1)] + [run[-1]]) + " "


@dataclass(frozen=True)
class Unit:
    """One piece of a query term: a word (``prefix`` when written ``word*``) or a run of CJK characters."""

    text: str
    cjk: bool
    prefix: bool = False


@dataclass(frozen=True)
class ParsedQuery:
    """A query as FTS5 match expression plus the units used to highlight matches."""

    terms: tuple[tuple[Unit, ...], ...]
    match: str


def parse_query(query: str) -> ParsedQuery:
    """Turn what a user typed into an FTS5 expression.

    Syntax: terms separated by spaces must all match (AND); ``"quoted words"`` must appear together, in order;
    ``word*`` matches words starting with ``word``; CJK text matches as a substring. Punctuation is ignored.
    """
    terms: list[tuple[Unit, ...]] = []
    for quoted, star, bare in _TERM.findall(unicodedata.normalize("NFKC", query)):
        units = _units(quoted + star if quoted else bare)
        if units:
            terms.append(units)
    if not terms:
        raise ConfigError(f"nothing to search for in {query!r}: give at least one word or character")
    return ParsedQuery(tuple(terms), " AND ".join(_phrase(units) for units in terms))


def _units(term: str) -> tuple[Unit, ...]:
    found = [
        Unit(m["cjk"], True) if m["cjk"] else Unit(m["word"], False, bool(m["star"])) for m in _UNIT.finditer(term)
    ]
    # Only the last unit of a term may be a prefix: FTS5 phrases take it there.
    return tuple(Unit(u.text, u.cjk, u.prefix and i == len(found) - 1) for i, u in enumerate(found))


def _phrase(units: Sequence[Unit]) -> str:
    tokens: list[str] = []
    for i, unit in enumerate(units):
        last = i == len(units) - 1
        if not unit.cjk:
            tokens.append(_quote(unit.text) + ("*" if unit.prefix else ""))
            continue
        run = unit.text
        tokens.extend(_quote(run[j : j + 2]) for j in range(len(run) - 1))
        if len(run) == 1 and last:
            tokens.append(_quote(run) + "*")  # any token starting with it: a bigram or a run's last character
        elif not last:
            tokens.append(_quote(run[-1]))  # the run ends here in the text too
    return " + ".join(tokens)


def _quote(token: str) -> str:
    return '"' + token.replace('"', '""') + '"'


def highlight_spans(text: str, parsed: ParsedQuery) -> list[tuple[int, int]]:
    """Character spans of ``text`` that match a query term, sorted and merged."""
    folded, origin = _fold(text)
    spans: list[tuple[int, int]] = []
    for units in parsed.terms:
        for m in _term_regex(units).finditer(folded):
            if m.end() > m.start():
                spans.append((origin[m.start()], origin[m.end() - 1] + 1))
    spans.sort()
    merged: list[tuple[int, int]] = []
    for start, end in spans:
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return merged


def mark(text: str, spans: Sequence[tuple[int, int]], marks: tuple[str, str]) -> str:
    """``text`` with each span wrapped in the two ``marks``."""
    out, pos = [], 0
    for start, end in spans:
        out += [text[pos:start], marks[0], text[start:end], marks[1]]
        pos = end
    out.append(text[pos:])
    return "".join(out)


@lru_cache(maxsize=256)
def _term_regex(units: tuple[Unit, ...]) -> re.Pattern[str]:
    word_edge = f"[^\\W_{CJK_RANGES}]"
    parts = []
    for unit in units:
        body = re.escape(_fold(unit.text)[0])
        if unit.cjk:
            parts.append(body)
        else:
            tail = f"{word_edge}*" if unit.prefix else ""
            parts.append(f"(?<!{word_edge}){body}{tail}(?!{word_edge})")
    return re.compile(_SEP.join(parts))


def _fold(text: str) -> tuple[str, list[int]]:
    """Case-, accent- and width-folded text, plus the index in ``text`` of every folded character."""
    pieces: list[str] = []
    origin: list[int] = []
    for i, ch in enumerate(text):
        folded = _fold_char(ch)
        pieces.append(folded)
        origin.extend([i] * len(folded))
    return "".join(pieces), origin


@lru_cache(maxsize=8192)
def _fold_char(ch: str) -> str:
    decomposed = unicodedata.normalize("NFKD", ch)
    stripped = "".join(c for c in decomposed if not unicodedata.combining(c))
    return unicodedata.normalize("NFKC", stripped).casefold()
