"""HunyuanOCR through vLLM's offline ``LLM``: one engine per process, one ``generate`` call per batch of crops.

The pipeline calls :meth:`HunyuanVllmEngine.recognize` from its OCR thread with ``preferred_batch`` crops, so
decoding and change detection go on while vLLM works on a batch; vLLM schedules the whole batch at once
(continuous batching up to ``max_num_seqs``) and returns outputs in input order.
Settings come from a model profile (configs/models/*.yaml); ``EngineOptions.extra`` overrides its fields
(``model``, ``profile``, ``dtype``, ``max_model_len``, ``max_num_seqs``, ``max_pixels``, ``max_tokens``, ...) and
``engine_kwargs`` is passed to ``vllm.LLM`` as-is. The batched-image fix is the vLLM plugin
:mod:`vidocr.vllm_plugin`, which vLLM loads in every process of its own.

On a CPU build of vLLM (the platform vLLM reports) the profile's GPU settings do not fit: the dtype is bfloat16 only
where the CPU computes it natively (AMX or AVX512-BF16) and vidocr's plugin carries the CPU GEMM stride fixes, else
float32; the KV cache gets a fixed size (``kv_cache_gb``, default a quarter of the free memory within 1-4 GiB)
instead of ``gpu_memory_utilization``, which vLLM's CPU backend reads as the share of all RAM to reserve. An option
given explicitly (``dtype``, ``gpu_memory_utilization``, ``VLLM_CPU_KVCACHE_SPACE``) wins. vLLM's logs go to stderr
through :mod:`vidocr.engines.liblogs`; a failed start is one :class:`EngineError` naming the cause.
"""

from __future__ import annotations

import logging
import math
import os
from collections.abc import Sequence
from importlib.metadata import entry_points
from typing import Any, ClassVar

import numpy as np

from vidocr.engines import ENGINES, EngineOptions, liblogs
from vidocr.engines.hunyuan_common import (
    ModelProfile,
    announce_lang,
    load_profile,
    local_model_dir,
    question_for,
    raw_prompt,
    to_pil,
    too_small,
)
from vidocr.engines.settings import HunyuanVllmSettings, check_settings, settings_of
from vidocr.engines.vlm_output import OutputStats, parse_output
from vidocr.errors import EngineError
from vidocr.types import OcrResult, Task

liblogs.prepare_vllm()  # before vllm is imported: it sets up its logging at import, in each of its processes
from vllm import LLM, SamplingParams  # noqa: E402

liblogs.route_here()

log = logging.getLogger("vidocr")
GIB = 1024**3


def _plugin_fixes_cpu_gemm() -> bool:
    """Whether vLLM will load vidocr's plugin (entry point installed, not left out by ``VLLM_PLUGINS``)."""
    if not any(ep.name == "vidocr" for ep in entry_points(group="vllm.general_plugins")):
        return False
    allowed = os.environ.get("VLLM_PLUGINS")
    return allowed is None or "vidocr" in {name.strip() for name in allowed.split(",")}


def cpu_has_bf16() -> bool:
    import torch

    return bool(torch.cpu._is_amx_tile_supported() or torch.cpu._is_avx512_bf16_supported())


def pick_dtype(profile_dtype: str, explicit: bool, on_cpu: bool, native_bf16: bool, plugin: bool) -> str:
    """The dtype vLLM gets: an explicit one as given; on a GPU the profile's; on a CPU bfloat16 only where it runs
    natively and the stride fixes are loaded (vLLM's CPU GEMMs reject HunYuanVL's permuted input in bf16), else
    float32."""
    if explicit or not on_cpu:
        return profile_dtype
    if profile_dtype in ("bfloat16", "auto") and native_bf16 and plugin:
        return "bfloat16"
    return "float32"


