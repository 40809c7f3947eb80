"""Dense search over one dimension's vector segments: query time and recall by segment layout.

Data: ``--rows`` (default 100,000) seeded random unit vectors of 384 dimensions, clustered:
each is one of ``--centres`` random unit centres plus Gaussian noise, normalised. (i.i.d.
Gaussian vectors in 384 dimensions have no neighbourhoods, every point is about as far from
all others: HNSW recall@10 falls to about 0.36 and builds run twice as slow, which says
nothing about segments; embeddings of text are clustered.) Queries: 300 distinct points drawn
the same way, not in the data, after a warm-up pass of 50 others; each query's time is its best
of ``--rounds`` passes (the shared machine's load comes in bursts).

Layouts, each in a store of its own, searched through :class:`DimVectors` (``search(q, 100)``):

- one segment of all rows;
- four segments of 85% + 3 x 5% of the rows (the 100k layout of the former policy:
  85,000 + 3 x 5,000);
- the tiered policy (:func:`write_vectors`) after 20 publishes of 5% of the rows each;
- the same store after 4 more publishes of 1,000 rows (the policy's widest layout: 2 HNSW +
  4 exact segments);
- one segment whose HNSW stores ``f16`` vectors (half the graph file).

Recall@10 is against the exact top 10 (a matrix-vector product over the layout's rows). Build
time is the time to store the layout (the policy: all its publishes, merges included); "written"
counts the bytes of every object the layout's store received, against the layout's own size.

``--collection PATH`` adds a table read-only on a collection's dimension (``--dim``, default
``_all``) at HEAD: its segments as stored, its largest segment alone, its largest two; queries
are stored vectors of the largest segment plus a little noise.

    .venv/bin/python bench/segments.py [--rows 100000] [--centres 2000] [--seed 5]
        [--rounds 3] [--no-f16] [--collection PATH [--dim _all]] [--write]

Prints a markdown table; ``--write`` puts it in its section of bench/RESULTS.md with the machine.
"""

# ruff: noqa: I001  (cogitave is imported before numpy on purpose)
from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# cogitave before numpy: the package sets process-wide threading defaults (BLAS) that only
# take effect before numpy loads, as in the CLI and the servers.
import cogitave  # noqa: F401
import numpy as np

sys.path.insert(0, str(Path(__file__).parent))

from _machine import machine_line, write_section

from cogitave.store import vectors
from cogitave.store.arrays import npy_bytes
from cogitave.store.roots import RootStore
from usearch.index import Index

DIM = 384
NOISE = 0.08  # per coordinate: a point's cosine to its centre is about 0.55
QUERIES = 300
WARM = 50
K = 100


@dataclass
class Layout:
    name: str
    store: RootStore
    entries: list[dict[str, Any]]
    rows: int
    build_s: float
    written: int
    size: int
    alive: np.ndarray | None = None  # all rows live when None


def unit(x: np.ndarray) -> np.ndarray:
    return (x / np.linalg.norm(x, axis=1, keepdims=True)).astype(np.float32)


def clustered(rng: np.random.Generator, centres: np.ndarray, n: int) -> np.ndarray:
    out = np.empty((n, DIM), np.float32)
    for at in range(0, n, 20_000):
        m = min(20_000, n - at)
        picks = centres[rng.integers(0, len(centres), m)]
        out[at : at + m] = unit(picks + NOISE * rng.standard_normal((m, DIM)))
    return out


def objects_bytes(store: RootStore, entries: Sequence[dict[str, Any]] | None = None) -> int:
    """Bytes of every object in the store, or of the objects ``entries`` name."""
    if entries is None:
        return sum(p.stat().st_size for p in store.objects.iterdir() if p.is_file())
    objs = {v for e in entries for k, v in e.items() if k.endswith("_obj")}
    return sum(store.object_path(o).stat().st_size for o in objs)


