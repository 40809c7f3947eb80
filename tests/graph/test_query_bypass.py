"""The bypass corpus: hostile queries, each rejected with the right code or bounded.

Writes in every case and spacing, keywords hidden by comments, unicode look-alikes, spliced
parameters, procedures, unknown labels, unbounded and deep hops, huge limits, cross products.
"""

from __future__ import annotations

from typing import Any

import pytest

import cogitave.graph.query as gq
from cogitave.errors import QueryGraphError
from cogitave.graph import cypher_exec, traverse
from cogitave.graph.query import MAX_LIMIT, query_graph
from tests.clock import StepClock

READ_ONLY: list[tuple[str, str]] = [
    ("CREATE (n)", "CREATE"),
    ("create (n:page {uid: 'x'}) return n", "CREATE"),
    ("CrEaTe (n)", "CREATE"),
    ("MATCH (n) SET n.title = 'x' RETURN n", "SET"),
    ("MATCH (n)   sEt\tn.title='x'", "SET"),
    ("MATCH (n) DELETE n", "DELETE"),
    ("MATCH (n) DeTaCh DeLeTe n", "DETACH DELETE"),
    ("MATCH (n)\n\tDETACH\n\n   DELETE n", "DETACH DELETE"),
    ("MERGE (n {uid: 'x'}) RETURN n", "MERGE"),
    ("MATCH (a) MERGE (a)-[:xref]->(b)", "MERGE"),
    ("MATCH (n) REMOVE n.title", "REMOVE"),
    ("INSERT (n:page)", "INSERT"),
    ("DROP INDEX idx", "DROP INDEX (schema operation)"),
    ("CREATE INDEX FOR (n:page) ON (n.uid)", "CREATE INDEX (schema operation)"),
    ("create constraint c for (n:page) require n.uid is unique", "CREATE CONSTRAINT"),
    ("DROP CONSTRAINT c", "DROP CONSTRAINT"),
    ("CALL db.labels()", "CALL (procedure)"),
    ("CALL dbms.components() YIELD name RETURN name", "CALL (procedure)"),
    ("MATCH (n) RETURN db.labels()", "db.* procedures"),
    ("MATCH (n) RETURN gds.graph.list()", "gds.* procedures"),
    ("MATCH (n) CALL { MATCH (m) RETURN m } RETURN n", "CALL {...} subquery"),
    ("call{match (n) return n} return n", "CALL {...} subquery"),
    ("CALL my.procedure()", "CALL (procedure)"),
    ("LOAD CSV FROM 'file:///etc/passwd' AS row RETURN row", "LOAD CSV"),
    ("load   csv with headers from 'http://x' as r return r", "LOAD CSV"),
    ("MATCH (n) FOREACH (x IN [1] | SET n.a = x)", "FOREACH"),
    ("UNWIND [1, 2] AS x RETURN x", "UNWIND"),
    ("MATCH (n) RETURN apoc.text.join(['a'], ',')", "apoc.* procedures"),
    ("MATCH (n) RETURN APOC.create.uuid()", "apoc.* procedures"),
    ("MATCH (n) RETURN apoc . create . uuid()", "apoc.* procedures"),
    ("CALL apoc.periodic.iterate('MATCH (n) RETURN n', 'DELETE n', {})", "CALL (procedure)"),
    ("MATCH (n) RETURN n /* x */ ; CREATE (m)", "CREATE"),
    ("MATCH (n) RETURN n; MATCH (m) DETACH DELETE m", "DETACH DELETE"),
    ("MATCH (n) /* hidden */ DELETE n", "DELETE"),
    ("MATCH (n) //\nDELETE n", "DELETE"),
    ("MATCH (n) /* a */ /* b */ SET /* c */ n.x = 1", "SET"),
    ("ＣＲＥＡＴＥ (n)", "CREATE"),  # full-width letters fold to CREATE under NFKC
    ("MATCH (n) ＤＥＬＥＴＥ n", "DELETE"),
    ("MATCH (n) ｄｅｔａｃｈ ｄｅｌｅｔｅ n", "DETACH DELETE"),
    ("MATCH (n) RETURN n ALTER USER x", "ALTER USER"),
    ("GRANT ALL ON DATABASE * TO x", "GRANT"),
]


