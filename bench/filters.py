"""Filtered searches at scale: every leg filters, so a filtered search fills its page whenever
enough nodes match; and what a filter costs against the same search unfiltered.

    .venv/bin/python bench/filters.py [--nodes 100000] [--queries 200] [--limit 10] [--write]

The collection is ``bench/latency.py``'s seeded synthetic corpus (title, body, tags; exact
``year`` and ``category``), built once and cached (``--cache``). By default its documents are
embedded by the hashed stand-in encoder (``--proxy-encoder`` of ``latency.py``: minutes, not
hours, for 100k nodes; its vectors are not MiniLM's, but the graph, the rows and the filter's
selectivity are what is measured) while queries pay the real encoder's time; ``--real`` reads
the build made with the default encoder (``latency.py --nodes N`` without the proxy).

Filters of every selectivity: a common and a rare category, one year, five years, a category
and a year together, and uid prefixes (the path filter: 100, 1,000 and 10,000 of 100,000
nodes).
Per filter and mode (dense, hybrid, planned; the same queries, one at a time):

- **pages filled**: the share of queries answered with ``min(limit, allowed)`` hits (allowed:
  the nodes the filter lets through, all with vectors here). Dense and hybrid must fill every
  page; planned may answer fewer when its coherence gate drops candidates, as it does
  unfiltered.
- **after fusion** (dense only, the behaviour before filters ran inside the legs): the hits a
  filter applied to the unfiltered dense top 100 leaves, capped at ``limit``, on average.
- latency p50 / p95 of the filtered search and of the same query unfiltered (same mode, same
  run, back to back), and their ratio.
"""

# ruff: noqa: I001  (cogitave is imported before numpy on purpose)
from __future__ import annotations

import argparse
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import cogitave  # noqa: F401  (before numpy: BLAS threads)
import numpy as np

sys.path.insert(0, str(Path(__file__).parent))

import latency as lat
from _machine import machine_line, write_section
from _synth import Synth, SynthParams

from cogitave.collection import Collection
from cogitave.expand.embed import DEFAULT_ENCODER, OnnxMiniLMEncoder, register_encoder
from cogitave.query.encoder import query_encoder
from cogitave.query.engine import where_of
from cogitave.query.types import SearchRequest

HERE = Path(__file__).resolve().parent
MODES = ("dense", "hybrid", "planned")


@dataclass(frozen=True)
class Filter:
    label: str
    request: dict[str, Any]  # filters / path_prefix fields of a SearchRequest


FILTERS = (
    Filter("category c00 (common)", {"filters": {"category": "c00"}}),
    Filter("category c11 (rare)", {"filters": {"category": "c11"}}),
    Filter("year 2001", {"filters": {"year": "2001"}}),
    Filter("years 1990-1994", {"filters": {"year": ["1990", "1991", "1992", "1993", "1994"]}}),
    Filter("category c11 and year 2001", {"filters": {"category": "c11", "year": "2001"}}),
    Filter("uid prefix n00000", {"path_prefix": "n00000"}),
    Filter("uid prefix n0001", {"path_prefix": "n0001"}),
    Filter("uid prefix n001", {"path_prefix": "n001"}),
)


def pct(xs: list[float], q: float) -> float:
    return float(np.percentile(xs, q)) if xs else float("nan")


def open_collection(args: argparse.Namespace) -> tuple[Collection, Synth]:
    params = SynthParams(seed=args.seed)
    synth = Synth(params)
    proxy = not args.real
    path = lat.collection_path(Path(args.cache), params, args.batch, proxy)
    name = lat.PROXY_ENCODER if proxy else DEFAULT_ENCODER
    if proxy:
        register_encoder(lat.PROXY_ENCODER, lat.HashedBowEncoder)
    col = Collection.open(path) if Collection.exists(path) else None
    if col is None or len(col) < args.nodes:
        if not proxy:
            raise SystemExit(f"build it first: bench/latency.py --nodes {args.nodes} --build-only")
        lat.log(f"building {args.nodes:,} nodes in {path}")
        col = lat.build(path, synth, args.nodes, args.batch, name)
    if proxy:  # queries: stand-in vectors, real encoder time
        real = OnnxMiniLMEncoder()
        real.warm()
        register_encoder(lat.PROXY_ENCODER, lambda: lat.HashedBowEncoder(cost_of=real))
    if len(col) != args.nodes:
        col = Collection.open(path, lat.root_with(path, args.nodes))
    return col, synth


def allowed_count(col: Collection, f: Filter) -> int:
    where = where_of(SearchRequest(query="x", **f.request))
    assert where is not None
    return int(col.snapshot.allowed(where).sum())


