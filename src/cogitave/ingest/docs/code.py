"""Code of a page -> ``code_sample`` nodes, and the files its includes name -> ``source_file``
nodes.

A fenced block or an include directive (FastAPI's ``{* ../../docs_src/x.py hl[3] *}``) is a
``code_sample`` numbered in page order (an empty fence or a missing include keeps its number,
so uids stay stable), ``partOf`` its section, which is ``implementedBy`` it. An included file
is a ``source_file`` node once (uid ``src:<path>``), which its samples are ``derivedFrom``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from cogitave.ingest.docs.builder import Builder, Page
from cogitave.ingest.docs.includes import language_of
from cogitave.ingest.docs.parse import MAX_SECTION_LEVEL, CodeBlock
from cogitave.nodes import DimValue


def code_sample(b: Builder, page: Page, n: int, block: CodeBlock) -> None:
    """The ``n``-th code sample of ``page`` (and its source file, for an include)."""
    uid = f"{page.uid}#code-{n}"
    meta: dict[str, Any] = {"path": b.shown(page.file), "line": block.line}
    container_heading = page.parsed.section_of(block.heading)
    meta["url"] = b.absolute(
        page.url
        if container_heading < 0
        else page.at(page.parsed.headings[container_heading].anchor),
        page.file,
    )
    meta["breadcrumb"] = [
        *b.trail.get(page.uid, []),
        page.title,
        *(page.heading_trail(container_heading) if container_heading >= 0 else []),
    ]
    code, language, source = block.code, block.language, None
    if block.include is None and not code.strip():
        return  # an empty fence shows nothing; it keeps its number for stable uids
    if block.include is not None:
        found = _included(b, page, block)
        if found is None:
            return
        source, code, ext_language = found
        language = language if language and language != "text" else ext_language
        meta["include"] = block.include
        if block.options:
            meta["options"] = block.options
    heading = block.heading
    title = page.title
    if heading >= 0:
        h = page.parsed.headings[heading]
        if h.is_section or h.level > MAX_SECTION_LEVEL:
            title = h.text
    content = block.markdown if source is None else f"```{language}\n{code.rstrip()}\n```"
    dims: dict[str, DimValue] = {"code": code, "title": title, "language": language}
    b.graph.node(uid, "code_sample", dims, content, meta)
    container = page.container(heading)
    b.graph.edge(uid, "partOf", container)
    b.graph.edge(container, "implementedBy", uid)
    if source is not None:
        b.graph.edge(uid, "derivedFrom", source)


def _included(b: Builder, page: Page, block: CodeBlock) -> tuple[str, str, str] | None:
    """(source uid, code, language) of an included file, creating its node once."""
    written = block.include or ""
    candidate = b.find_include(page.file, written, block.line)
    if candidate is None:
        b.tally.missing_includes.append(f"{b.shown(page.file)}:{block.line}: {written}")
        return None
    if candidate not in b.sources:
        b.sources[candidate] = _source_node(b, candidate, f"{b.shown(page.file)}:{block.line}")
    uid = b.sources[candidate]
    if uid is None:
        b.tally.missing_includes.append(
            f"{b.shown(page.file)}:{block.line}: {written} (unreadable)"
        )
        return None
    found = b.graph.dims(uid)
    return uid, str(found["code"]), str(found["language"])


def _source_node(b: Builder, file: Path, where: str) -> str | None:
    try:
        code = b.reader.read_text(file, where=where)
    except (OSError, UnicodeDecodeError):
        return None
    if code is None:
        return None  # refused (too large): listed by the reader
    shown = b.shown(file, common=True)
    uid = f"src:{shown}"
    dims: dict[str, DimValue] = {"code": code, "language": language_of(file)}
    b.graph.node(uid, "source_file", dims, code, {"path": shown})
    return uid
