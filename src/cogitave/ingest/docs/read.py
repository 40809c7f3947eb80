"""Documentation trees -> a knowledge graph: MkDocs, Hugo, Docusaurus, VitePress, Next.js
content folders, Sphinx (sources or a built tree's ``_sources``) and plain folders of Markdown,
MDX or reStructuredText.

:func:`read_docs` detects the shape (:mod:`~cogitave.ingest.docs.layout`), reads the pages
(:mod:`~cogitave.ingest.docs.pages`: MDX into Markdown, reStructuredText rendered by
:mod:`~cogitave.ingest.docs.sphinx`), parses each page with markdown-it-py, draws the
structure, nodes and links (:mod:`~cogitave.ingest.docs.structure`,
:mod:`~cogitave.ingest.docs.nodes`, :mod:`~cogitave.ingest.docs.edges`) and returns a
:class:`DocsBatch` of nodes and out-edges plus a report.

Every page, section, code sample and API object carries ``meta["path"]`` (the source file,
relative to the folder named), ``meta["url"]`` (absolute when the site's base URL is known or
given) and ``meta["breadcrumb"]`` (nav groups / folder titles / toctree parents, the page, its
enclosing sections). ``content`` is clean Markdown: front matter removed, includes expanded
(:mod:`~cogitave.ingest.docs.includes`).

Nodes (uid: kind):
- ``tutorial/path-params``: ``page`` (title, body = the intro before the first section,
  description, keywords); ``content`` is the page's Markdown; meta also ``aliases``.
- ``tutorial/path-params#anchor``: ``section`` per h2..h4 (and any h1 after the title), anchors
  as the generator makes them (MkDocs' toc with ``{ #custom-id }``, GitHub/Hugo, VitePress,
  docutils ids); body runs to the next heading of the same or a higher level, so it includes
  nested sections' text; ``content`` is that slice of Markdown.
- ``tutorial/path-params#code-3``: ``code_sample`` per fenced block or include (code, title,
  exact ``language``); numbered in page order, a missing include keeps its number.
- ``src:docs_src/x/tutorial001.py``: ``source_file`` per included file.
- ``nav:learn/tutorial-user-guide``: ``nav_group`` per MkDocs nav group (an untitled group takes
  the title of its index page).
- ``pathlib.Path.read_text``: ``api`` per object a Sphinx page declares (dotted name).
- ``product:<slug>``, ``role:<slug>``, ``skill:<slug>``, ``path:<slug>``: front-matter entities.

Edges: ``partOf`` (section -> parent section/page; code_sample and api -> section/page; page ->
nav group or the page whose toctree lists it, else the nearest folder index page; nav group ->
parent group; page -> learning path), ``xref`` (resolved links and Sphinx roles; an anchor that
exists targets the section or API object), ``implementedBy``
(innermost page/section -> code_sample), ``derivedFrom`` (code_sample -> source_file),
``dependsOn`` (front-matter prerequisites, and the reading order: each page depends on the page
before it in the same MkDocs nav group or Sphinx toctree, or among the regular pages of a Hugo
section ordered by explicit ``weight`` (a Docusaurus folder by ``sidebar_position``), since
that order is how the authors sequence learning), ``appliesTo`` /
``forRole`` / ``teachesSkill`` (front-matter entities), ``supersededBy`` (front matter -> page).

Front-matter keys are chosen by :class:`FrontMatterMapping` (defaults and TOML form in
:mod:`~cogitave.ingest.docs.frontmatter`); ``aliases`` and MkDocs ``redirects`` maps become
``meta["aliases"]`` (URL paths) and resolve links too.

Nothing in the tree is fatal: unreadable or undecodable files become ``Batch.problems`` (the page
is left out; ``raise_if_bad`` then refuses the batch unless the caller skips bad records), while
bad front matter, broken links, missing anchors and missing includes are only listed in
``batch.report`` and ``batch.stats`` (same numbers: ``nodes`` by kind, ``edges`` by label,
``links`` counts with ``resolved_share``, first 50 ``unresolved``, ``unresolved_by_reason``, ...).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cogitave.ingest.confined import TreeReader
from cogitave.ingest.docs.builder import Builder
from cogitave.ingest.docs.edges import front_matter_edges, landing_anchors, page_links
from cogitave.ingest.docs.frontmatter import FrontMatterMapping
from cogitave.ingest.docs.layout import detect_site
from cogitave.ingest.docs.nodes import page_nodes
from cogitave.ingest.docs.pages import add_rst_pages, read_pages
from cogitave.ingest.docs.public_url import public_urls
from cogitave.ingest.docs.report import format_report
from cogitave.ingest.docs.structure import hierarchy
from cogitave.ingest.records import MAX_LISTED, Batch
from cogitave.schema import Dimension, Schema

SCHEMA_DIMENSIONS: tuple[Dimension, ...] = (
    Dimension("title", "semantic"),
    Dimension("body", "semantic"),
    Dimension("code", "semantic"),
    Dimension("description", "semantic"),
    Dimension("keywords", "semantic"),
    Dimension("language", "exact"),
)


@dataclass
class DocsBatch(Batch):
    """A :class:`Batch` plus a human-readable ``report`` and the same numbers in ``stats``."""

    report: str = ""
    stats: dict[str, Any] = field(default_factory=dict)


def docs_schema(declared: Schema | None = None) -> Schema:
    """The declared schema's dimensions, plus the docs ones it does not declare."""
    dims = list(declared.dimensions) if declared else []
    have = {d.name for d in dims}
    dims.extend(d for d in SCHEMA_DIMENSIONS if d.name not in have)
    return Schema(tuple(dims))


