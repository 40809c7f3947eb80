"""A page of the builder -> its nodes: the ``page``, a ``section`` per heading that makes one,
a ``term`` per entry of a long definition list, a ``code_sample`` per fenced block or include
(:mod:`~cogitave.ingest.docs.code`) and an ``api`` node per object a Sphinx page declares;
each ``partOf`` its innermost section (or the page), with ``url``, ``path`` and
``breadcrumb``."""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

from cogitave.ingest.docs.builder import Builder, Page
from cogitave.ingest.docs.code import code_sample
from cogitave.ingest.docs.parse import DefEntry, parse_page

# A section listing at least this many definition-list entries with ids (a reference of
# settings or fields) gets a node per entry; a shorter list stays in its section's node.
MIN_SECTION_TERMS = 20
_REF_LINK = re.compile(r"\[([^\]\n]+)\]\[[^\]\n]*\]")  # [text][] and [text][label]
_DEF_MARK = re.compile(r"(?m)^: ")  # a definition line's marker


def page_nodes(b: Builder, page: Page) -> None:
    """Every node of ``page`` (see the module doc), in page order."""
    fm, parsed = page.front.data, page.parsed
    desc = b.strings(fm, b.mapping.description, b.shown(page.file))
    keywords = b.strings(fm, b.mapping.keywords, b.shown(page.file))
    crumbs = [*b.trail.get(page.uid, []), page.title]
    meta: dict[str, Any] = {
        "path": b.shown(page.file),
        "url": b.absolute(page.url, page.file),
        "breadcrumb": crumbs,
    }
    if page.aliases:
        meta["aliases"] = sorted(set(page.aliases))
    b.graph.node(
        page.uid,
        "page",
        {
            "title": page.title,
            "body": "\n".join(parsed.intro),
            "description": "\n".join(desc),
            "keywords": ", ".join(keywords),
        },
        b.expanded(page, _page_markdown(page)),
        meta,
    )
    for i, h in enumerate(parsed.headings):
        if not h.is_section:
            continue
        uid = f"{page.uid}#{h.anchor}"
        b.graph.node(
            uid,
            "section",
            {"title": h.text, "body": parsed.section_body(i)},
            b.expanded(page, parsed.section_markdown(i)),
            {
                "path": meta["path"],
                "url": b.absolute(page.at(h.anchor), page.file),
                "anchor": h.anchor,
                "level": h.level,
                "line": h.line + page.front.offset + 1,
                "breadcrumb": [*crumbs, *page.heading_trail(i)],
            },
        )
        b.graph.edge(uid, "partOf", page.container(h.parent))
    sections = [parsed.section_of(e.heading) for e in parsed.entries]
    per_section = Counter(sections)
    for entry, section in zip(parsed.entries, sections, strict=True):
        if per_section[section] >= MIN_SECTION_TERMS:
            _term(b, page, entry, section, crumbs)
    for n, block in enumerate(parsed.code, 1):
        code_sample(b, page, n, block)
    _api_nodes(b, page)


def _term(b: Builder, page: Page, entry: DefEntry, section: int, crumbs: list[str]) -> None:
    """A definition-list entry with an id (a setting, a parameter, a glossary term) as a
    ``term`` node ``partOf`` its section: a reference page lists dozens of them in one
    section, too long for one vector or a BM25 match on one of them."""
    uid = f"{page.uid}#{entry.anchor}"
    if uid in b.graph.nodes:
        return
    # Alone, a reference link (`[text][]`) has no definition to resolve: keep its text.
    written = _REF_LINK.sub(r"\1", entry.markdown)
    head, _, rest = written.partition("\n")
    term = "\n".join(parse_page(head).intro).strip() or head.strip("`")
    definition = "\n".join(parse_page(_DEF_MARK.sub("", rest)).intro)
    b.graph.node(
        uid,
        "term",
        {"title": term, "body": definition},
        b.expanded(page, entry.markdown),
        {
            "path": b.shown(page.file),
            "url": b.absolute(page.at(entry.anchor), page.file),
            "anchor": entry.anchor,
            "line": entry.line + page.front.offset + 1,
            "breadcrumb": [
                *crumbs,
                *(page.heading_trail(section) if section >= 0 else []),
                term,
            ],
        },
    )
    b.graph.edge(uid, "partOf", page.container(entry.heading))


def _api_nodes(b: Builder, page: Page) -> None:
    """``api`` nodes for the objects ``page`` declares, ``partOf`` their section."""
    for entry in page.api:
        if entry.uid in b.graph.nodes:
            continue  # declared twice (a module's summary and its reference): first one wins
        obj = entry.obj
        container = page.container(entry.heading)
        container_heading = page.parsed.section_of(entry.heading)
        crumbs = [*b.trail.get(page.uid, []), page.title]
        if container_heading >= 0:
            crumbs.extend(page.heading_trail(container_heading))
        md = entry.markdown
        body = md.split("\n\n", 1)[1] if "\n\n" in md else ""
        b.graph.node(
            entry.uid,
            "api",
            {"title": obj.name, "body": body, "code": obj.signature},
            b.expanded(page, md),
            {
                "path": b.shown(page.file),
                "url": b.absolute(f"{page.url}#{obj.anchor}", page.file),
                "anchor": obj.anchor,
                "objtype": obj.objtype,
                "breadcrumb": [*crumbs, obj.name],
            },
        )
        b.graph.edge(entry.uid, "partOf", container)


def _page_markdown(page: Page) -> str:
    """The page's Markdown; a title kept in front matter becomes its first heading."""
    body = page.front.body.strip("\n")
    return body if page.parsed.title else f"# {page.title}\n\n{body}"
