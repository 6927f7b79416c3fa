from __future__ import annotations

from dataclasses import replace

from vidocr.merge import CueMerger, Read, SegmentRecord
from vidocr.textnorm import comparable, normalize_text, text_similarity
from vidocr.types import Box, OcrLine, OcrResult


def result(text: str, conf: float = 0.99) -> OcrResult:
    return OcrResult(tuple(OcrLine(line, conf) for line in text.split("\n")))


ReadSpec = tuple[int, int, str] | tuple[int, int, str, float]


def seg(start: int, end: int, *reads: ReadSpec, sim: float = 0.0) -> SegmentRecord:
    return SegmentRecord(start, end, [Read(r[0], r[1], result(r[2], *(r[3:] or (0.99,)))) for r in reads], sim)


def run(*segments: SegmentRecord) -> list[tuple[int, int, str]]:
    merger = CueMerger()
    cues = []
    for s in segments:
        cues += merger.push(s)
    cues += merger.flush()
    return [(c.start_ms, c.end_ms, c.text) for c in cues]


def boxed(ts: int, text: str, box: Box, conf: float = 0.99) -> Read:
    """A read at ``ts`` (split there too) of one line of ``text`` in ``box``."""
    return Read(ts, ts, OcrResult((OcrLine(text, conf, box),)))


def test_normalize_nfkc_whitespace_and_line_breaks() -> None:
    assert normalize_text("  Ｈｅｌｌｏ \t  world  \n\n  second   line ") == "Hello world\nsecond line"
    # Full-width punctuation stays full-width inside Chinese text, NFKC would make it ASCII.
    assert normalize_text("你好，世界！") == "你好，世界！"
    assert normalize_text("Wait, what?") == "Wait, what?"
    # English words are never glued together.
    assert normalize_text("I don't  know") == "I don't know"


def test_comparable_and_similarity() -> None:
    assert comparable("Hello, World!") == "helloworld"
    assert text_similarity("你听我说", "你听我说") == 1.0
    assert text_similarity("", "") == 1.0
    assert text_similarity("abc", "") == 0.0
    assert 0.8 < text_similarity("你听我说", "你听我说完") < 0.95


def test_reads_of_one_segment_vote_away_ocr_noise() -> None:
    cues = run(seg(0, 2000, (40, 40, "你听我说"), (800, 500, "你昕我说"), (1600, 1000, "你听我说")))
    assert cues == [(0, 2000, "你听我说")]


def test_disagreeing_reads_split_a_segment_at_the_change_frame() -> None:
    # The detector missed the change; the later read differs, so the cue is split where the mask changed most.
    cues = run(seg(0, 3000, (40, 40, "第一句"), (2000, 1240, "完全不同的第二句")))
    assert cues == [(0, 1240, "第一句"), (1240, 3000, "完全不同的第二句")]


def test_near_identical_back_to_back_lines_stay_two_cues() -> None:
    cues = run(seg(0, 1000, (40, 40, "你听我说")), seg(1000, 2000, (1040, 1040, "你听我说完"), sim=0.5))
    assert cues == [(0, 1000, "你听我说"), (1000, 2000, "你听我说完")]
    # ... also when the detector did not split and only the reads differ
    cues = run(seg(0, 2000, (40, 40, "你听我说"), (1500, 1000, "你听我说完")))
    assert cues == [(0, 1000, "你听我说"), (1000, 2000, "你听我说完")]


def test_identical_line_after_blank_gap_stays_two_cues() -> None:
    cues = run(seg(0, 1000, (40, 40, "我知道了")), seg(1000, 1300), seg(1300, 2000, (1340, 1340, "我知道了")))
    assert cues == [(0, 1000, "我知道了"), (1300, 2000, "我知道了")]


def test_same_text_across_a_detector_split_is_one_cue() -> None:
    # e.g. a shot cut changed the mask: the same subtitle continues.
    cues = run(seg(0, 1000, (40, 40, "同一句话")), seg(1000, 2500, (1040, 1040, "同一句话"), sim=0.3))
    assert cues == [(0, 2500, "同一句话")]
    # OCR noise on the second half, masks alike: still one cue.
    cues = run(seg(0, 1000, (40, 40, "同一句话")), seg(1000, 2500, (1040, 1040, "同一旬话"), sim=0.7))
    assert cues == [(0, 2500, "同一句话")]


def test_empty_and_low_confidence_reads_make_no_cue() -> None:
    assert run(seg(0, 1000, (40, 40, "")), seg(1000, 2000, (1040, 1040, "LA", 0.52))) == []


def test_lone_latin_letters_and_strokes_are_picture_detail_but_lone_cjk_characters_are_lines() -> None:
    reads = [seg(0, 1000, (40, 40, "°S")), seg(1000, 2000, (1040, 1040, "U")), seg(2000, 3000, (2040, 2040, "丨"))]
    assert run(*reads) == []
    lines = run(seg(0, 1000, (40, 40, "嗯")), seg(1000, 2000, (1040, 1040, "OK")))
    assert lines == [(0, 1000, "嗯"), (1000, 2000, "OK")]
    # ...also as one line of a read: a "1" beside the subtitle does not make it another subtitle.
    assert run(seg(0, 1000, (40, 40, "是的，本游戏"), (600, 500, "1\n是的，本游戏"))) == [(0, 1000, "是的，本游戏")]
    # Short cues in general are kept (0.12 s and more); only shorter flashes are dropped.
    assert run(seg(0, 120, (40, 40, "好")), seg(500, 583, (520, 520, "人"))) == [(0, 120, "好")]


def test_line_breaks_are_kept() -> None:
    cues = run(seg(0, 1000, (40, 40, "第一行\nSecond line")))
    assert cues == [(0, 1000, "第一行\nSecond line")]


def test_a_brief_read_that_lost_a_character_between_two_equal_reads_is_rejoined() -> None:
    cues = run(
        seg(0, 1000, (40, 40, "一句话跨过好几个镜头")),
        seg(1000, 1900, (1040, 1040, "句话跨过好几个镜头")),
        seg(1900, 3000, (1940, 1940, "一句话跨过好几个镜头")),
    )
    assert cues == [(0, 3000, "一句话跨过好几个镜头")]


