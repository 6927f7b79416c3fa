"""How cue text is tokenised for full-text search, how queries are turned into FTS5 expressions, and highlighting.

The scheme, one FTS5 table with the ``unicode61`` tokenizer (``remove_diacritics 2``, ``prefix='1'``):

* Text is NFKC-normalised (full-width Latin and half-width kana fold to their usual forms), and traditional Chinese
  characters are folded to simplified ones, character by character, with OpenCC's ``TSCharacters`` table (from the
  pinned ``opencc-python-reimplemented`` package): ``善後`` and ``善后`` are both indexed and searched as ``善后``,
  so either form finds both. Character by character on purpose: OpenCC's phrase tables convert a word differently
  from its characters (``著名`` stays, ``著`` alone becomes ``着``), so a substring of a converted text would not
  always be the conversion of that substring, and search would miss it. The fold is one-to-one in length, so
  highlighting maps back onto the original text.
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

Queries (:func:`parse_query`): terms separated by spaces must all match; ``a OR b``; ``-word`` or ``NOT word``
excludes cues with it (at least one term must be left to find); ``a NEAR b`` (``NEAR/N``: at most N tokens apart,
default 10; a CJK character counts one token) -> FTS5's ``NEAR()``; ``"phrases"`` and ``prefix*``. The operators
are words in capitals, as in FTS5 itself (lower-case ``or`` is searched as a word). OR binds tighter than the
implicit AND (``cat dog OR fox``: cat, and dog or fox), NEAR tighter than OR. No parentheses.

Changing :func:`fts_body` changes what the index holds: it needs a schema migration that rebuilds ``cue_fts``.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from vidocr.errors import ConfigError, IndexError_

#: The package whose table folds traditional Chinese characters to simplified ones (a dependency, pinned).
OPENCC_PACKAGE = "opencc-python-reimplemented==0.1.7"
#: Default NEAR distance in tokens (words; CJK characters).
NEAR_DEFAULT = 10

#: Scripts written without spaces between words: kana, CJK ideographs (BMP, compatibility, extensions), Hangul.
CJK_RANGES = "\u3040-\u30ff\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af\U00020000-\U0003134f"
_CJK_RUN = re.compile(f"[{CJK_RANGES}]+")
# A query unit: a CJK run, or a word (letters/digits that are not CJK), optionally ending with "*".
_UNIT = re.compile(f"(?P<cjk>[{CJK_RANGES}]+)|(?P<word>[^\\W_{CJK_RANGES}]+)(?P<star>\\*)?")
_NEAR = re.compile(r"NEAR(?:/(\d+))?")
_SEP = r"[\W_]*"  # what FTS5's unicode61 skips between two tokens of a phrase


def fts_body(text: str) -> str:
    """The string given to FTS5 for a cue's text (registered in SQLite as ``vidocr_fts_body``)."""
    return _CJK_RUN.sub(_expand_run, fold_chinese(unicodedata.normalize("NFKC", text)))


def fold_chinese(text: str) -> str:
    """``text`` with traditional Chinese characters replaced by their simplified forms (one character each)."""
    return text.translate(t2s_table()) if _CJK_RUN.search(text) else text


@lru_cache(maxsize=1)
def t2s_table() -> dict[int, str]:
    """OpenCC's traditional -> simplified character table (first choice of each), chains resolved so that folding
    twice gives what folding once gives. An :class:`IndexError_` with the install line when it is missing."""
    from importlib import resources

    try:
        text = (resources.files("opencc") / "dictionary" / "TSCharacters.txt").read_text("utf-8")
    except (ImportError, OSError) as err:
        raise IndexError_(f"the index folds traditional to simplified Chinese with OpenCC's table, which is not "
                          f"installed ({type(err).__name__}): pip install '{OPENCC_PACKAGE}'") from None
    pairs: dict[str, str] = {}
    for line in text.splitlines():
        key, _, values = line.partition("\t")
        first = values.split()[0] if values.split() else ""
        if len(key) == 1 and len(first) == 1 and first != key:
            pairs[key] = first
    for key, value in pairs.items():
        seen = {key}
        while value in pairs and value not in seen:
            seen.add(value)
            value = pairs[value]
        pairs[key] = value
    return {ord(k): v for k, v in pairs.items()}


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
    """A query as FTS5 match expression plus the units used to highlight matches (the terms to find, not the
    excluded ones)."""

    terms: tuple[tuple[Unit, ...], ...]
    match: str


@dataclass(frozen=True)
class _Term:
    units: tuple[Unit, ...]
    negative: bool  # written -word


@dataclass(frozen=True)
class _Op:
    name: str  # OR, AND, NOT, NEAR
    distance: int = NEAR_DEFAULT


