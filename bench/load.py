"""A bounded load test of ``cogitave serve`` on loopback: throughput, latency, errors, memory.

Starts a real server process (``python -m cogitave.surfaces.cli serve``) on 127.0.0.1 and a
free port, over a collection (by default the project's own docs, indexed into a temporary
directory with the default encoder; ``--collection`` to use one you have). Then, for each
concurrency level, that many asyncio workers (one httpx.AsyncClient) send requests back to
back for ``--seconds``: ``POST /search`` with queries from a fixed list, and one request in
ten a ``GET /nodes/{uid}`` of a hit. Reports requests/s, p50/p99 latency, errors (non-2xx or
transport errors) and the server's resident memory (VmRSS) before and after each level.

With ``--compare``, instead: unseen queries only (every request a query no server saw
before, so each is encoded), keep-alive clients as MCP clients and agents use, against three
servers over the same collection started side by side: queries batched across requests
(the default), ``COGITAVE_QUERY_BATCHING=0``, and the default served by two processes
(``--processes 2``), and the default on the pure-Python HTTP stack (asyncio's loop and h11,
as when uvloop and httptools are not installed); with ``--baseline-src DIR`` one more runs the
code of another checkout (``DIR/src``, e.g. a worktree of an earlier commit, on the pure-Python
stack too: the dependencies it declared). Each level runs
every server in turn, the order rotating per level; the table gives req/s and latency per
server and the ratio to the unbatched one, and a ranking check (the same 30 unseen queries
through every server: ids and scores equal).

With ``--mix``, instead: light searches alone at ``--light`` concurrency, then the same light
searches while ``--heavy`` workers (default 8) send heavy requests back to back (nested GraphQL
near the cost bound, a nested document past it, ``query_graph`` patterns that run into the
250 ms budget or the result-bytes bound), and a probe asks ``/health`` every 50 ms. Reports
p50/p99 of each class in both phases (light p99 with heavy load over light p99 alone, in the
same run), the status classes (2xx, 4xx = a bound refused or stopped the request, 5xx or
transport errors), and the server's RSS before and after the mixed phase.

Loopback only: the address is fixed to 127.0.0.1.

    .venv/bin/python bench/load.py [--seconds 30] [--levels 1,8,32] [--collection DIR]
        [--encoder default|none] [--mix [--heavy 8] [--light 2]]
        [--compare [--baseline-src DIR]] [--write]

Prints a markdown table (``--write`` puts it in its section of bench/RESULTS.md with the machine);
writes nothing else outside a temporary directory.
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
from collections.abc import Awaitable, Callable, Iterator, Sequence
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


HEAVY_GQL = (
    '{ search(query: "index a folder of markdown", limit: 50) { results { node { '
    "related(depth: 4, limit: 50) { items { uid title } } } } } }"
)
NESTED_GQL = """{
  related(uid: "index", depth: 4, limit: 1000) { items { node {
    related(depth: 4, limit: 1000) { items { uid } } } } }
  search(query: "index", limit: 1000) { results { node {
    related(depth: 4, limit: 1000) { items { node { related(depth: 4, limit: 1000) {
      items { uid } } } } } } } }
}"""
HEAVY: tuple[tuple[str, str, dict[str, object]], ...] = (
    ("graphql nested (allowed)", "/graphql", {"query": HEAVY_GQL}),
    ("graphql nested (refused)", "/graphql", {"query": NESTED_GQL}),
    (
        "query_graph cross product",
        "/graph/query",
        {"query": "MATCH (a),(b),(c),(d) RETURN a.uid ORDER BY d.title LIMIT 1"},
    ),
    ("query_graph 4 hops", "/graph/query", {"query": "MATCH (a)-[*1..4]-(b) RETURN count(*)"}),
    (
        "query_graph big output",
        "/graph/query",
        {
            "query": "MATCH (a),(b) RETURN [" + ", ".join(["$p"] * 300) + "] AS x LIMIT 1000",
            "params": {"p": "x" * 4000},
        },
    ),
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
    from cogitave.ingest.docs import read_docs as read_markdown

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


def start_server(
    path: Path,
    port: int,
    log: Path | None,
    env: dict[str, str] | None = None,
    args: Sequence[str] = (),
) -> subprocess.Popen[bytes]:
    cmd = [sys.executable, "-m", "cogitave.surfaces.cli", "serve", "--collection", str(path)]
    out = log.open("wb") if log else subprocess.DEVNULL
    proc = subprocess.Popen(
        [*cmd, "--host", HOST, "--port", str(port), *args],
        stdout=out,
        stderr=out,
        env={**{k: v for k, v in os.environ.items() if k != "COGITAVE_API_KEY"}, **(env or {})},
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


Request = Callable[[httpx.AsyncClient, int], Awaitable[httpx.Response]]
"""A worker's next request: (client, worker index) -> the response."""


