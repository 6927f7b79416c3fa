"""Band crops per second through the HunyuanOCR engines at several batch sizes (the GPU check of issue #3).

    python bench/gpu_throughput.py --engine hf --build /tmp/hy10               # random model, 1.0's real sizes
    python bench/gpu_throughput.py --engine vllm --model /tmp/hy10             # same model through vLLM
    python bench/gpu_throughput.py --engine hf --build /tmp/t --size tiny --device cpu --sizes 1,4 --seconds 0

A random-weight model with HunyuanOCR 1.0's dimensions (hidden 1024, 24 text layers, 27-layer ViT of width 1152)
costs what the real one costs: throughput does not depend on the weights when every answer has the same
length, so answers are fixed at --tokens tokens (EOS ignored). Crops are band-shaped (--crop WxH). For each batch
size: one warm-up call, then calls until --seconds have passed (at least one). Prints one JSON line per batch size
(crops/s, seconds per call, peak GPU memory) and a summary with the batch-32 / batch-1 ratio (target >= 10).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from vidocr.engines import EngineOptions, create_engine
from vidocr.types import Task

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))  # support/: test helpers, kept out of the package



def band_crops(n: int, width: int, height: int, seed: int = 0) -> list[np.ndarray]:
    """Band-like BGR crops: a background colour and dark glyph-sized blocks in a centred text row."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        img = np.empty((height, width, 3), np.uint8)
        img[:] = rng.integers(100, 256, 3)
        top, glyph = height // 3, max(4, height // 3)
        for x in range(width // 6, width - width // 6, glyph + glyph // 4):
            if rng.random() < 0.85:
                img[top : top + glyph, x : x + glyph] = rng.integers(0, 60, 3)
        out.append(img)
    return out


def _cuda() -> Any:
    try:
        import torch

        return torch.cuda if torch.cuda.is_available() else None
    except ImportError:
        return None


def measure(engine: Any, crops: list[np.ndarray], batch: int, seconds: float) -> dict[str, Any]:
    cuda = _cuda()
    pool = (crops * (batch // len(crops) + 1))[:batch]
    engine.recognize(pool, Task.SUBTITLE)  # warm-up: kernels, allocator, shapes
    if cuda:
        cuda.synchronize()
        cuda.reset_peak_memory_stats()
    calls, start = 0, time.perf_counter()
    while calls == 0 or time.perf_counter() - start < seconds:
        engine.recognize(pool, Task.SUBTITLE)
        calls += 1
    if cuda:
        cuda.synchronize()
    elapsed = time.perf_counter() - start
    row: dict[str, Any] = {
        "batch": batch, "calls": calls, "seconds_per_call": round(elapsed / calls, 4),
        "crops_per_s": round(batch * calls / elapsed, 2),
    }
    if cuda:
        free, total = cuda.mem_get_info()
        row["torch_peak_gib"] = round(cuda.max_memory_allocated() / 2**30, 2)
        row["gpu_used_gib"] = round((total - free) / 2**30, 2)
    return row


def make_engine(kind: str, model: str, args: argparse.Namespace) -> Any:
    extra: dict[str, Any] = {"model": model, "max_tokens": args.tokens, "ignore_eos": True,
                             "max_pixels": args.crop_w * args.crop_h}
    if kind == "hf":
        extra["device"] = args.device
        if args.dtype:
            extra["dtype"] = args.dtype
        return create_engine("hunyuan-transformers", EngineOptions(batch_size=max(args.sizes), extra=extra))
    extra.update(dtype=args.dtype or "bfloat16", max_num_seqs=max(args.sizes), max_model_len=args.max_model_len,
                 gpu_memory_utilization=args.gpu_memory_utilization,
                 engine_kwargs={"enforce_eager": args.eager})
    return create_engine("hunyuan-vllm", EngineOptions(batch_size=max(args.sizes), extra=extra))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--engine", choices=["hf", "vllm"], default="hf")
    ap.add_argument("--model", help="model directory (default: build one with --build)")
    ap.add_argument("--build", help="build a random-weight model here first (reused when it exists)")
    ap.add_argument("--size", default="hunyuan-1.0", choices=["tiny", "hunyuan-1.0"])
    ap.add_argument("--sizes", default="1,8,32,128", type=lambda s: [int(x) for x in s.split(",")])
    ap.add_argument("--tokens", type=int, default=24, help="answer length, EOS ignored")
    ap.add_argument("--crop", default="1920x160", help="band crop WxH")
    ap.add_argument("--seconds", type=float, default=4.0, help="measure each batch size at least this long")
    ap.add_argument("--device", default=None, help="hf engine device (default: cuda when available)")
    ap.add_argument("--dtype", default=None)
    ap.add_argument("--max-model-len", type=int, default=2048)
    ap.add_argument("--gpu-memory-utilization", type=float, default=0.85)
    ap.add_argument("--eager", action="store_true", help="vllm: no torch.compile / CUDA graphs (faster start)")
    ap.add_argument("--out", help="append the JSON rows to this file")
    args = ap.parse_args(argv)
    args.crop_w, args.crop_h = (int(v) for v in args.crop.lower().split("x"))

    model = args.model
    if not model:
        if not args.build:
            ap.error("give --model DIR or --build DIR")
        model = args.build
        if not (Path(model) / "config.json").is_file():
            from support.hunyuan_random import build_model

            t0 = time.perf_counter()
            cuda = _cuda() is not None
            build_model(model, args.size, dtype="bfloat16" if cuda else "float32", device="cuda" if cuda else "cpu")
            print(json.dumps({"built": model, "size": args.size, "seconds": round(time.perf_counter() - t0, 1)}))

    t0 = time.perf_counter()
    engine = make_engine(args.engine, model, args)
    load_s = round(time.perf_counter() - t0, 1)
    crops = band_crops(16, args.crop_w, args.crop_h)
    rows = []
    try:
        for batch in args.sizes:
            row = {"engine": engine.name, "load_s": load_s, "tokens": args.tokens, "crop": args.crop,
                   **measure(engine, crops, batch, args.seconds)}
            rows.append(row)
            print(json.dumps(row), flush=True)
    finally:
        engine.close()
    rate = {r["batch"]: r["crops_per_s"] for r in rows}
    summary: dict[str, Any] = {"engine": engine.name, "summary": True, "crops_per_s": rate}
    if 1 in rate and 32 in rate:
        summary["ratio_32_vs_1"] = round(rate[32] / rate[1], 2)
        summary["target_10x"] = summary["ratio_32_vs_1"] >= 10
    print(json.dumps(summary), flush=True)
    if args.out:
        with open(args.out, "a", encoding="utf-8") as f:
            for r in [*rows, summary]:
                f.write(json.dumps(r) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
