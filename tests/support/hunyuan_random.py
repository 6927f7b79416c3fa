"""Build a random-weight HunYuanVL model directory (for tests and benchmarks; never for real OCR).

The directory has everything transformers and vLLM load from a real HunyuanOCR checkout: config, weights,
a byte-level BPE tokenizer with HunyuanOCR's special-token strings, a chat template that writes the same raw
prompt as :func:`vidocr.engines.hunyuan_common.build_prompt`, and the image processor config.
Two sizes: ``tiny`` (~1 MB, CPU tests) and ``hunyuan-1.0`` (HunyuanOCR 1.0's real dimensions, ~1B parameters).
Needs torch, transformers >= 5.13 and tokenizers; imports them only when called.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

BOS = "<｜hy_begin▁of▁sentence｜>"
USER = "<｜hy_User｜>"
ASSISTANT = "<｜hy_Assistant｜>"
PAD = "<｜hy_▁pad▁｜>"


def placeholder(n: int) -> str:
    return f"<｜hy_place▁holder▁no▁{n}｜>"


EOS = placeholder(2)
SYSTEM_END = placeholder(3)
IMAGE_START, IMAGE_END, IMAGE, IMAGE_NEWLINE = placeholder(100), placeholder(101), placeholder(102), placeholder(103)
SPECIAL_TOKENS = [PAD, BOS, USER, ASSISTANT, EOS, SYSTEM_END, IMAGE_START, IMAGE_END, IMAGE, IMAGE_NEWLINE]

# Chat template: the raw HunyuanOCR prompt (BOS, system text + end-of-system, image span, question, User marker).
CHAT_TEMPLATE = (
    "{{ '" + BOS + "' }}"
    "{% for m in messages %}"
    "{% if m['role'] == 'system' %}{% if m['content'] is string %}{{ m['content'] }}{% endif %}"
    "{{ '" + SYSTEM_END + "' }}"
    "{% elif m['role'] == 'user' %}"
    "{% if m['content'] is string %}{{ m['content'] }}{% else %}{% for c in m['content'] %}"
    "{% if c['type'] in ('image', 'image_url') %}{{ '" + IMAGE_START + IMAGE + IMAGE_END + "' }}"
    "{% elif c['type'] == 'text' %}{{ c['text'] }}{% endif %}"
    "{% endfor %}{% endif %}{{ '" + USER + "' }}"
    "{% elif m['role'] == 'assistant' %}{{ m['content'] }}{{ '" + EOS + "' }}{% endif %}"
    "{% endfor %}"
)

_CORPUS = [
    "Extract the subtitles from the image. Extract the text in the image.",
    "Hello world, how are you? I am fine. Sorry, I'm Norm Spellman. The quick brown fox jumps over the lazy dog.",
    "提取图片中的字幕。提取图中的文字。对不起 我是诺曼·斯佩尔曼。先提取文字，再将文字内容翻译为英文。翻译为中文。",
    "0123456789 (12,34),(560,78) subtitle line one\nline two",
]

TINY: dict[str, Any] = {
    "text": {"hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 2, "num_attention_heads": 2,
             "num_key_value_heads": 1, "head_dim": 32, "mrope_section": [4, 4, 4, 4]},
    "vision": {"hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 1, "num_attention_heads": 2},
    "vocab_size": None,  # = tokenizer size
    "min_pixels": 64 * 64,
    "max_pixels": 128 * 128,
}
# HunyuanOCR 1.0 (github.com/Tencent-Hunyuan/HunyuanOCR; candle's hunyuan_ocr config mirrors it).
HUNYUAN_1_0: dict[str, Any] = {
    "text": {"hidden_size": 1024, "intermediate_size": 3584, "num_hidden_layers": 24, "num_attention_heads": 16,
             "num_key_value_heads": 8, "head_dim": 128, "mrope_section": [16, 16, 16, 16]},
    "vision": {"hidden_size": 1152, "intermediate_size": 4304, "num_hidden_layers": 27, "num_attention_heads": 16},
    "vocab_size": 120818,
    "min_pixels": 512 * 512,
    "max_pixels": 2048 * 2048,
}
SIZES = {"tiny": TINY, "hunyuan-1.0": HUNYUAN_1_0}


def _printable(text: str) -> bool:
    return bool(text.strip()) and "\ufffd" not in text and text.isprintable()


def build_tokenizer(out: Path) -> Any:
    """Train a byte-level BPE tokenizer and save it (with its config) under ``out``."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=400, special_tokens=SPECIAL_TOKENS,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    tok.train_from_iterator(_CORPUS * 4, trainer)
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok, bos_token=BOS, eos_token=EOS, pad_token=PAD,
        extra_special_tokens={"image_token": IMAGE, "image_start_token": IMAGE_START, "image_end_token": IMAGE_END},
    )
    fast.chat_template = CHAT_TEMPLATE
    fast.padding_side = "left"
    fast.save_pretrained(out)
    return fast


