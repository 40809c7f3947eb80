"""A distribution's API entries -> the docs graph, through the same builder a docs tree and a
crawled site go through.

Pages, as the docs reader makes them (:func:`~cogitave.ingest.docs.nodes.page_nodes`):

- ``index``: the distribution's README (``METADATA``'s long description; reStructuredText
  rendered to Markdown), titled by its name; its headings are sections;
- ``api/<module>`` (``api/httpx``, ``api/packaging.version``): one page per public module,
  its docstring and the list of its objects, each linking to the object's anchor; ``partOf``
  the module above it, the top-level ones ``partOf`` the index; its dotted name (and where
  it is defined, when another module re-exports it) among its ``aliases``.

Each object is an ``api`` node whose uid is its public dotted name (``httpx.Client``), as a
Sphinx page's objects are: title the dotted name (what ``resolve_xref`` matches an API symbol
against), ``code`` its signature, ``body`` its docstring, ``content`` the signature in a
``python`` fence then the docstring as Markdown (a class lists its members), ``url`` the
module page's at the anchor of the name, ``path`` and ``line`` the file and line it is
defined at (``httpx/_client.py``: a search folds hits by that file, as it folds a page's
sections), ``partOf`` its module page (a method or attribute: its class). Its meta adds what
a Sphinx object has not: ``aliases`` (the other names that reach it, the defining path among
them: ``resolve_xref("attr._next_gen.define")`` finds ``attrs.define``) and ``canonical``.

No file is read while building (the entries hold the text): the builder's reader is confined
to nothing, so a docstring naming an include reads no file.
"""

from __future__ import annotations

import re
import time
from collections import defaultdict
from pathlib import Path

from cogitave.ingest.confined import TreeReader
from cogitave.ingest.docs.builder import Builder, Page
from cogitave.ingest.docs.edges import page_links
from cogitave.ingest.docs.frontmatter import FrontMatter, FrontMatterMapping
from cogitave.ingest.docs.nodes import page_nodes
from cogitave.ingest.docs.read import DocsBatch, finish
from cogitave.ingest.docs.rst import ApiObject
from cogitave.ingest.docs.site import Site
from cogitave.ingest.docs.sphinx import ApiEntry
from cogitave.ingest.pyapi.docstrings import fence, rst_markdown, summary
from cogitave.ingest.pyapi.entries import ApiDoc
from cogitave.ingest.pyapi.read import PackageApi
from cogitave.schema import Schema

INDEX = "index"
_SPACE = re.compile(r"\s+")


class _NoFiles(TreeReader):
    """A reader that reads nothing: the entries carry every text."""

    def allows(self, path: str | Path) -> bool:
        return False


def page_of(module: str) -> str:
    """The uid of a public module's page."""
    return f"api/{module}"


def build_batch(api: PackageApi, schema: Schema | None = None) -> DocsBatch:
    """The docs graph of a distribution's API (see the module doc)."""
    started = time.perf_counter()
    root = api.source.root
    dist = api.source.dist
    site = Site("plain", root, root, "github", reader=_NoFiles(root))
    b = Builder(site, FrontMatterMapping())
    _readme_page(b, api)
    by_module: dict[str, list[ApiDoc]] = defaultdict(list)
    for entry in api.entries:
        by_module[entry.module].append(entry)
    modules = {e.name: e for e in api.entries if e.kind == "module"}
    pages: dict[str, Page] = {}
    for module in sorted(by_module, key=lambda m: (m.count("."), m)):
        own = modules.get(module)
        pages[module] = _module_page(b, module, own, by_module[module])
    for module, page in pages.items():
        parent = module.rpartition(".")[0]
        while parent and parent not in pages:
            parent = parent.rpartition(".")[0]
        up = page_of(parent) if parent else INDEX
        b.graph.edge(page.uid, "partOf", up)
        # The distribution's name above its modules, unless the top module repeats it.
        top = module.split(".", 1)[0]
        trail = [] if top.casefold() == dist.name.casefold() else [dist.name]
        name = ""
        for part in module.split(".")[:-1]:
            name = f"{name}.{part}" if name else part
            if name in pages:
                trail.append(pages[name].title)
        b.trail[page.uid] = trail
    for page in b.pages.values():
        page_nodes(b, page)
    for page in b.pages.values():
        page_links(b, page)
    _place_members(b, api.entries)
    for module, page in pages.items():  # a module's dotted name reaches its page
        own = modules.get(module)
        draft = b.graph.nodes[page.uid]
        names = [module, *(own.aliases if own is not None else ())]
        draft.meta["aliases"] = sorted({*draft.meta.get("aliases", ()), *names})
    b.tally.files = api.modules_read
    for s in api.skipped:
        b.reader.refuse("", s.path, s.reason)
    batch = finish(b, schema, time.perf_counter() - started, str(root))
    version = dist.version or "unknown version"
    head = (
        f"python package {dist.name} {version} ({', '.join(dist.packages) or 'no packages'}): "
        f"{api.modules_read} modules read, {len(api.entries)} public objects, "
        f"{len(api.skipped)} left out, {api.unresolved} re-exported names not found in its modules"
    )
    batch.stats["pyapi"] = {
        "name": dist.name,
        "version": dist.version,
        "packages": list(dist.packages),
        "modules_read": api.modules_read,
        "objects": len(api.entries),
        "skipped": [str(s) for s in api.skipped[:50]],
        "skipped_count": len(api.skipped),
        "unresolved": api.unresolved,
    }
    batch.report = head + "\n" + batch.report
    return batch


