"""query_graph: every supported clause, on the small docs graph."""

from __future__ import annotations

import pytest

from cogitave.errors import QueryGraphError
from cogitave.graph.query import MAX_TIMEOUT_MS, GraphQueryResult, query_graph

T = "docs/tutorial"


@pytest.fixture
def q(docs):
    g, props = docs

    def run(text: str, params: dict | None = None, **kw) -> GraphQueryResult:
        return query_graph(g, text, params, node_props=props, **kw)

    return run


def col(res: GraphQueryResult, i: int = 0) -> list:
    return [r[i] for r in res.rows]


def test_match_node_by_kind_and_return_property(q):
    res = q("MATCH (s:skill) RETURN s.uid ORDER BY s.uid")
    assert res.columns == ("s.uid",)
    assert col(res) == ["skill:basics", "skill:di"]
    assert not res.truncated and res.elapsed_ms >= 0


def test_whole_node_is_uid_kind_title(q):
    res = q("MATCH (n {uid: 'skill:di'}) RETURN n")
    assert res.rows == [[{"uid": "skill:di", "kind": "skill", "title": "Dependency Injection"}]]


def test_property_map_with_param_and_extra_props(q):
    res = q("MATCH (p:page {lang: $lang}) RETURN p.title ORDER BY p.title", {"lang": "de"})
    assert col(res) == ["Security"]
    res = q("MATCH (p {title: 'First Steps'}) RETURN p.tags")
    assert res.rows == [[["intro", "basics"]]]


def test_relationship_directions(q):
    out = q(f"MATCH (a {{uid: '{T}/security.md'}})-[:dependsOn]->(b) RETURN b.uid")
    assert col(out) == [f"{T}/dependencies.md"]
    inc = q(f"MATCH (a {{uid: '{T}/security.md'}})<-[:dependsOn]-(b) RETURN b.uid")
    assert col(inc) == ["docs/advanced/security.md"]
    both = q(f"MATCH (a {{uid: '{T}/security.md'}})-[:dependsOn]-(b) RETURN b.uid ORDER BY b.uid")
    assert col(both) == ["docs/advanced/security.md", f"{T}/dependencies.md"]
    arrows = q(f"MATCH (a {{uid: '{T}/security.md'}})<-->(b) RETURN count(*) AS n")
    assert arrows.rows == [[5]]  # 3 out (partOf, dependsOn, forRole) + 2 in


def test_label_alternatives(q):
    res = q(
        f"MATCH (a {{uid: '{T}/dependencies.md'}})-[r:teachesSkill|:partOf]->(b) "
        "RETURN type(r) AS t, b.uid ORDER BY t"
    )
    assert res.rows == [["partOf", f"{T}/index.md"], ["teachesSkill", "skill:di"]]


def test_variable_length_and_relationship_lists(q):
    res = q(
        "MATCH (a {uid: 'docs/advanced/security.md'})-[r:dependsOn*1..3]->(b) "
        "RETURN b.uid AS u, r ORDER BY u"
    )
    assert col(res) == [f"{T}/dependencies.md", f"{T}/first-steps.md", f"{T}/security.md"]
    longest = next(r for r in res.rows if r[0] == f"{T}/first-steps.md")[1]
    assert [x["type"] for x in longest] == ["dependsOn"] * 3
    assert longest[0]["start"] == "docs/advanced/security.md"
    exact = q("MATCH (a {uid: 'docs/advanced/security.md'})-[:dependsOn*2]->(b) RETURN b.uid")
    assert col(exact) == [f"{T}/dependencies.md"]
    upto = q("MATCH (a {uid: 'docs/advanced/security.md'})-[:dependsOn*..2]->(b) RETURN count(*)")
    assert upto.rows == [[2]]
    zero = q("MATCH (a {uid: 'skill:basics'})-[*0..1]-(b) RETURN b.uid ORDER BY b.uid")
    assert col(zero) == [f"{T}/first-steps.md", "skill:basics", "skill:di"]


