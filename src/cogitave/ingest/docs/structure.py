"""The builder's pages -> the tree's structure: ``partOf`` edges up the hierarchy, reading
order (``dependsOn``) and each page's breadcrumb.

A page's parent is its MkDocs nav group (``nav_group`` nodes, an untitled group named after
its index page), the page whose Sphinx toctree lists it, or else the nearest folder index
page. Reading order: the page before it in the same nav group or toctree, or among the
regular pages of a Hugo section ordered by ``weight`` (a Docusaurus folder by
``sidebar_position``). Breadcrumbs: nav groups, toctree parents and captions, or the folders
above the page (their ``_category_`` labels or index page titles).
"""

from __future__ import annotations

import itertools
import posixpath

from cogitave.ingest.docs.builder import Builder, Page
from cogitave.ingest.docs.frontmatter import entity_slug
from cogitave.ingest.docs.paths import INDEX_STEMS, humanize, is_index
from cogitave.ingest.docs.site import NavGroup
from cogitave.ingest.docs.sphinx import toctree_links, toctree_root, toctree_trails


def hierarchy(b: Builder) -> None:
    """Every structural edge and breadcrumb of the tree (before any node is made: the nodes
    carry the breadcrumbs)."""
    in_nav: set[str] = set()
    if b.site.nav is not None:
        _nav_group(b, b.site.nav, None, in_nav, set())
    if b.site.shape == "sphinx":
        toctrees = {uid: src.doc.toctrees for uid, src in b.rst.items()}
        parent, edges = toctree_links(toctrees, b.pages)
        for src, label, dst in edges:
            b.graph.edge(src, label, dst)
        in_nav.update(parent)
        titles = {uid: page.title for uid, page in b.pages.items()}
        root = toctree_root(parent, b.site.root_doc)
        b.trail.update(toctree_trails(parent, titles, root))
    for page in b.pages.values():
        if page.uid not in in_nav and (up := folder_parent(b, page)) is not None:
            b.graph.edge(page.uid, "partOf", up)
    if b.site.shape == "hugo" or b.site.order_key:
        _weight_sequences(b, b.site.order_key or "weight")
    _folder_trails(b)


def _nav_group(
    b: Builder,
    group: NavGroup,
    uid: str | None,
    in_nav: set[str],
    used: set[str],
    trail: tuple[str, ...] = (),
) -> None:
    """Nodes and edges of ``group``'s pages and sub-groups (``uid`` None: the nav root)."""
    previous: str | None = None
    for child in group.children:
        if isinstance(child, NavGroup):
            title = child.title or _group_title(b, child)
            sub = _unique(
                f"{uid}/{entity_slug(title)}" if uid else f"nav:{entity_slug(title)}", used
            )
            pages = [u for c in child.children if isinstance(c, str) and (u := _rel_uid(b, c))]
            body = "\n".join(b.pages[u].title for u in pages)
            b.graph.node(sub, "nav_group", {"title": title, "body": body}, None, {"pages": pages})
            if uid is not None:
                b.graph.edge(sub, "partOf", uid)
            _nav_group(b, child, sub, in_nav, used, (*trail, title))
            continue
        page_uid = _rel_uid(b, child)
        if page_uid is None:
            b.site.nav_missing.append(child)
            continue
        in_nav.add(page_uid)
        # A group's own index page heads the group: the group title is not repeated.
        shown = trail[:-1] if trail and b.pages[page_uid].title == trail[-1] else trail
        b.trail.setdefault(page_uid, list(shown))
        parent = uid if uid is not None else folder_parent(b, b.pages[page_uid])
        if parent is not None:
            b.graph.edge(page_uid, "partOf", parent)
        if previous is not None:
            b.graph.edge(page_uid, "dependsOn", previous)
        previous = page_uid


def _rel_uid(b: Builder, rel: str) -> str | None:
    uid = b.resolver.by_rel.get(rel.lower())
    return uid if uid in b.pages else None


def _group_title(b: Builder, group: NavGroup) -> str:
    for child in group.children:
        if isinstance(child, str) and (uid := _rel_uid(b, child)) and is_index(child):
            return b.pages[uid].title
    for child in group.children:
        if isinstance(child, str):
            folder = posixpath.basename(posixpath.dirname(child))
            return humanize(folder + ".md") if folder else "Section"
    return "Section"


def _unique(uid: str, used: set[str]) -> str:
    candidate, n = uid, 1
    while candidate in used:
        n += 1
        candidate = f"{uid}-{n}"
    used.add(candidate)
    return candidate


def folder_parent(b: Builder, page: Page) -> str | None:
    """The nearest folder index page above ``page`` (its own folder's, for a regular page)."""
    folder = posixpath.dirname(page.uid)
    if is_index(page.rel):
        if not folder:
            return None
        folder = posixpath.dirname(folder)
    while True:
        for stem in INDEX_STEMS:
            uid = f"{folder}/{stem}" if folder else stem
            if uid in b.pages and uid != page.uid:
                return uid
        if not folder:
            return None
        folder = posixpath.dirname(folder)


def _folder_trails(b: Builder) -> None:
    """Breadcrumb titles for pages no nav placed: the folders above them."""
    if b.site.nav is not None or b.site.shape == "sphinx":
        return
    for page in b.pages.values():
        folders = posixpath.dirname(page.rel).split("/") if "/" in page.rel else []
        if is_index(page.rel):
            folders = folders[:-1]
        trail: list[str] = []
        for n in range(1, len(folders) + 1):
            folder = "/".join(folders[:n])
            index = next((u for stem in INDEX_STEMS if (u := f"{folder}/{stem}") in b.pages), None)
            title = b.site.group_titles.get(folder) or (
                b.pages[index].title if index else humanize(folder + "/index.md")
            )
            trail.append(title)
        b.trail[page.uid] = trail


def _weight_sequences(b: Builder, key: str) -> None:
    # Section pages are left out: their weights order a site menu, not a lesson sequence.
    groups: dict[str, list[tuple[float, str, str]]] = {}
    for page in b.pages.values():
        weight = page.front.data.get(key)
        if isinstance(weight, int | float) and not isinstance(weight, bool):
            if is_index(page.rel):
                continue
            if b.site.shape == "hugo":
                parent = folder_parent(b, page) or ""
            else:  # Docusaurus orders a folder's pages (a sidebar category)
                parent = posixpath.dirname(page.rel)
            groups.setdefault(parent, []).append((weight, page.title.lower(), page.uid))
    for members in groups.values():
        ordered = [uid for _, _, uid in sorted(members)]
        for prev, cur in itertools.pairwise(ordered):
            b.graph.edge(cur, "dependsOn", prev)