def cpu_kv_cache_bytes(extra: dict[str, Any]) -> int:
    if extra.get("kv_cache_gb"):
        return int(float(extra["kv_cache_gb"]) * GIB)
    try:
        free = os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        free = 8 * GIB
    return int(min(4 * GIB, max(1 * GIB, free // 4)))


def platform_kwargs(profile: ModelProfile, extra: dict[str, Any]) -> dict[str, Any]:
    """``LLM`` settings that depend on the platform vLLM runs on (see the module docstring)."""
    from vllm.platforms import current_platform

    on_cpu = current_platform.is_cpu()
    dtype = pick_dtype(profile.dtype, bool(extra.get("dtype")), on_cpu, on_cpu and cpu_has_bf16(),
                       _plugin_fixes_cpu_gemm())
    kwargs: dict[str, Any] = {"dtype": dtype}
    if on_cpu:
        explicit = extra.get("gpu_memory_utilization") or os.environ.get("VLLM_CPU_KVCACHE_SPACE")
        if not explicit and "kv_cache_memory_bytes" not in (extra.get("engine_kwargs") or {}):
            kwargs["kv_cache_memory_bytes"] = cpu_kv_cache_bytes(extra)
    return kwargs


class HunyuanVllmEngine:
    """HunyuanOCR (1.0 or 1.5 profile) on vLLM; see the module docstring."""

    name: ClassVar[str] = "hunyuan-vllm"
    tasks: ClassVar[frozenset[Task]] = ENGINES["hunyuan-vllm"].tasks

    def __init__(self, options: EngineOptions) -> None:
        extra = check_settings(self.name, options.extra)  # also when built directly, not through the registry
        settings = settings_of(HunyuanVllmSettings, extra)
        self.profile = load_profile(settings.profile, extra)
        self.translate_to = options.translate_to
        if self.translate_to:
            question_for(self.profile, Task.TRANSLATE, self.translate_to)  # refuse an unsupported language now
        self.lang = tuple(options.lang)
        announce_lang(self.name, self.profile, self.lang)
        self.preferred_batch = int(options.batch_size or self.profile.batch_size)
        self.stats = OutputStats()
        self.batch_sizes: list[int] = []
        model = local_model_dir(self.profile)
        p = self.profile
        kwargs: dict[str, Any] = {
            "model": model,
            "max_model_len": p.max_model_len,
            "max_num_seqs": p.max_num_seqs,
            "tensor_parallel_size": p.tensor_parallel_size,
            "gpu_memory_utilization": p.gpu_memory_utilization,
            "seed": 0,
            "use_tqdm_on_load": liblogs.verbose(),
            **platform_kwargs(p, extra),
            **dict(p.vllm),
        }
        if p.processor_kwargs:
            kwargs["mm_processor_kwargs"] = dict(p.processor_kwargs)
        kwargs.update(settings.engine_kwargs)
        log.info("hunyuan-vllm: profile %s, model %s (revision %s), dtype %s", p.name, model,
                 p.revision or "unpinned", kwargs["dtype"])
        mark = liblogs.causes_mark()
        try:
            with liblogs.child_output_to_stderr():  # vLLM's processes start now: what they print must not reach stdout
                self._llm: LLM | None = LLM(**kwargs)
        except Exception as exc:
            cause = liblogs.failure_cause(mark) or _one_line(exc)
            raise EngineError(f"vLLM could not start {model} ({kwargs['dtype']}): {cause}") from exc
        s = p.sampling
        self._params = SamplingParams(
            temperature=s.temperature,
            top_k=s.top_k,
            max_tokens=s.max_tokens,
            min_tokens=s.max_tokens if s.ignore_eos else 0,
            ignore_eos=s.ignore_eos,
            repetition_penalty=s.repetition_penalty,
            logprobs=0,  # the chosen token's logprob: a confidence for the merger
            skip_special_tokens=True,
        )

    def recognize(self, images: Sequence[np.ndarray], task: Task) -> list[OcrResult]:
        if self._llm is None:
            raise EngineError("hunyuan-vllm engine is closed")
        question = question_for(self.profile, task, self.translate_to, self.lang)
        prompt = raw_prompt(question, self.profile.system_message)
        results: list[OcrResult] = [OcrResult() for _ in images]
        todo: list[int] = []
        requests: list[Any] = []  # vllm TextPrompt dicts
        sizes: list[tuple[int, int]] = []
        for i, image in enumerate(images):
            if too_small(image):
                self.stats.add("tiny")
                continue
            todo.append(i)
            sizes.append((int(image.shape[1]), int(image.shape[0])))
            pil = to_pil(image, self.profile.max_pixels)
            requests.append({"prompt": prompt, "multi_modal_data": {"image": pil}})
        if not requests:
            return results
        mark = liblogs.causes_mark()
        try:
            outputs = self._llm.generate(requests, self._params, use_tqdm=False)
        except Exception as exc:
            cause = liblogs.failure_cause(mark) or _one_line(exc)
            raise EngineError(f"vLLM generate failed on a batch of {len(requests)}: {cause}") from exc
        self.batch_sizes.append(len(requests))
        for i, size, out in zip(todo, sizes, outputs, strict=True):
            completion = out.outputs[0]
            n, total = len(completion.token_ids), completion.cumulative_logprob
            conf = math.exp(total / n) if n and total is not None else 1.0
            parsed = parse_output(
                completion.text, task, size=size, translate_to=self.translate_to,
                truncated=completion.finish_reason == "length" and not self.profile.sampling.ignore_eos,
                confidence=conf,
            )
            self.stats.record(parsed, self.name)
            results[i] = parsed.result
        return results

    def close(self) -> None:
        llm, self._llm = self._llm, None
        if llm is None:
            return
        log.info("hunyuan-vllm: %s", self.stats.snapshot())
        try:
            llm.llm_engine.engine_core.shutdown()
        except Exception:  # best effort: the process may already be gone
            log.debug("hunyuan-vllm: engine shutdown failed", exc_info=True)


def _one_line(exc: BaseException) -> str:
    return " ".join(f"{type(exc).__name__}: {exc}".split())
