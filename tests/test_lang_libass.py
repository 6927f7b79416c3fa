"""Korean, Russian, Arabic, Thai and Hindi subtitles burned in by libass (FFmpeg's ``ass`` filter, the way releases
are made), read back through the whole pipeline with ``--lang`` and with ``auto``: every cue found, its start and
end within one frame of what libass drew, and the text within issue 15's character error rate bound.

One small clip per script (``tests/support/libass.py``: three cues over a generated photo-like picture, 854x480,
text 43 px high with a black outline, the size of a 720p release's subtitles). The bounds are issue 15's targets
(5% ko, ru, hi; 12% ar, th); ``python bench/multilingual.py --libass`` measures the same pipeline on 3 fonts x 8
lines per script at this text size (README, languages): ko 0.0%, ru 0.0%, ar 6.6%, th 0.8%, hi 0.2%, and these
clips read at 0% (ar 2.4%), so a bound is missed by a regression, not by noise. Smaller text (27 px, a 360p
release) reads worse and the zone finder misses some such videos whole: the bench prints it, these tests do not
cover it. One Arabic clip of this size over another generated picture (99) gives no cue (the zone finder picks a
band above the subtitles): reported, not hidden by these clips, which share one picture across scripts.

Needs ``vidocr[tesseract]``, the Debian packs tesseract-ocr-kor/-rus/-ara/-tha/-hin, FFmpeg with libass and the fonts
below (scripts/install_test_extras.py installs them as root on Debian); without them these tests skip, except on
CI, where they fail.
"""

from __future__ import annotations

import logging
import os
import subprocess
import unicodedata
from collections.abc import Iterator
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from support import libass
from support.libass import Clip, Event, Rendered, Scene, Style
from support.metrics import edit_distance

import vidocr
from vidocr.formats import get_writer
from vidocr.index.sidecars import read_sidecar
from vidocr.langs import installed_packs, main_script
from vidocr.types import Cue, VideoInfo

W, H = 854, 480
SIZE = 0.09  # 43 px text on 480 lines
#: Per script: the language pack, the font (fontconfig family, Debian package), the lines, the CER bound.
SCRIPTS: dict[str, tuple[str, str, str, list[str], float]] = {
    "ko": ("kor", "NanumGothic", "fonts-nanum",
           ["지금 어디 가는 거예요?", "우리 내일 다시 만나요", "그건 정말 좋은 생각이야"], 0.05),
    "ru": ("rus", "DejaVu Sans", "fonts-dejavu-core", ["Куда ты идёшь?", "В ЧУВСТВАХ", "Никому не доверяй"], 0.05),
    "ar": ("ara", "Noto Sans Arabic", "fonts-noto-core",
           ["إلى أين أنت ذاهب؟", "سنلتقي غدا صباحا", "هذه فكرة جيدة جدا"], 0.12),
    "th": ("tha", "Noto Sans Thai", "fonts-noto-core", ["คุณจะไปไหน", "พรุ่งนี้เจอกันนะ", "เธออยู่ที่ไหนทั้งคืน"], 0.12),
    "hi": ("hin", "Noto Sans Devanagari", "fonts-noto-core",
           ["तुम कहाँ जा रहे हो?", "कल सुबह मिलते हैं", "यह बहुत अच्छा विचार है"], 0.05),
}


def _need(what: str) -> None:
    if os.environ.get("CI"):
        pytest.fail(f"{what} is missing on CI: scripts/install_test_extras.py should have installed it")
    pytest.skip(f"{what} not installed (scripts/install_test_extras.py installs it as root on Debian)")


def clip(code: str) -> Clip:
    """Three cues of 1 s, 0.32 s apart, from 0.32 s (25 fps), over the generated picture every script shares (as
    tests/test_libass_classes.py's clips do: only the script changes)."""
    _, font, _, lines, _ = SCRIPTS[code]
    events = [Event(8 + 33 * i, 33 + 33 * i, text) for i, text in enumerate(lines)]
    frames = events[-1].last + 8
    return Clip(name=f"lang-{code}", half="test", seed=3, width=W, height=H, fps=Fraction(25), frames=frames,
                style=Style(font, SIZE, outline=4.0), events=events,
                scenes=[Scene(0, f"{libass.GENERATED}1", "still")])


@pytest.fixture(scope="module")
def rendered(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Rendered]:
    try:
        import tesserocr  # noqa: F401
    except ImportError:
        _need("tesserocr (pip install 'vidocr[tesseract]')")
    if not libass.have_ffmpeg_ass():
        _need("ffmpeg with libass (Debian's ffmpeg)")
    lacking = [f"tesseract-ocr-{pack}" for pack, *_ in SCRIPTS.values() if pack not in installed_packs()]
    lacking += [f"font {font!r} ({package})" for _, font, package, _, _ in SCRIPTS.values()
                if not libass.has_font(font)]
    if lacking:
        _need(", ".join(lacking))
    folder = tmp_path_factory.mktemp("lang-libass")
    return {code: libass.render(clip(code), folder) for code in SCRIPTS}


