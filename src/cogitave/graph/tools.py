"""Graph tools behind the MCP surface: related nodes, learning paths, xref resolution, facets.

uid / reference / result set -> bounded neighbourhood answers. Each tool reaches the graph only
through :func:`~cogitave.graph.traverse.traverse` (depth <= 4, <= 1000 rows per call, one
deadline per tool call: ``timeout_ms``, default 250, never above ``MAX_TIMEOUT_MS``), so the
bounds of ``query_graph`` hold here too. Node-index lookups (uid -> id, titles, kinds) are not
traversals and read the segment directly.
"""

from __future__ import annotations

import difflib
import heapq
import posixpath
import re
import time
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from cogitave.errors import NotFoundError, QueryGraphError
from cogitave.graph.traverse import (
    MAX_DEPTH,
    MAX_ROWS,
    Direction,
    Hop,
    check_labels,
    traverse,
)
from cogitave.store.graph import GraphSegment

DEFAULT_TIMEOUT_MS = 250
MAX_TIMEOUT_MS = 1000
PATH_EXTENSIONS = (".md", ".mdx", ".markdown", ".html", ".htm", ".rst", ".txt", ".ipynb")
LEARNING_LABELS = ("dependsOn",)
TEACHER_LABELS = ("teachesSkill", "forRole")


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


# -- resolve_xref -----------------------------------------------------------------------------
@dataclass(frozen=True)
class XrefCandidate:
    uid: str
    kind: str
    title: str
    score: float
    evidence: str


@dataclass(frozen=True)
class XrefResult:
    """Candidates best first; ``exact`` when the best one matched (not just looked similar)."""

    ref: str
    exact: bool
    candidates: tuple[XrefCandidate, ...]


_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://[^/]*")
_SYMBOL = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)+(\(\))?$")


def slug(text: str) -> str:
    """GitHub-style heading anchor: lower case, punctuation dropped, spaces to ``-``."""
    s = re.sub(r"[^\w\- ]", "", text.strip().lower())
    return re.sub(r"\s+", "-", s)


def path_key(ref: str, *, keep_anchor: bool = False) -> tuple[str, ...]:
    """A path or URL reduced to comparable segments (no scheme/host, query, extension,
    ``index``/``README``, ``.``/``..``), case-folded. The ``#anchor`` is dropped, or kept as a
    last ``#anchor`` segment with ``keep_anchor`` (section uids must not collide with pages)."""
    s = _SCHEME.sub("", ref.strip())
    s, _, anchor = s.partition("#")
    s = s.split("?", 1)[0]
    segs = [p for p in s.split("/") if p and p not in (".", "..")]
    if segs:
        last = segs[-1]
        for ext in PATH_EXTENSIONS:
            if last.lower().endswith(ext):
                segs[-1] = last[: -len(ext)]
                break
        if segs[-1].lower() in ("index", "readme", "_index"):
            segs.pop()
    if keep_anchor and anchor:
        segs.append("#" + anchor)
    return tuple(x.casefold() for x in segs)


def _symbol_key(title: str) -> str:
    t = title.strip().strip("`").strip()
    t = re.sub(r"\(.*\)$", "", t)
    return t.casefold()


class _XrefIndex:
    def __init__(self, graph: GraphSegment) -> None:
        self.by_path: dict[tuple[str, ...], list[int]] = {}
        self.by_last: dict[str, list[int]] = {}
        self.by_title: dict[str, list[int]] = {}
        self.by_symbol: dict[str, list[int]] = {}
        self.by_symbol_tail: dict[str, list[int]] = {}
        self.by_uid_fold: dict[str, list[int]] = {}
        self.keys: list[tuple[str, ...]] = []
        for i, (uid, title) in enumerate(zip(graph.uids(), graph.titles(), strict=True)):
            key = path_key(uid, keep_anchor=True)
            self.keys.append(key)
            self.by_path.setdefault(key, []).append(i)
            if key:
                self.by_last.setdefault(key[-1], []).append(i)
            self.by_uid_fold.setdefault(uid.casefold(), []).append(i)
            if title:
                self.by_title.setdefault(title.strip().casefold(), []).append(i)
                sym = _symbol_key(title)
                self.by_symbol.setdefault(sym, []).append(i)
                if _SYMBOL.match(sym):
                    self.by_symbol_tail.setdefault(sym.rsplit(".", 1)[-1], []).append(i)
        self.titles = list(self.by_title)
        self.paths = {"/".join(k): k for k in self.by_path if k}