def test_a_later_read_that_lost_glyphs_of_the_same_line_joins_but_a_growing_line_does_not() -> None:
    def boxed(start: int, end: int, text: str, x: int, w: int) -> SegmentRecord:
        res = OcrResult((OcrLine(text, 0.99, Box(x, 10, w, 40)),))
        return SegmentRecord(start, end, [Read(start + 40, start, res)], 0.5)

    merger = CueMerger()
    cues = merger.push(boxed(0, 1000, "字幕一", 560, 150)) + merger.push(boxed(1000, 1500, "字幕", 572, 100))
    cues += merger.flush()
    assert [(c.start_ms, c.end_ms, c.text) for c in cues] == [(0, 1500, "字幕一")]
    merger = CueMerger()
    cues = merger.push(boxed(0, 1000, "你听我说", 580, 120)) + merger.push(boxed(1000, 1500, "你听我说完", 565, 150))
    cues += merger.flush()
    assert [c.text for c in cues] == ["你听我说", "你听我说完"]


def test_a_first_read_of_text_still_settling_gives_way_to_a_better_read_moments_later() -> None:
    # 360p, heavy compression: the read as the text appeared is garbled, the next one (0.2 s later, the band
    # unchanged) is clean. One cue from the segment's start with the clean text, not a garbled 0.2 s cue.
    garbled = seg(
        1000, 3000, (1040, 1000, "Wihen. wer list h'gi", 0.71), (1240, 1200, "Where were you last night?", 0.91),
        (1640, 1500, "Where were you last night?", 0.93),
    )
    assert run(garbled) == [(1000, 3000, "Where were you last night?")]
    # A change well after the start is a change: two cues, split where the detector saw it.
    later = seg(1000, 3000, (1040, 1000, "Is anyone there?"), (1640, 1600, "Where were you last night?"))
    assert run(later) == [(1000, 1600, "Is anyone there?"), (1600, 3000, "Where were you last night?")]
    # A surer first read is kept even when a read soon after differs.
    sure = seg(1000, 3000, (1040, 1000, "Is anyone there?", 0.99), (1240, 1200, "Where were you?", 0.8))
    assert run(sure) == [(1000, 1200, "Is anyone there?"), (1200, 3000, "Where were you?")]


def test_a_bar_where_a_latin_word_starts_is_a_capital_i() -> None:
    # 360p, a thin sans-serif: the recogniser reads "I" as "|". No subtitle writes a bar there.
    assert normalize_text("I told you, | was at the office.") == "I told you, I was at the office."
    assert normalize_text("|'m here. |t's late.") == "I'm here. It's late."
    assert normalize_text("(| think so)") == "(I think so)"
    # Elsewhere a bar stays: inside a token, in CJK text, doubled.
    assert normalize_text("a|b") == "a|b"
    assert normalize_text("你|好") == "你|好"
    assert normalize_text("x || y") == "x || y"


def test_a_blank_read_asked_for_an_unseen_change_ends_the_subtitle_there() -> None:
    # A subtitle over a busy still picture: the mask held still when it left (its glyphs merged with picture
    # detail the mask leaves out); the band's edges did not, and the read asked for that came back blank.
    shown = Read(40, 0, result("谢谢你大老远跑过来"))
    left = SegmentRecord(0, 2400, [shown, Read(2080, 1920, result(""), blank_ends=True)])
    assert run(left) == [(0, 1920, "谢谢你大老远跑过来")]
    # Other blank reads may be the recogniser missing a line that is still there: they end nothing.
    missed = SegmentRecord(0, 2400, [shown, Read(2080, 1920, result(""))])
    assert run(missed) == [(0, 2400, "谢谢你大老远跑过来")]
    # Text read again after such a blank read is a cue again from that read's change point.
    reads = [Read(40, 0, result("好。")), Read(800, 760, result(""), blank_ends=True), Read(1600, 1500, result("走吧"))]
    back = SegmentRecord(0, 2400, reads)
    assert run(back) == [(0, 760, "好。"), (1500, 2400, "走吧")]


def test_text_a_re_read_finds_after_a_blank_first_read_starts_where_that_re_read_s_change_began() -> None:
    # A sign beside the band and a pan: the segment began with no text the reader could see (its first read
    # blank); a subtitle fading in was seen by a drift read before the detector gave it a segment of its own. It
    # had started 11 frames early, with the segment. The next segment reads it too: one cue from the change.
    gap = SegmentRecord(1760, 2280, [Read(1800, 1760, result("")), Read(2240, 2080, result("I told you."))])
    own = SegmentRecord(2280, 3520, [Read(2320, 2280, result("I told you."))], 0.5)
    assert run(gap, own) == [(2080, 3520, "I told you.")]
    # A first read with text keeps the segment's start.
    read = SegmentRecord(1760, 2280, [Read(1800, 1760, result("I told")), Read(2240, 2080, result("I told you."))])
    assert run(read)[0][0] == 1760


def test_a_blank_of_a_frame_or_two_between_reads_of_the_same_text_is_no_gap() -> None:
    # Shake over grass or a busy painting: the mask loses a subtitle for a frame or two, and finds it again.
    flicker = run(seg(0, 1000, (40, 40, "我知道了")), seg(1000, 1033), seg(1033, 2000, (1073, 1073, "我知道了")))
    assert flicker == [(0, 2000, "我知道了")]
    # Other text after the brief blank: the subtitle ended where the blank began.
    other = run(seg(0, 1000, (40, 40, "我知道了")), seg(1000, 1033), seg(1033, 2000, (1073, 1073, "你听我说")))
    assert other == [(0, 1000, "我知道了"), (1033, 2000, "你听我说")]
    # Two brief blank segments in a row are a gap as long as both.
    twice = run(
        seg(0, 1000, (40, 40, "我知道了")), seg(1000, 1033), seg(1033, 1100), seg(1100, 2000, (1140, 1140, "我知道了"))
    )
    assert twice == [(0, 1000, "我知道了"), (1100, 2000, "我知道了")]


