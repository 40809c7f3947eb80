"""reStructuredText pages (Sphinx source trees, built ``_sources/*.rst.txt``) -> Markdown + facts.

Parsing is docutils' own parser. Sphinx's directives and roles are registered for the parse
(``toctree``, ``code-block``, ``literalinclude``, the Python domain, ``versionadded``, ...),
and every other directive, role and substitution has a defined outcome, so a page never fails
on an extension it does not know and never loses its text:

- a container Sphinx or a common extension defines (``only``, ``tab``, ``tab-item``,
  ``dropdown``, ``card``, ...): its body parsed as reStructuredText, a title argument kept;
- an object description of another domain (``c:function``, ``js:class``, ``option``,
  ``envvar``, ``http:get``, ...): its signatures as code, its body parsed;
- an unknown directive whose name says code (``example``, ``code``, ``run``, ``console``,
  ``doctest``, ``repl``, ``shell``, ``execute``, ``ipython``, ``plot``, and grammars and
  diagrams: ``productionlist``, ``graphviz``, ``mermaid``; click's ``.. click:example::``)
  or whose body looks like code: a literal block holding the body byte for byte (dedented
  by the body's indentation only; tabs and trailing spaces as written), its language from
  a ``:language:`` option or a one-word argument, else ``python`` for a ``>>>`` session or
  a decorator, else none;
- any other unknown directive: its argument and body kept as plain text, not parsed (its
  markup shown as written), except its literal blocks (below a paragraph ending in ``::``)
  and doctest blocks, kept as code byte for byte (such a body is prose, however much of it
  reads as code);
- ``.. math::``: the formula as written between ``$$`` lines;
- a role: a link when it names something the tree holds, else its text as code (an unknown
  role's too, as the default role's ```text```);
- ``|version|``, ``|release|``: from ``conf.py`` when it sets them to literals (the caller
  passes them); any other substitution the page does not define stays as written.

File inclusion and raw HTML are off in docutils:
``include`` and ``literalinclude`` are read by the caller (through the tree's confined reader),
includes of includes at most :data:`~cogitave.ingest.confined.MAX_INCLUDE_DEPTH` deep and
:data:`MAX_INCLUDES` a page.

Two passes, because cross-references need the whole tree: :func:`parse_rst` gives a
:class:`RstDoc` (title, labels, API objects, toctrees); :mod:`cogitave.ingest.docs.rst_markdown`
then turns its doctree into Markdown once every page's labels and objects are known.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, ClassVar, Protocol

from docutils import frontend, nodes, utils
from docutils.parsers.rst import Directive, Parser, directives, roles
from docutils.parsers.rst.states import Inliner
from docutils.statemachine import string2lines

from cogitave.ingest.confined import MAX_INCLUDE_DEPTH

PY_ROLES = frozenset(
    ("func", "class", "meth", "mod", "attr", "data", "exc", "obj", "const", "deco", "type")
)
# Python-domain directives that declare an object (the key is the objtype Sphinx stores).
PY_OBJECTS = {
    "function": "function", "class": "class", "method": "method", "module": "module",
    "attribute": "attribute", "data": "data", "exception": "exception",
    "classmethod": "method", "staticmethod": "method", "decorator": "function",
    "decoratormethod": "method", "coroutinefunction": "function",
    "coroutinemethod": "method", "property": "attribute", "type": "data",
}  # fmt: skip
_CLASSLIKE = frozenset(("class", "exception"))
# autodoc's directives: the objects they name are read from the package's source
# (:class:`~cogitave.ingest.pyapi.read.ApiIndex`), never imported.
AUTODOC = frozenset(
    ("automodule", "autoclass", "autofunction", "automethod", "autodata", "autoattribute",
     "autoexception", "autoproperty", "autodecorator")
)  # fmt: skip
_AUTO_KIND = {"module": "module", "class": "class", "exception": "exception",
              "function": "function", "method": "method", "attribute": "attribute"}  # fmt: skip


class ApiSource(Protocol):
    """What autodoc directives read objects from (:class:`cogitave.ingest.pyapi.read.ApiIndex`
    satisfies it)."""

    def lookup(self, written: str) -> Any: ...

    def members(self, entry: Any) -> list[Any]: ...


_SIG_NAME = re.compile(r"^\s*(?:(?:async|class|final|abstract|static)\s+)*([\w.]+)")
_REF_TARGET = re.compile(r"^(.*?)\s*<([^<>]+)>$", re.S)
# Sphinx admonition-like directives: their text is kept under a bold label.
LABELLED = {
    "versionadded": "Added in version", "versionchanged": "Changed in version",
    "deprecated": "Deprecated since version", "versionremoved": "Removed in version",
    "seealso": "See also", "impl-detail": "CPython implementation detail",
}  # fmt: skip
_CODE_DIRECTIVES = ("code-block", "sourcecode", "code")
# Containers whose body is reStructuredText: Sphinx's own and the common extensions'
# (sphinx-design, sphinx-tabs, sphinx-inline-tabs, sphinx.ext.todo/ifconfig); the value says
# whether the argument is a title to show (``.. tab:: Linux``) or a condition (``only``).
CONTAINERS = {
    "only": False, "ifconfig": False, "hlist": False, "centered": True, "rst-class": False,
    "cssclass": False, "div": False, "todo": False, "tabs": False,
    "tab": True, "group-tab": True, "tab-set": False, "tab-item": True, "tab-set-code": False,
    "card": True, "grid": False, "grid-item": False, "grid-item-card": True, "dropdown": True,
    "card-carousel": False, "article-info": False,
}  # fmt: skip
# Object descriptions outside the Python domain: signatures in the argument, body in RST.
DESCRIBE = frozenset(("option", "cmdoption", "envvar", "confval", "describe", "object"))
# An unknown directive is code when a part of its name starts with one of these words
# (``click:example``, ``runblock``, ``jupyter-execute``, ``ipython``, ``code-tab``,
# ``shell-session``...) or it names a diagram language anywhere (``plantuml``). A word inside a
# part is not enough: CPython's ``.. opcode::`` describes an instruction in prose.
CODE_NAME = re.compile(
    r"(?:^|[-_.])(?:example|code|run|console|doctest|repl|shell|execute|ipython|plot|"
    r"productionlist)|graphviz|digraph|mermaid|uml"
)
_LANGUAGE = re.compile(r"[a-z][\w+#.-]{0,24}", re.I)
# The first line of a body that is code: a prompt, a decorator, a definition, an import...
_CODE_START = re.compile(
    r"(>>>|\$ |% |In \[\d*\]:|@[\w.]+|#!|#include\b|(async\s+)?def \w|class \w+\s*[(:]|"
    r"import \w|from [\w.]+ import\b|(fn|func|function|const|let|var|package|pub)\s+\w|"
    r"[{\[<]\s*$|<\?xml|<!--)"
)
_CODE_LINE = re.compile(
    r"[{};\[(]\s*$|[)\]}]\s*[;,]?\s*$|\s(=|==|=>|->|:=)\s|^\s*(#|//)|^\s*[\w.]+\("
)
_TEST_CODE = ("testcode", "testsetup", "testcleanup", "doctest", "testoutput")
_DROPPED = (
    "index", "tabularcolumns", "sectionauthor", "moduleauthor", "codeauthor", "toctree-hidden",
    "autosummary", "currentmodule", "highlight", "highlightlang", "default-role",
    "default-domain", "program", "meta", "raw", "contents", "sectnum", "section-numbering",
    "header", "footer", "target-notes", "todolist",
)  # fmt: skip
_LOCK = threading.Lock()
# docutils' own directives that stay as they are; the rest (``class``, ``code``, ``include``,
# ``raw``...) mean something else in Sphinx or would read files.
_DOCUTILS_KEPT = frozenset(
    ("sidebar", "topic", "rubric", "note", "warning", "tip", "important", "caution", "danger",
     "error", "hint", "attention", "admonition", "container", "compound", "line-block",
     "parsed-literal", "epigraph", "highlights", "pull-quote", "table", "csv-table",
     "list-table", "image", "figure", "math", "role", "replace", "unicode", "date", "title")
)  # fmt: skip


@dataclass
class ApiObject:
    """A Python object a page declares (``.. function::`` ...)."""

    name: str  # the full dotted name, e.g. pathlib.Path.read_text
    objtype: str
    signature: str
    anchor: str
    line: int


@dataclass
class Toctree:
    """One ``toctree``: its caption and entries (explicit title or None, target as written)."""

    caption: str
    entries: list[tuple[str | None, str]]
    glob: bool = False


@dataclass
class RstDoc:
    """A parsed page: its doctree and the facts the whole tree needs before rendering."""

    docname: str
    doctree: nodes.document
    title: str = ""
    labels: dict[str, tuple[str, str]] = field(default_factory=dict)  # label -> (anchor, title)
    objects: list[ApiObject] = field(default_factory=list)
    toctrees: list[Toctree] = field(default_factory=list)
    includes: list[tuple[str, int]] = field(default_factory=list)  # literalinclude paths
    refused: list[tuple[str, int, str]] = field(default_factory=list)  # (path, line, why)
    autodoc: list[tuple[str, int, str]] = field(default_factory=list)
    """Each object an autodoc directive named: (name, line, "" when found, else why not)."""


@dataclass(frozen=True)
class Xref:
    """A cross-reference role found while rendering: ``role`` is ``ref``/``doc``/``py:func``..."""

    role: str
    target: str
    module: str
    klass: str
    line: int


XrefLookup = Callable[[Xref], tuple[str, str] | None]  # -> (url, default text) or None
IncludeReader = Callable[[str, str], tuple[str, str] | None]  # (docname, path) -> (code, lang)
TextReader = Callable[[str, int], str | None]  # (path as written, line) -> text
MAX_INCLUDES = 50  # per page: enough for real trees, a stop for include cycles


# -- custom nodes -------------------------------------------------------------------------
class toctree_node(nodes.Invisible, nodes.Element):
    """A toctree's entries (rendered as nothing; read by the caller)."""


