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
        from vidocr.engines.hunyuan_random import build_model

        _built["tiny"] = build_model(tmp_path_factory.mktemp("hunyuan-tiny"), "tiny")
    return _built["tiny"]


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
