"""The Sphinx part of the docs graph: parsed reStructuredText pages -> rendered pages, ``api``
entries and toctree links, as data.

:func:`render_all` runs once every ``.rst`` page is parsed: labels, documents and Python
objects of the whole tree resolve ``:ref:``, ``:doc:``, ``:term:`` and the Python domain's
roles into links to Sphinx's ``.html`` URLs; each page's Markdown and parse come back with the
objects it declares (``.. function:: pathlib.Path.read_text`` -> an :class:`ApiEntry` whose
uid is the dotted name), the outcome of every role for the report and the includes not found.
:func:`toctree_links` gives ``partOf`` (child page -> the page holding the toctree) and
reading order (``dependsOn`` the previous entry); :func:`toctree_root` the root document (named
by ``conf.py``, or found: a built tree has none); :func:`toctree_trails` the breadcrumb
(ancestor pages and toctree captions).
"""

from __future__ import annotations

import fnmatch
import posixpath
from collections import Counter
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from cogitave.ingest.docs.links import Resolution
from cogitave.ingest.docs.parse import ParsedPage, parse_page
from cogitave.ingest.docs.rst import ApiObject, RstDoc, Toctree, Xref, find_py_object
from cogitave.ingest.docs.rst_markdown import render_markdown

REASONS = {
    "ref": "no label",
    "doc": "no document",
    "term": "no glossary term",
}
API_REASON = "API object not declared in the tree"
# (file, path as written) -> (text, language) or None
IncludeReader = Callable[[Path, str], "tuple[str, str] | None"]


@dataclass(frozen=True)
class RstSource:
    """A parsed page: its file, path under the docs root and doctree facts."""

    file: Path
    rel: str
    doc: RstDoc


@dataclass(frozen=True)
class ApiEntry:
    """An object a page declares: its node uid, the object, the heading it sits under (-1:
    the page) and the Markdown of its description."""

    uid: str
    obj: ApiObject
    heading: int
    markdown: str


@dataclass
class RstPage:
    """A rendered page, ready to be added like a Markdown page."""

    uid: str
    rel: str
    file: Path
    markdown: str
    parsed: ParsedPage
    api: list[ApiEntry]


@dataclass
class Rendering:
    """Every page rendered, with what the report counts."""

    pages: list[RstPage] = field(default_factory=list)
    # (outcome, file:line, role as written) of each role that names something
    links: list[tuple[Resolution, str, str]] = field(default_factory=list)
    missing_includes: list[str] = field(default_factory=list)  # "file:line: path"
    api_refs: Counter[str] = field(default_factory=Counter)


