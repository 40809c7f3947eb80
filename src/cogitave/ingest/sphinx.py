"""The Sphinx part of the docs graph: reStructuredText pages -> pages, ``api`` nodes, toctrees.

Called by :mod:`cogitave.ingest.markdown`'s builder once every ``.rst`` page is parsed
(:func:`render_all`): labels, documents and Python objects of the whole tree resolve ``:ref:``,
``:doc:``, ``:term:`` and the Python domain's roles into links to Sphinx's ``.html`` URLs, and the
rendered Markdown then goes through the Markdown pipeline (sections, code samples, links).
Every declared object (``.. function:: pathlib.Path.read_text``) becomes an ``api`` node whose
uid is its dotted name, ``partOf`` the section declaring it. Toctrees give ``partOf`` (child
page -> the page holding the toctree), reading order (``dependsOn`` the previous entry) and the
breadcrumb (ancestor pages and toctree captions).
"""

from __future__ import annotations

import fnmatch
import posixpath
from typing import TYPE_CHECKING, Any

from cogitave.ingest.md_frontmatter import FrontMatter
from cogitave.ingest.md_links import Resolution
from cogitave.ingest.md_parse import parse_page
from cogitave.ingest.rst import Xref, find_py_object
from cogitave.ingest.rst_markdown import render_markdown

if TYPE_CHECKING:
    from cogitave.ingest.markdown import _Builder, _Page

REASONS = {
    "ref": "no label",
    "doc": "no document",
    "term": "no glossary term",
}
API_REASON = "API object not declared in the tree"


def render_all(b: _Builder) -> None:
    """Render every parsed reStructuredText page to Markdown and add it as a page."""
    labels: dict[str, tuple[str, str, str]] = {}  # label -> (doc uid, anchor, title)
    objects: dict[str, tuple[str, str]] = {}  # dotted name -> (doc uid, anchor)
    for uid, (_, _, doc) in b.rst.items():
        for label, (anchor, title) in doc.labels.items():
            labels.setdefault(label.lower(), (uid, anchor, title))
        for obj in doc.objects:
            objects.setdefault(obj.name, (uid, obj.anchor))
    for label, (node, anchor, title) in b.myst_labels.items():  # MyST pages' `(label)=`
        labels.setdefault(label, (node.partition("#")[0], anchor, title))
    titles = {uid: doc.title for uid, (_, _, doc) in b.rst.items()}

    # Markdown pages of the tree (MyST) are already read: `:doc:` may name them too.
    titles.update({uid: page.title for uid, page in b.pages.items()})

    def url_of(uid: str, anchor: str = "") -> str:
        rel = b.rst[uid][1] if uid in b.rst else b.pages[uid].rel
        url = b.site.url_of(rel, {})
        return b._absolute(url) + (f"#{anchor}" if anchor else "")

    for uid, (file, rel, doc) in b.rst.items():

        def lookup(x: Xref, here: str = uid) -> tuple[str, str] | None:
            if x.role == "ref" or x.role == "term":
                key = x.target.lower() if x.role == "ref" else "term:" + x.target.lower()
                hit = labels.get(key) or (labels.get(" ".join(key.split())))
                return (url_of(hit[0], hit[1]), hit[2]) if hit else None
            if x.role == "doc":
                target = x.target.removesuffix(".rst")
                if target.startswith("/"):
                    name = target.lstrip("/")
                else:
                    name = posixpath.normpath(posixpath.join(posixpath.dirname(here), target))
                return (url_of(name), titles[name]) if name in titles else None
            name = find_py_object(objects, x.target, x.module, x.klass)
            if name is None:
                return None
            doc_uid, anchor = objects[name]
            return url_of(doc_uid, anchor), name

        def read(_doc: str, path: str, where: Any = file) -> tuple[str, str] | None:
            return b._read_include(where, path)

        rendered = render_markdown(doc, lookup, read)
        shown = b._shown(file)
        for x in rendered.resolved:
            b.api_refs["resolved" if x.role.startswith("py:") else "other_resolved"] += 1
        for x, _ in rendered.unresolved:
            if x.role.startswith("py:"):
                b.api_refs["undeclared"] += 1
            reason = REASONS.get(x.role, API_REASON)
            b.tally.link(Resolution("unresolved", reason=f"{reason} at {x.target}"),
                         f"{shown}:{x.line}", f":{x.role}:`{x.target}`", "link")  # fmt: skip
        for path, line in doc.includes:
            if b._read_include(file, path) is None:
                b.tally.missing_includes.append(f"{shown}:{line}: {path}")
        markdown = rendered.markdown
        parsed = parse_page(markdown, "sphinx", 0)
        heading_of = {h.anchor: i for i, h in enumerate(parsed.headings) if h.is_section}
        parsed.terms.extend((a, heading_of.get(sec, -1)) for a, sec in rendered.anchors)
        front = FrontMatter({}, markdown, 0)
        b._add_page(uid, rel, file, markdown, front, {}, parsed)
        anchors = b.resolver.anchors[uid]
        mine: dict[str, str] = {}
        for obj, _heading, _md in rendered.api:
            api_uid = _api_uid(b, obj.name, uid)
            mine[obj.anchor] = api_uid
            anchors[obj.anchor] = api_uid
        b.api_anchor[uid] = mine
        b.rst_api[uid] = [(o, heading_of.get(sec, -1), md) for o, sec, md in rendered.api]


