"""Indexing throughput against the floor of one plain encoder pass, and the encoder's own
settings.

Data: the first N SciFact abstracts (``$COGITAVE_DATA/scifact/corpus.jsonl``, read-only) for
each N in ``--sizes`` (default 300,5000).

For each size, in one run:

- **floor**: one plain pass of the project's ONNX model over ``title + " " + text`` per
  document: tokenised at 256 tokens, length-sorted, batches of 32, one onnxruntime session
  with the encoder's thread count, mean pooling. No collection, no other work. It runs before
  and after the command (``--floor-runs 2``, the default) and the two rates are averaged.
- **index**: ``cogitave index --format beir`` as a subprocess (the whole command: start-up,
  ingest, publish) into a temporary collection. The subprocess is the CLI's own ``main``
  behind a wrapper that only records timings: the publish progress callback's stages (time
  from a stage's first call to its last), the ingest read, and every text the encoder is
  sent.

Printed per size: nodes/s of both, their ratio (index / floor: 1.0 means indexing costs one
plain pass), texts sent to the encoder per node, and the share of the command's wall time by
stage (ingest, lexical, embed, vectors, other = start-up, imports, node segments, statistics,
graph, manifest).

``--encoder`` adds the encoder's own table on ``--encoder-docs`` abstracts: texts/s by batch
size (8/16/32/64) for each way of using the cores (one onnxruntime call at a time with
``threads`` intra-op threads, or ``workers`` calls at once with one thread each), best of
``--rounds`` passes run interleaved (the shared machine's load comes in bursts); and the
latency of one short query (p50/p90 over SciFact queries).

    .venv/bin/python bench/indexing.py [--sizes 300,5000] [--encoder] [--write]

``--write`` puts the tables in their section of bench/RESULTS.md with the machine noted.
"""

# ruff: noqa: I001  (cogitave is imported before numpy on purpose)
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import cogitave  # noqa: F401
import numpy as np

sys.path.insert(0, str(Path(__file__).parent))

from _machine import machine_line, write_section

from cogitave.expand.embed import OnnxMiniLMEncoder, default_threads, mean_pool_normalize

STAGES = ("ingest", "lexical", "embed", "vectors", "other")

# Runs inside the subprocess: the CLI's own main, with timers on the ingest read, the publish
# progress callback and the encoder's input. Writes its numbers to the file in argv[1].
WRAPPER = r"""
import json, sys, time
t0 = time.perf_counter()
out_path = sys.argv[1]
sys.argv = ["cogitave", *sys.argv[2:]]
from contextlib import contextmanager
from cogitave import indexing
from cogitave.surfaces import cli
from cogitave.expand import embed

spans, texts = {}, [0]

def mark(stage):
    now = time.perf_counter()
    first, _ = spans.get(stage, (now, now))
    spans[stage] = (first, now)

read = indexing.read
def timed_read(*a, **k):
    mark("ingest")
    try:
        return read(*a, **k)
    finally:
        mark("ingest")
indexing.read = timed_read

encode = embed.OnnxMiniLMEncoder.encode
def counted(self, items, **k):
    texts[0] += len(items)
    return encode(self, items, **k)
embed.OnnxMiniLMEncoder.encode = counted

bar = cli.progress_bar
@contextmanager
def timed_bar(enabled=True):
    with bar(enabled) as update:
        def step(stage, done, total):
            mark(stage)
            update(stage, done, total)
        yield step
cli.progress_bar = timed_bar

code = 0
try:
    cli.main()
except SystemExit as e:
    code = e.code or 0
wall = time.perf_counter() - t0
with open(out_path, "w") as f:
    json.dump({"spans": {s: b - a for s, (a, b) in spans.items()}, "texts": texts[0],
               "wall_in_process": wall, "code": code}, f)
sys.exit(code)
"""


