"""Dense vectors: one vector per node per semantic dimension, HNSW search per dimension.

A dimension's vectors are a short list of immutable segments, each of three objects:

- ``keys_obj``: ``uint64`` nids of the rows (the same ids the lexical index stores, so both
  retrievers talk about the same node);
- ``vec_obj``: ``float32`` (n, d) L2-normalised vectors, memory-mapped on read;
- ``hnsw_obj``: a usearch HNSW graph over the rows (cosine, half-precision), memory-mapped with
  ``restore(view=True)``. *Large* segments have one; *small* ones (under :data:`EXACT_BELOW`
  rows) do not and are searched exactly (a matrix-vector product is faster and exact there).

Search runs per segment and merges by similarity. Dead nids (deleted or replaced) are filtered
with the snapshot's liveness array. An HNSW segment is asked for ``k`` plus a margin in
proportion to its dead rows, and again for ``k`` plus all of them when too few live rows came
back: a deleted node never appears and never costs a result slot, and a few dead rows in a
large segment do not multiply the cost of every query.

Merge policy. Query time grows with the number of segments: each HNSW search has a cost that
grows only slowly with its rows, and indexes (or exact matrices) searched in turn evict each
other from the CPU caches (bench/RESULTS.md, "Vector segments": on the 100k benchmark
collection, 0.84 ms over one segment of 85,000 rows, 1.35 ms over 85,000 + 5,000, 2.85 ms over
85,000 + 3 x 5,000). So every publish, after adding its segment, keeps each dimension at no
more than :data:`MAX_LARGE` large and :data:`MAX_SMALL` small segments (a tiered policy):

1. segments with no live row are dropped; a large segment with more than :data:`MAX_DEAD` of
   its rows dead is rewritten from its live rows;
2. the publish's rows of the dimension become one new segment (small or large by size);
3. small segments: when there are more than :data:`MAX_SMALL`, or they hold
   :data:`EXACT_BELOW` rows or more together, their live rows are merged into one segment,
   which is large (gets an HNSW) when it has :data:`EXACT_BELOW` rows or more;
4. large segments: when there are more than :data:`MAX_LARGE`, the others are merged into the
   largest *incrementally*: its HNSW is loaded writable, the others' live rows are added to
   it, and it is stored as a new object. Its keys and vectors are the old rows followed by the
   added ones, aligned with the graph; its dead rows stay in all three (search counts them as
   dead) until they pass :data:`MAX_DEAD`, when the merge rebuilds from live rows instead.

Cost of a publish, per dimension, for ``r`` new rows: a new exact segment of ``r`` rows when
``r`` < :data:`EXACT_BELOW`, else an HNSW over ``r`` rows. About every :data:`MAX_SMALL` small
publishes the small segments (under 2 x :data:`EXACT_BELOW` rows together) are rewritten. The
largest segment is rewritten only when a third large segment appears: on every second publish
of :data:`EXACT_BELOW` rows or more, and once per about 2 x :data:`EXACT_BELOW` rows of small
publishes (the publish that makes the small ones large); that costs graph insertion for the
added rows only, but reading and writing the largest segment's objects (about 3 KB per row at
384 dimensions: the vectors are in the ``.npy`` and in the graph file). A segment is rebuilt
whole only past :data:`MAX_DEAD` dead rows, so after at least that many deletes. A 1-node
publish thus writes one small segment, and rewrites a large one only when it completes
:data:`EXACT_BELOW` rows of small publishes or takes a segment past :data:`MAX_DEAD`.

``publish(..., compact=True)`` force-merges: each dimension becomes one segment of its live
rows (the others added to the largest when it has no dead row, else rebuilt from all live
rows); a dimension already in one segment without dead rows is kept as it is.

Choice of library (measured in bench/RESULTS.md): usearch over hnswlib because its index file
memory-maps (a root opens in milliseconds, pages are shared between processes, and the file is
an ordinary content-addressed object), at similar query time and recall.
"""

from __future__ import annotations

import tempfile
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import onnxruntime  # noqa: F401  (must load before usearch: the reverse order segfaults)
from usearch.index import Index

from cogitave.store.arrays import load_npy, npy_bytes
from cogitave.store.roots import RootStore

