"""A griffe object's docstring -> Markdown.

The docstring is parsed by griffe's parsers, the style detected (``auto``: Google, NumPy or
Sphinx field lists); its sections are written as Markdown: text as written, parameters,
returns, raises and the like as lists, examples and doctest paragraphs as ``pycon`` fences,
admonitions under a bold title. Text that carries reStructuredText markup (roles, directives,
``::`` literal blocks, double-backquoted literals) has those written as Markdown, line by line
(roles and literals as code, literal blocks and code directives fenced, other directives a bold
title over their content); other text is kept verbatim. Either is made safe to embed in a
page: a heading line or a setext underline becomes bold text (a docstring never opens a
section of the page), and a fence is always longer than any backtick run of the code it
holds. A docstring that does not parse is kept verbatim. A README in reStructuredText goes
through the docs reader's renderer (:func:`rst_markdown`).
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Iterable

import griffe

_RST = re.compile(
    r"(?m)(^\s*\.\. [\w:-]+::)|(:[\w:+-]+:`[^`]+`)|(``[^`\n]+``)|(::\s*$)|(^\s*\.\. _[^:]+:)"
)
_HEADING = re.compile(r"^(\s{0,3})(#{1,6})(\s|$)")
_UNDERLINE = re.compile(r"^\s*([=\-~^\"'`*+#])\1{2,}\s*$")
_BACKTICKS = re.compile(r"`+")
_DIRECTIVE = re.compile(r"^(\s*)\.\.\s+([\w:-]+)::\s*(.*)$")
_TARGET = re.compile(r"^\s*\.\.\s+_[^:]*:")
_ADMONITIONS = frozenset(
    {"note", "warning", "tip", "hint", "important", "caution", "danger", "attention", "error"}
    | {"seealso", "admonition", "todo"}
)
_ROLE = re.compile(r"(?<![\w`]):(?:[\w-]+:)+`([^`]+)`")
_LITERAL = re.compile(r"``([^`\n]+)``")
_LINK = re.compile(r"`([^`<\n]+(?: <[^>\n]+>)?)`__?")
_ATTRS = re.compile(r"\s*\{[^{}]*\}\s*$")  # a heading's `{ #id }`


def fence(code: str, language: str = "python") -> str:
    """``code`` in a backtick fence longer than any backtick run inside it."""
    longest = max((len(m) for m in _BACKTICKS.findall(code)), default=0)
    ticks = "`" * max(3, longest + 1)
    return f"{ticks}{language}\n{code.rstrip()}\n{ticks}"


def docstring_markdown(obj: griffe.Object | griffe.Alias) -> str:
    """The Markdown of ``obj``'s docstring ("" when it has none)."""
    doc = obj.docstring
    if doc is None or not doc.value.strip():
        return ""
    try:
        sections = doc.parse("auto")
        blocks = [b for s in sections if (b := _section(s).strip())]
    except Exception:  # a parser's fault on odd input: the text as written
        return text_markdown(doc.value)
    return "\n\n".join(blocks) if blocks else text_markdown(doc.value)


def text_markdown(text: str) -> str:
    """Prose of a docstring as Markdown (see the module doc)."""
    text = text.strip("\n")
    if not text.strip():
        return ""
    return _demote_headings(_blocks(text, rst=bool(_RST.search(text))))


def rst_markdown(text: str) -> str:
    """A reStructuredText document (a README) through the docs reader's renderer; the text
    as written when it cannot be rendered."""
    from cogitave.ingest.docs.rst import parse_rst
    from cogitave.ingest.docs.rst_markdown import render_markdown

    try:
        doc = parse_rst(text, "README")
        rendered = render_markdown(doc, lambda _x: None, lambda _doc, _path: None)
    except Exception:  # docutils on hostile markup: the text as written instead
        return text
    return rendered.markdown.strip("\n") or text


def _blocks(text: str, *, rst: bool) -> str:
    """Doctest paragraphs fenced as ``pycon``; with ``rst``, literal blocks (``::``) and
    code directives fenced, other directives as a bold title, roles and ````literals```` as
    code (reStructuredText prose, read line by line: docutils costs ~10 ms a docstring)."""
    lines = text.split("\n")
    out: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        stripped = line.strip()
        if stripped.startswith(">>>") and (not out or not out[-1].strip()):
            j = i
            while j < len(lines) and lines[j].strip():
                j += 1
            out.append(fence(textwrap.dedent("\n".join(lines[i:j])), "pycon"))
            i = j
            continue
        if rst and (m := _DIRECTIVE.match(line)):
            name, arg = m.group(2).lower(), m.group(3).strip()
            body, i = _indented(lines, i + 1, len(m.group(1)))
            if name in ("code-block", "code", "sourcecode", "testcode", "doctest"):
                out.append(fence(body, arg or ("pycon" if name == "doctest" else "python")))
            elif name == "math":
                out.append(fence("\n".join(filter(None, [arg, body])), "math"))
            elif name in _ADMONITIONS:
                out.append(f"**{name.capitalize()}**")
                text = "\n".join(filter(None, [arg, body]))
                if text.strip():
                    out += ["", _blocks(text, rst=True)]
            elif name not in ("index", "currentmodule", "module", "autosummary", "toctree"):
                title = name.replace("-", " ").capitalize() + (f" {arg}" if arg else "")
                out.append(f"**{_inline(title)}**")
                if body.strip():
                    out += ["", _blocks(body, rst=True)]
            continue
        if rst and _TARGET.match(line):  # `.. _label:` and its URL: nothing to show
            _body, i = _indented(lines, i + 1, len(line) - len(line.lstrip()))
            continue
        if rst and stripped.endswith("::") and not stripped.startswith(".."):
            head = line.rstrip()[:-2].rstrip()
            body, j = _indented(lines, i + 1, len(line) - len(line.lstrip()))
            if body.strip():
                if head.strip():
                    out.append(_inline(head) + ":")
                out += ["", fence(body, "python")]  # Sphinx's default highlighting
                i = j
                continue
        out.append(_inline(line) if rst else line)
        i += 1
    return "\n".join(out).strip("\n")