def _readme_page(b: Builder, api: PackageApi) -> None:
    """The ``index`` page: the README, else the summary, titled by the distribution."""
    dist = api.source.dist
    readme = dist.readme.strip("\n")
    if dist.readme_type == "rst" and readme:
        readme = rst_markdown(readme)
    elif dist.readme_type == "text" and readme:
        readme = fence(readme, "text")
    body = readme or dist.summary or f"The Python distribution {dist.name}."
    title = dist.name + (f" {dist.version}" if dist.version else "")
    text = f"# {title}\n\n{_demote_title(body)}\n"
    front = FrontMatter({"title": title}, text, 0)
    file = dist.dist_info / "METADATA" if dist.dist_info else api.source.root
    b.add_page(INDEX, "index.md", file, text, front, {})
    b.trail[INDEX] = []


def _demote_title(markdown: str) -> str:
    """A README's own ``# Title`` is the page's title already: dropped when it is the first
    line, other level-1 headings made level 2 (the page has one title)."""
    lines = markdown.split("\n")
    if lines and lines[0].startswith("# "):
        lines = lines[1:]
    return "\n".join(("#" + line) if line.startswith("# ") else line for line in lines).strip()


def _module_page(b: Builder, module: str, own: ApiDoc | None, entries: list[ApiDoc]) -> Page:
    """A public module's page: its docstring, its objects listed, their API entries."""
    uid = page_of(module)
    items = [e for e in entries if e.name != module and not e.parent]
    lines = [f"# {module}", ""]
    if own is not None and own.markdown:
        lines += [own.markdown, ""]
    for e in items:
        first = summary(e.docstring)
        link = f"- [`{e.name}`](#{e.name}) ({e.kind})"
        lines.append(f"{link}: {_SPACE.sub(' ', first)}" if first else link)
    text = "\n".join(lines).rstrip() + "\n"
    file = b.site.base / own.path if own is not None and own.path else b.site.base
    front = FrontMatter({"title": module}, text, 0)
    page = b.add_page(uid, f"{uid}.md", file, text, front, {})
    members: dict[str, list[ApiDoc]] = defaultdict(list)
    for e in entries:
        if e.parent:
            members[e.parent].append(e)
    anchors = b.resolver.anchors[page.uid]
    for e in entries:
        if e.name == module:
            continue  # the module is its page
        obj = ApiObject(e.name, e.kind, e.signature, e.name, e.line)
        page.api.append(ApiEntry(e.name, obj, -1, _entry_markdown(e, members.get(e.name, []))))
        anchors[e.name] = e.name
    return page


def _entry_markdown(e: ApiDoc, members: list[ApiDoc]) -> str:
    """An object's content: its signature fenced, its docstring, a class's members."""
    parts = [fence(e.signature) if e.signature else f"`{e.kind} {e.name}`"]
    if e.markdown:
        parts.append(e.markdown)
    if members:
        rows = []
        for m in members:
            first = summary(m.docstring)
            short = m.name.rsplit(".", 1)[-1]
            rows.append(f"- `{short}` ({m.kind}): {first}" if first else f"- `{short}` ({m.kind})")
        parts.append("**Members**\n\n" + "\n".join(rows))
    return "\n\n".join(parts)


def _place_members(b: Builder, entries: list[ApiDoc]) -> None:
    """What the docs reader's ``api`` nodes do not carry: aliases, where each object is
    defined; a member ``partOf`` its class, its breadcrumb through it."""
    for e in entries:
        draft = b.graph.nodes.get(e.name)
        if draft is None or draft.kind != "api":
            continue
        meta = draft.meta
        if e.aliases:
            meta["aliases"] = list(e.aliases)
        meta["canonical"] = e.canonical
        if e.path:  # the file it came from: what a search groups hits by
            meta["path"] = e.path
        meta["line"] = e.line
        if e.parent and e.parent in b.graph.nodes:
            out = b.graph.edges.get(e.name, {})
            for key in [k for k in out if k[0] == "partOf"]:
                del out[key]
            b.graph.edge(e.name, "partOf", e.parent)
            crumbs = list(meta.get("breadcrumb", []))
            if crumbs:
                meta["breadcrumb"] = [*crumbs[:-1], e.parent, e.name]
