"""query_graph: the bounded, read-only openCypher profile over a graph segment.

text + params -> guard -> syntax tree -> checked plan -> rows. Every violation raises
:class:`~cogitave.errors.QueryGraphError` with a code and a message a model can act on, and
nothing else escapes :func:`query_graph`.

Where each bound is enforced:

===============  ============================================================================
bound            enforced by
===============  ============================================================================
read-only        the grammar (``cypher.lark`` has no write, CALL, UNWIND or schema
                 production); before parsing, :func:`guard` scans the text with comments
                 removed and string literals blanked, NFKC-normalised, for write/procedure
                 keywords to name the offending one (``read_only``)
ASCII            :func:`guard`: any non-ASCII character outside a string literal is
                 ``syntax`` (look-alike letters cannot smuggle a keyword past the scan)
size             :func:`guard`: ``MAX_QUERY_CHARS`` characters, ``MAX_NESTING`` brackets;
                 :func:`cypher_ast.parse`: parse-tree depth; :func:`plan`: clause, pattern
                 and hop counts (all ``syntax``)
labels           :func:`plan`: every relationship type (each ``|`` alternative) is in the
                 closed vocabulary (``label``)
depth            :func:`plan`: ``*a..d`` with ``d <= 4`` (``depth``); ``*``, ``*a..`` and
                 ``*..`` are ``unbounded``; :func:`traverse` re-checks at run time
rows             :func:`plan`: LIMIT defaults to 100 and is capped at ``MAX_LIMIT`` (1000);
                 the executor fetches one row more to set ``truncated``
total hops       :func:`plan`: the variable-length relationships of the whole query reach
                 at most ``MAX_DEPTH`` (4) hops together (``depth``)
bytes            :func:`materialise`: the JSON size of the rows, parameter values counted
                 each time they are written out, at most ``MAX_RESULT_BYTES`` (``limit``)
time             one monotonic deadline per query (``timeout_ms``, default 250, never above
                 ``MAX_TIMEOUT_MS``), checked in the traversal, the matcher's loops, the
                 projection and the materialisation of the rows
parameters       :func:`plan`: bound by name, only in value positions (grammar); values are
                 JSON scalars or lists of scalars; a missing one is ``param``
===============  ============================================================================
"""

from __future__ import annotations

import math
import re
import time
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass, field
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
    parse,
    parser,
)
from cogitave.graph.cypher_exec import (
    ClauseSpec,
    Executor,
    HopSpec,
    ItemSpec,
    NodeProps,
    NodeSpec,
    PathSpec,
    Plan,
    VarKind,
    json_size,
    to_json,
)
from cogitave.graph.traverse import MAX_DEPTH, MAX_ROWS, check_labels
from cogitave.store.graph import GraphSegment

DEFAULT_LIMIT = 100
MAX_LIMIT = MAX_ROWS
MAX_SKIP = 100_000
DEFAULT_TIMEOUT_MS = 250
MAX_TIMEOUT_MS = 1000
MAX_QUERY_CHARS = 4000
MAX_NESTING = 16
MAX_CLAUSES = 8
MAX_PATTERNS = 8
MAX_HOPS_PER_PATTERN = 8
MAX_PARAM_LIST = 1000
MAX_PARAM_CHARS = 4000
MAX_RESULT_BYTES = 1_000_000
FUNCTIONS = ("count", "type")

WRITE_KEYWORDS = frozenset(
    {
        "CREATE",
        "MERGE",
        "SET",
        "DELETE",
        "DETACH",
        "NODETACH",
        "REMOVE",
        "INSERT",
        "DROP",
        "CALL",
        "LOAD",
        "FOREACH",
        "UNWIND",
        "ALTER",
        "RENAME",
        "GRANT",
        "DENY",
        "REVOKE",
    }
)
_SCHEMA_OBJECTS = frozenset({"INDEX", "CONSTRAINT", "DATABASE", "ALIAS", "USER", "ROLE"})
_PROCEDURE_NAMESPACES = frozenset({"APOC", "DBMS", "DB", "GDS"})
_WORD = re.compile(r"[^\W\d]\w*")
_READ_ONLY_HINT = (
    "query_graph is read-only: use MATCH / OPTIONAL MATCH ... WHERE ... RETURN with "
    "ORDER BY / SKIP / LIMIT"
)


@dataclass(frozen=True)
class GraphQueryResult:
    """The answer of one query: columns, rows (lists in column order), and how it went."""

    columns: tuple[str, ...]
    rows: list[list[Any]]
    truncated: bool
    elapsed_ms: float
    stats: dict[str, Any] = field(default_factory=dict)

    def records(self) -> list[dict[str, Any]]:
        """Rows as ``{column: value}`` dicts."""
        return [dict(zip(self.columns, r, strict=True)) for r in self.rows]

    def to_dict(self) -> dict[str, Any]:
        return {
            "columns": list(self.columns),
            "rows": self.rows,
            "truncated": self.truncated,
            "elapsed_ms": self.elapsed_ms,
            "stats": self.stats,
        }