def stop_server(proc: subprocess.Popen[bytes]) -> None:
    """Stop a server as Ctrl-C does; kill it if it has not exited in 20 s."""
    proc.send_signal(signal.SIGINT)
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


async def drive(
    base_url: str, level: Level, seconds: float, request: Callable[[int], Request]
) -> None:
    """``level.concurrency`` keep-alive workers sending ``request(i)`` back to back for
    ``seconds``; latencies and errors into ``level``."""
    limits = httpx.Limits(max_connections=level.concurrency, max_keepalive_connections=64)
    async with httpx.AsyncClient(base_url=base_url, limits=limits, timeout=60) as client:
        end = time.monotonic() + seconds

        async def worker(i: int) -> None:
            send = request(i)
            while time.monotonic() < end:
                t = time.perf_counter()
                try:
                    resp = await send(client, i)
                    ok, kind = resp.status_code < 300, str(resp.status_code)
                except httpx.HTTPError as e:
                    ok, kind = False, f"{type(e).__name__} {str(e)[:60]}".strip()
                level.latencies.append(time.perf_counter() - t)
                if not ok:
                    level.errors += 1
                    level.error_kinds[kind] = level.error_kinds.get(kind, 0) + 1

        t0 = time.perf_counter()
        await asyncio.gather(*(worker(i) for i in range(level.concurrency)))
        level.seconds = time.perf_counter() - t0


async def run_level(base_url: str, level: Level, seconds: float, uids: list[str]) -> None:
    """The fixed queries (and one request in ten a node of a hit)."""

    def request(i: int) -> Request:
        rng = random.Random(i)

        async def send(client: httpx.AsyncClient, _i: int) -> httpx.Response:
            if uids and rng.random() < 0.1:
                return await client.get(f"/nodes/{quote(rng.choice(uids), safe='/')}")
            return await client.post("/search", json={"query": rng.choice(QUERIES), "limit": 10})

        return send

    await drive(base_url, level, seconds, request)


# -- unseen queries, batched against unbatched -------------------------------------------------
_WORDS_TEXT = (
    "index folder markdown search query fusion rank reciprocal dense vector bm25 graph node edg"
    "e collection root publish segment retention encoder embedding batch token planner route di"
    "mension facet filter path prefix library version pin lockfile project pack crawl site site"
    "map robots render browser policy scope redirect size deadline server http rest mcp graphql"
    " tool agent answer budget snippet page section code sample api reference xref resolve rela"
    "ted learning depth limit cost bound error settings demote exclude watch sync delete verify"
    " shard ray cluster latency cache warm follow head lock writer reader snapshot manifest has"
    "h object store term stem spell rewrite split merge coherence gate boost residual rerank di"
    "agnostics explain evaluation ndcg recall judged question how what why when does can add re"
    "move configure install upgrade"
)
WORDS = tuple(_WORDS_TEXT.split())


def unseen_queries(seed: int, n: int | None = None) -> Iterator[str]:
    """Distinct queries of 3 to 6 words, made as they are asked for (``n`` of them, or
    without end; distinct for a seed, and seeds apart rarely meet)."""
    rng = random.Random(seed)
    seen: set[str] = set()
    while n is None or len(seen) < n:
        q = " ".join(rng.sample(WORDS, rng.randint(3, 6)))
        if q not in seen:
            seen.add(q)
            yield q