def test_cues_split_by_a_misread_that_later_reads_outvoted_are_one_cue() -> None:
    # Seen on a libass clip (check 08): a re-read glued a letter of the print beside the subtitle into its line
    # ("Istanyone there?"), and its box disagreed with the first read's (which took in picture detail), so the cue
    # was split there; the reads after it agreed with the first one again, so both halves came out as the same
    # text (the second with a stray quote that the text comparison ignores).
    line = Box(490, 8, 296, 44)
    cues = run(
        SegmentRecord(0, 2000, [boxed(0, "Is anyone there?", Box(0, 0, 797, 66)),
                                replace(boxed(1500, "Istanyone there?", Box(490, 4, 298, 51)), split_ms=1400)]),
        SegmentRecord(2000, 2600, [boxed(2000, "Isanyone there?", line)], 0.6),
        SegmentRecord(2600, 3000, [boxed(2600, 'Is anyone there?"', Box(489, 0, 303, 51), 0.93)], 0.15),
        SegmentRecord(3000, 4000, [boxed(3000, "Is anyone there?", line)], 0.43),
    )
    assert [(start, end, comparable(text)) for start, end, text in cues] == [(0, 4000, "isanyonethere")], cues
    # The same text after a real gap stays a cue of its own.
    assert run(seg(0, 1000, (0, 0, "Is anyone there?")), seg(1000, 1400),
               seg(1400, 2000, (1400, 1400, "Is anyone there?"))) == [
        (0, 1000, "Is anyone there?"), (1400, 2000, "Is anyone there?")]


def test_segments_whose_reads_differ_in_length_join_when_some_read_of_each_saw_the_same_line_extent() -> None:
    # Seen on a libass clip (check 08, a yellow subtitle over a page of print): each read lost another word gap,
    # and one read of the second segment took in a letter of the print at the line's left, so the extent of all
    # its reads together no longer agreed with the first read's and the cue was split in two.
    cues = run(
        SegmentRecord(0, 290, [boxed(40, "You alwaysisay that:", Box(459, 1, 364, 50), 0.94)]),
        SegmentRecord(290, 1840, [boxed(330, "You alwayssay that", Box(457, 0, 364, 55)),
                                  boxed(880, "You always, saythat.", Box(442, 0, 377, 55), 0.96)], 0.22),
    )
    assert [(start, end) for start, end, _ in cues] == [(0, 1840)], cues
    # A line that grew in place changes the extent of every read: two cues.
    cues = run(
        SegmentRecord(0, 1000, [boxed(40, "你听我说", Box(580, 10, 120, 40))]),
        SegmentRecord(1000, 2000, [boxed(1040, "你听我说完", Box(565, 10, 150, 40)),
                                   boxed(1500, "你听我说完", Box(566, 10, 149, 40))], 0.5),
    )
    assert [text for _, _, text in cues] == ["你听我说", "你听我说完"]


def test_a_read_across_a_cut_that_lost_a_glyph_inside_the_line_keeps_its_width_and_joins() -> None:
    # Seen on a libass clip (new seeds, dev 13_cuts): a cut to a page of print; the subtitle's glyph image read
    # "你天晚上去哪儿了" for "你昨天晚上去哪儿了", its box a little wider and left of the first read's (not the
    # same extent): the cue was split at the cut.
    cues = run(
        SegmentRecord(0, 1900, [boxed(40, "你昨天晚上去哪儿了", Box(300, 8, 247, 37))]),
        SegmentRecord(1900, 2300, [boxed(1940, "你天晚上去哪儿了", Box(288, 8, 262, 37), 0.93)], 0.0),
    )
    assert cues == [(0, 2300, "你昨天晚上去哪儿了")]
    # A subtitle that lost a character in place is narrower by it: two cues.
    cues = run(
        SegmentRecord(0, 1900, [boxed(40, "你昨天晚上去哪儿了", Box(300, 8, 247, 37))]),
        SegmentRecord(1900, 2300, [boxed(1940, "你天晚上去哪儿了", Box(313, 8, 220, 37), 0.93)], 0.0),
    )
    assert [text for _, _, text in cues] == ["你昨天晚上去哪儿了", "你天晚上去哪儿了"]
    # As wide, but not the same characters in order, and read as surely: two cues (read less surely, it would be the
    # first one misread: see test_a_piece_read_once_less_surely_than_the_subtitle_it_touches_and_like_it_is_that_one).
    cues = run(
        SegmentRecord(0, 1900, [boxed(40, "你昨天晚上去哪儿了", Box(300, 8, 247, 37))]),
        SegmentRecord(1900, 2300, [boxed(1940, "你天晚上去哪里了", Box(288, 8, 262, 37), 0.99)], 0.0),
    )
    assert [text for _, _, text in cues] == ["你昨天晚上去哪儿了", "你天晚上去哪里了"]


def test_a_read_as_sure_that_holds_the_winner_and_more_wins_over_more_reads_that_lost_a_faint_glyph() -> None:
    # Seen on a libass clip (dev 05, a pale line over grass, split into segments by the moving picture): the faint
    # "I" at the line's start was read by two reads of six; the other four lost it. As with two reads, the one
    # that saw more of the line wins.
    def segments(*reads: tuple[int, str, float, int]) -> list[SegmentRecord]:
        out = []
        for k, (start, text, conf, x) in enumerate(reads):
            end = reads[k + 1][0] if k + 1 < len(reads) else start + 300
            line = OcrLine(text, conf, Box(x, 26, 505 - (x - 382), 55))
            out.append(SegmentRecord(start, end, [Read(start + 40, start, OcrResult((line,)))], 0.5))
        return out

    reads = [(0, "I found the letter in his coat", 1.0, 382), (430, "found the letter in his coat", 0.97, 386),
             (830, "I found the letter in his coat", 0.99, 384), (1230, "found the letter in his coat.", 0.98, 389),
             (1730, "found the letter in his coat", 0.99, 389), (2230, "found the letter in his coat", 1.0, 389)]
    assert [text for _, _, text in run(*segments(*reads))] == ["I found the letter in his coat"]
    # A longer read that is less sure than the winner does not win: its extra glyph may be picture detail.
    reads = [(0, "I found the letter in his coat", 0.9, 382), *reads[1:2], (830, *reads[3][1:]), *reads[4:]]
    assert [text for _, _, text in run(*segments(*reads))] == ["found the letter in his coat"]