class xref_node(nodes.Inline, nodes.TextElement):
    """A pending cross-reference: attributes role, target, module, klass, text_given."""


class api_node(nodes.Element):
    """A declared API object: attributes name, objtype, signature, anchor; children = body."""


class include_node(nodes.Element):
    """A ``literalinclude``: attributes path, language."""


class _AnyOptions(dict[str, Any]):
    # An option spec that accepts every option: Sphinx directives have many we do not need.
    def __missing__(self, key: str) -> Callable[[str | None], str | None]:
        return directives.unchanged


class _Generic(Directive):
    """A directive whose body is reStructuredText: the body parsed and kept, arguments and
    options ignored."""

    optional_arguments = 99
    final_argument_whitespace = True
    has_content = True
    # Not empty: docutils only parses options when the spec is truthy.
    option_spec: ClassVar[dict[str, Any]] = _AnyOptions(name=directives.unchanged)

    def run(self) -> list[nodes.Node]:
        if not self.content:
            return []
        box = nodes.container()
        self.state.nested_parse(self.content, self.content_offset, box)
        return [box]


class _Container(_Generic):
    """A known container (``tab``, ``dropdown``, ``only``...): a title argument as a bold
    paragraph (when the directive's argument is a title), the body parsed."""

    optional_arguments = 1  # the whole argument, as written

    def run(self) -> list[nodes.Node]:
        box = nodes.container()
        title = " ".join(" ".join(self.arguments).split())
        if title and CONTAINERS.get(self.name):
            head = nodes.paragraph()
            head += nodes.strong(text=title)
            box += head
        if self.content:
            self.state.nested_parse(self.content, self.content_offset, box)
        return [box] if box.children else []