def _index(graph: GraphSegment) -> _XrefIndex:
    out: _XrefIndex = graph.memo("xref-index", lambda: _XrefIndex(graph))
    return out


def resolve_xref(
    graph: GraphSegment,
    ref: str,
    *,
    aliases: Mapping[str, str] | None = None,
    base: str | None = None,
    limit: int = 5,
    timeout_ms: float = DEFAULT_TIMEOUT_MS,
) -> XrefResult:
    """Resolve a reference: a uid, an alias, a relative path (``../x.md``, against ``base``
    when given), a URL path (``/tutorial/x/``), ``page#anchor``, a title (any case) or an API
    symbol (``fastapi.Depends``). Unknown references get the closest titles and paths
    (difflib) with ``exact=False``."""
    if not isinstance(ref, str) or not ref.strip():
        raise QueryGraphError("syntax", "give a reference to resolve (a uid, path, title ...)")
    ref = ref.strip()
    found: dict[int, tuple[float, str]] = {}

    def add(ids: Iterable[int], score: float, evidence: str) -> None:
        for i in ids:
            if i not in found or found[i][0] < score:
                found[i] = (score, evidence)

    if (i := graph.id_of(ref)) is not None:
        add((i,), 1.0, "uid")
    page, _, anchor = ref.partition("#")
    if anchor:
        pages = _resolve_plain(graph, page, aliases or {}, base) if page else {}
        if not page and base is not None and (b := graph.id_of(base)) is not None:
            pages = {b: (1.0, "the base page")}
        hits, score, evidence = _anchor_candidates(graph, pages, anchor, timeout_ms)
        add(hits, score, evidence)
        for i, (s, ev) in pages.items():
            if hits:
                add((i,), min(s, 0.5), f"{ev}; the page holding #{anchor}")
            else:
                add((i,), s * 0.8, f"{ev}; anchor #{anchor} not found in it")
    else:
        for i, (s, ev) in _resolve_plain(graph, ref, aliases or {}, base).items():
            add((i,), s, ev)

    exact = bool(found)
    if not found:
        for i, (score, ev) in _similar(graph, page or ref).items():
            add((i,), score, ev)
    ranked = sorted(found.items(), key=lambda kv: (-kv[1][0], graph.uid(kv[0])))[: max(1, limit)]
    cands = tuple(
        XrefCandidate(graph.uid(i), graph.kind(i), graph.title(i), round(s, 3), ev)
        for i, (s, ev) in ranked
    )
    exact = exact and bool(cands) and "not found" not in cands[0].evidence
    return XrefResult(ref, exact, cands)