def test_one_read_of_many_with_a_line_more_does_not_win_the_cue() -> None:
    # Seen on a libass clip (new seeds dev 21_two-line): a two-line cue over a panning picture, read six times
    # across its segments; one read also boxed the last word of a sign above it ("HOURS") as a line of its own,
    # and won as the read that "saw more". A line more is not a faint glyph more: the reads that agree win.
    lines = "Why would anyone do that?\nWe're running out of time."
    texts = [lines, lines, lines, lines, "HOURS\n" + lines, lines]
    segments = [seg(400 * k, 400 * (k + 1), (400 * k + 40, 400 * k, text, 1.0), sim=0.5)
                for k, text in enumerate(texts)]
    assert run(*segments) == [(0, 2400, lines)]


def test_a_segment_begun_by_picture_detail_that_first_reads_the_cue_before_keeps_it_until_the_change() -> None:
    # The libass check set of new seeds (21_two-line): a sign's plate appears under a two-line cue at frame 453,
    # which begins a segment; its first read (454) still reads the cue before, its lower line changes at 456
    # and the next read (466) reads the new one. That first read is the old cue still shown, not text settling
    # as it appeared: the old cue lasts until the change, though the change came within settle_ms.
    old, new = "Where were you last night?\nI told you.", "Where were you last night?\nWe're running out of time."
    cues = run(seg(13667, 15100, (13700, 13667, old), (14800, 14733, old)),
               seg(15100, 16033, (15133, 15100, old), (15533, 15200, new)))
    assert cues == [(13667, 15200, old), (15200, 16033, new)], cues
    # A first read that is not the cue before still gives way to a surer read moments later (text settling).
    settling = run(seg(13667, 15100, (13700, 13667, "Is anyone there?")),
                   seg(15100, 16033, (15133, 15100, "Wihere were yu", 0.7), (15333, 15200, new)))
    assert settling == [(13667, 15100, "Is anyone there?"), (15100, 16033, new)], settling


def test_a_blank_of_a_frame_or_two_then_a_misread_of_the_same_line_is_no_gap() -> None:
    # The libass dev set of new seeds (13_cuts): a cut blanks the mask for two frames; the read after it swaps a
    # glyph (五 -> 疆), the next one loses the first (再), and the reads after agree with the ones before the
    # blank again. One cue, not four: after a flicker, a read like the line before (OCR noise, as within a
    # segment: vidocr.merge.CueMerger._same_subtitle) is that line.
    line = "再给我五分钟就好"
    cues = run(seg(0, 333, (0, 0, line), (67, 33, line)), seg(333, 400),
               seg(400, 733, (467, 400, "再给我疆分钟就好", 0.97), sim=0.49),
               seg(733, 933, (800, 733, "给我五分钟就好", 0.97), sim=0.22),
               seg(933, 2000, (967, 933, line), (1300, 1300, line), sim=0.28))
    assert cues == [(0, 2000, line)], cues
    # Another line after the flicker ends the cue where the blank began.
    other = run(seg(0, 333, (0, 0, line)), seg(333, 400), seg(400, 2000, (467, 400, "这封信是在他外套里找到的")))
    assert other == [(0, 333, line), (400, 2000, "这封信是在他外套里找到的")], other


def test_a_read_of_other_text_after_frames_without_the_glyphs_ends_the_cue_where_they_left() -> None:
    # The libass dev set of new seeds (20_yellow-page): two lines of as many glyphs in one place, 3 frames apart,
    # over a page of print. The detector saw the glyphs go (frame 39) and a mask come back (42) too alike to
    # call another subtitle, and read again (a BACK read, split at 42). Its other text splits the cue there,
    # and the first one ends where its glyphs left, not where the next one came: the blank frames are a gap.
    first, then = "Nobody knows where he went.", "I never asked for any of this."
    back = replace(boxed(1793, then, Box(0, 0, 400, 40)), split_ms=1752, left_ms=1627)
    cues = run(SegmentRecord(459, 4171, [boxed(500, first, Box(0, 0, 400, 40)), back]))
    assert cues == [(459, 1627, first), (1752, 4171, then)], cues
    # The same text back after them is the subtitle flickering: one cue.
    again = replace(boxed(1793, first, Box(0, 0, 400, 40)), split_ms=1752, left_ms=1627)
    assert run(SegmentRecord(459, 4171, [boxed(500, first, Box(0, 0, 400, 40)), again])) == [(459, 4171, first)]


def test_an_unsure_read_where_glyphs_came_back_places_the_change_a_later_sure_read_shows() -> None:
    # The libass check set of new seeds (18_lowres, 360p): two lines of as many CJK glyphs, 2 frames apart, masks
    # too alike at 360p to call another subtitle. The BACK read where the glyphs came back (split 308, left 306)
    # read the new line's first frames as "即果你也过在心章" at 0.52, too unsure to count; the next sure read (a
    # drift read 5 frames on) shows the new line. The change was at the BACK read: the first cue ends where its
    # glyphs left, the second starts where they came back, not 5 frames later.
    first, then = "谢谢你大老远跑过来", "我跟你说过我在办公室"
    unsure = replace(boxed(12875, "即果你也过在心章", Box(0, 0, 400, 40), 0.52), split_ms=12833, left_ms=12750)
    later = replace(boxed(13083, then, Box(0, 0, 400, 40)), split_ms=13042)
    cues = run(SegmentRecord(11167, 15208, [boxed(11250, first, Box(0, 0, 400, 40)), unsure, later]))
    assert cues == [(11167, 12750, first), (12833, 15208, then)], cues
    # Without the unsure read, the change is where the sure read saw it.
    assert run(SegmentRecord(11167, 15208, [boxed(11250, first, Box(0, 0, 400, 40)), later])) == [
        (11167, 13042, first), (13042, 15208, then)]
    # The sure reads after it show the first line still: the unsure read changed nothing (picture detail, flicker).
    still = replace(boxed(13083, first, Box(0, 0, 400, 40)), split_ms=13042)
    assert run(SegmentRecord(11167, 15208, [boxed(11250, first, Box(0, 0, 400, 40)), unsure, still])) == [
        (11167, 15208, first)]
    # An unsure read like the shown line is that line, misread: no change there; the next line starts where the
    # sure read saw it.
    alike = replace(boxed(12875, "谢谢你大老远跑运了", Box(0, 0, 400, 40), 0.52), split_ms=12833, left_ms=12750)
    assert run(SegmentRecord(11167, 15208, [boxed(11250, first, Box(0, 0, 400, 40)), alike, later])) == [
        (11167, 13042, first), (13042, 15208, then)]


