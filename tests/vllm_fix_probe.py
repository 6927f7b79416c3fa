"""Run by tests/test_vllm_fix.py in a fresh process: first-token logprobs of two images, vLLM vs transformers.

Usage: python vllm_fix_probe.py MODEL_DIR. The transformers reference (each image alone) is computed first,
then ONE vLLM ``generate`` gets both images, so they share an encoder batch and the second one exposes a wrong
split. Prints one JSON line: per image, the largest |logprob difference| over vLLM's top-20 tokens.
"""

from __future__ import annotations

import json
import sys

from hunyuan_testutil import VLLM_ENV, band_crops


def main(model: str) -> None:
    import os

    for key, value in VLLM_ENV.items():
        os.environ.setdefault(key, value)
    from vidocr.engines import EngineOptions
    from vidocr.engines.hunyuan_common import raw_prompt, to_pil
    from vidocr.engines.hunyuan_hf import HunyuanTransformersEngine
    from vidocr.types import Task

    images = band_crops(2, seed=7)
    hf = HunyuanTransformersEngine(EngineOptions(extra={"model": model, "device": "cpu"}))
    reference = hf.next_token_logprobs(images, Task.SUBTITLE)
    prompt = raw_prompt(hf.profile.prompts["subtitle"])
    hf.close()

    from vllm import LLM, SamplingParams

    from vidocr import vllm_plugin

    llm = LLM(model=model, dtype="float32", max_model_len=1024, max_num_seqs=8, enforce_eager=True, seed=0,
              enable_prefix_caching=False, mm_processor_cache_gb=0, limit_mm_per_prompt={"image": 1})
    outputs = llm.generate([{"prompt": prompt, "multi_modal_data": {"image": to_pil(im)}} for im in images],
                           SamplingParams(temperature=0.0, max_tokens=1, logprobs=20), use_tqdm=False)
    diffs = []
    for out, ref in zip(outputs, reference, strict=True):
        top = out.outputs[0].logprobs[0]
        diffs.append(max(abs(lp.logprob - float(ref[token])) for token, lp in top.items()))
    print(json.dumps({"diffs": diffs, "applied_here": vllm_plugin.applied()}))
    llm.llm_engine.engine_core.shutdown()


if __name__ == "__main__":
    main(sys.argv[1])
