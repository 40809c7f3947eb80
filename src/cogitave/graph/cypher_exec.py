"""query_graph, stage 3: a validated plan + a graph -> rows, within the budget.

Execution is a chain of generators (MATCH clause -> MATCH clause -> projection), so nothing is
materialised that LIMIT does not need: without ORDER BY the pipeline stops after
``skip + limit + 1`` rows; with ORDER BY a heap keeps ``skip + limit + 1`` rows; aggregation and
DISTINCT keep at most ``MAX_GROUPS`` keys (more raises ``limit``).

Bounds enforced here:

- every hop of every pattern (single or variable-length) is one :func:`traverse` call with the
  plan's labels and hop range, ``unique="edge"`` and the query's deadline, so traversal depth,
  per-expansion row cap and the clock are the traversal's;
- the matcher's own loops (anchor candidates, cross products of comma patterns and MATCH
  clauses, WHERE, projection, grouping) call :meth:`Executor.tick`, which reads the clock every
  ``TICK_EVERY`` steps; past the deadline the query raises ``timeout``. So a cross product of
  patterns that never traverses an edge is bounded by the same clock.

Matching picks, per pattern and per incoming row, the most selective node as the anchor (a bound
variable, then a ``uid``, then a kind) and walks the chain outwards from it. Relationship
uniqueness holds inside one MATCH clause, as in openCypher.
"""

from __future__ import annotations

import heapq
import itertools
import json
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from cogitave.errors import QueryGraphError
from cogitave.graph.cypher_ast import (
    BoolOp,
    Compare,
    Expr,
    Func,
    In,
    IsNull,
    ListExpr,
    Lit,
    Not,
    Param,
    Prop,
    SortItem,
    StrOp,
    Var,
)
from cogitave.graph.traverse import MAX_ROWS, path_edges, traverse
from cogitave.store.graph import GraphSegment

TICK_EVERY = 64
MAX_GROUPS = 100_000
MAX_ROW_BYTES = 100_000
NODE_JSON_CHARS = 120  # {"uid","kind","title"} of a typical node
_EDGES = " edges"  # row key of the relationships used in the current clause (not a name)

NodeProps = Callable[[int], Mapping[str, Any]]
VarKind = Literal["node", "rel", "rels"]


@dataclass(frozen=True)
class NodeRef:
    id: int


@dataclass(frozen=True)
class RelRef:
    src: int
    label: str
    dst: int


# -- plan (built and checked by cogitave.graph.query) ---------------------------------------
@dataclass(frozen=True)
class NodeSpec:
    var: str
    kinds: tuple[str, ...]
    props: tuple[tuple[str, Any], ...]


@dataclass(frozen=True)
class HopSpec:
    var: str | None
    labels: tuple[str, ...] | None
    direction: Literal["out", "in", "both"]
    min_hops: int
    max_hops: int
    var_length: bool


@dataclass(frozen=True)
class PathSpec:
    nodes: tuple[NodeSpec, ...]
    hops: tuple[HopSpec, ...]


@dataclass(frozen=True)
class ClauseSpec:
    optional: bool
    paths: tuple[PathSpec, ...]
    where: Expr | None
    new_vars: tuple[str, ...]
    uid_hints: Mapping[str, tuple[str, ...]] = field(default_factory=dict)


@dataclass(frozen=True)
class ItemSpec:
    expr: Expr
    column: str
    aggregate: bool


@dataclass(frozen=True)
class Plan:
    clauses: tuple[ClauseSpec, ...]
    items: tuple[ItemSpec, ...]
    distinct: bool
    order: tuple[SortItem, ...]
    order_cols: tuple[int | None, ...]
    skip: int
    limit: int
    var_kinds: Mapping[str, VarKind]
    params: Mapping[str, Any]

    @property
    def aggregate(self) -> bool:
        return any(i.aggregate for i in self.items)


# -- value semantics (openCypher's, for the types we have) ----------------------------------
def _num(x: Any) -> bool:
    return isinstance(x, int | float) and not isinstance(x, bool)


def equal(a: Any, b: Any) -> bool | None:
    """openCypher ``=``: null if either side is null, false across types."""
    if a is None or b is None:
        return None
    if _num(a) and _num(b):
        return bool(a == b)
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return False
        unknown = False
        for x, y in zip(a, b, strict=True):
            e = equal(x, y)
            if e is False:
                return False
            unknown |= e is None
        return None if unknown else True
    if type(a) is not type(b):
        return False
    return bool(a == b)