def load_docs(n: int) -> list[dict[str, Any]]:
    """The first n SciFact corpus rows."""
    root = Path(os.environ.get("COGITAVE_DATA", "/work/shared/data"))
    corpus = root / "scifact" / "corpus.jsonl"
    if not corpus.is_file():
        sys.exit(f"no SciFact corpus at {corpus}; set COGITAVE_DATA")
    with corpus.open(encoding="utf-8") as f:
        rows = [json.loads(line) for _, line in zip(range(n), f, strict=False)]
    if len(rows) < n:
        sys.exit(f"SciFact has {len(rows)} abstracts, fewer than {n}")
    return rows


def floor_pass(texts: list[str], threads: int, batch: int = 32) -> float:
    """Seconds for one plain pass of the ONNX model over texts (the floor)."""
    enc = OnnxMiniLMEncoder(intra_op_num_threads=threads)
    session, tokenizer = enc._load()
    session.run(None, _feed([[101, 102]]))  # warm-up, as the encoder's own warm()
    start = time.perf_counter()
    ids = [e.ids for e in tokenizer.encode_batch(texts)]
    order = sorted(range(len(ids)), key=lambda i: len(ids[i]))
    for s in range(0, len(order), batch):
        chunk = [ids[i] for i in order[s : s + batch]]
        feed = _feed(chunk)
        (hidden,) = session.run(["last_hidden_state"], feed)
        mean_pool_normalize(hidden, feed["attention_mask"])
    return time.perf_counter() - start


def _feed(ids: list[list[int]]) -> dict[str, np.ndarray]:
    width = max(len(i) for i in ids)
    input_ids = np.zeros((len(ids), width), np.int64)
    mask = np.zeros_like(input_ids)
    for row, seq in enumerate(ids):
        input_ids[row, : len(seq)] = seq
        mask[row, : len(seq)] = 1
    return {"input_ids": input_ids, "attention_mask": mask, "token_type_ids": 0 * input_ids}


def index_run(rows: list[dict[str, Any]], work: Path) -> dict[str, Any]:
    """``cogitave index --format beir`` over rows in a subprocess: wall time and its stages."""
    src = work / "beir"
    src.mkdir()
    with (src / "corpus.jsonl").open("w", encoding="utf-8") as f:
        for r in rows:
            f.write(json.dumps({"_id": r["_id"], "title": r["title"], "text": r["text"]}) + "\n")
    stats = work / "stats.json"
    cmd = [sys.executable, "-c", WRAPPER, str(stats), "index", "--format", "beir", "-q"]
    cmd += ["--collection", str(work / "col"), str(src)]
    start = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.perf_counter() - start
    if done.returncode != 0:
        sys.exit(f"cogitave index failed ({done.returncode}):\n{done.stderr[-2000:]}")
    found = json.loads(stats.read_text())
    spans = found["spans"]
    share = {s: spans.get(s, 0.0) for s in STAGES[:-1]}
    share["other"] = max(0.0, wall - sum(share.values()))
    return {"wall": wall, "texts": found["texts"], "share": share}


def indexing_table(sizes: list[int], threads: int, floor_runs: int = 2) -> str:
    """The throughput table (markdown) for each size."""
    lines = [
        "| abstracts | floor nodes/s | index nodes/s | ratio | texts/node | "
        + " | ".join(STAGES)
        + " |",
        "|---:|---:|---:|---:|---:|" + "---:|" * len(STAGES),
    ]
    for n in sizes:
        rows = load_docs(n)
        texts = [f"{r['title']} {r['text']}" for r in rows]
        # The floor runs before and after the command and the two are averaged: the shared
        # machine's load drifts over a run of minutes.
        before = floor_pass(texts, threads)
        work = Path(tempfile.mkdtemp(prefix="cogitave-bench-index-"))
        try:
            run = index_run(rows, work)
        finally:
            shutil.rmtree(work, ignore_errors=True)
        after = floor_pass(texts, threads) if floor_runs > 1 else before
        floor_rate, rate = (n / before + n / after) / 2, n / run["wall"]
        shares = " | ".join(f"{100 * run['share'][s] / run['wall']:.1f}%" for s in STAGES)
        line = (
            f"| {n:,} | {floor_rate:.1f} | {rate:.1f} | {rate / floor_rate:.2f} | "
            f"{run['texts'] / n:.2f} | {shares} |"
        )
        print(line, flush=True)
        lines.append(line)
    return "\n".join(lines) + "\n"


