"""One Markdown page -> headings (with anchors), prose text, fenced code, includes and links.

Parsing is markdown-it-py's CommonMark token stream (plus tables); nothing here touches the
file system or other pages, so it is a pure function of (text, anchor style).
"""

from __future__ import annotations

import itertools
import re
import unicodedata
from dataclasses import dataclass, field
from typing import Literal

from markdown_it import MarkdownIt
from markdown_it.token import Token

AnchorStyle = Literal["toc", "github", "vitepress", "sphinx"]
MAX_SECTION_LEVEL = 4

_MD = MarkdownIt("commonmark", {"html": True}).enable("table")

# `{ #custom-id .class key=value }` at the end of a heading (Python-Markdown attr_list, Hugo).
_ATTR_LIST = re.compile(
    r"\s*\{:?\s*((?:[#.][\w:.-]+|[\w-]+=\S+)(?:\s+(?:[#.][\w:.-]+|[\w-]+=\S+))*)\s*\}\s*$"
)
_ATTR_ID = re.compile(r"(?:^|\s)#([\w:.-]+)")
# FastAPI `{* path hl[3] *}` (markdown_include_variants) and mdx_include `{! path !}`/`{!> path !}`.
_INCLUDE = re.compile(r"^\s*\{([*!])>?\s*(\S+?)(?:\s+([^*!]*?))?\s*\1\}\s*$")
# Hugo `{{< ref "x" >}}`, `{{% relref path="x" %}}`; `{{</* ref */>}}` is an escaped example.
_HUGO_REF = re.compile(r"\{\{[<%]\s*(?:rel)?ref\s+(?:path=)?[\"']([^\"']+)[\"'][^}]*?[>%]\}\}")
# Hugo docs' `{{% include "_common/x.md" %}}` transcludes a snippet page.
_HUGO_INCLUDE = re.compile(r"\{\{[<%]\s*include\s+[\"']([^\"']+)[\"']\s*[>%]\}\}")
_INLINE_CODE = re.compile(r"(`+)[^`].*?\1", re.S)
# Block markers of admonitions/tabs that are markup, not prose: `/// tip`, `!!! note "x"`.
_MARKER_LINE = re.compile(r"^\s*(?:/{3,}.*|[!?]{3}\+?(?:\s.*)?)$", re.M)
_SHORTCODE = re.compile(r"\{\{[<%].*?[>%]\}\}", re.S)
_UNDEFINED_REF = re.compile(r"\[([^\[\]]+)\]\[([^\[\]]*)\]")


@dataclass
class Heading:
    """A heading; ``end`` is the body line index where its section ends (exclusive)."""

    level: int
    text: str
    anchor: str
    line: int
    end: int = 0
    parent: int = -1
    is_section: bool = False
    own_text: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class CodeBlock:
    """A fenced block, or an include directive (``include`` = the path written in the page)."""

    language: str
    code: str
    line: int
    heading: int
    markdown: str
    include: str | None = None
    options: str = ""


@dataclass(frozen=True)
class LinkRef:
    """A link target found in the page; ``kind`` is link, ref (Hugo shortcode) or undefined."""

    target: str
    line: int
    heading: int
    kind: Literal["link", "ref", "undefined"] = "link"
    text: str = ""


@dataclass(frozen=True)
class DefEntry:
    """A definition-list entry with its own id (``term`` then ``: definition`` lines)."""

    anchor: str
    heading: int
    term: str  # the term as written (Markdown)
    markdown: str  # the term line and its definition lines
    line: int  # 0-based index of the term line in the body


