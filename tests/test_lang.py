"""--lang and the Tesseract recogniser: Korean, Russian, Arabic, Thai and Hindi subtitles rendered into videos with
Debian fonts, read back with exact times and a bounded character error rate; ``auto`` picks the script per video
and says once which package to install when nothing installed reads it; a missing pack is one line, exit 2.

Needs ``vidocr[tesseract]``, the Debian packs tesseract-ocr-kor/-rus/-ara/-tha/-hin and fonts-nanum,
fonts-dejavu-core, fonts-noto-core (scripts/install_test_extras.py installs them as root on Debian); without them
these tests skip, except on CI, where they fail.
"""

from __future__ import annotations

import logging
import os
import unicodedata
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from support import synth
from support.metrics import edit_distance
from support.synth import SynthCue, SynthSpec, TruthCue, render_video

import vidocr
from vidocr._cli import main
from vidocr.engines.rapid import group_lines
from vidocr.errors import ConfigError
from vidocr.langs import installed_packs, main_script, parse_langs

FONTS = Path("/usr/share/fonts/truetype")
# Per script: the language pack, a Debian font, the lines, and the character error rate allowed over the video
# (issue 15's targets: 5% for ko, ru, hi; 12% for ar, th).
SCRIPTS = {
    "ko": ("kor", FONTS / "nanum/NanumGothic.ttf",
           ["지금 어디 가는 거예요?", "우리 내일 다시 만나요", "그건 정말 좋은 생각이야"], 0.05),
    "ru": ("rus", FONTS / "dejavu/DejaVuSans.ttf", ["Куда ты идёшь?", "В ЧУВСТВАХ", "Никому не доверяй"], 0.05),
    "ar": ("ara", FONTS / "noto/NotoSansArabic-Regular.ttf",
           ["إلى أين أنت ذاهب؟", "سنلتقي غدا صباحا", "هذه فكرة جيدة جدا"], 0.12),
    "th": ("tha", FONTS / "noto/NotoSansThai-Regular.ttf", ["คุณจะไปไหน", "พรุ่งนี้เจอกันนะ", "เธออยู่ที่ไหนทั้งคืน"], 0.12),
    "hi": ("hin", FONTS / "noto/NotoSansDevanagari-Regular.ttf",
           ["तुम कहाँ जा रहे हो?", "कल सुबह मिलते हैं", "यह बहुत अच्छा विचार है"], 0.05),
}


def _need(what: str) -> None:
    if os.environ.get("CI"):
        pytest.fail(f"{what} is missing on CI: scripts/install_test_extras.py should have installed it")
    pytest.skip(f"{what} not installed (scripts/install_test_extras.py installs it as root on Debian)")


@pytest.fixture(scope="module")
def tesseract() -> None:
    try:
        import tesserocr  # noqa: F401
    except ImportError:
        _need("tesserocr (pip install 'vidocr[tesseract]')")
    missing = [pack for pack, font, _, _ in SCRIPTS.values() if pack not in installed_packs()]
    missing += [str(font) for _, font, _, _ in SCRIPTS.values() if not font.is_file()]
    if missing:
        _need(", ".join(missing))


def cer(got: str, want: str) -> float:
    """Levenshtein distance over the truth's length, on NFKC text without whitespace."""
    a = "".join(unicodedata.normalize("NFKC", got).split())
    b = "".join(unicodedata.normalize("NFKC", want).split())
    return edit_distance(a, b) / max(1, len(b))


def render_script(code: str, path: Path, colour: str = "white", lines: list[str] | None = None) -> list[TruthCue]:
    """Three cues in the script's font (the synthetic generator draws with one font file: swapped here)."""
    _, font, default_lines, _ = SCRIPTS[code]
    lines = lines or default_lines
    saved = synth.FONT_PATH
    synth.FONT_PATH = font
    synth._font.cache_clear()
    synth._has_glyph.cache_clear()
    try:
        cues = tuple(SynthCue(0.52 + 2 * i, 2.0 + 2 * i, text, colour=colour) for i, text in enumerate(lines))
        return render_video(SynthSpec(duration=7, cues=cues, seed=len(code) + ord(code[0])), path)
    finally:
        synth.FONT_PATH = saved
        synth._font.cache_clear()
        synth._has_glyph.cache_clear()


@pytest.fixture(scope="module")
def videos(tesseract: None, tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, list[TruthCue]]]:
    folder = tmp_path_factory.mktemp("lang")
    return {code: (folder / f"{code}.mp4", render_script(code, folder / f"{code}.mp4")) for code in SCRIPTS}