# -- stage 0: lexical guard -------------------------------------------------------------------
def _line_col(text: str, pos: int) -> tuple[int, int]:
    line = text.count("\n", 0, pos) + 1
    return line, pos - (text.rfind("\n", 0, pos) + 1) + 1


def scan(text: str) -> tuple[str, str]:
    """``(parse_text, code_text)``: comments blanked (newlines kept), and additionally the
    insides of string literals blanked. Positions are unchanged in both."""
    parse_out: list[str] = []
    code_out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        two = text[i : i + 2]
        if two == "//":
            j = text.find("\n", i)
            j = n if j < 0 else j
            blank = " " * (j - i)
            parse_out.append(blank)
            code_out.append(blank)
            i = j
        elif two == "/*":
            j = text.find("*/", i + 2)
            if j < 0:
                line, col = _line_col(text, i)
                raise QueryGraphError(
                    "syntax", f"unterminated /* comment at line {line}, column {col}"
                )
            blank = "".join("\n" if ch == "\n" else " " for ch in text[i : j + 2])
            parse_out.append(blank)
            code_out.append(blank)
            i = j + 2
        elif c in "'\"":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            if j >= n:
                line, col = _line_col(text, i)
                raise QueryGraphError(
                    "syntax", f"unterminated string literal at line {line}, column {col}"
                )
            parse_out.append(text[i : j + 1])
            inner = "".join("\n" if ch == "\n" else " " for ch in text[i + 1 : j])
            code_out.append(c + inner + c)
            i = j + 1
        else:
            parse_out.append(c)
            code_out.append(c)
            i += 1
    return "".join(parse_out), "".join(code_out)


def _write_keyword(code: str) -> tuple[str, int] | None:
    """The first write/procedure keyword in ``code`` (NFKC-normalised) and its position."""
    chars: list[str] = []
    origin: list[int] = []  # position in ``code`` of each normalised character
    for pos, ch in enumerate(code):
        folded = unicodedata.normalize("NFKC", ch) if ord(ch) > 127 else ch
        chars.append(folded)
        origin.extend([pos] * len(folded))
    norm = "".join(chars)
    words = [(m.group().upper(), m.start(), m.end()) for m in _WORD.finditer(norm)]
    for k, (w, start, end) in enumerate(words):
        before = norm[:start].rstrip()[-1:]
        if before in (".", "$"):
            continue  # a property key or a parameter name, never a clause
        nxt = words[k + 1][0] if k + 1 < len(words) else ""
        after = norm[end:].lstrip()[:1]
        if w in _PROCEDURE_NAMESPACES and after == ".":
            return f"{w.lower()}.* procedures", origin[start]
        if w not in WRITE_KEYWORDS:
            continue
        if w in ("CREATE", "DROP", "ALTER") and nxt in _SCHEMA_OBJECTS:
            return f"{w} {nxt} (schema operation)", origin[start]
        if w == "LOAD" and nxt == "CSV":
            return "LOAD CSV", origin[start]
        if w == "DETACH" and nxt == "DELETE":
            return "DETACH DELETE", origin[start]
        if w == "CALL":
            kw = "CALL {...} subquery" if after == "{" else "CALL (procedure)"
            return kw, origin[start]
        return w, origin[start]
    return None


def guard(text: Any) -> str:
    """Stage 0: size, comments, strings, write keywords, ASCII, nesting. Returns the text the
    grammar parses (comments blanked)."""
    if not isinstance(text, str):
        raise QueryGraphError("syntax", "the query must be a string")
    if len(text) > MAX_QUERY_CHARS:
        raise QueryGraphError(
            "syntax",
            f"query is {len(text)} characters; the maximum is {MAX_QUERY_CHARS}",
            details={"max_chars": MAX_QUERY_CHARS},
        )
    parse_text, code = scan(text)
    found = _write_keyword(code)
    if found:
        kw, pos = found
        line, col = _line_col(code, pos)
        raise QueryGraphError(
            "read_only",
            f"{kw} is not allowed (line {line}, column {col}); {_READ_ONLY_HINT}",
            details={"keyword": kw, "line": line, "column": col},
        )
    for pos, ch in enumerate(code):
        if ord(ch) > 127:
            line, col = _line_col(code, pos)
            raise QueryGraphError(
                "syntax",
                f"non-ASCII character {ch!r} (U+{ord(ch):04X}) at line {line}, column {col} "
                "outside a string literal; keywords, names and labels must be plain ASCII",
                details={"line": line, "column": col},
            )
    depth = deepest = 0
    for ch in code:
        if ch in "([{":
            depth += 1
            deepest = max(deepest, depth)
        elif ch in ")]}":
            depth -= 1
    if deepest > MAX_NESTING:
        raise QueryGraphError(
            "syntax", f"brackets nest {deepest} deep; the maximum is {MAX_NESTING}"
        )
    if not code.strip():
        raise QueryGraphError("syntax", "the query is empty; write MATCH (n) RETURN n LIMIT 10")
    return parse_text


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


