"""Fuzzing query_graph: random text, token soups and grammar-shaped queries.

Whatever comes in: the only exception is QueryGraphError (never an "internal error"), no
result has more than 1000 rows, and no call runs past its budget: the budget is read off a
StepClock (a millisecond per read), so a call that works on past its deadline reads the clock
past it, on any machine at any load.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import cogitave.graph.query as gq
from cogitave.errors import QueryGraphError
from cogitave.graph import cypher_exec, traverse
from cogitave.graph.query import MAX_LIMIT, query_graph
from cogitave.schema import EDGE_LABELS
from cogitave.store.graph import GraphSegment
from tests.clock import StepClock
from tests.graph._graphs import random_nodes

TIMEOUT_MS = 40
STEP_S = 0.001
PARAMS: dict[str, Any] = {"p": 1, "u": "n000001", "l": [1, "a", None], "s": "x", "n": 3}
FUZZ = settings(
    max_examples=250,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

VOCAB = [
    # the grammar's keywords and functions, any case
    "MATCH",
    "match",
    "OPTIONAL",
    "WHERE",
    "RETURN",
    "return",
    "DISTINCT",
    "AS",
    "ORDER",
    "BY",
    "ASC",
    "DESC",
    "DESCENDING",
    "SKIP",
    "LIMIT",
    "AND",
    "OR",
    "XOR",
    "NOT",
    "IN",
    "IS",
    "NULL",
    "TRUE",
    "FALSE",
    "STARTS",
    "ENDS",
    "WITH",
    "CONTAINS",
    "count",
    "type",
    # punctuation and arrows
    "(",
    ")",
    "[",
    "]",
    "{",
    "}",
    ":",
    ",",
    ".",
    "..",
    "*",
    "-",
    "->",
    "<-",
    "--",
    "<",
    ">",
    "=",
    "<>",
    "<=",
    ">=",
    "|",
    "$",
    # names, kinds, labels, literals, parameters
    "a",
    "b",
    "n",
    "r",
    "page",
    "section",
    "uid",
    "title",
    "kind",
    "FRIEND",
    *EDGE_LABELS,
    "0",
    "1",
    "2",
    "4",
    "5",
    "1000",
    "100000",
    "1.5",
    "-1",
    "'x'",
    '"y"',
    "'n000001'",
    "'",
    "$p",
    "$u",
    "$l",
    "$s",
    "$n",
    "$missing",
    # hostile material
    "CREATE",
    "DELETE",
    "SET",
    "CALL",
    "LOAD",
    "CSV",
    "apoc",
    "//",
    "/*",
    "*/",
    ";",
    "`",
    "ＭＡＴＣＨ",
    "С",
    "\u200b",
    "\n",
    "\\",
]


@pytest.fixture(scope="module")
def graph() -> GraphSegment:
    return GraphSegment.build(random_nodes(300, 6, seed=5))


def _check(graph: GraphSegment, text: str, timeout_ms: float = TIMEOUT_MS) -> None:
    with pytest.MonkeyPatch.context() as mp:
        clock = StepClock(STEP_S).install(mp, gq, cypher_exec, traverse)
        try:
            res = query_graph(graph, text, PARAMS, timeout_ms=timeout_ms)
        except QueryGraphError as e:
            assert e.code in QueryGraphError.CODES
            assert "internal error" not in e.message, (text, e.message, e.__cause__)
            assert e.message
        else:
            assert len(res.rows) <= MAX_LIMIT
            assert all(len(r) == len(res.columns) for r in res.rows)
    # the deadline is looked at every few steps: no call reads the clock far past it
    assert clock.reads <= timeout_ms / 1000 / STEP_S + 4, (text, clock.reads)


@FUZZ
@given(st.text(max_size=300))
def test_random_text(graph, text):
    _check(graph, text)


@FUZZ
@given(st.lists(st.sampled_from(VOCAB), max_size=40).map(" ".join))
def test_token_soup(graph, text):
    _check(graph, text)


@FUZZ
@given(st.lists(st.sampled_from(VOCAB), max_size=40).map("".join))
def test_token_soup_without_spaces(graph, text):
    _check(graph, text)


# -- grammar-shaped queries: mostly valid, so the executor gets fuzzed too -------------------
_var = st.sampled_from(["b", "c", ""])
_kind = st.sampled_from(["", "", ":page", ":section", ":sample", ":nope"])
_value = st.sampled_from(["'n000001'", "$u", "1", "$p", "['n000002', $u]", "null", "$l"])
_props = st.sampled_from(["", "", "", "{uid: 'n000003'}", "{uid: $u}", "{title: 'Node 1'}"])
_node = st.builds(lambda v, k, p: f"({v}{k} {p})", _var, _kind, _props)
_anchor = st.builds(lambda k, p: f"(a{k} {p})", _kind, _props)
_labels = st.sampled_from(["", ":xref", ":partOf|dependsOn", ":xref|:partOf", ":KNOWS"])
_hops = st.sampled_from(["", "", "", "*1..2", "*2", "*0..1", "*..3", "*1..3", "*", "*1..5"])
_rel = st.builds(
    lambda left, v, lab, h, right: f"{left}-[{v}{lab}{h}]-{right}",
    st.sampled_from(["", "<"]),
    st.sampled_from(["", "", "r"]),
    _labels,
    _hops,
    st.sampled_from([">", ">", ""]),
)
_pattern = st.builds(
    lambda first, rest: first + "".join(r + n for r, n in rest),
    _anchor,
    st.lists(st.tuples(_rel, _node), max_size=2),
)
_prop = st.sampled_from(["a.uid", "a.title", "a.kind", "a.x", "a"])
_cond = st.builds(
    lambda lhs, op, rhs: f"{lhs} {op} {rhs}",
    _prop,
    st.sampled_from(["=", "<>", "<", ">=", "STARTS WITH", "CONTAINS", "IN"]),
    _value,
) | st.builds(lambda p: f"{p} IS NULL", _prop)
_where = st.one_of(
    st.just(""),
    st.builds(lambda c: f" WHERE {c}", _cond),
    st.builds(
        lambda a, op, b: f" WHERE {a} {op} {b}",
        _cond,
        st.sampled_from(["AND", "OR", "XOR", "AND NOT"]),
        _cond,
    ),
)
_match = st.builds(
    lambda opt, pats, where: f"{opt}MATCH {', '.join(pats)}{where}",
    st.sampled_from(["", "", "OPTIONAL "]),
    st.lists(_pattern, min_size=1, max_size=2),
    _where,
)
_ret = st.builds(
    lambda d, items: f" RETURN {d}{', '.join(items)}",
    st.sampled_from(["", "", "DISTINCT "]),
    st.lists(
        st.sampled_from(["a", "a.uid", "a.title AS t", "count(*)", "count(DISTINCT a)", "a.kind"]),
        min_size=1,
        max_size=3,
        unique=True,
    ),
)
_tail = st.builds(
    lambda order, skip, limit: order + skip + limit,
    st.sampled_from(["", "", " ORDER BY a.uid", " ORDER BY a.uid DESC", " ORDER BY a, a.kind"]),
    st.sampled_from(["", "", " SKIP 1", " SKIP $n"]),
    st.sampled_from(["", " LIMIT 5", " LIMIT $n", " LIMIT 100000", " LIMIT 0"]),
)
_query = st.builds(
    lambda ms, ret, tail: " ".join(ms) + ret + tail,
    st.lists(_match, min_size=1, max_size=3),
    _ret,
    _tail,
)


@FUZZ
@given(_query)
def test_grammar_shaped_queries(graph, text):
    _check(graph, text)


@settings(max_examples=40, deadline=None, database=None)
@given(_query)
def test_grammar_shaped_queries_on_the_dense_graph(dense, text):
    _check(dense, text, timeout_ms=60)
