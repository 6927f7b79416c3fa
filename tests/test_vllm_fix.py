"""Regression test of the HunYuanVL batched-image fix (vidocr.vllm_plugin) with the real vLLM on CPU.

vLLM's Transformers backend split HunYuanVL's vision output by patch counts: an image second in an encoder
batch was read with wrong embeddings. Each probe runs in a fresh process (vLLM loads its plugins per process):
with the plugin, both images' first-token logprobs match plain transformers; without it, the second does not.
The probes run vLLM in one process (VLLM_ENABLE_V1_MULTIPROCESSING=0): all requests are queued before the first
step, so both images are certainly encoded in one batch (with an engine-core process the second request can
arrive a step late and hide the bug). That the fix reaches vLLM's worker processes is checked in
tests/test_hunyuan_vllm.py (collective_rpc into the workers).
"""

from __future__ import annotations

import json
import subprocess
import sys
from importlib.metadata import entry_points
from pathlib import Path

import pytest

pytest.importorskip("vllm")
pytest.importorskip("transformers.models.hunyuan_vl")

from hunyuan_testutil import tiny_model, vllm_env  # noqa: E402

from vidocr import vllm_plugin  # noqa: E402

pytestmark = [pytest.mark.vllm, pytest.mark.timeout(300)]
TOLERANCE = 1e-3  # float32 on CPU: the fixed path agrees to ~1e-6; the broken one is off by ~1e-2 or more


def probe(model: Path, **env: str) -> list[float]:
    proc = subprocess.run(
        [sys.executable, str(Path(__file__).with_name("vllm_fix_probe.py")), str(model)],
        env={**vllm_env(), "VLLM_ENABLE_V1_MULTIPROCESSING": "0", **env}, capture_output=True, text=True, timeout=240,
    )
    lines = [line for line in proc.stdout.splitlines() if line.startswith("{")]
    assert proc.returncode == 0 and lines, proc.stderr[-4000:]
    diffs: list[float] = json.loads(lines[-1])["diffs"]
    return diffs


def test_plugin_is_registered_for_vllm() -> None:
    plugins = {ep.name: ep.value for ep in entry_points(group="vllm.general_plugins")}
    assert plugins.get("vidocr") == "vidocr.vllm_plugin:register", (
        "vidocr's vLLM plugin entry point is not installed: reinstall vidocr (pip install -e .)")


def test_token_counts_match_the_hunyuan_processor(tmp_path_factory: pytest.TempPathFactory) -> None:
    from transformers import AutoProcessor

    processor = AutoProcessor.from_pretrained(tiny_model(tmp_path_factory))
    sizes = [(48, 200), (90, 150), (128, 128), (20, 400)]
    grids = processor.image_processor(images=[__import__("PIL.Image").Image.new("RGB", (w, h)) for h, w in sizes],
                                      return_tensors="pt")["image_grid_thw"]
    expected = processor._get_num_multimodal_tokens(image_sizes=sizes)["num_image_tokens"]
    assert vllm_plugin.hunyuan_token_counts(grids, 2) == list(expected)


def test_second_image_in_batch_matches_transformers(tmp_path_factory: pytest.TempPathFactory) -> None:
    diffs = probe(tiny_model(tmp_path_factory))
    assert diffs[0] < TOLERANCE
    assert diffs[1] < TOLERANCE


@pytest.mark.skipif(not vllm_plugin.has_faulty_split(), reason="this vLLM splits HunYuanVL features correctly")
def test_without_the_fix_the_second_image_is_wrong(tmp_path_factory: pytest.TempPathFactory) -> None:
    # Shows the test above can fail: the same probe with the split fix switched off.
    diffs = probe(tiny_model(tmp_path_factory), VIDOCR_VLLM_PLUGIN_SKIP="hunyuan_vl_vision_split")
    assert diffs[0] < TOLERANCE  # first image alone in its rows: still right
    assert diffs[1] > 10 * TOLERANCE
