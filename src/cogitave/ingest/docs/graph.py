"""The docs graph being drawn: nodes by uid and deduplicated out-edges, frozen at the end
into :class:`~cogitave.nodes.Node` values (edges to a node that never came are dropped and
listed)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from cogitave.nodes import DimValue, Edge, Node

# Dimensions kept even when empty: every node has a title, every code node a language.
_ALWAYS = ("title", "language")


@dataclass
class _Draft:
    uid: str
    kind: str
    dims: dict[str, DimValue]
    content: str | None = None
    meta: dict[str, Any] = field(default_factory=dict)


@dataclass
class GraphDraft:
    """Nodes by uid and out-edges in insertion order; duplicates and self-loops are ignored."""

    nodes: dict[str, _Draft] = field(default_factory=dict)
    edges: dict[str, dict[tuple[str, str], None]] = field(default_factory=dict)

    def node(
        self,
        uid: str,
        kind: str,
        dims: dict[str, DimValue],
        content: str | None = None,
        meta: dict[str, Any] | None = None,
    ) -> None:
        """Add (or replace) a node; empty text dimensions are left out."""
        kept = {k: v for k, v in dims.items() if v != "" or k in _ALWAYS}
        self.nodes[uid] = _Draft(uid, kind, kept, content, meta or {})

    def edge(self, src: str, label: str, dst: str) -> None:
        """Record ``src -label-> dst`` once."""
        if src != dst:
            self.edges.setdefault(src, {})[(label, dst)] = None

    def dims(self, uid: str) -> dict[str, DimValue]:
        """The dimensions of a node already added."""
        return self.nodes[uid].dims

    def build(self) -> tuple[list[Node], Counter[str], list[str]]:
        """Frozen nodes, edge counts by label, and the edges dropped for a missing endpoint."""
        nodes: list[Node] = []
        counts: Counter[str] = Counter()
        dropped: list[str] = []
        for d in self.nodes.values():
            edges: list[Edge] = []
            for label, dst in self.edges.get(d.uid, {}):
                if dst in self.nodes:
                    edges.append(Edge(label, dst))
                    counts[label] += 1
                else:
                    dropped.append(f"{d.uid} -{label}-> {dst}")
            nodes.append(Node(d.uid, d.kind, d.dims, d.content, tuple(edges), d.meta))
        dropped.extend(
            f"{src} -{label}-> {dst}"
            for src, out in self.edges.items()
            if src not in self.nodes
            for label, dst in out
        )
        return nodes, counts, dropped
