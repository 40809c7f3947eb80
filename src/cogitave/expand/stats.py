"""Write-time corpus statistics per dimension: vocabulary with document frequencies, bigrams.

Computed when nodes are written, stored as one content-addressed blob of the root, and read at
query time with no recomputation. The planner uses them for IDF routing, the DF guard, and the
corpus-derived rewrites (spell correction against the vocabulary, compound splitting and
adjacent merging against bigram counts).

Per dimension:

- ``n_docs``: points, i.e. nodes with a non-empty value in the dimension;
- ``stems``: analysed term -> df (what BM25 matches; what routing weighs);
- ``surface``: lowercased unstemmed token -> df (what the rewrites compare against);
- bigrams: df of adjacent surface-token pairs, kept as 64-bit hashes of the pair (sorted
  ``uint64`` keys + ``int32`` counts) so that a large corpus does not need a string per pair.

The text unit :data:`~cogitave.schema.WHOLE` (the node's fields together: every semantic
dimension that is not a facet) has its own entry: ``n_docs`` and the df of stems and surface
tokens over the union of the fields (no bigrams: the rewrites read those per dimension). The
planner routes to it as one dimension. Roots written before it have no such entry;
:meth:`CorpusStats.dim` then gives the per-field maxima (a lower bound of the union).

Statistics are additive: a publish adds the delta of its new nodes and subtracts the delta of
the nodes it deletes or replaces, so the root's statistics always equal a full recount.
"""

from __future__ import annotations

import hashlib
import io
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np

from cogitave.expand import analysis
from cogitave.nodes import Node
from cogitave.schema import WHOLE, Schema
from cogitave.texts import dim_texts

_MASK = np.uint64(0xFFFFFFFFFFFFFFFF)
_MIX = np.uint64(0x9E3779B97F4A7C15)


def token_hash(token: str) -> int:
    """Stable 64-bit hash of a token (blake2b; the same in every process)."""
    return int.from_bytes(hashlib.blake2b(token.encode(), digest_size=8).digest(), "little")


def _pair_keys(h: np.ndarray) -> np.ndarray:
    """Keys of adjacent pairs from per-token hashes (order-sensitive, wraps mod 2**64)."""
    with np.errstate(over="ignore"):
        return (h[:-1] * _MIX) ^ h[1:]


def bigram_key(a: str, b: str) -> int:
    h = np.array([token_hash(a), token_hash(b)], dtype=np.uint64)
    return int(_pair_keys(h)[0])


@dataclass
class DimStats:
    """Statistics of one dimension."""

    n_docs: int = 0
    stems: dict[str, int] = field(default_factory=dict)
    surface: dict[str, int] = field(default_factory=dict)
    bigram_keys: np.ndarray = field(default_factory=lambda: np.zeros(0, np.uint64))
    bigram_df: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))

    def df(self, stem: str) -> int:
        return self.stems.get(stem, 0)

    def surface_df(self, token: str) -> int:
        return self.surface.get(token, 0)

    def bigram(self, a: str, b: str) -> int:
        """Number of points in which surface tokens ``a b`` appear adjacent."""
        if not len(self.bigram_keys):
            return 0
        key = np.uint64(bigram_key(a, b))
        i = int(np.searchsorted(self.bigram_keys, key))
        if i < len(self.bigram_keys) and self.bigram_keys[i] == key:
            return int(self.bigram_df[i])
        return 0


@dataclass
class CorpusStats:
    """Statistics of every dimension of a root."""

    n_nodes: int = 0
    dims: dict[str, DimStats] = field(default_factory=dict)

    def dim(self, name: str) -> DimStats:
        got = self.dims.get(name)
        if got is None and name == WHOLE:
            got = self.dims[WHOLE] = self._whole_from_fields()
        return got or DimStats()

    fields: tuple[str, ...] = ()
    """The field dimensions whose union is :data:`WHOLE` (set by the reader of the root)."""

    def _whole_from_fields(self) -> DimStats:
        """Per-field maxima, for roots written before the text unit had statistics."""
        parts = [self.dims[d] for d in self.fields if d in self.dims]
        out = DimStats(n_docs=max((p.n_docs for p in parts), default=0))
        for p in parts:
            for kind in ("stems", "surface"):
                table: dict[str, int] = getattr(out, kind)
                for k, v in getattr(p, kind).items():
                    if v > table.get(k, 0):
                        table[k] = v
        return out

    def to_bytes(self) -> bytes:
        arrays: dict[str, np.ndarray] = {"n_nodes": np.array([self.n_nodes], np.int64)}
        arrays["dims"] = _encode_strings(list(self.dims))
        for i, (_, d) in enumerate(self.dims.items()):
            arrays[f"{i}.n_docs"] = np.array([d.n_docs], np.int64)
            for kind in ("stems", "surface"):
                table: dict[str, int] = getattr(d, kind)
                arrays[f"{i}.{kind}.terms"] = _encode_strings(list(table))
                arrays[f"{i}.{kind}.df"] = np.fromiter(table.values(), np.int64, len(table))
            arrays[f"{i}.bigram_keys"] = d.bigram_keys
            arrays[f"{i}.bigram_df"] = d.bigram_df
        buf = io.BytesIO()
        np.savez(buf, **arrays)  # type: ignore[arg-type]
        return buf.getvalue()

    @classmethod
    def from_bytes(cls, blob: bytes) -> CorpusStats:
        z = np.load(io.BytesIO(blob), allow_pickle=False)
        out = cls(n_nodes=int(z["n_nodes"][0]))
        for i, name in enumerate(_decode_strings(z["dims"])):
            d = DimStats(n_docs=int(z[f"{i}.n_docs"][0]))
            for kind in ("stems", "surface"):
                terms = _decode_strings(z[f"{i}.{kind}.terms"])
                setattr(d, kind, dict(zip(terms, z[f"{i}.{kind}.df"].tolist(), strict=True)))
            d.bigram_keys = z[f"{i}.bigram_keys"]
            d.bigram_df = z[f"{i}.bigram_df"]
            out.dims[name] = d
        return out


