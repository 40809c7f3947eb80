"""Graph rerank: superseded nodes give way to successors, linked candidates gain a bounded
boost, nothing unrelated is injected, and without edges nothing changes."""

from __future__ import annotations

import time

import pytest

from cogitave import Collection, Edge, Node, SearchRequest
from cogitave.config import Rerank, Settings
from cogitave.query import rerank
from cogitave.schema import Dimension, Schema

SCHEMA = Schema((Dimension("title", "semantic"), Dimension("body", "semantic")))


def page(uid, title, body, *edges):
    return Node(
        uid=uid,
        kind="page",
        dims={"title": title, "body": body},
        edges=tuple(Edge(lab, dst) for lab, dst in edges),
    )


def build(path, nodes, rerank=True):
    col = Collection.create(
        path, SCHEMA, encoder=None, settings=Settings(lexicon="none", rerank=Rerank(enabled=rerank))
    )
    col.add(nodes)
    col.publish()
    return col


NODES = [
    page(
        "install-v1",
        "Install guide",
        "install the server with the old installer",
        ("supersededBy", "install-v2"),
    ),
    page("install-v2", "Setup handbook", "current procedure for a new machine"),
    page("tune-a", "Tuning notes", "tuning the cache size"),
    page("tune-b", "Tuning notes", "tuning the cache size", ("xref", "tune-c")),
    page("tune-c", "Cache tuning notes", "cache tuning reference"),
    page("unrelated", "Gardening", "roses and tulips", ("xref", "tune-b")),
]


@pytest.fixture(scope="module")
def col(tmp_path_factory):
    return build(tmp_path_factory.mktemp("g") / "c", NODES)


def test_superseded_node_gives_way_to_its_successor(col):
    res = col.search(SearchRequest(query="install guide"))
    assert res.uids[:2] == ["install-v2", "install-v1"]
    moves = {m["uid"]: m for m in res.diagnostics["rerank"]["moves"]}
    assert "successor of install-v1" in moves["install-v2"]["why"]
    assert res.diagnostics["rerank"]["injected"] == 1


def test_linked_candidates_gain_and_nothing_unrelated_enters(col):
    res = col.search(SearchRequest(query="tuning notes cache"))
    # tune-a and tune-b tie on text (the tie goes to tune-a by uid); tune-b links to
    # tune-c, another candidate, and the bounded support lifts it over tune-a
    assert res.uids.index("tune-b") < res.uids.index("tune-a")
    assert "unrelated" not in res.uids  # linked to tune-b, but no lens found it
    plain = build_plain(col).search(SearchRequest(query="tuning notes cache")).uids
    assert plain.index("tune-a") < plain.index("tune-b")


def build_plain(col):
    return build(col.store.path.parent / "plain", NODES, rerank=False)


def test_no_edges_is_an_exact_no_op(tmp_path):
    bare = [Node(n.uid, n.kind, n.dims) for n in NODES]
    on = build(tmp_path / "on", bare)
    off = build(tmp_path / "off", bare, rerank=False)
    for q in ("install guide", "tuning notes cache", "cache"):
        a = on.search(SearchRequest(query=q))
        assert a.diagnostics["rerank"]["applied"] is False
        assert [(h.uid, h.score) for h in a.results] == [
            (h.uid, h.score) for h in off.search(SearchRequest(query=q)).results
        ]


def _ranking(col, q):
    res = col.search(SearchRequest(query=q))
    return [(h.uid, h.score) for h in res.results], res.diagnostics["rerank"]


def _jumping_clock(monkeypatch):
    """Every read of the clocks a ranking could use is one second after the previous."""
    ticks = iter(range(1, 10**9))
    for name in ("monotonic", "perf_counter"):
        monkeypatch.setattr(time, name, lambda: float(next(ticks)))


@pytest.mark.parametrize("q", ["install guide", "tuning notes cache"])
def test_the_rerank_reads_no_clock(col, q, monkeypatch):
    quiet, info = _ranking(col, q)
    assert info["applied"] and info["moves"] and not info["truncated"]
    _jumping_clock(monkeypatch)  # a second passes between any two clock reads
    assert _ranking(col, q) == (quiet, info)


def test_the_work_cap_cuts_the_same_place_every_time(col, monkeypatch):
    full, info = _ranking(col, "tuning notes cache")
    assert info["expansions"] == 3 and not info["truncated"]  # tune-c <- tune-b <- unrelated
    monkeypatch.setattr(rerank, "EXPANSIONS_PER_SEED", 0)
    capped = _ranking(col, "tuning notes cache")
    ranking, info = capped
    assert info["truncated"] and info["expansions"] == info["max_expansions"] == 0
    assert not info["moves"] and ranking != full  # no support: tune-a keeps its tie-break
    _jumping_clock(monkeypatch)
    assert [_ranking(col, "tuning notes cache") for _ in range(3)] == [capped] * 3


def test_a_search_never_pauses_the_garbage_collector(col, monkeypatch):
    """The collector is process-wide: the rerank's walks (bounded by work) leave it running
    for every other thread."""
    import gc

    from cogitave.graph import traverse as traverse_module

    seen: list[bool] = []
    walk = traverse_module._walk_nodes

    def noting(*a, **kw):
        seen.append(gc.isenabled())
        return walk(*a, **kw)

    monkeypatch.setattr(traverse_module, "_walk_nodes", noting)
    col.search(SearchRequest(query="install guide"))
    assert seen and all(seen)