class _Describe(_Generic):
    """An object description outside the Python domain (``c:function``, ``option``,
    ``http:get``): each signature as code, the body parsed."""

    optional_arguments = 1  # the whole argument, as written

    def run(self) -> list[nodes.Node]:
        box = nodes.container()
        for sig in "\n".join(self.arguments).split("\n"):
            if sig.strip():
                head = nodes.paragraph()
                head += nodes.literal(text=sig.strip())
                box += head
        if self.content:
            self.state.nested_parse(self.content, self.content_offset, box)
        return [box] if box.children else []


class _Unknown(_Generic):
    """A directive nothing here knows: code (by its name or its body) as a literal block
    holding the body as written, else its argument and body as plain text."""

    optional_arguments = 1  # the whole argument, as written

    def run(self) -> list[nodes.Node]:
        argument = " ".join(self.arguments).strip()
        # A body right below ``.. name::`` with no blank line: docutils reads its first
        # paragraph as the argument; it is the body.
        whole = bool(argument) and not self.block_text.split("\n", 1)[0].partition("::")[2].strip()
        body = _raw_body(self, whole)
        argument = "" if whole else argument
        bare = self.name.rpartition(":")[2]
        chunks = _prose_and_code(body)
        # a paragraph introducing a literal block (``Example::``) is prose, however coded
        prose = any(isinstance(c, nodes.literal_block) for c in chunks)
        if body.strip() and (CODE_NAME.search(bare) or (looks_like_code(body) and not prose)):
            language = str(self.options.get("language") or self.options.get("lang") or "")
            caption = str(self.options.get("caption") or "")
            if not language and argument:
                if _LANGUAGE.fullmatch(argument):
                    language = argument
                else:
                    caption = caption or argument
            block = nodes.literal_block(body, body)
            block["language"] = language or guess_language(body)
            block["verbatim"] = True
            if not caption:
                return [block]
            box = nodes.container()
            box += nodes.paragraph(text=" ".join(caption.split()))
            box += block
            return [box]
        out: list[nodes.Node] = []
        if argument:
            head = nodes.paragraph()
            head += nodes.strong(text=" ".join(argument.split()))
            out.append(head)
        for chunk in chunks:
            if isinstance(chunk, str):
                out.append(nodes.paragraph("", "", nodes.Text(chunk.lstrip())))
            else:
                out.append(chunk)
        return out


