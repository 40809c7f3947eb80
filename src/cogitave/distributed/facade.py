"""The facade over a sharded view: what the surfaces call, as :class:`~cogitave.Collection`.

``search``, ``get``, the graph tools and ``roots`` answer from a :class:`ShardedView`, so
``cogitave search|eval|serve|mcp`` work on a sharded collection (in one process or with
shard actors on Ray). The graph tools read the one copy of the graph beside the shards.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cogitave.distributed import open_view
from cogitave.distributed.search import search as sharded_search
from cogitave.distributed.search import systems
from cogitave.distributed.view import ShardedView
from cogitave.errors import NotFoundError
from cogitave.graph import tools as graph_tools
from cogitave.graph.query import GraphQueryResult, query_graph
from cogitave.graph.tools import Facets, LearningPath, RelatedResult, XrefResult
from cogitave.graph.traverse import Direction
from cogitave.nodes import Node
from cogitave.query.types import SearchRequest, SearchResponse
from cogitave.schema import Schema
from cogitave.store.graph import GraphSegment
from cogitave.store.roots import RootInfo


@dataclass(frozen=True)
class _GraphHolder:
    """What the MCP tool descriptions read from ``col.snapshot``."""

    graph: GraphSegment


class ShardedCollection:
    """A read-only collection facade over a sharded view."""

    def __init__(self, view: ShardedView, path: str | Path = "") -> None:
        self.view = view
        self.path = str(path)

    @classmethod
    def open(
        cls, path: str | Path, ray: str | None = None, *, allow_partial: bool = False
    ) -> ShardedCollection:
        return cls(open_view(path, ray, allow_partial=allow_partial), path)

    @property
    def root(self) -> str:
        return self.view.root

    @property
    def schema(self) -> Schema:
        return self.view.schema

    @property
    def snapshot(self) -> _GraphHolder:
        return _GraphHolder(self.view.graph)

    def systems(self) -> tuple[str, ...]:
        return systems(self.view)

    def search(self, request: SearchRequest | str, **kw: Any) -> SearchResponse:
        req = request if isinstance(request, SearchRequest) else SearchRequest(query=request, **kw)
        if req.root is not None and req.root != self.root:
            raise NotFoundError(f"root {req.root[:12]} is not this sharded view")
        return sharded_search(self.view, req)

    def warm(self) -> None:
        self.view.warm()

    def get(self, uid: str, *, root: str | None = None) -> Node:
        nid = self.view.id_of(uid)
        if nid is None:
            raise NotFoundError(f"no node with uid {uid!r} in view {self.root[:12]}")
        return self.view.node(nid)

    def related(
        self,
        uid: str,
        labels: Sequence[str] | None = None,
        direction: Direction = "both",
        depth: int = 1,
        limit: int = 50,
    ) -> RelatedResult:
        return graph_tools.get_related(self.view.graph, uid, labels, direction, depth, limit)

    def learning_path(self, target: str) -> LearningPath:
        return graph_tools.get_learning_path(self.view.graph, target)

    def resolve_xref(self, ref: str, *, base: str | None = None, limit: int = 5) -> XrefResult:
        return graph_tools.resolve_xref(self.view.graph, ref, aliases={}, base=base, limit=limit)

    def facets(
        self, uids: Sequence[str], labels: Sequence[str] | None = None, depth: int = 1
    ) -> Facets:
        return graph_tools.facets(
            self.view.graph, list(uids), labels, depth, node_props=self._node_props()
        )

    def query_graph(
        self, text: str, params: Mapping[str, Any] | None = None, *, timeout_ms: float = 250
    ) -> GraphQueryResult:
        return query_graph(
            self.view.graph, text, params, timeout_ms=timeout_ms, node_props=self._node_props()
        )

    def _node_props(self) -> Callable[[int], Mapping[str, Any]]:
        exact = [d for d in self.view.schema.exact if d != "kind"]
        graph, view = self.view.graph, self.view

        def props(gid: int) -> Mapping[str, Any]:
            nid = view.id_of(graph.uid(gid))
            if nid is None:
                return {}
            node = view.node(nid)
            return {d: node.dims[d] for d in exact if d in node.dims}

        return props

    def roots(self) -> list[RootInfo]:
        """The view as one entry (each shard keeps its own roots)."""
        return [
            RootInfo(
                id=self.root,
                parent=None,
                created="",
                nodes=len(self),
                edges=int(self.view.manifest.graph.get("edges", 0)),
                segments=len(self.view.clients),
                head=True,
            )
        ]

    def __len__(self) -> int:
        return self.view.live_count