@dataclass
class ParsedPage:
    """Everything a page yields; lines are 0-based indexes into the body lines."""

    lines: list[str]
    title: str = ""
    title_anchor: str = ""
    intro: list[str] = field(default_factory=list)
    headings: list[Heading] = field(default_factory=list)
    code: list[CodeBlock] = field(default_factory=list)
    links: list[LinkRef] = field(default_factory=list)
    terms: list[tuple[str, int]] = field(default_factory=list)  # (anchor, heading) of <dt>s
    entries: list[DefEntry] = field(default_factory=list)  # definition-list entries with ids
    transclusions: list[tuple[str, int]] = field(default_factory=list)  # Hugo include shortcodes

    def section_body(self, i: int) -> str:
        """Prose under heading ``i`` down to the next heading of the same or higher level."""
        h = self.headings[i]
        parts: list[str] = []
        for j in range(i, len(self.headings)):
            if j > i and self.headings[j].line >= h.end:
                break
            if j > i:
                parts.append(self.headings[j].text)
            parts.extend(self.headings[j].own_text)
        return "\n".join(p for p in parts if p)

    def section_markdown(self, i: int) -> str:
        """The Markdown source of heading ``i``'s section, heading line included."""
        h = self.headings[i]
        return "\n".join(self.lines[h.line : h.end]).strip("\n")

    def section_of(self, heading: int) -> int:
        """The innermost enclosing *section* heading index (or -1 for the page)."""
        while heading >= 0 and not self.headings[heading].is_section:
            heading = self.headings[heading].parent
        return heading


def slugify_toc(text: str) -> str:
    """Python-Markdown ``toc`` slugify (MkDocs default): ASCII-folded, lowercase, '-'."""
    value = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    value = re.sub(r"[^\w\s-]", "", value).strip().lower()
    return re.sub(r"[-\s]+", "-", value)


def slugify_github(text: str) -> str:
    """GitHub / Hugo goldmark ``github`` style: keep letters, digits, '-', '_'; space -> '-'."""
    out = []
    for ch in text.strip().lower():
        if ch.isalnum() or ch in "-_":
            out.append(ch)
        elif ch.isspace():
            out.append("-")
    return "".join(out)


_VP_SPECIAL = re.compile(r"[\s~`!@#$%^&*()\-_+=\[\]{}|\\;:\"'“”‘’<>,.?/]+")


def slugify_vitepress(text: str) -> str:
    """VitePress (``@mdit-vue/shared``) slugify: specials -> '-', trimmed, lowercase."""
    value = unicodedata.normalize("NFKD", text)
    value = re.sub(r"[\u0300-\u036f]", "", value)
    value = re.sub(r"[\u0000-\u001f]", "", value)
    value = _VP_SPECIAL.sub("-", value)
    value = re.sub(r"-{2,}", "-", value).strip("-")
    value = re.sub(r"^(\d)", r"_\1", value)
    return value.lower()


def slugify_sphinx(text: str) -> str:
    """docutils ``make_id``: ASCII, lowercase, runs of other characters -> '-'."""
    value = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    value = re.sub(r"[^a-z0-9]+", "-", value.lower()).strip("-")
    return re.sub(r"^[^a-z]+", "", value)


_MYST_ROLE = re.compile(r"\{(?:ref|doc|std:ref|std:doc)\}$")
_ROLE_TARGET = re.compile(r"(?:(.*?)\s*<([^<>]+)>|([^<>]+))", re.DOTALL)
_MYST_TARGET = re.compile(r"^\(([^()\s][^()]*)\)=[ \t]*$", re.MULTILINE)


def myst_targets(body: str) -> tuple[str, dict[int, str]]:
    """MyST ``(label)=`` target lines of a Sphinx Markdown page: the body with them blanked
    (line numbers kept) and ``{line index: label}``. Fenced code is left alone."""
    lines = body.split("\n")
    found: dict[int, str] = {}
    fence = ""
    for i, line in enumerate(lines):
        stripped = line.lstrip()
        if stripped.startswith(("```", "~~~")):
            mark = stripped[:3]
            fence = "" if fence == mark else fence or mark
            continue
        if not fence and (m := _MYST_TARGET.match(line)):
            found[i] = m.group(1).strip()
            lines[i] = ""
    return ("\n".join(lines), found) if found else (body, {})


def slugify(text: str, style: AnchorStyle) -> str:
    """The anchor a heading ``text`` gets in ``style``."""
    return _SLUGIFY[style](text)


def _unique(anchor: str, seen: set[str], style: AnchorStyle) -> str:
    if style == "toc":
        # Python-Markdown's `unique`: `x`, `x_1`, `x_2`, ...
        candidate = anchor or "_1"
        while candidate in seen:
            m = re.match(r"^(.*)_([0-9]+)$", candidate)
            candidate = f"{m.group(1)}_{int(m.group(2)) + 1}" if m else f"{candidate}_1"
    else:
        candidate, n = anchor or "heading", 0
        while candidate in seen:
            n += 1
            candidate = f"{anchor or 'heading'}-{n}"
    seen.add(candidate)
    return candidate