# -- entry point ------------------------------------------------------------------------------
def query_graph(
    graph: GraphSegment,
    text: str,
    params: Mapping[str, Any] | None = None,
    *,
    limit_default: int = DEFAULT_LIMIT,
    timeout_ms: float = DEFAULT_TIMEOUT_MS,
    node_props: NodeProps | None = None,
) -> GraphQueryResult:
    """Run one bounded read-only query. ``node_props(id)`` adds node properties beyond
    ``uid``, ``kind`` and ``title`` (e.g. exact dimension values)."""
    parser()  # built once per process (~50 ms); not charged to the first query's budget
    t0 = time.monotonic()
    try:
        budget_ms = float(timeout_ms)
    except (TypeError, ValueError):
        budget_ms = DEFAULT_TIMEOUT_MS
    if not math.isfinite(budget_ms) or budget_ms <= 0:
        budget_ms = DEFAULT_TIMEOUT_MS
    budget_ms = min(budget_ms, MAX_TIMEOUT_MS)
    deadline = t0 + budget_ms / 1000.0
    if isinstance(limit_default, bool) or not isinstance(limit_default, int):
        limit_default = DEFAULT_LIMIT
    limit_default = max(0, min(limit_default, MAX_LIMIT))
    ex: Executor | None = None
    try:
        query = parse(guard(text))
        bound = check_params(params)
        the_plan, requested = plan(query, bound, limit_default=limit_default)
        ex = Executor(graph, the_plan, deadline=deadline, node_props=node_props)
        page, truncated = ex.run()
        rows = materialise(graph, page, ex)
    except QueryGraphError as e:
        if e.code != "timeout":
            raise
        raise _timeout(budget_ms, t0, ex) from None
    except RecursionError:
        raise QueryGraphError("syntax", "query nests too deeply; simplify it") from None
    except Exception as e:  # nothing but QueryGraphError may leave query_graph
        raise QueryGraphError(
            "syntax", f"internal error: the query could not be evaluated ({type(e).__name__})"
        ) from e
    stats: dict[str, Any] = {
        "timeout_ms": budget_ms,
        "limit": the_plan.limit,
        "skip": the_plan.skip,
        "traversals": ex.traversals,
        "expansions": ex.expansions,
        "steps": ex.ticks,
    }
    warnings = _warnings(graph, the_plan, requested, ex)
    if warnings:
        stats["warnings"] = warnings
    return GraphQueryResult(
        columns=tuple(i.column for i in the_plan.items),
        rows=rows,
        truncated=truncated,
        elapsed_ms=round((time.monotonic() - t0) * 1000, 3),
        stats=stats,
    )


def materialise(graph: GraphSegment, page: list[list[Any]], ex: Executor) -> list[list[Any]]:
    """Rows -> JSON-ready rows, inside the query's budget: each row ticks the deadline and
    counts its JSON size (parameter strings and lists as often as they are written out)
    against ``MAX_RESULT_BYTES``."""
    out: list[list[Any]] = []
    size = 0
    for vals in page:
        ex.tick()
        size += json_size(vals, MAX_RESULT_BYTES - size) + 1
        if size > MAX_RESULT_BYTES:
            raise QueryGraphError(
                "limit",
                f"the result would be larger than {MAX_RESULT_BYTES} bytes (response bytes "
                "bound); return fewer or smaller columns, or lower LIMIT",
                details={"bound": "response_bytes", "max": MAX_RESULT_BYTES},
            )
        out.append([to_json(graph, v) for v in vals])
    return out


def _timeout(budget_ms: float, t0: float, ex: Executor | None) -> QueryGraphError:
    elapsed = (time.monotonic() - t0) * 1000
    return QueryGraphError(
        "timeout",
        f"query ran past its {budget_ms:g} ms budget ({elapsed:.0f} ms) and was aborted; "
        "anchor the pattern on a uid or a kind, name relationship types, lower the hop range, "
        "or avoid comma patterns that multiply (cross products)",
        details={
            "timeout_ms": budget_ms,
            "elapsed_ms": round(elapsed, 1),
            "traversals": ex.traversals if ex else 0,
            "steps": ex.ticks if ex else 0,
        },
    )


def _warnings(g: GraphSegment, p: Plan, requested: int, ex: Executor) -> list[str]:
    out: list[str] = []
    if requested > MAX_LIMIT:
        out.append(f"LIMIT {requested} was capped at {MAX_LIMIT}")
    if ex.capped:
        out.append(
            f"{ex.capped} expansions hit the {MAX_ROWS}-row traversal cap; results may be "
            "incomplete (anchor the pattern more narrowly)"
        )
    kinds = set(g.kind_names)
    for c in p.clauses:
        for path in c.paths:
            for n in path.nodes:
                for k in n.kinds:
                    if k not in kinds:
                        msg = f"no node has kind {k!r}; kinds in this graph: " + ", ".join(
                            sorted(kinds)[:20]
                        )
                        if msg not in out:
                            out.append(msg)
    return out
