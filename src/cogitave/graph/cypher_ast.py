"""query_graph, stage 1: text -> syntax tree (no graph, no parameters).

``cypher.lark`` (LALR(1), contextual lexer) parses the text; a lark ``Transformer`` turns the
parse tree into the frozen dataclasses below. Stage 2 (:mod:`cogitave.graph.query`) checks the
tree against the bounds and binds parameters; stage 3 (:mod:`cogitave.graph.cypher_exec`)
runs it. Every lark error becomes ``QueryGraphError('syntax')`` with line and column; a parse
tree deeper than ``MAX_TREE_DEPTH`` is refused before it is transformed (the transformer and
the evaluator recurse over the tree).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any, Literal, Union

from lark import Lark, Token, Transformer, Tree, v_args
from lark.exceptions import (
    UnexpectedCharacters,
    UnexpectedEOF,
    UnexpectedInput,
    UnexpectedToken,
    VisitError,
)

from cogitave.errors import QueryGraphError

MAX_TREE_DEPTH = 64
INT_MAX = 2**63 - 1


# -- expressions ---------------------------------------------------------------------------
@dataclass(frozen=True)
class Lit:
    value: bool | int | float | str | None


@dataclass(frozen=True)
class Param:
    name: str


@dataclass(frozen=True)
class Var:
    name: str


@dataclass(frozen=True)
class Prop:
    var: str
    key: str


@dataclass(frozen=True)
class ListExpr:
    items: tuple[Expr, ...]


@dataclass(frozen=True)
class Not:
    expr: Expr


@dataclass(frozen=True)
class BoolOp:
    op: Literal["AND", "OR", "XOR"]
    items: tuple[Expr, ...]


@dataclass(frozen=True)
class Compare:
    op: Literal["=", "<>", "<", "<=", ">", ">="]
    left: Expr
    right: Expr


@dataclass(frozen=True)
class In:
    left: Expr
    right: Expr


@dataclass(frozen=True)
class StrOp:
    op: Literal["STARTS WITH", "ENDS WITH", "CONTAINS"]
    left: Expr
    right: Expr


@dataclass(frozen=True)
class IsNull:
    expr: Expr
    negated: bool


@dataclass(frozen=True)
class Func:
    """A function call; ``star`` for ``count(*)``. Names are lower-cased."""

    name: str
    args: tuple[Expr, ...]
    star: bool = False
    distinct: bool = False


Expr = Union[Lit, Param, Var, Prop, ListExpr, Not, BoolOp, Compare, In, StrOp, IsNull, Func]  # noqa: UP007


# -- patterns and clauses ------------------------------------------------------------------
@dataclass(frozen=True)
class NodePat:
    var: str | None
    kinds: tuple[str, ...]
    props: tuple[tuple[str, Expr], ...]


@dataclass(frozen=True)
class RelPat:
    """A relationship pattern. ``star`` marks ``*``; ``dotdot`` marks a ``..`` range; an
    absent bound is ``None`` (the validator turns open ranges into ``unbounded``)."""

    var: str | None
    types: tuple[str, ...]
    direction: Literal["out", "in", "both"]
    star: bool = False
    dotdot: bool = False
    min_hops: int | None = 1
    max_hops: int | None = 1


@dataclass(frozen=True)
class Pattern:
    nodes: tuple[NodePat, ...]
    rels: tuple[RelPat, ...]


@dataclass(frozen=True)
class MatchClause:
    optional: bool
    patterns: tuple[Pattern, ...]
    where: Expr | None


@dataclass(frozen=True)
class ReturnItem:
    expr: Expr
    alias: str | None
    text: str

    @property
    def column(self) -> str:
        return self.alias or self.text


@dataclass(frozen=True)
class SortItem:
    expr: Expr
    descending: bool


@dataclass(frozen=True)
class Query:
    matches: tuple[MatchClause, ...]
    distinct: bool
    items: tuple[ReturnItem, ...]
    order: tuple[SortItem, ...]
    skip: Lit | Param | None
    limit: Lit | Param | None


# -- parsing -------------------------------------------------------------------------------
@cache
def parser() -> Lark:
    """The LALR parser of ``cypher.lark`` (built on first use, then shared)."""
    grammar = resources.files("cogitave.graph").joinpath("cypher.lark").read_text("utf-8")
    return Lark(grammar, parser="lalr", lexer="contextual", propagate_positions=True)


def _expected(names: set[str]) -> str:
    pretty = {
        "LPAR": "(",
        "RPAR": ")",
        "LSQB": "[",
        "RSQB": "]",
        "LBRACE": "{",
        "RBRACE": "}",
        "COMMA": ",",
        "COLON": ":",
        "DOT": ".",
        "MINUS": "-",
        "EQUAL": "=",
        "VBAR": "|",
        "NAME": "a name",
        "PARAM": "a $parameter",
        "STRING": "a string",
        "INT": "an integer",
        "FLOAT": "a number",
        "STAR": "*",
        "DOTDOT": "..",
        "LT": "<",
        "GT": ">",
    }
    words = sorted({pretty.get(n, n.lstrip("_")) for n in names})
    words = [w if w[0].isalpha() else f"'{w}'" for w in words]
    return ", ".join(words[:12]) + (" ..." if len(words) > 12 else "")


def _syntax_error(e: UnexpectedInput, text: str) -> QueryGraphError:
    line, col = getattr(e, "line", -1), getattr(e, "column", -1)
    where = f"line {line}, column {col}" if line and line > 0 else "the end of the query"
    if isinstance(e, UnexpectedEOF):
        msg = f"query ends too early; expected one of: {_expected(set(e.expected))}"
    elif isinstance(e, UnexpectedToken):
        tok = "the end of the query" if e.token.type == "$END" else repr(str(e.token))
        msg = f"unexpected {tok} at {where}; expected one of: {_expected(set(e.expected))}"
        if e.token.type == "$END":
            msg = f"query ends too early; expected one of: {_expected(set(e.expected))}"
    elif isinstance(e, UnexpectedCharacters):
        ch = text[e.pos_in_stream] if 0 <= e.pos_in_stream < len(text) else "?"
        msg = f"unexpected character {ch!r} at {where}"
        if ch == "$":
            msg += "; a parameter is $ followed by a name, e.g. $uid"
        elif ch == "`":
            msg += "; backtick-quoted names are not supported"
    else:  # pragma: no cover - lark has no other UnexpectedInput today
        msg = f"syntax error at {where}"
    msg += ". The subset is MATCH/OPTIONAL MATCH ... WHERE ... RETURN ... ORDER BY/SKIP/LIMIT."
    return QueryGraphError("syntax", msg, details={"line": line, "column": col})


def _tree_depth(tree: Tree[Token]) -> int:
    deepest = 0
    stack: list[tuple[Tree[Token], int]] = [(tree, 1)]
    while stack:
        node, d = stack.pop()
        deepest = max(deepest, d)
        stack.extend((c, d + 1) for c in node.children if isinstance(c, Tree))
    return deepest


def parse(text: str) -> Query:
    """Parse ``text`` (comments already blanked out) into a :class:`Query`."""
    try:
        tree = parser().parse(text)
    except UnexpectedInput as e:
        raise _syntax_error(e, text) from None
    if _tree_depth(tree) > MAX_TREE_DEPTH:
        raise QueryGraphError(
            "syntax", f"query nests more than {MAX_TREE_DEPTH} levels deep; simplify it"
        )
    try:
        query: Query = _ToAst(text).transform(tree)
    except VisitError as e:  # lark wraps what a transformer callback raises
        if isinstance(e.orig_exc, QueryGraphError):
            raise e.orig_exc from None
        raise
    return query


_ESCAPES = {
    "\\": "\\",
    "'": "'",
    '"': '"',
    "n": "\n",
    "t": "\t",
    "r": "\r",
    "b": "\b",
    "f": "\f",
    "/": "/",
}


def unescape(raw: str) -> str:
    """The value of a quoted string literal (``raw`` includes the quotes)."""
    body = raw[1:-1]
    if "\\" not in body:
        return body
    out: list[str] = []
    i = 0
    while i < len(body):
        c = body[i]
        if c != "\\":
            out.append(c)
            i += 1
            continue
        nxt = body[i + 1] if i + 1 < len(body) else ""
        if nxt in _ESCAPES:
            out.append(_ESCAPES[nxt])
            i += 2
        elif nxt in "uU" and nxt:
            hexd = body[i + 2 : i + 6]
            if len(hexd) != 4 or any(h not in "0123456789abcdefABCDEF" for h in hexd):
                raise QueryGraphError("syntax", "bad \\u escape in a string: write \\uXXXX")
            out.append(chr(int(hexd, 16)))
            i += 6
        else:
            raise QueryGraphError(
                "syntax", f"unknown escape \\{nxt} in a string; use \\\\, \\', \\\", \\n or \\t"
            )
    return "".join(out)


def _int(tok: Token, sign: int = 1) -> int:
    v = sign * int(str(tok))
    if abs(v) > INT_MAX:
        raise QueryGraphError("syntax", f"integer {v} is out of the 64-bit range")
    return v


def _float(tok: Token, sign: float = 1.0) -> float:
    v = sign * float(str(tok))
    if not math.isfinite(v):
        raise QueryGraphError("syntax", f"number {tok} is out of range")
    return v


class _ToAst(Transformer[Token, Any]):
    """Parse tree -> AST. Token children arrive as lark ``Token`` objects."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.text = text

    # clauses
    def start(self, c: list[Any]) -> Query:
        matches = tuple(x for x in c if isinstance(x, MatchClause))
        ret = next(x for x in c if isinstance(x, tuple) and x and x[0] == "return")
        order = next((x[1] for x in c if isinstance(x, tuple) and x[0] == "order"), ())
        skip = next((x[1] for x in c if isinstance(x, tuple) and x[0] == "skip"), None)
        limit = next((x[1] for x in c if isinstance(x, tuple) and x[0] == "limit"), None)
        return Query(matches, ret[1], ret[2], order, skip, limit)

    def match_clause(self, c: list[Any]) -> MatchClause:
        optional = any(isinstance(x, Token) and x.type == "OPTIONAL" for x in c)
        patterns = tuple(x for x in c if isinstance(x, Pattern))
        where = next((x[1] for x in c if isinstance(x, tuple) and x[0] == "where"), None)
        return MatchClause(optional, patterns, where)

    def where_clause(self, c: list[Any]) -> tuple[str, Expr]:
        return ("where", c[-1])

    def pattern(self, c: list[Any]) -> Pattern:
        return Pattern(
            tuple(x for x in c if isinstance(x, NodePat)),
            tuple(x for x in c if isinstance(x, RelPat)),
        )

    def node_pattern(self, c: list[Any]) -> NodePat:
        var = next((str(x) for x in c if isinstance(x, Token) and x.type == "NAME"), None)
        kinds = next((x[1] for x in c if isinstance(x, tuple) and x[0] == "labels"), ())
        props = next((x[1] for x in c if isinstance(x, tuple) and x[0] == "props"), ())
        return NodePat(var, kinds, props)

    def node_labels(self, c: list[Token]) -> tuple[str, tuple[str, ...]]:
        return ("labels", tuple(str(x) for x in c))

    def prop_map(self, c: list[Any]) -> tuple[str, tuple[tuple[str, Expr], ...]]:
        return ("props", tuple(x for x in c if x is not None))

    def prop_pair(self, c: list[Any]) -> tuple[str, Expr]:
        return (str(c[0]), c[1])

    def value_list(self, c: list[Any]) -> ListExpr:
        return ListExpr(tuple(x for x in c if x is not None))

    def rel_pattern(self, c: list[Any]) -> RelPat:
        left = any(isinstance(x, Token) and x.type == "LT" for x in c)
        right = any(isinstance(x, Token) and x.type == "GT" for x in c)
        direction: Literal["out", "in", "both"] = (
            "out" if right and not left else "in" if left and not right else "both"
        )
        detail = next((x for x in c if isinstance(x, RelPat)), None)
        if detail is None:
            return RelPat(None, (), direction)
        return RelPat(
            detail.var,
            detail.types,
            direction,
            detail.star,
            detail.dotdot,
            detail.min_hops,
            detail.max_hops,
        )

    def rel_detail(self, c: list[Any]) -> RelPat:
        var = next((str(x) for x in c if isinstance(x, Token) and x.type == "NAME"), None)
        types = next((x[1] for x in c if isinstance(x, tuple) and x[0] == "types"), ())
        hops = next((x for x in c if isinstance(x, tuple) and x[0] == "hops"), None)
        if hops is None:
            return RelPat(var, types, "out")
        _, dotdot, lo, hi = hops
        return RelPat(var, types, "out", True, dotdot, lo, hi)

    def rel_types(self, c: list[Token]) -> tuple[str, tuple[str, ...]]:
        return ("types", tuple(str(x) for x in c))

    def var_length(self, c: list[Any]) -> tuple[str, bool, int | None, int | None]:
        if len(c) == 1:
            return ("hops", False, None, None)
        return c[1]  # type: ignore[no-any-return]

    def hops_exact(self, c: list[Token]) -> tuple[str, bool, int | None, int | None]:
        v = _int(c[0])
        return ("hops", False, v, v)

    def hops_range(self, c: list[Token]) -> tuple[str, bool, int | None, int | None]:
        lo: int | None = None
        hi: int | None = None
        seen_dots = False
        for tok in c:
            if tok.type == "DOTDOT":
                seen_dots = True
            elif seen_dots:
                hi = _int(tok)
            else:
                lo = _int(tok)
        return ("hops", True, lo, hi)

    # expressions
    def or_expr(self, c: list[Expr]) -> BoolOp:
        return BoolOp("OR", tuple(c))

    def xor_expr(self, c: list[Expr]) -> BoolOp:
        return BoolOp("XOR", tuple(c))

    def and_expr(self, c: list[Expr]) -> BoolOp:
        return BoolOp("AND", tuple(c))

    def not_(self, c: list[Expr]) -> Not:
        return Not(c[-1])

    def compare(self, c: list[Any]) -> Compare:
        return Compare(c[1], c[0], c[2])

    def comp_op(self, c: list[Token]) -> str:
        return str(c[0])

    def is_null(self, c: list[Any]) -> IsNull:
        return IsNull(c[0], False)

    def is_not_null(self, c: list[Any]) -> IsNull:
        return IsNull(c[0], True)

    def in_list(self, c: list[Expr]) -> In:
        return In(c[0], c[1])

    def starts_with(self, c: list[Expr]) -> StrOp:
        return StrOp("STARTS WITH", c[0], c[1])

    def ends_with(self, c: list[Expr]) -> StrOp:
        return StrOp("ENDS WITH", c[0], c[1])

    def contains(self, c: list[Expr]) -> StrOp:
        return StrOp("CONTAINS", c[0], c[1])

    def param(self, c: list[Token]) -> Param:
        return Param(str(c[0])[1:])

    def list_expr(self, c: list[Any]) -> ListExpr:
        return ListExpr(tuple(x for x in c if x is not None))

    def prop(self, c: list[Token]) -> Prop:
        return Prop(str(c[0]), str(c[1]))

    def var(self, c: list[Token]) -> Var:
        return Var(str(c[0]))

    def func(self, c: list[Any]) -> Func:
        name = str(c[0]).lower()
        args = c[1] if len(c) > 1 else ("args", False, False, ())
        _, star, distinct, exprs = args
        return Func(name, exprs, star, distinct)

    def func_args(self, c: list[Any]) -> tuple[str, bool, bool, tuple[Expr, ...]]:
        if len(c) == 1 and isinstance(c[0], Token) and c[0].type == "STAR":
            return ("args", True, False, ())
        distinct = any(isinstance(x, Token) and x.type == "DISTINCT" for x in c)
        exprs = tuple(x for x in c if not isinstance(x, Token))
        return ("args", False, distinct, exprs)

    def literal(self, c: list[Token]) -> Lit:
        tok = c[0]
        t = tok.type
        if t == "STRING":
            return Lit(unescape(str(tok)))
        if t == "INT":
            return Lit(_int(tok))
        if t == "FLOAT":
            return Lit(_float(tok))
        if t == "TRUE":
            return Lit(True)
        if t == "FALSE":
            return Lit(False)
        return Lit(None)

    def neg_int(self, c: list[Token]) -> Lit:
        return Lit(_int(c[-1], -1))

    def neg_float(self, c: list[Token]) -> Lit:
        return Lit(_float(c[-1], -1.0))

    # projection
    def return_clause(self, c: list[Any]) -> tuple[str, bool, tuple[ReturnItem, ...]]:
        distinct = any(isinstance(x, Token) and x.type == "DISTINCT" for x in c)
        return ("return", distinct, tuple(x for x in c if isinstance(x, ReturnItem)))

    @v_args(meta=True)
    def return_item(self, meta: Any, c: list[Any]) -> ReturnItem:
        alias = str(c[1]) if len(c) > 1 else None
        text = " ".join(self.text[meta.start_pos : meta.end_pos].split())
        return ReturnItem(c[0], alias, text)

    def order_clause(self, c: list[SortItem]) -> tuple[str, tuple[SortItem, ...]]:
        return ("order", tuple(c))

    def sort_item(self, c: list[Any]) -> SortItem:
        desc = len(c) > 1 and c[1].type in ("DESC", "DESCENDING")
        return SortItem(c[0], desc)

    def _count_value(self, c: list[Token]) -> Lit | Param:
        tok = c[0]
        return Param(str(tok)[1:]) if tok.type == "PARAM" else Lit(_int(tok))

    def skip_clause(self, c: list[Token]) -> tuple[str, Lit | Param]:
        return ("skip", self._count_value(c))

    def limit_clause(self, c: list[Token]) -> tuple[str, Lit | Param]:
        return ("limit", self._count_value(c))