_SLUGIFY = {
    "toc": slugify_toc,
    "github": slugify_github,
    "vitepress": slugify_vitepress,
    "sphinx": slugify_sphinx,
}


def _inline_text(tok: Token) -> str:
    parts: list[str] = []
    for c in tok.children or ():
        if c.type in ("text", "code_inline"):
            parts.append(c.content)
        elif c.type in ("softbreak", "hardbreak"):
            parts.append("\n")
    return "".join(parts)


def _prose(text: str) -> str:
    text = _MARKER_LINE.sub("", text)
    text = _SHORTCODE.sub("", text)
    return re.sub(r"\n{2,}", "\n", text).strip()


def _fence_language(info: str) -> str:
    word = info.strip().split(maxsplit=1)[0] if info.strip() else ""
    word = word.strip("{}.").split(",", 1)[0].lower()
    return word or "text"


def parse_page(
    body: str,
    style: AnchorStyle = "toc",
    line_offset: int = 0,
    *,
    term_anchors: bool = False,
    myst_roles: bool = False,
) -> ParsedPage:
    """Parse a page body (front matter removed); ``line_offset`` makes reported lines 1-based.

    ``term_anchors``: definition-list terms get ids too (Hugo's ``autoDefinitionTermID``).
    ``myst_roles``: MyST's ``{ref}`` and ``{doc}`` roles (``{ref}`text <label>```) are links.
    """
    lines = body.split("\n")
    page = ParsedPage(lines=lines)
    seen: set[str] = set()
    current = -1  # index of the heading whose text we are in
    stack: list[int] = []  # open headings, for parents
    tokens = _MD.parse(body)
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        if tok.type == "heading_open" and i + 1 < len(tokens):
            current = _heading(page, tok, tokens[i + 1], seen, style, stack, line_offset)
            i += 3
            continue
        if tok.type == "fence":
            _fence(page, tok, current, line_offset)
        elif tok.type == "code_block":
            # An indented block is usually admonition/tab content in MkDocs, i.e. prose.
            _add_text(page, current, tok.content.strip())
        elif tok.type == "inline":
            _inline(page, tok, current, line_offset, myst_roles)
            if term_anchors and "\n:" in tok.content:
                _terms(page, tok, current, seen, tok.map)
        i += 1
    for h in page.headings:
        if not h.end:
            h.end = len(lines)
    return page


def _heading(
    page: ParsedPage,
    tok: Token,
    inline: Token,
    seen: set[str],
    style: AnchorStyle,
    stack: list[int],
    offset: int,
) -> int:
    level = int(tok.tag[1])
    text = _inline_text(inline).replace("\n", " ")
    custom = None
    m = _ATTR_LIST.search(text)
    if m:
        text = text[: m.start()]
        idm = _ATTR_ID.search(m.group(1))
        custom = idm.group(1) if idm else None
    text = text.strip()
    raw = custom or _SLUGIFY.get(style, slugify_github)(text)
    anchor = _unique(raw, seen, style)
    line = tok.map[0] if tok.map else 0
    # Close every open heading of the same or a deeper level: their section ends here.
    while stack and page.headings[stack[-1]].level >= level:
        page.headings[stack.pop()].end = line
    is_title = level == 1 and not page.title and not page.headings
    h = Heading(level, text, anchor, line, parent=stack[-1] if stack else -1)
    h.is_section = not is_title and level <= MAX_SECTION_LEVEL
    if is_title:
        page.title, page.title_anchor = text, anchor
    page.headings.append(h)
    stack.append(len(page.headings) - 1)
    for child in inline.children or ():
        if child.type == "link_open":
            href = str(child.attrs.get("href", ""))
            page.links.append(LinkRef(href, line + offset + 1, len(page.headings) - 1))
    return len(page.headings) - 1


def _add_text(page: ParsedPage, heading: int, text: str) -> None:
    if not text:
        return
    # Text under an h5/h6 belongs to its enclosing section; under the title, to the intro.
    section = page.section_of(heading)
    if section < 0:
        page.intro.append(text)
    else:
        page.headings[section].own_text.append(text)


