"""The Python facade: ``Collection`` and the calls every surface makes.

>>> col = Collection.create(path, schema)          # doctest: +SKIP
>>> col.add(nodes); col.delete(["old"]); col.publish()
>>> col.search(SearchRequest(query="leather boots", limit=10))

A ``Collection`` reads through a pinned snapshot (HEAD when opened, or a retained root by id)
and writes through :func:`cogitave.publish.publish`. After ``publish()`` the collection
moves to the new root; other open readers keep theirs.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from cogitave.config import Settings
from cogitave.errors import ConflictError, EncoderError, NotFoundError
from cogitave.expand.embed import DEFAULT_ENCODER, load_encoder
from cogitave.graph import tools as graph_tools
from cogitave.graph.query import GraphQueryResult, query_graph
from cogitave.graph.tools import Facets, LearningPath, RelatedResult, XrefResult
from cogitave.graph.traverse import Direction
from cogitave.nodes import Node
from cogitave.publish import Progress, empty_manifest, publish
from cogitave.query.engine import Engine
from cogitave.query.types import SearchRequest, SearchResponse
from cogitave.schema import Schema
from cogitave.store.roots import DEFAULT_RETENTION, RootInfo, RootStore
from cogitave.store.snapshot import Snapshot


class Collection:
    """A schema plus a history of content roots, in one directory."""

    def __init__(self, store: RootStore, root: str | None = None) -> None:
        self.store = store
        self._pending_adds: dict[str, Node] = {}
        self._pending_deletes: set[str] = set()
        self._lock = threading.Lock()
        self._snapshots: dict[str, Snapshot] = {}
        self._engines: dict[str, Engine] = {}
        self._pinned = root
        self.snapshot = self._snapshot(root or store.head())

    # -- lifecycle --------------------------------------------------------------------------
    @classmethod
    def create(
        cls,
        path: str | Path,
        schema: Schema,
        *,
        encoder: str | None = DEFAULT_ENCODER,
        settings: Settings | None = None,
    ) -> Collection:
        """Create an empty collection (its first root has the schema and no nodes).

        ``encoder`` names the sentence encoder of the dense legs (``None``: BM25 only); it is
        recorded in every root, and the collection always embeds with it."""
        store = RootStore(path)
        if store.exists():
            raise ConflictError(f"a collection already exists at {store.path}")
        enc = load_encoder(encoder) if encoder else None
        with store.writer_lock():
            store.init()
            rid = store.write_root(empty_manifest(schema, enc, settings))
            store.set_head(rid)
        return cls(store)

    @classmethod
    def open(
        cls, path: str | Path, root: str | None = None, *, encoder: str | None = None
    ) -> Collection:
        """Open a collection at HEAD, or at a retained root id. ``encoder``, if given, must be
        the encoder the collection was created with."""
        store = RootStore(path)
        if not store.exists():
            raise NotFoundError(f"no collection at {store.path}")
        col = cls(store, root)
        have = col.snapshot.encoder_name
        if encoder is not None and encoder != have:
            raise EncoderError(
                f"collection {store.path} was built with encoder {have!r}, not {encoder!r}; "
                "vectors of different encoders are not comparable"
            )
        return col

    @classmethod
    def exists(cls, path: str | Path) -> bool:
        return RootStore(path).exists()

    def _snapshot(self, rid: str) -> Snapshot:
        with self._lock:
            snap = self._snapshots.get(rid)
            if snap is None:
                snap = Snapshot.open(self.store, rid)
                self._snapshots = {rid: snap, **dict(list(self._snapshots.items())[:3])}
            return snap

    @property
    def root(self) -> str:
        return self.snapshot.root

    @property
    def schema(self) -> Schema:
        return self.snapshot.schema

    # -- writes -----------------------------------------------------------------------------
    def add(self, nodes: Iterable[Node]) -> int:
        """Stage nodes (new uids are added, known uids replaced) until :meth:`publish`."""
        n = 0
        for node in nodes:
            self._pending_deletes.discard(node.uid)
            self._pending_adds[node.uid] = node
            n += 1
        return n

    def delete(self, uids: Iterable[str]) -> int:
        """Stage deletions by uid until :meth:`publish` (unknown uids are ignored)."""
        n = 0
        for uid in uids:
            self._pending_adds.pop(uid, None)
            self._pending_deletes.add(uid)
            n += 1
        return n

    def publish(
        self, *, progress: Progress | None = None, retention: int = DEFAULT_RETENTION
    ) -> str:
        """Write the staged changes as a new root on top of HEAD; returns the root id."""
        rid = publish(
            self.store,
            list(self._pending_adds.values()),
            sorted(self._pending_deletes),
            progress=progress,
            retention=retention,
        )
        self._pending_adds.clear()
        self._pending_deletes.clear()
        self.snapshot = self._snapshot(rid)
        return rid

    def compact(
        self, progress: Progress | None = None, *, retention: int = DEFAULT_RETENTION
    ) -> str:
        """Publish HEAD again with each dimension's vectors in one segment of its live rows
        (fewer segments, faster dense search; nodes and indexes are otherwise unchanged).
        Staged changes are not included: they stay staged for :meth:`publish`. Returns the
        root id."""
        rid = publish(self.store, [], [], progress=progress, retention=retention, compact=True)
        self.snapshot = self._snapshot(rid)
        return rid

    # -- reads ------------------------------------------------------------------------------
    def engine(self, root: str | None = None) -> Engine:
        snap = self._snapshot(root) if root else self.snapshot
        eng = self._engines.get(snap.root)
        if eng is None:
            eng = Engine(snap)
            self._engines = {snap.root: eng, **dict(list(self._engines.items())[:3])}
        return eng

    def search(self, request: SearchRequest | str, **kw: Any) -> SearchResponse:
        """Run a search (a string is shorthand for ``SearchRequest(query=...)``)."""
        req = request if isinstance(request, SearchRequest) else SearchRequest(query=request, **kw)
        return self.engine(req.root).search(req)

    def warm(self) -> None:
        """Load what the first query would (lexicon, encoder, indexes) ahead of traffic."""
        self.engine().warm()

    def get(self, uid: str, *, root: str | None = None) -> Node:
        """A live node by uid (the content API), from ``root`` (a retained root id, e.g. the
        one a search answered from) or the collection's current root."""
        snap = self._snapshot(root) if root else self.snapshot
        nid = snap.nodes.nid_of.get(uid)
        if nid is None:
            raise NotFoundError(f"no node with uid {uid!r} in root {snap.root[:12]}")
        return snap.nodes.node(nid)

    # -- the graph: every call goes through the one bounded traversal ------------------------
    def query_graph(
        self, text: str, params: Mapping[str, Any] | None = None, *, timeout_ms: float = 250
    ) -> GraphQueryResult:
        """A bounded, read-only openCypher-style query (see :mod:`cogitave.graph.query`)."""
        snap = self.snapshot
        return query_graph(
            snap.graph, text, params, timeout_ms=timeout_ms, node_props=self._node_props(snap)
        )

    def related(
        self,
        uid: str,
        labels: Sequence[str] | None = None,
        direction: Direction = "both",
        depth: int = 1,
        limit: int = 50,
    ) -> RelatedResult:
        """Neighbours of ``uid`` within ``depth`` hops, each with the path that reached it."""
        return graph_tools.get_related(self.snapshot.graph, uid, labels, direction, depth, limit)

    def learning_path(self, target: str) -> LearningPath:
        """Prerequisites first, for a node uid, a skill or a role."""
        return graph_tools.get_learning_path(self.snapshot.graph, target)

    def resolve_xref(self, ref: str, *, base: str | None = None, limit: int = 5) -> XrefResult:
        """The node(s) a reference names (uid, path, URL, ``page#anchor``, alias, title)."""
        snap = self.snapshot
        return graph_tools.resolve_xref(
            snap.graph, ref, aliases=snap.aliases, base=base, limit=limit
        )

    def facets(
        self, uids: Sequence[str], labels: Sequence[str] | None = None, depth: int = 1
    ) -> Facets:
        """Kinds, edge labels and exact-dimension values around a set of nodes (e.g. a
        result page), through the bounded traversal."""
        snap = self.snapshot
        return graph_tools.facets(
            snap.graph, list(uids), labels, depth, node_props=self._node_props(snap)
        )

    @staticmethod
    def _node_props(snap: Snapshot) -> Callable[[int], Mapping[str, Any]]:
        exact = [d for d in snap.schema.exact if d != "kind"]
        graph, nodes = snap.graph, snap.nodes

        def props(gid: int) -> Mapping[str, Any]:
            nid = nodes.nid_of.get(graph.uid(gid))
            if nid is None:
                return {}
            node = nodes.node(nid)
            return {d: node.dims[d] for d in exact if d in node.dims}

        return props

    def roots(self) -> list[RootInfo]:
        return self.store.list_roots()

    def __len__(self) -> int:
        return self.snapshot.nodes.live_count