async def run_unseen(base_url: str, level: Level, seconds: float, seed: int) -> None:
    """``level.concurrency`` keep-alive workers, each sending its own unseen queries."""

    def request(i: int) -> Request:
        queries = unseen_queries(seed * 1000 + i)

        async def send(client: httpx.AsyncClient, _i: int) -> httpx.Response:
            return await client.post("/search", json={"query": next(queries), "limit": 10})

        return send

    await drive(base_url, level, seconds, request)


def pure_python_http(folder: Path) -> Path:
    """A folder that, first on ``PYTHONPATH``, makes ``uvloop`` and ``httptools`` fail to
    import: uvicorn then runs asyncio's loop and h11, as without those packages."""
    folder.mkdir(parents=True, exist_ok=True)
    for name in ("uvloop", "httptools"):
        (folder / f"{name}.py").write_text(f"raise ImportError('{name}: left out by the bench')\n")
    return folder


def compare(args: argparse.Namespace, path: Path, levels: list[int]) -> str:
    """The --compare run (see the module doc): the table as Markdown."""
    servers: dict[str, dict[str, str]] = {
        "batched (default)": {},
        "unbatched": {"COGITAVE_QUERY_BATCHING": "0"},
        "2 processes": {},
    }
    flags: dict[str, list[str]] = {"2 processes": ["--processes", "2"]}  # the rest: none
    shim = pure_python_http(Path(tempfile.mkdtemp(prefix="cogitave-load-shim-")))
    servers["h11 + asyncio"] = {"PYTHONPATH": str(shim)}
    if args.baseline_src:
        servers[f"baseline ({args.baseline_src.name})"] = {
            "PYTHONPATH": f"{args.baseline_src.resolve() / 'src'}{os.pathsep}{shim}",
            "COGITAVE_QUERY_BATCHING": "0",
        }
    paths = {name: path for name in servers}
    if args.baseline_src:  # the other checkout reads only collections it made itself
        name = next(n for n in servers if n.startswith("baseline"))
        paths[name] = path.with_name(path.name + "-baseline")
        src = ROOT / "mkdocs.yml" if (ROOT / "mkdocs.yml").is_file() else ROOT / "docs"
        cmd = [sys.executable, "-m", "cogitave.surfaces.cli", "index", "--collection",
               str(paths[name]), str(src), "-q"]  # fmt: skip
        subprocess.run(cmd, check=True, env={**os.environ, **servers[name]}, capture_output=True)
    procs: dict[str, tuple[subprocess.Popen[bytes], str]] = {}
    rows: list[str] = []
    same = True
    try:
        for name, env in servers.items():
            port = free_port()
            proc = start_server(paths[name], port, args.server_log, env, flags.get(name, ()))
            procs[name] = (proc, f"http://{HOST}:{port}")
        for _, url in procs.values():
            httpx.post(f"{url}/search", json={"query": "warm up the encoder"}, timeout=60)
        check = list(unseen_queries(999_999, 30))
        answers = {}
        for name, (_, url) in procs.items():
            got = []
            for q in check:
                res = httpx.post(f"{url}/search", json={"query": q, "limit": 10}, timeout=60)
                got.append([(r["uid"], round(r["score"], 9)) for r in res.json()["results"]])
            answers[name] = got
        # the servers on one collection answer alike (a baseline's has its own vectors)
        ours = ("batched (default)", "unbatched", "2 processes", "h11 + asyncio")
        same = all(answers[n] == answers[ours[0]] for n in ours)
        names = list(procs)
        for li, c in enumerate(levels):
            order = names[li % len(names) :] + names[: li % len(names)]
            got_level: dict[str, Level] = {}
            for name in order:
                level = Level(c)
                asyncio.run(run_unseen(procs[name][1], level, args.seconds, seed=li))
                got_level[name] = level
                print(f"concurrency {c}, {name}: {len(level.latencies) / level.seconds:.1f} req/s",
                      flush=True)  # fmt: skip
            base = got_level["unbatched"]
            base_rate = max(len(base.latencies), 1) / base.seconds
            for name in names:
                lv = got_level[name]
                lat, rate = lv.latencies, len(lv.latencies) / lv.seconds
                rows.append(
                    f"| {c} | {name} | {len(lat)} | {rate:.1f} | {rate / base_rate:.2f}x "
                    f"| {1000 * statistics.median(lat or [0.0]):.1f} | {1000 * pct(lat, 99):.1f} "
                    f"| {lv.errors} |"
                )
    finally:
        for proc, _ in procs.values():
            stop_server(proc)
        shutil.rmtree(shim, ignore_errors=True)
    return "\n".join(
        [
            "",
            f"## Load, unseen queries ({time.strftime('%Y-%m-%d')}): "
            f"`bench/load.py --compare --seconds {args.seconds:g} --levels {args.levels}`",
            "",
            "Every request an unseen query (3-6 words from a fixed list, never repeated), "
            "keep-alive clients, POST /search limit 10; the servers run side by side over one "
            "collection, each level runs them in turn (order rotating). Ratio: req/s over the "
            "unbatched server's in the same level.",
            "",
            "| concurrency | server | requests | req/s | vs unbatched | p50 ms | p99 ms | errors |",
            "|---:|---|---:|---:|---:|---:|---:|---:|",
            *rows,
            "",
            f"Ranking check, 30 unseen queries, batched, unbatched, 2 processes and h11: "
            f"{'the same ids and scores' if same else 'RANKINGS DIFFER'}.",
        ]
    )


