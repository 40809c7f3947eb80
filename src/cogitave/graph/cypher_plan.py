"""query_graph stage 2, the checker: a parsed query + parameters -> a checked :class:`Plan`.

Labels in the closed vocabulary, bounded hop ranges (each, and the whole query together),
clause/pattern/hop counts, bound parameters (JSON scalars or flat lists), known variables and
functions, LIMIT/SKIP; every violation is a :class:`QueryGraphError`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

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
    MatchClause,
    Not,
    Param,
    Prop,
    Query,
    StrOp,
    Var,
)
from cogitave.graph.cypher_exec import (
    ClauseSpec,
    HopSpec,
    ItemSpec,
    NodeSpec,
    PathSpec,
    Plan,
    VarKind,
)
from cogitave.graph.traverse import MAX_DEPTH, MAX_ROWS, check_labels

DEFAULT_LIMIT = 100
MAX_LIMIT = MAX_ROWS
MAX_SKIP = 100_000
MAX_CLAUSES = 8
MAX_PATTERNS = 8
MAX_HOPS_PER_PATTERN = 8
MAX_PARAM_LIST = 1000
MAX_PARAM_CHARS = 4000
FUNCTIONS = ("count", "type")


# -- stage 2: check the tree and bind parameters ---------------------------------------------
def check_params(params: Mapping[str, Any] | None) -> dict[str, Any]:
    """Parameter values: JSON scalars or flat lists of scalars."""
    if params is None:
        return {}
    if not isinstance(params, Mapping):
        raise QueryGraphError("param", "params must be an object mapping names to values")
    out: dict[str, Any] = {}
    for name, v in params.items():
        if not isinstance(name, str):
            raise QueryGraphError("param", f"parameter names must be strings, not {name!r}")
        if isinstance(v, list | tuple):
            if len(v) > MAX_PARAM_LIST:
                raise QueryGraphError(
                    "param", f"${name} has {len(v)} items; the maximum is {MAX_PARAM_LIST}"
                )
            for x in v:
                _check_scalar(name, x, in_list=True)
            out[name] = list(v)
        else:
            _check_scalar(name, v, in_list=False)
            out[name] = v
    return out


def _check_scalar(name: str, v: Any, *, in_list: bool) -> None:
    where = f"an item of ${name}" if in_list else f"${name}"
    if v is None or isinstance(v, bool | int):
        if isinstance(v, int) and not isinstance(v, bool) and abs(v) > 2**63 - 1:
            raise QueryGraphError("param", f"{where} is out of the 64-bit integer range")
        return
    if isinstance(v, float):
        if not math.isfinite(v):
            raise QueryGraphError("param", f"{where} must be a finite number")
        return
    if isinstance(v, str):
        if len(v) > MAX_PARAM_CHARS:
            raise QueryGraphError("param", f"{where} is longer than {MAX_PARAM_CHARS} characters")
        return
    kind = "a nested list" if isinstance(v, list | tuple) and in_list else type(v).__name__
    raise QueryGraphError(
        "param",
        f"{where} is {kind}; parameter values must be strings, numbers, booleans, null or "
        "lists of those",
    )


class _Checker:
    def __init__(self, params: Mapping[str, Any]) -> None:
        self.params = params
        self.var_kinds: dict[str, VarKind] = {}
        self.anon = 0

    def param(self, name: str) -> Any:
        if name not in self.params:
            given = ", ".join(f"${p}" for p in sorted(self.params)) or "none"
            raise QueryGraphError(
                "param",
                f"missing parameter ${name}; pass it in params (given: {given})",
                details={"param": name},
            )
        return self.params[name]

    def const(self, e: Expr) -> Any:
        if isinstance(e, Lit):
            return e.value
        if isinstance(e, Param):
            return self.param(e.name)
        if isinstance(e, ListExpr):
            return [self.const(x) for x in e.items]
        raise QueryGraphError("syntax", "property-map values must be literals or $parameters")

    def bind(self, name: str, kind: VarKind) -> None:
        old = self.var_kinds.get(name)
        if old is None:
            self.var_kinds[name] = kind
        elif old != "node" or kind != "node":
            raise QueryGraphError(
                "syntax",
                f"variable {name} is already bound as a "
                f"{'node' if old == 'node' else 'relationship'}; use a new name",
            )

    def expr(self, e: Expr, *, allow_agg: bool, where: str) -> None:
        """Check names, functions, aggregates and parameters of an expression."""
        if isinstance(e, Var):
            if e.name not in self.var_kinds:
                raise _unknown_var(e.name, self.var_kinds)
        elif isinstance(e, Prop):
            if e.var not in self.var_kinds:
                raise _unknown_var(e.var, self.var_kinds)
        elif isinstance(e, Param):
            self.param(e.name)
        elif isinstance(e, ListExpr | BoolOp):
            for x in e.items:
                self.expr(x, allow_agg=False, where=where)
        elif isinstance(e, Not | IsNull):
            self.expr(e.expr, allow_agg=False, where=where)
        elif isinstance(e, Compare | StrOp | In):
            self.expr(e.left, allow_agg=False, where=where)
            self.expr(e.right, allow_agg=False, where=where)
            if isinstance(e, In):
                self._check_in(e.right)
        elif isinstance(e, Func):
            self._func(e, allow_agg=allow_agg, where=where)

    def _check_in(self, right: Expr) -> None:
        if isinstance(right, Param) and not isinstance(self.param(right.name), list | type(None)):
            raise QueryGraphError("param", f"${right.name} must be a list for IN")
        if isinstance(right, Lit) and right.value is not None:
            raise QueryGraphError("syntax", "IN needs a list on its right, e.g. x IN ['a', 'b']")

    def _func(self, e: Func, *, allow_agg: bool, where: str) -> None:
        if e.name not in FUNCTIONS:
            raise QueryGraphError(
                "syntax",
                f"unknown function {e.name}(); the functions are: "
                + ", ".join(f"{f}()" for f in FUNCTIONS),
            )
        if e.name == "count":
            if not allow_agg:
                raise QueryGraphError(
                    "syntax", f"count() is only allowed as a whole RETURN item, not in {where}"
                )
            if not e.star and len(e.args) != 1:
                raise QueryGraphError("syntax", "count takes one argument: count(*) or count(x)")
            for x in e.args:
                self.expr(x, allow_agg=False, where="count()")
            return
        if e.star or e.distinct or len(e.args) != 1:
            raise QueryGraphError("syntax", f"{e.name}() takes exactly one argument")
        self.expr(e.args[0], allow_agg=False, where=where)


def _unknown_var(name: str, known: Mapping[str, Any]) -> QueryGraphError:
    names = ", ".join(sorted(n for n in known if not n.startswith(" "))) or "none"
    return QueryGraphError(
        "syntax", f"unknown variable {name}; variables bound by MATCH are: {names}"
    )


def _hops(rel: Any) -> tuple[int, int]:
    if not rel.star:
        return 1, 1
    if (rel.dotdot and rel.max_hops is None) or (not rel.dotdot and rel.min_hops is None):
        shown = "*" if not rel.dotdot else f"*{rel.min_hops if rel.min_hops is not None else ''}.."
        raise QueryGraphError(
            "unbounded",
            f"unbounded variable-length relationship {shown}: write *1..d with d <= {MAX_DEPTH}",
            details={"max_depth": MAX_DEPTH},
        )
    lo = 1 if rel.min_hops is None else rel.min_hops
    hi = rel.max_hops
    if hi > MAX_DEPTH:
        raise QueryGraphError(
            "depth",
            f"variable-length relationship goes up to {hi} hops; the maximum is {MAX_DEPTH} "
            f"(write *{min(lo, MAX_DEPTH)}..{MAX_DEPTH} or less)",
            details={"max_depth": MAX_DEPTH, "depth": hi},
        )
    if lo > hi:
        raise QueryGraphError("depth", f"hop range *{lo}..{hi} is empty; write *a..b with a <= b")
    return lo, hi


def _is_uid_of(e: Expr, new_vars: set[str]) -> bool:
    return isinstance(e, Prop) and e.key == "uid" and e.var in new_vars


def _uid_hints(where: Expr | None, new_vars: set[str], ck: _Checker) -> dict[str, tuple[Any, ...]]:
    """``v.uid = x`` / ``v.uid IN [...]`` conjuncts of a WHERE, for anchor selection only
    (the WHERE itself is still evaluated in full)."""
    hints: dict[str, tuple[Any, ...]] = {}
    conj = where.items if isinstance(where, BoolOp) and where.op == "AND" else (where,)
    for c in conj:
        if isinstance(c, Compare) and c.op == "=":
            for a, b in ((c.left, c.right), (c.right, c.left)):
                if _is_uid_of(a, new_vars) and isinstance(b, Lit | Param):
                    hints[a.var] = (ck.const(b),)  # type: ignore[union-attr]
        elif isinstance(c, In) and _is_uid_of(c.left, new_vars):
            right = c.right
            if isinstance(right, Param) or (
                isinstance(right, ListExpr) and all(isinstance(x, Lit | Param) for x in right.items)
            ):
                vals = ck.const(right)
                if isinstance(vals, list):
                    hints[c.left.var] = tuple(vals)  # type: ignore[union-attr]
    return hints


def _clause(m: MatchClause, ck: _Checker) -> ClauseSpec:
    before = set(ck.var_kinds)
    paths: list[PathSpec] = []
    if len(m.patterns) > MAX_PATTERNS:
        raise QueryGraphError("syntax", f"more than {MAX_PATTERNS} comma-separated patterns")
    for pat in m.patterns:
        if len(pat.rels) > MAX_HOPS_PER_PATTERN:
            raise QueryGraphError(
                "syntax", f"a pattern has more than {MAX_HOPS_PER_PATTERN} relationships"
            )
        nodes: list[NodeSpec] = []
        for np_ in pat.nodes:
            if np_.var is None:
                ck.anon += 1
                var = f" n{ck.anon}"
            else:
                var = np_.var
            ck.bind(var, "node")
            keys = [k for k, _ in np_.props]
            if len(set(keys)) != len(keys):
                raise QueryGraphError("syntax", f"a property map repeats a key: {keys}")
            props = tuple((k, ck.const(v)) for k, v in np_.props)
            nodes.append(NodeSpec(var, np_.kinds, props))
        hops: list[HopSpec] = []
        for rel in pat.rels:
            labels = check_labels(rel.types) if rel.types else None
            lo, hi = _hops(rel)
            if rel.var is not None:
                ck.bind(rel.var, "rels" if rel.star else "rel")
            hops.append(HopSpec(rel.var, labels, rel.direction, lo, hi, rel.star))
        paths.append(PathSpec(tuple(nodes), tuple(hops)))
    new_vars = tuple(v for v in ck.var_kinds if v not in before)
    if m.where is not None:
        ck.expr(m.where, allow_agg=False, where="WHERE")
    hints = _uid_hints(m.where, set(new_vars), ck) if m.where is not None else {}
    return ClauseSpec(m.optional, tuple(paths), m.where, new_vars, hints)


def _check_total_hops(clauses: tuple[ClauseSpec, ...]) -> None:
    """The traversal bound is on the whole query: its variable-length relationships together
    reach at most ``MAX_DEPTH`` hops (a chain of ``*1..4`` hops is not four hops)."""
    total = sum(h.max_hops for c in clauses for p in c.paths for h in p.hops if h.var_length)
    if total > MAX_DEPTH:
        raise QueryGraphError(
            "depth",
            f"the variable-length relationships of this query reach {total} hops together; "
            f"the whole pattern may reach at most {MAX_DEPTH} (e.g. *1..2 then *1..2)",
            details={"max_depth": MAX_DEPTH, "depth": total},
        )


def _count_value(v: Lit | Param | None, ck: _Checker, what: str, default: int) -> int:
    if v is None:
        return default
    value = v.value if isinstance(v, Lit) else ck.param(v.name)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        code = "param" if isinstance(v, Param) else "syntax"
        raise QueryGraphError(code, f"{what} must be a non-negative integer, not {value!r}")
    return value


def plan(
    query: Query, params: Mapping[str, Any], *, limit_default: int = DEFAULT_LIMIT
) -> tuple[Plan, int]:
    """Stage 2: check a parsed query against the bounds; returns the plan and the LIMIT the
    caller asked for (before the cap)."""
    ck = _Checker(params)
    if len(query.matches) > MAX_CLAUSES:
        raise QueryGraphError("syntax", f"more than {MAX_CLAUSES} MATCH clauses")
    clauses = tuple(_clause(m, ck) for m in query.matches)
    _check_total_hops(clauses)
    items: list[ItemSpec] = []
    for it in query.items:
        ck.expr(it.expr, allow_agg=True, where="RETURN")
        agg = isinstance(it.expr, Func) and it.expr.name == "count"
        items.append(ItemSpec(it.expr, it.column, agg))
    cols = [i.column for i in items]
    dup = next((c for c in cols if cols.count(c) > 1), None)
    if dup is not None:
        raise QueryGraphError("syntax", f"column {dup!r} is returned twice; add AS aliases")
    aggregate = any(i.aggregate for i in items)
    order_cols: list[int | None] = []
    for s in query.order:
        col: int | None = None
        if isinstance(s.expr, Var) and s.expr.name in cols:
            col = cols.index(s.expr.name)
        else:
            col = next((i for i, it in enumerate(items) if it.expr == s.expr), None)
        if col is None:
            if aggregate or query.distinct:
                raise QueryGraphError(
                    "syntax",
                    "after DISTINCT or count(), ORDER BY can only use returned columns "
                    f"({', '.join(cols)})",
                )
            ck.expr(s.expr, allow_agg=False, where="ORDER BY")
        order_cols.append(col)
    skip = _count_value(query.skip, ck, "SKIP", 0)
    if skip > MAX_SKIP:
        raise QueryGraphError("limit", f"SKIP {skip} is past the maximum of {MAX_SKIP}")
    requested = _count_value(query.limit, ck, "LIMIT", limit_default)
    return (
        Plan(
            clauses=clauses,
            items=tuple(items),
            distinct=query.distinct,
            order=query.order,
            order_cols=tuple(order_cols),
            skip=skip,
            limit=min(requested, MAX_LIMIT),
            var_kinds=dict(ck.var_kinds),
            params=dict(params),
        ),
        requested,
    )