@pytest.mark.parametrize(("text", "keyword"), READ_ONLY)
def test_writes_and_procedures_are_read_only_errors(docs, text, keyword):
    g, _ = docs
    with pytest.raises(QueryGraphError) as e:
        query_graph(g, text)
    assert e.value.code == "read_only", e.value.message
    assert keyword.split()[0].lower() in e.value.message.lower()
    assert "read-only" in e.value.message


SYNTAX: list[str] = [
    "MATCH (n) DEL/**/ETE n",  # a comment splits tokens: two names, not DELETE
    "MATCH (n) /* unterminated DELETE n",
    "MATCH (n) RETURN n;",
    "ＭＡＴＣＨ (n) RETURN n",  # full-width, no write keyword: still not ASCII
    "MATCH (n) DЕLETE n",  # Cyrillic Е
    "MATCH (n) RETURN n\u200b",  # zero-width space
    "MATCH (n)\u00a0RETURN n",  # no-break space
    "MATCH (n) RETURN ｎ",
    "MATCH (n:ｐage) RETURN n",
    "MATCH (n)-[:ｘref]->(m) RETURN n",
    "MATCH (n) RETURN n ＬＩＭＩＴ 10",
    "MATCH (ｎ) RETURN 1",
    "MATCH (n:$label) RETURN n",  # params cannot be labels...
    "MATCH (n)-[:$t]->(m) RETURN n",  # ...relationship types...
    "MATCH (n) WHERE n[$k] = 1 RETURN n",  # ...property keys...
    "MATCH (n {$k: 1}) RETURN n",
    "MATCH (n)-[*1..$d]->(m) RETURN n",  # ...or hop ranges
    "MATCH (n) RETURN n LIMIT -1",
    "MATCH (n) RETURN n LIMIT 1.5",
    "MATCH (n) RETURN n SKIP -1",
    "MATCH (n) RETURN n LIMIT 1000 SKIP 1",
    "MATCH (n) RETURN n" + " " * 5000,
    "MATCH (n) WHERE " + "(" * 50 + "true" + ")" * 50 + " RETURN n",
    "MATCH (n) WHERE " + "NOT " * 200 + "true RETURN n",
    "MATCH (n) RETURN " + "[" * 40 + "]" * 40,
    "MATCH (n) RETURN n UNION MATCH (m) RETURN m",
    "USE otherdb MATCH (n) RETURN n",
    "MATCH (n) RETURN n.`title`",
    "MATCH (n) WHERE n.title =~ '.*' RETURN n",
    "SHOW INDEXES",
    "EXPLAIN MATCH (n) RETURN n",
    "PROFILE MATCH (n) RETURN n",
    "MATCH (n) RETURN n\x00",
    "MATCH p = (a)-[*1..2]-(b) RETURN p",
    "MATCH (n) WHERE exists((n)-->()) RETURN n",
    "MATCH (n) WHERE n.title = 'unterminated RETURN n",
    "MATCH (n) WHERE n.title = 'a' + 'b' RETURN n",
    "MATCH (n) RETURN n.title AS `x`",
    "MATCH (n) WITH n RETURN n",
    "MATCH (n) RETURN n.title.x",
    "MATCH (n) RETURN collect(n)",
    "MATCH (n) RETURN count(*) = 1",
    "MATCH (n) WHERE count(*) > 1 RETURN n",
    "MATCH (n) RETURN m",
    "MATCH (n)-[r]->(m), (a)-[r]->(b) RETURN n",
    "MATCH (n) RETURN n.uid, n.uid",
    "MATCH (n) RETURN DISTINCT n.kind ORDER BY n.uid",
    "MATCH (n)-[r:xref {w: 1}]->(m) RETURN n",
    "MATCH (n) RETURN '\\q'",
    "MATCH (n) RETURN 99999999999999999999999",
    "MATCH (n) WHERE n.uid IN 'abc' RETURN n",
    "",
    "   // only a comment",
    "RETURN 1",
    "MATCH (n)",
]