def test_blank_reads_where_the_detector_held_the_subtitle_s_mask_are_that_subtitle_not_a_gap() -> None:
    # The libass dev set of new seeds (13_cuts): a subtitle over a picture panning behind it; for 9 frames, then 3,
    # the detector held text lines with the subtitle's mask (so it asked for reads) and the recogniser read
    # nothing. One cue, not three.
    line = "没有人知道他去了哪里"
    missed = run(seg(0, 433, (33, 0, line)), seg(433, 500, (467, 433, ""), sim=0.48),
                 seg(500, 733, (533, 500, ""), sim=0.21), seg(733, 1000, (767, 733, line), sim=0.49),
                 seg(1000, 1100, (1033, 1000, "", 0.0), sim=0.6), seg(1100, 1500, (1133, 1100, line), sim=0.54))
    assert missed == [(0, 1500, line)], missed
    # The same reads where the blank segment's mask is not the subtitle's (another mask: picture detail, after
    # the subtitle left), or where the detector saw no text lines (no reads), or longer than unread_ms: a gap.
    other_mask = run(seg(0, 433, (33, 0, line)), seg(433, 733, (467, 433, ""), sim=0.1),
                     seg(733, 1000, (767, 733, line), sim=0.49))
    no_lines = run(seg(0, 433, (33, 0, line)), seg(433, 733, sim=0.48), seg(733, 1000, (767, 733, line), sim=0.49))
    assert other_mask == no_lines == [(0, 433, line), (733, 1000, line)], (other_mask, no_lines)
    long = run(seg(0, 433, (33, 0, line)), seg(433, 1500, (467, 433, ""), sim=0.48),
               seg(1500, 2000, (1533, 1500, line), sim=0.49))
    assert long == [(0, 433, line), (1500, 2000, line)], long
    # A read asked for because the band changed unseen (UNSEEN) that finds nothing ends the subtitle.
    unseen = run(seg(0, 433, (33, 0, line)),
                 SegmentRecord(433, 733, [Read(467, 433, result(""), blank_ends=True)], 0.48),
                 seg(733, 1000, (767, 733, line), sim=0.49))
    assert unseen == [(0, 433, line), (733, 1000, line)], unseen
    # Other text after the unread frames: the subtitle ended where they began.
    after = run(seg(0, 433, (33, 0, line)), seg(433, 733, (467, 433, ""), sim=0.48),
                seg(733, 1000, (767, 733, "你听我说"), sim=0.3))
    assert after == [(0, 433, line), (733, 1000, "你听我说")], after


def test_a_blank_read_after_a_cut_where_the_detector_held_lines_in_the_subtitle_s_place_is_that_subtitle() -> None:
    # Third seeds check 37_cuts: a cut under the line; its mask changed with the picture (similarity 0.0),
    # its lines stayed where they were, and the recogniser read nothing for 14 frames: one cue, not two.
    line = "谢谢你大老远跑过来"
    place, moved = Box(472, 630, 336, 44), Box(180, 630, 336, 44)

    def cues(blank_box: Box | None) -> list[tuple[int, int, str]]:
        return run(SegmentRecord(14467, 16067, [Read(14500, 14467, result(line))], 0.0, Box(472, 628, 340, 44)),
                   SegmentRecord(16067, 16533, [Read(16100, 16067, result(""))], 0.0, blank_box),
                   SegmentRecord(16533, 17033, [Read(16567, 16533, result(line))], 0.27, Box(472, 638, 336, 38)))

    assert cues(place) == [(14467, 17033, line)]
    # Lines elsewhere in the band (picture detail in a gap), or none: a gap between two showings of the line.
    assert cues(moved) == cues(None) == [(14467, 16067, line), (16533, 17033, line)]


def test_a_segment_read_too_unsure_to_count_like_the_subtitle_after_it_is_that_subtitle_appearing() -> None:
    # The libass check set (06_lowres, 360p at CRF 42 with grain): the first frames of a subtitle read "人车九点"
    # at 0.55, below min_confidence; the next segment, its mask alike, reads "火车九点半开" at 1.0. The subtitle
    # starts where the unsure read's segment began, not 28 frames later.
    line = "火车九点半开"
    cues = run(seg(0, 1000, (40, 40, "这件事我从来没想过")), seg(1000, 1100),
               seg(1100, 2300, (1140, 1100, "人车九点", 0.55)), seg(2300, 3100, (2340, 2300, line), sim=0.64))
    assert cues == [(0, 1000, "这件事我从来没想过"), (1100, 3100, line)], cues
    # ... not when the masks were not alike, nor when the unsure read is unlike the subtitle (picture detail
    # read as a glyph or two), nor when the read was blank.
    for before, sim in (((1140, 1100, "人车九点", 0.55), 0.1), ((1140, 1100, "LA", 0.52), 0.64),
                        ((1140, 1100, "", 0.0), 0.64)):
        cues = run(seg(0, 1000, (40, 40, "这件事我从来没想过")), seg(1000, 1100), seg(1100, 2300, before),
                   seg(2300, 3100, (2340, 2300, line), sim=sim))
        assert cues == [(0, 1000, "这件事我从来没想过"), (2300, 3100, line)], (before, cues)