def _api_uid(b: _Builder, name: str, page_uid: str) -> str:
    # A module named like a page (`json` and a top-level `json.rst`) must not replace it.
    return name if name not in b.rst and name not in b.pages else f"py:{name}"


def api_nodes(b: _Builder, page: _Page) -> None:
    """``api`` nodes for the objects ``page`` declares, ``partOf`` their section."""
    for obj, heading, md in b.rst_api.get(page.uid, []):
        uid = _api_uid(b, obj.name, page.uid)
        if uid in b.graph.nodes:
            continue  # declared twice (a module's summary and its reference): first one wins
        container = page.container(heading)
        container_heading = page.parsed.section_of(heading)
        trail = b.trail.get(page.uid, [])
        crumbs = [*trail, page.title]
        if container_heading >= 0:
            crumbs.extend(b._heading_trail(page, container_heading))
        body = md.split("\n\n", 1)[1] if "\n\n" in md else ""
        b.graph.node(
            uid,
            "api",
            {"title": obj.name, "body": body, "code": obj.signature},
            b._expanded(page, md),
            {
                "path": b._shown(page.file),
                "url": b._absolute(f"{page.url}#{obj.anchor}"),
                "anchor": obj.anchor,
                "objtype": obj.objtype,
                "breadcrumb": [*crumbs, obj.name],
            },
        )
        b.graph.edge(uid, "partOf", container)


def toctree_edges(b: _Builder, placed: set[str]) -> None:
    """``partOf`` and ``dependsOn`` from toctrees; breadcrumbs along the toctree chain."""
    parent: dict[str, tuple[str, str]] = {}  # child -> (parent uid, caption)
    names = sorted(b.pages)
    for uid, (_, _, doc) in b.rst.items():
        for tree in doc.toctrees:
            previous: str | None = None
            for _title, entry in tree.entries:
                for child in _entries(uid, entry, tree.glob, names):
                    if child not in b.pages or child == uid:
                        continue
                    if child not in parent:
                        parent[child] = (uid, tree.caption)
                        b.graph.edge(child, "partOf", uid)
                        placed.add(child)
                    if previous is not None:
                        b.graph.edge(child, "dependsOn", previous)
                    previous = child
    root = b.site.root_doc

    def trail(uid: str, seen: frozenset[str] = frozenset()) -> list[str]:
        if uid not in parent or uid in seen:
            return []
        up, caption = parent[uid]
        above = trail(up, seen | {uid})
        if up != root:
            above = [*above, b.pages[up].title]
        return [*above, caption] if caption else above

    for uid in b.pages:
        b.trail[uid] = trail(uid)


def _entries(here: str, entry: str, glob: bool, names: list[str]) -> list[str]:
    if entry == "self" or "://" in entry:
        return []
    entry = entry.removesuffix(".rst")
    if entry.startswith("/"):
        target = entry.lstrip("/")
    else:
        target = posixpath.normpath(posixpath.join(posixpath.dirname(here), entry))
    if glob and any(c in entry for c in "*?["):
        return [n for n in names if fnmatch.fnmatchcase(n, target)]
    return [target]