def _check(code: str, cues: list[vidocr.Cue], truth: list[TruthCue]) -> None:
    assert [(c.start_ms, c.end_ms) for c in cues] == [(t.start_ms, t.end_ms) for t in truth], [c.text for c in cues]
    errors = sum(cer(c.text, t.text) * len("".join(t.text.split())) for c, t in zip(cues, truth, strict=True))
    rate = errors / sum(len("".join(t.text.split())) for t in truth)
    assert rate <= SCRIPTS[code][3], (rate, [c.text for c in cues])
    for cue in cues:
        assert main_script(cue.text) == main_script(truth[0].text)


@pytest.mark.parametrize("code", list(SCRIPTS))
def test_explicit_lang_reads_the_script_with_exact_times(code: str, videos: dict) -> None:
    path, truth = videos[code]
    cues, _ = vidocr.extract(path, vidocr.ExtractOptions(lang=(code,)))
    _check(code, list(cues), truth)


@pytest.mark.parametrize("code", list(SCRIPTS))
def test_auto_picks_the_recogniser_per_video(code: str, videos: dict, caplog: pytest.LogCaptureFixture) -> None:
    path, truth = videos[code]
    cues, _ = vidocr.extract(path, vidocr.ExtractOptions())
    _check(code, list(cues), truth)
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]


def test_auto_keeps_pp_ocr_for_chinese_and_english(samples: Path, caplog: pytest.LogCaptureFixture) -> None:
    for name in ("zh", "en"):
        auto, _ = vidocr.extract(samples / f"{name}.mp4", vidocr.ExtractOptions())
        fixed, _ = vidocr.extract(samples / f"{name}.mp4", vidocr.ExtractOptions(lang=(name,)))
        assert [(c.start_ms, c.end_ms, c.text) for c in auto] == [(c.start_ms, c.end_ms, c.text) for c in fixed]
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]


def test_yellow_subtitles_are_binarised_like_the_text_mask(tmp_path: Path, tesseract: None) -> None:
    truth = render_script("ru", tmp_path / "yellow.mp4", colour="yellow")
    cues, _ = vidocr.extract(tmp_path / "yellow.mp4", vidocr.ExtractOptions(lang=("ru",)))
    _check("ru", list(cues), truth)


@pytest.mark.parametrize("lang", [("ru",), ("ru", "en"), ()], ids=["ru", "ru,en", "auto"])
def test_english_words_in_russian_lines(lang: tuple[str, ...], tmp_path: Path, tesseract: None) -> None:
    # Tesseract's rus alone reads "iPhone" as "1РНопе": Russian is read with rus+eng, with --lang and auto.
    lines = ["Это мой новый iPhone", "Позвони John завтра", "Смотри на YouTube"]
    truth = render_script("ru", tmp_path / "mixed.mp4", lines=lines)
    cues = list(vidocr.extract(tmp_path / "mixed.mp4", vidocr.ExtractOptions(lang=lang))[0])
    assert [(c.start_ms, c.end_ms) for c in cues] == [(t.start_ms, t.end_ms) for t in truth], [c.text for c in cues]
    chars = sum(len("".join(t.split())) for t in lines)
    errors = sum(cer(c.text, t) * len("".join(t.split())) for c, t in zip(cues, lines, strict=True))
    assert errors / chars <= 0.05, [c.text for c in cues]


@pytest.fixture
def only_english_pack(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, tesseract: None) -> Path:
    """A tessdata folder without the packs under test (as on a machine that never installed them)."""
    folder = tmp_path / "tessdata"
    folder.mkdir()
    for pack in ("eng", "osd"):
        source = Path(os.environ.get("TESSDATA_PREFIX", "/usr/share/tesseract-ocr/5/tessdata")) / f"{pack}.traineddata"
        if source.is_file():
            (folder / source.name).symlink_to(source)
    monkeypatch.setenv("TESSDATA_PREFIX", str(folder))
    return folder