def _prose_and_code(body: str) -> list[str | nodes.Element]:
    """An unknown directive's body read as plain text: its paragraphs as written, except
    its literal blocks (the lines indented below a paragraph ending in ``::``, which shows
    ``:`` as docutils shows it; a directive's ``.. name::`` is no such paragraph) and
    doctest blocks (a paragraph opening with ``>>>``), kept as code byte for byte."""
    lines = body.strip("\n").split("\n")
    out: list[str | nodes.Element] = []
    i = 0
    while i < len(lines):
        if not lines[i].strip():
            i += 1
            continue
        j = i
        while j < len(lines) and lines[j].strip():
            j += 1
        para = lines[i:j]
        if para[0].lstrip().startswith(">>>"):
            code = _dedent_block(para)
            out.append(nodes.doctest_block(code, code))
            i = j
            continue
        k = j
        if para[-1].rstrip().endswith("::") and not re.match(r"\s*\.\.(\s|$)", para[0]):
            indent = _columns(para[0])
            while k < len(lines) and (not lines[k].strip() or _columns(lines[k]) > indent):
                k += 1
            while k > j and not lines[k - 1].strip():
                k -= 1
        text = "\n".join(para)
        if k > j:
            text = re.sub(r"(\s?)::\s*$", lambda m: "" if m.group(1) else ":", text.rstrip())
        if text.strip():
            out.append(text)
        if k > j:
            code = _dedent_block(lines[j:k])
            out.append(nodes.literal_block(code, code))
        i = max(j, k)
    return out


def _columns(line: str) -> int:
    """The indentation of ``line`` in columns (tabs to 8)."""
    wide = line.expandtabs(8)
    return len(wide) - len(wide.lstrip())


def _dedent_block(lines: list[str]) -> str:
    """Lines of code without their common indentation (blank lines at the ends dropped),
    tabs and trailing spaces as written."""
    while lines and not lines[0].strip():
        lines = lines[1:]
    cut = min((_columns(x) for x in lines if x.strip()), default=0)
    kept = (_dedent_raw(x, x.expandtabs(8)[cut:].rstrip(), cut) for x in lines)
    return "\n".join(kept).rstrip("\n")


def _raw_body(d: Directive, whole: bool = False) -> str:
    """A directive's body as written: docutils hands the lines with tabs expanded and
    trailing whitespace removed; each line is read again from its source (the page or an
    include) and dedented by the same number of columns, so only the body's indentation
    goes. A line whose source is not known (or whose indentation a tab straddles) is kept
    as docutils gives it. ``whole``: every line below the directive's own (a body written
    without the blank line that parts it from an argument)."""
    sources: dict[str, list[str]] = _state(d).sources
    if whole:
        given = d.block_text.split("\n")[1:]
        indent = min((len(x) - len(x.lstrip()) for x in given if x.strip()), default=0)
        given = [x[indent:] for x in given]
        at = d.lineno - d.state_machine.input_offset - 1
        src, offset = d.state_machine.input_lines.info(at)
        where = [
            (src, offset + 1 + k if isinstance(offset, int) else None) for k in range(len(given))
        ]
    else:
        given = list(d.content)
        where = list(d.content.items)
    originals: list[str | None] = []
    for k in range(len(given)):
        src, offset = where[k] if k < len(where) else (None, None)
        raw = sources.get(str(src), []) if src is not None else []
        ok = isinstance(offset, int) and 0 <= offset < len(raw)
        originals.append(raw[offset] if ok else None)  # type: ignore[index]
    # The columns docutils took off: one number for the block, read off a line with text.
    cut = next(
        (
            len(o.expandtabs(8).rstrip()) - len(g)
            for o, g in zip(originals, given, strict=True)
            if o is not None and g and o.expandtabs(8).rstrip().endswith(g)
        ),
        None,
    )
    out = [
        _dedent_raw(o, g, cut) if o is not None and cut is not None else g
        for o, g in zip(originals, given, strict=True)
    ]
    while out and not out[-1].strip():
        out.pop()
    return "\n".join(out)


def _lines_as_written(text: str) -> list[str]:
    """``text`` split into lines the way docutils splits its input (so line numbers agree),
    tabs and trailing whitespace kept."""
    return text.replace("\v", " ").replace("\f", " ").splitlines()


def _dedent_raw(original: str, given: str, cut: int) -> str:
    """``original`` (a source line) without its first ``cut`` columns of indentation (what
    docutils took off ``given``); ``given`` when that is not whitespace or a tab straddles
    the cut."""
    if given and not original.expandtabs(8).rstrip().endswith(given):
        return given
    col = 0
    for i, ch in enumerate(original):
        if col == cut:
            return original[i:]
        if col > cut or ch not in " \t":
            return given
        col = col + 8 - col % 8 if ch == "\t" else col + 1
    return given if col != cut else ""


def looks_like_code(body: str) -> bool:
    """A body that reads as code, not prose: it starts like code, or most of its lines have
    code's punctuation and few end a sentence."""
    lines = [line for line in body.split("\n") if line.strip()]
    if not lines:
        return False
    if _CODE_START.match(lines[0].strip()):
        return True
    coded = sum(1 for line in lines if _CODE_LINE.search(line))
    sentences = sum(1 for line in lines if line.rstrip().endswith((".", "?", "!")))
    return coded * 10 >= len(lines) * 6 and sentences * 10 < len(lines) * 3