def timed_layout(
    root: Path, name: str, rows: int, build: Callable[[RootStore], list[dict[str, Any]]]
) -> Layout:
    store = RootStore(root / name.replace(" ", "_"))
    store.init()
    t0 = time.perf_counter()
    entries = build(store)
    build_s = time.perf_counter() - t0
    lay = Layout(
        name, store, entries, rows, build_s, objects_bytes(store), objects_bytes(store, entries)
    )
    print(f"built {name} in {build_s:.1f} s", file=sys.stderr)
    return lay


def publishes(
    store: RootStore,
    vecs: np.ndarray,
    base: dict[str, list[dict[str, Any]]],
    start: int,
    sizes: Sequence[int],
) -> tuple[dict[str, list[dict[str, Any]]], list[float]]:
    """Publishes of ``sizes`` rows (from row ``start``) through :func:`write_vectors`, one
    dimension; returns the segments and each publish's seconds."""
    alive = np.ones(len(vecs), bool)
    took: list[float] = []
    at = start
    for size in sizes:
        nids = np.arange(at, at + size, dtype=np.uint64)
        chunk = vecs[at : at + size]
        t0 = time.perf_counter()
        base = vectors.write_vectors(
            store, base, {"d": (nids, [""] * size)}, lambda d, items, c=chunk: c, alive
        )
        took.append(time.perf_counter() - t0)
        at += size
    return base, took


def f16_segment(vecs: np.ndarray) -> Callable[[RootStore], list[dict[str, Any]]]:
    def build(store: RootStore) -> list[dict[str, Any]]:
        keys = np.arange(len(vecs), dtype=np.uint64)
        idx = Index(
            ndim=DIM,
            metric="cos",
            dtype="f16",
            connectivity=vectors.CONNECTIVITY,
            expansion_add=vectors.EXPANSION_ADD,
            expansion_search=vectors.EXPANSION_SEARCH,
        )
        idx.add(keys, vecs, threads=0)
        with tempfile.TemporaryDirectory(dir=store.tmp) as tmp:
            path = Path(tmp) / "hnsw.usearch"
            idx.save(str(path))
            hnsw = store.put_file(path)
        return [
            {
                "count": len(keys),
                "keys_obj": store.put_bytes(npy_bytes(keys)),
                "vec_obj": store.put_bytes(npy_bytes(vecs)),
                "hnsw_obj": hnsw,
            }
        ]

    return build


def exact_top(dv: vectors.DimVectors, queries: np.ndarray, k: int) -> list[set[int]]:
    """The exact top ``k`` live nids of each query over the segments of ``dv``."""
    keys = np.concatenate([s.keys for s in dv.segs]).astype(np.int64)
    live = dv.alive[keys]
    keys = keys[live]
    mat = np.concatenate([np.asarray(s.vecs)[dv.alive[s.keys.astype(np.int64)]] for s in dv.segs])
    sims = queries @ mat.T
    top = np.argpartition(-sims, k, axis=1)[:, :k]
    return [set(keys[row].tolist()) for row in top]


def measure(
    layouts: Sequence[Layout], queries: np.ndarray, warm: np.ndarray, rounds: int
) -> list[dict[str, float]]:
    """Per layout: p50/p95 ms of the per-query best of ``rounds`` passes (the passes take
    turns over the layouts, so a burst of load on the shared machine hits them alike), and
    recall@10 against :func:`exact_top`."""
    dvs = [
        vectors.DimVectors(
            lay.store, lay.entries, lay.alive if lay.alive is not None else np.ones(lay.rows, bool)
        )
        for lay in layouts
    ]
    best = np.full((len(layouts), len(queries)), np.inf)
    recalls = np.zeros(len(layouts))
    for r in range(rounds):
        for li, dv in enumerate(dvs):
            exact = exact_top(dv, queries, 10) if r == 0 else []
            for q in warm:
                dv.search(q, K)
            for qi, q in enumerate(queries):
                t0 = time.perf_counter()
                nids, _ = dv.search(q, K)
                best[li, qi] = min(best[li, qi], (time.perf_counter() - t0) * 1000)
                if r == 0:
                    recalls[li] += len(set(nids[:10].tolist()) & exact[qi]) / 10
    return [
        {
            "p50": float(np.percentile(best[li], 50)),
            "p95": float(np.percentile(best[li], 95)),
            "recall": float(recalls[li] / len(queries)),
        }
        for li in range(len(layouts))
    ]


