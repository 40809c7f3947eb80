"""A snapshot: everything a reader needs from one pinned root, opened once.

root id -> manifest, schema, statistics, lexical reader, node table, forward term index,
vector and graph segments. Nothing here changes after open: a writer publishing a new root
never touches the files of this one, and retention leaves them alone while the snapshot lives
(it holds its root, :meth:`RootStore.pin`, until it is garbage). It implements the read port
(:class:`~cogitave.store.port.ReadPort`): the engine asks it by dimension and kind, and only
this module knows which tantivy field or array answers.
"""

from __future__ import annotations

import bisect
import threading
import weakref
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
import tantivy

from cogitave.config import Settings
from cogitave.expand.models import recorded_graph
from cogitave.expand.stats import CorpusStats
from cogitave.nodes import Node, NodeFacts, page_names
from cogitave.schema import WHOLE, Schema
from cogitave.store.graph import GraphSegment, read_aliases
from cogitave.store.lexical import ALL_FIELD, LexicalReader
from cogitave.store.manifest import Manifest
from cogitave.store.nodes import NodeTable
from cogitave.store.port import MatchKind, Where
from cogitave.store.roots import RootStore
from cogitave.store.terms import TermIndex
from cogitave.store.vectors import DimVectors


@dataclass(eq=False)  # identity: a snapshot is one opened root (and a weak-dict key)
class Snapshot:
    store: RootStore
    root: str
    manifest: Manifest
    _hold: weakref.finalize | None = field(default=None, init=False, repr=False)
    _masks: dict[tuple[object, ...], np.ndarray] = field(
        default_factory=dict, init=False, repr=False
    )
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False)

    @classmethod
    def open(cls, store: RootStore, root: str | None = None) -> Snapshot:
        rid = root or store.head()
        pin = store.pin(rid)  # before reading: retention now keeps what the manifest names
        try:
            manifest = store.read_root(rid)
            store.check_objects(manifest)
        except BaseException:
            if pin is not None:
                pin.release()
            raise
        snap = cls(store, rid, manifest)
        if pin is not None:
            snap._hold = weakref.finalize(snap, pin.release)
        return snap

    def release_hold(self) -> None:
        """End this snapshot's hold on its root now rather than when it is garbage (a writer
        about to publish past it); reading on is safe only while retention keeps the root."""
        if self._hold is not None:
            self._hold()

    @cached_property
    def schema(self) -> Schema:
        return Schema.from_dict(self.manifest.schema, source=f"root {self.root[:12]}")

    @cached_property
    def settings(self) -> Settings:
        """The collection's settings as stored in this root."""
        return Settings.from_dict(self.manifest.settings)

    @cached_property
    def stats(self) -> CorpusStats:
        obj = self.manifest.stats_obj
        stats = CorpusStats.from_bytes(self.store.get_bytes(obj)) if obj else CorpusStats()
        stats.fields = tuple(self.schema.fields)
        return stats

    @cached_property
    def lexical(self) -> LexicalReader:
        return LexicalReader.for_root(
            self.store, self.root, self.manifest.lexical_files, self.schema
        )

    @cached_property
    def nodes(self) -> NodeTable:
        return NodeTable(self.store, self.manifest.segments, self.manifest.next_nid)

    @cached_property
    def terms(self) -> TermIndex:
        """Which tokens each node holds per lexical field (``available`` is false for roots
        written before the index: ask the lexical reader then)."""
        return TermIndex(self.store, self.manifest.segments)

    @cached_property
    def vectors(self) -> dict[str, DimVectors]:
        """Per semantic dimension, its vector segments (empty without an encoder)."""
        alive = self.nodes.alive
        return {
            d: DimVectors(self.store, entries, alive)
            for d, entries in self.manifest.vectors.items()
            if entries
        }

    @cached_property
    def graph(self) -> GraphSegment:
        """The property graph of the root (an empty one before the first publish)."""
        entry = self.manifest.graph
        if not entry:
            return GraphSegment.build([])
        return GraphSegment.open(self.store, entry["graph_obj"])

    @cached_property
    def aliases(self) -> dict[str, str]:
        """Alias / redirect path -> uid, for ``resolve_xref``."""
        return read_aliases(self.store, self.manifest.graph)

    @property
    def encoder_name(self) -> str | None:
        return self.manifest.encoder_name

    @cached_property
    def encoder_graph(self) -> str | None:
        return recorded_graph(self.manifest.encoder)

    @property
    def live_count(self) -> int:
        return self.nodes.live_count

    def uid_of(self, nid: int) -> str:
        return self.nodes.uid_of[int(nid)]

    # -- the read port ----------------------------------------------------------------------
    def warm(self) -> None:
        """Open every index a first query would read (servers call it before traffic)."""
        self.lexical.num_docs()
        _ = self.nodes.uid_rank, self.graph
        self.terms.warm()
        for vec in self.vectors.values():
            vec.sample()
            vec.vectors_of([])

    def _field(self, dim: str, kind: MatchKind) -> str:
        """The tantivy field (and term-index field) that answers ``dim`` for ``kind``."""
        if dim == WHOLE:
            return ALL_FIELD
        if kind == "value":
            if self.schema[dim].type != "exact":
                raise ValueError(f"value match needs an exact dimension, not {dim!r}")
            return f"x_{dim}"
        return f"s_{dim}" if self.schema[dim].type == "semantic" else f"t_{dim}"

    def bm25(
        self,
        scope: str,
        stems: Sequence[str],
        depth: int,
        where: Where | None = None,
        weights: Mapping[str, float] | None = None,
        phrases: Mapping[tuple[str, ...], float] | None = None,
    ) -> tuple[np.ndarray, np.ndarray]:
        lex = self.lexical
        nids = self.prefix_nids(where.path_prefix) if where and where.path_prefix else None
        if nids is not None and not len(nids):
            return np.zeros(0, np.uint64), np.zeros(0, np.float32)
        query = lex.query(
            self._field(scope, "text"),
            stems,
            filters=where.values if where else None,
            nids=None if nids is None else nids.tolist(),
            weights=weights,
            phrases=phrases,
        )
        return lex.search(query, depth)

    # -- filters ------------------------------------------------------------------------------
    MASKS_KEPT = 16

    def allowed(self, where: Where) -> np.ndarray:
        """Per nid, whether the node is live and passes ``where`` (kept for the last few
        distinct filters: a filtered search asks once per leg)."""
        key = where.key()
        mask = self._masks.get(key)
        if mask is None:
            mask = self.nodes.alive.copy()
            lex = self.lexical
            for dim, values in where.values.items():
                q = tantivy.Query.term_set_query(
                    lex.tschema, self._field(dim, "value"), [v.strip().casefold() for v in values]
                )
                hit = np.zeros(len(mask), bool)
                hit[lex.matching(q, max(1, lex.num_docs())).astype(np.int64)] = True
                mask &= hit
            if where.path_prefix:
                hit = np.zeros(len(mask), bool)
                hit[self.prefix_nids(where.path_prefix).astype(np.int64)] = True
                mask &= hit
            with self._lock:
                if len(self._masks) >= self.MASKS_KEPT:
                    self._masks.pop(next(iter(self._masks)))
                self._masks[key] = mask
        return mask

    @cached_property
    def _names(self) -> tuple[list[str], np.ndarray]:
        """Every live node's page names (:func:`~cogitave.nodes.page_names`), sorted, with
        their nids: a prefix is a range of this list. Built on the first path filter."""
        pairs: list[tuple[str, int]] = []
        live = self.nodes.live_nids().tolist()
        for nid, f in zip(live, self.nodes.facts_of(live), strict=True):
            pairs.extend((n, nid) for n in set(page_names(f.uid, f.path, f.url)))
        pairs.sort()
        return [n for n, _ in pairs], np.fromiter((i for _, i in pairs), np.uint64, len(pairs))

    def prefix_nids(self, prefix: str) -> np.ndarray:
        """Live nids one of whose page names starts with ``prefix``, ascending."""
        names, nids = self._names
        lo = bisect.bisect_left(names, prefix)
        hi = bisect.bisect_left(names, prefix + "\U0010ffff")
        return np.unique(nids[lo:hi])

    def match(
        self, dim: str, kind: MatchKind, tokens: Sequence[str], among: np.ndarray
    ) -> np.ndarray:
        among = np.asarray(among, np.uint64)
        if not len(among) or not tokens:
            return np.zeros(len(among), bool)
        if dim == WHOLE:  # ``all`` is the union of the semantic fields
            hit = np.zeros(len(among), bool)
            for d in self.schema.semantic:
                hit |= self.match(d, "text", tokens, among)
            return hit
        field = self._field(dim, kind)
        if self.terms.available:
            return self.terms.matches({field: list(tokens)}, among)
        lex = self.lexical
        q = tantivy.Query.term_set_query(lex.tschema, field, list(dict.fromkeys(tokens)))
        return lex.matching_among(q, among)

    def match_all(
        self,
        dim: str,
        kind: MatchKind,
        tokens: Sequence[str],
        limit: int,
        where: Where | None = None,
    ) -> np.ndarray:
        lex = self.lexical
        q = tantivy.Query.term_set_query(
            lex.tschema, self._field(dim, kind), list(dict.fromkeys(tokens))
        )
        if not where:
            return lex.matching(q, limit)
        mask = self.allowed(where)
        got = lex.matching(q, lex.num_docs())
        return got[mask[got.astype(np.int64)]][:limit]

    def dense(
        self, dim: str, q: np.ndarray, depth: int, where: Where | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        return self.vectors[dim].search(q, depth, self.allowed(where) if where else None)

    def vectors_of(self, dim: str, ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return self.vectors[dim].vectors_of(np.asarray(ids, np.int64).tolist())

    def dense_sample(self, dim: str) -> np.ndarray:
        return self.vectors[dim].sample()

    def vector_dims(self) -> frozenset[str]:
        return frozenset(d for d, v in self.vectors.items() if v.count)

    def vector_count(self, dim: str) -> int:
        vec = self.vectors.get(dim)
        return vec.count if vec is not None else 0

    def id_of(self, uid: str) -> int | None:
        return self.nodes.nid_of.get(uid)

    def uid_rank(self, ids: np.ndarray) -> np.ndarray:
        return self.nodes.uid_rank[np.asarray(ids, np.int64)]

    def node(self, id: int) -> Node:
        return self.nodes.node(int(id))

    def node_facts(self, ids: Sequence[int]) -> list[NodeFacts]:
        return self.nodes.facts_of(ids)