def guess_language(body: str) -> str:
    first = next((line.strip() for line in body.split("\n") if line.strip()), "")
    if first.startswith(">>>") or re.match(r"@[\w.]+|(async\s+)?def \w|from [\w.]+ import", first):
        return "python"
    return ""


class _Dropped(_Generic):
    def run(self) -> list[nodes.Node]:
        if self.name in ("currentmodule", "py:currentmodule") and self.arguments:
            name = self.arguments[0].strip()
            _state(self).module = "" if name == "None" else name
        if self.name in ("highlight", "highlightlang") and self.arguments:
            _state(self).highlight = self.arguments[0].strip()
        return []


class _Labelled(_Generic):
    optional_arguments = 2

    def run(self) -> list[nodes.Node]:
        label = LABELLED.get(self.name, self.name)
        version, rest = (
            (self.arguments[0], " ".join(self.arguments[1:])) if self.arguments else ("", "")
        )
        if self.name in ("seealso", "impl-detail"):
            version, rest = "", " ".join(self.arguments)
        head = nodes.paragraph()
        head += nodes.strong(text=f"{label} {version}".strip() + ":")
        if rest.strip():
            head += nodes.Text(" " + " ".join(rest.split()))
        box = nodes.container()
        box += head
        if self.content:
            self.state.nested_parse(self.content, self.content_offset, box)
        return [box]


class _Code(_Generic):
    optional_arguments = 1

    def run(self) -> list[nodes.Node]:
        if self.name in _TEST_CODE:
            # the argument of ``doctest``/``testcode``... names a group of tests (a body
            # written right under the directive is read as one, as Sphinx reads it)
            language = "text" if self.name == "testoutput" else "python"
        else:
            language = self.arguments[0].strip() if self.arguments else _state(self).highlight
        text = _raw_body(self)
        block = nodes.literal_block(text, text)
        block["language"] = language
        if "caption" in self.options:
            box = nodes.container()
            box += nodes.paragraph(text=str(self.options["caption"]))
            box += block
            return [box]
        return [block]


class _LiteralInclude(_Generic):
    optional_arguments = 1

    def run(self) -> list[nodes.Node]:
        node = include_node()
        node["path"] = " ".join(self.arguments).strip()
        node["language"] = str(self.options.get("language") or "")
        node["lines"] = str(self.options.get("lines") or "")
        node["line"] = self.lineno
        _state(self).doc.includes.append((node["path"], self.lineno))
        return [node]


class _Include(_Generic):
    optional_arguments = 1

    def run(self) -> list[nodes.Node]:
        st = _state(self)
        path = " ".join(self.arguments).strip()
        # The file this directive is in: the page, or an include inserted below (its depth).
        source = self.state_machine.input_lines.source(
            self.lineno - self.state_machine.input_offset - 1
        )
        depth = st.depth.get(source, 0) + 1
        if path and (st.included >= MAX_INCLUDES or depth > MAX_INCLUDE_DEPTH):
            why = (
                f"more than {MAX_INCLUDES} includes on one page"
                if st.included >= MAX_INCLUDES
                else f"includes nested more than {MAX_INCLUDE_DEPTH} deep"
            )
            st.doc.refused.append((path, self.lineno, f"{why}; not read"))
            return []
        text = st.read(path, self.lineno) if st.read and path else None
        if text is None:
            st.doc.includes.append((path, self.lineno))
            return []
        st.included += 1
        if "literal" in self.options or "code" in self.options:
            block = nodes.literal_block(text, text)
            block["language"] = str(self.options.get("code") or "text")
            return [block]
        # The included reStructuredText is parsed in place, as docutils' own include does.
        label = f"{path}#{st.included}"  # each insertion its own source: its own depth
        st.depth[label] = depth
        st.sources[label] = _lines_as_written(text)
        self.state_machine.insert_input(string2lines(text, convert_whitespace=True), label)
        return []


class _Glossary(_Generic):
    def run(self) -> list[nodes.Node]:
        box = nodes.container()
        self.state.nested_parse(self.content, self.content_offset, box)
        doc = _state(self).doc
        for term in box.findall(nodes.term):
            text = " ".join(term.astext().split())
            anchor = "term-" + (nodes.make_id(text) or "x")
            term["ids"].append(anchor)
            doc.labels.setdefault("term:" + text.lower(), (anchor, text))
        return [box]


class _Toctree(_Generic):
    def run(self) -> list[nodes.Node]:
        entries: list[tuple[str | None, str]] = []
        for raw in self.content:
            line = raw.strip()
            if not line or line.startswith(".."):
                continue
            m = _REF_TARGET.match(line)
            entries.append((m.group(1).strip() or None, m.group(2).strip()) if m else (None, line))
        caption = str(self.options.get("caption") or "")
        _state(self).doc.toctrees.append(Toctree(caption, entries, "glob" in self.options))
        return [toctree_node()]


