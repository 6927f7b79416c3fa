"""HunyuanOCR through plain transformers (>= 5.13, HunYuanVL classes), batched with left padding.

For machines where vLLM cannot run; also the reference the vLLM batched-image regression test compares with
and the baseline of the throughput benchmark. Same profiles, prompts and output parsing as ``hunyuan-vllm``.
``EngineOptions.extra``: profile fields (``model``, ``dtype``, ``max_tokens``, ...) plus ``device``
("cuda", "cpu", ...; default cuda when available).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np

from vidocr.engines import ENGINES, EngineOptions, liblogs
from vidocr.engines.hunyuan_common import (
    announce_lang,
    load_profile,
    local_model_dir,
    question_for,
    raw_prompt,
    to_pil,
    too_small,
)
from vidocr.engines.settings import HunyuanTransformersSettings, check_settings, settings_of
from vidocr.engines.vlm_output import OutputStats, parse_output
from vidocr.errors import EngineError
from vidocr.types import OcrResult, Task

liblogs.prepare_transformers()  # before transformers is imported: its verbosity follows vidocr's
import torch  # noqa: E402
from transformers import AutoProcessor, HunYuanVLForConditionalGeneration  # noqa: E402

liblogs.route_here()

log = logging.getLogger("vidocr")


class HunyuanTransformersEngine:
    """HunyuanOCR on transformers; ``recognize`` runs ``generate`` on chunks of ``preferred_batch`` crops."""

    name: ClassVar[str] = "hunyuan-transformers"
    tasks: ClassVar[frozenset[Task]] = ENGINES["hunyuan-transformers"].tasks

    def __init__(self, options: EngineOptions) -> None:
        extra = check_settings(self.name, options.extra)  # also when built directly, not through the registry
        settings = settings_of(HunyuanTransformersSettings, extra)
        self.device = torch.device(settings.device or ("cuda" if torch.cuda.is_available() else "cpu"))
        if self.device.type == "cpu" and not extra.get("dtype"):
            extra["dtype"] = "float32"  # bf16 matmuls are slow or missing on most CPUs
        self.profile = load_profile(settings.profile, extra)
        self.translate_to = options.translate_to
        if self.translate_to:
            question_for(self.profile, Task.TRANSLATE, self.translate_to)
        self.lang = tuple(options.lang)
        announce_lang(self.name, self.profile, self.lang)
        self.preferred_batch = int(options.batch_size or self.profile.batch_size)
        self.stats = OutputStats()
        self.batch_sizes: list[int] = []
        model_dir = local_model_dir(self.profile)
        dtype = self.profile.dtype if self.profile.dtype != "auto" else "bfloat16"
        try:
            processor: Any = AutoProcessor  # untyped in some transformers versions
            self.processor = processor.from_pretrained(model_dir)
            model: Any = HunYuanVLForConditionalGeneration.from_pretrained(model_dir, dtype=getattr(torch, dtype))
        except (OSError, ValueError) as exc:
            raise EngineError(f"transformers could not load {model_dir}: {exc}") from exc
        self.model: Any = model.to(self.device).eval()
        self.processor.tokenizer.padding_side = "left"
        tok = self.processor.tokenizer
        self._eos = {int(t) for t in np.atleast_1d(self.model.generation_config.eos_token_id or tok.eos_token_id)}
        self._pad = tok.pad_token_id
        log.info("hunyuan-transformers: profile %s, model %s on %s (%s)",
                 self.profile.name, model_dir, self.device, dtype)

    def _inputs(self, pils: list[Any], prompt: str) -> Any:
        kwargs = dict(self.profile.processor_kwargs)
        if self.device.type != "cpu" and not type(self.processor.image_processor).__name__.endswith("Pil"):
            kwargs.setdefault("device", str(self.device))  # resize/normalise on the GPU: the CPU would bound a batch
        batch = self.processor(text=[prompt] * len(pils), images=pils, return_tensors="pt", padding=True, **kwargs)
        return batch.to(self.device)

    @torch.inference_mode()
    def _generate(self, pils: list[Any], prompt: str) -> tuple[list[str], list[bool], list[float]]:
        s = self.profile.sampling
        inputs = self._inputs(pils, prompt)
        out = self.model.generate(
            **inputs, max_new_tokens=s.max_tokens, min_new_tokens=s.max_tokens if s.ignore_eos else None,
            do_sample=False, repetition_penalty=s.repetition_penalty, pad_token_id=self._pad,
            output_scores=True, return_dict_in_generate=True,
        )
        new = out.sequences[:, inputs["input_ids"].shape[1]:]
        scores = self.model.compute_transition_scores(out.sequences, out.scores, normalize_logits=True)
        texts = self.processor.tokenizer.batch_decode(new, skip_special_tokens=True)
        truncated, confidences = [], []
        for row, row_scores in zip(new.tolist(), scores, strict=True):
            ended = next((k for k, t in enumerate(row) if t in self._eos), None)
            truncated.append(ended is None and not s.ignore_eos)
            n = len(row) if ended is None else ended
            confidences.append(float(torch.exp(row_scores[:n].float().mean())) if n else 1.0)
        return texts, truncated, confidences

    def recognize(self, images: Sequence[np.ndarray], task: Task) -> list[OcrResult]:
        question = question_for(self.profile, task, self.translate_to, self.lang)
        prompt = raw_prompt(question, self.profile.system_message)
        results = [OcrResult() for _ in images]
        todo = [i for i, image in enumerate(images) if not too_small(image)]
        self.stats.add("tiny", len(images) - len(todo))
        for start in range(0, len(todo), max(1, self.preferred_batch)):
            chunk = todo[start : start + self.preferred_batch]
            pils = [to_pil(images[i], self.profile.max_pixels) for i in chunk]
            try:
                texts, truncated, confidences = self._generate(pils, prompt)
            except (RuntimeError, ValueError) as exc:
                raise EngineError(f"transformers generate failed on a batch of {len(chunk)}: {exc}") from exc
            self.batch_sizes.append(len(chunk))
            for i, text, cut, conf in zip(chunk, texts, truncated, confidences, strict=True):
                size = (int(images[i].shape[1]), int(images[i].shape[0]))
                parsed = parse_output(text, task, size=size, translate_to=self.translate_to, truncated=cut,
                                      confidence=conf)
                self.stats.record(parsed, self.name)
                results[i] = parsed.result
        return results

    @torch.inference_mode()
    def next_token_logprobs(self, images: Sequence[np.ndarray], task: Task = Task.SUBTITLE) -> list[torch.Tensor]:
        """Log-probabilities of the first answer token, each image run alone (a reference for vLLM)."""
        prompt = raw_prompt(question_for(self.profile, task, self.translate_to), self.profile.system_message)
        out = []
        for image in images:
            logits = self.model(**self._inputs([to_pil(image, self.profile.max_pixels)], prompt)).logits[0, -1]
            out.append(torch.log_softmax(logits.float(), dim=-1).cpu())
        return out

    def close(self) -> None:
        if getattr(self, "model", None) is not None:
            log.info("hunyuan-transformers: %s", self.stats.snapshot())
            self.model = None
            if self.device.type == "cuda":
                torch.cuda.empty_cache()