@pytest.fixture(scope="module")
def auto() -> Iterator[vidocr.Extractor]:
    """One engine for every clip, as over a library: ``auto`` decides each video's script afresh."""
    with vidocr.Extractor(vidocr.ExtractOptions()) as extractor:
        yield extractor


def _squash(text: str) -> str:
    return "".join(unicodedata.normalize("NFKC", text).split())


def check(code: str, video: Rendered, cues: list[vidocr.Cue]) -> None:
    truth = video.cues
    shown = [(round(video.frame_at(c.start_ms), 2), round(video.frame_at(c.end_ms), 2), c.text) for c in cues]
    assert len(cues) == len(truth) == 3, shown
    errors = chars = 0
    for t, c in zip(truth, cues, strict=True):
        # Times within one frame of what libass drew (0.05 frame of slack: cue times are whole milliseconds).
        assert abs(video.frame_at(c.start_ms) - t.first) <= 1.05, shown
        assert abs(video.frame_at(c.end_ms) - t.last) <= 1.05, shown
        assert main_script(c.text) == main_script(t.text), shown
        errors += edit_distance(_squash(c.text), _squash(t.text))
        chars += len(_squash(t.text))
    assert errors / chars <= SCRIPTS[code][4], (errors / chars, shown)


@pytest.mark.parametrize("code", list(SCRIPTS))
def test_libass_subtitles_read_with_lang(code: str, rendered: dict[str, Rendered]) -> None:
    cues, _ = vidocr.extract(rendered[code].video, vidocr.ExtractOptions(lang=(code,)))
    check(code, rendered[code], list(cues))


@pytest.mark.parametrize("code", list(SCRIPTS))
def test_libass_subtitles_read_with_auto(
    code: str, rendered: dict[str, Rendered], auto: vidocr.Extractor, caplog: pytest.LogCaptureFixture
) -> None:
    cues, _ = auto(rendered[code].video)
    check(code, rendered[code], list(cues))
    assert not [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]


def _draw(path: Path, style: str) -> np.ndarray:
    """The first frame of ``path`` (SRT, VTT or ASS) drawn over black by FFmpeg's ``subtitles`` filter (libass)."""
    graph = f"subtitles=filename={path}:force_style='{style}'"
    out = subprocess.run(["ffmpeg", "-v", "error", "-nostdin", "-f", "lavfi", "-i", "color=black:s=800x160:r=25",
                          "-vf", graph, "-frames:v", "1", "-f", "rawvideo", "-pix_fmt", "gray", "-"],
                         capture_output=True, check=True)
    return np.frombuffer(out.stdout, np.uint8).reshape(160, 800)


@pytest.mark.parametrize("fmt", ["srt", "vtt", "ass"])
def test_right_to_left_cues_are_written_so_players_draw_them_right_to_left(fmt: str, tmp_path: Path) -> None:
    # Cue text is in logical order (what the recogniser gives). libass, which mpv and FFmpeg draw every one of
    # these formats with, lays a line out left to right unless the style says Encoding -1: an Arabic line ending
    # in "!" or holding a Latin word then shows them at the wrong end. The reference is the same file without
    # vidocr's direction marks, drawn with Encoding -1 (libass finds the direction from the first letter).
    if not libass.have_ffmpeg_ass():
        _need("ffmpeg with libass (Debian's ffmpeg)")
    if not libass.has_font("Noto Sans Arabic"):
        _need("font 'Noto Sans Arabic' (fonts-noto-core)")
    lines = ["لا أعرف ماذا أفعل!", "قال iPhone جديد"]
    cue = Cue(0, 2000, "\n".join(lines))
    written = get_writer(fmt).render([cue], VideoInfo("v.mp4", 800, 160, 2.0, 25.0, "h264"))
    assert [line.strip("\u202b\u202c") for line in lines] == lines and all(line in written for line in lines)
    plain = tmp_path / f"plain.{fmt}"
    plain.write_text(written.replace("\u202b", "").replace("\u202c", ""), encoding="utf-8")
    marked = tmp_path / f"marked.{fmt}"
    marked.write_text(written, encoding="utf-8")
    style = "FontName=Noto Sans Arabic,Fontsize=22"
    reference = _draw(plain, style + ",Encoding=-1")
    assert reference.max() > 0
    assert not np.array_equal(_draw(plain, style), reference)  # the marks are needed: without them, drawn wrong
    assert np.array_equal(_draw(marked, style), reference)
    # Data keeps the logical text: JSON has no marks, and the index reads a written file back without them.
    assert "\u202b" not in get_writer("json").render([cue], VideoInfo("v.mp4", 800, 160, 2.0, 25.0, "h264"))
    assert [text for _, _, text in read_sidecar(marked)] == [cue.text]
