"""Warm query latency of the full pipeline against the raw legs, on a seeded synthetic collection.

Build (once, cached): ``--nodes`` nodes (default 100,000) from :mod:`_synth` (3 semantic
dimensions: title/body/tags; 2 exact: year with ``recent``/``vintage`` tails, category with
``equals`` tails), default encoder, published in batches of ``--batch`` nodes. The collection
lives in ``--cache``/``synth-<params>-b<batch>``; the node sequence is prefix-stable, so an
interrupted build resumes from the collection's node count, and every batch's root is retained:
``--nodes 20000`` on a collection built to 100,000 measures the root that had 20,000 nodes.

Measure: ``--queries`` mixed queries (a warm-up pass of other queries first), one at a time:

- (a) ``Collection.search(SearchRequest(query=q))`` (planned mode), query-embedding cache cold
  for the measured queries (the warm-up used other queries), and again with it hot;
- the raw legs in the same run: tantivy BM25 (the ``all``-field query of the query's stems,
  top 100), HNSW (``snapshot.vectors['_all'].search(vec, 100)``, vector precomputed), the
  encoder (one query, cache bypassed); the ratio (a) / (sum of the raw legs);
- per stage timings from the engine's diagnostics, peak RSS, index size on disk.

``--profile`` adds a pyinstrument profile of the full pipeline over the measured queries.
``--write`` puts the tables in the ``latency`` section of ``bench/RESULTS.md`` (the run it
replaces goes to ``bench/history/``).
``--data DIR`` adds SciFact (BEIR) from ``DIR/scifact`` as a second collection (reusing
``--scifact-collection`` read-only when given and it has ``_all`` vectors).

    .venv/bin/python bench/latency.py [--nodes 100000] [--cache bench/.cache] [--build-only]
        [--queries 500] [--profile] [--data ../shared/data]

Prints markdown tables; writes under ``--cache``, and ``bench/RESULTS.md`` with ``--write``.
"""

# ruff: noqa: I001  (cogitave is imported before numpy on purpose)
from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import platform
import resource
import statistics
import sys
import time
import zlib
from collections import defaultdict
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

# cogitave before numpy: the package sets process-wide threading defaults (BLAS) that only
# take effect before numpy loads, as in the CLI and the servers.
import cogitave  # noqa: F401
import numpy as np

sys.path.insert(0, str(Path(__file__).parent))

from _defaults import with_default_settings
from _machine import write_section
from _synth import Synth, SynthParams

from cogitave.collection import Collection
from cogitave.expand import analysis
from cogitave.expand.embed import (
    DEFAULT_ENCODER,
    OnnxMiniLMEncoder,
    encode_queries,
    get_encoder,
    register_encoder,
)
from cogitave.query import encoder as encoder_mod
from cogitave.query.encoder import query_encoder
from cogitave.query.types import SearchRequest
from cogitave.schema import WHOLE
from cogitave.store.lexical import ALL_FIELD
from cogitave.store.roots import RootStore

HERE = Path(__file__).parent
KEEP_ROOTS = 10_000  # retain every batch's root (the smaller sizes stay measurable)


# ---- build --------------------------------------------------------------------------------


PROXY_ENCODER = "bench/hashed-bow-384"


def collection_path(cache: Path, params: SynthParams, batch: int, proxy: bool = False) -> Path:
    return cache / f"synth-{params.key()}-b{batch}{'-proxyenc' if proxy else ''}"