def read_docs(
    path: str | Path,
    schema: Schema | None = None,
    *,
    mapping: FrontMatterMapping | None = None,
    base_url: str | None = None,
    allow_outside: Sequence[str | Path] = (),
    version: str | None = None,
    files_url: str | None = None,
) -> DocsBatch:
    """Read a docs tree (MkDocs, Hugo, Docusaurus, VitePress, Next.js, Sphinx or a plain
    Markdown/MDX/RST folder) into nodes and edges (see the module doc). ``base_url`` makes
    URLs absolute, over the site's own setting; with neither, the docs URL the package
    metadata names (:func:`documentation_url`); with none of these, ``files_url`` (a tree
    cloned from a repository whose host has a web view: the URL its files are shown under,
    at the commit read) makes each node's URL its page file's there, with its anchor; the
    report says which rule gave the URLs. Nothing outside the tree (the folder named,
    or a file's folder) is read unless a folder of ``allow_outside`` holds it: what is
    refused is listed in the report (``stats["refused"]``). ``version``: of a tree holding
    several versions of its docs, the one to read (None: the one the site serves by default;
    one it does not hold is an :class:`~cogitave.errors.InputError` naming those it holds)."""
    started = time.perf_counter()
    reader = TreeReader.for_source(path, allow_outside)
    site = detect_site(Path(path), reader, version)
    public_urls(site, Path(path), base_url, files_url)
    b = Builder(site, mapping or FrontMatterMapping())
    read_pages(b)
    if b.rst:
        add_rst_pages(b)
    landing_anchors(b)
    hierarchy(b)  # first: it gives the breadcrumbs the nodes carry
    for page in b.pages.values():
        page_nodes(b, page)
    for page in b.pages.values():
        page_links(b, page)
        front_matter_edges(b, page)
    return finish(b, schema, time.perf_counter() - started)


def finish(
    b: Builder, declared: Schema | None, seconds: float, root: str | None = None
) -> DocsBatch:
    """Freeze the draft into a batch with its schema, stats and report (every reader of
    docs ends here: a tree's, a crawled site's; ``root`` names what was read, when it is not
    the tree's folder)."""
    nodes, edge_counts, dropped = b.graph.build()
    head = {
        "shape": b.site.shape,
        "root": root or str(b.site.base),
        "docs_root": b.shown(b.site.docs_root) or ".",
        "seconds": round(seconds, 3),
    }
    stats = b.tally.stats(head, nodes, edge_counts, dropped, [str(p) for p in b.problems])
    if b.rst:
        stats["api_refs"] = {
            "resolved": b.api_refs["resolved"],
            "undeclared": b.api_refs["undeclared"],
        }
    stats["nav_missing"] = b.site.nav_missing[:MAX_LISTED]
    refused = b.reader.refusals
    stats["refused"] = [str(r) for r in refused[:MAX_LISTED]]
    stats["refused_count"] = len(refused)
    stats["allow_outside"] = sorted({r.allow for r in refused if r.allow})
    stats["notes"] = b.site.notes
    if b.site.url_rule:
        stats["url_rule"] = b.site.url_rule
    return DocsBatch(
        nodes=nodes,
        problems=b.problems,
        schema=docs_schema(declared),
        report=format_report(stats),
        stats=stats,
    )