@pytest.mark.parametrize("text", SYNTAX)
def test_malformed_and_out_of_subset_queries_are_syntax_errors(docs, text):
    g, _ = docs
    with pytest.raises(QueryGraphError) as e:
        query_graph(g, text)
    assert e.value.code == "syntax", (e.value.code, e.value.message)
    assert "internal error" not in e.value.message


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ("MATCH (n)-[:FRIEND]->(m) RETURN n", "label"),
        ("MATCH (n)-[:xref|FRIEND]->(m) RETURN n", "label"),
        ("MATCH (n)-[:XREF]->(m) RETURN n", "label"),  # labels are case-sensitive
        ("MATCH (n)<-[:partof]-(m) RETURN n", "label"),
        ("MATCH (n)-[:xref|:KNOWS*1..2]->(m) RETURN n", "label"),
        ("MATCH (n)-[*]->(m) RETURN n", "unbounded"),
        ("MATCH (n)-[*1..]->(m) RETURN n", "unbounded"),
        ("MATCH (n)-[*..]->(m) RETURN n", "unbounded"),
        ("MATCH (n)-[r:xref*]->(m) RETURN n", "unbounded"),
        ("MATCH (n)-[*0..]-(m) RETURN n", "unbounded"),
        ("MATCH (n)-[*1..5]->(m) RETURN n", "depth"),
        ("MATCH (n)-[*5]->(m) RETURN n", "depth"),
        ("MATCH (n)-[*..100]->(m) RETURN n", "depth"),
        ("MATCH (n)-[:xref*2..1]->(m) RETURN n", "depth"),
        ("MATCH (n) RETURN n SKIP 1000000", "limit"),
    ],
)
def test_labels_depth_and_unbounded(docs, text, code):
    g, _ = docs
    with pytest.raises(QueryGraphError) as e:
        query_graph(g, text)
    assert e.value.code == code, e.value.message
    if code == "unbounded":
        assert "write *1..d with d <= 4" in e.value.message
    if code == "label":
        assert "allowed types are: partOf, dependsOn, xref" in e.value.message


@pytest.mark.parametrize(
    ("text", "params"),
    [
        ("MATCH (n) RETURN $missing", None),
        ("MATCH (n) RETURN $missing", {"other": 1}),
        ("MATCH (n {uid: $u}) RETURN n", {"u": {"a": 1}}),
        ("MATCH (n {uid: $u}) RETURN n", {"u": [[1]]}),
        ("MATCH (n {uid: $u}) RETURN n", {"u": object()}),
        ("MATCH (n {uid: $u}) RETURN n", {"u": b"bytes"}),
        ("MATCH (n {uid: $u}) RETURN n", {"u": float("nan")}),
        ("MATCH (n) RETURN n LIMIT $l", {"l": -5}),
        ("MATCH (n) RETURN n LIMIT $l", {"l": 2.5}),
        ("MATCH (n) RETURN n LIMIT $l", {"l": True}),
        ("MATCH (n) RETURN n LIMIT $l", {"l": "10"}),
        ("MATCH (n) RETURN n SKIP $s", {"s": None}),
        ("MATCH (n) WHERE n.uid IN $u RETURN n", {"u": "not-a-list"}),
        ("MATCH (n) RETURN n", [1, 2]),
        ("MATCH (n) RETURN n", {1: "x"}),
        ("MATCH (n) RETURN $u", {"u": list(range(5000))}),
    ],
)
def test_bad_params(docs, text, params: Any):
    g, _ = docs
    with pytest.raises(QueryGraphError) as e:
        query_graph(g, text, params)
    assert e.value.code == "param", e.value.message


@pytest.mark.parametrize(
    "value",
    [
        "x'}) DETACH DELETE n //",
        "') RETURN n UNION MATCH (m) DELETE m //",
        "skill:di' OR 1=1 OR n.uid = '",
        "*1..100",
        "$u",
    ],
)
def test_params_are_bound_never_spliced(docs, value):
    g, _ = docs
    res = query_graph(g, "MATCH (n {uid: $u}) RETURN n", {"u": value})
    assert res.rows == []
    res = query_graph(g, "MATCH (n) WHERE n.title = $u OR n.uid = $u RETURN count(*)", {"u": value})
    assert res.rows == [[0]]
    res = query_graph(g, "MATCH (n {uid: 'skill:di'}) RETURN $u AS v", {"u": value})
    assert res.rows == [[value]]  # returned verbatim, as data