EXACT_BELOW = 16384
"""Segments with fewer rows are small: no HNSW, searched exactly. Measured here (384-d float32
rows, top 100, one thread, quiet box): an exact search takes 0.21 ms p50 over 5,183 rows,
0.31 over 8,192, 0.56 over 16,384, 1.07 over 32,768; HNSW with exact rescoring took 0.55 ms
over 5,183 rows. So below ~16k rows exact search is as fast and has no recall loss; a
documentation site (FastAPI 3,221 nodes, Hugo 4,508) is searched exactly. A segment written
with a graph under an earlier, lower bound is searched exactly too (its graph is not used)."""
MAX_SMALL = 4
"""Small segments a dimension may hold after a publish."""
MAX_LARGE = 2
"""Large (HNSW) segments a dimension may hold after a publish."""
MAX_DEAD = 0.2
"""Fraction of dead rows above which a large segment is rewritten from its live rows."""
HNSW_DTYPE = "f16"
"""Scalar type of the vectors inside an HNSW graph (the ``.npy`` rows stay float32). Measured
on SciFact's MiniLM vectors against exact search: recall@10 0.9950 (f16) vs 0.9947 (f32),
recall@100 0.9686 vs 0.9675, search 0.125 vs 0.175 ms; the graph file is a third smaller.
Segments written as f32 keep their type (usearch records it in the file)."""
CONNECTIVITY = 16
EXPANSION_ADD = 128
EXPANSION_SEARCH = 96
SAMPLE_SIZE = 2048
OVERSAMPLE = 3
"""Candidates asked of an HNSW segment per result wanted, before exact rescoring. Measured on
SciFact (5,183 MiniLM rows, 300 claims, top 100 against exact search): recall@100 0.968 with
no oversampling and no rescoring, 0.993 / 0.997 / 0.999 at 2 / 3 / 4, search p50 0.55 / 0.68 /
0.78 ms; at 2 the hybrid top 10 of one HNSW segment and of exact shards differed on 2% of
queries."""
OVERFETCH = 16
"""Extra results asked of an HNSW segment with dead rows, besides ``k`` x twice its dead
fraction (the whole dead count is asked only if that was not enough)."""

FILTER_EXACT_ROWS = 10_000
"""A filtered search of an HNSW segment scores the allowed rows exactly up to this many
(measured in bench/filters.py against the graph search with oversampling)."""

ROWS_PER_GRAPH_RESULT = 5
"""A filtered graph search asked for ``w`` results costs about as much as scoring ``5 w``
allowed rows exactly (measured at 100,000 rows: a gather and product 3.5-4.3 us per row,
the graph 20-25 us per result asked), so a filter that would make the graph walk that deep
is searched exactly: at 11% allowed the walk asks 4,100 results for 100."""

Progress = Callable[[str, int, int], None]


def _new_index(ndim: int) -> Index:
    return Index(
        ndim=ndim,
        metric="cos",
        dtype=HNSW_DTYPE,
        connectivity=CONNECTIVITY,
        expansion_add=EXPANSION_ADD,
        expansion_search=EXPANSION_SEARCH,
    )


def _put_index(store: RootStore, idx: Index) -> str:
    with tempfile.TemporaryDirectory(dir=store.tmp) as tmp:
        path = Path(tmp) / "hnsw.usearch"
        idx.save(str(path))
        return store.put_file(path)


def build_segment(
    store: RootStore, keys: np.ndarray, vecs: np.ndarray, *, threads: int = 0
) -> dict[str, Any]:
    """Store one vector segment (keys, vectors, and an HNSW graph when large enough)."""
    keys = np.ascontiguousarray(keys, np.uint64)
    vecs = np.ascontiguousarray(vecs, np.float32)
    entry: dict[str, Any] = {
        "count": len(keys),
        "keys_obj": store.put_bytes(npy_bytes(keys)),
        "vec_obj": store.put_bytes(npy_bytes(vecs)),
    }
    if len(keys) >= EXACT_BELOW:
        idx = _new_index(vecs.shape[1])
        idx.add(keys, vecs, threads=threads)
        entry["hnsw_obj"] = _put_index(store, idx)
    return entry