def _fence(page: ParsedPage, tok: Token, heading: int, offset: int) -> None:
    start, end = tok.map if tok.map else (0, 0)
    markdown = "\n".join(page.lines[start:end])
    language = _fence_language(tok.info)
    content = tok.content
    m = _INCLUDE.match(content.strip()) if content.count("\n") <= 1 else None
    if m:
        page.code.append(
            CodeBlock(
                language, "", start + offset + 1, heading, markdown, m.group(2), m.group(3) or ""
            )
        )
        return
    page.code.append(CodeBlock(language, content, start + offset + 1, heading, markdown))


def _inline(
    page: ParsedPage, tok: Token, heading: int, offset: int, myst_roles: bool = False
) -> None:
    line = (tok.map[0] if tok.map else 0) + offset + 1
    content = tok.content
    text: str | None = None
    if "{*" in content or "{!" in content:
        kept: list[str] = []
        for n, raw in enumerate(content.split("\n")):
            m = _INCLUDE.match(raw)
            if m is None:
                kept.append(raw)
                continue
            page.code.append(
                CodeBlock("", "", line + n, heading, raw.strip(), m.group(2), m.group(3) or "")
            )
        if len(kept) != content.count("\n") + 1:
            text = "\n".join(kept)
    children = tok.children or []
    for k, child in enumerate(children):
        if child.type == "link_open":
            label = _link_text(children, k + 1)
            page.links.append(LinkRef(str(child.attrs.get("href", "")), line, heading, text=label))
        elif child.type == "text" and "][" in child.content:
            for m in _UNDEFINED_REF.finditer(child.content):
                page.links.append(LinkRef(m.group(2) or m.group(1), line, heading, "undefined"))
        elif myst_roles and child.type == "code_inline" and _is_role(children, k):
            m = _ROLE_TARGET.fullmatch(child.content.strip())
            target = (m.group(2) or m.group(3)).strip() if m else child.content.strip()
            page.links.append(LinkRef(target, line, heading, text=m.group(1) if m else ""))
    if "{{" in content and ("ref" in content or "include" in content):
        bare = _INLINE_CODE.sub("", content)
        for m in _HUGO_REF.finditer(bare):
            page.links.append(LinkRef(m.group(1), line, heading, "ref"))
        for m in _HUGO_INCLUDE.finditer(bare):
            page.links.append(LinkRef(m.group(1), line, heading, "ref"))
            page.transclusions.append((m.group(1), heading))
    _add_text(page, heading, _prose(_inline_text(tok) if text is None else text))


def _is_role(children: list[Token], k: int) -> bool:
    """The code span ``children[k]`` is a MyST role's argument (``{ref}`...```)."""
    return (
        k > 0
        and children[k - 1].type == "text"
        and bool(_MYST_ROLE.search(children[k - 1].content))
    )


def _link_text(children: list[Token], start: int) -> str:
    parts: list[str] = []
    for c in children[start:]:
        if c.type == "link_close":
            break
        if c.type in ("text", "code_inline"):
            parts.append(c.content)
    return "".join(parts)


def _terms(
    page: ParsedPage, tok: Token, heading: int, seen: set[str], span: list[int] | None
) -> None:
    # CommonMark has no definition lists: `term` followed by a `: definition` line is one
    # paragraph here. Anchors come from the term's text, like goldmark's auto IDs.
    lines = _inline_text(tok).split("\n")
    starts: list[tuple[int, str]] = []  # (paragraph line, anchor)
    for k, (term, nxt) in enumerate(itertools.pairwise(lines)):
        if nxt.startswith(": ") and term.strip() and not term.startswith(":"):
            anchor = _unique(slugify_github(term), seen, "github")
            page.terms.append((anchor, heading))
            starts.append((k, anchor))
    source = page.lines[span[0] : span[1]] if span else []
    if not starts or not span or len(source) != len(lines):
        return  # the paragraph's source lines do not map one to one: no entries
    ends = [k for k, _ in starts[1:]] + [len(source)]
    for (k, anchor), end in zip(starts, ends, strict=True):
        markdown = "\n".join(source[k:end]).strip()
        page.entries.append(DefEntry(anchor, heading, source[k].strip(), markdown, span[0] + k))
