"""Page-aware ranking: grouping, hidden kinds, release-notes demotion, globs."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from cogitave import Collection, Node, Schema, SearchRequest
from cogitave.config import Docs, Settings
from cogitave.errors import QueryError, SchemaError
from cogitave.nodes import NodeFacts
from cogitave.query.engine import where_of
from cogitave.query.pages import (
    PageFacts,
    PageOptions,
    arrange,
    asks_for_history,
    is_blog_post,
    is_release_notes,
)
from cogitave.schema import Dimension
from cogitave.store.nodes import NodeTable
from cogitave.store.snapshot import Snapshot
from tests.helpers import docs_collection

FACTS = {
    1: PageFacts("cors#use-corsmiddleware", "section", "docs/cors.md", "/cors/#use", "Use it"),
    2: PageFacts("middleware", "page", "docs/middleware.md", "/middleware/", "Middleware"),
    3: PageFacts("cors", "page", "docs/cors.md", "/cors/", "CORS"),
    4: PageFacts("nav:learn", "nav_group", "", "", "Learn"),
    5: PageFacts("release-notes#0-100", "section", "docs/release-notes.md", "/release-notes/"),
    6: PageFacts("cors#code-1", "code_sample", "docs/cors.md", "", "code"),
    7: PageFacts("src:app.py", "source_file", "docs_src/app.py"),
    8: PageFacts("advanced/settings", "page", "docs/advanced/settings.md", "/advanced/settings/"),
}


def run(order: list[int], **opts) -> tuple[list[str], list[float], dict, dict]:
    nids = np.asarray(order, np.uint64)
    scores = np.linspace(1.0, 0.8, len(order))
    r = arrange(nids, scores, FACTS.__getitem__, PageOptions(**opts))
    return [FACTS[int(n)].uid for n in r.nids], r.scores.tolist(), dict(r.groups), dict(r.info)


def test_grouping_keeps_one_entry_per_page_best_first():
    uids, scores, groups, info = run([1, 2, 3, 6, 8], group_by_page=True)
    assert uids == ["cors#use-corsmiddleware", "middleware", "advanced/settings"]
    assert groups == {"cors#use-corsmiddleware": ("cors", "cors#code-1")}
    assert scores == sorted(scores, reverse=True)
    assert (info["pages"], info["folded"]) == (3, 2)


def test_without_grouping_every_node_stays():
    uids, _, groups, info = run([1, 2, 3, 6], group_by_page=False)
    assert uids == ["cors#use-corsmiddleware", "middleware", "cors", "cors#code-1"]
    assert groups == {} and "pages" not in info


def test_nav_and_source_nodes_do_not_compete_unless_asked():
    uids, *_, info = run([4, 7, 2])
    assert uids == ["middleware"]
    assert info["hidden_kinds"] == {"nav_group": 1, "source_file": 1}
    uids, *_ = run([4, 7, 2], hidden_kinds=frozenset())
    assert uids == ["nav:learn", "src:app.py", "middleware"]


def test_release_notes_are_demoted_and_the_rest_moves_up():
    uids, scores, _, info = run([5, 2, 8])
    assert uids == ["middleware", "advanced/settings", "release-notes#0-100"]
    assert scores[-1] == pytest.approx(1.0 * 0.5)
    assert info["demoted"] == {"count": 1, "factor": 0.5, "uids": ["release-notes#0-100"]}
    uids, *_ = run([5, 2, 8], demote_release_notes=False)
    assert uids[0] == "release-notes#0-100"


@pytest.mark.parametrize(
    "facts, notes",
    [
        (PageFacts("changelog", "page", "CHANGELOG.md"), True),
        (PageFacts("x", "page", "docs/releases/v2.md"), True),
        (PageFacts("whats-new", "page", url="https://x.org/whats-new/"), True),
        (PageFacts("x", "page", title="Release Notes"), True),
        (PageFacts("x", "page", title="What's new in 3.0"), True),
        (PageFacts("history-design-future", "page", "docs/history-design-future.md"), False),
        (PageFacts("x#changelog", "section", "docs/x.md", title="Changelog"), False),
        (
            PageFacts("tutorial/changes-to-bodies", "page", "docs/tutorial/changes-to-bodies.md"),
            False,
        ),
    ],
)
def test_release_notes_detection(facts, notes):
    assert is_release_notes(facts) is notes


@pytest.mark.parametrize(
    "facts, blog",
    [
        (
            PageFacts("blog/announcing-vite8-beta", "page", "docs/blog/announcing-vite8-beta.md"),
            True,
        ),
        (PageFacts("x", "page", url="https://react.dev/blog/2025/10/01/react-19-2"), True),
        (PageFacts("x", "page", "src/content/community/2024/03/15/meetup.md"), True),
        (PageFacts("x", "page", "_posts/2023-05-02-new-router.md"), True),
        (PageFacts("x", "page", title="Announcing Vite 8 Beta"), True),
        (PageFacts("guide/features", "page", "docs/guide/features.md", title="Features"), False),
        (PageFacts("api/posts", "page", "docs/api/posts.md", title="Posts"), False),
        (PageFacts("x#announcing", "section", "docs/x.md", title="Announcing"), False),
        (PageFacts("reference/2024", "page", "docs/reference/2024.md"), False),
    ],
)
def test_blog_post_detection(facts, blog):
    assert is_blog_post(facts) is blog


@pytest.mark.parametrize(
    "query, asks",
    [
        ("announcing vite 8", True),
        ("react blog", True),
        ("what's new in react 19", True),
        ("vite 6 release notes", True),
        ("changelog of 0.110", True),
        ("useEffect cleanup", False),
        ("post json body", False),
        ("release a database connection", False),
    ],
)
def test_a_query_that_asks_for_the_history_is_not_demoted(query, asks):
    assert asks_for_history(query) is asks
    opts = PageOptions.of(SearchRequest(query=query), Docs())
    assert opts.demote_release_notes is not asks


def test_blog_posts_are_demoted_like_release_notes():
    facts = {
        1: PageFacts("blog/announcing-vite8", "page", "blog/announcing-vite8.md", "/blog/x"),
        2: PageFacts("guide/build", "page", "guide/build.md", "/guide/build", "Building"),
    }
    r = arrange(np.asarray([1, 2], np.uint64), np.asarray([1.0, 0.9]), facts.__getitem__,
                PageOptions())  # fmt: skip
    assert [facts[int(n)].uid for n in r.nids] == ["guide/build", "blog/announcing-vite8"]


def test_exclude_and_demote_globs():
    uids, *_, info = run([8, 1, 2], exclude=("advanced/*",))
    assert uids == ["cors#use-corsmiddleware", "middleware"] and info["excluded"] == 1
    uids, *_ = run([1, 2, 8], demote=("docs/cors.md",))
    assert uids == ["middleware", "advanced/settings", "cors#use-corsmiddleware"]
    # a leading slash in a glob is the URL form of the same path
    uids, *_ = run([2, 8], exclude=("/middleware/*",))
    assert uids == ["advanced/settings"]


def test_options_from_request_and_settings():
    docs = Docs()
    o = PageOptions.of(SearchRequest(query="x"), docs)
    assert not o.group_by_page and o.hidden_kinds == {"nav_group", "source_file"}
    on = PageOptions.of(SearchRequest(query="x", group_by_page=True), docs)
    assert on.group_by_page
    assert PageOptions.of(SearchRequest(query="x"), Docs(group_by_page=True)).group_by_page
    off = PageOptions.of(SearchRequest(query="x", group_by_page=False), Docs(group_by_page=True))
    assert not off.group_by_page
    asked = PageOptions.of(SearchRequest(query="x", include_kinds=["nav_group"]), docs)
    assert asked.hidden_kinds == {"source_file"}
    by_filter = SearchRequest(query="x", filters={"kind": "source_file"})
    assert PageOptions.of(by_filter, docs).hidden_kinds == frozenset()
    plain = PageOptions.of(SearchRequest(query="x", demote=False), Docs(demote=("blog/*",)))
    assert (plain.demote, plain.demote_release_notes) == ((), False)
    absolute = SearchRequest(query="x", path_prefix="https://docs.example.org/guides/")
    where = where_of(absolute)
    assert where is not None and where.path_prefix == "guides/"


def test_request_validation():
    for bad in (
        {"group_by_page": "yes"},
        {"demote": 1},
        {"path_prefix": 3},
        {"include_kinds": "page"},
        {"include_kinds": 5},
    ):
        with pytest.raises(QueryError):
            SearchRequest.from_dict({"query": "x", **bad})
    req = SearchRequest.from_dict({"query": "x", "include_kinds": ["nav_group"]})
    assert req.include_kinds == ("nav_group",)


def test_docs_settings_from_toml_table():
    s = Settings.from_dict({"docs": {"exclude": ["drafts/*"], "demote_factor": 0.25}})
    assert s.docs.exclude == ("drafts/*",) and s.docs.demote_factor == 0.25
    assert Settings.from_dict(s.to_dict()) == s
    with pytest.raises(SchemaError, match="list of strings"):
        Settings.from_dict({"docs": {"demote": "blog/*"}})
    with pytest.raises(SchemaError, match="between 0 and 1"):
        Settings.from_dict({"docs": {"demote_factor": 2.0}})


def _docs_nodes() -> list[Node]:
    def page(uid: str, title: str, body: str, path: str, kind: str = "page") -> Node:
        meta = {"path": path, "url": "/" + uid.replace("#", "/#") + "/"}
        return Node(uid=uid, kind=kind, dims={"title": title, "body": body}, meta=meta)

    return [
        page("cors", "CORS", "cross origin requests from a browser", "docs/cors.md"),
        page(
            "cors#origins",
            "Origins",
            "allow origins for cross origin requests",
            "docs/cors.md",
            "section",
        ),
        page(
            "cors#wildcards",
            "Wildcards",
            "cross origin wildcard origins",
            "docs/cors.md",
            "section",
        ),
        page("middleware", "Middleware", "a middleware for cross origin requests", "docs/mw.md"),
        page(
            "release-notes", "Release Notes", "cross origin requests fixed", "docs/release-notes.md"
        ),
        Node(uid="nav:learn", kind="nav_group", dims={"title": "Learn", "body": "cross origin"}),
    ]


@pytest.fixture(scope="module")
def docs_col(tmp_path_factory: pytest.TempPathFactory) -> Collection:
    schema = Schema((Dimension("title", "semantic"), Dimension("body", "semantic")))
    col = Collection.create(tmp_path_factory.mktemp("pages") / "c", schema, encoder=None)
    col.add(_docs_nodes())
    col.publish()
    return col


def test_engine_groups_by_page_when_asked(docs_col: Collection):
    res = docs_col.search(
        SearchRequest(query="cross origin requests", mode="bm25", group_by_page=True)
    )
    uids = res.uids
    pages = [u.split("#")[0] for u in uids]
    assert len(pages) == len(set(pages))
    assert "nav:learn" not in uids
    assert uids[-1] == "release-notes"
    cors = next(h for h in res.results if h.uid.startswith("cors"))
    assert set(cors.group) | {cors.uid} == {"cors", "cors#origins", "cors#wildcards"}
    d = res.diagnostics["pages"]
    assert d["grouped"] and d["hidden_kinds"] == {"nav_group": 1} and d["demoted"]["count"] == 1
    assert cors.to_dict()["group"] == list(cors.group)


def test_engine_default_hides_nav_and_demotes_but_does_not_group(docs_col: Collection):
    res = docs_col.search(SearchRequest(query="cross origin requests", mode="bm25"))
    assert "nav:learn" not in res.uids and res.uids[-1] == "release-notes"
    assert {"cors", "cors#origins", "cors#wildcards"} <= set(res.uids)
    assert "group" not in res.results[0].to_dict()
    assert not res.diagnostics["pages"]["grouped"]


def test_engine_page_options_off(docs_col: Collection):
    req = SearchRequest(
        query="cross origin requests",
        mode="bm25",
        group_by_page=False,
        include_kinds=("nav_group",),
        demote=False,
    )
    res = docs_col.search(req)
    assert len(res.uids) == len(_docs_nodes())
    assert all(h.group == () for h in res.results)
    prefixed = docs_col.search(
        SearchRequest(query="cross origin requests", mode="bm25", path_prefix="docs/cors")
    )
    assert {u.split("#")[0] for u in prefixed.uids} == {"cors"}


def test_grouped_search_reads_facts_not_records(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The pages stage asks the port for facts in one call; only the hits shown are read
    whole."""
    col = docs_collection(tmp_path_factory)
    col = Collection.open(col.store.path)  # a fresh port: nothing memoised
    calls: list[int] = []
    real = Snapshot.node_facts

    def counted(self: Snapshot, ids: Any) -> list[NodeFacts]:
        calls.append(len(ids))
        return real(self, ids)

    monkeypatch.setattr(Snapshot, "node_facts", counted)
    read: list[int] = []
    record = NodeTable.record
    monkeypatch.setattr(
        NodeTable, "record", lambda self, nid: read.append(nid) or record(self, nid)
    )
    resp = col.search(SearchRequest(query="install", mode="bm25", group_by_page=True, limit=3))
    assert resp.results and len(calls) == 1 and calls[0] > len(resp.results)
    assert len(set(read)) <= len(resp.results) + 3  # presentation (and a parent page) only
