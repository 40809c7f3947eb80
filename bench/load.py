"""A bounded load test of ``cogitave serve`` on loopback: throughput, latency, errors, memory.

Starts a real server process (``python -m cogitave.surfaces.cli serve``) on 127.0.0.1 and a
free port, over a collection (by default the project's own docs, indexed into a temporary
directory with the default encoder; ``--collection`` to use one you have). Then, for each
concurrency level, that many asyncio workers (one httpx.AsyncClient) send requests back to
back for ``--seconds``: ``POST /search`` with queries from a fixed list, and one request in
ten a ``GET /nodes/{uid}`` of a hit. Reports requests/s, p50/p99 latency, errors (non-2xx or
transport errors) and the server's resident memory (VmRSS) before and after each level.

Loopback only: the address is fixed to 127.0.0.1.

    .venv/bin/python bench/load.py [--seconds 30] [--levels 1,8,32] [--collection DIR]
        [--encoder default|none]

Prints a markdown table; writes nothing outside a temporary directory.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote

import httpx

ROOT = Path(__file__).resolve().parents[1]
HOST = "127.0.0.1"
QUERIES = (
    "how do I index a folder of markdown",
    "reciprocal rank fusion",
    "what happens to a misspeled query",
    "bounded graph query limits",
    "python api search request",
    "mcp tools for agents",
    "retention of content roots",
    "dense vectors and bm25",
    "http rest endpoint graphql",
    "evaluation ndcg recall",
)


@dataclass
class Level:
    concurrency: int
    seconds: float = 0.0
    latencies: list[float] = field(default_factory=list)
    errors: int = 0
    error_kinds: dict[str, int] = field(default_factory=dict)
    rss_before: int = 0
    rss_after: int = 0


def rss_kib(pid: int) -> int:
    """Resident set size of a process in KiB (Linux /proc)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def free_port() -> int:
    with socket.socket() as s:
        s.bind((HOST, 0))
        return int(s.getsockname()[1])


def build_collection(base: Path, encoder: str) -> Path:
    """The project's docs, indexed like ``cogitave demo`` does."""
    from cogitave.collection import Collection
    from cogitave.expand.embed import DEFAULT_ENCODER
    from cogitave.ingest.markdown import read_markdown

    src = ROOT / "mkdocs.yml" if (ROOT / "mkdocs.yml").is_file() else ROOT / "docs"
    batch = read_markdown(src, None)
    path = base / "col"
    col = Collection.create(
        path, batch.schema, encoder=None if encoder == "none" else DEFAULT_ENCODER
    )
    col.add(batch.nodes)
    col.publish()
    print(f"indexed {len(col)} nodes from {src} (encoder {encoder})", file=sys.stderr)
    return path


def start_server(path: Path, port: int, log: Path | None) -> subprocess.Popen[bytes]:
    cmd = [sys.executable, "-m", "cogitave.surfaces.cli", "serve", "--collection", str(path)]
    out = log.open("wb") if log else subprocess.DEVNULL
    proc = subprocess.Popen(
        [*cmd, "--host", HOST, "--port", str(port)],
        stdout=out,
        stderr=out,
        env={k: v for k, v in os.environ.items() if k != "COGITAVE_API_KEY"},
    )
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"server exited with {proc.returncode}")
        try:
            if httpx.get(f"http://{HOST}:{port}/health", timeout=1).status_code == 200:
                return proc
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    proc.kill()
    raise SystemExit("server did not answer /health within 120 s")


