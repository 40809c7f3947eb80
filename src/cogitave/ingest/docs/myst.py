"""MyST Markdown (the Markdown pages of a Sphinx tree) -> plain Markdown: directives and roles.

MyST writes a directive as a fence whose info string is ``{name} argument`` (options as
``:key: value`` lines or a ``---`` YAML block at the top of the body) and a role as
``{name}`` before a code span. Each gets a defined outcome, as in reStructuredText
(:mod:`~cogitave.ingest.docs.rst`):

- ``{eval-rst}``: its body rendered through the reStructuredText path;
- ``{code-block}``, ``{code}``, ``{sourcecode}``, a directive whose name says code
  (``example``, ``run``, ``console``...) or whose body reads as code: a fence with the
  language of its argument or ``:language:`` option, the body byte for byte;
- ``{literalinclude}`` and ``{include}``: the file's text, through the caller's reader (a
  fence for the first, Markdown for the second);
- admonitions and ``versionadded`` and friends: a bold label (the title or the version) and
  the body; containers and unknown directives: a title argument in bold and the body, which
  is Markdown; object descriptions (``{option}``, ``{py:function}``): the signature as code;
- what only drives the build (``toctree``, ``contents``, ``currentmodule``, ``index``, the
  autodoc directives, ``image``): nothing;
- a role (``{func}`~pkg.run```): its text as a code span, as an unresolved role renders in
  reStructuredText; ``{ref}`` and ``{doc}`` stay as written (the page parser reads them as
  links).

Lines are kept where they were when the Markdown is not longer than the directive (blank
lines pad it), so reported line numbers still point into the file; an ``{eval-rst}`` block
or an include rendered longer shifts the lines after it.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from cogitave.ingest.docs.rst import (
    CODE_NAME,
    CONTAINERS,
    DESCRIBE,
    LABELLED,
    guess_language,
    looks_like_code,
)

RenderRst = Callable[[str], str]  # reStructuredText -> Markdown
ReadFile = Callable[[str], "tuple[str, str] | None"]  # path as written -> (text, language)

_OPEN = re.compile(r"^(?P<indent> {0,3})(?P<fence>`{3,}|~{3,})\{(?P<name>[\w:.+-]+)\}(?P<arg>.*)$")
_OPTION = re.compile(r"^\s*:([\w-]+):(?:\s+(.*?))?\s*$")
_ROLE = re.compile(r"\{(?P<name>[A-Za-z][\w:.+-]*)\}(?P<ticks>`+)(?P<text>.+?)(?P=ticks)")
_SPAN = re.compile(r"(`+).+?\1")
_TITLE_TARGET = re.compile(r"^(.*?)\s*<([^<>]+)>$", re.S)
_LINK_ROLES = frozenset(("ref", "doc", "std:ref", "std:doc"))
_CODE = frozenset(("code-block", "code", "sourcecode", "code-cell"))
_ADMONITIONS = frozenset(
    ("note", "warning", "tip", "hint", "caution", "danger", "error", "important", "attention",
     "admonition", "todo", "seealso", "impl-detail")
)  # fmt: skip
_BUILD_ONLY = frozenset(
    ("toctree", "contents", "currentmodule", "py:currentmodule", "module", "py:module",
     "index", "highlight", "tabularcolumns", "image", "figure", "raw", "meta", "autosummary",
     "automodule", "autoclass", "autofunction", "automethod", "autodata", "autoattribute",
     "autoexception", "rst-class", "sectionauthor", "moduleauthor", "codeauthor")
)  # fmt: skip
_PY_ROLES = frozenset(("func", "meth", "py:func", "py:meth"))
MAX_DEPTH = 8  # directives nested deeper are kept as written


def myst_markdown(body: str, render_rst: RenderRst, read: ReadFile | None = None) -> str:
    """``body`` (a MyST page's Markdown) with its directives and roles made plain Markdown."""
    return "\n".join(_lines(body.split("\n"), render_rst, read, 0))


def _lines(lines: list[str], render_rst: RenderRst, read: ReadFile | None, depth: int) -> list[str]:
    out: list[str] = []
    i = 0
    plain_fence = ""  # an ordinary fence we are inside: left alone
    while i < len(lines):
        line = lines[i]
        stripped = line.lstrip()
        if plain_fence:
            out.append(line)
            if stripped.startswith(plain_fence) and not stripped.strip(plain_fence[0]).strip():
                plain_fence = ""
            i += 1
            continue
        m = _OPEN.match(line)
        if m is None or depth > MAX_DEPTH:
            f = re.match(r"(`{3,}|~{3,})", stripped)
            if f and len(line) - len(stripped) <= 3:
                plain_fence = f.group(1)
                out.append(line)
            else:
                out.append(_roles(line))
            i += 1
            continue
        fence = m.group("fence")
        end = i + 1
        while end < len(lines):
            s = lines[end].strip()
            if s.startswith(fence) and not s.strip(fence[0]):
                break
            end += 1
        inner = [x[len(m.group("indent")) :] if x.startswith(m.group("indent")) else x
                 for x in lines[i + 1 : end]]  # fmt: skip
        block = _directive(
            m.group("name"), m.group("arg").strip(), inner, fence, render_rst, read, depth
        )
        span = min(end, len(lines) - 1) - i + 1  # the lines the directive took
        out.extend(block + [""] * (span - len(block)))
        i = end + 1
    return out


def _directive(
    name: str,
    arg: str,
    inner: list[str],
    fence: str,
    render_rst: RenderRst,
    read: ReadFile | None,
    depth: int,
) -> list[str]:
    options, body = _options(inner)
    name = name.lower()
    bare = name.rpartition(":")[2]
    text = "\n".join(body)
    if name == "eval-rst":
        return render_rst(text).rstrip("\n").split("\n")
    if name in _BUILD_ONLY:
        return []
    if name in ("literalinclude", "include"):
        found = read(arg) if read is not None and arg else None
        if found is None:
            return []
        code, language = found
        if name == "include":
            return _lines(code.rstrip("\n").split("\n"), render_rst, None, depth + 1)
        language = options.get("language") or language
        ticks = "`" * max([3, *(len(t) + 1 for t in re.findall(r"`{3,}", code))])
        return [f"{ticks}{language}", *code.rstrip("\n").split("\n"), ticks]
    known = name in _ADMONITIONS or name in LABELLED or name in CONTAINERS or name in DESCRIBE
    nested_fence = any(x.lstrip().startswith(("```", "~~~")) for x in body)
    guessed = not known and ":" not in name and not nested_fence and looks_like_code(text)
    if name in _CODE or CODE_NAME.search(bare) or guessed:
        language = options.get("language") or options.get("lang") or ""
        if not language and arg and re.fullmatch(r"[A-Za-z][\w+#.-]{0,24}", arg):
            language = arg
        language = language or guess_language(text)
        while body and not body[-1].strip():
            body.pop()
        while body and not body[0].strip():
            body.pop(0)
        caption = options.get("caption") or ("" if language == arg else arg)
        head = [f"**{caption}**", ""] if caption else []
        return [*head, f"{fence}{language}", *body, fence]
    nested = _lines(body, render_rst, read, depth + 1)
    if name in LABELLED:
        version, _, rest = arg.partition(" ")
        if name in ("seealso", "impl-detail"):
            version, rest = "", arg
        label = f"{LABELLED[name]} {version}".strip() + ":"
        return [f"**{label}**" + (f" {rest.strip()}" if rest.strip() else ""), "", *nested]
    if name in _ADMONITIONS:
        label = arg if name == "admonition" and arg else name.replace("-", " ").capitalize()
        return [f"**{label}:**" if name != "admonition" else f"**{label}**", "", *nested]
    if name in DESCRIBE or (":" in name and not name.startswith("eval")):
        sigs = [f"`{s.strip()}`" for s in arg.split("\n") if s.strip()]
        return [*sigs, "", *nested] if sigs else nested
    return ([f"**{arg}**", ""] if arg else []) + nested


def _options(inner: list[str]) -> tuple[dict[str, str], list[str]]:
    """A directive body's options (``:key: value`` lines or a ``---`` YAML block at its top)
    and the rest of it."""
    options: dict[str, str] = {}
    k = 0
    if inner and inner[0].strip() == "---":
        end = next((j for j in range(1, len(inner)) if inner[j].strip() == "---"), None)
        if end is not None:
            for line in inner[1:end]:
                key, colon, value = line.partition(":")
                if colon and key.strip():
                    options[key.strip()] = value.strip().strip("'\"")
            return options, inner[end + 1 :]
    while k < len(inner) and (o := _OPTION.match(inner[k])):
        options[o.group(1)] = o.group(2) or ""
        k += 1
    if k and k < len(inner) and not inner[k].strip():
        k += 1  # the blank line after the options
    return options, inner[k:]


def _roles(line: str) -> str:
    """``{role}`text``` -> a code span of the text it shows; code spans left alone."""
    if "}`" not in line:
        return line
    out: list[str] = []
    pos = 0
    while pos < len(line):
        role = _ROLE.search(line, pos)
        span = _SPAN.search(line, pos)
        if role is None:
            break
        if span is not None and span.start() < role.start():
            out.append(line[pos : span.end()])
            pos = span.end()
            continue
        out.append(line[pos : role.start()])
        name = role.group("name").lower()
        if name in _LINK_ROLES:
            out.append(role.group(0))
        elif name in ("pep", "rfc"):  # as docutils shows them: "PEP 8"
            out.append(f"{name.upper()} {role.group('text').strip()}")
        else:
            out.append(_code(_shown(name, role.group("text"))))
        pos = role.end()
    out.append(line[pos:])
    return "".join(out)


def _shown(role: str, text: str) -> str:
    """What Sphinx shows for an unresolved role: the title, else the target (``~a.b`` ->
    ``b``, ``!x`` -> ``x``, a function's with ``()``)."""
    m = _TITLE_TARGET.match(text)
    if m and m.group(1):
        return m.group(1)
    target = (m.group(2) if m else text).strip()
    plain = target.startswith("!")
    target = target.lstrip("!")
    if target.startswith("~"):
        target = target[1:].rsplit(".", 1)[-1]
    if role in _PY_ROLES and not plain and not target.endswith(")"):
        target += "()"
    return target


def _code(text: str) -> str:
    ticks = "``" if "`" in text else "`"
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{ticks}{pad}{text}{pad}{ticks}"
