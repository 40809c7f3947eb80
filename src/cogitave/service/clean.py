"""Markdown an agent reads as it comes: what docs keep for a browser, made text.

A docs page's Markdown carries things a browser renders and a model only pays tokens for:
raw HTML wrappers (``<div class="termy">``), images, HTML tables, fence attributes
(```` ```python hl_lines="3" title="main.py" ````). :func:`clean_block` turns one Markdown
block into what it says: wrappers dropped (their text kept), images as their alt text, an HTML
table as a Markdown table without the padding that aligns its columns, a fence line with its
language and the file it shows only (```` ```python title="main.py" ````: the file name is
often what a question asks); the lines inside a code fence are never touched. :func:`demote`
puts a block's heading below a given level, so the headings inside one hit of an answer never
read as the start of another hit. :func:`absolute_fragments` makes a link that is only a
fragment (``[register()](#flask.Blueprint.register)``, an API page's own anchors) a link to the
page it is on, so it still opens once the block stands apart from its page.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser

from cogitave.ingest.tables import markdown_table

_FENCE_LINE = re.compile(
    r"^( {0,3})(`{3,}|~{3,})\s*(?:\{(?:code-block|code|sourcecode)\}\s*)?([\w+#.-]*)[^\n]*$"
)
"""A fence line: indent, fence, language (MyST's ``{code-block} python`` gives ``python``)."""
_FILE_ATTR = re.compile(
    r"""\b(?:title|file|filename|name)\s*=\s*(?:"([^"]+)"|'([^']+)'|([^\s}"']+))"""
    r"|\[([^\]\s]+)\]"
)
"""The file a fence shows: MkDocs and Docusaurus ``title="main.py"``, Hugo
``{file="layouts/x.html"}``, VitePress ``[vite.config.js]``."""
_MD_IMAGE = re.compile(r"!\[([^\]]*)\]\([^)]*\)")
_HTML_IMAGE = re.compile(r"<img\b[^>]*>", re.IGNORECASE)
_ALT = re.compile(r"""\balt\s*=\s*(?:"([^"]*)"|'([^']*)')""", re.IGNORECASE)
_TABLE = re.compile(r"<table\b.*?</table\s*>", re.IGNORECASE | re.DOTALL)
_WRAPPER = re.compile(
    r"</?(?:div|span|p|section|article|figure|figcaption|center|font|small|big|"
    r"details|summary|abbr|sup|sub|u|ins|mark|kbd|br|hr)\b[^>]*>",
    re.IGNORECASE,
)
_HEADING = re.compile(r"^(#{1,6})(\s)")
_FENCE_OPEN = re.compile(r" {0,3}(?:`{3,}|~{3,})")
_FRAGMENT_LINK = re.compile(
    r"(`+)(?:.|\n)*?\1"  # an inline code span: left as it is
    r"|(?P<open>\]\(\s*|^\s{0,3}\[[^\]\n]+\]:\s*|\bhref\s*=\s*[\"']?)(?P<frag>#[^\s)\"'>]*)",
    re.MULTILINE | re.IGNORECASE,
)
"""A link target that is only ``#fragment``: inline (``](#x)``), a reference definition
(``[x]: #x``) or an HTML ``href="#x"``; inline code spans are matched first so they stay as
they are."""
_BLANKS = re.compile(r"\n{3,}")
_PADDING = re.compile(r"(?<=\S) {2,}(?=\|)|(?<=\|) {2,}")


def clean_block(block: str) -> str:
    """One Markdown block as an agent should read it (see the module doc)."""
    first = block.split("\n", 1)[0]
    if m := _FENCE_LINE.match(first):
        _, _, rest = block.partition("\n")
        if not rest:
            return block
        named = _FILE_ATTR.search(first, m.end(3))
        name = next((g for g in named.groups() if g), "") if named else ""
        title = f' title="{name}"' if name and '"' not in name else ""
        return f"{m.group(1)}{m.group(2)}{m.group(3)}{title}\n{rest}"
    out = _TABLE.sub(lambda t: html_table(t.group(0)), block)
    out = _HTML_IMAGE.sub(_alt_text, out)
    out = _MD_IMAGE.sub(lambda m: f"(image: {m.group(1)})" if m.group(1).strip() else "", out)
    out = _WRAPPER.sub("", out)
    out = _BLANKS.sub("\n\n", out).strip()
    return compact_table(out) if is_table(out) else out


def absolute_fragments(block: str, url: str) -> str:
    """``block`` with each link whose target is only ``#fragment`` pointing at page ``url``
    plus the fragment (the page's own fragment, if ``url`` has one, replaced); a code fence and
    inline code are never touched, and a block is returned as it is when ``url`` is empty."""
    page = url.split("#", 1)[0]
    if not page or "#" not in block or _FENCE_OPEN.match(block):
        return block

    def sub(m: re.Match[str]) -> str:
        if m.group("frag") is None:
            return m.group(0)
        return m.group("open") + page + m.group("frag")

    return _FRAGMENT_LINK.sub(sub, block)


def is_table(block: str) -> bool:
    """Whether a block is a Markdown table (every line a row, the second its rule)."""
    lines = block.split("\n")
    return (
        len(lines) >= 2
        and all(ln.lstrip().startswith("|") for ln in lines)
        and set(lines[1].replace("|", "").strip()) <= set("-: ")
    )


def compact_table(block: str) -> str:
    """A Markdown table without the padding that aligns its columns in a text editor: the
    spaces cost tokens and say nothing (``|  a   |`` -> ``| a |``, rules ``|---|``)."""
    lines = block.split("\n")
    cells = [c.strip() for c in lines[1].strip().strip("|").split("|")]
    rule = (
        "|"
        + "|".join(
            (":" if c.startswith(":") else "") + "---" + (":" if c.endswith(":") else "")
            for c in cells
        )
        + "|"
    )
    return "\n".join(
        [_PADDING.sub(" ", lines[0]), rule, *(_PADDING.sub(" ", ln) for ln in lines[2:])]
    )


def _alt_text(m: re.Match[str]) -> str:
    alt = _ALT.search(m.group(0))
    text = (alt.group(1) or alt.group(2) or "").strip() if alt else ""
    return f"(image: {text})" if text else ""


def demote(block: str, level: int) -> str:
    """A heading block at ``level`` at least (``## Title`` -> ``### Title`` for 3)."""
    m = _HEADING.match(block)
    if not m or len(m.group(1)) >= level:
        return block
    return "#" * min(level, 6) + block[len(m.group(1)) :]


class _Table(HTMLParser):
    """Rows of cell texts from an HTML table (header cells in the first row)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.rows: list[list[str]] = []
        self._cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "tr":
            self.rows.append([])
        elif tag in ("td", "th"):
            if not self.rows:
                self.rows.append([])
            self._cell = []
        elif tag == "br" and self._cell is not None:
            self._cell.append(" ")

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self._cell is not None:
            self.rows[-1].append(" ".join("".join(self._cell).split()))
            self._cell = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)


def html_table(html: str) -> str:
    """An HTML table as a Markdown table (its first row the header)."""
    parser = _Table()
    parser.feed(html)
    return markdown_table(parser.rows)