def test_var_length_right_to_left_keeps_pattern_order(q):
    # The anchor is on the right; relationships still come out in pattern order.
    res = q(f"MATCH (a)-[r:dependsOn*2]->(b {{uid: '{T}/first-steps.md'}}) RETURN a.uid, r")
    assert res.rows[0][0] == f"{T}/security.md"
    assert [x["start"] for x in res.rows[0][1]] == [f"{T}/security.md", f"{T}/dependencies.md"]


def test_chains_and_comma_patterns(q):
    res = q(
        "MATCH (s:section)-[:partOf]->(p:page)-[:partOf]->(top), (api:api)-[:implementedBy]->(p) "
        "RETURN s.title, p.title, top.title, api.title"
    )
    assert res.rows == [["Sub-dependencies", "Dependencies", "Tutorial", "fastapi.Depends()"]]


def test_multiple_match_clauses_join_on_variables(q):
    res = q(
        "MATCH (p:page) WHERE p.title = 'Dependencies' "
        "MATCH (p)-[:teachesSkill]->(s) MATCH (s)-[:dependsOn]->(pre) RETURN pre.title"
    )
    assert col(res) == ["Basics"]


def test_relationship_uniqueness_within_a_clause(q):
    # a -> b <- c must use two different relationships, so c != a.
    res = q(f"MATCH (a)-[:partOf]->(b {{uid: '{T}/index.md'}})<-[:partOf]-(c) RETURN a.uid, c.uid")
    assert res.rows and all(a != c for a, c in res.rows)
    assert len(res.rows) == 6  # 3 children, ordered pairs


def test_optional_match(q):
    res = q(
        "MATCH (p:page) WHERE p.uid STARTS WITH 'docs/cycle' "
        "OPTIONAL MATCH (p)<-[:dependsOn]-(x) RETURN p.uid AS p, x.uid AS x ORDER BY p, x"
    )
    assert res.rows == [
        ["docs/cycle/a.md", "docs/cycle/b.md"],
        ["docs/cycle/a.md", "docs/cycle/c.md"],
        ["docs/cycle/b.md", "docs/cycle/a.md"],
        ["docs/cycle/c.md", None],
    ]
    first = q("OPTIONAL MATCH (n {uid: 'nope'}) RETURN n")
    assert first.rows == [[None]]
    chained = q(
        "MATCH (n {uid: 'docs/cycle/c.md'}) OPTIONAL MATCH (n)<-[:xref]-(m) "
        "MATCH (m)-->(z) RETURN z"
    )
    assert chained.rows == []  # m is null: nothing can match from it


def test_optional_match_where_is_part_of_the_pattern(q):
    res = q(
        "MATCH (p {uid: 'docs/cycle/a.md'}) OPTIONAL MATCH (p)<-[:dependsOn]-(x) "
        "WHERE x.title = 'nope' RETURN p.uid, x"
    )
    assert res.rows == [["docs/cycle/a.md", None]]


@pytest.mark.parametrize(
    ("where", "expected"),
    [
        ("n.title = 'Basics'", ["skill:basics"]),
        ("n.title <> 'Basics'", ["skill:di"]),
        ("n.title < 'C'", ["skill:basics"]),
        ("n.title <= 'Basics'", ["skill:basics"]),
        ("n.title > 'C'", ["skill:di"]),
        ("n.title >= 'Dependency Injection'", ["skill:di"]),
        ("n.title STARTS WITH 'Dep'", ["skill:di"]),
        ("n.title ENDS WITH 'ics'", ["skill:basics"]),
        ("n.title CONTAINS 'Inject'", ["skill:di"]),
        ("n.title IN ['Basics', 'x']", ["skill:basics"]),
        ("n.title IN $titles", ["skill:di"]),
        ("n.missing IS NULL", ["skill:basics", "skill:di"]),
        ("n.missing IS NOT NULL", []),
        ("n.title IS NOT NULL AND n.uid = 'skill:di'", ["skill:di"]),
        ("n.uid = 'skill:di' OR n.title = 'Basics'", ["skill:basics", "skill:di"]),
        ("NOT n.uid = 'skill:di'", ["skill:basics"]),
        ("n.uid = 'skill:di' XOR n.kind = 'skill'", ["skill:basics"]),
        ("(n.uid = 'skill:di' OR n.uid = 'x') AND NOT (n.title IS NULL)", ["skill:di"]),
        ("n.missing = 1", []),  # null comparisons are not true
        ("NOT n.missing = 1", []),  # ...and neither is their negation
        ("n.title = $t", ["skill:basics"]),
        ("n.uid IN $none", []),
    ],
)
def test_where_operators(q, where, expected):
    res = q(
        f"MATCH (n:skill) WHERE {where} RETURN n.uid ORDER BY n.uid",
        {"titles": ["Dependency Injection"], "t": "Basics", "none": None},
    )
    assert col(res) == expected


