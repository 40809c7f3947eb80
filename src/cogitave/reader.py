"""The read side: a :class:`Reader` answers every read over a read port, plain or sharded.

A reader gets its read ports (:mod:`cogitave.store.port`) from a :class:`Ports`: the current
one, or a retained root by id. A plain collection's ports are snapshots of its roots
(:class:`~cogitave.collection.Collection`); a sharded collection's port is a view over its
shards (:class:`~cogitave.distributed.facade.ShardedCollection`). Search, nodes, the graph
tools and the description of the collection are written once, here, over the port: a read
answers the same on either.

>>> reader.search(SearchRequest(query="reciprocal rank fusion"))   # doctest: +SKIP
>>> reader.related("guides/cli#search", labels=["partOf"])           # doctest: +SKIP
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Protocol

from cogitave.errors import CogitaveError, NotFoundError
from cogitave.graph import tools as graph_tools
from cogitave.graph.query import GraphQueryResult, query_graph
from cogitave.graph.tools import Facets, LearningPath, RelatedResult, XrefResult
from cogitave.graph.traverse import Direction
from cogitave.libraries.layout import LibraryEntry, Pin, version_order
from cogitave.nodes import Node, uid_namespace
from cogitave.query.engine import Engine
from cogitave.query.types import SearchRequest, SearchResponse
from cogitave.schema import EDGE_LABELS, Schema
from cogitave.store.port import ReadPort
from cogitave.store.roots import RootInfo

FOLLOW_INTERVAL = 0.25
"""Seconds between two looks at what writers published when following (a ``stat``; a read
when it moved)."""

log = logging.getLogger("cogitave")


class Follower:
    """A background thread that calls ``look`` every ``interval`` seconds until stopped (a
    reader following what writers publish). A look that raises calls ``forget``, so the next
    one starts afresh, and the thread keeps following: a root or manifest caught mid-replace
    is looked at again rather than ending the serving. The error is logged (the ``cogitave``
    logger, a warning): once while it repeats, again when it changes or comes back after a
    look that worked."""

    def __init__(self, look: Callable[[], object], forget: Callable[[], None]) -> None:
        self._look, self._forget = look, forget
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()

    def start(self, interval: float) -> None:
        """Start following (once: a second call while following does nothing)."""
        if self._thread is not None:
            return
        self._stop.clear()

        def loop() -> None:
            last = ""
            while not self._stop.wait(interval):
                try:
                    self._look()
                    last = ""
                except Exception as e:
                    self._forget()
                    said = f"{type(e).__name__}: {e}"
                    if said != last:
                        log.warning(
                            "following the collection's new roots: %s (still serving the "
                            "current root; looking again)",
                            said,
                            exc_info=not isinstance(e, CogitaveError),
                        )
                    last = said

        self._thread = threading.Thread(target=loop, name="cogitave-follow", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop following and wait for the thread."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        self._thread = None


class Ports(Protocol):
    """Where a reader gets its read ports."""

    def current(self) -> ReadPort:
        """The port reads go to when no root is named."""
        ...

    def at(self, root: str) -> ReadPort:
        """The port of a retained root (``NotFoundError`` when there is none)."""
        ...

    def scope(self, request: SearchRequest) -> ReadPort:
        """The port a search reads: its ``root``, its ``libraries``, else the current one."""
        ...

    def roots(self) -> list[RootInfo]:
        """The roots this reader can read, newest first."""
        ...

    def finish(self, response: SearchResponse) -> SearchResponse:
        """A search's response with what only these ports know added to its diagnostics."""
        ...

    def library_name(self) -> str:
        """The name of the one library a reader of no libraries holds."""
        ...

    def library_details(self) -> tuple[str | None, str, str | None]:
        """(version, source, commit) of that one library as its source's metadata gave them
        when indexed (None, "", None where it gave none)."""
        ...

    def namespaces(self, libraries: Sequence[str] | None) -> tuple[str, ...] | None:
        """The library versions (``name@version``) a read of ``libraries`` covers, in order
        (None: a reader of no libraries, whose uids have no namespace)."""
        ...