def parse_query(query: str) -> ParsedQuery:
    """Turn what a user typed into an FTS5 expression (syntax: the module docstring).

    Terms separated by spaces must all match (AND); ``a OR b``; ``-word``/``NOT word`` exclude; ``a NEAR b``,
    ``a NEAR/5 b``; ``"quoted words"`` must appear together, in order; ``word*`` matches words starting with
    ``word``; CJK text matches as a substring, traditional and simplified alike. Punctuation is ignored.
    A query that cannot be run (only excluded terms, an operator without a term on each side) is one
    :class:`ConfigError` line saying how to write it.
    """
    tokens = _tokens(unicodedata.normalize("NFKC", query))
    find: list[str] = []
    exclude: list[str] = []
    highlight: list[tuple[Unit, ...]] = []
    excluded: list[tuple[Unit, ...]] = []
    pos = 0
    while pos < len(tokens):
        token = tokens[pos]
        if isinstance(token, _Op) and token.name == "AND":
            pos += 1
            continue
        negated = isinstance(token, _Op) and token.name == "NOT"
        if negated:
            pos += 1
            if pos >= len(tokens) or isinstance(tokens[pos], _Op):
                raise _misplaced("NOT", query)
        elif isinstance(token, _Op):  # OR or NEAR where a term should begin
            raise _misplaced(token.name, query)
        alternatives, distance, pos = _chain(tokens, pos, query)
        terms = [term for group in alternatives for term in group]
        if any(term.negative for term in terms) and (negated or len(terms) > 1):
            raise ConfigError(f"-word excludes one whole term: it cannot follow NOT or stand inside OR or NEAR in "
                              f"{query!r} (write: cat -dog, or cat NOT dog)")
        expression = " OR ".join(_near([t.units for t in group], distance) for group in alternatives)
        if negated or terms[0].negative:
            exclude.append(f"({expression})" if len(terms) > 1 or " " in expression else expression)
            excluded.append(terms[0].units)
        else:
            find.append(f"({expression})" if len(alternatives) > 1 else expression)
            highlight.extend(term.units for term in terms)
    if not find:
        if exclude:
            word = " ".join(u.text for u in excluded[0])
            raise ConfigError(f"nothing to find in {query!r}: -word and NOT only exclude; add a term that must match, "
                              f"or leave out the - to find {word!r} itself (punctuation is not searched)")
        raise ConfigError(f"nothing to search for in {query!r}: give at least one word or character")
    return ParsedQuery(tuple(highlight), " AND ".join(find) + "".join(f" NOT {e}" for e in exclude))


_QUERY_TOKEN = re.compile(r'(?P<neg>-?)"(?P<quoted>[^"]*)"(?P<star>\*?)|(?P<bare>\S+)')


def _tokens(query: str) -> list[_Term | _Op]:
    """Operators (OR, AND, NOT, NEAR, NEAR/N: in capitals, unquoted) and terms (``-word``: negative)."""
    tokens: list[_Term | _Op] = []
    for m in _QUERY_TOKEN.finditer(query):
        bare = m["bare"]
        if bare in ("OR", "AND", "NOT"):
            tokens.append(_Op(bare))
            continue
        near = _NEAR.fullmatch(bare) if bare else None
        if near:
            tokens.append(_Op("NEAR", int(near[1]) if near[1] else NEAR_DEFAULT))
            continue
        if bare is None:
            negative, text = bool(m["neg"]), m["quoted"] + m["star"]
        else:
            negative = bare.startswith("-") and len(bare) > 1
            text = bare[1:] if negative else bare
        units = _units(text)
        if units:  # punctuation alone is not searched
            tokens.append(_Term(units, negative))
    return tokens


def _chain(tokens: Sequence[_Term | _Op], pos: int, query: str) -> tuple[list[list[_Term]], int, int]:
    """The terms from ``pos`` joined by OR and NEAR: OR-alternatives, each a NEAR group (NEAR binds tighter), the
    largest NEAR distance, and where the chain ends."""
    first = tokens[pos]
    assert isinstance(first, _Term)
    alternatives: list[list[_Term]] = [[first]]
    distance = 0
    pos += 1
    while pos < len(tokens):
        op = tokens[pos]
        if not (isinstance(op, _Op) and op.name in ("OR", "NEAR")):
            break
        term = tokens[pos + 1] if pos + 1 < len(tokens) else None
        if not isinstance(term, _Term):
            raise _misplaced(op.name, query)
        if op.name == "NEAR":
            alternatives[-1].append(term)
            distance = max(distance, op.distance)
        else:
            alternatives.append([term])
        pos += 2
    return alternatives, distance or NEAR_DEFAULT, pos


def _misplaced(operator: str, query: str) -> ConfigError:
    where = "after it" if operator == "NOT" else "on each side"
    return ConfigError(f"{operator} needs a term {where} in {query!r} (OR, NOT, NEAR and AND in capitals are "
                       f"operators; to search the word, write it in lower case or quotes: {operator.lower()})")


def _near(phrases: Sequence[tuple[Unit, ...]], distance: int) -> str:
    if len(phrases) == 1:
        return _phrase(phrases[0])
    return f"NEAR({' '.join(_phrase(units) for units in phrases)}, {distance})"


def _units(term: str) -> tuple[Unit, ...]:
    found = [
        Unit(fold_chinese(m["cjk"]), True) if m["cjk"] else Unit(m["word"], False, bool(m["star"]))
        for m in _UNIT.finditer(term)
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


class _FoldTable(dict[int, str]):
    """``str.translate`` tables filled as characters are met: each character's fold (``odd`` False), or, for
    ``odd``, '' for a character that folds to exactly one character and the character itself otherwise."""

    def __init__(self, odd: bool) -> None:
        super().__init__()
        self.odd = odd

    def __missing__(self, code: int) -> str:
        folded = _fold_char(chr(code))
        value = ("" if len(folded) == 1 else chr(code)) if self.odd else folded
        self[code] = value
        return value


_FOLD_TABLE, _ODD_TABLE = _FoldTable(False), _FoldTable(True)


def _fold(text: str) -> tuple[str, Sequence[int]]:
    """Case-, accent- and width-folded text, plus the index in ``text`` of every folded character."""
    if not text.translate(_ODD_TABLE):  # every character folds to one (nearly always): one C pass each
        return text.translate(_FOLD_TABLE), range(len(text))
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
    return fold_chinese(unicodedata.normalize("NFKC", stripped).casefold())
