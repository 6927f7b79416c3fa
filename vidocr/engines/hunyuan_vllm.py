"""HunyuanOCR through vLLM's offline ``LLM``: one engine per process, one ``generate`` call per batch of crops.

The pipeline calls :meth:`HunyuanVllmEngine.recognize` from its OCR thread with ``preferred_batch`` crops, so
decoding and change detection go on while vLLM works on a batch; vLLM schedules the whole batch at once
(continuous batching up to ``max_num_seqs``) and returns outputs in input order.
Settings come from a model profile (configs/models/*.yaml); ``EngineOptions.extra`` overrides its fields
(``model``, ``profile``, ``dtype``, ``max_model_len``, ``max_num_seqs``, ``max_pixels``, ``max_tokens``, ...) and
``engine_kwargs`` is passed to ``vllm.LLM`` as-is. The batched-image fix is the vLLM plugin
:mod:`vidocr.vllm_plugin`, which vLLM loads in every process of its own.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np
from vllm import LLM, SamplingParams

from vidocr.engines import ENGINES, EngineOptions
from vidocr.engines.hunyuan_common import load_profile, local_model_dir, question_for, raw_prompt, to_pil, too_small
from vidocr.engines.vlm_output import OutputStats, parse_output
from vidocr.errors import EngineError
from vidocr.types import OcrResult, Task

log = logging.getLogger("vidocr")


class HunyuanVllmEngine:
    """HunyuanOCR (1.0 or 1.5 profile) on vLLM; see the module docstring."""

    name: ClassVar[str] = "hunyuan-vllm"
    tasks: ClassVar[frozenset[Task]] = ENGINES["hunyuan-vllm"].tasks

    def __init__(self, options: EngineOptions) -> None:
        extra = dict(options.extra)
        self.profile = load_profile(extra.get("profile"), extra)
        self.translate_to = options.translate_to
        if self.translate_to:
            question_for(self.profile, Task.TRANSLATE, self.translate_to)  # refuse an unsupported language now
        self.preferred_batch = int(options.batch_size or self.profile.batch_size)
        self.stats = OutputStats()
        self.batch_sizes: list[int] = []
        model = local_model_dir(self.profile)
        p = self.profile
        kwargs: dict[str, Any] = {
            "model": model,
            "dtype": p.dtype,
            "max_model_len": p.max_model_len,
            "max_num_seqs": p.max_num_seqs,
            "tensor_parallel_size": p.tensor_parallel_size,
            "gpu_memory_utilization": p.gpu_memory_utilization,
            "seed": 0,
            **dict(p.vllm),
        }
        if p.processor_kwargs:
            kwargs["mm_processor_kwargs"] = dict(p.processor_kwargs)
        kwargs.update(extra.get("engine_kwargs") or {})
        log.info("hunyuan-vllm: profile %s, model %s (revision %s)", p.name, model, p.revision or "unpinned")
        try:
            self._llm: LLM | None = LLM(**kwargs)
        except Exception as exc:
            raise EngineError(f"vLLM could not load {model}: {exc}") from exc
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
        prompt = raw_prompt(question_for(self.profile, task, self.translate_to), self.profile.system_message)
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
        try:
            outputs = self._llm.generate(requests, self._params, use_tqdm=False)
        except Exception as exc:
            raise EngineError(f"vLLM generate failed on a batch of {len(requests)}: {exc}") from exc
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
