"""A parsed reStructuredText page (:class:`~cogitave.ingest.docs.rst.RstDoc`) -> Markdown.

Headings carry their docutils id as ``{ #id }`` so anchors match Sphinx's HTML; code is fenced
with its language (doctest blocks as ``pycon``); admonitions become block quotes under a bold
label; each ``:ref:``/``:doc:``/``:term:``/Python-domain role asks a callback for its URL and
stays plain text (shown as code) when there is none. Declared API objects are returned with the
Markdown of their description, and every id met is placed under its section's anchor.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from docutils import nodes

from cogitave.ingest.docs.rst import (
    ApiObject,
    IncludeReader,
    RstDoc,
    Xref,
    XrefLookup,
    api_node,
    include_node,
    toctree_node,
    xref_node,
)
from cogitave.ingest.tables import markdown_table

_ESCAPE = re.compile(r"([\\`*\[\]<])")
_UNDERSCORE = re.compile(r"(?<![\w])_|_(?![\w])")


def _escape(text: str) -> str:
    text = _ESCAPE.sub(r"\\\1", text)
    text = _UNDERSCORE.sub(r"\\_", text)
    text = re.sub(r"^(\s*)([#>+-]|\d+\.)(\s)", r"\1\\\2\3", text, flags=re.M)
    # a line of ``=`` or ``-`` (an underline in text kept as written) is no heading's
    return re.sub(r"^(\s*)([=-])(?=[=-]*[ \t]*$)", r"\1\\\2", text, flags=re.M)


@dataclass
class Rendered:
    """A page's Markdown, with the API objects and anchors placed under its headings."""

    markdown: str
    # (id, anchor of the enclosing section heading; "" for the page itself)
    anchors: list[tuple[str, str]] = field(default_factory=list)
    api: list[tuple[ApiObject, str, str]] = field(default_factory=list)  # (obj, section, md)
    unresolved: list[tuple[Xref, str]] = field(default_factory=list)  # (xref, reason)
    resolved: list[Xref] = field(default_factory=list)


