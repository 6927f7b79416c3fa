"""``--lang`` with the HunyuanOCR engines: a hint in the prompt where the profile has a prompt for the language
(``prompts.lang``), else not used, said once in one log line. Run on the tiny random-weight HunYuanVL model with
``hunyuan-transformers`` (CPU): the prompt checked is the one the engine hands the model's processor."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("transformers.models.hunyuan_vl")

from hunyuan_testutil import band_crops, tiny_model  # noqa: E402

from vidocr.engines import EngineOptions, create_engine  # noqa: E402
from vidocr.engines.hunyuan_common import load_profile, question_for, raw_prompt  # noqa: E402
from vidocr.engines.hunyuan_hf import HunyuanTransformersEngine  # noqa: E402
from vidocr.types import Task  # noqa: E402

pytestmark = pytest.mark.timeout(300)

KOREAN = "提取图片中的韩文字幕。"  # a profile's own prompt: HunyuanOCR's official prompts name no language


@pytest.fixture(scope="module")
def lang_profile(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("profile") / "with-lang.yaml"
    path.write_text(f"prompts:\n  subtitle: 提取图片中的字幕。\n  text: 提取图中的文字。\n  lang:\n    KO: {KOREAN}\n",
                    encoding="utf-8")
    return path


def _engine(model: Path, profile: str | None, lang: tuple[str, ...]) -> HunyuanTransformersEngine:
    extra: dict[str, Any] = {"model": str(model), "max_tokens": 4, "device": "cpu"}
    if profile:
        extra["profile"] = profile
    engine = create_engine("hunyuan-transformers", EngineOptions(batch_size=2, lang=lang, extra=extra))
    assert isinstance(engine, HunyuanTransformersEngine)
    return engine


def _prompts_sent(engine: HunyuanTransformersEngine, monkeypatch: pytest.MonkeyPatch, task: Task) -> list[str]:
    sent: list[str] = []
    inputs = HunyuanTransformersEngine._inputs.__get__(engine)  # the engine's own, not an earlier spy

    def spy(pils: list[Any], prompt: str) -> Any:
        sent.append(prompt)
        return inputs(pils, prompt)

    monkeypatch.setattr(engine, "_inputs", spy)
    engine.recognize(band_crops(2, seed=5), task)
    return sent


@pytest.fixture(scope="module")
def model(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    yield tiny_model(tmp_path_factory)


def test_the_prompt_sent_carries_the_language_where_the_profile_has_one(
    model: Path, lang_profile: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="vidocr")
    engine = _engine(model, str(lang_profile), ("ru", "ko"))  # the first language the profile has a prompt for
    try:
        assert _prompts_sent(engine, monkeypatch, Task.SUBTITLE) == [raw_prompt(KOREAN)]
        # The hint is for subtitles: other tasks keep their prompt.
        assert _prompts_sent(engine, monkeypatch, Task.TEXT) == [raw_prompt("提取图中的文字。")]
    finally:
        engine.close()
    # (A random model's answers are warned about as overlong: only the language line is checked here.)
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING and "--lang" in r.getMessage()]
    assert any(KOREAN in r.getMessage() and "--lang ru,ko" in r.getMessage() for r in caplog.records)


def test_without_a_language_prompt_the_hint_is_not_used_and_said_once(
    model: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    engine = _engine(model, None, ("ko",))  # the default profile, HunyuanOCR 1.0's official prompts
    try:
        first = _prompts_sent(engine, monkeypatch, Task.SUBTITLE)
        second = _prompts_sent(engine, monkeypatch, Task.SUBTITLE)
    finally:
        engine.close()
    assert first == second == [raw_prompt("提取图片中的字幕。")]
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING and "--lang" in r.getMessage()]
    assert warnings == ["hunyuan-transformers: --lang ko is not used: profile hunyuanocr-1.0 has no prompt for it "
                        "(prompts.lang); the model reads the languages it knows without a hint"]


def test_language_prompts_come_from_the_profile() -> None:
    for name in ("hunyuanocr-1.0", "hunyuanocr-1.5"):
        profile = load_profile(name)
        assert profile.lang_prompts == {}  # no official language prompt: --lang is not used
        assert question_for(profile, Task.SUBTITLE, lang=("ko",)) == question_for(profile, Task.SUBTITLE)