class HashedBowEncoder:
    """A stand-in document encoder for scale runs only: the sum of seeded random word vectors
    (384-d, L2-normalised). Cheap enough to index 100k nodes in minutes; its vectors are not
    MiniLM's. With ``cost_of`` set, every call also runs that encoder on the same texts and
    discards the result, so a query pays exactly the real encoder's time."""

    name = PROXY_ENCODER
    dim = 384

    def __init__(self, cost_of: Any = None) -> None:
        self.cost_of = cost_of
        self._vec: dict[str, np.ndarray] = {}

    def _word(self, w: str) -> np.ndarray:
        v = self._vec.get(w)
        if v is None:
            rng = np.random.default_rng(zlib.crc32(w.encode()))
            v = self._vec[w] = rng.standard_normal(self.dim).astype(np.float32)
        return v

    def encode(
        self,
        texts: Sequence[str],
        *,
        batch_size: int = 8,
        progress: Callable[[int], None] | None = None,
    ) -> np.ndarray:
        if self.cost_of is not None:  # only at query time: the query path (a prefix)
            encode_queries(self.cost_of, list(texts))
        out = np.zeros((len(texts), self.dim), np.float32)
        for i, t in enumerate(texts):
            words = analysis.surface(t)
            if words:
                out[i] = np.sum([self._word(w) for w in words], axis=0)
            if progress is not None and (i % 256 == 255 or i == len(texts) - 1):
                progress(i % 256 + 1)
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.maximum(norms, 1e-12)


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def build(
    path: Path, synth: Synth, n: int, batch: int, encoder: str = DEFAULT_ENCODER
) -> Collection:
    """Publish nodes [count, n) in batches; resumable (the count is the collection's)."""
    if not Collection.exists(path):
        path.parent.mkdir(parents=True, exist_ok=True)
        Collection.create(path, synth.schema(), encoder=encoder)
        (path / "synth.json").write_text(json.dumps(vars(synth.p), indent=1))
    col = Collection.open(path)
    count = len(col)
    # Spinning onnxruntime workers halve throughput when the CPUs are shared (measured here:
    # 5.8 vs 12.1 bodies/s at load ~5 on 2 cores); the build does not need the latency.
    register_encoder(DEFAULT_ENCODER, lambda: OnnxMiniLMEncoder(allow_spinning=False))
    stats_file = path / "build.jsonl"
    while count < n:
        stop = min(count + batch, (count // batch + 1) * batch, n)
        t0 = time.perf_counter()
        nodes = synth.nodes(count, stop)
        t_gen = time.perf_counter() - t0
        col.add(nodes)
        marks: dict[str, list[float]] = defaultdict(list)
        progress = _progress(marks, stop)
        t1 = time.perf_counter()
        col.publish(progress=progress, retention=KEEP_ROOTS)
        t_pub = time.perf_counter() - t1
        embed = marks["embed"][-1] - marks["embed"][0] if marks["embed"] else 0.0
        lexical = marks["lexical"][-1] - marks["lexical"][0] if marks["lexical"] else 0.0
        rec = {
            "start": count,
            "stop": stop,
            "gen_s": round(t_gen, 3),
            "publish_s": round(t_pub, 3),
            "embed_s": round(embed, 3),
            "lexical_s": round(lexical, 3),
            "root": col.root,
        }
        with stats_file.open("a") as f:
            f.write(json.dumps(rec) + "\n")
        count = len(col)
        log(
            f"published {count:,} nodes: batch {len(nodes)} in {t_pub:.1f}s "
            f"({len(nodes) / (t_gen + t_pub):.1f} nodes/s, encoder {embed / t_pub:.0%})"
        )
    register_encoder(DEFAULT_ENCODER, OnnxMiniLMEncoder)  # queries: the default encoder
    return col


def _progress(marks: dict[str, list[float]], upto: int) -> Callable[[str, int, int], None]:
    """A publish progress callback that timestamps each stage and logs the encoder."""
    last = [0.0]

    def progress(stage: str, done: int, total: int) -> None:
        now = time.perf_counter()
        marks[stage].append(now)
        if stage == "embed" and (now - last[0] > 30 or done == total):
            last[0] = now
            log(f"  [{upto}] embed {done}/{total}")

    return progress


def build_report(path: Path, upto: int) -> dict[str, float]:
    recs = [json.loads(x) for x in (path / "build.jsonl").read_text().splitlines() if x.strip()]
    recs = [r for r in recs if r["stop"] <= upto]
    if not recs:
        return {}
    nodes = sum(r["stop"] - r["start"] for r in recs)
    total = sum(r["gen_s"] + r["publish_s"] for r in recs)
    embed = sum(r["embed_s"] for r in recs)
    lexical = sum(r["lexical_s"] for r in recs)
    return {
        "nodes": nodes,
        "total_s": total,
        "nodes_per_s": nodes / total,
        "encoder_share": embed / total,
        "lexical_share": lexical / total,
        "other_share": 1 - (embed + lexical) / total,
    }


def root_with(path: Path, n: int) -> str:
    """The retained root with exactly ``n`` live nodes."""
    store = RootStore(path)
    for r in store.list_roots():
        if r.nodes == n:
            return r.id
    have = sorted({r.nodes for r in store.list_roots()})
    sys.exit(f"no retained root with {n} nodes in {path} (have {have})")


def index_bytes(path: Path, rid: str) -> dict[str, int]:
    """Bytes of the objects one root names, by kind."""
    store = RootStore(path)
    m = store.read_root(rid)
    out: dict[str, int] = defaultdict(int)
    lex = set(m.lexical_files.values())
    vec = {
        v
        for entries in m.vectors.values()
        for e in entries
        for k, v in e.items()
        if k.endswith("_obj")
    }
    hnsw = {e["hnsw_obj"] for entries in m.vectors.values() for e in entries if e.get("hnsw_obj")}
    for obj in set(m.objects()):
        size = store.object_path(obj).stat().st_size
        kind = (
            "lexical"
            if obj in lex
            else "hnsw"
            if obj in hnsw
            else "vectors"
            if obj in vec
            else "nodes+stats+graph"
        )
        out[kind] += size
    out["total"] = sum(out.values())
    return dict(out)


# ---- measure ------------------------------------------------------------------------------


def pct(xs: Sequence[float], q: float) -> float:
    return float(np.percentile(np.asarray(xs, float), q)) if len(xs) else float("nan")


def row(name: str, xs: Sequence[float]) -> str:
    p50, p95, p99 = (pct(xs, q) for q in (50, 95, 99))
    return f"| {name} | {p50:.2f} | {p95:.2f} | {p99:.2f} | {statistics.fmean(xs):.2f} |"


def machine() -> str:
    model = "?"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    cores = len(os.sched_getaffinity(0))
    load = os.getloadavg()
    return (
        f"{model}, {cores} cores, Python {platform.python_version()}, "
        f"load average {load[0]:.1f}/{load[1]:.1f}/{load[2]:.1f}, "
        f"BLAS threads {_blas_threads()}, commit {_commit()}"
    )


def _blas_threads() -> str:
    try:
        from threadpoolctl import threadpool_info

        return ",".join(str(i["num_threads"]) for i in threadpool_info() if i["user_api"] == "blas")
    except ImportError:
        return f"env {os.environ.get('OPENBLAS_NUM_THREADS', 'unset')}"


def _commit() -> str:
    import subprocess

    try:
        out = subprocess.run(
            ["git", "-C", str(HERE), "describe", "--always", "--dirty"],
            capture_output=True,
            text=True,
            timeout=10,
        )
        return out.stdout.strip() or "?"
    except OSError:
        return "?"


def fresh_query_cache() -> None:
    """Drop the process-wide query-embedding cache (the measured queries must miss it)."""
    for enc in encoder_mod._QUERY_ENCODERS.values():
        with enc._lock:
            enc._rows.clear()


class _Recorder:
    """Wraps the engine's query encoder to record what each search sends it."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.name, self.dim = inner.name, inner.dim
        self.calls: list[list[str]] = []

    def encode(self, texts: Sequence[str], **kw: Any) -> np.ndarray:
        self.calls.append(list(texts))
        return self.inner.encode(texts, **kw)


def _timed(f: Callable[[], Any]) -> tuple[float, Any]:
    t = time.perf_counter()
    out = f()
    return (time.perf_counter() - t) * 1e3, out


def measure(
    col: Collection, queries: list[tuple[str, str]], warm: list[tuple[str, str]], reps: int = 3
) -> dict[str, dict[str, list[Any]]]:
    """Per query, ``reps`` interleaved runs of every leg and of the pipeline. Returns the first
    run (``single``) and the per-query minimum over the runs (``best``: the box is shared, and
    the minimum is the uncontended cost)."""
    snap = col.snapshot
    lex = snap.lexical
    vec = snap.vectors[WHOLE]
    encoder = get_encoder(snap.encoder_name or DEFAULT_ENCODER, snap.encoder_graph)
    # warm-up: other queries through everything (model, caches, pages, lazy snapshot parts)
    for _, q in warm:
        col.search(SearchRequest(query=q))
        encoder.encode([q])
        lex.search(lex.query(ALL_FIELD, analysis.stems(q) or ["x"]), 100)
    qenc = query_encoder(snap.encoder_name or DEFAULT_ENCODER, snap.encoder_graph)
    rec = _Recorder(qenc.encoder)
    qenc.encoder = rec
    fresh_query_cache()
    qvecs = encoder.encode([q for _, q in queries])
    single: dict[str, list[Any]] = defaultdict(list)
    best: dict[str, list[Any]] = defaultdict(list)
    try:
        for i, (shape, q) in enumerate(queries):
            stems = analysis.stems(q)
            runs: dict[str, list[float]] = defaultdict(list)
            resp = None
            for r in range(reps):
                ms, _ = _timed(
                    lambda: lex.search(lex.query(ALL_FIELD, stems), 100) if stems else 0  # noqa: B023
                )
                runs["bm25"].append(ms)
                ms, _ = _timed(lambda: vec.search(qvecs[i], 100))  # noqa: B023
                runs["hnsw"].append(ms)
                ms, _ = _timed(lambda: encoder.encode([q]))  # noqa: B023
                runs["enc"].append(ms)
                fresh_query_cache()  # the pipeline's embeddings are not cached
                rec.calls.clear()
                ms, out = _timed(lambda: col.search(SearchRequest(query=q)))  # noqa: B023
                runs["full"].append(ms)
                if r == 0:
                    resp = out
                    sent = [t for c in rec.calls for t in c]
                ms, _ = _timed(lambda: col.search(SearchRequest(query=q)))  # noqa: B023
                runs["hot"].append(ms)
                for k, v in out.diagnostics["timings_ms"].items():
                    runs[f"stage:{k}"].append(v)
                for lens in out.diagnostics["lenses"]:
                    runs[f"lens:{lens['kind']}:{lens['name']}"].append(lens["ms"])
            for agg, dest in ((lambda xs: xs[0], single), (min, best)):
                vals = {k: agg(v) for k, v in runs.items()}
                legs = vals["bm25"] + vals["hnsw"] + vals["enc"]
                for k, v in vals.items():
                    if k.startswith("lens:"):
                        dest["lens:" + k.split(":")[1]].append(v)
                    else:
                        dest[k].append(v)
                dest["legs"].append(legs)
                dest["ratio"].append(vals["full"] / legs)
                dest["overhead"].append(vals["full"] - legs)
                dest["hot_overhead"].append(vals["hot"] - vals["bm25"] - vals["hnsw"])
            assert resp is not None
            d = resp.diagnostics
            for dest in (single, best):
                dest["shape"].append(shape)
                dest["n_lenses"].append(len(d["lenses"]))
                dest["n_texts"].append(len(sent))
                dest["n_single_word_texts"].append(sum(1 for t in sent if len(t.split()) == 1))
                dest["candidates"].append(d["fusion"]["candidates"])
    finally:
        qenc.encoder = rec.inner
    return {"single": single, "best": best}


def report(title: str, col: Collection, path: Path | None, mm: dict[str, Any]) -> None:
    print(f"\n### {title}\n")
    print(f"{len(col):,} nodes, root {col.root[:12]}; {machine()}\n")
    s, b = mm["single"], mm["best"]
    print("| ms per query, one at a time | p50 | p95 | p99 | mean | best-of-3 p50 | p95 | p99 |")
    print("|---|---|---|---|---|---|---|---|")

    def line(name: str, key: str) -> None:
        xs, ys = s[key], b[key]
        print(
            f"| {name} | {pct(xs, 50):.2f} | {pct(xs, 95):.2f} | {pct(xs, 99):.2f} | "
            f"{statistics.fmean(xs):.2f} | {pct(ys, 50):.2f} | {pct(ys, 95):.2f} | "
            f"{pct(ys, 99):.2f} |"
        )

    line("(a) full pipeline, `search()` planned, embeddings not cached", "full")
    line("(a') same query again (embeddings cached)", "hot")
    line("BM25 leg (tantivy, `all` field, top 100)", "bm25")
    line("HNSW leg (`vectors['_all'].search`, top 100)", "hnsw")
    line("encoder leg (1 query, no cache)", "enc")
    line("sum of raw legs", "legs")
    line("planner overhead = (a) - legs", "overhead")
    line("ratio (a) / legs (x)", "ratio")
    line("(a') - BM25 - HNSW (non-encoder overhead)", "hot_overhead")
    print("\n| stage (diagnostics `timings_ms`) | p50 | p95 | p99 | mean | best p50 | p95 | p99 |")
    print("|---|---|---|---|---|---|---|---|")
    for k in sorted(k for k in s if k.startswith("stage:")):
        line(k[6:], k)
    for k in sorted(k for k in s if k.startswith("lens:")):
        line(f"one {k[5:]} lens (n={len(s[k])})", k)
    one_word = sum(b["n_single_word_texts"]) / max(1, sum(b["n_texts"]))
    print(
        f"\nper query: lenses {statistics.fmean(b['n_lenses']):.1f}; texts sent to the encoder "
        f"{statistics.fmean(b['n_texts']):.2f} (one-word texts: {one_word:.0%}); "
        f"fused candidates {statistics.fmean(b['candidates']):.0f}"
    )
    by: dict[str, list[float]] = defaultdict(list)
    for sh, f in zip(b["shape"], b["full"], strict=True):
        by[sh.split("+")[0]].append(f)
        if "+typo" in sh:
            by["(any, with a typo)"].append(f)
    print("\n| shape | n | best-of-3 (a) p50 | p95 |\n|---|---|---|---|")
    for sh, xs in sorted(by.items()):
        print(f"| {sh} | {len(xs)} | {pct(xs, 50):.2f} | {pct(xs, 95):.2f} |")
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"\npeak RSS {rss:,.0f} MB", end="")
    if path is not None:
        size = index_bytes(path, col.root)
        print(
            "; index on disk (objects of this root) "
            + ", ".join(f"{k} {v / 2**20:,.0f} MB" for k, v in size.items())
        )
    else:
        print()


def profile(col: Collection, queries: list[tuple[str, str]], out: Path) -> None:
    from pyinstrument import Profiler

    fresh_query_cache()
    prof = Profiler(interval=0.0002)
    prof.start()
    for _, q in queries:
        col.search(SearchRequest(query=q))
    prof.stop()
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(prof.output_text(unicode=False, color=False, show_all=False))
    print(f"\nprofile: {out}")


def cprofile(col: Collection, queries: list[tuple[str, str]], top: int = 25) -> None:
    import cProfile
    import pstats

    fresh_query_cache()
    pr = cProfile.Profile()
    pr.enable()
    for _, q in queries:
        col.search(SearchRequest(query=q))
    pr.disable()
    st = pstats.Stats(pr)
    n = len(queries)
    rows = sorted(st.stats.items(), key=lambda kv: -kv[1][2])[:top]  # by own time
    print(
        f"\n| top own-time functions (cProfile, {n} queries) | calls/query | own ms/query "
        "| cum ms/query |"
    )
    print("|---|---|---|---|")
    for (file, line, fn), (_cc, nc, tt, ct, _) in rows:
        where = f"{Path(file).name}:{line} {fn}" if line else fn
        print(f"| `{where}` | {nc / n:.1f} | {tt * 1e3 / n:.3f} | {ct * 1e3 / n:.3f} |")


def scifact(
    args: argparse.Namespace,
) -> tuple[Collection, Path, list[tuple[str, str]], list[tuple[str, str]]]:
    """SciFact as a second collection: reused read-only when ``--scifact-collection`` (or
    /work/cache/sf) has ``_all`` vectors and a materialised HEAD snapshot, else built here."""
    from cogitave.ingest.beir import BEIR_SCHEMA, read_beir, read_queries

    data = Path(args.data)
    folder = data / "scifact" if (data / "scifact").is_dir() else data
    for cand in [args.scifact_collection, "/work/cache/sf"]:
        if not cand or not Collection.exists(cand):
            continue
        store = RootStore(cand)
        head = store.head()
        m = store.read_root(head)
        if m.vectors.get(WHOLE) and (store.snapshots / head / "meta.json").exists():
            path = Path(cand)
            col = Collection.open(path)
            break
    else:
        path = Path(args.cache) / f"scifact-b{args.batch}"
        nodes = read_beir(folder).nodes
        if not Collection.exists(path):
            Collection.create(path, BEIR_SCHEMA, encoder=DEFAULT_ENCODER)
        col = Collection.open(path)
        while len(col) < len(nodes):
            k = len(col)
            col.add(nodes[k : k + args.batch])
            col.publish(progress=lambda s, d, t: None, retention=KEEP_ROOTS)
            log(f"scifact: {len(col):,} nodes")
    qs = list(read_queries(folder / "queries.jsonl").values())
    rng = np.random.default_rng(args.seed)
    rng.shuffle(qs)
    measured = [("claim", q) for q in qs[: args.queries]]
    warm = [("claim", q) for q in qs[args.queries : args.queries + args.warm]]
    return col, path, measured, warm


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--nodes", type=int, default=100_000)
    ap.add_argument("--batch", type=int, default=5_000)
    ap.add_argument("--cache", default=str(HERE / ".cache"))
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--queries", type=int, default=500)
    ap.add_argument("--warm", type=int, default=100)
    ap.add_argument("--reps", type=int, default=3, help="runs per query (first and best reported)")
    ap.add_argument("--build-only", action="store_true")
    ap.add_argument(
        "--root",
        default=None,
        help="measure this retained root of the synthetic collection (e.g. the one before "
        "`cogitave compact`) instead of the one with --nodes nodes",
    )
    ap.add_argument("--profile", action="store_true")
    ap.add_argument("--no-synth", action="store_true", help="skip the synthetic collection")
    ap.add_argument(
        "--proxy-encoder",
        action="store_true",
        help="scale run: documents embedded by a hashed bag-of-words stand-in (minutes, not "
        "hours); queries still pay the real encoder's time",
    )
    ap.add_argument(
        "--query-encoder",
        default=DEFAULT_ENCODER,
        help="with --proxy-encoder: the encoder whose query time every query pays (its graph: "
        "COGITAVE_ENCODER_GRAPH=shipped for the shipped one)",
    )
    ap.add_argument("--write", action="store_true", help="write the tables to bench/RESULTS.md")
    ap.add_argument("--data", default=None, help="folder holding scifact/ (BEIR): adds SciFact")
    ap.add_argument(
        "--scifact-collection",
        default=None,
        help="an existing SciFact collection to reuse read-only",
    )
    args = ap.parse_args(argv)
    out = io.StringIO()
    with contextlib.redirect_stdout(_Tee(sys.stdout, out)):
        run(args)
    if args.write and not args.build_only:
        command = " ".join(["bench/latency.py", *(argv if argv is not None else sys.argv[1:])])
        write_section(
            "latency",
            f"## Query latency at {args.nodes:,} nodes ({time.strftime('%Y-%m-%d')})\n\n"
            f"`.venv/bin/python {command}`\n{out.getvalue()}",
        )


class _Tee(io.TextIOBase):
    """Writes to several streams (the terminal and the section's text)."""

    def __init__(self, *streams: Any) -> None:
        self.streams = streams

    def write(self, s: str) -> int:
        for st in self.streams:
            st.write(s)
        return len(s)

    def flush(self) -> None:
        for st in self.streams:
            st.flush()


def run(args: argparse.Namespace) -> None:
    if not args.no_synth:
        params = SynthParams(seed=args.seed)
        synth = Synth(params)
        path = collection_path(Path(args.cache), params, args.batch, args.proxy_encoder)
        enc_name = DEFAULT_ENCODER
        if args.proxy_encoder:
            enc_name = PROXY_ENCODER
            register_encoder(PROXY_ENCODER, HashedBowEncoder)
        t0 = time.perf_counter()
        col = Collection.open(path) if Collection.exists(path) else None
        if col is None or len(col) < args.nodes:
            log(f"building {args.nodes:,} nodes in {path}")
            col = build(path, synth, args.nodes, args.batch, enc_name)
            log(f"build done in {time.perf_counter() - t0:.0f}s")
        b = build_report(path, args.nodes)
        if args.build_only:
            print(json.dumps(b, indent=1))
            return
        if args.proxy_encoder:  # queries: stand-in vectors, real encoder time
            real = get_encoder(args.query_encoder)
            encode_queries(real, ["warm up"])
            register_encoder(PROXY_ENCODER, lambda: HashedBowEncoder(cost_of=real))
        if args.root:
            col = Collection.open(path, args.root)
        elif len(col) != args.nodes:
            col = Collection.open(path, root_with(path, args.nodes))
        else:
            col = with_default_settings(col)
        queries = synth.queries(args.queries, args.nodes, seed=1)
        warm = synth.queries(args.warm, args.nodes, seed=2)
        m = measure(col, queries, warm, args.reps)
        report(f"synthetic, {args.nodes:,} nodes", col, path, m)
        if b:
            print(
                f"build: {b['nodes']:,} nodes in {b['total_s']:.0f}s = "
                f"{b['nodes_per_s']:.1f} nodes/s; encoder {b['encoder_share']:.1%}, lexical "
                f"{b['lexical_share']:.0%}, rest (stats, HNSW, node segments) "
                f"{b['other_share']:.0%}"
            )
        if args.profile:
            cprofile(col, queries)
            profile(col, queries, Path(args.cache) / f"profile-{args.nodes}.txt")
    if args.data:
        col, path, queries, warm = scifact(args)
        m = measure(col, queries, warm, args.reps)
        report(f"SciFact ({path})", col, path, m)
        if args.profile:
            cprofile(col, queries)
            profile(col, queries, Path(args.cache) / "profile-scifact.txt")


if __name__ == "__main__":
    main()
