"""`vidocr serve` search benchmark: the search API's latency end to end (HTTP, JSON) at 1,000,000 cues with 16
concurrent clients, and its throughput.

    python bench/serve_search.py                    # 1,000,000 cues, 16 clients, 30 s (a few minutes on 2 cores)
    python bench/serve_search.py --cues 100000      # quicker
    python bench/serve_search.py --ab ../before     # the same against the checkout in ../before, side by side

The clients send the query mix with `http.client` on keep-alive connections (``--client httpx`` for httpx; it
costs the shared machine more CPU per request). Besides latency, each run reports the server's CPU time per request
(user + system of the server's processes, from /proc): the figure that bounds throughput on N cores at N / CPU, and
the one least bent by other load on a shared machine. ``--ab DIR`` runs the server from another checkout's
``vidocr`` (PYTHONPATH=DIR) and from this one on the same index, alternating rounds (A B A B ...), and reports both.

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


def _client_threads(url: str, n: int, seconds: float, seed: int, kind: str = "http") -> tuple[list[float], int]:
    """``n`` clients on threads of this process, each one query at a time for ``seconds``."""
    import http.client
    import urllib.parse

    queries = [q for qs in QUERIES.values() for q in qs]
    latencies: list[float] = []
    errors = [0]
    lock = threading.Lock()
    stop = time.monotonic() + seconds
    host, port = urllib.parse.urlsplit(url).hostname or "127.0.0.1", urllib.parse.urlsplit(url).port or 80

    def one_httpx(rng: random.Random, mine: list[float]) -> None:
        import httpx

        with httpx.Client(base_url=url, timeout=30) as client:
            while time.monotonic() < stop:
                q = rng.choice(queries)
                t0 = time.perf_counter()
                r = client.get("/api/v1/search", params={"q": q, "limit": 20})
                r.json()
                mine.append((time.perf_counter() - t0) * 1000)
                if r.status_code != 200:
                    with lock:
                        errors[0] += 1

    def one_http(rng: random.Random, mine: list[float]) -> None:
        conn = http.client.HTTPConnection(host, port, timeout=30)
        try:
            while time.monotonic() < stop:
                q = rng.choice(queries)
                t0 = time.perf_counter()
                conn.request("GET", "/api/v1/search?" + urllib.parse.urlencode({"q": q, "limit": 20}))
                r = conn.getresponse()
                json.loads(r.read())
                mine.append((time.perf_counter() - t0) * 1000)
                if r.status != 200:
                    with lock:
                        errors[0] += 1
        finally:
            conn.close()

    def run(seed: int) -> None:
        rng = random.Random(seed)
        mine: list[float] = []
        (one_httpx if kind == "httpx" else one_http)(rng, mine)
        with lock:
            latencies.extend(mine)

    threads = [threading.Thread(target=run, args=(seed * 1000 + i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return latencies, errors[0]


def clients(url: str, n: int, seconds: float, procs: int = 4, kind: str = "http") -> tuple[list[float], int]:
    """``n`` concurrent clients spread over ``procs`` processes (one Python process cannot send requests as fast
    as the server answers them: its threads share one interpreter)."""
    from concurrent.futures import ProcessPoolExecutor

    procs = max(1, min(procs, n))
    shares = [n // procs + (1 if i < n % procs else 0) for i in range(procs)]
    with ProcessPoolExecutor(procs) as pool:
        done = [pool.submit(_client_threads, url, k, seconds, i, kind) for i, k in enumerate(shares)]
        results = [f.result() for f in done]
    return sorted(x for lat, _ in results for x in lat), sum(e for _, e in results)


def cpu_seconds(pid: int) -> float | None:
    """User + system CPU seconds of process ``pid`` and its descendants (Linux /proc), or None."""
    ticks = os.sysconf("SC_CLK_TCK")
    parents: dict[int, int] = {}
    used: dict[int, float] = {}
    try:
        entries = [e for e in os.listdir("/proc") if e.isdigit()]
    except OSError:
        return None
    for entry in entries:
        try:
            with open(f"/proc/{entry}/stat", "rb") as fh:
                fields = fh.read().rsplit(b")", 1)[1].split()
        except OSError:
            continue
        parents[int(entry)] = int(fields[1])
        used[int(entry)] = (int(fields[11]) + int(fields[12])) / ticks
    if pid not in used:
        return None
    family, todo = {pid}, [pid]
    while todo:
        parent = todo.pop()
        for child, ppid in parents.items():
            if ppid == parent and child not in family:
                family.add(child)
                todo.append(child)
    return sum(used[p] for p in family)


def start_server(root: Path, db: Path, processes: int, pythonpath: str | None,
                 extra: list[str] | None = None) -> tuple[subprocess.Popen[bytes], str]:
    port = _port()
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    if pythonpath:
        env["PYTHONPATH"] = os.pathsep.join(p for p in (pythonpath, env.get("PYTHONPATH")) if p)
    server = subprocess.Popen(
        [sys.executable, "-m", "vidocr", "serve", str(root), "--db", str(db), "--port", str(port), "--no-worker",
         "--processes", str(processes), "--rate", "100000", "--burst", "100000", "-q", *(extra or [])],
        env=env,
    )
    url = f"http://127.0.0.1:{port}"
    import httpx

    deadline = time.monotonic() + 60
    while True:
        try:
            if httpx.get(url + "/healthz", timeout=2).status_code == 200:
                return server, url
        except httpx.HTTPError:
            pass
        if time.monotonic() > deadline or server.poll() is not None:
            server.terminate()
            raise SystemExit("the server did not start")
        time.sleep(0.2)


def measure(server: subprocess.Popen[bytes], url: str, args: argparse.Namespace) -> dict[str, float]:
    cpu0 = cpu_seconds(server.pid)
    latencies, errors = clients(url, args.clients, args.seconds, args.procs, args.client)
    cpu1 = cpu_seconds(server.pid)
    out = {"requests": len(latencies), "errors": errors, "requests_per_s": round(len(latencies) / args.seconds, 1),
           "p50_ms": _pct(latencies, 50), "p95_ms": _pct(latencies, 95), "p99_ms": _pct(latencies, 99),
           "max_ms": _pct(latencies, 100)}
    if cpu0 is not None and cpu1 is not None and latencies:
        out["server_cpu_ms_per_request"] = round((cpu1 - cpu0) * 1000 / len(latencies), 2)
    return out


def _pct(values: list[float], pct: int) -> float:
    return round(values[min(len(values) - 1, int(len(values) * pct / 100))], 1) if values else float("nan")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cues", type=int, default=1_000_000)
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--procs", type=int, default=4, help="client processes the clients are spread over")
    parser.add_argument("--client", choices=["http", "httpx"], default="http", help="the clients' HTTP library")
    parser.add_argument("--processes", type=int, default=1, help="server processes (vidocr serve --processes)")
    parser.add_argument("--keep", help="folder to keep the index in (default: a temporary one)")
    parser.add_argument("--ab", metavar="DIR", help="also run the server from the checkout in DIR (its vidocr "
                        "package), alternating rounds with this one: A = DIR, B = this checkout")
    parser.add_argument("--rounds", type=int, default=2, help="with --ab: rounds of each (A B A B ...)")
    parser.add_argument("--server-arg", action="append", default=[], metavar="ARG",
                        help="an argument for this checkout's server (B), e.g. --server-arg=--rank-window=2000")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(args.keep or tmp)
        root = base / "library"
        root.mkdir(parents=True, exist_ok=True)
        db = base / "index.sqlite"
        built = build(db, root, args.cues) if not db.exists() else {"cues": args.cues, "build_s": 0.0}
        sides = [("A", os.path.abspath(args.ab)), ("B", None)] if args.ab else [("B", None)]
        runs: dict[str, list[dict[str, float]]] = {name: [] for name, _ in sides}
        for _ in range(args.rounds if args.ab else 1):
            for name, pythonpath in sides:
                extra = args.server_arg if name == "B" else None
                server, url = start_server(root, db, args.processes, pythonpath, extra)
                try:
                    clients(url, args.clients, 3.0, args.procs, args.client)  # warm the page cache and connections
                    runs[name].append(measure(server, url, args))
                finally:
                    server.terminate()
                    server.wait(30)
    common = {**built, "clients": args.clients, "client_procs": args.procs, "client": args.client,
              "server_processes": args.processes, "seconds_per_round": args.seconds,
              "server_args_B": args.server_arg}
    if not args.ab:
        print(json.dumps({**common, **runs["B"][0]}, indent=2))
    else:
        print(json.dumps({**common, "A": args.ab, "A_rounds": runs["A"], "B_rounds": runs["B"]}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
