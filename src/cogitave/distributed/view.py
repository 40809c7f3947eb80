"""The read port over N shards: the engine's questions scattered to shards, answers gathered.

:class:`ShardedView` implements :class:`~cogitave.store.port.ReadPort`, so the engine's stages
run on it unchanged in the driver. Ids are ``nid << 8 | shard``. What each call does:

- ``bm25``: global statistics first (each shard's field ``max_doc`` and token total, cached;
  each term's document frequency, per query), then every shard returns its exact top
  ``depth`` under those statistics (:mod:`cogitave.distributed.bm25`); merged by score;
- ``dense``: every shard's top ``depth``, merged by similarity;
- ``match`` / ``vectors_of``: the ids split by shard, answers put back in order;
- ``stats``: the sum of the shards' statistics (they are additive);
- ``dense_sample``: each shard's seeded uniform sample, subsampled in proportion to its rows
  (a uniform sample of the whole);
- ``graph``: one copy of the whole graph, kept beside the shards and read by the driver;
- ``uid_rank``: ranks among every live uid of every shard (gathered once when opened).

Merges break score ties by uid, so the answer does not depend on the number of shards.

A shard that does not answer raises :class:`ShardUnavailable` naming it, unless the view was
opened with ``allow_partial``: then its share is left out and :meth:`take_missing` reports
which shards were missing, for the caller to flag the response ``partial``.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from functools import cached_property
from pathlib import Path
from typing import Any, Protocol, TypeVar

import numpy as np

from cogitave.config import Settings
from cogitave.distributed.bm25 import FieldStats, GlobalTerms
from cogitave.distributed.layout import ShardedManifest, read_manifest, shard_of
from cogitave.errors import CogitaveError, NotFoundError
from cogitave.expand.stats import CorpusStats, DimStats
from cogitave.nodes import Node, NodeFacts
from cogitave.schema import Schema
from cogitave.store.graph import GraphSegment, read_aliases
from cogitave.store.port import MatchKind, Where
from cogitave.store.roots import RootStore
from cogitave.store.vectors import SAMPLE_SIZE

SHARD_BITS = 8
_SHARD_MASK = (1 << SHARD_BITS) - 1
T = TypeVar("T")


class ShardUnavailable(CogitaveError):
    """A shard did not answer (its actor died or its node is gone)."""

    code = "shard_unavailable"
    http_status = 503


def pack(nids: np.ndarray, shard: int) -> np.ndarray:
    return (np.asarray(nids, np.uint64) << np.uint64(SHARD_BITS)) | np.uint64(shard)


def unpack(ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(local nids, shard numbers) of packed ids."""
    ids = np.asarray(ids, np.uint64)
    return ids >> np.uint64(SHARD_BITS), (ids & np.uint64(_SHARD_MASK)).astype(np.int64)


class ShardClient(Protocol):
    """How the view reaches one shard: ``submit`` starts a call, ``result`` waits for it."""

    index: int
    label: str

    def submit(self, method: str, *args: Any) -> Any: ...

    def result(self, handle: Any) -> Any: ...


class LocalShard:
    """A shard served in this process (no Ray): calls run when their result is asked for."""

    def __init__(self, server: Any, label: str, index: int | None = None) -> None:
        self.server = server
        self.index = server.index if index is None else index
        """The shard's place in the view (a server may serve in several views)."""
        self.label = label

    def submit(self, method: str, *args: Any) -> Any:
        return (method, args)

    def result(self, handle: Any) -> Any:
        method, args = handle
        return self.server.call(method, *args)