def _resolve_plain(
    graph: GraphSegment, ref: str, aliases: Mapping[str, str], base: str | None
) -> dict[int, tuple[float, str]]:
    ix = _index(graph)
    out: dict[int, tuple[float, str]] = {}

    def add(ids: Iterable[int], score: float, evidence: str) -> None:
        for i in ids:
            if i not in out or out[i][0] < score:
                out[i] = (score, evidence)

    if (i := graph.id_of(ref)) is not None:
        add((i,), 1.0, "uid")
    add(ix.by_uid_fold.get(ref.casefold(), ()), 0.97, "uid (case-insensitive)")
    if ref in aliases and (i := graph.id_of(aliases[ref])) is not None:
        add((i,), 0.98, f"alias of {aliases[ref]}")
    key = path_key(ref)
    if base is not None and not ref.startswith("/") and not _SCHEME.match(ref):
        joined = posixpath.normpath(posixpath.join(posixpath.dirname(base), ref))
        bkey = path_key(joined)
        if bkey:
            add(ix.by_path.get(bkey, ()), 0.96, f"path relative to {base}")
    if key:
        add(ix.by_path.get(key, ()), 0.95, "path")
        if key not in ix.by_path:
            # An absolute URL under a site prefix (https://host/docs/tutorial/x/) or a source
            # path under the docs folder (docs/tutorial/x.md): the longest tail of it that is
            # a page's path.
            for k in range(1, len(key)):
                if key[k:] in ix.by_path:
                    add(ix.by_path[key[k:]], 0.93, f"path under {'/'.join(key[:k])}/")
                    break
        suffix = [i for i in ix.by_last.get(key[-1], ()) if ix.keys[i][-len(key) :] == key]
        if suffix:
            add(suffix, 0.85 if len(suffix) == 1 else 0.75, f"path ends with {'/'.join(key)}")
    add(ix.by_title.get(ref.casefold(), ()), 0.9, "title")
    sym = _symbol_key(ref)
    if _SYMBOL.match(ref):
        add(ix.by_symbol.get(sym, ()), 0.9, "API symbol")
        tail = sym.rsplit(".", 1)[-1]
        add(ix.by_symbol.get(tail, ()), 0.7, f"title is {ref.rsplit('.', 1)[-1]}")
    elif re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*(\(\))?", ref):
        add(ix.by_symbol_tail.get(sym, ()), 0.8, f"API symbol ending in .{ref}")
    return out


def _anchor_candidates(
    graph: GraphSegment, pages: Mapping[int, tuple[float, str]], anchor: str, timeout_ms: float
) -> tuple[list[int], float, str]:
    want = slug(anchor)
    hits: list[int] = []
    for p in pages:
        i = graph.id_of(f"{graph.uid(p)}#{anchor}")
        if i is not None:
            hits.append(i)
    if hits:
        # The section whose uid is page#anchor; a code sample titled like it is not it.
        return hits, 0.97, f"section #{anchor}"
    if pages:
        # Sections of the page: nodes that are partOf it (up to two levels down).
        tr = traverse(
            graph,
            list(pages),
            labels=("partOf",),
            direction="in",
            max_depth=2,
            deadline=_deadline(timeout_ms),
            node_filter=lambda v: (
                slug(graph.title(v)) == want or graph.uid(v).rsplit("#", 1)[-1] == anchor
            ),
        )
        hits.extend(r.node for r in tr.rows)
    return hits, 0.95, f"section #{anchor}"


def _similar(graph: GraphSegment, ref: str) -> dict[int, tuple[float, str]]:
    """Closest titles and paths by difflib ratio; scores stay below any exact match."""
    ix = _index(graph)
    out: dict[int, tuple[float, str]] = {}
    want = ref.casefold()
    for t in difflib.get_close_matches(want, ix.titles, n=5, cutoff=0.5):
        ratio = difflib.SequenceMatcher(None, want, t).ratio()
        for i in ix.by_title[t]:
            out[i] = max(out.get(i, (0.0, "")), (0.5 * ratio, f"similar title ({ratio:.2f})"))
    key = "/".join(path_key(ref))
    if key:
        for p in difflib.get_close_matches(key, list(ix.paths), n=5, cutoff=0.6):
            ratio = difflib.SequenceMatcher(None, key, p).ratio()
            for i in ix.by_path[ix.paths[p]]:
                out[i] = max(out.get(i, (0.0, "")), (0.5 * ratio, f"similar path ({ratio:.2f})"))
    return out


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


__all__ = [
    "Facets",
    "LearningPath",
    "LearningStep",
    "PathStep",
    "Related",
    "RelatedResult",
    "XrefCandidate",
    "XrefResult",
    "check_labels",
    "facets",
    "get_learning_path",
    "get_related",
    "path_key",
    "resolve_xref",
    "slug",
]