def _fit(mask: np.ndarray, size: int) -> np.ndarray:
    """``mask`` cut or padded (with False) to ``size`` entries."""
    if len(mask) >= size:
        return mask[:size]
    return np.concatenate([mask, np.zeros(size - len(mask), bool)])


def _exact(
    keys: np.ndarray, vecs: np.ndarray, q: np.ndarray, k: int, live: np.ndarray | None
) -> tuple[np.ndarray, np.ndarray]:
    """The top ``k`` rows by exact cosine among those whose nid ``live`` allows (all: None)."""
    sims = vecs @ q
    if live is not None:
        ok = live[keys.astype(np.int64)]
        keys, sims = keys[ok], sims[ok]
    if k < len(sims):
        top = np.argpartition(-sims, k - 1)[:k]
        keys, sims = keys[top], sims[top]
    return keys, sims


@dataclass
class _Seg:
    keys: np.ndarray
    vecs: np.ndarray
    hnsw: Index | None
    dead: int


class DimVectors:
    """All vector segments of one dimension in a root."""

    def __init__(
        self, store: RootStore, entries: Sequence[Mapping[str, Any]], alive: np.ndarray
    ) -> None:
        self.alive = alive
        self.segs: list[_Seg] = []
        for e in entries:
            keys = load_npy(store, e["keys_obj"])
            vecs = load_npy(store, e["vec_obj"])
            hnsw = None
            if e.get("hnsw_obj"):
                hnsw = Index.restore(str(store.object_path(e["hnsw_obj"])), view=True)
                hnsw.expansion_search = EXPANSION_SEARCH
            live = alive[keys.astype(np.int64)] if len(keys) else np.zeros(0, bool)
            self.segs.append(_Seg(keys, vecs, hnsw, int(len(keys) - live.sum())))
        self.dim = int(self.segs[0].vecs.shape[1]) if self.segs else 0
        self._row: tuple[np.ndarray, np.ndarray] | None = None
        self._sample: np.ndarray | None = None
        self._lock = threading.Lock()

    @property
    def count(self) -> int:
        return sum(len(s.keys) - s.dead for s in self.segs)

    def search(
        self, q: np.ndarray, k: int, allowed: np.ndarray | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """Top-``k`` live nids by cosine similarity, best first: (nids, sims). ``allowed``
        (a bool per nid) keeps the search to those nodes: it finds ``k`` of them whenever ``k``
        have vectors (see :meth:`_search_allowed`)."""
        all_keys: list[np.ndarray] = []
        all_sims: list[np.ndarray] = []
        live = self.alive if allowed is None else self.alive & _fit(allowed, len(self.alive))
        for s in self.segs:
            if not len(s.keys):
                continue
            if s.hnsw is not None and len(s.keys) >= EXACT_BELOW:
                if allowed is None:
                    keys, sims = self._search_hnsw(s, q, k)
                else:
                    keys, sims = self._search_allowed(s, q, k, live)
            else:
                keys, sims = _exact(s.keys, s.vecs, q, k, live)
            all_keys.append(keys)
            all_sims.append(sims)
        if not all_keys:
            return np.zeros(0, np.uint64), np.zeros(0, np.float32)
        keys = np.concatenate(all_keys)
        sims = np.concatenate(all_sims).astype(np.float32)
        order = np.lexsort((keys, -sims))[:k]
        return keys[order], sims[order]

    def _search_allowed(
        self, s: _Seg, q: np.ndarray, k: int, live: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """The top ``k`` rows of an HNSW segment among the ``live`` (allowed and alive) nids.

        Chosen by how many rows are allowed, as a query planner chooses by a filter's
        cardinality: up to :data:`FILTER_EXACT_ROWS` allowed rows, or up to
        :data:`ROWS_PER_GRAPH_RESULT` per result the graph would be asked for, are scored
        exactly (a gather and a product, cheaper than a graph walk that must skip most of what
        it meets); more
        are found by asking the graph for ``k`` divided by the allowed share (x1.5), deepened
        x4 until ``k`` allowed rows come back, and exactly when the graph runs dry."""
        allowed_rows = np.flatnonzero(live[s.keys.astype(np.int64)])
        n, m = len(s.keys), len(allowed_rows)
        want = min(n, int(OVERSAMPLE * k * 1.5 * n / max(m, 1)) + OVERFETCH)
        if m <= FILTER_EXACT_ROWS or m <= ROWS_PER_GRAPH_RESULT * want:
            return _exact(s.keys[allowed_rows], s.vecs[allowed_rows], q, k, None)
        assert s.hnsw is not None
        while True:
            found = s.hnsw.search(q, want)
            keys = np.asarray(found.keys, np.uint64)
            keys = keys[live[keys.astype(np.int64)]]
            if len(keys) >= min(OVERSAMPLE * k, m) or want >= n:
                break
            want = min(n, want * 4)
        if len(keys) < min(k, m):  # the graph could not reach them: score every allowed row
            return _exact(s.keys[allowed_rows], s.vecs[allowed_rows], q, k, None)
        _, row_of = self._rows()
        sims = s.vecs[row_of[keys.astype(np.int64)]] @ q
        top = np.lexsort((keys, -sims))[:k]
        return keys[top], sims[top].astype(np.float32)

    def _search_hnsw(self, s: _Seg, q: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """The segment's top-``k`` live rows, by exact float32 cosine over the graph's
        candidates.

        The graph holds half-precision vectors and is approximate, so it is asked for
        :data:`OVERSAMPLE` x ``k`` candidates and they are rescored from the stored float32
        rows (a gather and a (3k, d) product, ~30 us): the similarities are an exact search's
        (to BLAS's last bit), so a dimension searched in one HNSW segment or split over
        exact segments (shards, small publishes) orders the same candidates the same way,
        and a true neighbour just past ``k`` in the graph's order still makes the cut.

        Asking for the candidates plus every dead row is always enough but costs a search
        that deep (1,100 results cost about 8x 100); a margin in proportion to the dead
        fraction is enough unless the dead rows crowd this query's neighbourhood, and then
        the full depth is asked."""
        n = len(s.keys)
        ask = int(OVERSAMPLE * k)
        full = min(n, ask + s.dead)
        want = min(full, ask + (2 * ask * s.dead) // n + OVERFETCH) if s.dead else full
        need = min(ask, n - s.dead)
        assert s.hnsw is not None
        while True:
            m = s.hnsw.search(q, want)
            keys = np.asarray(m.keys, np.uint64)
            live = self.alive[keys.astype(np.int64)]
            if want >= full or int(live.sum()) >= need:
                break
            want = min(full, want * 4)
        keys = keys[live]
        _, row_of = self._rows()
        sims = s.vecs[row_of[keys.astype(np.int64)]] @ q
        top = np.lexsort((keys, -sims))[:k]
        return keys[top], sims[top].astype(np.float32)

    def _rows(self) -> tuple[np.ndarray, np.ndarray]:
        """Per nid: the segment holding its vector (-1: none) and the row in it. Arrays, built
        once per snapshot with numpy (a dict of 100k nids took 79 ms and a Python loop per
        lookup)."""
        with self._lock:
            if self._row is None:
                size = len(self.alive)
                seg = np.full(size, -1, np.int32)
                row = np.zeros(size, np.int64)
                for si, s in enumerate(self.segs):
                    keys = s.keys.astype(np.int64)
                    seg[keys] = si
                    row[keys] = np.arange(len(keys))
                self._row = (seg, row)
            return self._row

    def vectors_of(self, nids: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
        """Stored vectors of ``nids`` (zeros where a node has none) and a has-vector mask."""
        seg_of, row_of = self._rows()
        ids = np.asarray(nids, np.int64).reshape(-1)
        out = np.zeros((len(ids), self.dim), np.float32)
        inside = (ids >= 0) & (ids < len(seg_of))
        seg = np.where(inside, seg_of[np.where(inside, ids, 0)], -1)
        for si in np.unique(seg[seg >= 0]).tolist():
            pick = np.flatnonzero(seg == si)
            out[pick] = self.segs[si].vecs[row_of[ids[pick]]]
        return out, seg >= 0

    def sample(self) -> np.ndarray:
        """A seeded uniform sample (up to :data:`SAMPLE_SIZE`) of the live vectors, used to
        estimate the query's similarity percentiles over the whole dimension."""
        with self._lock:
            if self._sample is None:
                live = [
                    (si, np.flatnonzero(self.alive[s.keys.astype(np.int64)]))
                    for si, s in enumerate(self.segs)
                ]
                total = sum(len(r) for _, r in live)
                rng = np.random.default_rng(0)
                parts = []
                for si, rows in live:
                    take = (
                        rows
                        if total <= SAMPLE_SIZE
                        else rng.choice(
                            rows, size=round(SAMPLE_SIZE * len(rows) / total), replace=False
                        )
                    )
                    if len(take):
                        parts.append(np.asarray(self.segs[si].vecs[np.sort(take)]))
                self._sample = (
                    np.concatenate(parts) if parts else np.zeros((0, self.dim), np.float32)
                )
            return self._sample


@dataclass
class _Part:
    """One segment of a dimension while a publish plans its merges: a stored segment
    (``entry``), or rows held in memory that are not stored yet (``keys``/``vecs``)."""

    rows: int
    live: int
    entry: Mapping[str, Any] | None = None
    keys: np.ndarray | None = None
    vecs: np.ndarray | None = None

    @property
    def large(self) -> bool:
        if self.entry is not None:
            return bool(self.entry.get("hnsw_obj"))
        return self.rows >= EXACT_BELOW

    @property
    def dead(self) -> int:
        return self.rows - self.live


def _stored(store: RootStore, entry: Mapping[str, Any], alive: np.ndarray) -> _Part:
    keys = load_npy(store, entry["keys_obj"])
    live = int(alive[keys.astype(np.int64)].sum()) if len(keys) else 0
    return _Part(rows=len(keys), live=live, entry=entry)


def _pending(keys: np.ndarray, vecs: np.ndarray) -> _Part:
    return _Part(rows=len(keys), live=len(keys), keys=keys, vecs=vecs)


def _live_rows(store: RootStore, part: _Part, alive: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Keys and vectors (in memory) of the part's live rows."""
    if part.entry is None:
        assert part.keys is not None and part.vecs is not None
        return part.keys, part.vecs
    keys = load_npy(store, part.entry["keys_obj"])
    live = alive[keys.astype(np.int64)]
    return np.asarray(keys[live]), np.asarray(load_npy(store, part.entry["vec_obj"])[live])


def _gather(
    store: RootStore, parts: Sequence[_Part], alive: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    rows = [_live_rows(store, p, alive) for p in parts]
    return np.concatenate([k for k, _ in rows]), np.concatenate([v for _, v in rows])


def _merge(
    store: RootStore,
    target: _Part,
    others: Sequence[_Part],
    alive: np.ndarray,
    *,
    max_dead: float,
    threads: int = 0,
) -> _Part:
    """``target`` and the live rows of ``others`` as one stored segment.

    Incremental when ``target`` is a stored HNSW segment with at most ``max_dead`` of its rows
    dead: a writable copy of its index gets the others' rows added (graph insertion work for
    those rows only) and its keys and vectors are extended in the same order, keeping its dead
    rows. Otherwise the segment is built from all live rows."""
    e = target.entry
    if e is not None and e.get("hnsw_obj") and target.dead <= max_dead * target.rows:
        idx = Index.restore(
            str(store.object_path(e["hnsw_obj"])),
            connectivity=CONNECTIVITY,
            expansion_add=EXPANSION_ADD,
            expansion_search=EXPANSION_SEARCH,
        )
        if idx is not None and len(idx) == target.rows:
            idx.expansion_add = EXPANSION_ADD
            add_keys, add_vecs = (
                _gather(store, others, alive)
                if others
                else (np.zeros(0, np.uint64), np.zeros((0, idx.ndim), np.float32))
            )
            add_keys = np.ascontiguousarray(add_keys, np.uint64)
            add_vecs = np.ascontiguousarray(add_vecs, np.float32)
            if len(add_keys):
                idx.add(add_keys, add_vecs, threads=threads)
            keys = np.concatenate([load_npy(store, e["keys_obj"]), add_keys])
            vecs = np.concatenate([load_npy(store, e["vec_obj"]), add_vecs])
            entry = {
                "count": len(keys),
                "keys_obj": store.put_bytes(npy_bytes(keys)),
                "vec_obj": store.put_bytes(npy_bytes(vecs)),
                "hnsw_obj": _put_index(store, idx),
            }
            return _Part(rows=len(keys), live=target.live + len(add_keys), entry=entry)
    keys, vecs = _gather(store, [target, *others], alive)
    return _Part(rows=len(keys), live=len(keys), entry=build_segment(store, keys, vecs))


def _store(store: RootStore, part: _Part) -> dict[str, Any]:
    if part.entry is not None:
        return dict(part.entry)
    assert part.keys is not None and part.vecs is not None
    return build_segment(store, part.keys, part.vecs)


def _parts(
    store: RootStore,
    entries: Sequence[Mapping[str, Any]],
    alive: np.ndarray,
    new: tuple[np.ndarray, np.ndarray] | None,
) -> list[_Part]:
    """The stored segments that still have a live row, then the new rows (if any)."""
    parts = [p for e in entries if (p := _stored(store, e, alive)).live]
    if new is not None and len(new[0]):
        parts.append(_pending(np.asarray(new[0], np.uint64), np.asarray(new[1], np.float32)))
    return parts


def tier(
    store: RootStore,
    entries: Sequence[Mapping[str, Any]],
    alive: np.ndarray,
    new: tuple[np.ndarray, np.ndarray] | None = None,
) -> list[dict[str, Any]]:
    """One dimension's segments after a publish: ``entries`` plus the ``new`` rows (keys,
    vectors), merged by the tiered policy of the module docstring. New rows that a merge
    takes in are never built as a segment of their own."""
    parts = [
        _pending(*_live_rows(store, p, alive))
        if p.large and p.entry is not None and p.dead > MAX_DEAD * p.rows
        else p
        for p in _parts(store, entries, alive, new)
    ]
    small = [p for p in parts if not p.large]
    if len(small) > MAX_SMALL or (len(small) > 1 and sum(p.rows for p in small) >= EXACT_BELOW):
        merged = _pending(*_gather(store, small, alive))
        parts = [p for p in parts if p.large] + [merged]

    large = sorted((p for p in parts if p.large), key=lambda p: -p.rows)  # stable: oldest first
    if len(large) > MAX_LARGE:
        target, others = large[0], large[1:]
        merged = _merge(store, target, others, alive, max_dead=MAX_DEAD)
        parts = [merged if p is target else p for p in parts if not any(p is o for o in others)]
    return [_store(store, p) for p in parts]


def compact_dimension(
    store: RootStore,
    entries: Sequence[Mapping[str, Any]],
    alive: np.ndarray,
    new: tuple[np.ndarray, np.ndarray] | None = None,
) -> list[dict[str, Any]]:
    """One segment of the live rows of ``entries`` and the ``new`` rows (none when no row is
    live): the others added to the largest when it has no dead row, else rebuilt."""
    parts = _parts(store, entries, alive, new)
    if not parts:
        return []
    if len(parts) == 1 and not parts[0].dead:
        return [_store(store, parts[0])]
    large = sorted(parts, key=lambda p: -p.rows)
    return [_store(store, _merge(store, large[0], large[1:], alive, max_dead=0.0))]


def write_vectors(
    store: RootStore,
    base: Mapping[str, Sequence[Mapping[str, Any]]],
    texts: Mapping[str, tuple[np.ndarray, list[str]]],
    encode: Callable[[str, list[str]], np.ndarray],
    alive: np.ndarray,
    *,
    compact: bool = False,
    progress: Progress | None = None,
) -> dict[str, list[dict[str, Any]]]:
    """New per-dimension segment lists: ``base`` + the vectors of ``texts[dim] = (nids,
    texts)``, each dimension kept to the tiered policy (also one without new rows: its dead
    rows may call for a rewrite); with ``compact``, one segment per dimension."""
    out: dict[str, list[dict[str, Any]]] = {d: [dict(e) for e in v] for d, v in base.items()}
    dims = list(dict.fromkeys([*base, *texts]))
    for i, dim in enumerate(dims):
        nids, items = texts.get(dim, (np.zeros(0, np.uint64), []))
        new = (nids, encode(dim, items)) if len(nids) else None
        entries = (compact_dimension if compact else tier)(store, out.get(dim, []), alive, new)
        if entries or dim in out:
            out[dim] = entries
        if progress:
            progress("vectors", i + 1, len(dims))
    return out
