"""get_learning_path: a target (uid, skill, role) -> what to read before it, in order."""

from __future__ import annotations

import heapq
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from cogitave.errors import NotFoundError
from cogitave.graph.related import DEFAULT_TIMEOUT_MS, _deadline, _require
from cogitave.graph.traverse import (
    MAX_DEPTH,
    MAX_ROWS,
    traverse,
)
from cogitave.graph.xref import resolve_xref, slug
from cogitave.store.graph import GraphSegment

LEARNING_LABELS = ("dependsOn",)
TEACHER_LABELS = ("teachesSkill", "forRole")


# -- get_learning_path ------------------------------------------------------------------------
@dataclass(frozen=True)
class LearningStep:
    uid: str
    kind: str
    title: str
    why: str
    context: tuple[dict[str, str], ...] = ()


@dataclass(frozen=True)
class LearningPath:
    """Steps in order (prerequisites first, the target last). ``cycles`` lists dependsOn
    cycles found (their members are kept together, not looped); ``truncated`` when a bound
    (depth 4, row cap) stopped the walk before every prerequisite was seen."""

    target: str
    steps: tuple[LearningStep, ...]
    cycles: tuple[tuple[str, ...], ...] = ()
    truncated: bool = False
    notes: tuple[str, ...] = field(default_factory=tuple)


def _find_target(graph: GraphSegment, target: str) -> int:
    if (i := graph.id_of(target)) is not None:
        return i
    want = slug(target.split(":", 1)[1] if ":" in target else target)
    for kind in ("skill", "role"):
        if (i := graph.id_of(f"{kind}:{want}")) is not None:
            return i
        for i in graph.ids_of_kind(kind).tolist():
            if slug(graph.title(i)) == want or graph.uid(i).rsplit(":", 1)[-1] == want:
                return int(i)
    res = resolve_xref(graph, target)
    if res.exact:
        return _require(graph, res.candidates[0].uid)
    hint = ", ".join(c.uid for c in res.candidates) or "none"
    raise NotFoundError(f"no node, skill or role matches {target!r}; closest: {hint}")


def get_learning_path(
    graph: GraphSegment, target: str, *, timeout_ms: float = DEFAULT_TIMEOUT_MS
) -> LearningPath:
    """What to read before ``target`` (a uid, ``skill:<slug>``, ``role:<slug>``, or a skill or
    role name): its ``dependsOn`` prerequisites (up to 4 hops), pages teaching a target skill
    or written for a target role, in topological order, each with a ``why`` and its
    containing pages (``partOf``) as context."""
    deadline = _deadline(timeout_ms)
    t = _find_target(graph, target)
    why: dict[int, str] = {t: "the target"}
    truncated = False

    # Who teaches the target (skill) or is written for it (role): depth 1, incoming.
    teach = traverse(graph, (t,), labels=TEACHER_LABELS, direction="in", deadline=deadline)
    truncated |= teach.truncated
    tt = graph.title(t) or graph.uid(t)
    for r in teach.rows:
        label = r.path[0].label
        why.setdefault(r.node, f"teaches {tt}" if label == "teachesSkill" else f"written for {tt}")
    roots = [t, *(r.node for r in teach.rows)]

    # Prerequisites: dependsOn closure of the roots, each node once, nearest reason kept.
    pre = traverse(
        graph,
        roots,
        labels=LEARNING_LABELS,
        direction="out",
        max_depth=MAX_DEPTH,
        deadline=deadline,
    )
    truncated |= pre.truncated
    depth: dict[int, int] = dict.fromkeys(roots, 0)
    for r in pre.rows:
        parent = r.path[-2].node if len(r.path) > 1 else r.seed
        if r.node not in why:
            why[r.node] = f"prerequisite of {graph.title(parent) or graph.uid(parent)}"
        depth[r.node] = max(depth.get(r.node, 0), r.depth)
    members = set(why)

    # Order constraints inside the set: u dependsOn v => v first; teacher before target.
    inner = traverse(
        graph,
        list(members),
        labels=(*LEARNING_LABELS, *TEACHER_LABELS),
        direction="out",
        deadline=deadline,
        node_filter=members.__contains__,
    )
    truncated |= inner.truncated
    before: dict[int, set[int]] = {m: set() for m in members}
    for r in inner.rows:
        if r.path[0].label in TEACHER_LABELS:
            before[r.node].add(r.seed)  # read the teaching page before the skill / role
        else:
            before[r.seed].add(r.node)  # seed dependsOn node: the node comes first
    # More prerequisites past the depth bound?
    edge_nodes = [m for m, d in depth.items() if d >= MAX_DEPTH]
    if edge_nodes:
        beyond = traverse(
            graph,
            edge_nodes,
            labels=LEARNING_LABELS,
            deadline=deadline,
            node_filter=lambda v: v not in members,
            max_rows=1,
        )
        truncated |= bool(beyond.rows)

    order, cycles = _topo(graph, before, depth)
    for comp in cycles:
        names = ", ".join(graph.title(i) or graph.uid(i) for i in comp)
        for i in comp:
            why[i] += f" (in a dependsOn cycle: {names})"

    ctx = traverse(
        graph,
        order,
        labels=("partOf",),
        direction="out",
        max_depth=2,
        deadline=deadline,
    )
    context: dict[int, list[dict[str, str]]] = {}
    for r in ctx.rows:
        context.setdefault(r.seed, []).append(
            {"uid": graph.uid(r.node), "title": graph.title(r.node)}
        )
    steps = tuple(
        LearningStep(graph.uid(i), graph.kind(i), graph.title(i), why[i], tuple(context.get(i, ())))
        for i in order
    )
    notes: tuple[str, ...] = ()
    if truncated:
        notes = (f"prerequisites past {MAX_DEPTH} hops or {MAX_ROWS} rows are not listed",)
    return LearningPath(
        graph.uid(t),
        steps,
        tuple(tuple(graph.uid(i) for i in c) for c in cycles),
        truncated,
        notes,
    )