@pytest.mark.parametrize("code", list(SCRIPTS))
def test_auto_warns_once_naming_the_package_when_no_pack_reads_the_script(
    code: str, videos: dict, only_english_pack: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path, _ = videos[code]
    cues = list(vidocr.extract(path, vidocr.ExtractOptions())[0])
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    package = f"tesseract-ocr-{SCRIPTS[code][0]}"
    assert len(warnings) == 1 and "apt-get install" in warnings[0] and package in warnings[0], warnings
    assert str(path) in warnings[0] and "pip install" not in warnings[0]  # tesserocr is there, the pack is not
    if code == "ru":  # Tesseract's script detection is sure of Cyrillic (of the others, not on three lines)
        assert "look like Cyrillic script: apt-get install tesseract-ocr-rus;" in warnings[0], warnings
        assert "tesseract-ocr-kor" not in warnings[0]
    # No look-alike garbage in its place: what is kept was read surely (PP-OCR reads "?" and the like).
    assert all(main_script(c.text) in (None, "Latin", "CJK") and c.confidence >= 0.9 for c in cues)
    assert len(cues) < 3


def test_explicit_lang_without_its_pack_is_one_line_exit_2(
    samples: Path, tmp_path: Path, only_english_pack: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["extract", str(samples / "en.mp4"), "-o", str(tmp_path / "out.srt"), "--lang", "ko"])
    err = capsys.readouterr().err.strip()
    assert code == 2
    assert len(err.splitlines()) == 1 and "apt-get install tesseract-ocr-kor" in err, err
    assert not (tmp_path / "out.srt").exists()
    config = tmp_path / "c.yaml"
    config.write_text("lang: [th, hi]\n")
    code = main(["extract", str(samples / "en.mp4"), "-o", str(tmp_path / "out.srt"), "--config", str(config)])
    err = capsys.readouterr().err.strip()
    assert code == 2 and "tesseract-ocr-tha tesseract-ocr-hin" in err, err


def test_lang_values() -> None:
    assert parse_langs(None) == () and parse_langs("auto") == ()
    assert parse_langs(["ko,ru", "zh-Hans", "Hangul"]) == ("ko", "ru", "zh", "hangul")
    with pytest.raises(ConfigError, match="unknown language"):
        parse_langs("xx")


def test_right_to_left_boxes_join_in_logical_order() -> None:
    # Two words of one Arabic line found as two boxes: the right one is read first.
    pieces = [(10.0, 0.0, 60.0, 20.0, "غدا", 0.9), (80.0, 0.0, 150.0, 20.0, "سنلتقي", 0.9)]
    assert group_lines(pieces, rtl=True)[0].text == "سنلتقي غدا"
    assert group_lines(pieces)[0].text == "غدا سنلتقي"


def test_thai_gets_no_invented_spaces() -> None:
    from vidocr.engines.tesseract import _unspace

    assert _unspace("คุณ จะ ไป ไหน") == "คุณจะไปไหน"
    assert _unspace("OK คุณ") == "OK คุณ"


def test_glyph_image_keeps_outlined_glyphs_not_the_picture() -> None:
    from vidocr.engines.tesseract import glyph_image

    crop = np.full((40, 80, 3), 200, np.uint8)  # bright picture around the line
    crop[10:30, 20:60] = 0  # the outline
    crop[14:26, 24:56] = (40, 230, 250)  # a yellow glyph stroke (BGR) inside it
    image = glyph_image(crop)
    assert image is not None
    assert set(np.unique(image)) == {0, 255}
    ink = np.argwhere(image == 0)
    # Only the glyph (32 x 12 px) is ink, cut tight with a margin: the bright picture is not.
    assert len(ink) == 32 * 12
    assert glyph_image(np.full((40, 80, 3), 200, np.uint8)) is None


@pytest.fixture(autouse=True)
def _no_leak() -> Iterator[None]:
    yield
    assert synth.FONT_PATH.name == "NotoSansSC-Subset.otf"


def test_tesseract_leaves_no_thread_limit_to_later_processes(monkeypatch: pytest.MonkeyPatch) -> None:
    # OMP_THREAD_LIMIT=1 is for libtesseract only: left in os.environ it reached vLLM's CPU engine processes
    # started later (tests/test_vllm_fix.py read NaN logits after this file's tests had run).
    pytest.importorskip("tesserocr")
    from vidocr.engines.tesseract import load_tesserocr

    monkeypatch.delenv("OMP_THREAD_LIMIT", raising=False)
    load_tesserocr()
    assert "OMP_THREAD_LIMIT" not in os.environ


@pytest.mark.parametrize("command", [["extract"], ["index", "build"], ["watch"]])
def test_every_extracting_command_says_what_lang_does(command: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main([*command, "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "which choose the recogniser: auto" in text and "Tesseract the others" in text, text
    assert ("stored on the index tracks" in text) == (command != ["extract"])


def test_index_build_and_watch_take_a_lang_list_as_extract_does(tmp_path: Path) -> None:
    from vidocr._cli import build_parser
    from vidocr._cli.config import apply_config
    from vidocr._cli.options import extract_options_from_args, stored_lang
    from vidocr._cli.watch import watch_options_from_args

    config = tmp_path / "c.yaml"
    config.write_text("lang: [ko, RU]\n")
    commands = (["extract", "v.mp4"], ["index", "build", "lib"], ["watch", str(tmp_path)])
    ways = (["--lang", "ko", "--lang", "ru"], ["--lang", "ko,ru"], ["--lang", "ko, RU"], ["--config", str(config)])
    for command in commands:
        for way in ways:
            argv = [*command, *way]
            parser = build_parser()
            apply_config(parser, argv, command[0])
            args = parser.parse_args(argv)
            assert extract_options_from_args(args).lang == ("ko", "ru"), argv
            if command[0] == "watch":
                assert watch_options_from_args(args).lang == "ko,ru"
        parser = build_parser()
        args = parser.parse_args([*command, "--lang", "auto"])
        assert extract_options_from_args(args).lang == () and stored_lang(()) is None
    with pytest.raises(ConfigError, match="unknown language"):
        extract_options_from_args(build_parser().parse_args(["index", "build", "lib", "--lang", "ko,xx"]))


def test_index_build_stores_the_lang_list_on_its_tracks(samples: Path, tmp_path: Path) -> None:
    import shutil
    import sqlite3

    lib = tmp_path / "lib"
    lib.mkdir()
    shutil.copy(samples / "short_cue.mp4", lib / "a.mp4")
    db = tmp_path / "i.sqlite"
    assert main(["index", "build", str(lib), "--db", str(db), "-q", "--lang", "en", "--lang", "FR"]) == 0
    with sqlite3.connect(db) as conn:
        assert {row[0] for row in conn.execute("SELECT lang FROM tracks")} == {"en,fr"}
    assert main(["index", "build", str(lib), "--db", str(db), "-q", "--force"]) == 0  # auto: no language known
    with sqlite3.connect(db) as conn:
        assert {row[0] for row in conn.execute("SELECT lang FROM tracks")} == {None}


def test_the_real_russian_clip_reads_with_lang_ru(tesseract: None) -> None:
    """ru_stylised_8s.mp4 (small, widely spaced capitals without an outline, over light pictures): 3.5% CER since
    its zone is masked at full resolution (small text) and the first frame is read again once it held; 9.4% before
    that, when "И СМЕХ" had no cue (the half-resolution text mask held none of its glyphs) and the first cue was
    read on a frame of its fade-in ("ЭТО У БКА"); 45.8% before crops were enlarged and lighter stretches of a line
    got their own level. Captions written from its frames; each against the cue over it most."""
    real = Path(os.environ.get("VIDOCR_REAL_DATA", Path(__file__).resolve().parents[2] / "shared" / "data" / "real"))
    clip = real / "ru_stylised_8s.mp4"
    if not clip.is_file():
        pytest.skip(f"real clips not available ({real})")
    truth = [(0, 670, "ЭТО УЛЫБКА"), (670, 1400, "И СМЕХ"), (1400, 3000, "ЭТО ГЛАЗА, В КОТОРЫХ ЦЕЛЫЙ ОКЕАН"),
             (3000, 4470, "КРАСОТА В МЫСЛЯХ"), (4470, 6200, "В ЭМОЦИЯХ"), (6370, 7630, "В ЧУВСТВАХ"),
             (7630, 8000, "ОНА НЕОСЯЗАЕМА")]
    cues = list(vidocr.extract(clip, vidocr.ExtractOptions(lang=("ru",)))[0])
    errors = chars = 0
    for start, end, text in truth:
        best = max(cues, key=lambda c: min(c.end_ms, end) - max(c.start_ms, start), default=None)
        n = len("".join(text.split()))
        hit = best is not None and min(best.end_ms, end) > max(best.start_ms, start)
        errors += edit_distance("".join(best.text.split()), "".join(text.split())) if best and hit else n
        chars += n
    assert errors / chars <= 0.06, [c.text for c in cues]
    assert any(c.text.startswith("ЭТО ГЛАЗА") and "В КОТОРЫХ" in c.text for c in cues), [c.text for c in cues]
    assert [(round(c.start_ms / 1000 * 30), round(c.end_ms / 1000 * 30)) for c in cues if c.text == "И СМЕХ"] == [
        (20, 42)], [(c.start_ms, c.end_ms, c.text) for c in cues]
    assert "ОНА НЕОСЯЗАЕМА" in [c.text for c in cues]  # its "О" over a lighter part of the picture, at the line's end


def test_picture_specks_do_not_decide_a_videos_script(monkeypatch: pytest.MonkeyPatch) -> None:
    # Before a 360p English video's first subtitle, picture detail is read as "1" at 0.2-0.56: four such reads
    # must not decide that no installed recogniser reads the video (which drops its unsure lines for good).
    from vidocr.engines import rapid

    def found(text: str, score: float, width: float, height: float = 30.0) -> tuple:
        quad = np.array([[100, 10], [100 + width, 10], [100 + width, 10 + height], [100, 10 + height]], np.float32)
        return quad, text, score, None, (), ()

    band = np.zeros((60, 640, 3), np.uint8)
    chooser = rapid.ScriptChooser(rapid.build_ocr())
    reads: list[list[tuple]] = []
    monkeypatch.setattr(rapid, "read_all_again", lambda ocr, image: reads.pop(0))
    reads += [[found("1", 0.3, 40)] for _ in range(5)]
    for _ in range(5):
        chooser.read(band)
    assert chooser.decided is None and not chooser.votes
    reads += [[found("Keep your voice down", 0.9, 400)] for _ in range(3)]
    for _ in range(3):
        chooser.read(band)
    assert chooser.decided == "ppocr"
    # A line's worth of box read as one glyph ("早" for a line of Hangul) still votes: nothing reads it.
    chooser.begin_video("")
    reads += [[found("早", 0.4, 300)] for _ in range(4)]
    for _ in range(4):
        chooser.read(band)
    assert chooser.decided == "none"


def test_a_line_pp_ocr_reads_surely_is_not_re_read_by_a_pack_a_speck_voted_for(monkeypatch: pytest.MonkeyPatch) -> None:
    # An English video (libass corpus, new seeds dev 12_gaps): the first read of the first subtitle boxed a speck
    # PP-OCR read as "龙" at 0.27 and the Thai pack read surely; the next read, the line itself, read surely by
    # PP-OCR, tied the votes 1-1, and the tie went to the pack: a cue of Thai letters. Until the video is decided, a
    # speck's vote counts half (a pack still wins a tie of lines: PP-OCR can be sure of a Cyrillic look-alike).
    from vidocr.engines import rapid

    class Thai:
        rtl = False

        def read_line(self, crop: np.ndarray) -> tuple[str, float]:
            return "ทอ 1ทดเท", 0.9

    def found(text: str, score: float, width: float, height: float = 30.0) -> tuple:
        quad = np.array([[100, 10], [100 + width, 10], [100 + width, 10 + height], [100, 10 + height]], np.float32)
        return quad, text, score, None, (), ()

    band = np.zeros((60, 640, 3), np.uint8)
    chooser = rapid.ScriptChooser(rapid.build_ocr())
    monkeypatch.setattr(chooser, "packs", lambda: ["tha"])
    monkeypatch.setattr(chooser, "reader", lambda pack: Thai())
    monkeypatch.setattr(chooser, "final", lambda pack: Thai())
    reads = [[found("龙", 0.27, 66)], [found("The train leaves at half past nine.", 0.999, 420)]]
    monkeypatch.setattr(rapid, "read_all_again", lambda ocr, image: reads.pop(0))
    chooser.read(band)
    assert dict(chooser.votes) == {"tha": 1}
    assert [ln.text for ln in chooser.read(band).lines] == ["The train leaves at half past nine."]
    assert chooser.decided is None


def test_latin_twins_of_cyrillic_letters_in_a_cyrillic_line_are_written_in_cyrillic() -> None:
    from vidocr.langs import cyrillic_twins

    # A lone "В" read as the Latin "B" (the real Russian clip), a word with one Latin twin inside.
    assert cyrillic_twins("B ЭМОЦИЯХ") == "В ЭМОЦИЯХ" and main_script(cyrillic_twins("B ЭМОЦИЯХ")[0]) == "Cyrillic"
    assert cyrillic_twins("ЭТO УЛЫБКА") == "ЭТО УЛЫБКА"
    assert cyrillic_twins("СМОТРИ НА MEHЯ") == "СМОТРИ НА МЕНЯ"
    # Latin words with a letter that has no Cyrillic twin stay, and so does a Latin line.
    assert cyrillic_twins("Мы в Moscow") == "Мы в Moscow"
    assert cyrillic_twins("iPhone для всех") == "iPhone для всех"
    assert cyrillic_twins("OK, HE CAME") == "OK, HE CAME"