def _order(op: str, a: Any, b: Any) -> bool | None:
    if a is None or b is None:
        return None
    if not ((_num(a) and _num(b)) or (type(a) is type(b) and isinstance(a, str | bool))):
        return None
    if op == "<":
        return bool(a < b)
    if op == "<=":
        return bool(a <= b)
    if op == ">":
        return bool(a > b)
    return bool(a >= b)


def hashable(v: Any) -> Any:
    if isinstance(v, list):
        return ("\0list", *(hashable(x) for x in v))
    if isinstance(v, dict):
        return ("\0map", *sorted((k, hashable(x)) for k, x in v.items()))
    if isinstance(v, float) and v.is_integer():
        return int(v)  # 1 and 1.0 group together, as in openCypher
    return v


_RANK = {dict: 0, NodeRef: 1, RelRef: 2, list: 3, str: 5, bool: 6}


def sort_key(v: Any) -> tuple[Any, ...]:
    """openCypher orderability: maps, nodes, relationships, lists, strings, booleans, numbers,
    then null (ascending)."""
    if v is None:
        return (9,)
    if _num(v):
        return (7, v)
    rank = _RANK.get(type(v), 8)
    if isinstance(v, NodeRef):
        return (rank, v.id)
    if isinstance(v, RelRef):
        return (rank, v.src, v.label, v.dst)
    if isinstance(v, list):
        return (rank, tuple(sort_key(x) for x in v))
    if isinstance(v, dict):
        return (rank, json.dumps(v, sort_keys=True, default=str))
    if rank == 8:
        return (rank, str(v))
    return (rank, v)


class _Rev:
    """Inverts the order of a key component (DESC)."""

    __slots__ = ("k",)

    def __init__(self, k: Any) -> None:
        self.k = k

    def __lt__(self, other: _Rev) -> bool:
        return bool(other.k < self.k)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Rev) and bool(self.k == other.k)

    __hash__ = None  # type: ignore[assignment]


def _truth(v: Any) -> bool | None:
    return v if isinstance(v, bool) else None


