"""The ``hunyuan-transformers`` engine on a tiny random-weight HunYuanVL model (CPU, transformers >= 5.13)."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("transformers.models.hunyuan_vl")

from hunyuan_testutil import band_crops, tiny_model  # noqa: E402

from vidocr.engines import EngineOptions, create_engine  # noqa: E402
from vidocr.engines.hunyuan_common import raw_prompt  # noqa: E402
from vidocr.engines.hunyuan_hf import HunyuanTransformersEngine  # noqa: E402
from vidocr.types import Task  # noqa: E402

pytestmark = pytest.mark.timeout(300)


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HunyuanTransformersEngine]:
    extra = {"model": str(tiny_model(tmp_path_factory)), "max_tokens": 10, "device": "cpu"}
    eng = create_engine("hunyuan-transformers", EngineOptions(batch_size=4, translate_to="zh", extra=extra))
    assert isinstance(eng, HunyuanTransformersEngine)
    yield eng
    eng.close()


def test_model_chat_template_writes_the_engine_prompt(engine: HunyuanTransformersEngine) -> None:
    messages = [{"role": "system", "content": ""},
                {"role": "user", "content": [{"type": "image"}, {"type": "text", "text": "提取图片中的字幕。"}]}]
    rendered = engine.processor.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
    assert rendered == raw_prompt("提取图片中的字幕。")


def test_left_padded_batches_equal_one_at_a_time(engine: HunyuanTransformersEngine) -> None:
    crops = band_crops(6, seed=11)  # three sizes: prompts of different lengths, padded on the left
    before = len(engine.batch_sizes)
    batched = [r.text for r in engine.recognize(crops, Task.SUBTITLE)]
    single = [engine.recognize([c], Task.SUBTITLE)[0].text for c in crops]
    assert len(set(batched)) >= 3, batched
    assert batched == single
    assert engine.batch_sizes[before:] == [4, 2, 1, 1, 1, 1, 1, 1]


def test_translation_and_reference_logprobs(engine: HunyuanTransformersEngine) -> None:
    results = engine.recognize(band_crops(2, seed=2), Task.TRANSLATE)
    assert all(r.translation is not None for r in results if r.lines)
    [lp] = engine.next_token_logprobs(band_crops(1), Task.SUBTITLE)
    assert lp.ndim == 1 and abs(float(lp.exp().sum()) - 1) < 1e-4


def test_gpu_throughput_bench_runs_on_cpu(tmp_path_factory: pytest.TempPathFactory, tmp_path: Path) -> None:
    out = tmp_path / "rows.jsonl"
    bench = Path(__file__).resolve().parents[1] / "bench" / "gpu_throughput.py"
    args = ["--engine", "hf", "--model", str(tiny_model(tmp_path_factory)), "--device", "cpu", "--sizes", "1,2",
            "--seconds", "0", "--tokens", "3", "--crop", "320x48", "--out", str(out)]
    subprocess.run([sys.executable, str(bench), *args], check=True, capture_output=True, timeout=120)
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r.get("batch") for r in rows] == [1, 2, None]
    assert rows[-1]["summary"] and all(r["crops_per_s"] for r in rows)