def test_keywords_inside_strings_and_property_keys_are_data(docs):
    g, _ = docs
    assert query_graph(g, "MATCH (n) WHERE n.title = 'DELETE' RETURN n").rows == []
    assert query_graph(g, 'MATCH (n) WHERE n.title = "x\\" DELETE n //" RETURN n').rows == []
    assert query_graph(g, "MATCH (n {uid: 'skill:di'}) RETURN n.create, n.set").rows == [
        [None, None]
    ]
    assert query_graph(g, "MATCH (n) RETURN n // CREATE in a comment LIMIT 1").rows


def test_non_string_query(docs):
    g, _ = docs
    for text in (None, 42, b"MATCH (n) RETURN n"):
        with pytest.raises(QueryGraphError) as e:
            query_graph(g, text)  # type: ignore[arg-type]
        assert e.value.code == "syntax"


# -- resource bounds on the dense graph (2000 nodes x 20 out-edges) -------------------------
# The 250 ms budget is read off a StepClock: every read of the clock moves it, so the deadline
# falls after a fixed amount of work on any machine, and a query that ignored its deadline
# would read the clock (and work) far past it.
BUDGET_S = 0.25


def clock(monkeypatch: pytest.MonkeyPatch, step: float) -> StepClock:
    return StepClock(step).install(monkeypatch, gq, cypher_exec, traverse)


@pytest.mark.parametrize(
    "text",
    [
        "MATCH (a)-[*1..4]-(b) RETURN count(*)",
        "MATCH (a)-[*1..4]->(b) RETURN a.uid, b.uid ORDER BY b.title LIMIT 1",
        "MATCH (a),(b),(c) RETURN count(*)",
        "MATCH (a) MATCH (b) MATCH (c) RETURN a.uid ORDER BY c.title DESC LIMIT 1",
        "MATCH (a)-[*1..2]->(b), (c)-[*1..2]->(d) RETURN count(*)",
        "MATCH (a)-->(b)-->(c)-->(d)-->(e)-->(f) RETURN count(*)",
        "MATCH (a),(b) WHERE a.title = b.title RETURN count(*)",
        "MATCH (a),(b) RETURN a.uid, b.uid, count(*) AS c ORDER BY c DESC LIMIT 1",
        "MATCH (a) OPTIONAL MATCH (a)-[*1..4]-(b) RETURN count(b)",
    ],
)
def test_expensive_patterns_are_aborted(dense, text, monkeypatch):
    step = 0.01  # 25 reads of the clock are the whole budget
    c = clock(monkeypatch, step)
    with pytest.raises(QueryGraphError) as e:
        query_graph(dense, text)
    assert e.value.code in ("timeout", "limit"), e.value.message
    assert c.reads <= BUDGET_S / step + 4, c.reads  # stopped at the deadline, not past it


def test_worst_case_pattern_times_out_at_its_250ms_budget(dense, monkeypatch):
    c = clock(monkeypatch, 0.001)  # a millisecond per read
    with pytest.raises(QueryGraphError) as e:
        query_graph(dense, "MATCH (a)-[*1..4]-(b) RETURN count(*)")
    assert e.value.code == "timeout"
    assert 250 <= c.reads <= 253, c.reads  # the first look past 250 ms stops it
    assert "250 ms budget" in e.value.message


def test_big_results_are_bounded_not_rejected(dense, monkeypatch):
    clock(monkeypatch, 0.0)  # this test is about row caps: no deadline passes
    res = query_graph(dense, "MATCH (a),(b) RETURN DISTINCT a.uid, b.uid LIMIT 100000")
    assert len(res.rows) == MAX_LIMIT and res.truncated
    res = query_graph(dense, "MATCH (a)-[*1..4]->(b) RETURN b.uid LIMIT 100000")
    assert len(res.rows) == MAX_LIMIT and res.truncated
    # A cross product without ORDER BY streams: it stops after LIMIT + 1 rows.
    res = query_graph(dense, "MATCH (a),(b),(c),(d) RETURN a.uid LIMIT 1000")
    assert len(res.rows) == MAX_LIMIT and res.truncated