@dataclass
class Klass:
    """Latencies and status classes of one kind of request in one phase."""

    name: str
    latencies: list[float] = field(default_factory=list)
    status: dict[str, int] = field(default_factory=dict)

    def add(self, seconds: float, kind: str) -> None:
        self.latencies.append(seconds)
        self.status[kind] = self.status.get(kind, 0) + 1


def _kind(status: int | None) -> str:
    if status is None:
        return "transport"
    return f"{status // 100}xx"


async def run_mixed(
    base_url: str, seconds: float, light: int, heavy: int
) -> tuple[Klass, Klass, Klass, float]:
    """``light`` search workers, ``heavy`` heavy workers (none for the baseline) and a
    /health probe for ``seconds``; returns (light, heavy, health, elapsed)."""
    lk, hk, probe = Klass("light search"), Klass("heavy"), Klass("/health")
    limits = httpx.Limits(max_connections=light + heavy + 1, max_keepalive_connections=64)
    async with httpx.AsyncClient(base_url=base_url, limits=limits, timeout=60) as client:
        end = time.monotonic() + seconds

        async def one(k: Klass, method: str, path: str, body: object = None) -> None:
            t = time.perf_counter()
            try:
                if method == "GET":
                    resp = await client.get(path)
                else:
                    resp = await client.post(path, json=body)
                kind = _kind(resp.status_code)
                if path == "/graphql" and resp.status_code == 200 and resp.json().get("errors"):
                    kind = "4xx"  # a GraphQL refusal is a 200 with coded errors
            except httpx.HTTPError:
                kind = _kind(None)
            k.add(time.perf_counter() - t, kind)

        async def light_worker(i: int) -> None:
            rng = random.Random(i)
            while time.monotonic() < end:
                await one(lk, "POST", "/search", {"query": rng.choice(QUERIES), "limit": 10})

        async def heavy_worker(i: int) -> None:
            n = i
            while time.monotonic() < end:
                _, path, body = HEAVY[n % len(HEAVY)]
                n += 1
                await one(hk, "POST", path, body)

        async def prober() -> None:
            while time.monotonic() < end:
                await one(probe, "GET", "/health")
                await asyncio.sleep(0.05)

        t0 = time.perf_counter()
        await asyncio.gather(
            *(light_worker(i) for i in range(light)),
            *(heavy_worker(i) for i in range(heavy)),
            prober(),
        )
        return lk, hk, probe, time.perf_counter() - t0


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
    ap.add_argument("--mix", action="store_true", help="light searches alone, then with heavy")
    ap.add_argument("--heavy", type=int, default=8, help="heavy workers in --mix")
    ap.add_argument("--light", type=int, default=2, help="light search workers in --mix")
    ap.add_argument("--write", action="store_true", help="replace its section of bench/RESULTS.md")
    ap.add_argument("--compare", action="store_true", help="unseen queries, batched vs not")
    ap.add_argument("--baseline-src", type=Path, help="with --compare: a checkout to run too")
    args = ap.parse_args()
    levels = [int(x) for x in args.levels.split(",") if x.strip()]
    tmp = Path(tempfile.mkdtemp(prefix="cogitave-load-"))
    proc = None
    results: list[Level] = []
    if args.compare:
        try:
            text = compare(args, args.collection or build_collection(tmp, args.encoder), levels)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        print(text)
        if args.write:
            from _machine import machine_line, write_section

            head, rest = text.strip().split("\n", 1)
            write_section("load-unseen", f"{head}\n\n{machine_line()}\n{rest}")
        return
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
        if args.mix:
            alone = asyncio.run(run_mixed(base_url, args.seconds, args.light, 0))
            before = rss_kib(proc.pid)
            mixed = asyncio.run(run_mixed(base_url, args.seconds, args.light, args.heavy))
            after = rss_kib(proc.pid)
            alive = httpx.get(f"{base_url}/health", timeout=5).status_code == 200
            levels = []
        for c in levels:
            level = Level(c, rss_before=rss_kib(proc.pid))
            asyncio.run(run_level(base_url, level, args.seconds, uids))
            level.rss_after = rss_kib(proc.pid)
            results.append(level)
            print(
                f"concurrency {c}: {len(level.latencies)} requests, {level.errors} errors",
                flush=True,
            )
        if not args.mix:
            alive = httpx.get(f"{base_url}/health", timeout=5).status_code == 200
    finally:
        if proc is not None:
            stop_server(proc)
        shutil.rmtree(tmp, ignore_errors=True)
    if args.mix:
        text = report_mixed(alone, mixed, before, after, args, alive)
    else:
        report(results, args, alive)
        return
    print(text)
    if args.write:
        from _machine import machine_line, write_section

        head, rest = text.strip().split("\n", 1)
        write_section("load", f"{head}\n\n{machine_line()}\n{rest}")


