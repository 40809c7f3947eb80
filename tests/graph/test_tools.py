"""get_related, get_learning_path, resolve_xref, facets: answers and bounds."""

from __future__ import annotations

import gc

import pytest

import cogitave.graph.tools as tools
from cogitave.errors import NotFoundError, QueryGraphError
from cogitave.graph.tools import facets, get_learning_path, get_related, path_key, resolve_xref
from cogitave.nodes import Edge, Node
from cogitave.store.graph import GraphSegment
from tests.clock import StepClock

T = "docs/tutorial"


# -- get_related ------------------------------------------------------------------------------
def test_related_nearest_first_with_paths(docs):
    g, _ = docs
    res = get_related(g, f"{T}/dependencies.md", depth=2)
    depths = [r.depth for r in res.items]
    assert depths == sorted(depths) and set(depths) == {1, 2}
    by_uid = {r.uid: r for r in res.items}
    assert by_uid["api:fastapi.Depends"].path[0].direction == "in"
    adv = by_uid["docs/advanced/security.md"]
    assert [(p.label, p.direction, p.uid) for p in adv.path] == [
        ("dependsOn", "in", f"{T}/security.md"),
        ("dependsOn", "in", "docs/advanced/security.md"),
    ]
    assert not res.truncated


def test_related_labels_direction_limit(docs):
    g, _ = docs
    res = get_related(g, f"{T}/dependencies.md", labels=["dependsOn"], direction="out", depth=4)
    assert [r.uid for r in res.items] == [f"{T}/first-steps.md"]
    res = get_related(g, f"{T}/dependencies.md", limit=2)
    assert len(res.items) == 2 and res.truncated


@pytest.mark.parametrize(
    ("kwargs", "code"),
    [
        ({"labels": ["KNOWS"]}, "label"),
        ({"depth": 5}, "depth"),
        ({"limit": 0}, "limit"),
    ],
)
def test_related_bounds(docs, kwargs, code):
    g, _ = docs
    with pytest.raises(QueryGraphError) as e:
        get_related(g, f"{T}/index.md", **kwargs)
    assert e.value.code == code


def test_related_unknown_uid(docs):
    g, _ = docs
    with pytest.raises(NotFoundError):
        get_related(g, "nope")


def test_related_is_capped_on_dense(dense):
    # earlier modules leave a large heap in this process; a full collection landing inside
    # the 250 ms walk is the suite's cost, not the walk's (it runs in ~20 ms alone)
    gc.collect()
    res = get_related(dense, "n000000", depth=4, limit=10**6)
    assert len(res.items) == 1000 and res.truncated


# -- facets -----------------------------------------------------------------------------------
def test_facets_count_kinds_and_labels(docs):
    g, _ = docs
    f = facets(g, [f"{T}/dependencies.md", f"{T}/security.md"])
    assert f.kinds["page"] == 4  # index, first-steps, advanced, old (seeds not counted)
    assert f.kinds["skill"] == 1 and f.kinds["role"] == 1 and f.kinds["api"] == 1
    assert f.labels["dependsOn"] == 3 and f.labels["partOf"] == 3
    assert f.nodes == sum(f.kinds.values())
    only = facets(g, [g.id_of(f"{T}/index.md")], labels=["partOf"], direction="in")
    assert only.kinds == {"page": 3} and only.labels == {"partOf": 3}
    assert facets(g, ["nope"]).nodes == 0


def test_facets_bounded_on_dense(dense):
    f = facets(dense, range(500), depth=2)
    assert f.truncated and f.nodes <= 1000


# -- resolve_xref -----------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("ref", "kwargs", "uid", "evidence"),
    [
        (f"{T}/dependencies.md", {}, f"{T}/dependencies.md", "uid"),
        ("DOCS/tutorial/Dependencies.md", {}, f"{T}/dependencies.md", "uid (case-insensitive)"),
        ("../dependencies.md", {}, f"{T}/dependencies.md", "path ends with"),
        ("/tutorial/dependencies/", {}, f"{T}/dependencies.md", "path ends with"),
        ("https://fastapi.tiangolo.com/tutorial/dependencies/", {}, f"{T}/dependencies.md", "path"),
        ("./first-steps.md", {"base": f"{T}/dependencies.md"}, f"{T}/first-steps.md", "relative"),
        (
            "../tutorial/security.md",
            {"base": "docs/advanced/security.md"},
            f"{T}/security.md",
            "relative",
        ),
        ("/tutorial/", {}, f"{T}/index.md", "path ends with"),
        (
            "dependencies.md#sub-dependencies",
            {},
            f"{T}/dependencies.md#sub-dependencies",
            "section",
        ),
        (
            "/tutorial/dependencies/#Sub-dependencies",
            {},
            f"{T}/dependencies.md#sub-dependencies",
            "section",
        ),
        (
            "#sub-dependencies",
            {"base": f"{T}/dependencies.md"},
            f"{T}/dependencies.md#sub-dependencies",
            "section",
        ),
        ("deps", {"aliases": {"deps": f"{T}/dependencies.md"}}, f"{T}/dependencies.md", "alias"),
        ("first steps", {}, f"{T}/first-steps.md", "title"),
        ("  FIRST STEPS ", {}, f"{T}/first-steps.md", "title"),
        ("fastapi.Depends", {}, "api:fastapi.Depends", "API symbol"),
        ("fastapi.Depends()", {}, "api:fastapi.Depends", "title"),
        ("Depends", {}, "api:fastapi.Depends", "API symbol"),
        ("skill:di", {}, "skill:di", "uid"),
    ],
)
def test_resolve_exact(docs, ref, kwargs, uid, evidence):
    g, _ = docs
    res = resolve_xref(g, ref, **kwargs)
    assert res.exact, res
    assert res.candidates[0].uid == uid
    assert evidence in res.candidates[0].evidence
    scores = [c.score for c in res.candidates]
    assert scores == sorted(scores, reverse=True)