@dataclass(frozen=True)
class Description:
    """What a reader holds, in the words the tool descriptions quote."""

    kinds: tuple[str, ...]
    semantic: tuple[str, ...]
    exact: tuple[str, ...]
    labels: tuple[str, ...]
    nodes: int
    libraries: tuple[str, ...] = ()
    """``name version, version`` per library held (a collection of libraries)."""


class Reader:
    """Search, nodes and the graph tools over one :class:`Ports`."""

    def __init__(self, ports: Ports) -> None:
        self._ports = ports

    # -- the port ---------------------------------------------------------------------------
    def port(self, root: str | None = None) -> ReadPort:
        """The read port of ``root`` (a retained root id), or the current one."""
        return self._ports.at(root) if root else self._ports.current()

    def engine(self, root: str | None = None) -> Engine:
        """The engine over ``root``'s port (engines hold nothing but the port)."""
        return Engine(self.port(root))

    @property
    def root(self) -> str:
        return self._ports.current().root

    @property
    def schema(self) -> Schema:
        return self._ports.current().schema

    def __len__(self) -> int:
        return self._ports.current().live_count

    def roots(self) -> list[RootInfo]:
        """The retained roots (a sharded view: the view itself), newest first."""
        return self._ports.roots()

    def systems(self) -> tuple[str, ...]:
        """The search modes this reader runs (dense ones need stored vectors)."""
        return self.engine().systems()

    def warm(self) -> None:
        """Load what the first query would (lexicon, encoder, indexes) ahead of traffic."""
        self.engine().warm()

    def follow(self) -> None:
        """Keep reading the newest root as writers publish (servers call this once; a reader
        whose roots never move, such as a sharded view, has nothing to follow)."""

    def libraries(self) -> list[LibraryEntry]:
        """The library versions this reader holds (a collection made without libraries: one,
        named, versioned and sourced as its source's metadata gave them, else from its source
        at ``latest``)."""
        port = self._ports.current()
        version, source, commit = self._ports.library_details()
        return [
            LibraryEntry(
                name=self._ports.library_name(),
                version=version or "latest",
                dir="",
                root=port.root,
                source=source,
                commit=commit,
                nodes=port.live_count,
                pages=port.graph.count_by_kind().get("page", 0),
            )
        ]

    def pin_of(self, ref: str) -> Pin | None:
        """How a project chose library version ``ref`` (None: no project pins it)."""
        return None

    def project_pins(self) -> tuple[Any, ...]:
        """Per dependency of the project read (``--project``) that is a library held here,
        what was chosen and why (:class:`~cogitave.libraries.collection.ProjectPin`)."""
        return ()

    def project_warnings(self) -> tuple[str, ...]:
        """What the project read could not use (one line each; every answer carries them)."""
        return ()

    def describe(self) -> Description:
        """Kinds, dimensions and edge labels of the current root."""
        port = self._ports.current()
        schema = port.schema
        return Description(
            kinds=tuple(port.graph.kind_names),
            semantic=tuple(schema.semantic),
            exact=tuple(d for d in schema.exact if d != "kind"),
            labels=EDGE_LABELS,
            nodes=port.live_count,
            libraries=self._library_lines(),
        )

    def _library_lines(self) -> tuple[str, ...]:
        entries = [e for e in self.libraries() if e.dir]  # a collection of no libraries: none
        lines = []
        for key in dict.fromkeys(e.key for e in entries):
            versions = sorted((e.version for e in entries if e.key == key), key=version_order)
            lines.append(f"{key} ({', '.join(reversed(versions))})")
        return tuple(lines)

    # -- search and nodes -------------------------------------------------------------------
    def search(self, request: SearchRequest | str, **kw: Any) -> SearchResponse:
        """Run a search (a string is shorthand for ``SearchRequest(query=...)``)."""
        req = request if isinstance(request, SearchRequest) else SearchRequest(query=request, **kw)
        return self._ports.finish(Engine(self._ports.scope(req)).search(req))

    def namespaces(self, libraries: Sequence[str] | None = None) -> tuple[str, ...] | None:
        """The library versions (``name@version``) a read of ``libraries`` covers (None: a
        reader of no libraries)."""
        return self._ports.namespaces(libraries)

    def qualify(self, uid: str, libraries: Sequence[str] | None = None) -> str:
        """``uid`` in the namespace of the first library version ``libraries`` covers that
        holds it (a page path is the same in every version); a uid with its namespace, or a
        reader of no libraries: as it is."""
        spaces = self.namespaces(libraries)
        if not spaces or uid_namespace(uid) is not None:
            return uid
        graph = self._ports.current().graph
        for ns in spaces:
            if graph.id_of(f"{ns}:{uid}") is not None:
                return f"{ns}:{uid}"
        return f"{spaces[0]}:{uid}"

    def get(self, uid: str, *, root: str | None = None) -> Node:
        """A live node by uid (the content API), from ``root`` (a retained root id, e.g. the
        one a search answered from) or the current root."""
        port = self.port(root)
        nid = port.id_of(uid)
        if nid is None:
            raise NotFoundError(f"no node with uid {uid!r} in root {port.root[:12]}")
        return port.node(nid)

    # -- the graph: every call goes through the one bounded traversal ------------------------
    def query_graph(
        self, text: str, params: Mapping[str, Any] | None = None, *, timeout_ms: float = 250
    ) -> GraphQueryResult:
        """A bounded, read-only openCypher-style query (see :mod:`cogitave.graph.query`)."""
        port = self._ports.current()
        return query_graph(
            port.graph, text, params, timeout_ms=timeout_ms, node_props=node_props(port)
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
        graph = self._ports.current().graph
        return graph_tools.get_related(graph, uid, labels, direction, depth, limit)

    def learning_path(self, target: str) -> LearningPath:
        """Prerequisites first, for a node uid, a skill or a role."""
        return graph_tools.get_learning_path(self._ports.current().graph, target)

    def resolve_xref(
        self,
        ref: str,
        *,
        base: str | None = None,
        limit: int = 5,
        libraries: Sequence[str] | None = None,
    ) -> XrefResult:
        """The node(s) a reference names (uid, path, URL, ``page#anchor``, alias, title). In
        a collection of libraries, candidates of the versions ``libraries`` covers (each
        library's default version when None) come first; named libraries: theirs only."""
        port = self._ports.current()
        spaces = self._ports.namespaces(libraries)
        if not spaces:
            return graph_tools.resolve_xref(
                port.graph, ref, aliases=port.aliases, base=base, limit=limit
            )
        res = graph_tools.resolve_xref(
            port.graph, ref, aliases=port.aliases, base=base, limit=max(limit, 50)
        )
        inside = [c for c in res.candidates if uid_namespace(c.uid) in spaces]
        others = [] if libraries else [c for c in res.candidates if c not in inside]
        cands = tuple([*inside, *others][:limit])
        return replace(res, candidates=cands, exact=res.exact and bool(inside or others))

    def facets(
        self, uids: Sequence[str], labels: Sequence[str] | None = None, depth: int = 1
    ) -> Facets:
        """Kinds, edge labels and exact-dimension values around a set of nodes (e.g. a
        result page), through the bounded traversal."""
        port = self._ports.current()
        return graph_tools.facets(
            port.graph, list(uids), labels, depth, node_props=node_props(port)
        )


def node_props(port: ReadPort) -> Callable[[int], Mapping[str, Any]]:
    """Graph node id -> the node's exact-dimension values (what graph answers show)."""
    exact = [d for d in port.schema.exact if d != "kind"]
    graph = port.graph

    def props(gid: int) -> Mapping[str, Any]:
        nid = port.id_of(graph.uid(gid))
        if nid is None:
            return {}
        node = port.node(nid)
        return {d: node.dims[d] for d in exact if d in node.dims}

    return props
