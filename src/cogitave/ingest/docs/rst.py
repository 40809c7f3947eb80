"""reStructuredText pages (Sphinx source trees, built ``_sources/*.rst.txt``) -> Markdown + facts.

Parsing is docutils' own parser. Sphinx's directives and roles are registered for the parse
(``toctree``, ``code-block``, ``literalinclude``, the Python domain, ``versionadded``, ...);
any other unknown directive keeps its content and any unknown role keeps its text, so a page
never fails on an extension it does not know. File inclusion and raw HTML are off in docutils:
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
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, ClassVar

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
_SIG_NAME = re.compile(r"^\s*(?:(?:async|class|final|abstract|static)\s+)*([\w.]+)")
_REF_TARGET = re.compile(r"^(.*?)\s*<([^<>]+)>$", re.S)
# Sphinx admonition-like directives: their text is kept under a bold label.
_LABELLED = {
    "versionadded": "Added in version", "versionchanged": "Changed in version",
    "deprecated": "Deprecated since version", "versionremoved": "Removed in version",
    "seealso": "See also", "impl-detail": "CPython implementation detail",
}  # fmt: skip
_CODE_DIRECTIVES = ("code-block", "sourcecode", "code")
_TEST_CODE = ("testcode", "testsetup", "testcleanup", "doctest", "testoutput")
_DROPPED = (
    "index", "tabularcolumns", "sectionauthor", "moduleauthor", "codeauthor", "toctree-hidden",
    "autosummary", "automodule", "autoclass", "autofunction", "automethod", "autodata",
    "autoattribute", "autoexception", "currentmodule", "highlight", "highlightlang", "default-role",
    "default-domain", "program", "meta", "raw",
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
    """Unknown directives: the content is parsed and kept, arguments and options ignored."""

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
        label = _LABELLED.get(self.name, self.name)
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
        default = "python" if self.name in _TEST_CODE else _state(self).highlight
        language = self.arguments[0].strip() if self.arguments else default
        if self.name == "testoutput":
            language = "text"
        text = "\n".join(self.content)
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


def _text_role(
    name: str,
    rawtext: str,
    text: str,
    lineno: int,
    inliner: Inliner,
    options: dict[str, Any] | None = None,
    content: list[str] | None = None,
) -> tuple[list[nodes.Node], list[nodes.system_message]]:
    # Unknown roles (`:c:func:`, `:envvar:`, `:pep:`...) keep their text, shown as code.
    text = utils.unescape(text)
    m = _REF_TARGET.match(text)
    return [nodes.literal(rawtext, m.group(1) or m.group(2) if m else text)], []


def _directive_for(name: str) -> type[Directive]:
    bare = name.removeprefix("py:")
    if bare in PY_OBJECTS and (name.startswith("py:") or ":" not in name):
        return _PyObject
    if name in ("module", "currentmodule", "py:module", "py:currentmodule"):
        return _PyObject if bare == "module" else _Dropped
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
    if name in _LABELLED:
        return _Labelled
    if name in _DROPPED:
        return _Dropped
    return _Generic


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
    text: str, docname: str, source: str = "<rst>", read: TextReader | None = None
) -> RstDoc:
    """Parse one page; never raises on markup (problems stay in the doctree, unreported).
    ``read`` gives the text of a file an ``include`` names (None: not found or not allowed)."""
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
    settings.cogitave_state = _ParseState(doc, read=read)
    with _sphinx_lookups():
        Parser().parse(text, document)
    document.transformer.populate_from_components([])
    _apply_transforms(document)
    _collect_labels(doc)
    return doc


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
