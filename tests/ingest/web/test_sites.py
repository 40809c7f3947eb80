"""Sites built by the real generators at test time (Sphinx; MkDocs with Material), served
locally and crawled: the graph matches the one their sources give (pages, sections at the same
anchors, code languages, api objects by dotted name, public URLs, reading order)."""

from __future__ import annotations

import pytest

from cogitave.ingest.docs import read_docs
from cogitave.ingest.web.build import read_crawl
from cogitave.ingest.web.crawl import crawl_site
from tests.ingest.helpers import assert_graph_closed, edges_of
from tests.ingest.web.helpers import mkdocs_site, options, serve, sphinx_site


def kinds(nodes: list) -> dict[str, set[str]]:  # type: ignore[type-arg]
    out: dict[str, set[str]] = {}
    for n in nodes:
        out.setdefault(n.kind, set()).add(n.uid)
    return out


def test_a_sphinx_site(tmp_path_factory: pytest.TempPathFactory) -> None:
    src, html = sphinx_site(tmp_path_factory)
    with serve(folder=html) as s:
        crawl = crawl_site(s.url + "/", options(base_url="https://widgets.example/"))
    batch = read_crawl(crawl)
    assert_graph_closed(batch)
    source = read_docs(src, base_url="https://widgets.example")
    got, want = kinds(batch.nodes), kinds(source.nodes)
    # the start page is a toctree and a sentence: navigation, not an answer
    assert got["page"] == want["page"] - {"index"}
    assert got["api"] == want["api"] == {"widgets", "widgets.make", "widgets.Widget",
                                         "widgets.Widget.grow"}  # fmt: skip
    assert got["section"] == want["section"]
    assert crawl.inventory is not None and crawl.inventory.project == "Widgets"
    nodes = {n.uid: n for n in batch.nodes}
    made = nodes["widgets.make"]
    assert made.meta["objtype"] == "function"
    assert made.meta["url"] == "https://widgets.example/reference.html#widgets.make"
    assert "make(size, *, colour" in made.dims["code"]
    assert edges_of(made, "partOf") == ["reference#making-widgets"]
    usage = nodes["guide/usage"]
    assert "widgets.make" in edges_of(usage, "xref")
    assert edges_of(usage, "dependsOn") == ["guide/install"]
    code = [n for n in batch.nodes if n.kind == "code_sample"]
    assert {n.dims["language"] for n in code} == {"bash", "python"}
    assert crawl.report.skipped["navigation"] == [s.url + "/"]


def test_a_mkdocs_material_site(tmp_path_factory: pytest.TempPathFactory) -> None:
    src, html = mkdocs_site(tmp_path_factory)
    with serve(folder=html) as s:
        crawl = crawl_site(s.url + "/", options(base_url="https://gadgets.example.org/"))
    batch = read_crawl(crawl)
    assert_graph_closed(batch)
    source = read_docs(src / "mkdocs.yml")
    nodes = {n.uid: n for n in batch.nodes}
    src_nodes = {n.uid: n for n in source.nodes}
    pages = {n.meta["url"] for n in batch.nodes if n.kind == "page"}
    assert pages == {n.meta["url"] for n in source.nodes if n.kind == "page"}
    sections = {n.meta["url"] for n in batch.nodes if n.kind == "section"}
    assert sections == {n.meta["url"] for n in source.nodes if n.kind == "section"}
    first = nodes["tutorial/first-gadget"]
    assert first.meta["breadcrumb"] == src_nodes["tutorial/first-gadget"].meta["breadcrumb"]
    assert first.meta["breadcrumb"] == ["Tutorial", "Your first gadget"]
    assert edges_of(first, "dependsOn") == ["tutorial/setup"]
    assert "tutorial/setup#check-the-install" in edges_of(nodes["tutorial/first-gadget"], "xref")
    assembled = nodes["tutorial/first-gadget#assemble"]
    assert "Gadget(parts=3)" in (assembled.content or "")
    for n in batch.nodes:  # the theme's chrome is not content
        for chrome in ("Made with", "Material for MkDocs", "Back to top", "Skip to content"):
            assert chrome not in (n.content or ""), (n.uid, chrome)
