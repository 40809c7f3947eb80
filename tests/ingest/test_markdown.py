"""Markdown docs trees -> nodes + edges: MkDocs, Hugo and plain folders, built in tmp_path."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from cogitave.errors import IngestError
from cogitave.ingest.docs import FrontMatterMapping, builder, read_docs
from cogitave.ingest.docs.parse import ParsedPage, parse_page, slugify_github, slugify_toc
from cogitave.ingest.docs.urls import page_url
from cogitave.schema import EDGE_LABELS, Dimension, Schema
from tests.conftest import data_dir
from tests.ingest.helpers import assert_graph_closed, by_uid, edges_of, write

FENCE = "```"


# -- MkDocs ---------------------------------------------------------------------------------

MKDOCS_YML = """
site_name: Demo
site_url: https://demo.example.com/
nav:
  - Home: index.md
  - Tutorial:
      - tutorial/index.md
      - tutorial/first.md
      - Second page: tutorial/second.md
      - Advanced:
          - tutorial/advanced/deep.md
  - "":
      - guide/index.md
      - guide/a.md
  - missing.md
  - https://example.com/external
plugins:
  - search
  - redirects:
      redirect_maps:
        old/first.md: tutorial/first.md
markdown_extensions:
  pymdownx.superfences:
    custom_fences:
      - name: mermaid
        format: !!python/name:pymdownx.superfences.fence_code_format ''
extra:
  alternate:
    - link: /
    - link: /de/
"""

FIRST = f"""
---
title: First Steps
description: Start here.
keywords: [start, basics]
skills: [Path Params]
audience: Beginner
products: FastAPI
learning_path: Onboarding
---
# First steps {{ #first }}

Intro text before sections.

## Install it {{ #install-it }}

