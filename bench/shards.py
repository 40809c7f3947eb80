"""Sharded collections on Ray: build throughput, query latency, and the same answers.

    .venv/bin/python bench/shards.py [--docs N] [--queries N] [--build-docs N] [--write]

1. Build throughput on the first ``--build-docs`` SciFact documents with the real encoder:
   the local build (one process) against ``index --shards 2 --ray`` with 1 and 2 embedding
   actors (Ray Data ``map_batches`` over an actor pool; Ray already started).
2. On the first ``--docs`` documents with the hashed stand-in encoder (seconds to embed, so
   BM25 exactness and dense agreement are checked on the whole corpus): one ordinary
   collection and sharded collections of 1, 2 and 4 shards; every judged query (train
   qrels) in bm25, dense, hybrid and planned on the engine, on the view with shards in this
   process, and on shard actors (Ray, 2 CPUs). Reports p50/p99 latency, nDCG@10, and how many
   top-10 lists equal the one-shard view's and the engine's, uid by uid in order.

   ``--vectors-from DIR`` runs step 2 with the real default encoder instead: DIR is a
   collection of the same documents built with it (e.g. ``bench/.cache/q2/scifact`` from
   bench/quality.py), whose stored whole-node vectors answer the encoder for those documents'
   texts (the encoder is deterministic and a text's vector does not depend on its batch, so
   they are what it would compute), and queries go to the encoder itself. Every collection in
   the run then holds real MiniLM vectors without paying ~15 minutes of encoding per build.

Prints markdown tables; ``--write`` puts them in their section of bench/RESULTS.md with the
machine line.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))

from _machine import machine_line, write_section

from cogitave import Collection
from cogitave.distributed import hashed
from cogitave.distributed.actors import connect, open_ray, stop
from cogitave.distributed.build import build_sharded
from cogitave.distributed.facade import ShardedCollection
from cogitave.distributed.view import ShardedView
from cogitave.eval.metrics import evaluate
from cogitave.expand.embed import DEFAULT_ENCODER
from cogitave.ingest.beir import BEIR_SCHEMA, read_beir, read_qrels, read_queries
from cogitave.query.encoder import query_encoder
from cogitave.query.types import SearchRequest
from cogitave.schema import WHOLE

DATA = Path(__import__("os").environ.get("COGITAVE_DATA", "/work/shared/data")) / "scifact"
SYSTEMS = ("bm25", "dense", "hybrid", "planned")


class StoredVectors:
    """The default encoder, answering the texts a collection built with it embedded from that
    collection's stored vectors, and any other text (queries) by encoding it."""

    name = DEFAULT_ENCODER

    def __init__(self, path: Path) -> None:
        from cogitave.expand.embed import OnnxMiniLMEncoder
        from cogitave.texts import embed_texts

        self.real = OnnxMiniLMEncoder()
        self.dim = self.real.dim
        snap = Collection.open(path).snapshot
        if snap.encoder_name != DEFAULT_ENCODER:
            raise SystemExit(f"{path} was built with {snap.encoder_name!r}, not the default")
        self.known: dict[str, np.ndarray] = {}
        for nid in snap.nodes.live_nids().tolist():
            for dim, text in embed_texts(snap.node(nid), snap.schema).items():
                vec, has = snap.vectors_of(dim, np.asarray([nid]))
                if has[0]:
                    self.known[text] = vec[0]

    def encode(self, texts: Any, *, batch_size: int = 32, progress: Any = None) -> np.ndarray:
        texts = list(texts)
        out = np.zeros((len(texts), self.dim), np.float32)
        missing = [i for i, t in enumerate(texts) if t not in self.known]
        for i, t in enumerate(texts):
            if t in self.known:
                out[i] = self.known[t]
        if missing:
            out[missing] = self.real.encode([texts[i] for i in missing], batch_size=batch_size)
        if progress is not None:
            progress(len(texts))
        return out


def build_table(nodes: list, root: Path) -> str:
    rows = []
    t0 = time.perf_counter()
    col = Collection.create(root / "b-local", BEIR_SCHEMA, encoder=DEFAULT_ENCODER)
    col.add(nodes)
    col.publish()
    local = time.perf_counter() - t0
    rows.append(("local build (1 process)", local))
    for actors in (1, 2):
        t0 = time.perf_counter()
        build_sharded(
            root / f"b-ray{actors}",
            nodes,
            BEIR_SCHEMA,
            shards=2,
            encoder=DEFAULT_ENCODER,
            use_ray=True,
            embed_actors=actors,
        )
        rows.append((f"Ray, 2 shards, {actors} embedding actor(s)", time.perf_counter() - t0))
    out = ["| build | s | nodes/s | vs local |", "|---|---:|---:|---:|"]
    for name, s in rows:
        out.append(f"| {name} | {s:.1f} | {len(nodes) / s:.1f} | {local / s:.2f}x |")
    return "\n".join(out)


def run(search: Any, queries: dict[str, str], mode: str) -> tuple[dict, list[float]]:
    tops: dict[str, list[str]] = {}
    times = []
    for qid, text in queries.items():
        t0 = time.perf_counter()
        tops[qid] = search(SearchRequest(query=text, mode=mode, limit=10)).uids  # type: ignore[arg-type]
        times.append((time.perf_counter() - t0) * 1e3)
    return tops, times


