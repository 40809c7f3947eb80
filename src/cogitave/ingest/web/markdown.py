"""A page's main-content HTML -> clean Markdown for the docs builder, and the API objects
it declares.

The Markdown is what the rest of the docs reader already understands
(:func:`~cogitave.ingest.docs.parse.parse_page`): headings carry the page's own anchors as
``{ #id }`` (the heading's id, its permalink's, or its Sphinx ``<section>``'s), so sections
land where the site's links point; code blocks are fenced with the language the generator
marked (``language-x``, ``highlight-x``, ``data-language``), line numbers and copy buttons
left out; links are absolute URLs (internal ones mapped to the public site by the caller);
lists, tables, quotes and definition lists keep their shape. Images, forms, scripts and
buttons are not text and are dropped.

Sphinx's Python objects (``<dl class="py function"><dt id="pathlib.Path.read_text">``)
become :class:`ApiFound` entries (dotted name, kind, signature, anchor, the section they sit
in and their own Markdown) besides being written into the page, as the reStructuredText
reader gives them (:mod:`~cogitave.ingest.docs.rst_markdown`).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from lxml import html as lxml_html

from cogitave.ingest.tables import markdown_table

HtmlElement = lxml_html.HtmlElement
LinkMap = Callable[[str], str | None]
"""A link target as written -> the absolute URL to write (None: write the text alone)."""

CELLS = ("td", "th")
SKIP_TAGS = frozenset(
    "script style noscript template svg button form input select textarea iframe object "  # noqa: SIM905
    "embed canvas video audio img picture source link meta nav footer".split()
)
BLOCK_TAGS = frozenset(
    "p div section article main aside header figure figcaption details summary blockquote "  # noqa: SIM905
    "pre ul ol li dl dt dd table thead tbody tfoot tr td th hr h1 h2 h3 h4 h5 h6 center "
    "address fieldset".split()
)
# Sphinx's kinds of Python objects (the class beside ``py`` on their ``<dl>``).
API_KINDS = frozenset(
    "function class method attribute data exception module property classmethod "  # noqa: SIM905
    "staticmethod decorator decoratormethod coroutinefunction coroutinemethod "
    "abstractmethod type pydata".split()
)
_LANG_CLASS = re.compile(r"^(?:language|lang|highlight|sourceCode|brush:?)-?([\w+#.-]+)$", re.I)
_SPHINX_HIGHLIGHT = re.compile(r"^highlight-([\w+#.-]+)$", re.I)
_LANG_ALIASES = {
    "python3": "python", "py": "python", "py3": "python", "ipython3": "python",
    "shell": "bash", "sh": "bash", "zsh": "bash", "shell-session": "console",
    "default": "text", "none": "text", "plaintext": "text", "txt": "text", "plain": "text",
    "js": "javascript", "ts": "typescript", "yml": "yaml",
}  # fmt: skip
CODE_LABELS = frozenset(
    "python bash shell sh console javascript js typescript ts json yaml yml toml go rust java "  # noqa: SIM905
    "kotlin swift c c++ cpp c# csharp ruby php html css scss sql jsx tsx text xml dockerfile "
    "ini graphql".split()
)
_SPACE = re.compile(r"[ \t\r\n\f\v]+")
_BR = "\x00"
_LINE_START = re.compile(r"^(?:[#>+-]|=+|\d+[.)])(?=\s|$)")


@dataclass(frozen=True)
class ApiFound:
    """A Python object a Sphinx page declares."""

    name: str
    objtype: str
    signature: str
    anchor: str
    section: str
    """The anchor of the heading it sits under ("" for the page's intro)."""
    markdown: str


@dataclass
class Converted:
    """A page's Markdown and the API objects found in it."""

    markdown: str
    api: list[ApiFound] = field(default_factory=list)


def to_markdown(root: HtmlElement, link: LinkMap) -> Converted:
    """The Markdown of ``root`` (a page's main content), links written through ``link``."""
    w = _Writer(link)
    text = "\n\n".join(b for b in w.blocks(root) if b.strip())
    return Converted(re.sub(r"\n{3,}", "\n\n", text).strip() + "\n", w.api)


def code_language(pre: HtmlElement) -> str:
    """The language a code block is marked with (on it, its ``<code>`` or an enclosing
    element a few levels up), ``text`` when none."""
    candidates: list[HtmlElement] = [*pre.iterchildren("code"), pre]
    parent = pre.getparent()
    for _ in range(3):
        if parent is None:
            break
        candidates.append(parent)
        parent = parent.getparent()
    prev = pre.getprevious() if pre.getprevious() is not None else None
    parent = pre.getparent()
    for before in (prev, parent.getprevious() if parent is not None else None):
        if before is not None and isinstance(before.tag, str) and (word := code_label(before)):
            candidates.append(before)
            if not any(_marked(el) for el in candidates[:-1]):
                return word
    for el in candidates:
        for attr in ("data-language", "data-lang", "lang"):
            value = (el.get(attr) or "").strip().lower()
            if value and el.tag != "html" and re.fullmatch(r"[\w+#.-]+", value):
                return _LANG_ALIASES.get(value, value)
        for cls in (el.get("class") or "").split():
            m = _LANG_CLASS.match(cls)
            if m and m.group(1).lower() not in ("", "notranslate", "table"):  # highlighttable
                value = m.group(1).lower()
                return _sphinx_default(pre, cls) or _LANG_ALIASES.get(value, value)
    # Sphinx marks the language on its wrapper, ``<div class="highlight-python">``, which
    # a line-number table or a container may put further up.
    for anc in pre.iterancestors():
        if anc.tag in ("body", "html", "main", "article"):
            break
        for cls in (anc.get("class") or "").split():
            m = _SPHINX_HIGHLIGHT.match(cls)
            if m:
                value = m.group(1).lower()
                return _sphinx_default(pre, cls) or _LANG_ALIASES.get(value, value)
    return "text"


def _sphinx_default(pre: HtmlElement, cls: str) -> str:
    """Sphinx's ``highlight-default``: Python when Pygments could lex it as Python (its
    token spans are there), else plain text; "" for any other class."""
    if cls.lower() != "highlight-default":
        return ""
    return "python" if pre.xpath(".//span[@class and not(@class='linenos')]") else "text"


def code_label(el: HtmlElement) -> str | None:
    """The language an element names when it is the label a theme shows above a code block
    (GitBook, some Hugo themes): one known language word right before a ``<pre>``."""
    nxt = el.getnext()
    while nxt is not None and not isinstance(nxt.tag, str):
        nxt = nxt.getnext()
    if nxt is None or el.tag == "pre" or (nxt.tag != "pre" and nxt.find(".//pre") is None):
        return None
    word = " ".join(_text(el).split()).lower()
    return _LANG_ALIASES.get(word, word) if word in CODE_LABELS else None


def _marked(el: HtmlElement) -> bool:
    """Whether an element carries a language mark of its own."""
    if any(el.get(a) for a in ("data-language", "data-lang")):
        return True
    return any(_LANG_CLASS.match(c) for c in (el.get("class") or "").split())


def heading_anchor(h: HtmlElement) -> str:
    """A heading's anchor: its id, its permalink's target, or the id of the ``<section>`` it
    opens (Sphinx), or of an empty anchor element just before it."""
    if h.get("id"):
        return str(h.get("id"))
    for a in h.iter("a"):
        href = a.get("href") or ""
        if href.startswith("#") and len(href) > 1:
            return href[1:]
        if a.get("id") or a.get("name"):
            return str(a.get("id") or a.get("name"))
    for el in h.iter("span"):
        if el.get("id"):
            return str(el.get("id"))
    parent = h.getparent()
    if parent is not None and parent.get("id") and _first_element(parent) is h:
        return str(parent.get("id"))
    prev = h.getprevious()
    if prev is not None and prev.tag in ("a", "span", "div") and not _text(prev).strip():
        return str(prev.get("id") or prev.get("name") or "")
    return ""


def _first_element(el: HtmlElement) -> HtmlElement | None:
    for child in el:
        if isinstance(child.tag, str):
            return child
    return None


def _text(el: HtmlElement) -> str:
    return str(el.text_content())


def _classes(el: HtmlElement) -> set[str]:
    return set((el.get("class") or "").split())


def _escape(text: str) -> str:
    """Text as Markdown shows it: emphasis, code and link characters escaped."""
    text = text.replace("\\", "\\\\")
    text = re.sub(r"([*`\[\]<])", r"\\\1", text)
    return re.sub(r"(?<![\w])_|_(?![\w])", r"\\_", text)


def _ticks(code: str) -> str:
    """Backticks that open an inline code span holding ``code``."""
    longest = max((len(m) for m in re.findall(r"`+", code)), default=0)
    return "`" * (longest + 1)


def _inline_code(code: str) -> str:
    code = _SPACE.sub(" ", code).strip()
    if not code:
        return ""
    ticks = _ticks(code)
    pad = " " if code.startswith("`") or code.endswith("`") else ""
    return f"{ticks}{pad}{code}{pad}{ticks}"


class _Writer:
    """One conversion (see the module doc)."""

    def __init__(self, link: LinkMap) -> None:
        self.link = link
        self.api: list[ApiFound] = []
        self.section = ""

    # -- blocks -----------------------------------------------------------------------------
    def blocks(self, el: HtmlElement) -> list[str]:
        """The Markdown blocks of ``el``'s content: inline runs become paragraphs."""
        out: list[str] = []
        run: list[str] = []
        if el.text:
            run.append(_escape(el.text))
        for child in el:
            tag = child.tag.lower() if isinstance(child.tag, str) else ""
            if tag:
                self._module_target(child)
            if tag and code_label(child) is not None:
                pass  # the language shown above a code block: the fence says it
            elif tag and tag not in SKIP_TAGS:
                if tag in BLOCK_TAGS or self._holds_blocks(child):
                    self._flush(run, out)
                    out.extend(self.block(child))
                else:
                    run.append(self.inline(child))
            if child.tail:
                run.append(_escape(child.tail))
        self._flush(run, out)
        return out

    def _module_target(self, el: HtmlElement) -> None:
        """Sphinx's ``.. module::`` target (``id="module-x"`` on a ``<span class="target">``,
        or on the page's ``<section>``): the module's ``api`` entry, as the reStructuredText
        reader makes it."""
        ident = el.get("id") or ""
        if not ident.startswith("module-"):
            return
        name = ident.removeprefix("module-")
        if name and all(part.isidentifier() for part in name.split(".")):
            self.api.append(ApiFound(name, "module", "", ident, self.section, f"`module {name}`"))

    def _holds_blocks(self, el: HtmlElement) -> bool:
        """An inline element wrapping blocks (``<span><pre>``, ``<a><div>``)."""
        return el.tag in ("span", "a", "label") and any(
            isinstance(d.tag, str) and d.tag in ("p", "pre", "div", "ul", "ol", "table", "dl")
            for d in el.iterdescendants()
        )

    @staticmethod
    def _flush(run: list[str], out: list[str]) -> None:
        text = _SPACE.sub(" ", "".join(run)).replace(_BR, "\n").strip()
        text = "\n".join(line.strip() for line in text.split("\n"))
        run.clear()
        if text:
            out.append("\\" + text if _LINE_START.match(text) else text)

    def block(self, el: HtmlElement) -> list[str]:
        tag = el.tag.lower()
        if tag in ("h1", "h2", "h3", "h4", "h5", "h6"):
            return [self.heading(el, int(tag[1]))]
        if tag == "pre":
            return [self.code(el)]
        if tag in ("ul", "ol"):
            return [self.list(el, tag == "ol")]
        if tag == "dl":
            return self.definitions(el)
        if tag == "table":
            return [self.table(el)]
        if tag == "blockquote":
            inner = "\n\n".join(self.blocks(el))
            return ["\n".join("> " + line if line else ">" for line in inner.split("\n"))]
        if tag == "hr":
            return []
        if tag == "p" and "admonition-title" in _classes(el):
            title = self.inline_of(el)
            return [f"**{title}**"] if title else []
        return self.blocks(el)

    def heading(self, el: HtmlElement, level: int) -> str:
        anchor = heading_anchor(el)
        text = self.inline_of(el).replace("\n", " ").strip() or anchor
        if anchor:
            self.section = anchor
        attr = f" {{ #{anchor} }}" if anchor and re.fullmatch(r"[\w:.-]+", anchor) else ""
        return f"{'#' * level} {text}{attr}"

    def code(self, el: HtmlElement) -> str:
        language = code_language(el)
        code = _code_text(el).strip("\n")
        longest = max((len(m) for m in re.findall(r"^`{3,}", code, re.M)), default=2)
        fence = "`" * max(3, longest + 1)
        return f"{fence}{'' if language == 'text' else language}\n{code}\n{fence}"

    def list(self, el: HtmlElement, ordered: bool) -> str:
        items: list[str] = []
        start = el.get("start", "1")
        n = int(start) if start.isdigit() else 1
        for li in el:
            if not isinstance(li.tag, str) or li.tag != "li":
                continue
            body = ""
            for b in (b for b in self.blocks(li) if b.strip()):
                nested = re.match(r"(?:- |\d+\. )", b) is not None
                body = f"{body}{chr(10) if nested else chr(10) * 2}{b}" if body else b
            marker = f"{n}. " if ordered else "- "
            lines = body.split("\n") if body else [""]
            pad = " " * len(marker)
            items.append(
                "\n".join([marker + lines[0], *((pad + x) if x else "" for x in lines[1:])])
            )
            n += 1
        return "\n".join(items)

    def definitions(self, el: HtmlElement) -> list[str]:
        """A definition list; a Sphinx Python object's is an API entry."""
        classes = _classes(el)
        kinds = classes & API_KINDS
        if kinds and ("py" in classes or not classes - API_KINDS - {"describe"}):
            return [self.api_entry(el, sorted(kinds)[0])]
        out: list[str] = []
        for child in el:
            if not isinstance(child.tag, str):
                continue
            if child.tag == "dt":
                term = self.inline_of(child)
                if term:
                    out.append(f"**{term}**" if "*" not in term else term)
            elif child.tag == "dd":
                out.extend(self.blocks(child))
        return out

    def api_entry(self, el: HtmlElement, objtype: str) -> str:
        """A Sphinx object: its signature(s) as code, then its description."""
        section = self.section
        sigs: list[tuple[str, str]] = []  # (anchor, signature)
        body: list[str] = []
        for child in el:
            if not isinstance(child.tag, str):
                continue
            if child.tag == "dt":
                for drop in child.xpath(
                    ".//a[contains(@class,'headerlink')]|.//*[contains(@class,'viewcode-link')]"
                ):
                    drop.drop_tree()
                sig = _SPACE.sub(" ", _text(child)).replace("¶", "")
                sigs.append((str(child.get("id") or ""), sig.strip()))
            elif child.tag == "dd":
                body.extend(self.blocks(child))
        kind = "" if objtype in ("function", "method", "data") else objtype + " "
        head = "\n".join(_inline_code(kind + sig) for _, sig in sigs if sig)
        md = "\n\n".join([head, *(b for b in body if b.strip())]).strip()
        for anchor, sig in sigs:
            if anchor and ("." in anchor or anchor.isidentifier()):
                self.api.append(ApiFound(anchor, objtype, sig, anchor, section, md))
        return md

    def table(self, el: HtmlElement) -> str:
        if "highlighttable" in _classes(el):  # Pygments' line-number table: the code cell
            pres = el.xpath(".//td[contains(@class,'code')]//pre")
            return self.code(pres[0]) if pres else ""
        return markdown_table(
            [
                [" ".join(self.blocks(c)) for c in tr if isinstance(c.tag, str) and c.tag in CELLS]
                for tr in el.xpath("./tr|./thead/tr|./tbody/tr|./tfoot/tr")
            ]
        )

    # -- inline -----------------------------------------------------------------------------
    def inline_of(self, el: HtmlElement) -> str:
        """``el``'s content as one line of inline Markdown."""
        parts = [_escape(el.text or "")]
        for child in el:
            if isinstance(child.tag, str) and child.tag not in SKIP_TAGS:
                parts.append(self.inline(child))
            if child.tail:
                parts.append(_escape(child.tail))
        return _SPACE.sub(" ", "".join(parts)).replace(_BR, " ").strip()

    def inline(self, el: HtmlElement) -> str:
        tag = el.tag.lower()
        if tag == "br":
            return _BR
        if tag in ("code", "kbd", "samp", "tt"):
            return _inline_code(_text(el))
        inner = self.inline_of(el) if tag not in BLOCK_TAGS else " ".join(self.blocks(el))
        if tag in ("strong", "b") and inner:
            return f"**{inner}**"
        if tag in ("em", "i", "cite", "var") and inner and "*" not in inner:
            return f"*{inner}*"
        if tag == "a":
            href = el.get("href")
            if href and href.startswith("#") and not re.search(r"\w", inner):
                return ""  # a heading's permalink icon (¶, #, an empty anchor)
            target = self.link(href) if href else None
            if target and inner:
                return f"[{inner}]({_link_target(target)})"
        return inner


def _code_text(pre: HtmlElement) -> str:
    """A code block's text without line numbers, prompts' copy markers or buttons."""
    drop = pre.xpath(
        ".//*[contains(concat(' ', normalize-space(@class), ' '), ' linenos ')"
        " or contains(concat(' ', normalize-space(@class), ' '), ' lineno ')"
        " or self::button]"
    )
    for el in drop:
        el.drop_tree()
    lines = pre.xpath(".//*[contains(concat(' ', normalize-space(@class), ' '), ' line ')]")
    if lines and all(line.tail in (None, "", "\n") for line in lines):
        # Expressive Code / Shiki: one element per line, sometimes without newlines between
        text = "\n".join(_text(line) for line in lines)
        if text.strip():
            return text
    return _text(pre)


def _link_target(url: str) -> str:
    """A URL as a Markdown link destination (``<...>`` when it holds spaces or parens)."""
    if re.search(r"[\s()<>]", url):
        return "<" + url.replace("<", "%3C").replace(">", "%3E") + ">"
    return url