class _Renderer:
    def __init__(self, doc: RstDoc, lookup: XrefLookup, read_include: IncludeReader) -> None:
        self.doc = doc
        self.lookup = lookup
        self.read_include = read_include
        self.section_anchor = ""
        self.out = Rendered("")
        self.objects = {o.anchor: o for o in doc.objects}

    def render(self) -> Rendered:
        blocks = self.blocks(self.doc.doctree.children, 0)
        self.out.markdown = "\n\n".join(b for b in blocks if b.strip()) + "\n"
        return self.out

    # block level ------------------------------------------------------------------------
    def blocks(self, children: list[nodes.Node], depth: int) -> list[str]:
        out: list[str] = []
        for child in children:
            out.extend(self.block(child, depth))
        return out

    def block(self, node: nodes.Node, depth: int) -> list[str]:
        if isinstance(node, nodes.Element) and not isinstance(node, nodes.section | api_node):
            # Labelled paragraphs, glossary terms...: their ids land on the enclosing section.
            here = self.section_anchor
            self.out.anchors.extend((i, here) for i in node.get("ids", ()))
            if isinstance(node, nodes.definition_list):
                for term in node.findall(nodes.term):
                    self.out.anchors.extend((i, here) for i in term["ids"])
        if isinstance(node, nodes.section):
            return self.section(node, depth + 1)
        if isinstance(node, nodes.title | nodes.subtitle):
            return [f"**{self.inline(node)}**"]
        if isinstance(node, nodes.paragraph):
            return [self.inline(node)]
        if isinstance(node, nodes.math_block):  # `.. math::`: the formula as written
            return [f"$$\n{node.astext().strip()}\n$$"]
        if isinstance(node, nodes.doctest_block):
            return [self.fence(node.astext(), "pycon")]
        if isinstance(node, nodes.literal_block) and node.get("verbatim"):
            # code kept as written (an unknown directive's body): no language is none
            return [self.fence(node.astext(), node.get("language") or "", verbatim=True)]
        if isinstance(node, nodes.literal_block):
            language = node.get("language") or self._classes_language(node)
            return [self.fence(node.astext(), language or "text")]
        if isinstance(node, include_node):
            found = self.read_include(self.doc.docname, node["path"])
            if found is None:
                return []
            code, language = found
            return [self.fence(_lines(code, node["lines"]), node["language"] or language)]
        if isinstance(node, nodes.bullet_list | nodes.enumerated_list):
            return [self.list(node, isinstance(node, nodes.enumerated_list))]
        if isinstance(node, nodes.definition_list):
            items = []
            for item in node.children:
                term = " ".join(self.inline(c) for c in item.children if isinstance(c, nodes.term))
                body = [c for c in item.children if isinstance(c, nodes.definition)]
                lead, rest = self.labelled(body[0] if body else None, depth)
                text = f"**{term}**" + ("\n" + _indent(lead, ": ", "  ") if lead else "")
                items.append(text + ("\n\n" + _indent(rest, "  ", "  ") if rest else ""))
            return items
        if isinstance(node, nodes.field_list):
            rows = []
            for f in node.children:
                name = self.inline(f[0]) if f.children else ""
                lead, rest = self.labelled(f[1] if len(f.children) > 1 else None, depth)
                text = f"- **{name}**:" + (f" {lead}" if lead else "")
                rows.append(text + ("\n\n" + _indent(rest, "  ", "  ") if rest else ""))
            return ["\n".join(rows)]
        if isinstance(node, nodes.Admonition):
            label = node.tagname.replace("_", " ").capitalize()
            inner = self.blocks(node.children, depth)
            if node.tagname == "admonition" and inner:
                label, inner = inner[0].strip("*"), inner[1:]
            body = "\n\n".join(inner)
            return [_indent(f"**{label}:**\n\n{body}", "> ", "> ")]
        if isinstance(node, nodes.block_quote):
            return [_indent("\n\n".join(self.blocks(node.children, depth)), "> ", "> ")]
        if isinstance(node, nodes.line_block):
            return ["  \n".join(self.inline(line) for line in node.findall(nodes.line))]
        if isinstance(node, nodes.table):
            return [self.table(node)]
        if isinstance(node, api_node):
            return self.api(node, depth)
        if isinstance(node, nodes.comment | nodes.system_message | nodes.target | toctree_node):
            return []
        if isinstance(node, nodes.image | nodes.raw | nodes.substitution_definition):
            return []
        if isinstance(node, nodes.Text):
            return [_escape(node.astext())]
        if isinstance(node, nodes.Element):
            return self.blocks(node.children, depth)
        return []

    def labelled(self, body: nodes.Element | None, depth: int) -> tuple[str, str]:
        """A definition's or a field's body as (its first paragraph, shown beside the term or
        the name; the rest, its own blocks below): a block that is no paragraph (a literal
        block first of all) never follows a term on its line, where it would be text."""
        if body is None:
            return "", ""
        lead = ""
        rest: list[str] = []
        for k, child in enumerate(body.children):
            shown = [b for b in self.block(child, depth) if b.strip()]
            if k == 0 and isinstance(child, nodes.paragraph) and shown:
                lead, shown = shown[0], shown[1:]
            rest += shown
        return lead, "\n\n".join(rest)

    def section(self, node: nodes.section, level: int) -> list[str]:
        title = self.inline(node[0]) if node.children else ""
        ids = list(node["ids"])
        anchor = ids[0] if ids and level > 1 else ""
        for extra in ids[1:] if level > 1 else ids:
            self.out.anchors.append((extra, anchor))
        attr = f" {{ #{anchor} }}" if anchor else ""
        head = f"{'#' * min(level, 6)} {title or anchor or 'Section'}{attr}"
        outer, self.section_anchor = self.section_anchor, anchor
        try:
            return [head, *self.blocks(node.children[1:], level)]
        finally:
            self.section_anchor = outer

    def api(self, node: api_node, depth: int) -> list[str]:
        obj = self.objects.get(node["anchor"]) or ApiObject(
            node["name"], node["objtype"], node["signature"], node["anchor"], 0
        )
        self.out.anchors.append((node["anchor"], self.section_anchor))
        more: list[tuple[str, str]] = node.get("more", [])
        self.out.anchors.extend((full, self.section_anchor) for full, _ in more)
        if node["objtype"] == "module":
            # The module's node: its synopsis; the page around it is its documentation.
            synopsis = node.get("synopsis", "")
            md = f"`module {node['name']}`" + (f"\n\n{_escape(synopsis)}" if synopsis else "")
            self.out.api.append((obj, self.section_anchor, md))
            return []
        sig = node["signature"]
        kind = "" if node["objtype"] in ("function", "method", "data") else node["objtype"] + " "
        sigs = [sig, *(other for _, other in node.get("more", []))]
        head = "\n".join(_code(kind + one) for one in sigs)
        body = self.blocks(node.children, depth)
        md = "\n\n".join([head, *(b for b in body if b.strip())])
        self.out.api.append((obj, self.section_anchor, md))
        for full, sig in more:
            other = self.objects.get(full) or ApiObject(full, node["objtype"], sig, full, 0)
            self.out.api.append((other, self.section_anchor, md))
        return [head, *body]

    def list(self, node: nodes.Element, ordered: bool) -> str:
        items = []
        for n, item in enumerate(node.children, 1):
            marker = f"{n}. " if ordered else "- "
            body = "\n\n".join(self.blocks(item.children, 0))
            items.append(_indent(body, marker, " " * len(marker)))
        return "\n".join(items)

    def table(self, node: nodes.table) -> str:
        return markdown_table(
            [
                [" ".join(self.blocks(e.children, 0)) for e in row.children]
                for row in node.findall(nodes.row)
            ]
        )

    @staticmethod
    def fence(code: str, language: str, verbatim: bool = False) -> str:
        """A fenced block; ``verbatim``: the code's trailing whitespace kept too."""
        ticks = "```"
        while ticks in code:
            ticks += "`"
        return f"{ticks}{language}\n{code if verbatim else code.rstrip()}\n{ticks}"

    @staticmethod
    def _classes_language(node: nodes.Element) -> str:
        classes = [c for c in node.get("classes", []) if c not in ("code", "literal-block")]
        return classes[0] if classes else "python"

    # inline level -----------------------------------------------------------------------
    def inline(self, node: nodes.Node) -> str:
        parts: list[str] = []
        for child in node.children if isinstance(node, nodes.Element) else [node]:
            parts.append(self.inline_one(child))
        return "".join(parts).strip() if isinstance(node, nodes.paragraph) else "".join(parts)

    def inline_one(self, node: nodes.Node) -> str:
        if isinstance(node, nodes.Text):
            return _escape(node.astext())
        if isinstance(node, nodes.literal | nodes.title_reference | nodes.math):
            # a literal, the default role's `text` and math: code, as written
            return _code(node.astext())
        if isinstance(node, nodes.emphasis):
            return f"*{self.inline(node)}*"
        if isinstance(node, nodes.strong):
            return f"**{self.inline(node)}**"
        if isinstance(node, xref_node):
            return self.xref(node)
        if isinstance(node, nodes.reference):
            text = self.inline(node)
            uri = node.get("refuri") or (f"#{node['refid']}" if node.get("refid") else "")
            return f"[{text}]({uri})" if uri else text
        if isinstance(node, nodes.target | nodes.system_message | nodes.footnote_reference):
            return ""
        if isinstance(node, nodes.image):
            return ""
        if isinstance(node, nodes.Element):
            return self.inline(node)
        return ""

    def xref(self, node: xref_node) -> str:
        role, target, title = node["role"], node["target"], node["title"]
        plain = role.startswith("py:") and target.startswith("!")
        target = target.lstrip("!")
        shown_target = target.lstrip("~")
        if role.startswith("py:") and target.startswith("~"):
            shown_target = shown_target.rsplit(".", 1)[-1]
        if role.startswith("py:") and role in ("py:func", "py:meth") and not title:
            shown_target = shown_target if shown_target.endswith(")") else shown_target + "()"
        xref = Xref(role, target.lstrip("~"), node["module"], node["klass"], node["line"])
        found = None if plain else self.lookup(xref)
        if found is None:
            if not plain:
                self.out.unresolved.append((xref, ""))
            return (title and _escape(title)) or _code(shown_target)
        self.out.resolved.append(xref)
        url, default = found
        text = _escape(title) if title else (_escape(default) if role == "doc" or (
            role == "ref" and default) else _code(shown_target))  # fmt: skip
        return f"[{text}]({url})"


def render_markdown(doc: RstDoc, lookup: XrefLookup, read_include: IncludeReader) -> Rendered:
    """The page as Markdown (headings with ``{ #id }``, fenced code, lists, links resolved)."""
    return _Renderer(doc, lookup, read_include).render()


def _code(text: str) -> str:
    text = text.replace("\n", " ")
    ticks = "``" if "`" in text else "`"
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{ticks}{pad}{text}{pad}{ticks}"


def _indent(text: str, first: str, rest: str) -> str:
    lines = text.split("\n")
    return "\n".join(
        (first if i == 0 else rest if line else rest.rstrip()) + line
        for i, line in enumerate(lines)
    )


def _lines(code: str, spec: str) -> str:
    """Sphinx ``:lines: 1-3,7`` selection (1-based, inclusive)."""
    if not spec.strip():
        return code
    src = code.split("\n")
    out: list[str] = []
    for part in spec.split(","):
        a, dash, b = part.strip().partition("-")
        try:
            start = int(a) if a else 1
            end = int(b) if b else (len(src) if dash else start)
        except ValueError:
            return code
        out.extend(src[start - 1 : end])
    return "\n".join(out)
