"""`vidocr serve` search benchmark: the search API's latency end to end (HTTP, JSON) at 1,000,000 cues with 16
concurrent clients, and its throughput.

    python bench/serve_search.py                    # 1,000,000 cues, 16 clients, 30 s (a few minutes on 2 cores)
    python bench/serve_search.py --cues 100000      # quicker

The corpus and query mix are bench/search.py's (seeded; half Chinese, half English, Zipf-distributed words, 500
cues per video), stored through the index's write path under a temporary library root. The server is a separate
process (`python -m vidocr serve`, uvicorn, as deployed), so the clients' threads do not share its interpreter.
Each client sends one query at a time (a random one from the mix) and waits for the answer; latency is measured
from sending the request to the parsed JSON. The clients are threads of ``--procs`` processes. Target (issue 16):
p95 <= 100 ms.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from search import QUERIES, corpus  # noqa: E402  (bench/search.py)

from vidocr.files import Stamp  # noqa: E402
from vidocr.index import open_index  # noqa: E402
from vidocr.index.store import TrackData, save_video  # noqa: E402


def build(db: Path, root: Path, n_cues: int) -> dict[str, float]:
    conn = open_index(db)
    started = time.perf_counter()
    count = 0
    for i, (lang, texts) in enumerate(corpus(n_cues)):
        cues = [(j * 2000, j * 2000 + 1500, text) for j, text in enumerate(texts)]
        save_video(conn, str(root / f"v{i}.mp4"), Stamp(i, i), None, [TrackData("ocr", "original", lang, cues)],
                   engine="x")
        count += len(cues)
    conn.close()
    return {"cues": count, "build_s": round(time.perf_counter() - started, 1)}


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _client_threads(url: str, n: int, seconds: float, seed: int) -> tuple[list[float], int]:
    """``n`` clients on threads of this process, each one query at a time for ``seconds``."""
    import httpx

    queries = [q for qs in QUERIES.values() for q in qs]
    latencies: list[float] = []
    errors = [0]
    lock = threading.Lock()
    stop = time.monotonic() + seconds

    def run(seed: int) -> None:
        rng = random.Random(seed)
        mine: list[float] = []
        with httpx.Client(base_url=url, timeout=30) as http:
            while time.monotonic() < stop:
                q = rng.choice(queries)
                t0 = time.perf_counter()
                r = http.get("/api/v1/search", params={"q": q, "limit": 20})
                r.json()
                mine.append((time.perf_counter() - t0) * 1000)
                if r.status_code != 200:
                    with lock:
                        errors[0] += 1
        with lock:
            latencies.extend(mine)

    threads = [threading.Thread(target=run, args=(seed * 1000 + i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return latencies, errors[0]


def clients(url: str, n: int, seconds: float, procs: int = 4) -> tuple[list[float], int]:
    """``n`` concurrent clients spread over ``procs`` processes (one Python process cannot send requests as fast
    as the server answers them: its threads share one interpreter)."""
    from concurrent.futures import ProcessPoolExecutor

    procs = max(1, min(procs, n))
    shares = [n // procs + (1 if i < n % procs else 0) for i in range(procs)]
    with ProcessPoolExecutor(procs) as pool:
        done = [pool.submit(_client_threads, url, k, seconds, i) for i, k in enumerate(shares)]
        results = [f.result() for f in done]
    return sorted(x for lat, _ in results for x in lat), sum(e for _, e in results)


def _pct(values: list[float], pct: int) -> float:
    return round(values[min(len(values) - 1, int(len(values) * pct / 100))], 1) if values else float("nan")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cues", type=int, default=1_000_000)
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--procs", type=int, default=4, help="client processes the clients are spread over")
    parser.add_argument("--processes", type=int, default=1, help="server processes (vidocr serve --processes)")
    parser.add_argument("--keep", help="folder to keep the index in (default: a temporary one)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(args.keep or tmp)
        root = base / "library"
        root.mkdir(parents=True, exist_ok=True)
        db = base / "index.sqlite"
        built = build(db, root, args.cues) if not db.exists() else {"cues": args.cues, "build_s": 0.0}
        port = _port()
        server = subprocess.Popen(
            [sys.executable, "-m", "vidocr", "serve", str(root), "--db", str(db), "--port", str(port), "--no-worker",
             "--processes", str(args.processes),
             "--rate", "100000", "--burst", "100000", "-q"],
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
        try:
            url = f"http://127.0.0.1:{port}"
            import httpx

            deadline = time.monotonic() + 60
            while True:
                try:
                    if httpx.get(url + "/healthz", timeout=2).status_code == 200:
                        break
                except httpx.HTTPError:
                    pass
                if time.monotonic() > deadline or server.poll() is not None:
                    print("the server did not start", file=sys.stderr)
                    return 1
                time.sleep(0.2)
            clients(url, args.clients, 3.0, args.procs)  # warm the page cache and the server's connections
            latencies, errors = clients(url, args.clients, args.seconds, args.procs)
        finally:
            server.terminate()
            server.wait(30)
    result = {**built, "clients": args.clients, "client_procs": args.procs,
              "server_processes": args.processes, "requests": len(latencies),
              "errors": errors, "requests_per_s": round(len(latencies) / args.seconds, 1),
              "p50_ms": _pct(latencies, 50), "p95_ms": _pct(latencies, 95), "p99_ms": _pct(latencies, 99),
              "max_ms": _pct(latencies, 100)}
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
