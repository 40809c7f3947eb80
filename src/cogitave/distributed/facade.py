"""A sharded collection: a :class:`~cogitave.reader.Reader` over a :class:`ShardedView`.

Every read (search, nodes, the graph tools) is the reader's, on the view's read port, so
``cogitave search|eval|serve|mcp`` answer from a sharded collection (shards in one process or
shard actors on Ray) exactly as from one collection. What only a sharded view adds: a search's
diagnostics say how many shards answered and which did not (``partial``).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from cogitave.distributed import open_view
from cogitave.distributed.view import ShardedView
from cogitave.errors import NotFoundError
from cogitave.query.types import SearchRequest, SearchResponse
from cogitave.reader import Reader
from cogitave.store.roots import RootInfo


class _ViewPorts:
    """The one port of a sharded collection: its view (each shard keeps its own roots)."""

    def __init__(self, view: ShardedView, name: str = "") -> None:
        self.view = view
        self.name = name or "sharded"

    def current(self) -> ShardedView:
        return self.view

    def at(self, root: str) -> ShardedView:
        if root != self.view.root:
            raise NotFoundError(f"root {root[:12]} is not this sharded view")
        return self.view

    def library_name(self) -> str:
        return self.name

    def library_details(self) -> tuple[str | None, str, str | None]:
        return None, "", None

    def namespaces(self, libraries: Sequence[str] | None) -> tuple[str, ...] | None:
        if libraries:
            raise NotFoundError("a sharded collection holds no libraries to choose from")
        return None

    def scope(self, request: SearchRequest) -> ShardedView:
        if request.libraries:
            raise NotFoundError("a sharded collection holds no libraries to choose from")
        return self.at(request.root) if request.root else self.view

    def roots(self) -> list[RootInfo]:
        """The view as one entry."""
        v = self.view
        return [
            RootInfo(
                id=v.root,
                parent=None,
                created="",
                nodes=v.live_count,
                edges=int(v.manifest.graph.get("edges", 0)),
                segments=len(v.clients),
                head=True,
            )
        ]

    def finish(self, response: SearchResponse) -> SearchResponse:
        missing = self.view.take_missing()
        diag: dict[str, Any] = dict(response.diagnostics)
        diag["shards"] = len(self.view.clients)
        diag["partial"] = bool(missing)
        diag["missing_shards"] = [self.view.clients[i].label for i in missing]
        return SearchResponse(
            results=response.results, root=response.root, diagnostics=diag, nodes=response.nodes
        )


class ShardedCollection(Reader):
    """A read-only collection over a sharded view."""

    def __init__(self, view: ShardedView, path: str | Path = "") -> None:
        super().__init__(_ViewPorts(view, Path(path).resolve().name if path else ""))
        self.view = view
        self.path = str(path)

    @classmethod
    def open(
        cls, path: str | Path, ray: str | None = None, *, allow_partial: bool = False
    ) -> ShardedCollection:
        """The sharded collection at ``path``: shard actors on Ray (``ray`` = an address or
        ``local``), or every shard in this process."""
        return cls(open_view(path, ray, allow_partial=allow_partial), path)