class _PyObject(_Generic):
    optional_arguments = 1  # the signatures, one a line

    def run(self) -> list[nodes.Node]:
        st = _state(self)
        objtype = PY_OBJECTS[self.name.removeprefix("py:")]
        signatures = [s for s in "\n".join(self.arguments).split("\n") if s.strip()]
        if objtype == "module":
            name = signatures[0].strip() if signatures else ""
            st.module = name
            if not name or "no-index" in self.options or "noindex" in self.options:
                return []
            anchor = f"module-{name}"
            st.doc.objects.append(ApiObject(name, "module", name, anchor, self.lineno))
            node = api_node(name=name, objtype="module", signature=name, anchor=anchor)
            node["synopsis"] = " ".join(str(self.options.get("synopsis") or "").split())
            return [node]
        module = str(self.options.get("module") or st.module).strip()
        klass = st.classes[-1] if st.classes else ""
        declared: list[tuple[str, str]] = []  # (full name, signature)
        for sig in signatures:
            m = _SIG_NAME.match(sig)
            if m:
                declared.append((_qualify(m.group(1), module, klass), sig.strip()))
        if not declared:
            return super().run()
        name, signature = declared[0]
        node = api_node(name=name, objtype=objtype, signature=signature, anchor=name)
        node["more"] = declared[1:]
        if "no-index" not in self.options and "noindex" not in self.options:
            for full, sig in declared:
                st.doc.objects.append(ApiObject(full, objtype, sig, full, self.lineno))
        if self.content:
            pushed = objtype in _CLASSLIKE
            if pushed:  # the class context, as Sphinx keeps it: the name below the module
                st.classes.append(name[len(module) + 1 :] if module else name)
            try:
                self.state.nested_parse(self.content, self.content_offset, node)
            finally:
                if pushed:
                    st.classes.pop()
        return [node]


class _Autodoc(_Generic):
    """``.. autoclass:: name`` and its kin: the object read from the package's source (its
    signature and docstring) and written out as the ``py:`` directive Sphinx would have made,
    with ``:members:`` the documented members too; a name the source does not hold is
    recorded (the report lists it) and shows nothing."""

    def run(self) -> list[nodes.Node]:
        st = _state(self)
        written = " ".join(self.arguments).strip().split("(", 1)[0].strip()
        if not written:
            return []
        if st.api is None:
            st.doc.autodoc.append((written, self.lineno, "no package source to read it from"))
            return []
        found = st.api.lookup(written)
        if found.entry is None and st.module and "." not in written:
            found = st.api.lookup(f"{st.module}.{written}")
        if found.entry is None:
            st.doc.autodoc.append((written, self.lineno, found.reason))
            return []
        st.doc.autodoc.append((written, self.lineno, ""))
        members = "members" in self.options
        lines = _autodoc_lines(st.api, found.entry, members, "")
        if self.content:  # text written under the directive follows the docstring
            lines += ["", *("   " + line for line in self.content)]
        self.state_machine.insert_input(lines, f"{written} (autodoc)")
        return []


def _autodoc_lines(api: ApiSource, entry: Any, members: bool, indent: str) -> list[str]:
    """RST of one object as ``py:`` directives (members nested under a class)."""
    kind = _AUTO_KIND.get(entry.kind, "data")
    sig = str(entry.signature or "").strip()
    sig = re.sub(r"^(?:async\s+)?(?:def|class)\s+", "", sig)
    short = entry.name.rsplit(".", 1)[-1]
    target = entry.name
    if sig.startswith(short) and kind not in ("module", "attribute", "data"):
        target = entry.name[: -len(short)] + sig  # the dotted name with its parameters
    out = [f"{indent}.. py:{kind}:: {' '.join(target.split())}", ""]
    body = indent + ("" if kind == "module" else "   ")  # a module's text follows it
    doc = str(entry.docstring or "").expandtabs(4)
    out += [body + line if line.strip() else "" for line in doc.splitlines()]
    if kind in ("attribute", "data") and sig and sig != short:
        out += ["", f"{body}``{' '.join(sig.split())}``"]
    if members:
        nested = body if kind in _CLASSLIKE else indent
        for member in api.members(entry):
            out += ["", *_autodoc_lines(api, member, member.kind == "class", nested)]
    return out


def _qualify(written: str, module: str, klass: str) -> str:
    """The full dotted name of an object declared as ``written`` in ``module`` and ``klass``
    (Sphinx's rule: a name that repeats the class is not prefixed twice)."""
    rel = written[len(module) + 1 :] if module and written.startswith(module + ".") else written
    if klass and rel != klass and not rel.startswith(klass + "."):
        rel = f"{klass}.{rel}"
    return f"{module}.{rel}" if module else rel