def report_mixed(
    alone: tuple[Klass, Klass, Klass, float],
    mixed: tuple[Klass, Klass, Klass, float],
    rss_before: int,
    rss_after: int,
    args: argparse.Namespace,
    alive: bool,
) -> str:
    """The --mix table: each class in each phase, and the light p99 ratio."""
    rows = [
        "| phase | class | requests | req/s | p50 ms | p99 ms | max ms | status |",
        "|---|---|---:|---:|---:|---:|---:|---|",
    ]
    for phase, (lk, hk, probe, secs) in (("light alone", alone), ("light + heavy", mixed)):
        for k in (lk, hk, probe):
            if not k.latencies:
                continue
            lat = k.latencies
            status = ", ".join(f"{s}: {n}" for s, n in sorted(k.status.items()))
            rows.append(
                f"| {phase} | {k.name} | {len(lat)} | {len(lat) / secs:.1f} "
                f"| {1000 * statistics.median(lat):.1f} | {1000 * pct(lat, 99):.1f} "
                f"| {1000 * max(lat):.1f} | {status} |"
            )
    ratio = pct(mixed[0].latencies, 99) / max(pct(alone[0].latencies, 99), 1e-9)
    heavy_names = "; ".join(name for name, _, _ in HEAVY)
    return "\n".join(
        [
            "",
            f"## Load with heavy requests ({time.strftime('%Y-%m-%d')}): "
            f"`bench/load.py --mix --seconds {args.seconds:g} "
            f"--heavy {args.heavy} --light {args.light}`",
            "",
            f"{args.light} light search workers alone, then beside {args.heavy} heavy workers "
            f"cycling through: {heavy_names}. A /health probe every 50 ms in both phases. "
            "4xx = a cost bound refused or stopped the request (GraphQL: coded errors).",
            "",
            *rows,
            "",
            f"Light search p99 with heavy load / alone: {ratio:.2f}. Server RSS before / after "
            f"the mixed phase: {rss_before / 1024:.0f} / {rss_after / 1024:.0f} MB "
            f"({(rss_after - rss_before) / 1024:+.0f} MB). /health after the runs: "
            f"{'ok' if alive else 'NOT ANSWERING'}.",
        ]
    )


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
