"""facets: a result set -> the kinds, edge labels and exact values around it (one bounded
traversal)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from cogitave.graph.related import DEFAULT_TIMEOUT_MS, _deadline
from cogitave.graph.traverse import (
    Direction,
    traverse,
)
from cogitave.store.graph import GraphSegment


# -- facets -----------------------------------------------------------------------------------
@dataclass(frozen=True)
class Facets:
    """Kinds of the distinct neighbours of a result set, the labels of the edges that reached
    them, and (with ``node_props``) the counts of each exact dimension's values."""

    kinds: dict[str, int]
    labels: dict[str, int]
    nodes: int
    truncated: bool
    values: dict[str, dict[str, int]] = field(default_factory=dict)


def facets(
    graph: GraphSegment,
    ids: Iterable[int | str],
    labels: Sequence[str] | None = None,
    depth: int = 1,
    direction: Direction = "both",
    *,
    timeout_ms: float = DEFAULT_TIMEOUT_MS,
    node_props: Callable[[int], Mapping[str, Any]] | None = None,
) -> Facets:
    """Counts over the neighbourhood (``depth`` hops) of ``ids`` (node ids or uids; unknown
    uids are skipped). The seeds themselves are not counted."""
    seeds: list[int] = []
    for x in ids:
        i = graph.id_of(x) if isinstance(x, str) else int(x)
        if i is not None and 0 <= i < graph.n_nodes:
            seeds.append(i)
    seeds = list(dict.fromkeys(seeds))
    seed_set = set(seeds)
    tr = traverse(
        graph,
        seeds,
        labels=labels,
        direction=direction,
        max_depth=depth,
        deadline=_deadline(timeout_ms),
    )
    nodes: set[int] = set()
    edges: set[tuple[int, str, int]] = set()
    for r in tr.rows:
        prev = r.path[-2].node if len(r.path) > 1 else r.seed
        last = r.path[-1]
        edges.add(
            (prev, last.label, r.node) if last.direction == "out" else (r.node, last.label, prev)
        )
        if r.node not in seed_set:
            nodes.add(r.node)
    kinds = Counter(graph.kind(n) for n in nodes)
    by_label = Counter(label for _, label, _ in edges)
    values: dict[str, Counter[str]] = {}
    for n in nodes if node_props is not None else ():
        for dim, v in node_props(n).items():
            for x in v if isinstance(v, tuple | list) else (v,):
                values.setdefault(dim, Counter())[str(x)] += 1
    return Facets(
        dict(kinds.most_common()),
        dict(by_label.most_common()),
        len(nodes),
        tr.truncated,
        {d: dict(c.most_common()) for d, c in values.items()},
    )
