"""A crawl's pages -> the docs graph, through the same builder a docs tree goes through.

Each :class:`~cogitave.ingest.web.state.WebPage` is Markdown already, so it is added to the
docs :class:`~cogitave.ingest.docs.builder.Builder` as a tree's page is, and the same steps
make its nodes and edges (:func:`~cogitave.ingest.docs.nodes.page_nodes`,
:func:`~cogitave.ingest.docs.edges.page_links`): pages, sections at the site's own anchors,
code samples with their language, terms, ``api`` objects, ``xref`` edges from links. What a
tree's config gives, the crawl gives from the pages themselves (:func:`hierarchy`):

- a page's uid is its path below the crawled prefix (``library/pathlib.html`` ->
  ``library/pathlib``, ``tutorial/cors/`` -> ``tutorial/cors``, the start page ``index``);
  its URL is the public one (``--base-url``), its ``path`` the URL path below the prefix;
- breadcrumb: the titles of the page's breadcrumb or sidebar trail, site-level crumbs (the
  home page, links off the site) left out;
- ``partOf``: the nearest breadcrumb ancestor that is a crawled page, else the nearest page
  up the URL's folders, else the start page;
- reading order (``dependsOn``): the page's previous page, when both share a parent;
- ``api`` nodes: Sphinx's Python objects found on the page, their kind from ``objects.inv``
  when the site has one.

No file is read while building: a crawled page's Markdown could name any path in an include
directive, so the builder's reader is confined to nothing (:class:`NoFiles`).
"""

from __future__ import annotations

import posixpath
import time
from pathlib import Path
from urllib.parse import urlsplit

from cogitave.ingest.confined import TreeReader
from cogitave.ingest.docs.builder import Builder, Page
from cogitave.ingest.docs.edges import front_matter_edges, landing_anchors, page_links
from cogitave.ingest.docs.frontmatter import FrontMatter, FrontMatterMapping
from cogitave.ingest.docs.nodes import page_nodes
from cogitave.ingest.docs.read import DocsBatch, finish
from cogitave.ingest.docs.rst import ApiObject
from cogitave.ingest.docs.site import Site
from cogitave.ingest.docs.sphinx import ApiEntry
from cogitave.ingest.records import Problem, check_uid
from cogitave.ingest.web.crawl import Crawl
from cogitave.ingest.web.inventory import InventoryEntry
from cogitave.ingest.web.state import WebPage
from cogitave.schema import Schema

ROOT = Path("/")  # pages' paths are URL paths, shown relative to this


class NoFiles(TreeReader):
    """A reader confined to nothing: every file a crawled page names is refused."""

    def __init__(self) -> None:
        super().__init__(ROOT)
        self.allowed = ()

    def allows(self, path: str | Path) -> bool:
        return False


def page_uid(url: str, crawl: Crawl) -> str:
    """A crawled page's uid: its path below the prefix holding it, without ``.html`` or a
    trailing slash (``index`` for the prefix itself); a page under another ``--scope``
    prefix is named by its host and path."""
    scope = crawl.scope
    holder = next((p for p in scope.prefixes if url.startswith(p)), None)
    if holder is None or holder == scope.prefix:
        rel = scope.relative(url)
    else:
        parts = urlsplit(url)
        rel = f"{parts.netloc}{parts.path}"
    rel = rel.strip("/")
    for suffix in (".html", ".htm"):
        rel = rel.removesuffix(suffix)
    return rel or "index"


def read_crawl(crawl: Crawl, schema: Schema | None = None) -> DocsBatch:
    """The docs graph of a crawl (see the module doc); its report starts with the crawl's."""
    started = time.perf_counter()
    prefix = crawl.public_prefix
    site = Site("web", ROOT, ROOT, "github", reader=NoFiles())
    site.site_url = prefix.rstrip("/")
    b = Builder(site, FrontMatterMapping())
    by_url: dict[str, str] = {}  # crawled URL -> page uid
    kinds = crawl.inventory.python() if crawl.inventory else {}
    shared = _site_wide(crawl.pages)
    for web in crawl.pages:
        uid = page_uid(web.url, crawl)
        try:
            check_uid(uid)
        except ValueError as e:
            b.problems.append(Problem(web.url, 0, str(e)))
            continue
        if uid in b.pages:
            b.tally.unpublished.append(f"{web.url}: the same page as {b.pages[uid].url}")
            continue
        page = _add(b, web, uid, crawl, shared)
        _api(b, page, web, kinds)
        by_url[web.url] = uid
    landing_anchors(b)
    hierarchy(b, crawl, by_url)
    for page in b.pages.values():
        page_nodes(b, page)
    for page in b.pages.values():
        page_links(b, page)
        front_matter_edges(b, page)
    b.tally.files = len(crawl.pages)
    batch = finish(b, schema, time.perf_counter() - started, crawl.start)
    batch.stats["crawl"] = crawl.report.to_dict()
    batch.report = crawl.report.format() + "\n" + batch.report
    return batch


