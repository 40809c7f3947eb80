"""The one bounded traversal: seeds -> rows ``(seed, end node, depth, path)``.

Everything graph-shaped goes through :func:`traverse` (``query_graph`` hops and
variable-length patterns, ``get_related``, the learning path, resolve_xref anchors, facets,
graph rerank): there is no second, unbounded path into the graph. The bounds live here:

- depth: ``max_depth <= MAX_DEPTH`` (4); more raises ``QueryGraphError('depth')``;
- rows: at most ``MAX_ROWS`` (1000) rows per call; hitting the cap stops the walk and sets
  ``truncated`` (a caller that asks for more is silently capped);
- time: a call has a ``deadline`` (a ``time.monotonic()`` value; a call with neither a
  deadline nor a work cap gets ``DEFAULT_BUDGET_S``). The clock is read on entry and every
  ``CLOCK_EVERY`` edge expansions; past the deadline the walk raises
  ``QueryGraphError('timeout')``. This is the graph tools' bound (the spec gives them a time
  budget), and what they answer may depend on the load;
- work: ``max_expansions`` caps the edge expansions of a call; reaching it stops the walk and
  sets ``truncated`` and ``spent``. A call with a work cap and no deadline reads no clock, so
  what it returns depends only on the graph and its arguments, never on the machine or its
  load: ranking (the graph rerank) walks only this way. Such a call does not pause the garbage
  collector (:mod:`cogitave.graph.pause`): a collection pass can only delay it;
- labels: only the closed edge vocabulary (``QueryGraphError('label')`` names the allowed ones).

Two walk orders. ``unique="node"`` is a breadth-first search that reports each reachable node
once per seed with its shortest path (``get_related``, facets). ``unique="edge"`` enumerates
paths depth-first with no relationship repeated inside a path: openCypher's semantics for a
variable-length relationship (``query_graph``). Memory stays O(rows + depth * fan-out) for
paths and O(reached nodes) for the breadth-first walk.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import nullcontext
from dataclasses import dataclass, field
from typing import Literal, NamedTuple

import numpy as np

from cogitave.errors import QueryGraphError
from cogitave.graph.pause import collector_paused
from cogitave.schema import EDGE_LABEL_SET, EDGE_LABELS
from cogitave.store.graph import GraphSegment

MAX_DEPTH = 4
"""Deepest hop count any traversal may take (the spec's d <= 4)."""
MAX_ROWS = 1000
"""Most rows one traversal call returns; the walk stops there and reports ``truncated``."""
DEFAULT_BUDGET_S = 0.25
"""Time budget of a call that passes no deadline."""
CLOCK_EVERY = 256
"""Edge expansions between two clock reads (a read costs ~50 ns; 256 expansions ~50 us)."""

Direction = Literal["out", "in", "both"]
Unique = Literal["node", "edge"]
NodeFilter = Callable[[int], bool]


class Hop(NamedTuple):
    """One step of a path: the edge label, the way it was walked, the node it reached."""

    label: str
    direction: Literal["out", "in"]
    node: int


class Row(NamedTuple):
    """One traversal result: ``node`` reached from ``seed`` in ``depth`` hops along ``path``."""

    seed: int
    node: int
    depth: int
    path: tuple[Hop, ...]


@dataclass
class Traversal:
    """The rows of one call, whether the row cap cut the walk short, and the work done."""

    rows: list[Row] = field(default_factory=list)
    truncated: bool = False
    expansions: int = 0
    spent: bool = False
    """The walk stopped at ``max_expansions`` (``truncated`` is set too)."""
    max_expansions: int | None = None


class _Full(Exception):
    """Internal: the row cap or the work cap is reached (stops the walk)."""


_Arm = tuple[str, Literal["out", "in"], np.ndarray, np.ndarray]


def check_labels(labels: Iterable[str] | None) -> tuple[str, ...]:
    """The labels to walk (all when ``None``); unknown ones raise ``label`` naming the allowed."""
    if labels is None:
        return EDGE_LABELS
    if isinstance(labels, str):
        labels = (labels,)
    out = tuple(dict.fromkeys(labels))
    bad = [label for label in out if label not in EDGE_LABEL_SET]
    if bad:
        raise QueryGraphError(
            "label",
            f"unknown relationship type {bad[0]!r}; allowed types are: {', '.join(EDGE_LABELS)}",
            details={"label": bad[0], "allowed": list(EDGE_LABELS)},
        )
    if not out:
        raise QueryGraphError("label", "give at least one relationship type (or none for all)")
    return out


def check_depth(min_depth: int, max_depth: int) -> None:
    """Raise ``depth`` unless ``0 <= min_depth <= max_depth <= MAX_DEPTH``."""
    for v in (min_depth, max_depth):
        if isinstance(v, bool) or not isinstance(v, int):
            raise QueryGraphError("depth", f"depth must be an integer, not {v!r}")
    if max_depth > MAX_DEPTH:
        raise QueryGraphError(
            "depth",
            f"depth {max_depth} is past the maximum of {MAX_DEPTH}; use at most *1..{MAX_DEPTH}",
            details={"max": MAX_DEPTH, "depth": max_depth},
        )
    if min_depth < 0 or min_depth > max_depth:
        raise QueryGraphError(
            "depth", f"depth range {min_depth}..{max_depth} is empty; write *a..b with a <= b"
        )


def _arms(graph: GraphSegment, labels: tuple[str, ...], direction: Direction) -> list[_Arm]:
    def make() -> list[_Arm]:
        arms: list[_Arm] = []
        for label in labels:
            for d in ("out", "in") if direction == "both" else (direction,):
                ip, ix = graph.csr(label, d)  # type: ignore[arg-type]
                if ix.shape[0]:
                    # plain ndarray views of the mapped arrays: numpy.memmap's __getitem__ is
                    # Python code, and the rerank reads two offsets per node per arm
                    arms.append((label, d, np.asarray(ip), np.asarray(ix)))  # type: ignore[arg-type]
        return arms

    out: list[_Arm] = graph.memo(("arms", labels, direction), make)
    return out


def traverse(
    graph: GraphSegment,
    seeds: Iterable[int],
    *,
    labels: Sequence[str] | None = None,
    direction: Direction = "out",
    min_depth: int = 1,
    max_depth: int = 1,
    max_rows: int = MAX_ROWS,
    deadline: float | None = None,
    node_filter: NodeFilter | None = None,
    unique: Unique = "node",
    max_expansions: int | None = None,
) -> Traversal:
    """Walk from ``seeds`` along ``labels`` (all by default) in ``direction``.

    Rows are the nodes reached at depth ``min_depth..max_depth`` that pass ``node_filter``
    (nodes failing it are still walked through). ``deadline`` is a ``time.monotonic()`` value.
    ``max_expansions`` (a work cap) stops the walk after that many edge expansions, with
    ``truncated`` and ``spent`` set; with it and no ``deadline`` no clock is read, and the same
    arguments give the same rows on any machine at any load.
    """
    if deadline is None and max_expansions is not None:
        deadline = math.inf  # bounded by work alone: no clock is read
    else:
        now = time.monotonic()
        if deadline is None:
            deadline = now + DEFAULT_BUDGET_S
        if now > deadline:
            raise _timeout(0)
    if direction not in ("out", "in", "both"):
        raise QueryGraphError("syntax", f"direction must be out, in or both, not {direction!r}")
    if unique not in ("node", "edge"):
        raise QueryGraphError("syntax", f"unique must be node or edge, not {unique!r}")
    check_depth(min_depth, max_depth)
    if isinstance(max_rows, bool) or not isinstance(max_rows, int) or max_rows < 1:
        raise QueryGraphError("limit", f"max_rows must be a positive integer, not {max_rows!r}")
    max_rows = min(max_rows, MAX_ROWS)
    cap = max_expansions
    if cap is not None and (isinstance(cap, bool) or not isinstance(cap, int) or cap < 0):
        raise QueryGraphError(
            "limit", f"max_expansions must be a non-negative integer, not {max_expansions!r}"
        )
    arms = _arms(graph, check_labels(labels), direction)
    result = Traversal(max_expansions=max_expansions)
    n = graph.n_nodes
    starts = [s for s in map(int, seeds) if 0 <= s < n]  # no edge is read before the walk
    if not arms and min_depth > 0:  # no edge of these labels: nothing is reachable
        return result
    walk = _walk_nodes if unique == "node" else _walk_edges
    both = direction == "both"
    with nullcontext() if deadline == math.inf else collector_paused():
        try:
            for seed, spans in _seed_spans(arms, starts):
                walk(
                    seed,
                    arms,
                    both,
                    min_depth,
                    max_depth,
                    max_rows,
                    deadline,
                    node_filter,
                    result,
                    spans,
                )
        except _Full:
            result.truncated = True
    return result


_Span = tuple[str, Literal["out", "in"], np.ndarray, int, int]
"""An arm's edges of one node: (label, direction, indices, start, end)."""


SEED_BLOCK = 256
"""Seeds whose edge offsets are read together (a walk that stops at its row cap early has
not read the offsets of every seed)."""


def _seed_spans(arms: list[_Arm], seeds: list[int]) -> Iterator[tuple[int, list[_Span]]]:
    """Each seed with its non-empty arms, the offsets read for a block of seeds at once (one
    array read per arm instead of two scalar reads per seed and arm: most of a one-hop walk's
    cost)."""
    for b in range(0, len(seeds), SEED_BLOCK):
        block = seeds[b : b + SEED_BLOCK]
        spans: list[list[_Span]] = [[] for _ in block]
        at = np.asarray(block, np.int64)
        for label, d, ip, ix in arms:
            los, his = ip[at].tolist(), ip[at + 1].tolist()
            for j, (lo, hi) in enumerate(zip(los, his, strict=True)):
                if lo < hi:
                    spans[j].append((label, d, ix, lo, hi))
        yield from zip(block, spans, strict=True)


def _node_spans(u: int, arms: list[_Arm]) -> list[_Span]:
    """The non-empty arms of node ``u``."""
    out: list[_Span] = []
    for label, d, ip, ix in arms:
        lo, hi = int(ip[u]), int(ip[u + 1])
        if lo < hi:
            out.append((label, d, ix, lo, hi))
    return out


def _timeout(expansions: int) -> QueryGraphError:
    return QueryGraphError(
        "timeout",
        f"graph traversal ran past its time budget after {expansions} edge expansions; "
        "start from fewer or more specific nodes, name relationship types, or lower the depth",
        details={"expansions": expansions},
    )


def _neighbours(
    u: int, spans: list[_Span], both: bool
) -> Iterator[tuple[str, Literal["out", "in"], int]]:
    """The edges of ``u`` (its ``spans``) in order, read ``CLOCK_EVERY`` at a time (a hub's
    edge list is never copied whole before the walk's caps see its first edge)."""
    for label, d, ix, lo, hi in spans:
        for start in range(lo, hi, CLOCK_EVERY):
            for v in ix[start : min(hi, start + CLOCK_EVERY)].tolist():
                # A self-loop walked both ways is one relationship: keep the outgoing reading.
                if both and d == "in" and v == u:
                    continue
                yield label, d, v


def _tick(result: Traversal, deadline: float) -> None:
    """Count one edge expansion: past the work cap, stop; every CLOCK_EVERY of them, check
    the deadline."""
    if result.max_expansions is not None and result.expansions >= result.max_expansions:
        result.spent = True
        raise _Full
    result.expansions += 1
    if (
        not result.expansions & (CLOCK_EVERY - 1)
        and deadline != math.inf
        and time.monotonic() > deadline
    ):
        raise _timeout(result.expansions)


def _emit(
    result: Traversal,
    max_rows: int,
    node_filter: NodeFilter | None,
    seed: int,
    node: int,
    depth: int,
    path: tuple[Hop, ...],
) -> None:
    """Add the row reaching ``node`` if it passes the filter; past ``max_rows``, stop."""
    if node_filter is None or node_filter(node):
        if len(result.rows) >= max_rows:
            raise _Full
        result.rows.append(Row(seed, node, depth, path))


def _walk_nodes(
    seed: int,
    arms: list[_Arm],
    both: bool,
    min_depth: int,
    max_depth: int,
    max_rows: int,
    deadline: float,
    node_filter: NodeFilter | None,
    result: Traversal,
    spans: list[_Span],
) -> None:
    """Breadth-first: each node once per seed, with its shortest path (``spans``: the
    seed's own edges)."""
    if min_depth == 0:
        _emit(result, max_rows, node_filter, seed, seed, 0, ())
    seen = {seed}
    frontier: list[tuple[int, tuple[Hop, ...]]] = [(seed, ())]
    for depth in range(1, max_depth + 1):
        nxt: list[tuple[int, tuple[Hop, ...]]] = []
        for u, path in frontier:
            edges = spans if depth == 1 else _node_spans(u, arms)
            for label, d, v in _neighbours(u, edges, both):
                _tick(result, deadline)
                if v in seen:
                    continue
                seen.add(v)
                # The path is made only for a row or the next frontier: a 1-hop walk with a
                # filter (the graph rerank's) reads most edges and keeps few of them.
                row = depth >= min_depth and (node_filter is None or node_filter(v))
                if row or depth < max_depth:
                    p2 = (*path, Hop(label, d, v))
                    if row:
                        _emit(result, max_rows, None, seed, v, depth, p2)
                    if depth < max_depth:
                        nxt.append((v, p2))
        frontier = nxt
        if not frontier:
            break


def _walk_edges(
    seed: int,
    arms: list[_Arm],
    both: bool,
    min_depth: int,
    max_depth: int,
    max_rows: int,
    deadline: float,
    node_filter: NodeFilter | None,
    result: Traversal,
    spans: list[_Span],
) -> None:
    """Depth-first path enumeration, no relationship twice in one path (openCypher)
    (``spans``: the seed's own edges)."""
    if min_depth == 0:
        _emit(result, max_rows, node_filter, seed, seed, 0, ())

    def dfs(
        u: int, depth: int, path: tuple[Hop, ...], used: tuple[tuple[int, str, int], ...]
    ) -> None:
        nd = depth + 1
        for label, d, v in _neighbours(u, spans if depth == 0 else _node_spans(u, arms), both):
            _tick(result, deadline)
            edge = (u, label, v) if d == "out" else (v, label, u)
            if edge in used:
                continue
            p2 = (*path, Hop(label, d, v))
            if nd >= min_depth:
                _emit(result, max_rows, node_filter, seed, v, nd, p2)
            if nd < max_depth:
                dfs(v, nd, p2, (*used, edge))

    if max_depth > 0:
        dfs(seed, 0, (), ())


def path_edges(seed: int, path: Sequence[Hop]) -> list[tuple[int, str, int]]:
    """The relationships of a path as ``(src id, label, dst id)`` in walking order."""
    out: list[tuple[int, str, int]] = []
    prev = seed
    for hop in path:
        out.append(
            (prev, hop.label, hop.node) if hop.direction == "out" else (hop.node, hop.label, prev)
        )
        prev = hop.node
    return out