def table(layouts: Sequence[Layout], queries: np.ndarray, warm: np.ndarray, rounds: int) -> str:
    lines = [
        "| layout | segments | search p50 ms | p95 ms | recall@10 | build s | written / size MB |",
        "|---|---|---|---|---|---|---|",
    ]
    for lay, m in zip(layouts, measure(layouts, queries, warm, rounds), strict=True):
        build = "-" if np.isnan(lay.build_s) else f"{lay.build_s:.1f}"
        written = f"{lay.written / 2**20:,.0f}" if lay.written else "-"
        lines.append(
            f"| {lay.name} | {describe(lay.entries)} | {m['p50']:.2f} | {m['p95']:.2f} "
            f"| {m['recall']:.3f} | {build} | {written} / {lay.size / 2**20:,.0f} |"
        )
    return "\n".join(lines)


def stored(path: Path, dim: str, seed: int) -> tuple[list[Layout], np.ndarray, np.ndarray]:
    """Read-only layouts of a collection's dimension at HEAD (as stored, its largest segment
    alone, its largest two) and queries: stored vectors of the largest segment, perturbed."""
    from cogitave.store.arrays import load_npy
    from cogitave.store.nodes import NodeTable

    store = RootStore(path)
    manifest = store.read_root(store.head())
    entries = sorted(manifest.vectors[dim], key=lambda e: -e["count"])
    alive = NodeTable(store, manifest.segments, manifest.next_nid).alive
    rows = sum(e["count"] for e in entries)

    def lay(name: str, es: list[dict[str, Any]]) -> Layout:
        return Layout(name, store, es, rows, float("nan"), 0, objects_bytes(store, es), alive)

    layouts = [lay("as stored", manifest.vectors[dim]), lay("largest alone", entries[:1])]
    if len(entries) > 2:
        layouts.append(lay("largest two", entries[:2]))
    rng = np.random.default_rng(seed)
    base = load_npy(store, entries[0]["vec_obj"])
    pick = np.sort(rng.choice(len(base), QUERIES + WARM, replace=False))
    qs = unit(np.asarray(base[pick]) + 0.02 * rng.standard_normal((len(pick), base.shape[1])))
    order = rng.permutation(len(qs))
    return layouts, qs[order[:QUERIES]], qs[order[QUERIES:]]


def describe(entries: Sequence[dict[str, Any]]) -> str:
    parts = [f"{e['count']:,}{'' if e.get('hnsw_obj') else ' exact'}" for e in entries]
    return " + ".join(parts)