@dataclass
class _ParseState:
    doc: RstDoc
    module: str = ""
    classes: list[str] = field(default_factory=list)
    highlight: str = "python"
    read: TextReader | None = None
    included: int = 0
    depth: dict[str, int] = field(default_factory=dict)  # inserted source -> include depth
    sources: dict[str, list[str]] = field(default_factory=dict)  # source -> lines as written
    api: ApiSource | None = None  # where autodoc directives read objects from


def _state(d: Directive) -> _ParseState:
    return d.state.document.settings.cogitave_state  # type: ignore[no-any-return]


def _xref_role(
    name: str,
    rawtext: str,
    text: str,
    lineno: int,
    inliner: Inliner,
    options: dict[str, Any] | None = None,
    content: list[str] | None = None,
) -> tuple[list[nodes.Node], list[nodes.system_message]]:
    st: _ParseState = inliner.document.settings.cogitave_state
    role = name.lower().removeprefix("py:")
    text = utils.unescape(text)
    m = _REF_TARGET.match(text)
    title, target = (m.group(1), m.group(2)) if m else ("", text)
    node = xref_node(rawtext, title or target.strip().lstrip("~!"))
    role = role.removeprefix("std:")
    node["role"] = role if role in ("ref", "doc", "term") else f"py:{role}"
    node["target"] = target.strip()
    node["title"] = title
    node["module"] = st.module
    node["klass"] = ".".join(st.classes)
    node["line"] = lineno
    return [node], []


_LITERAL_ROLES = frozenset(
    (
        "samp",
        "kbd",
        "file",
        "command",
        "program",
        "regexp",
        "code",
        "literal",
        "makevar",
        "mailheader",
        "mimetype",
        "newsgroup",
        "dfn",
        "abbr",
        "guilabel",
        "menuselection",
    )
)
"""Sphinx's roles that show their text as written (no cross-reference: a leading ``!`` stays)."""


def _text_role(
    name: str,
    rawtext: str,
    text: str,
    lineno: int,
    inliner: Inliner,
    options: dict[str, Any] | None = None,
    content: list[str] | None = None,
) -> tuple[list[nodes.Node], list[nodes.system_message]]:
    # Unknown roles (`:c:func:`, `:envvar:`, `:foo:`...) keep their text, shown as code;
    # `title <target>` shows the title. A cross-reference role's `!` (link nothing) is
    # markup, not text: :keyword:`!with` shows `with`.
    text = utils.unescape(text)
    m = _REF_TARGET.match(text)
    shown = m.group(1) if m and m.group(1) else text
    if shown[1:2].isalnum() and shown[:1] == "!" and name.lower() not in _LITERAL_ROLES:
        shown = shown[1:]
    return [nodes.literal(rawtext, shown)], []


def _directive_for(name: str) -> type[Directive]:
    bare = name.removeprefix("py:")
    if bare in PY_OBJECTS and (name.startswith("py:") or ":" not in name):
        return _PyObject
    if name in ("module", "currentmodule", "py:module", "py:currentmodule"):
        return _PyObject if bare == "module" else _Dropped
    if name in AUTODOC or (name.startswith("py:") and name[3:] in AUTODOC):
        return _Autodoc
    if name == "toctree":
        return _Toctree
    if name == "glossary":
        return _Glossary
    if name == "include":
        return _Include
    if name in _CODE_DIRECTIVES or name in _TEST_CODE:
        return _Code
    if name == "literalinclude":
        return _LiteralInclude
    if name in LABELLED:
        return _Labelled
    if name in _DROPPED:
        return _Dropped
    if name in CONTAINERS:
        return _Container
    domain, colon, kind = name.rpartition(":")
    if name in DESCRIBE or (colon and domain and not CODE_NAME.search(kind)):
        return _Describe  # ``c:function``, ``js:class``, ``http:get``, ``std:option``...
    return _Unknown


@contextmanager
def _sphinx_lookups() -> Iterator[None]:
    """Route directive and role lookups through the Sphinx-aware tables for one parse."""
    # docutils looks both up through module functions, which is also how Sphinx extends it;
    # the lock keeps concurrent parses from seeing each other's patch.
    orig_directive, orig_role = directives.directive, roles.role

    def directive(name: str, language: Any, document: Any) -> tuple[Any, list[Any]]:
        low = name.lower()
        if low in _DOCUTILS_KEPT:
            found, _ = orig_directive(name, language, document)
            if found is not None:
                return found, []
        return _directive_for(low), []

    def role(name: str, language: Any, lineno: int, reporter: Any) -> tuple[Any, list[Any]]:
        low = name.lower()
        bare = low.removeprefix("py:")
        if low in ("ref", "doc", "term", "std:ref", "std:doc", "std:term") or (
            bare in PY_ROLES and (low.startswith("py:") or ":" not in low)
        ):
            return _xref_role, []
        found, messages = orig_role(name, language, lineno, reporter)
        return (found, messages) if found is not None else (_text_role, [])

    with _LOCK:
        directives.directive, roles.role = directive, role  # type: ignore[assignment]
        try:
            yield
        finally:
            directives.directive, roles.role = orig_directive, orig_role  # type: ignore[assignment]