def render_all(
    sources: Mapping[str, RstSource],
    markdown_pages: Mapping[str, tuple[str, str]],
    myst_labels: Mapping[str, tuple[str, str, str]],
    url_of: Callable[[str], str],
    read_include: IncludeReader,
    shown: Callable[[Path], str],
) -> Rendering:
    """Render every parsed page to Markdown. ``markdown_pages``: the tree's Markdown (MyST)
    pages, uid -> (rel, title), which ``:doc:`` may name; ``myst_labels``: their ``(label)=``
    targets, label -> (node uid, anchor, title); ``url_of``: a page file's absolute URL."""
    labels: dict[str, tuple[str, str, str]] = {}  # label -> (doc uid, anchor, title)
    objects: dict[str, tuple[str, str]] = {}  # dotted name -> (doc uid, anchor)
    for uid, src in sources.items():
        for label, (anchor, title) in src.doc.labels.items():
            labels.setdefault(label.lower(), (uid, anchor, title))
        for obj in src.doc.objects:
            objects.setdefault(obj.name, (uid, obj.anchor))
    for label, (node, anchor, title) in myst_labels.items():  # MyST pages' `(label)=`
        labels.setdefault(label, (node.partition("#")[0], anchor, title))
    titles = {uid: src.doc.title for uid, src in sources.items()}
    titles.update({uid: title for uid, (_, title) in markdown_pages.items()})
    rels = {uid: rel for uid, (rel, _) in markdown_pages.items()}
    rels.update({uid: src.rel for uid, src in sources.items()})

    def page_url(uid: str, anchor: str = "") -> str:
        return url_of(rels[uid]) + (f"#{anchor}" if anchor else "")

    def api_uid(name: str) -> str:
        # A module named like a page (`json` and a top-level `json.rst`) must not replace it.
        return name if name not in sources and name not in markdown_pages else f"py:{name}"

    out = Rendering()
    for uid, src in sources.items():

        def lookup(x: Xref, here: str = uid) -> tuple[str, str] | None:
            if x.role == "ref" or x.role == "term":
                key = x.target.lower() if x.role == "ref" else "term:" + x.target.lower()
                hit = labels.get(key) or (labels.get(" ".join(key.split())))
                return (page_url(hit[0], hit[1]), hit[2]) if hit else None
            if x.role == "doc":
                target = x.target.removesuffix(".rst")
                if target.startswith("/"):
                    name = target.lstrip("/")
                else:
                    name = posixpath.normpath(posixpath.join(posixpath.dirname(here), target))
                return (page_url(name), titles[name]) if name in titles else None
            name = find_py_object(objects, x.target, x.module, x.klass)
            if name is None:
                return None
            doc_uid, anchor = objects[name]
            return page_url(doc_uid, anchor), name

        def read(_doc: str, path: str, where: Path = src.file) -> tuple[str, str] | None:
            return read_include(where, path)

        rendered = render_markdown(src.doc, lookup, read)
        where = shown(src.file)
        for x in rendered.resolved:
            out.api_refs["resolved" if x.role.startswith("py:") else "other_resolved"] += 1
        for x, _ in rendered.unresolved:
            if x.role.startswith("py:"):
                out.api_refs["undeclared"] += 1
            reason = REASONS.get(x.role, API_REASON)
            res = Resolution("unresolved", reason=f"{reason} at {x.target}")
            out.links.append((res, f"{where}:{x.line}", f":{x.role}:`{x.target}`"))
        for path, line in src.doc.includes:
            if read_include(src.file, path) is None:
                out.missing_includes.append(f"{where}:{line}: {path}")
        parsed = parse_page(rendered.markdown, "sphinx", 0)
        heading_of = {h.anchor: i for i, h in enumerate(parsed.headings) if h.is_section}
        parsed.terms.extend((a, heading_of.get(sec, -1)) for a, sec in rendered.anchors)
        api = [
            ApiEntry(api_uid(obj.name), obj, heading_of.get(sec, -1), md)
            for obj, sec, md in rendered.api
        ]
        out.pages.append(RstPage(uid, src.rel, src.file, rendered.markdown, parsed, api))
    return out


def toctree_links(
    toctrees: Mapping[str, list[Toctree]], pages: Collection[str]
) -> tuple[dict[str, tuple[str, str]], list[tuple[str, str, str]]]:
    """(child -> (parent page, caption), edges in order) of the pages' toctrees: a child is
    ``partOf`` the first page listing it, and ``dependsOn`` the entry before it."""
    parent: dict[str, tuple[str, str]] = {}
    edges: list[tuple[str, str, str]] = []
    names = sorted(pages)
    for uid, trees in toctrees.items():
        for tree in trees:
            previous: str | None = None
            for _title, entry in tree.entries:
                for child in _entries(uid, entry, tree.glob, names):
                    if child not in pages or child == uid:
                        continue
                    if child not in parent:
                        parent[child] = (uid, tree.caption)
                        edges.append((child, "partOf", uid))
                    if previous is not None:
                        edges.append((child, "dependsOn", previous))
                    previous = child
    return parent, edges


def toctree_trails(
    parent: Mapping[str, tuple[str, str]], titles: Mapping[str, str], root_doc: str
) -> dict[str, list[str]]:
    """Each page's breadcrumb along the toctree chain: the pages above it (the root document
    left out) and the captions of the toctrees listing them."""

    def trail(uid: str, seen: frozenset[str] = frozenset()) -> list[str]:
        if uid not in parent or uid in seen:
            return []
        up, caption = parent[uid]
        above = trail(up, seen | {uid})
        if up != root_doc:
            above = [*above, titles[up]]
        return [*above, caption] if caption else above

    return {uid: trail(uid) for uid in titles}


def toctree_root(parent: Mapping[str, tuple[str, str]], named: str) -> str:
    """The tree's root document: ``named`` (``conf.py``'s ``root_doc``, else ``index``) when a
    toctree hangs from it, else the page no toctree lists whose toctrees reach the most pages.
    A built tree has no ``conf.py`` to name it: CPython's is ``contents``, and its title
    ("Python Documentation contents") would otherwise head every breadcrumb."""
    children: dict[str, int] = {}
    for up, _caption in parent.values():
        children[up] = children.get(up, 0) + 1
    if named in children or not children:
        return named

    def top(uid: str) -> str:
        seen = {uid}
        while uid in parent and (up := parent[uid][0]) not in seen:
            seen.add(up)
            uid = up
        return uid

    reach: dict[str, int] = {}
    for uid in parent:
        root = top(uid)
        reach[root] = reach.get(root, 0) + 1
    return min(reach, key=lambda uid: (-reach[uid], uid))


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