def test_a_gap_the_detector_inferred_while_text_lines_stayed_in_the_band_is_no_gap_between_equal_reads() -> None:
    # The libass dev set of new seeds (21_two-line): a subtitle over shaking grass, the band all edges; the detector
    # lost the subtitle's glyphs and, when they were found again, inferred a gap of 17 frames between "two"
    # subtitles, while every sample in it had text lines (vidocr.detect's Segment.lines_held). The same text on
    # both sides: one cue.
    line = "I told you, I was at the office."
    held = run(seg(0, 800, (33, 0, line)), SegmentRecord(800, 1367, [], 0.0, None, True),
               seg(1367, 2000, (1433, 1367, line), sim=0.38))
    assert held == [(0, 2000, line)], held
    # A gap with a sample without text lines in it is a gap (samples/repeat_gap.mp4), and so is an inferred one
    # between two different subtitles, or one longer than unread_ms.
    assert run(seg(0, 800, (33, 0, line)), SegmentRecord(800, 1367, [], 0.0, None, False),
               seg(1367, 2000, (1433, 1367, line), sim=0.38)) == [(0, 800, line), (1367, 2000, line)]
    assert run(seg(0, 800, (33, 0, line)), SegmentRecord(800, 1367, [], 0.0, None, True),
               seg(1367, 2000, (1433, 1367, "Nobody knows where he went."), sim=0.38)) == [
        (0, 800, line), (1367, 2000, "Nobody knows where he went.")]
    assert run(seg(0, 800, (33, 0, line)), SegmentRecord(800, 2000, [], 0.0, None, True),
               seg(2000, 2600, (2033, 2000, line), sim=0.38)) == [(0, 800, line), (2000, 2600, line)]


def test_a_first_read_of_a_glyph_of_the_line_read_as_another_character_gives_way_to_the_line() -> None:
    """360p (libass corpus, new seeds check ``18_lowres``): the mask held one glyph of a new line before the rest
    grew in; that glyph's read "卜" (of "下") had made a cue of its own, 0.4 s, before the line's. One segment, the
    band unchanged in between (the later read is a GROW read, split where the lines grew)."""
    line = Box(220, 100, 420, 40)
    glyph = Box(300, 104, 30, 34)
    lone = Read(840, 800, OcrResult((OcrLine("卜", 0.85, glyph),)))
    later = Read(1250, 1240, OcrResult((OcrLine("我们得在下雨之前出发", 0.95, line),)))
    assert run(SegmentRecord(800, 2100, [lone, later])) == [(800, 2100, "我们得在下雨之前出发")]
    # Text growing in place keeps both states: its first read's characters are in the later one, in order.
    grows = Read(840, 800, OcrResult((OcrLine("我们", 0.85, Box(220, 100, 60, 40)),)))
    assert run(SegmentRecord(800, 2100, [grows, later])) == [(800, 1240, "我们"), (1240, 2100, "我们得在下雨之前出发")]
    # A read outside the later line (a sign aside), or surer than it, or a third of it or more, is its own cue.
    for other in (Read(840, 800, OcrResult((OcrLine("卜", 0.85, Box(900, 104, 30, 34)),))),
                  Read(840, 800, OcrResult((OcrLine("卜", 0.97, glyph),))),
                  Read(840, 800, OcrResult((OcrLine("他说不是", 0.85, Box(300, 104, 120, 34)),)))):
        assert run(SegmentRecord(800, 2100, [other, later]))[0][:2] == (800, 1240), other


def test_a_brief_segment_that_read_a_small_part_of_the_next_line_as_another_is_no_cue() -> None:
    """360p (libass corpus, third seeds check ``42_lowres``): in the 3-frame gap before "You always say that", a
    blob inside that line's place was boxed alone, its own segment, and read "yc" (0.75): a phantom cue. A brief
    segment read once, unsure, whose one line lies inside the next segment's surer line as a small part of it, not
    its characters in order, is no subtitle; the line starts where its own segment does."""
    line = Box(224, 305, 176, 40)
    lone = Read(6800, 6770, OcrResult((OcrLine("yc", 0.75, Box(317, 319, 19, 26)),)))
    later = Read(6950, 6900, OcrResult((OcrLine("You always say that", 0.93, line),)))
    alone = [(6900, 8100, "You always say that")]
    assert run(SegmentRecord(6770, 6900, [lone]), SegmentRecord(6900, 8100, [later], 0.15)) == alone
    # Not a segment a subtitle could be shown for (settle_ms, 0.25 s and more), nor a sure read (a one-glyph
    # subtitle "嗯" before the next), nor one lying outside the later line (a sign), nor text the line grows from.
    for first, lone_read in (
        (6500, lone),
        (6770, Read(6800, 6770, OcrResult((OcrLine("yc", 0.97, Box(317, 319, 19, 26)),)))),
        (6770, Read(6800, 6770, OcrResult((OcrLine("yc", 0.75, Box(520, 319, 19, 26)),)))),
        (6770, Read(6800, 6770, OcrResult((OcrLine("You", 0.75, Box(224, 319, 30, 26)),)))),
    ):
        cues = run(SegmentRecord(first, 6900, [lone_read]), SegmentRecord(6900, 8100, [later], 0.15))
        assert len(cues) == 2, (first, lone_read)


def test_a_blank_read_whose_glyphs_alone_read_unsurely_like_the_subtitle_after_it_starts_that_subtitle() -> None:
    # Fourth seeds check ``49_cuts``: "谢谢你大老远跑过来" appears over a moving page of print; the first read's
    # glyphs alone read it at 0.84, under the layout's GLYPHS_ONLY_SURE, so the read was judged blank (the layout
    # kept the unsure line as evidence only, its glyphs_only) and the subtitle started 10 frames late, at the next
    # segment's read. Like a read too unsure to count, such evidence starts the subtitle after it where its
    # segment began, when the masks were alike and it reads like it; it never makes a cue of its own.
    line = "谢谢你大老远跑过来"
    evidence = OcrResult((), glyphs_only=OcrResult((OcrLine(line, 0.84),)))
    doubtful = SegmentRecord(14100, 14433, [Read(14133, 14100, evidence)], 0.0)
    cues = run(seg(0, 13733, (40, 40, "小声点，他们会听见的")), seg(13733, 14100), doubtful,
               seg(14433, 16367, (14467, 14433, line), sim=0.38))
    assert cues == [(0, 13733, "小声点，他们会听见的"), (14100, 16367, line)], cues
    # Alone, it is no cue; without it (a blank read with no glyphs-only lines) the subtitle starts at its read.
    assert run(seg(0, 13733, (40, 40, "小声点，他们会听见的")), seg(13733, 14100), doubtful) == [
        (0, 13733, "小声点，他们会听见的")]
    blank = SegmentRecord(14100, 14433, [Read(14133, 14100, OcrResult(()))], 0.0)
    cues = run(seg(0, 13733, (40, 40, "小声点，他们会听见的")), seg(13733, 14100), blank,
               seg(14433, 16367, (14467, 14433, line), sim=0.38))
    assert cues == [(0, 13733, "小声点，他们会听见的"), (14433, 16367, line)], cues


