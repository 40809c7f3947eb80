"""Dense vectors: one vector per node per semantic dimension, HNSW search per dimension.

A publish encodes the semantic dimensions of the nodes it adds and writes, per dimension, one
immutable vector segment of three objects:

- ``keys_obj``: ``uint64`` nids of the rows (the same ids the lexical index stores, so both
  retrievers talk about the same node);
- ``vec_obj``: ``float32`` (n, d) L2-normalised vectors, memory-mapped on read;
- ``hnsw_obj``: a usearch HNSW graph over the rows (cosine), memory-mapped with
  ``restore(view=True)``; absent for segments under :data:`EXACT_BELOW` rows, which are
  searched exactly (a matrix-vector product is faster and exact there).

Search runs per segment and merges by similarity. Dead nids (deleted or replaced) are filtered
with the snapshot's liveness array, over-fetching by the segment's dead count so that a
deleted node never appears and never costs a result slot. When a dimension has more than
:data:`MAX_SEGMENTS` segments the publish merges its live rows into one segment.

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

from cogitave.store.nodes import load_npy, npy_bytes
from cogitave.store.roots import RootStore

EXACT_BELOW = 4096
MAX_SEGMENTS = 8
CONNECTIVITY = 16
EXPANSION_ADD = 128
EXPANSION_SEARCH = 96
SAMPLE_SIZE = 2048


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
        idx = Index(
            ndim=vecs.shape[1],
            metric="cos",
            dtype="f32",
            connectivity=CONNECTIVITY,
            expansion_add=EXPANSION_ADD,
            expansion_search=EXPANSION_SEARCH,
        )
        idx.add(keys, vecs, threads=threads)
        with tempfile.TemporaryDirectory(dir=store.tmp) as tmp:
            path = Path(tmp) / "hnsw.usearch"
            idx.save(str(path))
            entry["hnsw_obj"] = store.put_file(path)
    return entry


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

    def search(self, q: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """Top-``k`` live nids by cosine similarity, best first: (nids, sims)."""
        all_keys: list[np.ndarray] = []
        all_sims: list[np.ndarray] = []
        for s in self.segs:
            if not len(s.keys):
                continue
            want = min(len(s.keys), k + s.dead)
            if s.hnsw is not None:
                m = s.hnsw.search(q, want)
                keys = np.asarray(m.keys, np.uint64)
                sims = 1.0 - np.asarray(m.distances, np.float32)
            else:
                sims_all = s.vecs @ q
                top = (
                    np.argpartition(-sims_all, want - 1)[:want]
                    if want < len(sims_all)
                    else (np.arange(len(sims_all)))
                )
                keys, sims = s.keys[top], sims_all[top]
            live = self.alive[keys.astype(np.int64)]
            all_keys.append(keys[live])
            all_sims.append(sims[live])
        if not all_keys:
            return np.zeros(0, np.uint64), np.zeros(0, np.float32)
        keys = np.concatenate(all_keys)
        sims = np.concatenate(all_sims).astype(np.float32)
        order = np.lexsort((keys, -sims))[:k]
        return keys[order], sims[order]

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


def merge_segments(
    store: RootStore, entries: Sequence[Mapping[str, Any]], alive: np.ndarray
) -> dict[str, Any]:
    """One segment holding the live rows of ``entries``."""
    keys, vecs = [], []
    for e in entries:
        k = load_npy(store, e["keys_obj"])
        live = alive[k.astype(np.int64)]
        keys.append(np.asarray(k[live]))
        vecs.append(np.asarray(load_npy(store, e["vec_obj"])[live]))
    return build_segment(store, np.concatenate(keys), np.concatenate(vecs))


def write_vectors(
    store: RootStore,
    base: Mapping[str, list[Mapping[str, Any]]],
    texts: Mapping[str, tuple[np.ndarray, list[str]]],
    encode: Callable[[str, list[str]], np.ndarray],
    alive: np.ndarray,
) -> dict[str, list[dict[str, Any]]]:
    """New per-dimension segment lists: ``base`` + one segment per dimension with texts
    (``texts[dim] = (nids, texts)``), merged when a dimension passes MAX_SEGMENTS."""
    out: dict[str, list[dict[str, Any]]] = {d: [dict(e) for e in v] for d, v in base.items()}
    for dim, (nids, items) in texts.items():
        if not len(nids):
            continue
        vecs = encode(dim, items)
        out.setdefault(dim, []).append(build_segment(store, nids, vecs))
    for dim, entries in out.items():
        if len(entries) > MAX_SEGMENTS:
            out[dim] = [merge_segments(store, entries, alive)]
    return out
