"""Fields of one text are searched together and never gated against each other; facets are.

A paper's title and abstract are two fields of one text: a query whose common word sits in
titles and whose rare words sit in abstracts must not demand the common word in the title.
"""

from __future__ import annotations

import pytest

from cogitave import Collection, Node, SearchRequest
from cogitave.config import Settings
from cogitave.expand.stats import StatsBuilder
from cogitave.schema import WHOLE, Dimension, Schema

FIELDS = Schema((Dimension("title", "semantic"), Dimension("text", "semantic")))
FACETS = Schema(
    (Dimension("title", "semantic", facet=True), Dimension("text", "semantic", facet=True))
)

PAPERS = {
    # many titles say "algorithms"; the relevant papers have no abstract or no title word
    "p1": ("Algorithms for graphs", "shortest paths in sparse graphs"),
    "p2": ("Algorithms for strings", "suffix trees and pattern matching"),
    "p3": ("Algorithms for geometry", "convex hulls in the plane"),
    "p4": ("Sorting on external storage", ""),
    "p5": ("Merging runs on tape", "external sorting with replacement selection"),
    "p6": ("Algorithms in practice", "benchmarks of sorting networks"),
    "p7": ("Numerical algorithms", "floating point summation"),
    "p8": ("Hash tables", "open addressing and probing"),
    "p9": ("Graph colouring", "greedy heuristics"),
}


def build(path, schema):
    col = Collection.create(path, schema, encoder=None, settings=Settings(lexicon="none"))
    col.add(
        Node(uid, dims={k: v for k, v in (("title", t), ("text", x)) if v})
        for uid, (t, x) in PAPERS.items()
    )
    col.publish()
    return col


@pytest.fixture(scope="module")
def fields(tmp_path_factory):
    return build(tmp_path_factory.mktemp("fields") / "c", FIELDS)


@pytest.fixture(scope="module")
def facets(tmp_path_factory):
    return build(tmp_path_factory.mktemp("facets") / "c", FACETS)


def plan_dims(res):
    return {d["dim"]: d["terms"] for d in res.diagnostics["plan"]["dimensions"]}


def test_fields_route_as_one_text_and_are_never_gated(fields):
    res = fields.search(SearchRequest(query="sorting algorithms external storage", limit=10))
    assert plan_dims(res) == {WHOLE: ["sorting", "algorithms", "external", "storage"]}
    assert res.diagnostics["gate"]["rule"] == "none"
    # p4 has no abstract, p5 no "algorithms": both are found
    assert {"p4", "p5"} <= set(res.uids)


def test_facets_are_routed_and_gated(facets):
    res = facets.search(SearchRequest(query="sorting algorithms external storage", limit=10))
    dims = plan_dims(res)
    assert set(dims) == {"title", "text"}
    assert res.diagnostics["gate"]["rule"] == "strict_and"
    # the facet design demands evidence in both: p5's title has neither "algorithms" nor
    # "storage", so the strict AND rejects it (the fields design finds it)
    assert "p5" not in res.uids


def test_an_explicit_field_route_still_holds(fields):
    res = fields.search(SearchRequest(query="title:sorting", limit=10))
    assert plan_dims(res) == {"title": ["sorting"]}
    assert res.uids[0] == "p4"  # the title lens and the anchors agree on it
    assert any(lens["name"] == "bm25:title" for lens in res.diagnostics["lenses"])


def test_text_unit_statistics_count_a_node_once():
    b = StatsBuilder(FIELDS)
    b.add(Node("a", dims={"title": "sorting", "text": "sorting again"}))
    b.add(Node("b", dims={"title": "merging"}))
    stats = b.apply(None)
    assert stats.dim(WHOLE).n_docs == 2
    assert stats.dim(WHOLE).df("sort") == 1
    assert stats.dim("title").df("sort") == 1 and stats.dim("text").df("sort") == 1


def test_text_unit_statistics_fall_back_to_field_maxima_for_older_roots():
    b = StatsBuilder(FIELDS)
    b.add(Node("a", dims={"title": "sorting", "text": "sorting merging"}))
    stats = b.apply(None)
    del stats.dims[WHOLE]
    stats.fields = ("title", "text")
    whole = stats.dim(WHOLE)
    assert whole.n_docs == 1 and whole.df("sort") == 1 and whole.df("merg") == 1


def test_schema_facet_flag_round_trips_and_keeps_old_hashes():
    plain = Schema.from_dict({"dimensions": {"title": {"type": "semantic"}}})
    assert plain.fields == ["title"] and plain.facets == ["kind"]
    assert "facet" not in plain.to_dict()["dimensions"]["title"]
    faceted = Schema.from_dict({"dimensions": {"colour": {"type": "semantic", "facet": True}}})
    assert faceted.facets == ["colour", "kind"] and faceted.fields == []
    assert Schema.from_dict(faceted.to_dict()) == faceted
    assert faceted.hash() != Schema.from_dict({"dimensions": {"colour": {}}}).hash()


MIXED = Schema(
    (
        Dimension("text", "semantic"),
        Dimension("lang", "semantic", facet=True),
        Dimension("ui", "semantic", facet=True),
    )
)
PACKAGES = {
    "viewer-py-gtk": ("image viewer for photos", "python", "gtk"),
    "viewer-perl-tty": ("image viewer in the terminal", "perl", "terminal"),
    "mail-py-tty": ("email client", "python", "terminal"),
    "editor-py-tty": ("text editor", "python", "terminal"),
    "game-lisp-gtk": ("puzzle game", "lisp", "gtk"),
    "chat-lisp-tty": ("chat client", "lisp", "terminal"),
    "clock-ruby-gtk": ("desktop clock", "ruby", "gtk"),
    "calc-ruby-tty": ("calculator", "ruby", "terminal"),
}


def build_mixed(path, encoder):
    kw = {} if encoder == "default" else {"encoder": None}
    col = Collection.create(path, MIXED, settings=Settings(lexicon="none"), **kw)
    col.add(
        Node(uid, dims={"text": t, "lang": lang, "ui": ui})
        for uid, (t, lang, ui) in PACKAGES.items()
    )
    col.publish()
    return col


def test_the_text_unit_is_never_the_one_forgiven(tmp_path):
    col = build_mixed(tmp_path / "c", None)
    res = col.search(SearchRequest(query="python terminal email", limit=10))
    assert set(plan_dims(res)) == {WHOLE, "lang", "ui"}
    assert res.diagnostics["gate"]["rule"] == "n_minus_1"
    # editor-py-tty passes both facets but not the topic: N-1 must not forgive the text
    assert "editor-py-tty" not in res.uids
    assert res.uids[0] == "mail-py-tty"


def test_text_and_facets_with_dense_evidence(tmp_path):
    """The gate's dense evidence reads the text unit's vectors too (it is no schema
    dimension): a query routed to the text and a facet runs with an encoder."""
    col = build_mixed(tmp_path / "c", "default")
    res = col.search(SearchRequest(query="python image viewer", limit=10))
    assert set(plan_dims(res)) == {WHOLE, "lang"}
    assert WHOLE in res.diagnostics["gate"]["dense_threshold"]
    assert res.uids[0] == "viewer-py-gtk"