def test_a_piece_too_brief_to_be_a_subtitle_that_reads_like_the_cue_before_it_is_that_cues_end() -> None:
    # Fourth seeds check ``49_cuts``: a cut under "你确定是这栋房子吗" 2 frames before it left; those frames, the most
    # compressed, read "你确定是这称房字吧" (0.91): too unlike it to join (join_similarity), too brief to be a cue of
    # its own (min_duration_ms), so the cue ended 2 frames early. Such a piece, reading like the cue before it
    # (misread_similarity), is that cue's end.
    line = "你确定是这栋房子吗"
    brief = seg(9933, 10000, (9967, 9933, "你确定是这称房字吧", 0.91), sim=0.41)
    assert run(seg(0, 9933, (33, 0, line)), brief, seg(10000, 10300)) == [(0, 10000, line)]
    # ... also when the next subtitle follows at once.
    assert run(seg(0, 9933, (33, 0, line)), brief, seg(10000, 11000, (10033, 10000, "有人在吗"))) == [
        (0, 10000, line), (10000, 11000, "有人在吗")]
    # A brief piece reading other text is no cue and no part of the one before; one long enough, read as surely, is a
    # cue.
    other = seg(9933, 10000, (9967, 9933, "有人在吗", 0.91), sim=0.41)
    assert run(seg(0, 9933, (33, 0, line)), other, seg(10000, 10300)) == [(0, 9933, line)]
    long = seg(9933, 10200, (9967, 9933, "你确定是这称房字吧", 0.99), sim=0.41)
    assert run(seg(0, 9933, (33, 0, line)), long, seg(10200, 10300)) == [
        (0, 9933, line), (9933, 10200, "你确定是这称房字吧")]


def test_a_piece_read_once_less_surely_than_the_subtitle_it_touches_and_like_it_is_that_one() -> None:
    """Reads at a cut, a fade or over print moving behind a line may lose a glyph or take one in from the picture; a
    piece of the subtitle read once that way, touching the rest of it, had made a cue of its own."""
    # New seeds check 13_cuts: the line's last frames, read once, after four reads of it.
    line = "东西 要我帮你拿吗"
    sure = seg(2200, 2933, *((t, t - 33, line, 1.0) for t in (2233, 2667, 2733, 2800)))
    end = seg(2933, 3300, (2967, 2933, "东西要我帮你拿吗", 0.998), (3133, 3100, "东西要我郑你鸣", 0.882), sim=0.3)
    assert run(sure, end, seg(3300, 3467)) == [(2200, 3300, line)]
    # New seeds check 19_ts-signs: the first frames after a cut, read once, before one read of the line.
    first = seg(10208, 10583, (10250, 10208, "他记明大-上回来", 0.936), sim=0.04)
    assert run(first, seg(10583, 11292, (10625, 10583, "他说明天早上回来", 1.0), sim=0.35), seg(11292, 11417)) == [
        (10208, 11292, "他说明天早上回来")]
    # New seeds dev 21_two-line: a glyph of the picture taken in, a letter misread; the lower line read right.
    two = "Keep your voice down, they'll hear us.\nCan you hear me now?"
    misread = seg(3833, 5433, (3867, 3833, "oKeep your yoice down, they'll hear us.\nCan you hear me-now?", 0.975),
                  sim=0.35)
    assert run(misread, seg(5433, 5867, (5467, 5433, two, 0.993), sim=0.58), seg(5867, 6033)) == [(3833, 5867, two)]
    # Not when the piece is read as surely as the subtitle: that is a subtitle of its own.
    first_sure = seg(10208, 10583, (10250, 10208, "他记明大-上回来", 1.0), sim=0.04)
    assert len(run(first_sure, seg(10583, 11292, (10625, 10583, "他说明天早上回来", 1.0), sim=0.35))) == 2
    # Not when one is the other with characters left out: text growing in place is two subtitles.
    grown = [seg(0, 1000, (40, 0, "你听我说完这句", 0.9)), seg(1000, 2000, (1040, 1000, "你听我说完这句话", 1.0))]
    assert [text for _, _, text in run(*grown)] == ["你听我说完这句", "你听我说完这句话"]
    # Not when a line is unlike its counterpart: the lower line of a two-line cue changed (its upper line misread).
    changed = "Keep your voice down, they'll hear us.\nIs anyone there?"
    lower = seg(5433, 5867, (5467, 5433, "Keep your volce down, they'll hear us.\nCan you hear me now?", 0.9))
    assert len(run(seg(3833, 5433, (3867, 3833, changed, 0.99)), lower)) == 2
    # Not for short lines, alike by chance.
    assert len(run(seg(0, 1000, (40, 0, "Hey you.", 0.99)), seg(1000, 1500, (1040, 1000, "Why you?", 0.9)))) == 2


def test_the_space_between_two_phrases_of_a_cjk_line_is_what_most_reads_of_its_letters_say() -> None:
    """The recogniser barely ranks the space between two phrases of a Chinese line (PpOcrConfig.space_min_cjk): a
    read may miss it, or add one where it lost a glyph. The reads with the line's letters vote on each such space,
    whichever read wins the text."""
    spaced = run(seg(0, 2000, (40, 40, "东西要我帮你拿吗", 0.995), (500, 500, "东西 要我帮你拿吗"),
                     (900, 900, "东西 要我帮你拿吗"), (1300, 1300, "东西要我帮你拿吗")))
    assert spaced == [(0, 2000, "东西 要我帮你拿吗")]
    one_of_four = run(seg(0, 2000, (40, 40, "东西要我帮你 拿吗", 0.995), (500, 500, "东西要我帮你拿吗"),
                          (900, 900, "东西要我帮你拿吗"), (1300, 1300, "东西要我帮你拿吗")))
    assert one_of_four == [(0, 2000, "东西要我帮你拿吗")]
    # Two lines: each votes on its own.
    two = run(seg(0, 2000, (40, 40, "我们走吧\n东西要我帮你拿吗"), (500, 500, "我们走吧\n东西 要我帮你拿吗"),
                  (900, 900, "我们 走吧\n东西 要我帮你拿吗")))
    assert two == [(0, 2000, "我们走吧\n东西 要我帮你拿吗")]


