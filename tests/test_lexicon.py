"""Latin words read against word lists (vidocr.lexicon): a word no list holds is replaced by a listed word the
recogniser's own posteriors support nearly as well; a word it read surely, listed or not, is kept."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from vidocr.engines import EngineOptions
from vidocr.engines.ppocr import PpOcr, PpOcrConfig
from vidocr.engines.rapid import build_ocr
from vidocr.lexicon import MARGIN, Lexicon, correct_word, ctc_log_prob, lists_for


def test_the_ctc_probability_is_the_sum_over_every_alignment() -> None:
    """The forward algorithm against brute force: every path of 5 steps over 3 classes that collapses (repeats
    merged, blanks dropped) to the labels."""
    rng = np.random.default_rng(3)
    probs = rng.random((5, 3)).astype(np.float64)
    probs /= probs.sum(axis=1, keepdims=True)

    def collapse(path: tuple[int, ...]) -> list[int]:
        out = [k for i, k in enumerate(path) if k and (i == 0 or path[i - 1] != k)]
        return out

    for labels in ([1], [1, 2], [1, 1], [2, 1, 2], [1, 1, 1]):
        brute = sum(
            float(np.prod([probs[t, k] for t, k in enumerate(path)]))
            for path in itertools.product(range(3), repeat=5)
            if collapse(path) == labels
        )
        assert ctc_log_prob(probs, labels) == pytest.approx(np.log(brute), rel=1e-9)
    assert ctc_log_prob(probs[:2], [1, 1, 1]) == float("-inf")  # needs 5 steps at least


@pytest.fixture(scope="module")
def ocr() -> PpOcr:
    return PpOcr()


def _steps(
    ocr: PpOcr, text: str, second: dict[int, tuple[str, float]] | None = None, sure: float = 0.97
) -> np.ndarray:
    """CTC steps spelling ``text`` (a blank step after each character); at character k, ``second[k]`` gives
    another character that probability and the read one the rest."""
    index = {char: i for i, char in enumerate(ocr.characters) if i}
    rows = []
    for k, char in enumerate(text):
        row = np.full(len(ocr.characters), 1e-6, np.float32)
        if second and k in second:
            other, p = second[k]
            row[index[char]], row[index[other]] = sure - p, p
        else:
            row[index[char]] = sure
        rows.append(row)
        blank = np.full(len(ocr.characters), 1e-6, np.float32)
        blank[0] = 0.98
        rows.append(blank)
    return np.array(rows)


def test_a_word_misread_by_a_letter_the_recogniser_ranked_second_is_the_listed_word(ocr: PpOcr) -> None:
    assert ocr.lexicon is not None and ocr.lexicon.names == ("en",)
    text, score, _, conf, cols = ocr._decode(_steps(ocr, "Put tne box", {5: ("h", 0.3)}))
    assert text == "Put the box"
    assert len(conf) == len(cols) == len(text)
    assert conf[4:7] == (min(conf[4:7]),) * 3  # the word stays as unsure as its least sure letter was read
    assert ocr._decode(_steps(ocr, "Keep your voice dowa", {19: ("n", 0.2)}))[0] == "Keep your voice down"
    # An apostrophe read as a quote.
    assert ocr._decode(_steps(ocr, "That\"s what he said", {4: ("'", 0.1)}))[0] == "That's what he said"
    assert ocr._decode(_steps(ocr, "back bąck", {6: ("a", 0.3)}))[0] == "back back"


def test_a_word_read_surely_is_kept_listed_or_not(ocr: PpOcr) -> None:
    """A name no list holds, read surely: every listed spelling near it is far less likely than the read."""
    assert ocr._decode(_steps(ocr, "Kowalski said tne"))[0] == "Kowalski said tne"  # "tne" sure too: kept
    assert ocr._decode(_steps(ocr, "Put tne box", {5: ("h", 0.001)}))[0] == "Put tne box"
    # A listed word is never replaced, however unsure ("near" for "hear" is a word).
    assert ocr._decode(_steps(ocr, "I near you", {2: ("h", 0.4)}, sure=0.9))[0] == "I near you"
    # Words glued together split only where the recogniser saw a gap.
    assert ocr._decode(_steps(ocr, "Howmuch"))[0] == "Howmuch"


def test_the_word_list_follows_lang_and_can_be_turned_off(ocr: PpOcr) -> None:
    assert lists_for(()) == ("en",)
    assert lists_for(("fr", "en")) == ("fr", "en")
    assert lists_for(("ko",)) == ()  # no list for Korean: words read as ranked
    assert build_ocr(EngineOptions(lang=("fr",))).lexicon.names == ("fr",)  # type: ignore[union-attr]
    assert build_ocr(EngineOptions(lang=("ko",))).lexicon is None
    off = PpOcr(PpOcrConfig(lexicon=()))
    assert off.lexicon is None
    assert off._decode(_steps(off, "Put tne box", {5: ("h", 0.3)}))[0] == "Put tne box"
    french = Lexicon(("fr",))
    assert french.known("maison") and not french.known("house")


def test_correct_word_keeps_the_read_outside_the_margin(ocr: PpOcr) -> None:
    lexicon = Lexicon(("en",))
    near = _steps(ocr, "tne", {1: ("h", 0.2)})
    far = _steps(ocr, "tne", {1: ("h", 0.97 * np.exp(-MARGIN - 1))})
    assert correct_word(lexicon, "tne", near, ocr._classes) == "the"
    assert correct_word(lexicon, "tne", far, ocr._classes) is None
    assert correct_word(lexicon, "Tne", _steps(ocr, "Tne", {1: ("h", 0.2)}), ocr._classes) == "The"


def test_a_line_of_another_language_is_not_read_against_the_english_list(ocr: PpOcr) -> None:
    """Under ``--lang auto`` (English list) a French line keeps its words: few of them are common English words,
    so an unsure one ("natin") is no English misread. With ``--lang fr`` the French list reads it."""
    line = "Elle reviendra demain natin"
    steps = _steps(ocr, line, {line.index("natin"): ("m", 0.3)})
    assert ocr._decode(steps)[0] == line
    french = PpOcr(PpOcrConfig(lexicon=("fr",)))
    assert french._decode(steps)[0] == "Elle reviendra demain matin"
    english = "Give me five more ninutes"  # an English line: its common words carry the unsure one
    assert ocr._decode(_steps(ocr, english, {english.index("ninutes"): ("m", 0.3)}))[0] == "Give me five more minutes"

