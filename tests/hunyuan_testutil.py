"""Shared helpers of the HunyuanOCR test modules (vllm / transformers group): the tiny model, vLLM's CPU settings.

The tiny random-weight HunYuanVL model is built once per test session (module-level cache: every test module
that imports this helper shares it).
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

# vLLM on a 2-core CPU box: small KV cache, loopback only, never the hub.
VLLM_ENV = {
    "VLLM_CPU_KVCACHE_SPACE": "1",
    "VLLM_HOST_IP": "127.0.0.1",
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "TOKENIZERS_PARALLELISM": "false",
}
# Engine options that fit the tiny model on a CPU.
TINY_EXTRA = {
    "dtype": "float32",
    "max_model_len": 1024,
    "max_num_seqs": 16,
    "max_tokens": 12,
}

_built: dict[str, Path] = {}


def tiny_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The session's tiny HunYuanVL model directory (built on first use, ~5 s)."""
    if "tiny" not in _built:
        from support.hunyuan_random import build_model

        _built["tiny"] = build_model(tmp_path_factory.mktemp("hunyuan-tiny"), "tiny")
    return _built["tiny"]


def confident_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The tiny model with its final norm scaled 60x: the same greedy answers, now with confidence ~1.

    A random model answers with confidence ~0.01, which the merger (min_confidence 0.7) drops, so a CLI run with
    it writes no cue; scaling the hidden state that feeds the (tied) output head sharpens the logits without
    changing their argmax. A copy of the session's tiny model, made in milliseconds.
    """
    if "confident" not in _built:
        import shutil

        from safetensors.torch import load_file, save_file

        out = tmp_path_factory.mktemp("hunyuan-confident") / "model"
        shutil.copytree(tiny_model(tmp_path_factory), out)
        weights = load_file(out / "model.safetensors")
        weights["model.norm.weight"] = weights["model.norm.weight"] * 60
        save_file(weights, out / "model.safetensors", metadata={"format": "pt"})
        _built["confident"] = out
    return _built["confident"]


def vllm_env() -> dict[str, str]:
    return {**os.environ, **VLLM_ENV}


SIZES = ((48, 200), (90, 150), (64, 320))


def band_crops(n: int, seed: int = 0, sizes: tuple[tuple[int, int], ...] = SIZES) -> list[np.ndarray]:
    """BGR crops of a few sizes (different patch and token counts), each a random colour plus noise: distinct
    enough that the random model answers each differently."""
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        h, w = sizes[i % len(sizes)]
        noise = rng.integers(-40, 40, (h, w, 3))
        out.append(np.clip(rng.integers(0, 256, 3) + noise, 0, 255).astype(np.uint8))
    return out