def parse_rst(
    text: str,
    docname: str,
    source: str = "<rst>",
    read: TextReader | None = None,
    substitutions: Mapping[str, str] | None = None,
    api: ApiSource | None = None,
) -> RstDoc:
    """Parse one page; never raises on markup (problems stay in the doctree, unreported).
    ``read`` gives the text of a file an ``include`` names (None: not found or not allowed);
    ``substitutions``: the values of ``|name|`` the page does not define itself (Sphinx's
    ``version`` and ``release``); ``api``: where autodoc directives read the objects they
    name (None: they show nothing, and are recorded as unread)."""
    settings = frontend.get_default_settings(Parser)
    settings.report_level = 5  # keep docutils quiet: the report lists what matters
    settings.halt_level = 5
    settings.warning_stream = False
    settings.file_insertion_enabled = False
    settings.raw_enabled = False
    settings.line_length_limit = 1_000_000
    settings.syntax_highlight = "none"
    document = utils.new_document(source, settings)
    doc = RstDoc(docname, document)
    settings.cogitave_state = _ParseState(doc, read=read, api=api)
    settings.cogitave_state.sources[source] = _lines_as_written(text)
    with _sphinx_lookups():
        Parser().parse(text, document)
    document.transformer.populate_from_components([])
    _default_substitutions(document, substitutions or {})
    _apply_transforms(document)
    _collect_labels(doc)
    return doc


def _default_substitutions(document: nodes.document, values: Mapping[str, str]) -> None:
    """``|version|`` and the like, where the page defines no substitution of that name (as
    Sphinx's ``DefaultSubstitutions``); one with no value stays as written."""
    for ref in list(document.findall(nodes.substitution_reference)):
        name = ref.get("refname", "")
        if name in values and name not in document.substitution_defs:
            ref.parent.replace(ref, nodes.Text(values[name]))


def _apply_transforms(document: nodes.document) -> None:
    # Substitutions, hyperlink targets and section ids: the parts of docutils' standard
    # transforms that change what a reader sees.
    from docutils.transforms import references

    for transform in (
        references.Substitutions,
        references.PropagateTargets,
        references.AnonymousHyperlinks,
        references.IndirectHyperlinks,
        references.ExternalTargets,
        references.InternalTargets,
    ):
        try:
            transform(document).apply()
        except Exception:
            continue


def _collect_labels(doc: RstDoc) -> None:
    title_node = next(iter(doc.doctree.findall(nodes.title)), None)
    doc.title = title_node.astext().strip() if title_node is not None else ""
    first_section = next(iter(doc.doctree.findall(nodes.section)), None)
    for section in doc.doctree.findall(nodes.section):
        title = section[0].astext().strip() if section.children else ""
        anchor = "" if section is first_section else section["ids"][0] if section["ids"] else ""
        for name in section["names"]:
            doc.labels.setdefault(name, (anchor, title))
        for i in section["ids"]:
            doc.labels.setdefault(i, (anchor, title))
    # Labels on other elements (`.. _x:` before a paragraph, a list, a glossary): after
    # PropagateTargets the name sits on that element; the link goes to its section.
    for element in doc.doctree.findall(nodes.Element):
        if isinstance(element, nodes.section | nodes.document) or not element.get("names"):
            continue
        if isinstance(element, nodes.target) and element.get("refuri"):
            continue
        parent = element.parent
        while parent is not None and not isinstance(parent, nodes.section):
            parent = parent.parent
        if parent is None or parent is first_section:
            anchor, title = "", doc.title
        else:
            anchor, title = (parent["ids"] or [""])[0], parent[0].astext().strip()
        for name in element["names"]:
            doc.labels.setdefault(name, (anchor, title))


def find_py_object(objects: dict[str, Any], target: str, module: str, klass: str) -> str | None:
    """Sphinx's Python-domain lookup: exact, then in the current class and module; a leading
    ``.`` searches by suffix."""
    target = target.removesuffix("()")
    if target.startswith("."):
        name = target[1:]
        for cand in (f"{module}.{klass}.{name}", f"{module}.{name}", f"{klass}.{name}", name):
            if cand.strip(".") in objects and ".." not in cand.strip("."):
                return cand.strip(".")
        tails = [o for o in objects if o.endswith("." + name)]
        return tails[0] if len(tails) == 1 else None
    cands = [target]
    if klass:
        cands.append(f"{klass}.{target}")
        if module:
            cands.append(f"{module}.{klass}.{target}")
    if module:
        cands.append(f"{module}.{target}")
    for cand in cands:
        if cand in objects:
            return cand
    return None