# -- executor -------------------------------------------------------------------------------
class Executor:
    """Runs one :class:`Plan` against one graph before ``deadline`` (a monotonic time)."""

    def __init__(
        self,
        graph: GraphSegment,
        plan: Plan,
        *,
        deadline: float,
        node_props: NodeProps | None = None,
    ) -> None:
        self.g = graph
        self.plan = plan
        self.deadline = deadline
        self.node_props = node_props
        self.ticks = 0
        self.traversals = 0
        self.expansions = 0
        self.capped = 0
        self._props: dict[int, Mapping[str, Any]] = {}

    def tick(self) -> None:
        self.ticks += 1
        if not self.ticks % TICK_EVERY and time.monotonic() > self.deadline:
            raise QueryGraphError("timeout", "deadline")

    # -- top level --------------------------------------------------------------------------
    def run(self) -> tuple[list[list[Any]], bool]:
        """Output rows (JSON-ready) and whether anything was cut off."""
        p = self.plan
        want = p.skip + p.limit + 1
        rows: Iterator[dict[str, Any]] = iter([{}])
        for clause in p.clauses:
            rows = self._clause(clause, rows)
        if p.aggregate:
            projected = self._aggregate(rows)
        else:
            projected = ((self._project(r), r) for r in rows)
            if p.distinct:
                projected = self._distinct(projected)
        if p.order:
            top = heapq.nsmallest(want, projected, key=self._sort_key)
        else:
            top = list(itertools.islice(projected, want))
        page = top[p.skip : p.skip + p.limit]
        truncated = len(top) > p.skip + p.limit or self.capped > 0
        return [vals for vals, _ in page], truncated

    def _project(self, row: Mapping[str, Any]) -> list[Any]:
        self.tick()
        vals = [self.eval(item.expr, row) for item in self.plan.items]
        # One row past the result bound fails here, before thousands like it are kept.
        if json_size(vals, MAX_ROW_BYTES) > MAX_ROW_BYTES:
            raise QueryGraphError(
                "limit",
                f"a row would be larger than {MAX_ROW_BYTES} bytes (response bytes bound); "
                "return fewer or smaller values",
                details={"bound": "response_bytes", "max": MAX_ROW_BYTES},
            )
        return vals

    def _distinct(
        self, rows: Iterable[tuple[list[Any], Mapping[str, Any]]]
    ) -> Iterator[tuple[list[Any], Mapping[str, Any]]]:
        seen: set[Any] = set()
        for vals, row in rows:
            key = hashable(vals)
            if key in seen:
                continue
            if len(seen) >= MAX_GROUPS:
                raise _too_many("DISTINCT")
            seen.add(key)
            yield vals, row

    def _aggregate(
        self, rows: Iterable[Mapping[str, Any]]
    ) -> Iterator[tuple[list[Any], Mapping[str, Any]]]:
        items = self.plan.items
        keys_at = [i for i, it in enumerate(items) if not it.aggregate]
        groups: dict[Any, tuple[list[Any], list[Any]]] = {}
        for row in rows:
            self.tick()
            kvals = [self.eval(items[i].expr, row) for i in keys_at]
            gk = hashable(kvals)
            g = groups.get(gk)
            if g is None:
                if len(groups) >= MAX_GROUPS:
                    raise _too_many("count()")
                accs: list[Any] = [
                    (set() if it.expr.distinct else 0)  # type: ignore[union-attr]
                    if it.aggregate
                    else None
                    for it in items
                ]
                g = groups[gk] = (kvals, accs)
            accs = g[1]
            for i, it in enumerate(items):
                if not it.aggregate:
                    continue
                f: Func = it.expr  # type: ignore[assignment]
                if f.star:
                    accs[i] += 1
                    continue
                v = self.eval(f.args[0], row)
                if v is None:
                    continue
                if f.distinct:
                    accs[i].add(hashable(v))
                else:
                    accs[i] += 1
        if not groups and not keys_at:
            groups[()] = ([], [0 if it.aggregate else None for it in items])
        for kvals, accs in groups.values():
            out: list[Any] = []
            kit = iter(kvals)
            for i, it in enumerate(items):
                if it.aggregate:
                    a = accs[i]
                    out.append(len(a) if isinstance(a, set) else a)
                else:
                    out.append(next(kit))
            yield out, {}

    def _sort_key(self, entry: tuple[list[Any], Mapping[str, Any]]) -> tuple[Any, ...]:
        vals, row = entry
        ctx: dict[str, Any] | None = None
        key: list[Any] = []
        for item, col in zip(self.plan.order, self.plan.order_cols, strict=True):
            if col is not None:
                v = vals[col]
            else:
                if ctx is None:
                    ctx = dict(row)
                    ctx.update(
                        {" alias " + it.column: vals[i] for i, it in enumerate(self.plan.items)}
                    )
                v = self.eval(item.expr, ctx)
            k = sort_key(v)
            key.append(_Rev(k) if item.descending else k)
        return tuple(key)

    # -- matching ---------------------------------------------------------------------------
    def _clause(
        self, clause: ClauseSpec, rows: Iterator[dict[str, Any]]
    ) -> Iterator[dict[str, Any]]:
        for row in rows:
            start = {**row, _EDGES: ()}
            found = False
            for r in self._paths(clause, 0, start):
                self.tick()
                if clause.where is not None and self.eval(clause.where, r) is not True:
                    continue
                found = True
                yield r
            if clause.optional and not found:
                yield {**row, **dict.fromkeys(clause.new_vars)}

    def _paths(self, clause: ClauseSpec, i: int, row: dict[str, Any]) -> Iterator[dict[str, Any]]:
        if i == len(clause.paths):
            yield row
            return
        for r in self._chain(clause, clause.paths[i], row):
            yield from self._paths(clause, i + 1, r)

    def _estimate(self, clause: ClauseSpec, spec: NodeSpec, row: Mapping[str, Any]) -> int:
        if spec.var in row:
            return 1
        uids = self._uids_for(clause, spec)
        if uids is not None:
            return len(uids)
        if spec.kinds:
            return int(self.g.ids_of_kind(spec.kinds[0]).shape[0])
        return self.g.n_nodes

    def _uids_for(self, clause: ClauseSpec, spec: NodeSpec) -> tuple[Any, ...] | None:
        for key, value in spec.props:
            if key == "uid":
                return (value,)
        return clause.uid_hints.get(spec.var)

    def _candidates(
        self, clause: ClauseSpec, spec: NodeSpec, row: Mapping[str, Any]
    ) -> Iterable[int]:
        if spec.var in row:
            v = row[spec.var]
            return () if v is None else (v,)
        uids = self._uids_for(clause, spec)
        if uids is not None:
            ids = {self.g.id_of(u) for u in uids if isinstance(u, str)}
            return sorted(i for i in ids if i is not None)
        if spec.kinds:
            return self.g.ids_of_kind(spec.kinds[0]).tolist()  # type: ignore[no-any-return]
        return range(self.g.n_nodes)

    def node_ok(self, spec: NodeSpec, id: int) -> bool:
        if spec.kinds:
            kind = self.g.kind(id)
            if any(k != kind for k in spec.kinds):
                return False
        return all(equal(self.node_prop(id, k), v) is True for k, v in spec.props)

    def _chain(
        self, clause: ClauseSpec, path: PathSpec, row: dict[str, Any]
    ) -> Iterator[dict[str, Any]]:
        nodes = path.nodes
        est = [self._estimate(clause, n, row) for n in nodes]
        anchor = min(range(len(nodes)), key=lambda i: (est[i], i))
        # Steps outward from the anchor: rightwards along the pattern, then leftwards reversed.
        steps = [(i, i, i + 1, False) for i in range(anchor, len(path.hops))]
        steps += [(i, i + 1, i, True) for i in range(anchor - 1, -1, -1)]
        spec = nodes[anchor]
        bound = spec.var in row
        for nid in self._candidates(clause, spec, row):
            self.tick()
            if not self.node_ok(spec, nid):
                continue
            r = row if bound else {**row, spec.var: nid}
            yield from self._walk(path, steps, 0, r)

    def _walk(
        self,
        path: PathSpec,
        steps: list[tuple[int, int, int, bool]],
        k: int,
        row: dict[str, Any],
    ) -> Iterator[dict[str, Any]]:
        if k == len(steps):
            yield row
            return
        hop_i, from_i, to_i, reverse = steps[k]
        hop = path.hops[hop_i]
        to = path.nodes[to_i]
        src = row[path.nodes[from_i].var]
        direction = hop.direction
        if reverse and direction != "both":
            direction = "in" if direction == "out" else "out"
        target: int | None = None
        if to.var in row:
            target = row[to.var]
            if target is None:
                return  # bound to null by an OPTIONAL MATCH: nothing can match

        def accept(v: int) -> bool:
            return (target is None or v == target) and self.node_ok(to, v)

        tr = traverse(
            self.g,
            (src,),
            labels=hop.labels,
            direction=direction,
            min_depth=hop.min_hops,
            max_depth=hop.max_hops,
            max_rows=MAX_ROWS,
            deadline=self.deadline,
            node_filter=accept,
            unique="edge",
        )
        self.traversals += 1
        self.expansions += tr.expansions
        self.capped += tr.truncated
        used: tuple[tuple[int, str, int], ...] = row[_EDGES]
        for trow in tr.rows:
            self.tick()
            edges = path_edges(src, trow.path)
            if used and any(e in used for e in edges):
                continue
            r = {**row, to.var: trow.node, _EDGES: used + tuple(edges)}
            if hop.var is not None:
                if hop.var_length:
                    r[hop.var] = edges[::-1] if reverse else edges
                else:
                    r[hop.var] = edges[0]
            yield from self._walk(path, steps, k + 1, r)

    # -- expressions ------------------------------------------------------------------------
    def node_prop(self, id: int, key: str) -> Any:
        if key == "uid":
            return self.g.uid(id)
        if key == "kind":
            return self.g.kind(id)
        if key == "title":
            return self.g.title(id)
        if self.node_props is None:
            return None
        props = self._props.get(id)
        if props is None:
            props = self._props[id] = self.node_props(id) or {}
        v = props.get(key)
        return list(v) if isinstance(v, tuple) else v

    def eval(self, e: Expr, row: Mapping[str, Any]) -> Any:
        if isinstance(e, Lit):
            return e.value
        if isinstance(e, Prop):
            kind = self.plan.var_kinds.get(e.var)
            if kind == "node":
                nid = row.get(e.var)
                return None if nid is None else self.node_prop(nid, e.key)
            return None
        if isinstance(e, Var):
            alias = " alias " + e.name
            if alias in row:
                return row[alias]
            return self._var(e.name, row)
        if isinstance(e, Param):
            return self.plan.params[e.name]
        if isinstance(e, BoolOp):
            return self._bool(e, row)
        if isinstance(e, Not):
            v = _truth(self.eval(e.expr, row))
            return None if v is None else not v
        if isinstance(e, Compare):
            a, b = self.eval(e.left, row), self.eval(e.right, row)
            if e.op == "=":
                return equal(a, b)
            if e.op == "<>":
                eq = equal(a, b)
                return None if eq is None else not eq
            return _order(e.op, a, b)
        if isinstance(e, IsNull):
            isnull = self.eval(e.expr, row) is None
            return not isnull if e.negated else isnull
        if isinstance(e, In):
            return self._in(self.eval(e.left, row), self.eval(e.right, row))
        if isinstance(e, StrOp):
            a, b = self.eval(e.left, row), self.eval(e.right, row)
            if not (isinstance(a, str) and isinstance(b, str)):
                return None
            if e.op == "STARTS WITH":
                return a.startswith(b)
            if e.op == "ENDS WITH":
                return a.endswith(b)
            return b in a
        if isinstance(e, ListExpr):
            return [self.eval(x, row) for x in e.items]
        if isinstance(e, Func):
            return self._func(e, row)
        raise QueryGraphError("syntax", f"unsupported expression {type(e).__name__}")

    def _var(self, name: str, row: Mapping[str, Any]) -> Any:
        v = row.get(name)
        if v is None:
            return None
        kind = self.plan.var_kinds.get(name)
        if kind == "node":
            return NodeRef(v)
        if kind == "rel":
            return RelRef(*v)
        if kind == "rels":
            return [RelRef(*x) for x in v]
        return v

    def _bool(self, e: BoolOp, row: Mapping[str, Any]) -> bool | None:
        if e.op == "XOR":
            acc: bool | None = False
            for x in e.items:
                v = _truth(self.eval(x, row))
                acc = None if v is None or acc is None else acc != v
            return acc
        stop = e.op == "OR"  # OR stops at the first true, AND at the first false
        unknown = False
        for x in e.items:
            v = _truth(self.eval(x, row))
            if v is stop:
                return stop
            unknown |= v is None
        return None if unknown else not stop

    @staticmethod
    def _in(x: Any, lst: Any) -> bool | None:
        if lst is None or not isinstance(lst, list):
            return None
        unknown = x is None and bool(lst)
        for y in lst:
            eq = equal(x, y)
            if eq is True:
                return True
            unknown |= eq is None
        return None if unknown else False

    def _func(self, e: Func, row: Mapping[str, Any]) -> Any:
        if e.name == "type":
            v = self.eval(e.args[0], row)
            return v.label if isinstance(v, RelRef) else None
        raise QueryGraphError("syntax", f"{e.name}() is only allowed as a RETURN item")