def timed(col: Collection, req: SearchRequest) -> tuple[float, Any]:
    t = time.perf_counter()
    res = col.search(req)
    return (time.perf_counter() - t) * 1e3, res


def run(col: Collection, queries: list[str], limit: int) -> list[dict[str, Any]]:
    """Per filter and mode: pages filled, hits after fusion (dense), latencies."""
    rows: list[dict[str, Any]] = []
    snap = col.snapshot
    for f in FILTERS:
        allowed = allowed_count(col, f)
        where = where_of(SearchRequest(query="x", **f.request))
        assert where is not None
        mask = snap.allowed(where)
        want = min(limit, allowed)
        for mode in MODES:
            filled, post, got = 0, [], []
            ms_f: list[float] = []
            ms_u: list[float] = []
            for q in queries:
                base = {"query": q, "limit": limit, "mode": mode}
                query_encoder(snap.encoder_name or "", snap.encoder_graph).encode_queries(
                    [q]
                )  # both legs hot
                t_u, _ = timed(col, SearchRequest(**base))
                t_f, res = timed(col, SearchRequest(**base, **f.request))
                ms_u.append(t_u)
                ms_f.append(t_f)
                got.append(len(res.results))
                filled += len(res.results) == want
                if mode == "dense":
                    top = SearchRequest(query=q, limit=100, mode="dense", group_by_page=False)
                    ids = [snap.id_of(u) for u in col.search(top).uids]
                    post.append(min(limit, sum(bool(mask[i]) for i in ids if i is not None)))
            rows.append(
                {
                    "filter": f.label,
                    "allowed": allowed,
                    "mode": mode,
                    "filled": filled / len(queries),
                    "hits": statistics.mean(got),
                    "after_fusion": statistics.mean(post) if post else None,
                    "p50_f": pct(ms_f, 50),
                    "p95_f": pct(ms_f, 95),
                    "p50_u": pct(ms_u, 50),
                    "p95_u": pct(ms_u, 95),
                }
            )
            r = rows[-1]
            lat.log(
                f"{f.label:28} {mode:8} allowed {allowed:6} filled {r['filled']:.0%} "
                f"p50 {r['p50_f']:.2f} vs {r['p50_u']:.2f} ms"
            )
    return rows


def table(rows: list[dict[str, Any]], limit: int) -> str:
    out = [
        f"| filter | allowed nodes | mode | pages filled ({limit} or all allowed) | mean hits "
        "| mean hits, filter after fusion | p50 ms filtered / unfiltered | ratio "
        "| p95 ms filtered / unfiltered |",
        "|---|---:|---|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        post = f"{r['after_fusion']:.1f}" if r["after_fusion"] is not None else "-"
        out.append(
            f"| {r['filter']} | {r['allowed']:,} | {r['mode']} | {r['filled']:.0%} "
            f"| {r['hits']:.1f} | {post} | {r['p50_f']:.2f} / {r['p50_u']:.2f} "
            f"| {r['p50_f'] / r['p50_u']:.2f} | {r['p95_f']:.2f} / {r['p95_u']:.2f} |"
        )
    return "\n".join(out)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--nodes", type=int, default=100_000)
    ap.add_argument("--batch", type=int, default=5_000)
    ap.add_argument("--cache", default=str(HERE / ".cache"))
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--limit", type=int, default=10)
    ap.add_argument("--real", action="store_true", help="the build with the default encoder")
    ap.add_argument("--write", action="store_true")
    args = ap.parse_args(argv)

    col, synth = open_collection(args)
    col.warm()
    queries = [q for _, q in synth.queries(args.queries, args.nodes, seed=3)]
    for q in queries[:20]:  # warm the caches the measured searches share
        col.search(SearchRequest(query=q, limit=args.limit))
    rows = run(col, queries, args.limit)
    encoder = "the default encoder" if args.real else "the hashed stand-in (queries: MiniLM's time)"
    text = "\n".join(
        [
            f"## Filtered search at {args.nodes:,} nodes ({time.strftime('%Y-%m-%d')})",
            "",
            machine_line(),
            "",
            f"`.venv/bin/python bench/filters.py --nodes {args.nodes} --queries {args.queries} "
            f"--limit {args.limit}{' --real' if args.real else ''} --write`: the synthetic "
            f"corpus of `bench/latency.py`, documents embedded by {encoder}; "
            f"{args.queries} mixed queries, each run unfiltered and filtered back to back, "
            f"query vectors cached for both. Root {col.root[:12]}.",
            "",
            table(rows, args.limit),
            "",
        ]
    )
    print(text)
    if args.write:
        write_section("filters", text)


if __name__ == "__main__":
    main()
