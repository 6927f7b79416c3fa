"""The HunyuanOCR engines as a user runs them: ``vidocr extract --json`` in a real subprocess, DEFAULT profile.

One CLI run per engine start: exit code, cues written, stdout that is vidocr's JSON and nothing else (vLLM,
torch and transformers log to stderr through vidocr's format), no traceback. The model is the session's tiny
random-weight HunYuanVL made confident (``hunyuan_testutil.confident_model``): the merger drops the unconfident
reads of a plain random model, and a run that writes no cue would prove little. The ``openai`` engine's run is in
tests/test_hunyuan_server.py, against that module's vLLM server. The pieces (dtype choice, vLLM's log
filtering, start errors, loading lines) are checked without a model below.
"""

from __future__ import annotations

import json
import logging
import os
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("transformers.models.hunyuan_vl")

from hunyuan_testutil import VLLM_ENV, confident_model  # noqa: E402

from vidocr.engines import ENGINES, BackgroundEngine, EngineOptions, EngineSpec, create_engine, liblogs  # noqa: E402
from vidocr.errors import EngineError  # noqa: E402
from vidocr.types import Task  # noqa: E402

pytestmark = pytest.mark.timeout(300)
SAMPLE = Path(__file__).resolve().parents[1] / "samples" / "demo.mp4"
# vLLM's own log format ("(EngineCore pid=1) INFO ...") never shows: its records come out as "vidocr: vllm: ...".
RAW_VLLM_LINE = re.compile(r"^\((MainProcess|EngineCore|Worker|VllmWorker|APIServer)[^)]*\) ", re.M)


def run_cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "vidocr", "extract", str(SAMPLE), "--json", *args],
        capture_output=True, text=True, timeout=280, env={**_clean_environ(), "HF_HUB_OFFLINE": "1", **(env or {})},
    )


def _clean_environ() -> dict[str, str]:
    """This process's environment without the log switches that engines built in-process by earlier tests set
    (vidocr.engines.liblogs: a variable already set counts as the user's choice and would win over -v)."""
    set_by_vidocr = ("VLLM_LOGGING_CONFIG_PATH", "TRANSFORMERS_VERBOSITY", "PYTHONWARNINGS", "TORCH_CPP_LOG_LEVEL")
    return {k: v for k, v in os.environ.items() if k not in set_by_vidocr}


def check_cues_written(proc: subprocess.CompletedProcess[str], out: Path) -> dict[str, Any]:
    assert proc.returncode == 0, proc.stderr[-4000:]
    summary: dict[str, Any] = json.loads(proc.stdout)  # all of stdout: one JSON document
    assert summary["counts"]["ok"] == 1 and summary["cues"] > 0, summary
    srt = (out / "demo.srt").read_text(encoding="utf-8")
    assert srt.count(" --> ") == summary["cues"]
    assert "Traceback" not in proc.stderr and not RAW_VLLM_LINE.search(proc.stderr), proc.stderr[-4000:]
    return summary


def test_transformers_engine_default_profile(tmp_path_factory: pytest.TempPathFactory, tmp_path: Path) -> None:
    model = confident_model(tmp_path_factory)
    proc = run_cli("--engine", "hunyuan-transformers", "--model", str(model), "-o", str(tmp_path))
    check_cues_written(proc, tmp_path)
    assert "Loading weights" not in proc.stderr  # transformers' progress bar: with -v only


@pytest.mark.vllm
def test_vllm_engine_default_profile_verbose(tmp_path_factory: pytest.TempPathFactory, tmp_path: Path) -> None:
    # The profile's dtype is bfloat16: on this CPU build the engine picks what runs here (bfloat16 with the plugin's
    # GEMM fixes on AMX/AVX512-BF16 CPUs, float32 elsewhere); it failed at start before. -v: vLLM's INFO log is
    # shown, on stderr, so stdout still parses.
    pytest.importorskip("vllm")
    model = confident_model(tmp_path_factory)
    proc = run_cli("--engine", "hunyuan-vllm", "--model", str(model), "-o", str(tmp_path), "-v", env=VLLM_ENV)
    check_cues_written(proc, tmp_path)
    assert re.search(r"^vidocr: vllm: INFO: ", proc.stderr, re.M), proc.stderr[-4000:]
    assert re.search(r"vidocr: loading model hunyuan-vllm \(\d+ s\)", proc.stderr)  # a child may glue its output
    assert re.search(r"vidocr: model hunyuan-vllm loaded in \d+ s", proc.stderr)
    assert re.search(r"hunyuan-vllm: profile hunyuanocr-1.0, .*dtype (bfloat16|float32)", proc.stderr)