def test_corpus_size():
    assert len(READ_ONLY) + len(SYNTAX) >= 60


# -- the whole query's cost: hops together, result bytes, materialisation in the budget ----
@pytest.mark.parametrize(
    "text",
    [
        # each hop range is legal alone; together they reach 20 hops
        "MATCH (a)-[:xref*0..4]->(b)-[:xref*1..4]->(c)-[:xref*1..4]->(d)-[:xref*1..4]->(e)"
        "-[:xref*1..4]->(f) RETURN f.uid",
        "MATCH (a)-[*1..3]->(b), (c)-[*1..2]->(d) RETURN count(*)",
        "MATCH (a)-[*1..4]->(b) MATCH (b)-[*1..1]->(c) RETURN c.uid",
    ],
)
def test_variable_length_hops_are_bounded_over_the_whole_query(dense, text):
    with pytest.raises(QueryGraphError) as e:
        query_graph(dense, text)
    assert e.value.code == "depth" and "at most 4" in e.value.message
    assert e.value.details["depth"] > 4


def test_hops_up_to_four_in_total_still_run(docs):
    g, _ = docs
    res = query_graph(g, "MATCH (a)-[*1..2]->(b)-[*1..2]->(c) RETURN count(*) AS n")
    assert res.columns == ("n",)


def counted_rows(monkeypatch: pytest.MonkeyPatch, c: StepClock, cost_s: float) -> list[int]:
    """Rows materialised (``to_json`` calls), each standing for ``cost_s`` of clock time."""
    rows: list[int] = []
    real = gq.to_json

    def to_json(g, v):  # type: ignore[no-untyped-def]
        rows.append(1)
        c.advance(cost_s)
        return real(g, v)

    monkeypatch.setattr(gq, "to_json", to_json)
    return rows


def test_parameter_strings_repeated_in_the_output_are_bounded(dense, monkeypatch):
    # 5 KB of request: 300 copies of a 4,000-character parameter per row, 1,000 rows
    rows = counted_rows(monkeypatch, clock(monkeypatch, 0.0), 0.0)
    items = ", ".join(["$p"] * 300)
    with pytest.raises(QueryGraphError) as e:
        query_graph(dense, f"MATCH (a),(b) RETURN [{items}] AS x LIMIT 1000", {"p": "x" * 4000})
    assert e.value.code == "limit" and "bytes" in e.value.message
    assert e.value.details["bound"] == "response_bytes"
    assert len(rows) <= 2  # one row is 1.2 MB: the bound stops the first or second


def test_many_mid_sized_rows_hit_the_result_bound_not_memory(dense, monkeypatch):
    # each row is small enough alone; 1,000 of them pass the result's byte bound
    rows = counted_rows(monkeypatch, clock(monkeypatch, 0.0), 0.0)
    with pytest.raises(QueryGraphError) as e:
        query_graph(dense, "MATCH (a) RETURN [$p, $p, $p, $p] AS x LIMIT 1000", {"p": "y" * 4000})
    assert e.value.code == "limit" and e.value.details["bound"] == "response_bytes"
    assert len(rows) < 1000 // 2  # ~16 KB a row against the 1 MB bound: about 62 rows


def test_materialisation_runs_inside_the_budget(dense, monkeypatch):
    # A costly to_json (2 ms a row, standing in for a large page) must end in a timeout
    # at the 100 ms budget: about 50 rows of the 1000, not run on to the end.
    c = clock(monkeypatch, 0.0)
    rows = counted_rows(monkeypatch, c, 0.002)
    with pytest.raises(QueryGraphError) as e:
        query_graph(dense, "MATCH (a) RETURN a.uid LIMIT 1000", timeout_ms=100)
    assert e.value.code == "timeout"
    assert 45 <= len(rows) <= 120, len(rows)
