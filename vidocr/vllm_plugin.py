"""vLLM plugin (entry point group ``vllm.general_plugins``): fixes vLLM loads in every one of its processes.

1. HunYuanVL batched images. vLLM's Transformers backend (``MultiModalMixin._process_vision_input``) splits the
   vision tower's concatenated output by PATCH counts (grid h*w), but HunYuanVL's patch merger emits
   ``(h/m) * (w/m + 1) + 2`` TOKENS per image. Alone, an image still gets its own rows; second in an encoder batch it
   gets rows of its neighbour or padding. The fix hands the split token counts for HunYuanVL.
2. CPU GEMM: ``vllm._custom_ops.onednn_mm`` (float32) and ``weight_packed_linear_cpu`` (the SGL kernel vLLM uses
   for small bfloat16 weights on AMX CPUs) need a unit stride in the last dim, and HunYuanVL's patch merger passes
   a permuted tensor (``mat1 must be contiguous at last dimension``). The fixes make such inputs contiguous.

Each fix is applied only when a probe shows the installed vLLM has the fault, so a fixed vLLM is left alone.
Both probes are cheap (no model). Importing this module imports neither torch nor vllm; ``register()`` does.
``VIDOCR_VLLM_PLUGIN_SKIP=name[,name]`` skips fixes by name (the regression test uses it to show the bug); it is
read here because vLLM starts its processes itself and an environment variable is the only way in.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

# A child of vLLM's logger: vLLM prints it in each of its processes, so the log shows where a fix was applied.
logger = logging.getLogger("vllm.plugins.vidocr")

_applied: dict[str, bool] = {}


def hunyuan_token_counts(grid_thw: Any, merge: int) -> list[int]:
    """Tokens HunYuanVL's patch merger emits per image: merged rows x (merged cols + newline) + begin/end."""
    rows = grid_thw.tolist() if hasattr(grid_thw, "tolist") else list(grid_thw)
    return [int(t) * ((int(h) // merge) * (int(w) // merge + 1) + 2) for t, h, w in rows]


def _is_hunyuan_vl(model: Any) -> bool:
    return getattr(getattr(model, "config", None), "model_type", None) == "hunyuan_vl"


def _split_sizes_seen(process_vision_input: Callable[..., Any]) -> list[int]:
    """Run ``process_vision_input`` on a stand-in HunYuanVL model; return the sizes it split the features by."""
    import torch

    seen: list[int] = []

    class Probe:
        config = SimpleNamespace(model_type="hunyuan_vl", vision_config=SimpleNamespace(spatial_merge_size=2))

        def _get_features(self, modality: str, pixel_values: Any, **kwargs: Any) -> Any:
            return torch.zeros(1, 18, 1)

        def _split_embeddings(self, embeddings: Any, split_sizes: list[int]) -> list[Any]:
            seen.extend(int(s) for s in split_sizes)
            return list(torch.split(embeddings.reshape(-1, 1), [8, 10]))

    grid = torch.tensor([[1, 4, 4], [1, 4, 6]])  # 16 and 24 patches; 8 and 10 tokens
    process_vision_input(Probe(), "image", torch.zeros(40, 3), grid.prod(-1), image_grid_thw=grid)
    return seen


def has_faulty_split() -> bool:
    """True when the installed vLLM splits HunYuanVL's vision output by patch counts."""
    from vllm.model_executor.models.transformers.multimodal import MultiModalMixin

    original = getattr(MultiModalMixin._process_vision_input, "__vidocr_original__",
                       MultiModalMixin._process_vision_input)
    return _split_sizes_seen(original) != [8, 10]


def _fix_vision_split() -> bool:
    from vllm.model_executor.models.transformers.multimodal import MultiModalMixin

    original = MultiModalMixin._process_vision_input
    if hasattr(original, "__vidocr_original__") or not has_faulty_split():
        return False

    def _process_vision_input(self: Any, modality: str, pixel_values: Any, num_patches: Any, **kwargs: Any) -> Any:
        grid = kwargs.get("image_grid_thw")
        if modality == "image" and grid is not None and _is_hunyuan_vl(self):
            merge = int(self.config.vision_config.spatial_merge_size)
            num_patches = _as_tensor_like(num_patches, hunyuan_token_counts(grid, merge))
        return original(self, modality, pixel_values, num_patches, **kwargs)

    _process_vision_input.__vidocr_original__ = original  # type: ignore[attr-defined]
    mixin: Any = MultiModalMixin
    mixin._process_vision_input = _process_vision_input
    return True


def _as_tensor_like(reference: Any, values: list[int]) -> Any:
    import torch

    if isinstance(reference, torch.Tensor):
        return torch.tensor(values, dtype=reference.dtype)
    return values


def _onednn_rejects_strided() -> bool:
    import torch
    from vllm import _custom_ops as ops
    from vllm.platforms import current_platform

    if not current_platform.is_cpu() or not getattr(ops, "_supports_onednn", False):
        return False
    handler = ops.create_onednn_mm(torch.ones(4, 2), 1)  # weight [K=4, N=2]
    strided = torch.ones(4, 3).t()  # shape [3, 4], stride (1, 3)
    try:
        ops.onednn_mm(handler, strided, None)
    except RuntimeError:
        return True
    return False


def _fix_onednn_strides() -> bool:
    from vllm import _custom_ops as ops

    original = ops.onednn_mm
    if hasattr(original, "__vidocr_original__") or not _onednn_rejects_strided():
        return False

    def onednn_mm(handler: Any, x: Any, bias: Any) -> Any:
        return original(handler, x if x.stride(-1) == 1 else x.contiguous(), bias)

    onednn_mm.__vidocr_original__ = original  # type: ignore[attr-defined]
    module: Any = ops
    module.onednn_mm = onednn_mm
    return True


def _sgl_rejects_strided() -> bool:
    import torch
    from vllm import _custom_ops as ops
    from vllm.platforms import current_platform

    if not current_platform.is_cpu() or not torch.cpu._is_amx_tile_supported():
        return False
    n, k = 32, 64
    packed = torch.ops._C.convert_weight_packed(torch.ones(n, k, dtype=torch.bfloat16))
    strided = torch.ones(k, 3, dtype=torch.bfloat16).t()  # shape [3, K], stride (1, 3)
    try:
        ops.weight_packed_linear_cpu(strided, packed, n, None)
    except RuntimeError:
        return True
    return False


def _fix_sgl_strides() -> bool:
    from vllm import _custom_ops as ops

    original = ops.weight_packed_linear_cpu
    if hasattr(original, "__vidocr_original__") or not _sgl_rejects_strided():
        return False

    def weight_packed_linear_cpu(x: Any, packed_weight: Any, n: int, bias: Any) -> Any:
        return original(x if x.stride(-1) == 1 else x.contiguous(), packed_weight, n, bias)

    weight_packed_linear_cpu.__vidocr_original__ = original  # type: ignore[attr-defined]
    module: Any = ops
    module.weight_packed_linear_cpu = weight_packed_linear_cpu
    return True


FIXES: dict[str, Callable[[], bool]] = {
    "hunyuan_vl_vision_split": _fix_vision_split,
    "cpu_onednn_strides": _fix_onednn_strides,
    "cpu_sgl_strides": _fix_sgl_strides,
}


def register() -> None:
    """vLLM calls this once per process (it may call it again: every fix is idempotent)."""
    skip = {name.strip() for name in os.environ.get("VIDOCR_VLLM_PLUGIN_SKIP", "").split(",")}
    for name, fix in FIXES.items():
        if name in _applied:
            continue
        if name in skip:
            _applied[name] = False
            continue
        try:
            _applied[name] = fix()
        except Exception:  # a probe that breaks on a future vLLM must not stop vLLM from starting
            logger.warning("vidocr vLLM plugin: could not check/apply %s", name, exc_info=True)
            _applied[name] = False
        if _applied[name]:
            logger.info("vidocr vLLM plugin: applied %s", name)


def applied() -> dict[str, bool]:
    """Which fixes this process applied (for tests and diagnostics)."""
    return dict(_applied)