def encoder_table(n_docs: int, rounds: int) -> str:
    """Encoder texts/s by batch size and core use, and one-query latency (markdown)."""
    cores = default_threads()
    rows = load_docs(n_docs)
    texts = [f"{r['title']} {r['text']}" for r in rows]
    setups = {f"1 call x {cores} threads": (cores, 1), f"{cores} calls x 1 thread": (1, cores)}
    encoders = {
        k: OnnxMiniLMEncoder(intra_op_num_threads=t, workers=w) for k, (t, w) in setups.items()
    }
    for enc in encoders.values():
        enc.warm()
    best: dict[tuple[str, int], float] = {}
    for _ in range(rounds):
        for bs in (8, 16, 32, 64):
            for name, enc in encoders.items():
                start = time.perf_counter()
                enc.encode(texts, batch_size=bs)
                rate = len(texts) / (time.perf_counter() - start)
                best[name, bs] = max(best.get((name, bs), 0.0), rate)
                print(f"  {name}, batch {bs}: {rate:.1f} texts/s", flush=True)
    lines = [
        f"Encoder texts/s on {n_docs} abstracts (256 tokens), best of {rounds}:\n",
        "| cores used as | " + " | ".join(f"batch {b}" for b in (8, 16, 32, 64)) + " |",
        "|---|---:|---:|---:|---:|",
    ]
    for name in encoders:
        cells = " | ".join(f"{best[name, b]:.1f}" for b in (8, 16, 32, 64))
        lines.append(f"| {name} | {cells} |")
    root = Path(os.environ.get("COGITAVE_DATA", "/work/shared/data"))
    with (root / "scifact" / "queries.jsonl").open(encoding="utf-8") as f:
        queries = [json.loads(line)["text"] for _, line in zip(range(200), f, strict=False)]
    lines += ["", "One-query latency (200 SciFact queries, best of rounds):", ""]
    for name, enc in encoders.items():
        p50, p90 = float("inf"), float("inf")
        for _ in range(rounds):
            lat = []
            for q in queries:
                start = time.perf_counter()
                enc.encode([q])
                lat.append(time.perf_counter() - start)
            p50 = min(p50, float(np.median(lat)) * 1e3)
            p90 = min(p90, float(np.percentile(lat, 90)) * 1e3)
        lines.append(f"- {name}: p50 {p50:.2f} ms, p90 {p90:.2f} ms")
    return "\n".join(lines) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="300,5000", help="comma-separated abstract counts")
    ap.add_argument("--floor-runs", type=int, choices=(1, 2), default=2, help="floor passes")
    ap.add_argument("--encoder", action="store_true", help="add the encoder settings table")
    ap.add_argument("--encoder-docs", type=int, default=256)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--no-index", action="store_true", help="only the encoder table")
    ap.add_argument("--write", action="store_true", help="replace its section of bench/RESULTS.md")
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    threads = default_threads()
    body = ""
    if not args.no_index:
        print(f"threads: {threads}", flush=True)
        body += indexing_table(sizes, threads, args.floor_runs)
    if args.encoder or args.no_index:
        body += "\n" + encoder_table(args.encoder_docs, args.rounds)
    print(body)
    if args.write:
        write_section(
            "indexing",
            f"## Indexing throughput ({time.strftime('%Y-%m-%d')})\n\n{machine_line()}\n\n"
            f"`bench/indexing.py --sizes {args.sizes}`\n\n{body}",
        )


if __name__ == "__main__":
    main()