def _site_wide(pages: list[WebPage]) -> set[str]:
    """Descriptions and keywords most pages share: the site's, not any page's."""
    from collections import Counter

    seen = Counter(v for p in pages for v in {p.description, p.keywords} if v)
    return {v for v, n in seen.items() if len(pages) >= 4 and n > len(pages) / 2}


def _add(b: Builder, web: WebPage, uid: str, crawl: Crawl, shared: set[str]) -> Page:
    url_path = "/" + crawl.scope.relative(web.url) if crawl.scope.holds(web.url) else web.url
    data: dict[str, str] = {"url": url_path}
    if web.description and web.description not in shared:
        data["description"] = web.description
    if web.keywords and web.keywords not in shared:
        data["keywords"] = web.keywords
    if not web.markdown.lstrip().startswith("# "):
        data["title"] = web.title
    front = FrontMatter(data, web.markdown, 0)
    rel = uid + ".md"
    shown = urlsplit(url_path).path.strip("/") or "index"
    return b.add_page(uid, rel, ROOT / shown, web.markdown, front, {})


def _api(b: Builder, page: Page, web: WebPage, kinds: dict[str, InventoryEntry]) -> None:
    """The page's Sphinx objects as the builder's API entries, reachable by their anchors."""
    heading_of = {h.anchor: i for i, h in enumerate(page.parsed.headings) if h.is_section}
    anchors = b.resolver.anchors[page.uid]
    for found in web.api:
        entry = kinds.get(found.anchor)
        objtype = entry.role if entry is not None else found.objtype
        # A module named like a page (``json`` and ``json.html``) must not replace it.
        uid = found.name if found.name not in b.pages else f"py:{found.name}"
        obj = ApiObject(found.name, objtype, found.signature, found.anchor, 0)
        page.api.append(ApiEntry(uid, obj, heading_of.get(found.section, -1), found.markdown))
        anchors[found.anchor] = uid


def hierarchy(b: Builder, crawl: Crawl, by_url: dict[str, str]) -> None:
    """``partOf`` edges, reading order and breadcrumbs from the pages' own navigation."""
    start_uid = by_url.get(crawl.start) or ("index" if "index" in b.pages else None)
    parents: dict[str, str] = {}
    pages = {p.url: p for p in crawl.pages}
    for url, uid in by_url.items():
        web = pages[url]
        crumbs = [(t, h) for t, h in web.breadcrumb if h != url and t != b.pages[uid].title]
        trail: list[str] = []
        parent = None
        for title, href in crumbs:
            if href is not None and (not crawl.scope.holds(href) or href == crawl.start):
                continue  # the site's home or another site: not a step of the trail
            trail.append(title)
            if href is not None and by_url.get(href) not in (None, uid):
                parent = by_url[href]
        b.trail[uid] = trail
        parent = parent or _folder_parent(uid, b) or (start_uid if start_uid != uid else None)
        if parent is not None:
            parents[uid] = parent
            b.graph.edge(uid, "partOf", parent)
    for url, uid in by_url.items():
        prev = pages[url].prev
        before = by_url.get(prev) if prev else None
        if before is not None and before != uid and parents.get(before) == parents.get(uid):
            b.graph.edge(uid, "dependsOn", before)


def _folder_parent(uid: str, b: Builder) -> str | None:
    folder = posixpath.dirname(uid)
    while folder:
        if folder in b.pages and folder != uid:
            return folder
        for stem in ("index", "README"):
            if f"{folder}/{stem}" in b.pages and f"{folder}/{stem}" != uid:
                return f"{folder}/{stem}"
        folder = posixpath.dirname(folder)
    return None