async def run_level(base_url: str, level: Level, seconds: float, uids: list[str]) -> None:
    limits = httpx.Limits(max_connections=level.concurrency, max_keepalive_connections=64)
    async with httpx.AsyncClient(base_url=base_url, limits=limits, timeout=30) as client:
        end = time.monotonic() + seconds

        async def worker(i: int) -> None:
            rng = random.Random(i)
            while time.monotonic() < end:
                t = time.perf_counter()
                try:
                    if uids and rng.random() < 0.1:
                        resp = await client.get(f"/nodes/{quote(rng.choice(uids), safe='/')}")
                    else:
                        body = {"query": rng.choice(QUERIES), "limit": 10}
                        resp = await client.post("/search", json=body)
                    ok = resp.status_code < 300
                    kind = str(resp.status_code)
                except httpx.HTTPError as e:
                    ok, kind = False, f"{type(e).__name__} {str(e)[:60]}".strip()
                level.latencies.append(time.perf_counter() - t)
                if not ok:
                    level.errors += 1
                    level.error_kinds[kind] = level.error_kinds.get(kind, 0) + 1

        t0 = time.perf_counter()
        await asyncio.gather(*(worker(i) for i in range(level.concurrency)))
        level.seconds = time.perf_counter() - t0


def pct(xs: list[float], p: float) -> float:
    s = sorted(xs)
    return s[min(len(s) - 1, round(p / 100 * (len(s) - 1)))] if s else 0.0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--seconds", type=float, default=30.0, help="per concurrency level")
    ap.add_argument("--levels", default="1,8,32", help="comma-separated concurrency levels")
    ap.add_argument("--collection", type=Path, help="an existing collection to serve")
    ap.add_argument("--encoder", choices=("default", "none"), default="default")
    ap.add_argument("--server-log", type=Path, help="write the server's output to this file")
    args = ap.parse_args()
    levels = [int(x) for x in args.levels.split(",") if x.strip()]
    tmp = Path(tempfile.mkdtemp(prefix="cogitave-load-"))
    proc = None
    results: list[Level] = []
    try:
        path = args.collection or build_collection(tmp, args.encoder)
        port = free_port()
        proc = start_server(path, port, args.server_log)
        base_url = f"http://{HOST}:{port}"
        warm = httpx.post(f"{base_url}/search", json={"query": QUERIES[0], "limit": 50}, timeout=60)
        uids = [r["uid"] for r in warm.json()["results"]]
        for q in QUERIES:  # warm every query's plan once
            httpx.post(f"{base_url}/search", json={"query": q}, timeout=60)
        print(f"server pid {proc.pid} on {base_url}, RSS {rss_kib(proc.pid) / 1024:.0f} MB")
        for c in levels:
            level = Level(c, rss_before=rss_kib(proc.pid))
            asyncio.run(run_level(base_url, level, args.seconds, uids))
            level.rss_after = rss_kib(proc.pid)
            results.append(level)
            print(
                f"concurrency {c}: {len(level.latencies)} requests, {level.errors} errors",
                flush=True,
            )
        alive = httpx.get(f"{base_url}/health", timeout=5).status_code == 200
    finally:
        if proc is not None:
            proc.send_signal(signal.SIGINT)
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        shutil.rmtree(tmp, ignore_errors=True)
    report(results, args, alive)


def report(results: list[Level], args: argparse.Namespace, alive: bool) -> None:
    print()
    print(
        f"## Load: `cogitave serve` on 127.0.0.1, {args.seconds:.0f} s per level "
        f"(POST /search, 1 in 10 GET /nodes/{{uid}}; encoder {args.encoder})"
    )
    print()
    print(
        "| concurrency | requests | req/s | p50 ms | p99 ms | max ms | errors "
        "| RSS before MB | RSS after MB | growth MB |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for lv in results:
        lat = lv.latencies
        kinds = ", ".join(f"{k}: {n}" for k, n in lv.error_kinds.items())
        print(
            f"| {lv.concurrency} | {len(lat)} | {len(lat) / lv.seconds:.1f} "
            f"| {1000 * statistics.median(lat):.1f} | {1000 * pct(lat, 99):.1f} "
            f"| {1000 * max(lat):.1f} | {lv.errors}{f' ({kinds})' if kinds else ''} "
            f"| {lv.rss_before / 1024:.0f} | {lv.rss_after / 1024:.0f} "
            f"| {(lv.rss_after - lv.rss_before) / 1024:+.1f} |"
        )
    print()
    print(f"/health after the runs: {'ok' if alive else 'NOT ANSWERING'}")


if __name__ == "__main__":
    main()