def test_resolve_ambiguous_path_lists_all(docs):
    g, _ = docs
    res = resolve_xref(g, "security.md")
    assert {c.uid for c in res.candidates} == {
        f"{T}/security.md",
        "docs/advanced/security.md",
        "docs/old/security.md",
    }


def test_resolve_unknown_gives_closest_not_exact(docs):
    g, _ = docs
    res = resolve_xref(g, "Securty")
    assert not res.exact and res.candidates[0].uid == f"{T}/security.md"
    assert "similar" in res.candidates[0].evidence
    res = resolve_xref(g, "dependencies.md#nope")
    assert not res.exact and "not found" in res.candidates[0].evidence
    assert resolve_xref(g, "qqqqqqqq").candidates == ()


def test_resolve_rejects_empty(docs):
    g, _ = docs
    with pytest.raises(QueryGraphError):
        resolve_xref(g, "  ")


@pytest.mark.parametrize(
    ("ref", "key"),
    [
        ("docs/tutorial/index.md", ("docs", "tutorial")),
        ("https://x.org/a/b/?q=1#top", ("a", "b")),
        ("../a/README.md", ("a",)),
        ("./A/B.html", ("a", "b")),
    ],
)
def test_path_key(ref, key):
    assert path_key(ref) == key


# -- get_learning_path ------------------------------------------------------------------------
def test_learning_path_for_a_page(docs):
    g, _ = docs
    lp = get_learning_path(g, "docs/advanced/security.md")
    assert [s.uid for s in lp.steps] == [
        f"{T}/first-steps.md",
        f"{T}/dependencies.md",
        f"{T}/security.md",
        "docs/advanced/security.md",
    ]
    assert lp.steps[-1].why == "the target"
    assert lp.steps[0].why == "prerequisite of Dependencies"
    assert lp.steps[0].context == ({"uid": f"{T}/index.md", "title": "Tutorial"},)
    assert lp.cycles == () and not lp.truncated


@pytest.mark.parametrize("target", ["skill:di", "Dependency Injection", "dependency injection"])
def test_learning_path_for_a_skill(docs, target):
    g, _ = docs
    lp = get_learning_path(g, target)
    order = [s.uid for s in lp.steps]
    assert lp.target == "skill:di" and order[-1] == "skill:di"
    why = {s.uid: s.why for s in lp.steps}
    assert why[f"{T}/dependencies.md"] == "teaches Dependency Injection"
    # prerequisites first: first-steps before dependencies, skill:basics before skill:di
    assert order.index(f"{T}/first-steps.md") < order.index(f"{T}/dependencies.md")
    assert order.index("skill:basics") < order.index("skill:di")


@pytest.mark.parametrize("target", ["role:backend", "backend developer", "role:backend-developer"])
def test_learning_path_for_a_role(docs, target):
    g, _ = docs
    lp = get_learning_path(g, target)
    why = {s.uid: s.why for s in lp.steps}
    assert lp.target == "role:backend"
    assert why[f"{T}/security.md"] == "written for Backend developer"
    assert [s.uid for s in lp.steps][-2:] == [f"{T}/security.md", "role:backend"]


def test_learning_path_reports_cycles_without_looping(docs):
    g, _ = docs
    lp = get_learning_path(g, "docs/cycle/c.md")
    assert lp.cycles == (("docs/cycle/a.md", "docs/cycle/b.md"),)
    assert [s.uid for s in lp.steps][-1] == "docs/cycle/c.md"
    assert len(lp.steps) == 3
    assert all("cycle" in s.why for s in lp.steps[:2])


def test_learning_path_unknown_target(docs):
    g, _ = docs
    with pytest.raises(NotFoundError, match="closest"):
        get_learning_path(g, "quantum basket weaving")


def test_learning_path_depth_bound_is_reported():
    chain = [
        Node(f"p{i}", "page", {"title": f"P{i}"}, edges=(Edge("dependsOn", f"p{i + 1}"),))
        for i in range(8)
    ]
    g = GraphSegment.build([*chain, Node("p8", "page")])
    lp = get_learning_path(g, "p0")
    assert [s.uid for s in lp.steps] == ["p4", "p3", "p2", "p1", "p0"]
    assert lp.truncated and lp.notes


def test_learning_path_bounded_on_dense(dense, monkeypatch):
    """Its walks on the dense graph are bounded by the row cap, not by the clock (which does
    not move here): at most a few rows' worth of edge expansions each."""
    from cogitave.graph import learning, related
    from cogitave.graph import traverse as traverse_module

    StepClock(0.0).install(monkeypatch, traverse_module, related)
    walks: list[int] = []
    real = learning.traverse

    def counted(*a, **kw):  # type: ignore[no-untyped-def]
        tr = real(*a, **kw)
        walks.append(tr.expansions)
        return tr

    monkeypatch.setattr(learning, "traverse", counted)
    lp = get_learning_path(dense, "n000000")
    assert len(lp.steps) <= 1001
    assert walks and all(n <= 20 * traverse_module.MAX_ROWS for n in walks), walks


def test_tools_reach_the_graph_only_through_traverse():
    """No module-level access to CSR arrays outside traverse (one enforced path)."""
    import inspect

    src = inspect.getsource(tools)
    assert ".csr(" not in src and ".out(" not in src and ".in_(" not in src
