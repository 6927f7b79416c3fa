"""One Chinese script per video (vidocr.hanscript, --script)."""

from __future__ import annotations

import pytest

from vidocr import ExtractOptions
from vidocr.errors import ConfigError
from vidocr.hanscript import ScriptKeeper


def run(mode: str, *texts: str) -> list[str]:
    keeper = ScriptKeeper(mode)
    return [keeper.fix(t) for t in texts]


def test_auto_converts_a_stray_variant_form_to_the_videos_script() -> None:
    # Seen on the libass corpus: PP-OCR returned 別 (traditional) for 别 in a simplified video.
    assert run("auto", "我们没有时间了", "你确定是这栋房子吗", "別打开那扇门") == [
        "我们没有时间了", "你确定是这栋房子吗", "别打开那扇门"]
    # And the other way round in a traditional video.
    assert run("auto", "我們沒有時間了", "你確定是這棟房子嗎", "别打開那扇門") == [
        "我們沒有時間了", "你確定是這棟房子嗎", "別打開那扇門"]


def test_auto_changes_nothing_without_clear_evidence() -> None:
    # The first cue alone: two simplified-only characters against one traditional: not sure yet.
    assert run("auto", "別打开那扇门") == ["別打开那扇门"]
    # Mixed evenly: left as read.
    assert run("auto", "開门", "门開") == ["開门", "门開"]
    # Latin text and lines without script-specific characters are untouched.
    assert run("auto", "我们没有时间了", "OK.", "你好") == ["我们没有时间了", "OK.", "你好"]


def test_japanese_is_never_converted() -> None:
    # Kanji are neither script: once a video shows kana, auto leaves its cues alone, kana-less ones too.
    assert run("auto", "東京の会社です", "会社", "東京") == ["東京の会社です", "会社", "東京"]
    assert run("simplified", "東京の会社です") == ["東京の会社です"]


def test_forced_scripts_and_keep() -> None:
    assert run("simplified", "我們沒有時間了") == ["我们没有时间了"]
    assert run("traditional", "我们没有时间了") == ["我們沒有時間了"]
    assert run("keep", "別打开那扇门", "我们没有时间了", "你确定是这栋房子吗") == [
        "別打开那扇门", "我们没有时间了", "你确定是这栋房子吗"]


def test_an_unknown_script_is_a_config_error_before_any_work() -> None:
    from vidocr.pipeline import extract

    with pytest.raises(ConfigError, match="script"):
        extract("does-not-matter.mp4", ExtractOptions(script="cyrillic"))
