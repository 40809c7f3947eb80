"""Filters run inside every leg: a filtered search fills its page whenever enough nodes match.

A filter applied after fusion starves the dense leg: of its top 100 over the whole collection
only the few that pass would remain. Here 12 of 400 nodes are in a rare language and under a
narrow path; every leg must find them, whatever the query.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from cogitave import Collection, Node, Schema, SearchRequest
from cogitave.distributed import hashed
from cogitave.schema import Dimension
from tests.conftest import make_nodes

SCHEMA_L = Schema(
    (
        Dimension("title", "semantic"),
        Dimension("body", "semantic"),
        Dimension("language", "exact"),
    )
)
RARE = 12


@pytest.fixture(scope="module")
def col(tmp_path_factory: pytest.TempPathFactory) -> Collection:
    nodes = []
    for i, n in enumerate(make_nodes(400, seed=3)):
        rare = i % (400 // RARE) == 0 and i // (400 // RARE) < RARE
        nodes.append(
            Node(
                uid=n.uid,
                kind="section" if rare else "page",
                dims={**n.dims, "language": "rust" if rare else "python"},
                meta={"path": f"{'rare' if rare else 'docs'}/{n.uid}.md"},
            )
        )
    c = Collection.create(
        Path(tmp_path_factory.mktemp("where")) / "c", SCHEMA_L, encoder=hashed.register()
    )
    c.add(nodes)
    c.publish()
    return c


@pytest.mark.parametrize("mode", ["planned", "hybrid", "dense", "bm25"])
@pytest.mark.parametrize(
    "where",
    [
        {"filters": {"language": "rust"}},
        {"filters": {"kind": "section"}},
        {"path_prefix": "rare/"},
        {"path_prefix": "/rare/", "filters": {"language": ["rust", "go"]}},
    ],
)
def test_a_filtered_search_returns_every_match(col: Collection, mode: str, where: dict) -> None:
    # "alpha" is in most nodes, so BM25 alone finds the rare ones too; the dense legs and the
    # planner's lenses must as well
    res = col.search(SearchRequest(query="alpha river", limit=RARE, mode=mode, **where))
    assert len(res.results) == RARE, res.diagnostics["lenses"]
    assert {col.get(h.uid).dims["language"] for h in res.results} == {"rust"}
    assert all(h.path.startswith("rare/") for h in res.results)
    for lens in res.diagnostics["lenses"]:  # every leg saw only allowed nodes
        assert lens["hits"] <= RARE


@pytest.mark.parametrize("mode", ["planned", "hybrid", "dense"])
def test_the_dense_leg_alone_fills_the_page(col: Collection, mode: str) -> None:
    # no word of this query is in the corpus: only the dense legs can answer
    res = col.search(
        SearchRequest(query="qqzx wvvy", limit=5, mode=mode, filters={"language": "rust"})
    )
    assert len(res.results) == 5
    assert {col.get(h.uid).dims["language"] for h in res.results} == {"rust"}


def test_a_filter_that_matches_nothing_answers_nothing(col: Collection) -> None:
    for where in ({"filters": {"language": "cobol"}}, {"path_prefix": "nowhere/"}):
        res = col.search(SearchRequest(query="alpha", limit=10, **where))
        assert res.results == ()


def test_diagnostics_say_where_filters_ran(col: Collection) -> None:
    res = col.search(
        SearchRequest(query="alpha", filters={"language": "Rust"}, path_prefix="rare/")
    )
    f = res.diagnostics["filters"]
    assert f["filters"] == {"language": ["rust"]} and f["path_prefix"] == "rare/"
    assert f["applied"] == "inside every lens" and f["removed"] == 0