@pytest.mark.vllm
def test_vllm_engine_start_failure_is_one_line(tmp_path: Path) -> None:
    pytest.importorskip("vllm")
    model = tmp_path / "model"
    model.mkdir()
    (model / "config.json").write_text("{}")  # a model folder vLLM cannot make sense of
    proc = run_cli("--engine", "hunyuan-vllm", "--model", str(model), "-o", str(tmp_path), env=VLLM_ENV)
    # An engine that cannot start stops the run (every later video would fail the same way): exit 4, one line.
    assert proc.returncode == 4, proc.stderr[-4000:]
    assert not list(tmp_path.glob("*.srt"))
    errors = [line for line in proc.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "vLLM could not start" in errors[0], proc.stderr[-4000:]
    assert "Traceback" not in proc.stderr and not RAW_VLLM_LINE.search(proc.stderr)
    assert "vidocr: vllm: INFO" not in proc.stderr  # WARNING and up without -v


# --- the pieces, without a model ---------------------------------------------------------------------------------

@pytest.mark.vllm
def test_dtype_follows_the_platform() -> None:
    pytest.importorskip("vllm")
    from vidocr.engines.hunyuan_vllm import pick_dtype

    assert pick_dtype("bfloat16", False, on_cpu=False, native_bf16=False, plugin=False) == "bfloat16"  # GPU
    assert pick_dtype("bfloat16", False, on_cpu=True, native_bf16=True, plugin=True) == "bfloat16"
    assert pick_dtype("bfloat16", False, on_cpu=True, native_bf16=False, plugin=True) == "float32"
    assert pick_dtype("bfloat16", False, on_cpu=True, native_bf16=True, plugin=False) == "float32"
    assert pick_dtype("float16", False, on_cpu=True, native_bf16=True, plugin=True) == "float32"
    assert pick_dtype("bfloat16", True, on_cpu=True, native_bf16=False, plugin=False) == "bfloat16"  # asked for


def test_child_tracebacks_are_left_out_unless_verbose() -> None:
    noise = (b"vidocr: vllm: WARNING: kept\nProcess EngineCore:\nTraceback (most recent call last):\n"
             b'  File "x.py", line 1, in f\n    raise ValueError("boom")\nValueError: boom\nafter\n')
    for verbose, expected in ((False, b"vidocr: vllm: WARNING: kept\nafter\n"), (True, noise)):
        read_fd, write_fd = os.pipe()
        out_read, out_write = os.pipe()
        forwarder = liblogs._Forwarder(read_fd, out_write, tracebacks=verbose)
        forwarder.start()
        os.write(write_fd, noise)
        os.close(write_fd)
        forwarder.join(10)
        with open(out_read, "rb") as fh:
            assert fh.read() == expected


def test_failure_cause_is_the_first_exception_logged(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    causes = tmp_path / "errors.log"
    causes.write_text("")
    monkeypatch.setitem(liblogs._state, "causes", causes)
    handler = logging.FileHandler(causes, encoding="utf-8")
    handler.setFormatter(liblogs.LibraryFormatter(cause=True))
    lib = logging.getLogger("vllm.vidocr-test")
    lib.addHandler(handler)
    try:
        lib.error("old failure")
        mark = liblogs.causes_mark()
        lib.error("Worker proc died")
        for exc in (RuntimeError("mat1 must be contiguous\nat last dimension"), RuntimeError("Engine core failed")):
            try:
                raise exc
            except RuntimeError:
                lib.exception("failed to start")
    finally:
        lib.removeHandler(handler)
        handler.close()
    assert liblogs.failure_cause(mark) == "RuntimeError: mat1 must be contiguous at last dimension"
    assert liblogs.failure_cause() == "RuntimeError: mat1 must be contiguous at last dimension"


class SlowEngine:
    name = "slow"
    tasks = frozenset({Task.SUBTITLE})
    preferred_batch = 1

    def __init__(self, options: EngineOptions) -> None:
        time.sleep(float(options.extra.get("sleep", 0)))
        if options.extra.get("fail"):
            raise RuntimeError("no such device:\ncuda:7")

    def recognize(self, images: Any, task: Task) -> list[Any]:
        return []

    def close(self) -> None:
        pass


def test_start_failures_are_engine_errors_and_loading_is_reported(monkeypatch: pytest.MonkeyPatch,
                                                                  tmp_path: Path) -> None:
    monkeypatch.setitem(ENGINES, "slow", EngineSpec(f"{__name__}:SlowEngine", None, frozenset({Task.SUBTITLE})))
    with pytest.raises(EngineError, match=r"^engine 'slow' could not start: RuntimeError: no such device: cuda:7$"):
        create_engine("slow", EngineOptions(extra={"fail": True}))

    monkeypatch.setattr(BackgroundEngine, "LOADING_FIRST", 0.3)
    monkeypatch.setattr(BackgroundEngine, "LOADING_EVERY", 0.2)
    for extra, last in (({"sleep": 0.8}, "loaded"), ({"sleep": 0.8, "fail": True}, "failed"), ({}, None)):
        log = tmp_path / "stderr.txt"
        with open(log, "w") as stream:
            engine = BackgroundEngine("slow", EngineOptions(extra=extra), loading_to=stream)
            try:
                engine.recognize([], Task.SUBTITLE)
            except EngineError as exc:
                assert last == "failed" and "could not start" in str(exc)
            time.sleep(0.3)  # the reporter's last line
            engine.close()
        lines = log.read_text().splitlines()
        if last is None:  # a quick start says nothing
            assert lines == []
        else:
            assert lines[0] == "vidocr: loading model slow (0 s)"
            assert re.fullmatch(rf"vidocr: model slow {last} in \d+ s", lines[-1])