Run the installer. See [second](second.md#query-and-more) and [bad anchor](second.md#nope).

{FENCE}Python hl_lines="1"
print("hi")
{FENCE}

### Details

More detail text.

{FENCE}
plain block
{FENCE}

## Include

{{* ../../src_code/app.py hl[1] *}}

{{* ../../src_code/nope.py *}}

{FENCE}toml
{{!> src_code/conf.toml !}}
{FENCE}

## Links

[broken](nothere.md), [ref link][sec], [undefined][nope], [abs](/tutorial/second/),
[site](https://demo.example.com/guide/a/), [ext](https://python.org), [old](/old/first/),
[img](../img/x.png), [lang](/de/tutorial/first/).

[sec]: ../guide/a.md
"""

SECOND = """
---
title: Second
prerequisites: [first.md]
supersededBy: /guide/a/
---
# Second

## Query and more

Text [back](first.md#install-it) and [same page](#query-and-more), [dup](#duplicate_1).

## Duplicate

## Duplicate

## Ünïcode Heading!
"""


@pytest.fixture
def mkdocs_tree(tmp_path: Path) -> Path:
    root = tmp_path / "site"
    write(root, "mkdocs.yml", MKDOCS_YML)
    write(root, "docs/index.md", "# Home\n\nWelcome, read [first](tutorial/first.md).\n")
    write(root, "docs/tutorial/index.md", "# Tutorial\n\nThe tutorial.\n")
    write(root, "docs/tutorial/first.md", FIRST)
    write(root, "docs/tutorial/second.md", SECOND)
    write(
        root,
        "docs/tutorial/advanced/deep.md",
        "# Deep\n\n## Deeper\n\nd text\n\n#### Level four\n\nfour\n\n##### Five\n\nfive text\n",
    )
    write(root, "docs/guide/index.md", "# Guide\n\nGuide intro.\n")
    write(root, "docs/guide/a.md", "---\ntitle: [unclosed\n---\n# A\n\nBody of a.\n")
    write(root, "docs/orphan.md", "# Orphan\n\nNot in nav.\n")
    write(root, "docs/binary.md", b"\xff\xfe\x00not utf-8 \xc3\x28")
    os.symlink(root / "docs" / "gone.txt", root / "docs" / "dead.md")
    write(root, "src_code/app.py", "from fastapi import FastAPI\n\napp = FastAPI()\n")
    write(root, "src_code/conf.toml", "[tool]\nname = 'x'\n")
    return root


def test_mkdocs_pages_sections_and_anchors(mkdocs_tree: Path) -> None:
    batch = read_docs(mkdocs_tree)
    nodes = by_uid(batch)
    assert batch.stats["shape"] == "mkdocs"
    page = nodes["tutorial/first"]
    assert page.kind == "page"
    assert page.dims["title"] == "First Steps"
    assert page.dims["body"] == "Intro text before sections."
    assert page.dims["description"] == "Start here."
    assert page.dims["keywords"] == "start, basics"
    # site_url makes URLs absolute; content is the Markdown without front matter.
    assert page.meta["url"] == "https://demo.example.com/tutorial/first/"
    assert page.meta["path"] == "docs/tutorial/first.md"
    assert page.content is not None and page.content.startswith(
        "# First steps { #first }\n\nIntro text"
    )
    # Custom `{ #id }` anchors, nested headings, h4 sections, h5 folded into its section.
    install = nodes["tutorial/first#install-it"]
    assert install.kind == "section" and install.dims["title"] == "Install it"
    assert "More detail text." in str(install.dims["body"])  # nested section text included
    assert "print" not in str(install.dims["body"])  # code is not prose
    assert edges_of(install, "partOf") == ["tutorial/first"]
    assert edges_of(nodes["tutorial/first#details"], "partOf") == ["tutorial/first#install-it"]
    assert install.meta["url"] == "https://demo.example.com/tutorial/first/#install-it"
    assert install.content is not None and install.content.startswith("## Install it")
    assert edges_of(nodes["tutorial/advanced/deep#level-four"], "partOf") == [
        "tutorial/advanced/deep#deeper"
    ]
    assert "five text" in str(nodes["tutorial/advanced/deep#level-four"].dims["body"])
    assert "tutorial/advanced/deep#five" not in nodes
    # Python-Markdown toc slugs: duplicates get _1, non-ASCII folded.
    assert {"tutorial/second#duplicate", "tutorial/second#duplicate_1"} <= nodes.keys()
    assert "tutorial/second#unicode-heading" in nodes
    assert_graph_closed(batch)


def test_mkdocs_code_samples_and_includes(mkdocs_tree: Path) -> None:
    batch = read_docs(mkdocs_tree)
    nodes = by_uid(batch)
    c1 = nodes["tutorial/first#code-1"]
    assert c1.kind == "code_sample"
    assert c1.dims == {"code": 'print("hi")\n', "title": "Install it", "language": "python"}
    assert edges_of(c1, "partOf") == ["tutorial/first#install-it"]
    assert "tutorial/first#code-1" in edges_of(nodes["tutorial/first#install-it"], "implementedBy")
    c2 = nodes["tutorial/first#code-2"]
    assert c2.dims["language"] == "text" and c2.dims["title"] == "Details"
    # `{* path *}` include resolved from the page's folder -> source_file + derivedFrom.
    c3 = nodes["tutorial/first#code-3"]
    assert c3.dims["language"] == "python" and "FastAPI()" in str(c3.dims["code"])
    assert edges_of(c3, "derivedFrom") == ["src:src_code/app.py"]
    src = nodes["src:src_code/app.py"]
    assert src.kind == "source_file" and src.dims["language"] == "python"
    # The missing include keeps its number (code-4) but makes no node; it is reported.
    assert "tutorial/first#code-4" not in nodes
    assert any("nope.py" in m for m in batch.stats["missing_includes"])
    # `{!> path !}` inside a fence, resolved from the mkdocs.yml folder; the fence language wins.
    c5 = nodes["tutorial/first#code-5"]
    assert c5.dims["language"] == "toml"
    assert edges_of(c5, "derivedFrom") == ["src:src_code/conf.toml"]
    assert nodes["src:src_code/conf.toml"].dims["language"] == "toml"


def test_mkdocs_nav_groups_and_reading_order(mkdocs_tree: Path) -> None:
    batch = read_docs(mkdocs_tree)
    nodes = by_uid(batch)
    tutorial = nodes["nav:tutorial"]
    assert tutorial.kind == "nav_group" and tutorial.dims["title"] == "Tutorial"
    advanced = nodes["nav:tutorial/advanced"]
    assert edges_of(advanced, "partOf") == ["nav:tutorial"]
    # An untitled group takes the title of its index page.
    assert nodes["nav:guide"].dims["title"] == "Guide"
    assert "nav:tutorial" in edges_of(nodes["tutorial/first"], "partOf")
    assert edges_of(nodes["tutorial/advanced/deep"], "partOf") == ["nav:tutorial/advanced"]
    # Reading order: each page depends on the previous page of its group.
    assert edges_of(nodes["tutorial/first"], "dependsOn") == ["tutorial/index"]
    assert "tutorial/first" in edges_of(nodes["tutorial/second"], "dependsOn")
    assert edges_of(nodes["guide/a"], "dependsOn") == ["guide/index"]
    # Not in nav: partOf its nearest folder index page.
    assert edges_of(nodes["orphan"], "partOf") == ["index"]
    assert batch.stats["nav_missing"] == ["missing.md"]
    # Nav titles name pages without a title of their own; redirects become aliases.
    assert nodes["tutorial/first"].meta["aliases"] == ["/old/first/"]


def test_mkdocs_links_resolution_and_report(mkdocs_tree: Path) -> None:
    batch = read_docs(mkdocs_tree)
    nodes = by_uid(batch)
    links_sec = nodes["tutorial/first#links"]
    xrefs = edges_of(links_sec, "xref")
    assert "guide/a" in xrefs  # reference-style link and the site's own absolute URL
    assert "tutorial/second" in xrefs  # site-absolute path
    assert "tutorial/first" not in xrefs  # alias /old/first/ resolves to the page itself
    # Anchor that exists -> the section; anchor that does not -> the page, reported.
    install = nodes["tutorial/first#install-it"]
    assert "tutorial/second#query-and-more" in edges_of(install, "xref")
    assert "tutorial/second" in edges_of(install, "xref")
    assert any("#nope" in m for m in batch.stats["missing_anchors"])
    query = nodes["tutorial/second#query-and-more"]
    assert "tutorial/first#install-it" in edges_of(query, "xref")
    assert "tutorial/second#duplicate_1" in edges_of(query, "xref")
    stats = batch.stats
    unresolved = "\n".join(stats["unresolved"])
    assert "nothere.md" in unresolved and "[nope]" in unresolved
    assert stats["links"]["unresolved"] == 2
    assert stats["unresolved_by_reason"] == {"no page file": 1, "undefined reference": 1}
    assert stats["links"]["external"] == 1 and stats["links"]["outside"] == 1
    assert stats["links"]["asset"] == 1 and stats["links"]["via_alias"] == 1
    assert stats["links"]["missing_anchor"] == 1
    assert 0 < stats["links"]["resolved_share"] < 1
    assert "unresolved links: 2" in batch.report and "nothere.md" in batch.report


def test_mkdocs_broken_input_is_reported_not_fatal(mkdocs_tree: Path) -> None:
    batch = read_docs(mkdocs_tree)
    nodes = by_uid(batch)
    # Bad front matter: the page is still read, its front matter ignored, and it is reported.
    assert nodes["guide/a"].dims["title"] == "A"
    assert any("guide/a.md" in m and "YAML" in m for m in batch.stats["bad_front_matter"])
    # Undecodable and unreadable files are problems of the batch, their pages left out.
    reasons = {p.file: p.reason for p in batch.problems}
    assert "not valid UTF-8" in reasons["docs/binary.md"]
    assert "unreadable" in reasons["docs/dead.md"]
    assert "binary" not in nodes and "dead" not in nodes
    assert batch.stats["unreadable_files_count"] == 2
    assert "unreadable files: 2" in batch.report and "bad front matter: 1" in batch.report


def test_front_matter_entities_and_page_references(mkdocs_tree: Path) -> None:
    batch = read_docs(mkdocs_tree)
    nodes = by_uid(batch)
    first = nodes["tutorial/first"]
    assert edges_of(first, "teachesSkill") == ["skill:path-params"]
    assert edges_of(first, "forRole") == ["role:beginner"]
    assert edges_of(first, "appliesTo") == ["product:fastapi"]
    assert "path:onboarding" in edges_of(first, "partOf")
    for uid, kind, title in (
        ("skill:path-params", "skill", "Path Params"),
        ("role:beginner", "role", "Beginner"),
        ("product:fastapi", "product", "FastAPI"),
        ("path:onboarding", "path", "Onboarding"),
    ):
        assert nodes[uid].kind == kind and nodes[uid].dims["title"] == title
    second = nodes["tutorial/second"]
    assert "tutorial/first" in edges_of(second, "dependsOn")  # prerequisites
    assert edges_of(second, "supersededBy") == ["guide/a"]


def test_every_kind_and_label_and_the_schema(mkdocs_tree: Path) -> None:
    batch = read_docs(mkdocs_tree, Schema((Dimension("team", "exact"),)))
    kinds = {n.kind for n in batch.nodes}
    assert kinds == {
        "page", "section", "code_sample", "source_file", "nav_group",
        "skill", "role", "product", "path",
    }  # fmt: skip
    labels = {e.label for n in batch.nodes for e in n.edges}
    assert labels == set(EDGE_LABELS)
    assert batch.schema is not None
    assert set(batch.schema.semantic) == {"title", "body", "code", "description", "keywords"}
    assert set(batch.schema.exact) == {"team", "language", "kind"}
    assert set(batch.stats["nodes"]) == kinds
    assert set(batch.stats["edges"]) == labels
    assert_graph_closed(batch)


def test_nested_mkdocs_config_is_found(mkdocs_tree: Path) -> None:
    # A repository whose config lives below the folder named (FastAPI: docs/en/mkdocs.yml).
    batch = read_docs(mkdocs_tree.parent)
    assert batch.stats["shape"] == "mkdocs"
    assert "tutorial/first" in by_uid(batch)
    assert by_uid(batch)["tutorial/first"].meta["path"] == "site/docs/tutorial/first.md"


# -- Hugo -----------------------------------------------------------------------------------


@pytest.fixture
def hugo_tree(tmp_path: Path) -> Path:
    root = tmp_path / "hugo"
    write(root, "hugo.toml", "baseURL = 'https://example.org/'\n")
    write(root, "content/_index.md", "---\ntitle: Home\n---\nWelcome [functions](functions/).\n")
    write(
        root,
        "content/functions/_index.md",
        """
        +++
        title = "Functions"
        description = "All functions."
        aliases = ["/layout/functions/"]
        weight = 10
        +++
        Use [foo][foo-ref], {{< ref "functions/Bar.md" >}} and {{% relref "bar#usage-1" %}}.
        Not a link: {{</* ref "nowhere" */>}} and `{{< ref "nowhere" >}}`;
        broken {{< ref "gone.md" >}}.

        [foo-ref]: /functions/foo/
        """,
    )
    write(
        root,
        "content/functions/foo.md",
        f"""
        ---
        title: strings.Foo
        keywords: [strings]
        aliases: [/functions/strings.foo]
        weight: 1
        ---

        {FENCE}go-html-template
        {{{{ strings.Foo "x" }}}}
        {FENCE}

        ## Usage {{#custom-usage}}

        See [bar](Bar.md), [up](../_index.md), [section](/functions/), [old](/layout/functions/).

        `someTerm`
        : A definition term gets an anchor.
        """,
    )
    write(
        root,
        "content/functions/Bar.md",
        """
        ---
        title: Bar
        weight: 2
        ---
        ## Usage

        ## Usage

        [alias link](/functions/strings.foo), [term](foo.md#someterm), [widgets](g),
        [relative page](functions/foo/), [missing](/functions/none/).
        """,
    )
    write(root, "content/glossary/widget.md", "---\ntitle: widget\n---\nA widget.\n")
    return root


def test_hugo_tree(hugo_tree: Path) -> None:
    batch = read_docs(hugo_tree)
    nodes = by_uid(batch)
    assert batch.stats["shape"] == "hugo"
    section = nodes["functions/_index"]
    assert section.meta["url"] == "https://example.org/functions/"  # baseURL of hugo.toml
    assert section.meta["aliases"] == ["/layout/functions/"]
    assert section.dims["description"] == "All functions."  # TOML front matter
    assert edges_of(section, "partOf") == ["_index"]
    foo, bar = nodes["functions/foo"], nodes["functions/Bar"]
    assert bar.meta["url"] == "https://example.org/functions/bar/"  # lower-cased
    assert edges_of(foo, "partOf") == ["functions/_index"]
    assert foo.meta["aliases"] == ["/functions/strings.foo/"]
    assert nodes["functions/foo#code-1"].dims["language"] == "go-html-template"
    assert edges_of(foo, "implementedBy") == ["functions/foo#code-1"]
    assert "functions/foo#custom-usage" in nodes
    # GitHub-style duplicate anchors.
    assert {"functions/Bar#usage", "functions/Bar#usage-1"} <= nodes.keys()
    # Reference-style link, ref and relref shortcodes (with an anchor).
    assert set(edges_of(section, "xref")) == {
        "functions/foo",
        "functions/Bar",
        "functions/Bar#usage-1",
    }
    # Relative .md links, a site path, an alias path, a definition-term anchor, a glossary
    # link and a Hugo page-relative link.
    assert set(edges_of(nodes["functions/foo#custom-usage"], "xref")) == {
        "functions/Bar", "_index", "functions/_index",
    }  # fmt: skip
    assert set(edges_of(nodes["functions/Bar#usage-1"], "xref")) == {
        "functions/foo", "functions/foo#custom-usage", "glossary/widget",
    }  # fmt: skip
    # Reading order from explicit weights within the section.
    assert edges_of(bar, "dependsOn") == ["functions/foo"]
    stats = batch.stats
    assert stats["links"]["via_alias"] == 2
    unresolved = "\n".join(stats["unresolved"])
    assert "gone.md" in unresolved and "/functions/none/" in unresolved
    assert "nowhere" not in unresolved  # escaped and code-span shortcodes are not links
    assert stats["links"]["unresolved"] == 2
    assert_graph_closed(batch)


def test_hugo_content_folder_given_directly(hugo_tree: Path) -> None:
    batch = read_docs(hugo_tree / "content")
    assert batch.stats["shape"] == "hugo"
    assert "functions/foo" in by_uid(batch)


def test_hugo_language_folder(tmp_path: Path) -> None:
    write(tmp_path, "content/en/_index.md", "---\ntitle: Home\n---\nSee [de](/de/page/).\n")
    write(tmp_path, "content/en/page.md", "---\ntitle: Page\n---\nText.\n")
    write(tmp_path, "content/de/_index.md", "---\ntitle: Start\n---\n")
    batch = read_docs(tmp_path)
    assert set(by_uid(batch)) == {"_index", "page"}
    assert batch.stats["links"]["outside"] == 1
    assert any("read 'en' only" in n for n in batch.stats["notes"])


def unbuilt_hugo_tree(tmp_path: Path) -> Path:
    root = tmp_path / "site"
    write(root, "hugo.toml", "baseURL = 'https://example.org/'\n")
    write(root, "content/_index.md", "---\ntitle: Home\n---\nSee [w](/glossary/#big-widget).\n")
    # A snippet folder: nothing below it is built or listed; pages include its files.
    write(
        root,
        "content/_common/_index.md",
        "---\ncascade:\n  build:\n    list: never\n    render: never\n---\n",
    )
    write(root, "content/_common/editions.md", "---\n---\n## Editions\n\nThe extended edition.\n")
    write(
        root,
        "content/install.md",
        """
        ---
        title: Install
        ---
        {{% include "/_common/editions.md" %}}

        Read [the editions](#editions).
        """,
    )
    # A glossary: its terms are not built, but listed, so the glossary page shows them.
    write(
        root,
        "content/glossary/_index.md",
        "---\ntitle: Glossary\ncascade:\n  build:\n    render: never\n    list: local\n---\n",
    )
    write(root, "content/glossary/widget.md", "---\ntitle: big widget\n---\nA widget.\n")
    write(root, "content/draft.md", "---\ntitle: Soon\ndraft: true\n---\nNot yet.\n")
    # Hugo builds neither future nor expired pages (front-matter keys in any case).
    write(root, "content/future.md", "---\ntitle: Later\npublishDate: 2999-01-01\n---\nLater.\n")
    write(root, "content/expired.md", "---\ntitle: Gone\nexpirydate: 2000-01-01\n---\nGone.\n")
    write(root, "content/dated.md", "---\ntitle: Dated\ndate: 2000-01-01T10:00:00Z\n---\nOld.\n")
    write(root, "content/bundle/index.md", "---\ntitle: Assets\nheadless: true\n---\nFiles.\n")
    write(
        root,
        "content/hidden.md",
        "---\ntitle: Hidden\nbuild:\n  render: never\n  list: never\n---\nHidden.\n",
    )
    # A cascade aimed at some pages only (`_target`) is not followed.
    write(
        root,
        "content/blog/_index.md",
        """
        ---
        title: Blog
        cascade:
          - _target:
              kind: page
            build:
              render: never
        ---
        """,
    )
    write(root, "content/blog/post.md", "---\ntitle: Post\n---\nA post.\n")
    return root


def test_hugo_pages_the_site_does_not_build_are_not_indexed(tmp_path: Path) -> None:
    batch = read_docs(unbuilt_hugo_tree(tmp_path))
    nodes = by_uid(batch)
    pages = {u for u, n in nodes.items() if n.kind == "page"}
    assert pages == {"_index", "_common/_index", "install", "glossary/_index", "glossary/widget",
                     "blog/_index", "blog/post", "dated"}  # fmt: skip
    unpublished = "\n".join(batch.stats["unpublished"])
    assert batch.stats["unpublished_count"] == 6
    assert "future.md: publishDate in the future" in unpublished
    assert "expired.md: expiryDate passed" in unpublished
    assert (
        "editions.md: cascade build.render: never (from content/_common/_index.md)" in unpublished
    )
    for why in ("draft.md: draft", "index.md: headless", "hidden.md: build.render: never"):
        assert why in unpublished
    assert "pages the site leaves out (not indexed): 6" in batch.report
    # The snippet's text is on the includer, its heading is the includer's anchor, and the
    # include is a resolved reference that makes no edge to a node that does not exist.
    install = nodes["install"]
    assert "The extended edition." in install.content
    assert batch.stats["links"]["unresolved"] == 0
    assert batch.stats["links"]["missing_anchor"] == 0
    assert_graph_closed(batch)
    # A listed term is shown on its section's page, at the anchor of its title.
    assert nodes["glossary/widget"].meta["url"] == "https://example.org/glossary/#big-widget"
    assert edges_of(nodes["_index"], "xref") == ["glossary/widget"]  # lands on the term
    assert nodes["blog/post"].meta["url"] == "https://example.org/blog/post/"


def test_drafts_by_generator(tmp_path: Path) -> None:
    # Docusaurus leaves drafts out of a production build; MkDocs has no draft key.
    docu = tmp_path / "docu"
    write(
        docu, "docusaurus.config.js", "module.exports = {url: 'https://d.example', baseUrl: '/'};\n"
    )
    write(docu, "docs/intro.md", "---\ntitle: Intro\n---\nHello.\n")
    write(docu, "docs/next.md", "---\ntitle: Next\ndraft: true\n---\nLater.\n")
    batch = read_docs(docu)
    assert batch.stats["shape"] == "docusaurus"
    assert {n.uid for n in batch.nodes if n.kind == "page"} == {"intro"}
    assert batch.stats["unpublished"] == ["docs/next.md: draft"]
    mk = tmp_path / "mk"
    write(mk, "mkdocs.yml", "site_name: X\n")
    write(mk, "docs/index.md", "---\ndraft: true\n---\n# Home\n")
    assert {n.uid for n in read_docs(mk).nodes if n.kind == "page"} == {"index"}


# -- plain folders, mapping, parsing --------------------------------------------------------


def test_plain_folder(tmp_path: Path) -> None:
    write(
        tmp_path,
        "README.md",
        "# Project\n\nSee [guide](guide) and [install](guide.md#how-to-install).\n",
    )
    write(tmp_path, "guide.md", "# Guide\n\n## How to install?\n\nSteps.\n")
    batch = read_docs(tmp_path)
    nodes = by_uid(batch)
    assert batch.stats["shape"] == "plain"
    assert set(edges_of(nodes["README"], "xref")) == {"guide", "guide#how-to-install"}
    assert edges_of(nodes["guide"], "partOf") == ["README"]
    assert batch.stats["links"]["resolved_share"] == 1.0


def test_front_matter_mapping_from_toml(tmp_path: Path) -> None:
    cfg = write(
        tmp_path,
        "cogitave.toml",
        '[ingest.front_matter]\nproducts = ["platforms"]\nroles = "persona"\n',
    )
    mapping = FrontMatterMapping.load(cfg, "ingest.front_matter")
    assert mapping.products == ("platforms",) and mapping.roles == ("persona",)
    assert mapping.skills == FrontMatterMapping().skills
    docs = tmp_path / "docs"
    write(docs, "a.md", "---\nplatforms: [Linux]\npersona: Admin\nproducts: Ignored\n---\n# A\n")
    nodes = by_uid(read_docs(docs, mapping=mapping))
    assert edges_of(nodes["a"], "appliesTo") == ["product:linux"]
    assert edges_of(nodes["a"], "forRole") == ["role:admin"]
    with pytest.raises(IngestError, match="unknown front-matter mapping field"):
        FrontMatterMapping.from_dict({"product": ["x"]})


def test_bad_front_matter_values_and_toml(tmp_path: Path) -> None:
    write(tmp_path, "a.md", "+++\ntitle = \n+++\n# A\n")
    write(tmp_path, "b.md", "---\nskills: [{nested: map}]\n---\n# B\n")
    write(tmp_path, "c.md", "---\n- just\n- a list\n---\n# C\n")
    batch = read_docs(tmp_path)
    bad = "\n".join(batch.stats["bad_front_matter"])
    assert "a.md: bad TOML front matter" in bad
    assert "b.md: skills: expected a string" in bad
    assert "c.md: front matter is not a key/value mapping" in bad
    assert {n.uid for n in batch.nodes} == {"a", "b", "c"}


def test_page_urls() -> None:
    assert page_url("mkdocs", "tutorial/index.md", {}) == "/tutorial/"
    assert page_url("mkdocs", "Tutorial/First.md", {}) == "/Tutorial/First/"
    assert page_url("hugo", "functions/Bar Baz.md", {}) == "/functions/bar-baz/"
    assert page_url("hugo", "functions/_index.md", {}) == "/functions/"
    assert page_url("hugo", "a/b.md", {"slug": "c"}) == "/a/c/"
    assert page_url("hugo", "a/b.md", {"url": "/x/y"}) == "/x/y/"


def test_mkdocs_without_directory_urls(tmp_path: Path) -> None:
    write(
        tmp_path,
        "mkdocs.yml",
        "site_name: X\nsite_url: https://x.example/\nuse_directory_urls: false\n",
    )
    write(tmp_path, "docs/index.md", "# Home\n\nSee [the guide](guide/first.md#setup).\n")
    write(tmp_path, "docs/guide/README.md", "# Guide\n")
    write(tmp_path, "docs/guide/first.md", "# First\n\n## Setup\n\nText.\n")
    batch = read_docs(tmp_path)
    nodes = by_uid(batch)
    assert nodes["index"].meta["url"] == "https://x.example/index.html"
    assert nodes["guide/README"].meta["url"] == "https://x.example/guide/index.html"
    assert nodes["guide/first"].meta["url"] == "https://x.example/guide/first.html"
    assert nodes["guide/first#setup"].meta["url"] == "https://x.example/guide/first.html#setup"
    assert edges_of(nodes["index"], "xref") == ["guide/first#setup"]
    assert batch.stats["links"]["unresolved"] == 0


def test_slugs_and_parser_details() -> None:
    assert slugify_toc("Data <conversion> & Ünïcode!") == "data-conversion-unicode"
    assert slugify_github("The `:counter` placeholder") == "the-counter-placeholder"
    page = parse_page("# T\n\nintro\n\n## A { #x .cls }\n\ntext\n\n## A\n\n## A\n")
    assert [h.anchor for h in page.headings] == ["t", "x", "a", "a_1"]
    assert page.title == "T" and page.intro == ["intro"]


def test_missing_source_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(IngestError, match="source not found"):
        read_docs(tmp_path / "nope")


# -- the real trees -------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize(
    ("name", "min_pages", "min_share"), [("docs_fastapi", 150, 0.9), ("docs_hugo", 900, 0.95)]
)
def test_real_docs_trees(
    name: str, min_pages: int, min_share: float, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = data_dir(name)  # ../shared/data beside the clone, or $COGITAVE_DATA
    parsed: list[int] = []

    def counted(*args: Any, **kw: Any) -> ParsedPage:
        parsed.append(1)
        return parse_page(*args, **kw)

    monkeypatch.setattr(builder, "parse_page", counted)
    batch = read_docs(root)
    print(f"\n{name}\n{batch.report[:3000]}")
    stats = batch.stats
    # the work: each page file is parsed once, whatever the links between pages
    assert len(parsed) == stats["files"]
    assert stats["nodes"]["page"] > min_pages
    assert stats["nodes"]["section"] > min_pages
    assert stats["nodes"]["code_sample"] > min_pages
    assert stats["links"]["resolved_share"] >= min_share
    assert stats["dropped_edges_count"] == 0
    assert not batch.problems
    if name == "docs_fastapi":
        assert stats["nodes"]["source_file"] > 100 and stats["nodes"]["nav_group"] >= 10
        nodes = by_uid(batch)
        assert "tutorial/path-params#data-conversion" in nodes
        assert edges_of(nodes["tutorial/path-params"], "dependsOn") == ["tutorial/first-steps"]
        # Absolute URLs from site_url, the nav's breadcrumb, includes expanded in content.
        jwt = nodes["tutorial/security/oauth2-jwt#handle-jwt-tokens"]
        assert jwt.meta["url"] == (
            "https://fastapi.tiangolo.com/tutorial/security/oauth2-jwt/#handle-jwt-tokens"
        )
        assert jwt.meta["breadcrumb"][-3:] == [
            "Security",
            "OAuth2 with Password (and hashing), Bearer with JWT tokens",
            "Handle JWT tokens",
        ]
        cors = nodes["tutorial/cors"].content or ""
        assert "{*" not in cors and "```python" in cors and "CORSMiddleware" in cors
    assert_graph_closed(batch)
