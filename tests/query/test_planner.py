"""Each planner rule of the spec, shown by a query whose result changes when the rule breaks.

BM25-only collections keep the gate's decisions exact (no dense evidence); the dense rules run
on a collection with the real encoder.
"""

from __future__ import annotations

import pytest

from cogitave import SearchRequest
from cogitave.config import Routing
from cogitave.expand.stats import StatsBuilder
from cogitave.query.route import route_term
from tests.query import catalogue


@pytest.fixture(scope="module")
def cat(tmp_path_factory):
    return catalogue.build(tmp_path_factory.mktemp("cat") / "c")


def search(col, q, **kw):
    return col.search(SearchRequest(query=q, limit=kw.pop("limit", 20), **kw))


def dims_of(res):
    return {d["dim"]: d["terms"] for d in res.diagnostics["plan"]["dimensions"]}


def attrs(uid):
    return catalogue.PRODUCTS[uid]


# -- routing --------------------------------------------------------------------------------
def test_each_term_routes_to_its_dimension(cat):
    res = search(cat, "red leather boots")
    assert dims_of(res) == {"title": ["boots"], "material": ["leather"], "colour": ["red"]}


def test_routed_facets_constrain_and_only_explicit_routes_rank(cat):
    """A dimension the planner routed terms to is held by the gate but adds no ranked lens
    (the anchors order the survivors); an explicit ``dim:term`` route adds its lens."""
    res = search(cat, "red leather boots")
    lenses = {lens["name"] for lens in res.diagnostics["lenses"]}
    assert "bm25" in lenses and lenses <= {"bm25", "dense"}  # the anchors alone rank
    assert res.diagnostics["gate"]["rule"] == "n_minus_1"  # all three still gate
    for uid in res.uids:
        title, material, colour = attrs(uid)[0], attrs(uid)[1], attrs(uid)[2]
        assert sum(["boots" in title.lower(), material == "leather", colour == "red"]) >= 2
    explicit = search(cat, "material:leather boots")
    assert "bm25:material" in {lens["name"] for lens in explicit.diagnostics["lenses"]}


def test_semantic_home_wins_over_exact_home(cat):
    # "male" is a gender tail word (exact) and a word of one description (semantic)
    res = search(cat, "male")
    assert dims_of(res) == {"description": ["male"]}


def test_exact_dimension_routable_through_enum_tails(cat):
    res = search(cat, "elderly")
    assert dims_of(res) == {"age": ["elderly"]}
    assert set(res.uids) == {u for u, p in catalogue.PRODUCTS.items() if p[4] >= 65}


def test_df_guard_two_thirds():
    # "item" is in 15/15 descriptions (> 2/3): no route, no constraint from description
    b = StatsBuilder(catalogue.SCHEMA)
    b.add_all(catalogue.nodes())
    stats = b.apply(None)
    dims = catalogue.SCHEMA.names
    r = route_term("item", stats, catalogue.SCHEMA, dims, Routing())
    assert r.dim is None and r.reason == "guarded" and r.guarded == ("description",)
    # df 2 of 15 sits under the guard: it routes
    assert route_term("elastic", stats, catalogue.SCHEMA, dims, Routing()).dim == "description"
    # the guard's share is the rule: at 0.05, "elastic" (2/15 = 0.13) is guarded too
    tight = route_term("elastic", stats, catalogue.SCHEMA, dims, Routing(df_guard=0.05))
    assert tight.dim is None and tight.reason == "guarded"


def test_guarded_term_adds_no_constraint(cat):
    with_item = search(cat, "red leather item")
    assert "description" not in dims_of(with_item)
    assert with_item.uids == search(cat, "red leather").uids


# -- coherence --------------------------------------------------------------------------------
def test_two_routed_dimensions_are_strict_and(cat):
    res = search(cat, "red leather")
    assert res.diagnostics["gate"]["rule"] == "strict_and"
    assert res.uids and all(attrs(u)[1] == "leather" and attrs(u)[2] == "red" for u in res.uids)
    assert res.diagnostics["gate"]["rejected"] > 0  # BM25 alone brings red cotton, black leather


def test_strict_and_with_no_survivor_relaxes_to_n_minus_1(cat):
    res = search(cat, "purple leather")  # nothing is both
    assert res.diagnostics["gate"]["relaxed"] is True
    assert res.uids and all(attrs(u)[1] == "leather" or attrs(u)[2] == "purple" for u in res.uids)


def test_three_dimensions_forgive_one(cat):
    res = search(cat, "red leather boots")
    assert res.diagnostics["gate"]["rule"] == "n_minus_1"
    assert "bag-red-leather" in res.uids  # two of three: kept
    assert "boot-red-cotton" in res.uids
    assert "bag-red-cotton" not in res.uids  # one of three: dropped


def test_emphatic_dimension_is_never_the_dropped_one(cat):
    res = search(cat, "red +leather boots")
    assert "boot-red-cotton" not in res.uids
    assert "bag-red-leather" in res.uids
    explicit = search(cat, "red material:leather boots")
    assert "boot-red-cotton" not in explicit.uids


def test_forgiveness_across_a_terms_homes(cat):
    # "suede" lives in material (2 products) and in one title ("Suede loafers", material
    # leather); it routes to one home but a candidate may match it in any of them
    res = search(cat, "suede brown")
    routes = {r["term"]: r for r in res.diagnostics["plan"]["routes"]}
    assert set(routes["suede"]["homes"]) == {"title", "material"}
    assert "loafer-suede" in res.uids  # suede in the title, brown colour: passes


def test_backfill_pads_with_rejects_and_zero_stays_zero(cat):
    plain = search(cat, "red leather")
    filled = search(cat, "red leather", backfill=True)
    n = len(plain.uids)
    assert filled.uids[:n] == plain.uids
    tail = filled.results[n:]
    assert tail and all("backfill" in h.lenses for h in tail)
    assert filled.diagnostics["gate"]["backfilled"] == len(tail)
    # both emphatic dimensions can never be forgiven and never co-occur: zero survivors
    zero = search(cat, "+purple +wool scarf", backfill=True)
    assert zero.uids == [] and zero.diagnostics["gate"]["passed"] == 0


# -- rewrites, noise, filters ------------------------------------------------------------------
def test_zero_hit_term_is_repaired_from_the_corpus(cat):
    res = search(cat, "leathr boots")
    rw = res.diagnostics["plan"]["rewrites"]["rewrites"]
    assert [(r["original"], r["replacement"]) for r in rw] == [("leathr", ["leather"])]
    assert dims_of(res)["material"] == ["leather"]


def test_excluded_term_removes_nodes(cat):
    res = search(cat, "boots -cotton")
    assert res.uids and "boot-red-cotton" not in res.uids


def test_exact_filter(cat):
    res = search(cat, "boots", filters={"gender": ["M"]})
    assert res.uids == ["boot-red-leather"]


def test_dimension_restriction(cat):
    res = search(cat, "red leather", dimensions=("colour",))
    assert dims_of(res) == {"colour": ["red"]}