def _topo(
    graph: GraphSegment, before: Mapping[int, set[int]], depth: Mapping[int, int]
) -> tuple[list[int], list[list[int]]]:
    """Topological order (prerequisites first) of the condensation of ``before``; returns the
    order and the strongly connected components that are cycles."""
    comps = _scc(before)
    comp_of = {v: ci for ci, comp in enumerate(comps) for v in comp}
    cycles = [
        sorted(c, key=graph.uid) for c in comps if len(c) > 1 or any(v in before[v] for v in c)
    ]
    n = len(comps)
    needs: list[set[int]] = [set() for _ in range(n)]
    for v, pres in before.items():
        for u in pres:
            if comp_of[u] != comp_of[v]:
                needs[comp_of[v]].add(comp_of[u])
    users: list[set[int]] = [set() for _ in range(n)]
    for c, ns in enumerate(needs):
        for u in ns:
            users[u].add(c)

    def key(c: int) -> tuple[int, str]:
        # Deepest prerequisites first; ties by title for a stable, readable order.
        return (
            -max(depth.get(v, 0) for v in comps[c]),
            min(graph.title(v) or graph.uid(v) for v in comps[c]),
        )

    left = [len(ns) for ns in needs]
    ready = [(key(c), c) for c in range(n) if not left[c]]
    heapq.heapify(ready)
    order: list[int] = []
    while ready:
        _, c = heapq.heappop(ready)
        order.extend(sorted(comps[c], key=lambda v: (graph.title(v), graph.uid(v))))
        for u in users[c]:
            left[u] -= 1
            if not left[u]:
                heapq.heappush(ready, (key(u), u))
    return order, cycles


def _scc(edges: Mapping[int, set[int]]) -> list[list[int]]:
    """Tarjan's strongly connected components, iterative."""
    index: dict[int, int] = {}
    low: dict[int, int] = {}
    on: set[int] = set()
    stack: list[int] = []
    out: list[list[int]] = []
    counter = 0
    for root in edges:
        if root in index:
            continue
        work: list[tuple[int, Any]] = [(root, iter(edges[root]))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            advanced = False
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(edges.get(w, ()))))
                    advanced = True
                    break
                if w in on:
                    low[v] = min(low[v], index[w])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                out.append(comp)
    return out