def exact_dense(col: Collection, queries: dict[str, str]) -> dict[str, list[str]]:
    """Per query the top 10 by exact cosine over every stored whole-node vector (ties by
    uid): the reference the approximate HNSW and the exact per-shard searches are held to."""
    snap = col.snapshot
    nids = snap.nodes.live_nids()
    vecs, _ = snap.vectors_of(WHOLE, nids)
    uids = np.asarray([snap.uid_of(int(n)) for n in nids])
    enc = query_encoder(snap.encoder_name or "", snap.encoder_graph)
    out = {}
    for qid, text in queries.items():
        sims = vecs @ enc.encode_queries([text])[0]
        order = np.lexsort((uids, -sims))[:10]
        out[qid] = uids[order].tolist()
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--docs", type=int, default=0, help="documents (0: all)")
    ap.add_argument("--queries", type=int, default=0, help="judged queries (0: all)")
    ap.add_argument("--build-docs", type=int, default=300, help="0: skip the build table")
    ap.add_argument("--write", action="store_true", help="replace its section of bench/RESULTS.md")
    ap.add_argument(
        "--vectors-from",
        type=Path,
        default=None,
        help="a default-encoder collection of the same documents: real vectors (see above)",
    )
    args = ap.parse_args()
    t_start = time.perf_counter()
    nodes = read_beir(DATA).nodes
    nodes = nodes[: args.docs] if args.docs else nodes
    qrels = read_qrels(DATA / "qrels" / "train.tsv")
    queries = {q: t for q, t in read_queries(DATA / "queries.jsonl").items() if q in qrels}
    if args.queries:
        queries = dict(list(queries.items())[: args.queries])
    root = Path(tempfile.mkdtemp(prefix="cq-shards-"))
    connect("local")
    try:
        build = (
            build_table(read_beir(DATA).nodes[: args.build_docs], root) if args.build_docs else ""
        )
        if args.vectors_from:
            from cogitave.expand.embed import register_encoder

            stored = StoredVectors(args.vectors_from)
            register_encoder(DEFAULT_ENCODER, lambda: stored)
            name = DEFAULT_ENCODER
        else:
            name = hashed.register()
        one = Collection.create(root / "one", BEIR_SCHEMA, encoder=name)
        one.add(nodes)
        one.publish()
        views: dict[str, Any] = {"engine": one.search}
        for n in (1, 2, 4):
            build_sharded(root / f"s{n}", nodes, BEIR_SCHEMA, shards=n, encoder=name)
            v = ShardedView.open_local(root / f"s{n}")
            views[f"{n} shard(s), in process"] = lambda r, v=v: ShardedCollection(v).search(r)
        actors = []
        for n in (2, 4):
            v = open_ray(root / f"s{n}")
            actors.append(v)
            views[f"{n} shards, Ray actors"] = lambda r, v=v: ShardedCollection(v).search(r)
        lat = [
            "| system | where | p50 ms | p99 ms | nDCG@10 | top-10 = 1 shard | top-10 = engine "
            "| top-10 = exact |",
            "|---|---|---:|---:|---:|---:|---:|---:|",
        ]
        exact = exact_dense(one, queries)
        for mode in SYSTEMS:
            got = {k: run(f, queries, mode) for k, f in views.items()}
            base, eng = got["1 shard(s), in process"][0], got["engine"][0]
            for k, (tops, times) in got.items():
                ndcg = evaluate(
                    {q: {u: 10.0 - i for i, u in enumerate(t)} for q, t in tops.items()},
                    {q: qrels[q] for q in queries},  # the queries run, not all judged ones
                )["ndcg@10"]
                same1 = sum(tops[q] == base[q] for q in queries) / len(queries)
                same_e = sum(tops[q] == eng[q] for q in queries) / len(queries)
                same_x = (
                    f"{sum(tops[q] == exact[q] for q in queries) / len(queries):.1%}"
                    if mode == "dense"
                    else "-"
                )
                lat.append(
                    f"| {mode} | {k} | {np.percentile(times, 50):.2f} | "
                    f"{np.percentile(times, 99):.2f} | {ndcg:.4f} | {same1:.1%} | {same_e:.1%} "
                    f"| {same_x} |"
                )
        for v in actors:
            stop(v)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    body = (
        f"`.venv/bin/python bench/shards.py --docs {args.docs} --queries {args.queries} "
        f"--build-docs {args.build_docs}"
        f"{f' --vectors-from {args.vectors_from}' if args.vectors_from else ''}` "
        f"({len(nodes):,} SciFact documents, {len(queries)} "
        f"judged queries; {time.perf_counter() - t_start:.0f} s).\n\n"
        + (
            f"Build throughput, real encoder, {args.build_docs} documents:\n\n{build}\n\n"
            if build
            else ""
        )
        + (
            "Queries (real default encoder, document vectors from "
            f"`{args.vectors_from}`; the same data in every row):\n\n"
            if args.vectors_from
            else "Queries (hashed stand-in encoder; the same data in every row):\n\n"
        )
        + "\n".join(lat)
        + "\n"
    )
    print(body)
    if args.write:
        head = f"## Sharded collections on Ray ({time.strftime('%Y-%m-%d')})\n\n"
        write_section("shards", f"{head}{machine_line()}\n\n{body}")


if __name__ == "__main__":
    main()