def build_model(
    out: str | Path, size: str = "tiny", seed: int = 0, dtype: str = "float32", visible: bool = True,
    device: str = "cpu",
) -> Path:
    """Write a random-weight HunYuanVL model of ``size`` ("tiny" or "hunyuan-1.0") to ``out``; return the path.

    ``visible``: zero the (tied) embedding rows of special tokens and of tokens that do not decode to printable
    text (lone UTF-8 bytes, control characters), so greedy decoding picks ordinary tokens and answers are
    visible text (a random model otherwise emits special tokens and byte soup, which decode to nothing);
    the price is that it never emits EOS, so every answer runs to max_tokens.
    ``device``: where the random weights are drawn ("cuda" makes the 1B-parameter model in seconds).
    """
    import torch
    from transformers import HunYuanVLConfig, HunYuanVLForConditionalGeneration

    dims = SIZES[size]
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    tok = build_tokenizer(out)
    ids = {t: tok.convert_tokens_to_ids(t) for t in SPECIAL_TOKENS}
    text = dict(dims["text"])
    section = text.pop("mrope_section")
    cfg = HunYuanVLConfig(
        text_config={
            **text, "vocab_size": dims["vocab_size"] or len(tok), "max_position_embeddings": 4096,
            "rope_parameters": {"rope_type": "xdrope", "rope_theta": 10000.0, "alpha": 1000.0, "factor": 1.0,
                                "mrope_section": section},
            "bos_token_id": ids[BOS], "eos_token_id": ids[EOS], "pad_token_id": ids[PAD],
        },
        vision_config={**dims["vision"], "patch_size": 16, "spatial_merge_size": 2,
                       "out_hidden_size": text["hidden_size"], "text_hidden_size": text["hidden_size"]},
        image_token_id=ids[IMAGE], im_start_id=ids[IMAGE_START], im_end_id=ids[IMAGE_END],
        im_newline_id=ids[IMAGE_NEWLINE],
    )
    cfg.bos_token_id, cfg.eos_token_id, cfg.pad_token_id = ids[BOS], ids[EOS], ids[PAD]
    torch.manual_seed(seed)
    with torch.device(device):
        model = HunYuanVLForConditionalGeneration(cfg).to(getattr(torch, dtype))
    model.eval()
    if visible:
        hidden = [i for i in range(len(tok)) if not _printable(tok.decode([i]))] + list(ids.values())
        with torch.no_grad():
            model.get_input_embeddings().weight[hidden] = 0
    model.generation_config.eos_token_id = ids[EOS]
    model.generation_config.pad_token_id = ids[PAD]
    model.generation_config.bos_token_id = ids[BOS]
    model.save_pretrained(out)
    (out / "preprocessor_config.json").write_text(json.dumps({
        "image_processor_type": "HunYuanVLImageProcessor", "processor_class": "HunYuanVLProcessor",
        "patch_size": 16, "temporal_patch_size": 1, "merge_size": 2,
        "min_pixels": dims["min_pixels"], "max_pixels": dims["max_pixels"],
        "image_mean": [0.48145466, 0.4578275, 0.40821073], "image_std": [0.26862954, 0.26130258, 0.27577711],
    }, indent=1))
    (out / "processor_config.json").write_text(json.dumps({"processor_class": "HunYuanVLProcessor"}))
    return out


if __name__ == "__main__":
    import sys

    print(build_model(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else "tiny"))
