"""MDX and site-flavoured Markdown -> plain Markdown, line for line.

Docusaurus and Next.js sites (React's docs) write MDX: ``import``/``export`` statements, JSX
components around Markdown (``<Intro>``, ``<Pitfall>``, ``<Sandpack>``), ``{/* comments */}``
and custom heading ids ``## Title {/*title-id*/}``. Docusaurus and VitePress wrap text in
containers (``:::tip``, ``::: code-group``); VitePress imports code with ``<<< @/file``.

:func:`to_markdown` keeps the text and code, drops the markup, and keeps every line where it was
(removed lines become blank), so reported line numbers still point into the file. Fenced code is
never touched.
"""

from __future__ import annotations

import re

_FENCE = re.compile(r"^\s*(`{3,}|~{3,})")
_IMPORT = re.compile(r"^(?:import|export)\s")
_HEADING_ID = re.compile(r"^(#{1,6}\s.*?)\s*\{/\*\s*([\w.:-]+)\s*\*/\}\s*$")
_COMMENT = re.compile(r"\{/\*.*?\*/\}", re.S)
# A line that is only JSX tags of components (capitalised names), e.g. `<Pitfall>` or
# `</Sandpack>` or `<YouWillLearn isChapter={true}>`.
_TAG = r"</?[A-Z][\w.]*(?:\s+[^<>]*?)?/?>"
_TAG_LINE = re.compile(rf"^\s*(?:{_TAG}\s*)+$")
_OPEN_TAG_START = re.compile(r"^\s*<[A-Z][\w.]*(?:\s|$)")
_INLINE_TAG = re.compile(_TAG)
_CODE_SPAN = re.compile(r"(`+[^`]*?`+)")
_CONTAINER = re.compile(r"^\s*:{3,}\s*([\w-]*)\s*(.*?)\s*$")
_CODE_IMPORT = re.compile(r"^\s*<<<\s*(\S+?)(?:\{[^}]*\})?(?:\s+\[[^\]]*\])?\s*$")


def to_markdown(text: str, *, mdx: bool = True) -> str:
    """The page with MDX/JSX and container markup removed, line numbers kept."""
    lines = text.split("\n")
    out: list[str] = []
    fence: str | None = None
    skipping = ""  # "import": inside a multi-line import/export; "tag": a multi-line JSX tag
    depth = 0
    for line in lines:
        m = _FENCE.match(line)
        if fence is not None:
            out.append(line)
            closes = m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence)
            if closes and not line.strip()[len(m.group(1)) :].strip():
                fence = None
            continue
        if skipping == "import":
            depth += line.count("{") - line.count("}")
            out.append("")
            if depth <= 0 and (line.rstrip().endswith((";", "}", ")", "'", '"')) or not line):
                skipping = ""
            continue
        if skipping == "tag":
            out.append("")
            if line.rstrip().endswith(">"):
                skipping = ""
            continue
        if m:
            fence = m.group(1)
            out.append(line)
            continue
        if mdx and _IMPORT.match(line):
            depth = line.count("{") - line.count("}")
            stripped = line.rstrip()
            done = depth <= 0 and (stripped.endswith((";", "'", '"', "}", ")")) or " from " in line)
            skipping = "" if done else "import"
            out.append("")
            continue
        out.append(_line(line, mdx))
        if mdx and _OPEN_TAG_START.match(line) and not _INLINE_TAG.search(line):
            out[-1] = ""
            skipping = "tag"
    return "\n".join(out)


def _line(line: str, mdx: bool) -> str:
    c = _CONTAINER.match(line)
    if c:
        title = c.group(2).strip()
        # `::: tip Note` / `:::tip[Note]`: keep the title as bold text, drop the marker.
        title = title.strip("[]{}").strip()
        return f"**{title}**" if title and c.group(1) else ""
    imp = _CODE_IMPORT.match(line)
    if imp:
        path = imp.group(1)
        path = path[2:] if path.startswith("@/") else path
        return "{* " + path + " *}"
    if not mdx:
        return line
    h = _HEADING_ID.match(line)
    if h:
        return f"{_strip_tags(h.group(1))} {{ #{h.group(2)} }}"
    if "{/*" in line:
        line = _COMMENT.sub("", line)
    if _TAG_LINE.match(line):
        return ""
    return _strip_tags(line)


def _strip_tags(line: str) -> str:
    """Component tags removed, except inside inline code (`<Fragment ref={r}>` is an example)."""
    if "<" not in line or not _INLINE_TAG.search(line):
        return line
    parts = _CODE_SPAN.split(line)
    # split() with one group: even items are outside code spans, odd ones are the spans.
    return "".join(p if i % 2 else _INLINE_TAG.sub("", p) for i, p in enumerate(parts))