class ShardedView:
    """The read port over a sharded collection's view (one pinned root per shard)."""

    def __init__(
        self,
        manifest: ShardedManifest,
        clients: Sequence[ShardClient],
        graph_store: RootStore | None = None,
        *,
        allow_partial: bool = False,
        threads: int = 0,
        route: Callable[[str], int | None] | None = None,
    ) -> None:
        self.manifest = manifest
        self.clients = list(clients)
        n = len(self.clients)
        self._route = route or (lambda uid: shard_of(uid, n))
        """uid -> the shard that holds it (default: the uid's hash, as a sharded build puts it)."""
        self.allow_partial = allow_partial
        self._graph_store = graph_store
        self._missing: set[int] = set()
        self._lock = threading.Lock()
        self._field_stats: dict[str, FieldStats] = {}
        self._widths: dict[str, int] = {}
        # In-process shards run side by side on a pool (tantivy, usearch and numpy release
        # the GIL); actors are concurrent already.
        self._pool = ThreadPoolExecutor(threads) if threads > 1 else None
        infos = self._scatter("info")
        self._infos = infos
        first = next(iter(infos.values()))
        self._schema = Schema.from_dict(first["schema"], source="sharded view")
        self._settings = first.get("settings")
        self._encoder = first.get("encoder")
        self._encoder_graph = first.get("encoder_graph")
        self._index_uids(infos)

    # -- opening ----------------------------------------------------------------------------
    @classmethod
    def open_local(
        cls, path: str | Path, *, allow_partial: bool = False, threads: int = 0
    ) -> ShardedView:
        """The view at ``path`` with every shard opened in this process."""
        from cogitave.distributed.shard import ShardServer

        path = Path(path)
        m = read_manifest(path)
        clients = [
            LocalShard(ShardServer(str(path / s.path), s.root, i), f"shard {i} ({s.path})")
            for i, s in enumerate(m.shards)
        ]
        return cls(m, clients, _graph_store(path), allow_partial=allow_partial, threads=threads)

    def _index_uids(self, infos: dict[int, dict[str, Any]]) -> None:
        self._uids: dict[int, dict[int, str]] = {}
        self._nid_of: dict[int, dict[str, int]] = {}
        all_uids: list[str] = []
        owners: list[tuple[int, np.ndarray]] = []
        for i, info in infos.items():
            nids = np.asarray(info["nids"], np.uint64)
            self._uids[i] = dict(zip(nids.tolist(), info["uids"], strict=True))
            self._nid_of[i] = {u: n for n, u in self._uids[i].items()}
            all_uids.extend(info["uids"])
            owners.append((i, nids))
        order = np.argsort(np.asarray(all_uids, dtype=object), kind="stable")
        ranks = np.empty(len(order), np.int64)
        ranks[order] = np.arange(len(order))
        self._rank: dict[int, np.ndarray] = {}
        at = 0
        for i, nids in owners:
            size = int(nids.max()) + 1 if len(nids) else 0
            r = np.full(size, len(order), np.int64)
            r[nids.astype(np.int64)] = ranks[at : at + len(nids)]
            self._rank[i] = r
            at += len(nids)
        self._live = len(order)

    # -- scatter / gather -------------------------------------------------------------------
    def _scatter(
        self, method: str, *args: Any, per_shard: dict[int, tuple[Any, ...]] | None = None
    ) -> dict[int, Any]:
        """Call ``method`` on every shard (or with ``per_shard`` arguments on those shards):
        shard -> answer. A shard that fails raises, or is left out in partial mode."""
        targets = (
            [(c, per_shard[c.index]) for c in self.clients if c.index in per_shard]
            if per_shard is not None
            else [(c, args) for c in self.clients]
        )
        if self._pool is not None and isinstance(self.clients[0], LocalShard):
            futures = {
                c.index: self._pool.submit(c.result, c.submit(method, *a)) for c, a in targets
            }
            getters: dict[int, Callable[[], Any]] = {i: f.result for i, f in futures.items()}
        else:
            handles = {c.index: (c, c.submit(method, *a)) for c, a in targets}
            getters = {i: _getter(c, h) for i, (c, h) in handles.items()}
        out: dict[int, Any] = {}
        for i, get in getters.items():
            try:
                out[i] = get()
            except CogitaveError as e:
                if not isinstance(e, ShardUnavailable):
                    raise
                self._fail(i, e)
            except Exception as e:
                if _is_shard_loss(e):
                    self._fail(i, ShardUnavailable(f"{self.clients[i].label} is unavailable: {e}"))
                else:
                    raise
        return out

    def _fail(self, i: int, e: ShardUnavailable) -> None:
        if not self.allow_partial:
            raise ShardUnavailable(
                f"{self.clients[i].label} did not answer ({e.message}); "
                "ask for partial results to search the other shards"
            ) from e
        with self._lock:
            self._missing.add(i)

    def take_missing(self) -> list[int]:
        """Shards left out since the last call (partial mode), and forget them."""
        with self._lock:
            out = sorted(self._missing)
            self._missing.clear()
            return out

    # -- properties of the port -------------------------------------------------------------
    @property
    def root(self) -> str:
        return self.manifest.view_id

    @property
    def schema(self) -> Schema:
        return self._schema

    @property
    def settings(self) -> Settings:
        return Settings.from_dict(self._settings)

    def warm(self) -> None:
        """Read what a first query needs: the summed statistics and the graph."""
        _ = self.stats, self.graph

    @property
    def encoder_name(self) -> str | None:
        return self._encoder

    @property
    def encoder_graph(self) -> str | None:
        return self._encoder_graph

    @cached_property
    def stats(self) -> CorpusStats:
        return merge_stats([CorpusStats.from_bytes(i["stats"]) for i in self._infos.values()])

    @cached_property
    def graph(self) -> GraphSegment:
        entry = self.manifest.graph
        if not entry or self._graph_store is None:
            return GraphSegment.build([])
        return GraphSegment.open(self._graph_store, entry["graph_obj"])

    @cached_property
    def aliases(self) -> dict[str, str]:
        """Alias / redirect path -> uid, kept with the graph beside the shards."""
        if self._graph_store is None:
            return {}
        return read_aliases(self._graph_store, self.manifest.graph)

    @property
    def live_count(self) -> int:
        return self._live

    # -- ranked lists -----------------------------------------------------------------------
    def global_field(self, scope: str) -> FieldStats:
        """The summed ``max_doc`` and token total of ``scope``'s BM25 field (cached)."""
        got = self._field_stats.get(scope)
        if got is None:
            parts = self._scatter("field_stats", scope)
            got = sum(parts.values(), FieldStats(0, 0))
            if len(parts) == len(self.clients):
                self._field_stats[scope] = got
        return got

    def bm25(
        self,
        scope: str,
        stems: Sequence[str],
        depth: int,
        where: Where | None = None,
        weights: Mapping[str, float] | None = None,
        phrases: Mapping[tuple[str, ...], float] | None = None,
    ) -> tuple[np.ndarray, np.ndarray]:
        terms = list(dict.fromkeys(stems))
        if not terms or depth <= 0:
            return np.zeros(0, np.uint64), np.zeros(0, np.float32)
        field = self.global_field(scope)
        words = list(dict.fromkeys([*terms, *(t for p in phrases or {} for t in p)]))
        dfs = self._scatter("doc_freqs", scope, words)
        df = {t: sum(int(v[k]) for v in dfs.values()) for k, t in enumerate(words)}
        glob = GlobalTerms(field, df)
        parts = self._scatter(
            "bm25", scope, terms, depth, where, glob, dict(weights or {}), dict(phrases or {})
        )
        return self._merge(parts, depth)

    def dense(
        self, dim: str, q: np.ndarray, depth: int, where: Where | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        q = np.asarray(q, np.float32)
        return self._merge(self._scatter("dense", dim, q, depth, where), depth)

    def _merge(
        self, parts: dict[int, tuple[np.ndarray, np.ndarray]], depth: int
    ) -> tuple[np.ndarray, np.ndarray]:
        """Per-shard ranked (nids, scores) -> the top ``depth`` packed ids, ties by uid."""
        ids = [pack(n, i) for i, (n, _) in parts.items()]
        if not ids:
            return np.zeros(0, np.uint64), np.zeros(0, np.float32)
        all_ids = np.concatenate(ids)
        scores = np.concatenate([np.asarray(s, np.float32) for _, s in parts.values()])
        order = np.lexsort((self.uid_rank(all_ids), -scores))[:depth]
        return all_ids[order], scores[order]

    # -- masks and vectors ------------------------------------------------------------------
    def _split(self, ids: np.ndarray) -> tuple[dict[int, np.ndarray], dict[int, np.ndarray]]:
        """Packed ids -> per shard (positions in ``ids``, local nids)."""
        nids, shards = unpack(ids)
        pos: dict[int, np.ndarray] = {}
        local: dict[int, np.ndarray] = {}
        for s in np.unique(shards).tolist():
            at = np.flatnonzero(shards == s)
            pos[s], local[s] = at, nids[at]
        return pos, local

    def match(
        self, dim: str, kind: MatchKind, tokens: Sequence[str], among: np.ndarray
    ) -> np.ndarray:
        among = np.asarray(among, np.uint64)
        out = np.zeros(len(among), bool)
        if not len(among) or not tokens:
            return out
        pos, local = self._split(among)
        toks = list(tokens)
        got = self._scatter("match", per_shard={s: (dim, kind, toks, n) for s, n in local.items()})
        for s, mask in got.items():
            out[pos[s]] = mask
        return out

    def match_all(
        self,
        dim: str,
        kind: MatchKind,
        tokens: Sequence[str],
        limit: int,
        where: Where | None = None,
    ) -> np.ndarray:
        got = self._scatter("match_all", dim, kind, list(tokens), limit, where)
        ids = [pack(n, i) for i, n in got.items()]
        return np.concatenate(ids)[:limit] if ids else np.zeros(0, np.uint64)

    def vectors_of(self, dim: str, ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        ids = np.asarray(ids, np.uint64)
        width = self._vector_width(dim)
        out = np.zeros((len(ids), width), np.float32)
        has = np.zeros(len(ids), bool)
        pos, local = self._split(ids)
        got = self._scatter("vectors_of", per_shard={s: (dim, n) for s, n in local.items()})
        for s, (vecs, mask) in got.items():
            out[pos[s]] = vecs
            has[pos[s]] = mask
        return out, has

    def _vector_width(self, dim: str) -> int:
        got = self._widths.get(dim)
        if got is None:
            answers = self._scatter("vectors_of", dim, np.zeros(0, np.uint64))
            got = next((int(v.shape[1]) for v, _ in answers.values() if v.ndim == 2), 0)
            self._widths[dim] = got
        return got

    def dense_sample(self, dim: str) -> np.ndarray:
        got = self._scatter("dense_sample", dim)
        return merge_samples([got[i] for i in sorted(got)])

    def vector_dims(self) -> frozenset[str]:
        return frozenset(d for i in self._infos.values() for d in i["vectors"])

    def vector_count(self, dim: str) -> int:
        return sum(int(i["vectors"].get(dim, 0)) for i in self._infos.values())

    # -- ids --------------------------------------------------------------------------------
    def uid_of(self, id: int) -> str:
        nid, shard = int(id) >> SHARD_BITS, int(id) & _SHARD_MASK
        try:
            return self._uids[shard][nid]
        except KeyError:
            raise NotFoundError(f"no live node with id {id}") from None

    def id_of(self, uid: str) -> int | None:
        shard = self._route(uid)
        if shard is None:
            return None
        nid = self._nid_of.get(shard, {}).get(uid)
        return None if nid is None else (nid << SHARD_BITS) | shard

    def uid_rank(self, ids: np.ndarray) -> np.ndarray:
        nids, shards = unpack(ids)
        out = np.full(len(nids), self._live, np.int64)
        for s in np.unique(shards).tolist():
            r = self._rank.get(s)
            if r is None:
                continue
            at = np.flatnonzero(shards == s)
            n = nids[at].astype(np.int64)
            ok = n < len(r)
            out[at[ok]] = r[n[ok]]
        return out

    def node(self, id: int) -> Node:
        return self.nodes_of([id])[0]

    def nodes_of(self, ids: Sequence[int]) -> list[Node]:
        """Stored nodes of live ids, one round trip per shard."""
        return self._per_id("records", ids, Node.from_record)

    def node_facts(self, ids: Sequence[int]) -> list[NodeFacts]:
        """Facts of live ids, one round trip per shard."""
        return self._per_id("facts", ids, lambda row: NodeFacts(*row))

    def _per_id(self, method: str, ids: Sequence[int], make: Callable[[Any], T]) -> list[T]:
        """The shards' answers to ``method`` for their local ids, made into values by
        ``make``, in the order of ``ids``."""
        arr = np.asarray(ids, np.uint64)
        pos, local = self._split(arr)
        got = self._scatter(method, per_shard={s: (n.tolist(),) for s, n in local.items()})
        out: list[T | None] = [None] * len(arr)
        for s, rows in got.items():
            for p, row in zip(pos[s].tolist(), rows, strict=True):
                out[p] = make(row)
        missing = [int(arr[i]) for i, v in enumerate(out) if v is None]
        if missing:
            raise ShardUnavailable(f"nodes {missing[:3]} are on shards that did not answer")
        return [v for v in out if v is not None]

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=False)


def _getter(client: ShardClient, handle: Any) -> Callable[[], Any]:
    return lambda: client.result(handle)


def _is_shard_loss(e: Exception) -> bool:
    """Ray's errors for a dead or unreachable actor (without importing Ray when unused)."""
    names = {c.__name__ for c in type(e).__mro__}
    return bool(
        names
        & {
            "RayActorError",
            "ActorDiedError",
            "ActorUnavailableError",
            "GetTimeoutError",
            "WorkerCrashedError",
            "NodeDiedError",
            "ObjectLostError",
        }
    )


def _graph_store(path: Path) -> RootStore | None:
    g = path / "graph"
    return RootStore(g) if g.is_dir() else None


def merge_stats(parts: Sequence[CorpusStats]) -> CorpusStats:
    """The statistics of the union of disjoint shards: every count is a sum."""
    out = CorpusStats(n_nodes=sum(p.n_nodes for p in parts))
    names = list(dict.fromkeys(d for p in parts for d in p.dims))
    for name in names:
        ds = [p.dim(name) for p in parts]
        d = DimStats(n_docs=sum(x.n_docs for x in ds))
        for kind in ("stems", "surface"):
            acc: dict[str, int] = {}
            for x in ds:
                for k, v in getattr(x, kind).items():
                    acc[k] = acc.get(k, 0) + v
            setattr(d, kind, acc)
        d.bigram_keys, d.bigram_df = _sum_bigrams(ds)
        out.dims[name] = d
    return out


def _sum_bigrams(ds: Sequence[DimStats]) -> tuple[np.ndarray, np.ndarray]:
    keys = np.concatenate([np.asarray(x.bigram_keys, np.uint64) for x in ds])
    df = np.concatenate([np.asarray(x.bigram_df, np.int64) for x in ds])
    uniq, inv = np.unique(keys, return_inverse=True)
    return uniq, np.bincount(inv, weights=df, minlength=len(uniq)).astype(np.int64)


def merge_samples(parts: Sequence[tuple[np.ndarray, int]]) -> np.ndarray:
    """A seeded uniform sample of the union from each shard's uniform sample and row count:
    each shard keeps a share of :data:`SAMPLE_SIZE` in proportion to its rows."""
    parts = [(s, n) for s, n in parts if n and len(s)]
    if not parts:
        return np.zeros((0, 0), np.float32)
    total = sum(n for _, n in parts)
    rng = np.random.default_rng(0)
    out = []
    for sample, n in parts:
        take = len(sample) if total <= SAMPLE_SIZE else round(SAMPLE_SIZE * n / total)
        take = min(take, len(sample))
        rows = np.sort(rng.choice(len(sample), size=take, replace=False))
        out.append(np.asarray(sample)[rows])
    return np.concatenate(out).astype(np.float32)