def _indented(lines: list[str], start: int, indent: int) -> tuple[str, int]:
    """The block indented past ``indent`` from line ``start`` (blank lines inside it kept),
    dedented, and the index of the line after it."""
    j = start
    while j < len(lines) and not lines[j].strip():
        j += 1
    end = j
    while end < len(lines):
        line = lines[end]
        if line.strip() and len(line) - len(line.lstrip()) <= indent:
            break
        end += 1
    while end > j and not lines[end - 1].strip():
        end -= 1  # the blank lines after the block separate it from what follows
    body = "\n".join(lines[j:end]).rstrip()
    return textwrap.dedent(body), end


def _inline(text: str) -> str:
    """Roles and double-backquoted literals as Markdown code, links as their text."""
    text = _ROLE.sub(lambda m: f"`{_role_text(m.group(1))}`", text)
    text = _LITERAL.sub(lambda m: f"`{m.group(1)}`", text)
    return _LINK.sub(lambda m: m.group(1).split(" <", 1)[0], text)


def _role_text(target: str) -> str:
    """What Sphinx shows of a role: the title of ``title <target>``, the last part of
    ``~a.b.c``."""
    if "<" in target and target.endswith(">"):
        return target.split("<", 1)[0].strip()
    target = target.lstrip("!")
    return target[1:].rsplit(".", 1)[-1] if target.startswith("~") else target


def summary(text: str) -> str:
    """The first paragraph of a docstring, on one line."""
    para = text.strip().split("\n\n", 1)[0]
    return " ".join(para.split())


def _section(s: griffe.DocstringSection) -> str:
    kind = s.kind.value
    title = s.title
    v = s.value
    if kind == "text":
        return text_markdown(str(v))
    if kind == "examples":
        out: list[str] = []
        for part_kind, text in v:
            if getattr(part_kind, "value", part_kind) == "examples":
                out.append(fence(str(text), "pycon"))
            else:
                out.append(text_markdown(str(text)))
        return _titled(title or "Examples", "\n\n".join(out))
    if kind == "admonition":
        contents = getattr(v, "contents", str(v))
        return _titled(title or str(getattr(v, "kind", "Note")).title(), text_markdown(contents))
    if kind == "deprecated":
        version = getattr(v, "version", "")
        head = f"Deprecated since {version}" if version else "Deprecated"
        return _titled(head, text_markdown(getattr(v, "description", "")))
    names = {
        "parameters": "Parameters",
        "other_parameters": "Other parameters",
        "type_parameters": "Type parameters",
        "raises": "Raises",
        "warns": "Warns",
        "returns": "Returns",
        "yields": "Yields",
        "receives": "Receives",
        "attributes": "Attributes",
        "functions": "Functions",
        "classes": "Classes",
        "type_aliases": "Type aliases",
        "modules": "Modules",
    }
    if isinstance(v, list):
        return _titled(title or names.get(kind, kind.title()), _items(v))
    return _titled(title or names.get(kind, kind.title()), text_markdown(str(v)))


def _items(elements: Iterable[object]) -> str:
    lines: list[str] = []
    for e in elements:
        name = str(getattr(e, "name", "") or "")
        annotation = getattr(e, "annotation", None)
        default = getattr(e, "value", None) if isinstance(e, griffe.DocstringParameter) else None
        description = str(getattr(e, "description", "") or "")
        head = f"`{name}`" if name else ""
        facts = [f"`{annotation}`"] if annotation else []
        if default is not None:
            facts.append(f"default `{default}`")
        if facts:
            head = f"{head} ({', '.join(facts)})" if head else ", ".join(facts)
        body = text_markdown(description).replace("\n", "\n  ")
        lines.append(f"- {head}: {body}" if head and body else f"- {head or body}")
    return "\n".join(lines)


def _titled(title: str, body: str) -> str:
    return f"**{title}**\n\n{body}" if body.strip() else ""


def _demote_headings(text: str) -> str:
    """Heading lines (ATX ``#`` and setext underlines) outside code fences -> bold lines."""
    out: list[str] = []
    fence_mark = ""
    for line in text.split("\n"):
        stripped = line.lstrip()
        m = re.match(r"(`{3,}|~{3,})", stripped)
        if m and (not fence_mark or stripped.startswith(fence_mark)):
            fence_mark = "" if fence_mark else m.group(1)
            out.append(line)
            continue
        if fence_mark:
            out.append(line)
            continue
        h = _HEADING.match(line)
        if h:
            rest = _ATTRS.sub("", line[h.end() :]).strip().rstrip("#").strip()
            out.append(f"**{rest}**" if rest else "")
            continue
        if _UNDERLINE.match(line) and out and out[-1].strip() and not _is_list(out[-1]):
            out[-1] = f"**{out[-1].strip()}**"
            continue
        out.append(line)
    return "\n".join(out).strip("\n")


def _is_list(line: str) -> bool:
    return bool(re.match(r"^\s*([-*+]|\d+[.)])\s", line))