def test_numbers_and_booleans(q, docs):
    g, _ = docs
    props = {g.id_of("skill:di"): {"level": 3, "ok": True}, g.id_of("skill:basics"): {"level": 1.5}}
    res = query_graph(
        g,
        "MATCH (n:skill) WHERE n.level > 1 AND n.level <= 3.0 RETURN n.uid, n.ok ORDER BY n.level",
        node_props=lambda i: props.get(i, {}),
    )
    assert res.rows == [["skill:basics", None], ["skill:di", True]]
    res = query_graph(g, "MATCH (n:skill) WHERE n.level = -1 RETURN n", node_props=lambda i: {})
    assert res.rows == []


def test_return_aliases_literals_and_lists(q):
    res = q(
        "MATCH (n {uid: 'skill:di'}) RETURN n.title AS name, 'x' AS lit, [1, $p] AS l", {"p": 2}
    )
    assert res.columns == ("name", "lit", "l")
    assert res.rows == [["Dependency Injection", "x", [1, 2]]]
    assert res.records() == [{"name": "Dependency Injection", "lit": "x", "l": [1, 2]}]


def test_count_forms_and_grouping(q):
    res = q("MATCH (n) RETURN n.kind AS kind, count(*) AS n ORDER BY n DESC, kind")
    assert res.rows[0] == ["page", 9]
    assert ["api", 1] in res.rows
    res = q("MATCH (n) RETURN count(n.lang) AS withLang, count(DISTINCT n.lang) AS langs")
    assert res.rows == [[7, 2]]
    res = q("MATCH (n:nothing) RETURN count(*)")
    assert res.rows == [[0]]
    assert "no node has kind 'nothing'" in res.stats["warnings"][0]
    res = q("MATCH (n:nothing) RETURN n.kind, count(*)")
    assert res.rows == []


def test_distinct(q):
    res = q("MATCH (n)-[:partOf]->(p) RETURN DISTINCT p.uid ORDER BY p.uid")
    assert col(res) == [f"{T}/dependencies.md", f"{T}/index.md"]
    res = q("MATCH (n:page) RETURN DISTINCT n.lang AS l ORDER BY l")
    assert col(res) == ["de", "en", None]


def test_order_by_skip_limit(q):
    res = q("MATCH (n:page) RETURN n.title ORDER BY n.title DESC SKIP 1 LIMIT 2")
    assert col(res) == ["Security (old)", "Security"]
    assert res.truncated  # the limit cut rows off
    res = q("MATCH (n:page) RETURN n.title ORDER BY n.uid ASCENDING LIMIT $l", {"l": 1})
    assert col(res) == ["Advanced Security"]
    res = q("MATCH (n:page) RETURN n.title AS t ORDER BY n.lang, t SKIP $s", {"s": 7})
    assert col(res) == ["Cycle B", "Cycle C"]  # nulls last ascending
    res = q("MATCH (n:page) RETURN n.title AS t ORDER BY n.lang DESC, t LIMIT 1")
    assert col(res) == ["Cycle A"]  # nulls first descending
    res = q("MATCH (n:page) RETURN n.title LIMIT 0")
    assert res.rows == [] and res.truncated


