from __future__ import annotations

import pytest
from support.metrics import Report, cer, combine, edit_distance, evaluate, icpr_score, normalize, t_iou
from support.synth import TruthCue as C

from vidocr.types import Cue


def test_normalize_drops_case_space_punctuation_and_width() -> None:
    assert normalize("Ｈｅｌｌｏ,  World!\n你好。「好」") == "helloworld你好好"
    assert normalize("I don't know...") == normalize("Idon’t know") == "idontknow"
    assert normalize("  ，。！ \u3000") == ""
    assert normalize("100% — ok") == "100ok"
    assert normalize("♪ la la ♪ +1 $") == "lala1"  # symbols (S*) too


def test_cer() -> None:
    assert edit_distance("kitten", "sitting") == 3
    assert cer("abcd", "abed") == 0.25
    assert cer("你好世界", "你好") == 0.5
    assert cer("ab", "abcdef") == 2.0  # insertions are not capped here
    assert cer("", "") == 0.0 and cer("。", "") == 0.0
    assert cer("", "x") == 1.0
    assert cer("Hello, world!", "hello world") == 0.0


def test_t_iou() -> None:
    assert t_iou(C(0, 1000, ""), C(0, 1000, "")) == 1.0
    assert t_iou(C(0, 1000, ""), C(500, 1500, "")) == pytest.approx(1 / 3)
    assert t_iou(C(0, 1000, ""), C(1000, 2000, "")) == 0.0
    assert t_iou(C(0, 0, ""), C(0, 0, "")) == 0.0


def test_icpr_perfect_and_empty() -> None:
    truth = [C(0, 1000, "你好"), C(1500, 2500, "再见")]
    assert icpr_score(truth, [Cue(0, 1000, "你好。"), Cue(1520, 2480, "再见")]) == 0.0
    assert icpr_score([], []) == 0.0
    assert icpr_score(truth, []) == 1.0


def test_icpr_unmatched_truth_and_low_overlap() -> None:
    truth = [C(0, 1000, "abcd"), C(2000, 3000, "efgh")]
    # The second hypothesis overlaps its truth cue with tIoU 1/3 < 0.5: unmatched, scores 1.
    hyp = [C(0, 1000, "abcx"), C(2500, 3500, "efgh")]
    assert icpr_score(truth, hyp) == pytest.approx((0.25 + 1.0) / 2)


def test_icpr_split_cue_counts_the_extra_half() -> None:
    truth = [C(0, 2000, "abcd")]
    hyp = [C(0, 1000, "ab"), C(1000, 2000, "cd")]  # both tIoU 0.5; the first is the best match (tie)
    assert icpr_score(truth, hyp) == pytest.approx((0.5 + 1.0) / 2)


def test_icpr_extra_overlapping_cue_and_cer_cap() -> None:
    truth = [C(0, 1000, "ab")]
    hyp = [C(0, 1000, "abxyzuvw"), C(100, 900, "ab")]  # tIoU 1.0 wins; the 0.8 one is an extra
    assert icpr_score(truth, hyp) == pytest.approx((1.0 + 1.0) / 2)  # CER 3.0 capped at 1


def test_icpr_ignores_non_overlapping_phantoms_but_report_counts_them() -> None:
    truth = [C(0, 1000, "ab")]
    hyp = [C(0, 1000, "ab"), C(5000, 6000, "logo")]
    assert icpr_score(truth, hyp) == 0.0
    assert evaluate(truth, hyp).phantom_cues == 1


def test_evaluate_report() -> None:
    truth = [C(0, 1000, "Hello, world"), C(1000, 2000, "你听我说"), C(3000, 4000, "missed"), C(5000, 5400, "短")]
    hyp = [
        Cue(40, 1000, "hello world!"),
        Cue(1000, 2120, "你听我说完"),
        Cue(3000, 3100, "too short to match"),
        Cue(5000, 5360, "短"),
        Cue(8000, 9000, "phantom"),
    ]
    r = evaluate(truth, hyp)
    assert (r.truth_cues, r.hyp_cues, r.missed, r.phantom_cues, r.exact_lines, r.extra_matches) == (4, 5, 1, 1, 2, 0)
    assert r.exact_line_rate == 0.5
    assert r.exact_strings == 1  # "hello world!" is the same line as "Hello, world" but not the same string
    assert r.start_errors_ms == [40, 0, 0] and r.end_errors_ms == [0, 120, 40]
    assert r.boundary_median_ms == 20.0 and r.boundary_p90_ms == 120.0
    assert r.icpr == pytest.approx((0 + 0.25 + 1 + 0) / 4)
    d = r.to_dict()
    assert d["exact_line_rate"] == 0.5 and d["boundary_p90_ms"] == 120.0 and d["missed"] == 1


def test_combine_weights_by_scored_items() -> None:
    a = Report(3, 3, 0.0, 0, 3, 0, 0, [0, 0, 0], [40, 40, 40])
    b = Report(1, 2, 1.0, 1, 0, 0, 1, [], [])
    total = combine([a, b])
    assert total.icpr == pytest.approx(2 / 5)
    assert (total.truth_cues, total.hyp_cues, total.missed, total.exact_lines) == (4, 5, 1, 3)
    assert combine([a, Report(1, 1, 0.0, 0, 1, 0, 0, exact_strings=1)]).exact_strings == 1
    assert total.boundary_median_ms == 20.0
    assert combine([]).icpr == 0.0 and combine([]).boundary_median_ms is None


def test_timed_exact_needs_the_text_and_both_boundaries_within_one_frame() -> None:
    truth = [C(1000, 2000, "Hello there."), C(3000, 4000, "Go!"), C(5000, 6000, "Yes.")]
    hyp = [
        C(1040, 1960, "hello there"),  # one frame off at 25 fps: counts
        C(3000, 4080, "Go!"),  # end two frames late
        C(5000, 6000, "Yet."),  # wrong text
    ]
    assert evaluate(truth, hyp, frame_ms=40).timed_exact == 1
    assert evaluate(truth, hyp).timed_exact == 0  # not counted without a frame duration
    assert combine([evaluate(truth, hyp, 40), evaluate(truth, hyp, 40)]).timed_exact == 2
