"""get_related: a uid -> its neighbours within ``depth`` hops, each with the path that reached
it; the helpers every graph tool shares (one deadline per call, uid lookup, explained paths).

Each tool reaches the graph only through :func:`~cogitave.graph.traverse.traverse` (depth <= 4,
<= 1000 rows per call, one deadline per tool call: ``timeout_ms``, default 250, never above
``MAX_TIMEOUT_MS``), so the bounds of ``query_graph`` hold here too.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass

from cogitave.errors import NotFoundError, QueryGraphError
from cogitave.graph.traverse import (
    MAX_ROWS,
    Direction,
    Hop,
    traverse,
)
from cogitave.store.graph import GraphSegment

DEFAULT_TIMEOUT_MS = 250
MAX_TIMEOUT_MS = 1000


def _deadline(timeout_ms: float) -> float:
    ms = min(max(float(timeout_ms), 1.0), MAX_TIMEOUT_MS)
    return time.monotonic() + ms / 1000.0


def _require(graph: GraphSegment, uid: str) -> int:
    i = graph.id_of(uid)
    if i is None:
        raise NotFoundError(f"no node with uid {uid!r} in this graph; try resolve_xref")
    return i


@dataclass(frozen=True)
class PathStep:
    """One hop of an explained path: ``label`` walked ``direction`` to node ``uid``."""

    label: str
    direction: str
    uid: str


def _explain(graph: GraphSegment, path: Sequence[Hop]) -> tuple[PathStep, ...]:
    return tuple(PathStep(h.label, h.direction, graph.uid(h.node)) for h in path)


# -- get_related ------------------------------------------------------------------------------
@dataclass(frozen=True)
class Related:
    uid: str
    kind: str
    title: str
    depth: int
    path: tuple[PathStep, ...]


@dataclass(frozen=True)
class RelatedResult:
    uid: str
    items: tuple[Related, ...]
    truncated: bool


def get_related(
    graph: GraphSegment,
    uid: str,
    labels: Sequence[str] | None = None,
    direction: Direction = "both",
    depth: int = 1,
    limit: int = 50,
    *,
    timeout_ms: float = DEFAULT_TIMEOUT_MS,
) -> RelatedResult:
    """Nodes within ``depth`` hops of ``uid`` (breadth-first, nearest first), each with the
    shortest path that reached it."""
    seed = _require(graph, uid)
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        raise QueryGraphError("limit", f"limit must be a positive integer, not {limit!r}")
    tr = traverse(
        graph,
        (seed,),
        labels=labels,
        direction=direction,
        min_depth=1,
        max_depth=depth,
        max_rows=min(limit, MAX_ROWS),
        deadline=_deadline(timeout_ms),
    )
    items = tuple(
        Related(
            graph.uid(r.node),
            graph.kind(r.node),
            graph.title(r.node),
            r.depth,
            _explain(graph, r.path),
        )
        for r in tr.rows
    )
    return RelatedResult(uid, items, tr.truncated)
