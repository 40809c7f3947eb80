"""Links of the builder's pages -> ``xref`` edges, and front matter -> entity nodes and their
edges; before that, the anchors and aliases links may land on.

A link resolves (:mod:`~cogitave.ingest.docs.links`) to a page, or to a section when its
anchor exists; each outcome is counted in the report with ``file:line``. Front-matter
entities (``products``, ``roles``, ``skills``, learning ``paths``) become ``product:<slug>``
... nodes that pages ``appliesTo``/``forRole``/``teachesSkill``/are ``partOf``;
``prerequisites`` and ``superseded_by`` name pages (``dependsOn``, ``supersededBy``).
"""

from __future__ import annotations

import posixpath

from cogitave.ingest.docs.builder import Builder, Page
from cogitave.ingest.docs.frontmatter import entity_slug
from cogitave.ingest.docs.links import LinkKind
from cogitave.ingest.docs.paths import normalize_url
from cogitave.ingest.docs.urls import url_of

# Front-matter entity fields -> (uid prefix / node kind, edge label from the page).
ENTITY_FIELDS = (
    ("products", "product", "appliesTo"),
    ("roles", "role", "forRole"),
    ("skills", "skill", "teachesSkill"),
    ("paths", "path", "partOf"),
)


def landing_anchors(b: Builder) -> None:
    """The site's redirects as page aliases, and the anchors a link may land on besides a
    page's own headings: a page shown on its section's page, a Hugo include's headings."""
    _redirects(b)
    _shown_anchors(b)
    _transcluded_anchors(b)


def _redirects(b: Builder) -> None:
    for old, new in b.site.redirects.items():
        target = b.resolver.by_rel.get(posixpath.normpath(new).lower())
        if target is None or target not in b.pages:
            b.site.notes.append(f"redirect {old} -> {new}: target is not a page")
            continue
        alias = url_of(b.site, old, {})
        b.pages[target].aliases.append(alias)
        b.resolver.by_alias.setdefault(alias.lower(), target)


def _shown_anchors(b: Builder) -> None:
    # A page shown on its section's page (URL ``section/#anchor``) is that page's anchor:
    # a link to ``section/#anchor`` lands on it.
    for page in b.pages.values():
        base, _, anchor = page.url.partition("#")
        section = b.resolver.by_url.get(normalize_url(base).lower()) if anchor else None
        if section is not None and section != page.uid:
            b.resolver.anchors[section].setdefault(anchor, page.uid)


def _transcluded_anchors(b: Builder) -> None:
    # A Hugo include shortcode renders the snippet's headings inside the including page,
    # so links to those anchors land on the includer (at the include's position).
    for page in b.pages.values():
        anchors = b.resolver.anchors[page.uid]
        for written, heading in page.parsed.transclusions:
            res = b.resolver.resolve(written, page.ref, "ref")
            if res.status == "resolved":
                for anchor in b.resolver.anchors.get(res.uid, {}):
                    anchors.setdefault(anchor, page.container(heading))


def page_links(b: Builder, page: Page) -> None:
    """An ``xref`` edge per link of ``page`` that resolves (to a page that is built)."""
    for link in page.parsed.links:
        src = page.container(link.heading)
        _link(b, page, src, link.target, link.line, link.kind, link.text)


def _link(
    b: Builder, page: Page, src: str, target: str, line: int, kind: LinkKind, text: str
) -> None:
    res = b.resolver.resolve(target, page.ref, kind, text)
    b.tally.link(res, f"{b.shown(page.file)}:{line}", target, kind)
    if res.status == "resolved" and res.uid.partition("#")[0] not in b.snippets:
        b.graph.edge(src, "xref", res.uid)


def front_matter_edges(b: Builder, page: Page) -> None:
    """Entity nodes and edges, prerequisites and successors of ``page``'s front matter."""
    fm = page.front.data
    shown = b.shown(page.file)
    for field_name, kind, label in ENTITY_FIELDS:
        names = b.strings(fm, getattr(b.mapping, field_name), shown)
        for name in names:
            b.graph.edge(page.uid, label, _entity(b, kind, name))
    for field_name, label in (
        ("prerequisites", "dependsOn"),
        ("superseded_by", "supersededBy"),
    ):
        targets = b.strings(fm, getattr(b.mapping, field_name), shown)
        for target in targets:
            # Front matter names pages, not sections: the edge goes to the page.
            res = b.resolver.resolve(target.split("#", 1)[0], page.ref, "page_ref")
            b.tally.link(res, shown, target, "page_ref")
            target_page = res.uid.split("#", 1)[0] if res.uid else ""
            if res.status == "resolved" and target_page not in b.snippets:
                b.graph.edge(page.uid, label, target_page)


def _entity(b: Builder, kind: str, name: str) -> str:
    uid = f"{kind}:{entity_slug(name)}"
    if uid not in b.graph.nodes:
        b.graph.node(uid, kind, {"title": name}, None, {"name": name})
    return uid
