"""Ranking quality of every system on SciFact (train) and Cranfield, in one run.

    .venv/bin/python bench/quality.py [--data ../shared/data] [--cache bench/.cache]
                                      [--datasets scifact,cranfield] [--write]

Builds each collection once (cached; a build's index time and throughput are recorded beside
it), runs bm25, dense, hybrid and planned over the same snapshot and the same queries, and
prints nDCG@10, recall@100, MRR@10 and latency percentiles. ``--write`` appends the table to
bench/RESULTS.md with the machine noted.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from _machine import machine_line

from cogitave import Collection
from cogitave.eval import cranfield
from cogitave.eval.run import run_systems
from cogitave.ingest import beir

HERE = Path(__file__).resolve().parent
SYSTEMS = ("bm25", "dense", "hybrid", "planned")
# Published / plain-script reference points (data README): nDCG@10.
REFERENCE = {
    "scifact": {"bm25": 0.696, "dense": 0.660, "hybrid": 0.719},
    "cranfield": {"bm25": 0.370, "dense": 0.382, "hybrid": 0.418},
}


def build(name: str, data: Path, cache: Path) -> tuple[Collection, dict]:
    path = cache / name
    meta_file = cache / f"{name}.build.json"
    if Collection.exists(path) and meta_file.is_file():
        return Collection.open(path), json.loads(meta_file.read_text())
    if name == "scifact":
        batch = beir.read_beir(data / "scifact")
    else:
        batch = cranfield.read_corpus(data / "cranfield")
    t0 = time.perf_counter()
    col = Collection.create(path, batch.schema)
    col.add(batch.nodes)
    col.publish()
    secs = time.perf_counter() - t0
    meta = {
        "nodes": len(batch.nodes),
        "seconds": round(secs, 1),
        "nodes_per_s": round(len(batch.nodes) / secs, 1),
    }
    meta_file.write_text(json.dumps(meta))
    return col, meta


def queries(name: str, data: Path) -> tuple[dict[str, str], dict[str, dict[str, int]]]:
    if name == "scifact":
        d = data / "scifact"
        return beir.read_queries(d / "queries.jsonl"), beir.read_qrels(d / "qrels" / "train.tsv")
    d = data / "cranfield"
    return cranfield.read_queries(d / "cran.qry"), cranfield.read_qrels(d / "cranqrel")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", type=Path, default=HERE.parent.parent / "shared" / "data")
    ap.add_argument("--cache", type=Path, default=HERE / ".cache")
    ap.add_argument("--datasets", default="scifact,cranfield")
    ap.add_argument("--write", action="store_true")
    args = ap.parse_args()
    args.cache.mkdir(parents=True, exist_ok=True)
    lines = [
        "| dataset | system | nDCG@10 | reference | recall@100 | MRR@10 | p50 ms | p99 ms |",
        "|---|---|---|---|---|---|---|---|",
    ]
    builds = []
    for name in args.datasets.split(","):
        col, meta = build(name, args.data, args.cache)
        builds.append(
            f"{name}: {meta['nodes']} nodes in {meta['seconds']} s "
            f"({meta['nodes_per_s']} nodes/s, default encoder, all vectors)"
        )
        qs, rels = queries(name, args.data)
        run_systems(col, ["planned"], dict(list(qs.items())[:20]), rels)  # warm caches
        for s in run_systems(col, SYSTEMS, qs, rels):
            m = s.metrics
            ref = REFERENCE[name].get(s.system)
            lines.append(
                f"| {name} | {s.system} | {m['ndcg@10']:.4f} | {ref if ref else '-'} | "
                f"{m['recall@100']:.4f} | {m['mrr@10']:.4f} | {s.p50_ms:.1f} | {s.p99_ms:.1f} |"
            )
            print(lines[-1], flush=True)
    table = "\n".join(lines)
    out = (
        f"\n## Ranking quality ({time.strftime('%Y-%m-%d')})\n\n{machine_line()}\n\n"
        "`.venv/bin/python bench/quality.py --write` (SciFact: train qrels; Cranfield: "
        "graded, gain 5 - grade). Reference: plain scripts on the same data "
        "(../shared/data/README.md). Latency includes result presentation at limit 100.\n\n"
        f"{table}\n\nIndex builds: " + "; ".join(builds) + "\n"
    )
    print(out)
    if args.write:
        with (HERE / "RESULTS.md").open("a") as f:
            f.write(out)


if __name__ == "__main__":
    main()