def test_limit_default_and_cap(dense):
    res = query_graph(dense, "MATCH (n) RETURN n.uid")
    assert len(res.rows) == 100 and res.truncated
    res = query_graph(dense, "MATCH (n) RETURN n.uid", limit_default=7)
    assert len(res.rows) == 7
    res = query_graph(dense, "MATCH (n) RETURN n.uid LIMIT 100000")
    assert len(res.rows) == 1000 and res.truncated
    assert "capped at 1000" in res.stats["warnings"][0]
    res = query_graph(dense, "MATCH (n) RETURN n.uid ORDER BY n.uid DESC LIMIT 5000")
    assert len(res.rows) == 1000 and res.rows[0] == ["n001999"]


def test_case_insensitive_keywords_and_comments(q):
    res = q(
        "match (n:skill) // line comment\n where /* block\ncomment */ n.uid = 'skill:di' "
        "return n.uid as u order by u desc limit 1"
    )
    assert res.rows == [["skill:di"]]


def test_string_escapes(q):
    res = q("MATCH (n {uid: 'skill:di'}) RETURN 'it\\'s', \"a\\\"b\", '\\u00e9\\n' AS e")
    assert res.rows == [["it's", 'a"b', "é\n"]]


def test_non_ascii_inside_strings_is_fine(q):
    assert q("MATCH (n) WHERE n.title = 'Grüße 日本' RETURN n").rows == []


def test_node_props_override_does_not_shadow_core_props(docs):
    g, _ = docs
    res = query_graph(
        g, "MATCH (n {uid: 'skill:di'}) RETURN n.title", node_props=lambda i: {"title": "fake"}
    )
    assert res.rows == [["Dependency Injection"]]


def test_uid_hint_in_where_anchors_the_pattern(dense):
    # WHERE n.uid = ... lets the matcher start from one node instead of scanning 2000.
    res = query_graph(
        dense, "MATCH (a)-[*1..2]->(b) WHERE a.uid = $u RETURN count(*) AS c", {"u": "n000005"}
    )
    assert res.stats["traversals"] == 1
    res = query_graph(
        dense, "MATCH (a)-->(b) WHERE a.uid IN ['n000001', 'n000002'] RETURN count(*)"
    )
    assert res.stats["traversals"] == 2


def test_timeout_is_configurable_down_but_capped(q, dense):
    res = q("MATCH (n) RETURN n", timeout_ms=10**9)
    assert res.stats["timeout_ms"] == MAX_TIMEOUT_MS
    with pytest.raises(QueryGraphError) as e:
        query_graph(dense, "MATCH (a),(b),(c) RETURN count(*)", timeout_ms=20)
    assert e.value.code == "timeout" and "20 ms" in e.value.message


def test_result_to_dict(q):
    d = q("MATCH (n:role) RETURN n.uid").to_dict()
    assert d["columns"] == ["n.uid"] and d["rows"] == [["role:backend"]]
    assert set(d) == {"columns", "rows", "truncated", "elapsed_ms", "stats"}


def test_counts_agree_with_the_segment(dense):
    """Single hops over the whole dense graph match the segment's own edge counts."""
    by_label = dense.count_by_label()
    for label in ("xref", "partOf"):
        res = query_graph(dense, f"MATCH (a)-[:{label}]->(b) RETURN count(*)", timeout_ms=1000)
        assert res.rows == [[by_label[label]]]
    loops = sum(1 for s, lab, d in dense.edges() if lab == "xref" and s == d)
    res = query_graph(dense, "MATCH (a)-[:xref]-(b) RETURN count(*)", timeout_ms=1000)
    assert res.rows == [[2 * by_label["xref"] - loops]]
    res = query_graph(dense, "MATCH (a:page) RETURN count(*)")
    assert res.rows == [[dense.count_by_kind()["page"]]]