def json_size(v: Any, cap: int) -> int:
    """Characters of ``v`` as JSON (nodes and relationships at about their JSON size),
    counted until past ``cap``; a value repeated in a list counts each time."""
    total = 0
    stack = [v]
    while stack and total <= cap:
        x = stack.pop()
        if isinstance(x, str):
            total += len(x) + 3
        elif isinstance(x, list):
            total += 2 + len(x)
            stack.extend(x)
        elif isinstance(x, NodeRef | RelRef):
            total += NODE_JSON_CHARS
        else:
            total += len(str(x)) + 1
    return total


def to_json(g: GraphSegment, v: Any) -> Any:
    """Internal value -> JSON-ready value (nodes as ``{uid, kind, title}``)."""
    if isinstance(v, NodeRef):
        return {"uid": g.uid(v.id), "kind": g.kind(v.id), "title": g.title(v.id)}
    if isinstance(v, RelRef):
        return {"type": v.label, "start": g.uid(v.src), "end": g.uid(v.dst)}
    if isinstance(v, list):
        return [to_json(g, x) for x in v]
    return v


def _too_many(what: str) -> QueryGraphError:
    return QueryGraphError(
        "limit",
        f"{what} would keep more than {MAX_GROUPS} groups; narrow the pattern or the WHERE",
        details={"max_groups": MAX_GROUPS},
    )
