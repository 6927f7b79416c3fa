"""The ``openai`` engine against a real vLLM OpenAI-compatible server (CPU build, tiny HunYuanVL model).

The server is started on 127.0.0.1 at a free port with HunyuanOCR's recipe flags, in its own process group,
and always killed. It serves the session's tiny model made confident (same answers as the plain one, confidence
~1), so a CLI run through it writes cues. The last test kills it mid-run: the engine retries, then stops with one
clear error.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

pytest.importorskip("vllm")
pytest.importorskip("transformers.models.hunyuan_vl")

from hunyuan_testutil import band_crops, confident_model, vllm_env  # noqa: E402
from support.net import free_port

from vidocr.engines import EngineOptions, create_engine  # noqa: E402
from vidocr.engines.openai_client import OpenAIEngine  # noqa: E402
from vidocr.errors import EngineError  # noqa: E402
from vidocr.types import OcrResult, Task  # noqa: E402

pytestmark = [pytest.mark.vllm, pytest.mark.timeout(300)]
MAX_TOKENS = 10


@dataclass
class Server:
    proc: subprocess.Popen[bytes]
    url: str
    log: Path
    model: Path


def stop(proc: subprocess.Popen[bytes]) -> None:
    for sig, wait in ((signal.SIGTERM, 15), (signal.SIGKILL, 15)):
        if proc.poll() is not None:
            break
        try:
            os.killpg(proc.pid, sig)  # the API server and its engine-core child
        except ProcessLookupError:
            break
        try:
            proc.wait(wait)
        except subprocess.TimeoutExpired:
            continue


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    model = confident_model(tmp_path_factory)
    port = free_port()
    log = tmp_path_factory.mktemp("vllm-server") / "server.log"
    cmd = [
        sys.executable, "-m", "vllm.entrypoints.openai.api_server", "--model", str(model),
        "--host", "127.0.0.1", "--port", str(port), "--served-model-name", "hunyuan-tiny",
        "--dtype", "float32", "--max-model-len", "1024", "--max-num-seqs", "8", "--enforce-eager",
        "--no-enable-prefix-caching", "--mm-processor-cache-gb", "0", "--limit-mm-per-prompt", '{"image": 1}',
    ]
    with open(log, "wb") as out:
        proc = subprocess.Popen(cmd, env=vllm_env(), stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + 240
        while True:
            if proc.poll() is not None:
                pytest.fail(f"vLLM server exited ({proc.returncode}):\n{log.read_text()[-4000:]}")
            try:
                with urllib.request.urlopen(url + "/models", timeout=2) as resp:
                    if resp.status == 200:
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"vLLM server not ready in 240 s:\n{log.read_text()[-4000:]}")
            time.sleep(0.5)
        yield Server(proc, url, log, model)
    finally:
        stop(proc)


def client(server: Server, **extra: object) -> OpenAIEngine:
    opts = {"base_urls": [f"http://127.0.0.1:{free_port()}/v1", server.url], "max_tokens": MAX_TOKENS,
            "timeout": 30, "backoff": 0.1, "max_backoff": 0.5, "dead_for": 1.0, **extra}
    eng = create_engine("openai", EngineOptions(workers=4, extra=opts))
    assert isinstance(eng, OpenAIEngine)
    return eng


def test_reads_like_the_offline_model_and_skips_a_dead_url(server: Server) -> None:
    crops = band_crops(8, seed=21)
    eng = client(server)
    try:
        assert eng.model == "hunyuan-tiny"  # discovered from /v1/models, through the live URL
        answers = eng.recognize(crops, Task.SUBTITLE)
    finally:
        eng.close()
    # The same model through plain transformers, one image at a time: the server's chat template, the PNG
    # round trip and the batched requests must not change a single answer.
    reference = create_engine("hunyuan-transformers", EngineOptions(
        extra={"model": str(server.model), "max_tokens": MAX_TOKENS, "device": "cpu"}))
    try:
        expected = [reference.recognize([c], Task.SUBTITLE)[0].text for c in crops]
    finally:
        reference.close()
    assert len(set(expected)) >= 3
    assert [a.text for a in answers] == expected
    assert eng.stats.snapshot()["requests"] == 8


def test_cli_default_profile_through_the_server(server: Server, tmp_path: Path) -> None:
    # The openai engine as a user runs it: `vidocr extract --engine openai --server URL`, default profile.
    sample = Path(__file__).resolve().parents[1] / "samples" / "demo.mp4"
    proc = subprocess.run(
        [sys.executable, "-m", "vidocr", "extract", str(sample), "--engine", "openai", "--server", server.url,
         "-o", str(tmp_path), "--json"],
        capture_output=True, text=True, timeout=240,
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    summary = json.loads(proc.stdout)  # all of stdout: one JSON document
    assert summary["counts"]["ok"] == 1 and summary["cues"] > 0, summary
    assert (tmp_path / "demo.srt").read_text(encoding="utf-8").count(" --> ") == summary["cues"]
    assert "Traceback" not in proc.stderr


def test_server_killed_mid_run_retries_then_fails_clearly(server: Server) -> None:
    # Runs last in this module: it kills the module's server.
    eng = client(server, retries=3)
    outcome: dict[str, object] = {}

    def run() -> None:
        try:
            outcome["results"] = eng.recognize(band_crops(400, seed=1), Task.SUBTITLE)
        except EngineError as exc:
            outcome["error"] = exc

    worker = threading.Thread(target=run)
    worker.start()
    try:
        deadline = time.monotonic() + 120
        while eng.stats.snapshot().get("requests", 0) < 4 and time.monotonic() < deadline and worker.is_alive():
            time.sleep(0.05)
        assert eng.stats.snapshot().get("requests", 0) >= 4, "no answers before the kill"
        os.killpg(server.proc.pid, signal.SIGKILL)
        worker.join(120)
        assert not worker.is_alive(), "the engine hung after its server died"
    finally:
        stop(server.proc)
        eng.close()
    error = outcome.get("error")
    assert isinstance(error, EngineError), outcome.keys()
    assert "no OpenAI-compatible server answered" in str(error) and server.url in str(error)
    assert eng.stats.snapshot().get("retries", 0) >= 3
    assert not isinstance(outcome.get("results"), list) or all(isinstance(r, OcrResult) for r in outcome["results"])