def _encode_strings(items: list[str]) -> np.ndarray:
    # Tokens never contain "\n" (the tokenizer splits on non-alphanumerics), dimension names
    # neither (schema validation); one utf-8 blob loads far faster than a pickled list.
    return np.frombuffer("\n".join(items).encode(), dtype=np.uint8)


def _decode_strings(arr: np.ndarray) -> list[str]:
    text = arr.tobytes().decode()
    return text.split("\n") if text else []


class StatsBuilder:
    """Accumulates the signed delta of added (+1) and removed (-1) nodes."""

    def __init__(self, schema: Schema) -> None:
        self.schema = schema
        self.n_nodes = 0
        self.n_docs: Counter[str] = Counter()
        self.names = [*schema.names, WHOLE]
        self.fields = frozenset(schema.fields)
        self.stems: dict[str, Counter[str]] = {d: Counter() for d in self.names}
        self.surface: dict[str, Counter[str]] = {d: Counter() for d in self.names}
        self._bigrams: dict[str, list[tuple[np.ndarray, int]]] = {d: [] for d in self.names}
        self._hash_cache: dict[str, int] = {}

    def add(self, node: Node, sign: int = 1) -> None:
        self.n_nodes += sign
        whole_stems: set[str] = set()
        whole_surface: set[str] = set()
        for dim, text in dim_texts(node, self.schema).items():
            toks = analysis.surface(text)
            if not toks:
                continue
            self.n_docs[dim] += sign
            stems = set(analysis.stem(t) for t in toks)
            surface = set(toks)
            if dim in self.fields:
                whole_stems |= stems
                whole_surface |= surface
            for s in stems:
                self.stems[dim][s] += sign
            for t in surface:
                self.surface[dim][t] += sign
            if len(toks) > 1:
                cache = self._hash_cache
                h = np.fromiter(
                    (cache[t] if t in cache else cache.setdefault(t, token_hash(t)) for t in toks),
                    np.uint64,
                    len(toks),
                )
                self._bigrams[dim].append((np.unique(_pair_keys(h)), sign))
        if whole_surface:
            self.n_docs[WHOLE] += sign
            for s in whole_stems:
                self.stems[WHOLE][s] += sign
            for t in whole_surface:
                self.surface[WHOLE][t] += sign

    def add_all(self, nodes: Iterable[Node], sign: int = 1) -> None:
        for n in nodes:
            self.add(n, sign)

    def apply(self, base: CorpusStats | None) -> CorpusStats:
        """``base`` plus this delta, as a new value (``base`` is not modified)."""
        base = base or CorpusStats()
        out = CorpusStats(n_nodes=base.n_nodes + self.n_nodes)
        # a root written before the text unit had statistics cannot get them from a delta
        whole = WHOLE in base.dims or base.n_nodes == 0
        for dim in self.names if whole else self.schema.names:
            b = base.dims.get(dim) or DimStats()
            d = DimStats(n_docs=b.n_docs + self.n_docs[dim])
            d.stems = _merge_counts(b.stems, self.stems[dim])
            d.surface = _merge_counts(b.surface, self.surface[dim])
            d.bigram_keys, d.bigram_df = _merge_bigrams(
                b.bigram_keys, b.bigram_df, self._bigrams[dim]
            )
            out.dims[dim] = d
        return out


def _merge_counts(base: dict[str, int], delta: Counter[str]) -> dict[str, int]:
    out = dict(base)
    for k, v in delta.items():
        n = out.get(k, 0) + v
        if n > 0:
            out[k] = n
        else:
            out.pop(k, None)
    return out


def _merge_bigrams(
    keys: np.ndarray, df: np.ndarray, parts: list[tuple[np.ndarray, int]]
) -> tuple[np.ndarray, np.ndarray]:
    if not parts:
        return keys, df
    all_keys = np.concatenate([keys, *(k for k, _ in parts)])
    all_w = np.concatenate([df.astype(np.int64), *(np.full(len(k), s, np.int64) for k, s in parts)])
    uniq, inv = np.unique(all_keys, return_inverse=True)
    counts = np.bincount(inv, weights=all_w, minlength=len(uniq)).astype(np.int64)
    keep = counts > 0
    return uniq[keep], counts[keep]
