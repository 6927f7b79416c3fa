"""HunyuanOCR shared code without torch or vllm: profiles, prompts, images, output parsing, light imports."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from vidocr.engines import load_engine_class
from vidocr.engines.hunyuan_common import (
    find_profile,
    load_profile,
    local_model_dir,
    question_for,
    raw_prompt,
    to_pil,
)
from vidocr.engines.vlm_output import cut_loop, parse_output, split_bilingual
from vidocr.errors import ConfigError, EngineUnavailable
from vidocr.types import Box, Task


def test_profiles_pin_model_prompts_and_recipe_flags() -> None:
    v10 = load_profile("hunyuanocr-1.0")
    assert (v10.hub_id, v10.subfolder, v10.revision) == (
        "tencent/HunyuanOCR", "v1.0", "f6af82ee007fe6091b29fb3bb287b491ead41c82")
    assert question_for(v10, Task.SUBTITLE) == "提取图片中的字幕。"
    assert question_for(v10, Task.TRANSLATE, "EN").startswith("先提取文字，再将文字内容翻译为英文。")
    assert v10.vllm == {"enable_prefix_caching": False, "mm_processor_cache_gb": 0, "limit_mm_per_prompt": {"image": 1}}
    assert (v10.sampling.temperature, v10.sampling.top_k) == (0.0, 1)
    v15 = load_profile("hunyuanocr-1.5")
    assert v15.sampling.repetition_penalty == 1.08
    assert question_for(v15, Task.TRANSLATE, "zh").endswith("再将文字内容翻译为中文。")
    with pytest.raises(ConfigError, match="no prompt for task 'spotting'"):
        question_for(v15, Task.SPOTTING)


def test_profile_overrides_and_errors(tmp_path: Path) -> None:
    p = load_profile(None, {"max_tokens": 12, "max_pixels": 1000, "model": "/x", "workers": 3, "dtype": None})
    got = (p.name, p.sampling.max_tokens, p.max_pixels, p.model, p.dtype)
    assert got == ("hunyuanocr-1.0", 12, 1000, "/x", "bfloat16")
    with pytest.raises(ConfigError, match="unknown model profile 'nope'.*hunyuanocr-1.0"):
        load_profile("nope")
    with pytest.raises(ConfigError, match="cannot translate to 'fr'; it can: en, zh"):
        question_for(p, Task.TRANSLATE, "fr")
    typed = load_profile(None, {"max_model_len": "1024", "temperature": "0.5", "system_message": "false"})
    assert (typed.max_model_len, typed.sampling.temperature, typed.system_message) == (1024, 0.5, False)
    with pytest.raises(ConfigError, match="max_tokens: expected a int"):
        load_profile(None, {"max_tokens": "many"})
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: bad\nmax_pixel: 3\n")
    assert find_profile(str(bad)) == bad
    with pytest.raises(ConfigError, match="unknown profile fields: max_pixel"):
        load_profile(str(bad))


def test_model_directory_is_local_only(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="needs a local model directory.*tencent/HunyuanOCR.*v1.0"):
        local_model_dir(load_profile())
    (tmp_path / "v1.0").mkdir()
    (tmp_path / "v1.0" / "config.json").write_text("{}")
    assert local_model_dir(load_profile(None, {"model": str(tmp_path)})) == str(tmp_path / "v1.0")
    with pytest.raises(ConfigError, match="no config.json"):
        local_model_dir(load_profile(None, {"model": str(tmp_path / "missing")}))


def test_raw_prompt_is_hunyuanocr_template() -> None:
    assert raw_prompt("Q") == (
        "<｜hy_begin▁of▁sentence｜><｜hy_place▁holder▁no▁3｜><｜hy_place▁holder▁no▁100｜><｜hy_place▁holder▁no▁102｜>"
        "<｜hy_place▁holder▁no▁101｜>Q<｜hy_User｜>")
    assert "no▁3" not in raw_prompt("Q", system_message=False)


def test_to_pil_converts_bgr_and_caps_pixels() -> None:
    bgr = np.zeros((100, 400, 3), np.uint8)
    bgr[..., 0] = 255  # blue
    pil = to_pil(bgr, max_pixels=10_000)
    assert pil.size[0] * pil.size[1] <= 10_000 and abs(pil.size[0] / pil.size[1] - 4) < 0.1
    assert pil.getpixel((0, 0)) == (0, 0, 255)
    assert to_pil(np.zeros((10, 20), np.uint8)).mode == "RGB"


@pytest.mark.parametrize(
    ("raw", "truncated", "expected", "flags"),
    [
        ("<｜hy_place▁holder▁no▁2｜> 你好世界 <|endoftext|>", False, ["你好世界"], ()),
        ("Line one\n\n line two \n", False, ["Line one", "line two"], ()),
        ("Hi there. there. there. there.", True, ["Hi there."], ("overlong", "loop_cut")),
        ("哈哈哈哈哈哈", False, ["哈哈哈哈哈哈"], ()),
        ("", False, [], ("empty",)),
        ("<｜hy_User｜>", False, [], ("empty",)),
        ("...!!! \ufffd\ufffd", False, [], ("garbage",)),
    ],
)
def test_parse_output(raw: str, truncated: bool, expected: list[str], flags: tuple[str, ...]) -> None:
    parsed = parse_output(raw, Task.SUBTITLE, size=(100, 20), truncated=truncated)
    assert [line.text for line in parsed.result.lines] == expected
    assert parsed.flags == flags
    assert parsed.result.raw == raw


def test_cut_loop_keeps_one_copy() -> None:
    assert cut_loop("ok abcabcabcabcabcabcabcabc", 4, 24) == ("ok abc", True)
    assert cut_loop("No, no, no.", 3, 6) == ("No, no, no.", False)


def test_bilingual_split() -> None:
    assert split_bilingual(["对不起 我是诺曼", "Sorry, I'm Norm."], "en") == (["对不起 我是诺曼"], ["Sorry, I'm Norm."])
    assert split_bilingual(["Where are you?", "你在哪里？"], "zh") == (["Where are you?"], ["你在哪里？"])
    assert split_bilingual(["Bonjour", "Salut", "Hello", "Hi"], "en") == (["Bonjour", "Salut"], ["Hello", "Hi"])
    assert split_bilingual(["Hello"], "en") == (["Hello"], ["Hello"])  # already in the target language
    result = parse_output("안녕하세요\n你好", Task.TRANSLATE, size=(1, 1), translate_to="zh").result
    assert (result.text, result.translation) == ("안녕하세요", "你好")


def test_spotting_boxes_scale_from_0_1000() -> None:
    raw = "第二行(100,600),(900,950)\n第一行(50,0),(950,500)"
    lines = parse_output(raw, Task.SPOTTING, size=(1920, 200)).result.lines
    assert [line.text for line in lines] == ["第一行", "第二行"]
    assert lines[0].box == Box(96, 0, 1728, 100)
    assert lines[1].box == Box(192, 120, 1536, 70)
    fallback = parse_output("no boxes here", Task.SPOTTING, size=(10, 10))
    assert fallback.result.text == "no boxes here" and "no_boxes" in fallback.flags


def test_light_modules_import_without_torch_or_vllm() -> None:
    code = (
        "import sys, vidocr, vidocr.engines.hunyuan_common, vidocr.engines.vlm_output, "
        "vidocr.engines.openai_client, vidocr.vllm_plugin\n"
        "heavy = sorted(m for m in ('torch', 'vllm', 'transformers') if m in sys.modules)\n"
        "assert not heavy, heavy"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)


@pytest.mark.skipif(importlib.util.find_spec("vllm") is not None, reason="vllm is installed here")
def test_vllm_engine_without_vllm_names_the_extra() -> None:
    with pytest.raises(EngineUnavailable, match=r"pip install 'vidocr\[vllm\]'"):
        load_engine_class("hunyuan-vllm")


def test_profiles_are_package_data() -> None:
    """Profiles live inside the package (an installed wheel has them), in one copy."""
    import vidocr

    package = Path(vidocr.__file__).parent
    names = sorted(p.name for p in (package / "profiles").glob("*.yaml"))
    assert names == ["hunyuanocr-1.0.yaml", "hunyuanocr-1.5.yaml"]
    assert find_profile("hunyuanocr-1.5").parent == package / "profiles"
    assert not (package.parent / "configs" / "models").exists()