def probed(ts: int, split: int, text: str, probs: dict[int, float] | None = None, moved: bool = True) -> Read:
    """A read of one line with the recogniser's per-character probabilities: 1.0 but at the indexes in ``probs``."""
    conf = [1.0] * len(text)
    for i, p in (probs or {}).items():
        conf[i] = p
    line = OcrLine(text, sum(conf) / len(conf), char_conf=tuple(conf))
    return Read(ts, split, OcrResult((line,)), mask_moved=moved)


def test_a_line_changed_in_place_by_a_word_read_surely_is_a_new_subtitle_where_a_misread_is_not() -> None:
    """Reads that differ only where each is sure of its own characters show two subtitles, however alike the
    lines: a word changed in place, at once ("... the rain starts." -> "... the snow starts."). A misread puts an odd
    glyph where the recogniser is unsure of it, and stays the subtitle's noise."""
    rain, snow = "We should leave before the rain starts.", "We should leave before the snow starts."
    # In one segment: the re-read finds the new word, split where the detector saw the change.
    one = SegmentRecord(320, 2720, [probed(360, 320, rain), probed(1560, 1520, snow)])
    assert run(one, seg(2720, 2800)) == [(320, 1520, rain), (1520, 2720, snow)]
    # A periodic re-read (mask unmoved) finding it too: "我们明天再见吧" -> "我们后天再见吧" over a pan.
    zh = SegmentRecord(320, 2720, [probed(360, 320, "我们明天再见吧"),
                                   probed(2360, 1520, "我们后天再见吧", moved=False)])
    assert run(zh) == [(320, 1520, "我们明天再见吧"), (1520, 2720, "我们后天再见吧")]
    # Across two segments the detector saw as alike.
    two = [SegmentRecord(0, 1000, [probed(40, 0, "你昨天晚上去哪儿了")]),
           SegmentRecord(1000, 2000, [probed(1040, 1000, "你今天晚上去哪儿了")], mask_similarity=0.9)]
    assert [text for _, _, text in run(*two)] == ["你昨天晚上去哪儿了", "你今天晚上去哪儿了"]
    # Not when the odd glyph is read unsurely: 360p, "袍" for "跑" at 0.41, one cue with the voted text.
    line = "谢谢你大老远跑过来"
    noisy = SegmentRecord(0, 2000, [probed(40, 0, line), probed(800, 760, "谢谢你大老远袍过来", {6: 0.41}),
                                    probed(1500, 1460, line)])
    assert run(noisy) == [(0, 2000, line)]
    assert run(SegmentRecord(0, 1000, [probed(40, 0, line)]),
               SegmentRecord(1000, 2000, [probed(1040, 1000, "谢谢你大老远袍过来", {6: 0.41})], mask_similarity=0.9)
               ) == [(0, 2000, line)]
    # Nor when it is read nearly as surely as a changed word is: "火" for "人" at 0.97 after a cut.
    cut = SegmentRecord(0, 2000, [probed(40, 0, "没有火知道他去了哪里", {2: 0.97}),
                                  probed(400, 300, "没有人知道他去了哪里")])
    assert run(cut) == [(0, 2000, "没有人知道他去了哪里")]
    # Nor when a read lost a glyph (nothing read in place of another): left to the width rules.
    box = Box(100, 300, 200, 30)
    lost = [probed(40, 0, "小声点，他们会听见的"), probed(800, 760, "小点，他们会听见的")]
    lost = [replace(r, result=OcrResult((replace(r.result.lines[0], box=box),))) for r in lost]
    assert run(SegmentRecord(0, 2000, lost)) == [(0, 2000, "小声点，他们会听见的")]


def test_of_two_reads_one_with_a_line_more_is_not_taken_for_seeing_more_of_the_subtitle() -> None:
    """Check 07_ts-signs: a sign the moving picture brought below the subtitle for one of its two reads was boxed as a
    line of its own ("这可不是你姐姐说的\nCITY LIBR" 0.996, then "这可不是你姐姐说的" 1.0, the next segment). Of two
    reads, the one that holds the other and more saw more of the line (a glyph lost); a line more is not that, and
    the surer read wins."""
    line = OcrLine("这可不是你姐姐说的", 1.0, Box(402, 612, 471, 72))
    sign = OcrLine("CITY LIBR", 0.99, Box(562, 680, 177, 36))

    def two(with_sign: OcrResult, alone: OcrResult) -> list[tuple[int, int, str]]:
        return run(SegmentRecord(10000, 10767, [Read(10033, 10000, with_sign)]),
                   SegmentRecord(10767, 12467, [Read(10800, 10767, alone)], 0.22))

    assert two(OcrResult((line, sign)), OcrResult((line,))) == [(10000, 12467, "这可不是你姐姐说的")]
    # The surer read wins either way: a subtitle's lower line that one read lost is kept by the read that has it.
    lower = OcrLine("I never asked for any of this.", 1.0, Box(450, 670, 380, 40))
    assert two(OcrResult((line, lower)), OcrResult((replace(line, confidence=0.97),))) == [
        (10000, 12467, "这可不是你姐姐说的\nI never asked for any of this.")]
    # One line each, one a part of the other: the longer saw more of it, though less sure.
    short = replace(line, text="我们没有时间", confidence=0.99)
    whole = replace(line, text="我们没有时间了", confidence=0.95)
    assert two(OcrResult((short,)), OcrResult((whole,))) == [(10000, 12467, "我们没有时间了")]