def main(argv: Sequence[str] | None = None) -> None:
    ap = argparse.ArgumentParser(
        description=__doc__.split("\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--rows", type=int, default=100_000)
    ap.add_argument("--centres", type=int, default=2_000)
    ap.add_argument("--seed", type=int, default=5)
    ap.add_argument("--rounds", type=int, default=3, help="passes per layout (best kept)")
    ap.add_argument("--no-f16", action="store_true", help="skip the f16 line")
    ap.add_argument("--collection", help="also time the stored layouts of this collection")
    ap.add_argument("--dim", default="_all", help="the dimension --collection reads")
    ap.add_argument("--write", action="store_true", help="replace its section of bench/RESULTS.md")
    args = ap.parse_args(argv)

    t_start = time.perf_counter()
    rng = np.random.default_rng(args.seed)
    centres = unit(rng.standard_normal((args.centres, DIM)))
    small_rows = 4 * 1_000
    vecs = clustered(rng, centres, args.rows + small_rows)
    queries = clustered(rng, centres, QUERIES)
    warm = clustered(rng, centres, WARM)
    n = args.rows
    step = n // 20
    big = n - 3 * step

    root = Path(tempfile.mkdtemp(prefix="cogitave-segments-"))
    try:
        layouts: list[Layout] = []
        layouts.append(
            timed_layout(
                root,
                "one segment",
                n,
                lambda s: [vectors.build_segment(s, np.arange(n, dtype=np.uint64), vecs[:n])],
            )
        )

        def four(s: RootStore) -> list[dict[str, Any]]:
            out = [vectors.build_segment(s, np.arange(big, dtype=np.uint64), vecs[:big])]
            for at in range(big, n, step):
                keys = np.arange(at, at + step, dtype=np.uint64)
                out.append(vectors.build_segment(s, keys, vecs[at : at + step]))
            return out

        layouts.append(timed_layout(root, "4 segments (former)", n, four))

        took: list[float] = []

        def tiered(s: RootStore) -> list[dict[str, Any]]:
            segs, t = publishes(s, vecs, {}, 0, [step] * 20)
            took.extend(t)
            return segs["d"]

        lay = timed_layout(root, "tiered policy", n, tiered)
        layouts.append(lay)
        slow = int(np.argmax(took))
        notes = [
            f"- tiered policy: 20 publishes of {step:,} rows: median "
            f"{np.median(took):.1f} s, slowest {took[slow]:.1f} s (publish {slow + 1}); "
            f"per publish: " + ", ".join(f"{t:.1f}" for t in took) + " s"
        ]
        before = objects_bytes(lay.store)
        t0 = time.perf_counter()
        segs, more = publishes(lay.store, vecs, {"d": lay.entries}, n, [small_rows // 4] * 4)
        layouts.append(
            Layout(
                "tiered + 4 small",
                lay.store,
                segs["d"],
                n + small_rows,
                time.perf_counter() - t0,
                objects_bytes(lay.store) - before,
                objects_bytes(lay.store, segs["d"]),
            )
        )
        notes.append(
            f"- tiered + 4 small: 4 more publishes of {small_rows // 4:,} rows on the tiered "
            f"layout: " + ", ".join(f"{t * 1000:.0f}" for t in more) + " ms (build s and "
            "written count those 4 publishes only)"
        )
        if not args.no_f16:
            layouts.append(timed_layout(root, "one segment f16", n, f16_segment(vecs[:n])))

        synth = table(layouts, queries, warm, args.rounds)
    finally:
        shutil.rmtree(root, ignore_errors=True)

    body = (
        f"`.venv/bin/python bench/segments.py --rows {n}` ({n:,} clustered random unit "
        f"vectors, {DIM}-d, {args.centres:,} centres, seed {args.seed}; "
        f"`DimVectors.search(q, {K})` over {QUERIES} distinct queries after {WARM} warm-up "
        f"ones, each query's best of {args.rounds} passes; recall@10 against exact search; "
        f"{time.perf_counter() - t_start:.0f} s).\n\n{synth}\n\n" + "\n".join(notes) + "\n"
    )
    if args.collection:
        t0 = time.perf_counter()
        layouts, queries, warm = stored(Path(args.collection), args.dim, args.seed)
        body += (
            f"\nRead-only on `{args.collection}`, dimension `{args.dim}` at HEAD "
            f"(`--collection`; queries: {QUERIES} stored vectors of its largest segment plus "
            f"noise, {time.perf_counter() - t0:.0f} s):\n\n"
            f"{table(layouts, queries, warm, args.rounds)}\n"
        )
    print(body)
    if args.write:
        head = f"## Vector segments ({time.strftime('%Y-%m-%d')})\n\n{machine_line()}\n\n"
        write_section("segments", head + body)


if __name__ == "__main__":
    main()
