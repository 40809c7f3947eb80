"""Code indexed as written: a docs tree -> its source code blocks, and how many of them the
nodes read from the tree hold byte for byte.

A source block is found here without the docs reader's own parsers, by what each format means
by a code block:

- Markdown (``.md``, ``.markdown``): every fenced block as CommonMark reads it
  (markdown-it's tokens), nested in a list or a quote too; a MyST directive's fence
  (```` ```{name} ````) holds code when it is a code directive (its options left out),
  reStructuredText for ``{eval-rst}``, else Markdown. A fence holding only an include
  (``{!> ../docs_src/x.py!}``, FastAPI's ``{* x.py *}``) shows the file it names, not its
  line, and is not a block.
- MDX (``.mdx``, and the ``.md`` pages of an MDX site: Docusaurus, Next.js): the same fences,
  once each line holding only JSX component tags (``<Sandpack>``, ``</Pitfall>``) is read as
  the blank line that separates MDX's blocks (CommonMark would read the fence right after
  such a tag as part of an HTML block), and ``import``/``export`` lines as blank too.
- Hugo pages: the fences, and the body of each code shortcode (``{{< highlight go >}}``,
  ``code``, ``code-toggle``, up to its closing shortcode; one closed by ``/>}}`` has none).
- reStructuredText (``.rst``, a built Sphinx site's ``_sources/*.rst.txt``), as docutils
  reads it: the indented lines after a paragraph ending in ``::`` (a line of ``::`` alone
  too), dedented; the body of a code directive (``code-block``, ``sourcecode``, ``code``,
  Sphinx's ``doctest``, ``testcode``, ``testoutput``, ``testsetup``, ``testcleanup``, and
  an unknown directive whose name says code: ``*example*``, ``*console*``, ``*repl*``,
  ``*shell*``), its argument and options (the lines up to the first blank one) left out,
  dedented with its options, as Sphinx shows it; every doctest block (a paragraph opening
  with ``>>>``). A comment's indented lines are not shown, and hold no block.

A block is verbatim when the nodes read from the tree hold it as the whole of one fenced
block (a ``code_sample``'s code, or a fence of a page's Markdown as CommonMark reads it:
nested in a list or a quote, parsed it holds the code again): equal, not merely contained,
so a block cut short, joined to the next, or left in a fence that a broken one before it
misplaced is a failure. The blocks checked are those of the pages the reader read (drafts
and files the site's configuration leaves out are not indexed, and hold nothing to
compare); a page that includes another file holds that file's blocks, so a block is looked
for in every page's fences. Nothing is embedded: the tree is read and parsed, no more.
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from markdown_it import MarkdownIt

from cogitave.ingest.confined import TreeReader
from cogitave.ingest.docs import DocsBatch, read_docs
from cogitave.nodes import Node

# an explicit markup block (``.. ``): a directive, a target, a footnote, a substitution, or a
# comment (anything else: its indented lines are not shown)
_EXPLICIT = re.compile(r"^(?P<indent>[ \t]*)\.\.(?:[ \t]+(?P<rest>.*))?$")
_DIRECTIVE = re.compile(r"^(?:\|[^|]+\|[ \t]+)?(?P<name>[\w][\w:.+-]*)[ \t]*::(?P<arg>.*)$")
_NOT_COMMENT = re.compile(r"^(?:_|\[[^\]]+\]|\|[^|]+\|)")
# the directives that show their body as code (an unknown one whose name says code too)
_CODE_NAMES = frozenset(
    ("code-block", "sourcecode", "code", "doctest", "testcode", "testoutput", "testsetup",
     "testcleanup")
)  # fmt: skip
_CODE_NAME = re.compile(r"example|console|repl|shell")
# a paragraph's line ending in ``::`` (after a list item's marker: its text's column; a line
# of ``::`` alone: the block after it is literal, the line shows nothing)
_LITERAL_MARK = re.compile(
    r"^(?P<indent>[ \t]*(?:(?:[-*+\u2022]|\(?(?:\d+|[a-zA-Z]|[ivxlcdmIVXLCDM]+|#)[.)])[ \t]+)?)"
    r"(?!\.\.(?:\s|$))(?:\S.*)?::[ \t]*$"
)
_DOCTEST = re.compile(r"^[ \t]*>>>(?:[ \t]|$)")
# a fence holding only an include (``{!> ../docs_src/x.py!}``, FastAPI's ``{* x.py *}``)
_INCLUDE = re.compile(r"^\s*\{([*!])>?\s*\S+?(?:\s+[^*!]*?)?\s*\1\}\s*$")
# MDX: a line of JSX component tags only, and the start of an import or export statement
_JSX_TAG = r"</?[A-Z][\w.]*(?:\s+[^<>]*?)?/?>"
_JSX_LINE = re.compile(rf"^\s*(?:{_JSX_TAG}\s*)+$")
_ESM = re.compile(r"^(?:import|export)\s")
_MDX_SHAPES = frozenset({"docusaurus", "nextjs"})

# Hugo's code shortcodes: ``{{< highlight go >}}`` ... ``{{< /highlight >}}`` (one written
# ``/>}}`` has no body: ``code-toggle config=x`` shows the site's settings)
_SHORTCODE_OPEN = re.compile(
    r"^\s*\{\{<\s*(code-toggle|highlight|code)(?:\s[^>]*?)?(?<!/)>\}\}\s*$"
)

MD = "markdown"
MDX = "mdx"
RST = "rst"
HUGO = "hugo"


@dataclass(frozen=True)
class Miss:
    """A source block no node holds as written: its file (relative to the tree), the line its
    block starts on, and its first line of code."""

    file: str
    line: int
    first: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line}"


@dataclass(frozen=True)
class Verbatim:
    """One tree's count: pages read, code blocks in their source, blocks held verbatim, and
    the blocks that are not."""

    pages: int
    blocks: int
    verbatim: int
    misses: tuple[Miss, ...]

    @property
    def share(self) -> float:
        return self.verbatim / self.blocks if self.blocks else 1.0


def format_of(rel: str, shape: str = "plain") -> str | None:
    """How the page file ``rel`` of a site of ``shape`` writes its code blocks (None: not a
    page format this check reads)."""
    name = rel.lower()
    if name.endswith((".rst", ".rst.txt")):
        return RST
    if name.endswith(".mdx") or (name.endswith(".md") and shape in _MDX_SHAPES):
        return MDX
    if name.endswith((".md", ".markdown")) and shape == "hugo":
        return HUGO
    if name.endswith((".md", ".markdown")):
        return MD
    return None


def source_blocks(text: str, fmt: str) -> list[tuple[int, str]]:
    """(line, code) of each code block of a page's source ``text`` written in ``fmt``."""
    if fmt == RST:
        return rst_blocks(text)
    if fmt == MDX:
        return markdown_blocks(mdx_as_markdown(text))
    if fmt == HUGO:
        return sorted(markdown_blocks(text) + shortcode_blocks(text))
    return markdown_blocks(text)


def markdown_blocks(text: str) -> list[tuple[int, str]]:
    """(line, code) of each fenced block, as CommonMark reads it. A MyST directive's fence
    (```` ```{name} ````) holds code when it is a code directive (its options left out),
    reStructuredText for ``{eval-rst}``, else Markdown."""
    out: list[tuple[int, str]] = []
    for t in MarkdownIt("commonmark").parse(text):
        if t.type != "fence" or not t.content.strip():
            continue
        line = (t.map or (0, 0))[0] + 1
        name = re.match(r"\{([\w:-]+)\}", t.info.strip())
        if name is None:
            if not _INCLUDE.match(t.content):  # the file it names is shown, not the line
                out.append((line, t.content.rstrip("\n")))
            continue
        body = t.content.split("\n")
        while body and re.match(r"\s*:[\w-]+:", body[0]):
            body.pop(0)
        inner = "\n".join(body).strip("\n")
        if name.group(1) in ("code-block", "code", "sourcecode"):
            out.append((line, inner))
        else:
            found = rst_blocks(inner) if name.group(1) == "eval-rst" else markdown_blocks(inner)
            out.extend((line + k, code) for k, code in found)
    return [(line, code) for line, code in out if code.strip()]


def shortcode_blocks(text: str) -> list[tuple[int, str]]:
    """(line, code) of each Hugo code shortcode's body outside the page's fences: the lines
    between ``{{< highlight LANG >}}`` (``code``, ``code-toggle``) and its closing one."""
    lines = text.split("\n")
    fenced: set[int] = set()
    for t in MarkdownIt("commonmark").parse(text):
        if t.type in ("fence", "code_block") and t.map:
            fenced.update(range(*t.map))
    out: list[tuple[int, str]] = []
    i = 0
    while i < len(lines):
        m = None if i in fenced else _SHORTCODE_OPEN.match(lines[i])
        if m is None:
            i += 1
            continue
        close = re.compile(rf"^\s*\{{\{{<\s*/\s*{m.group(1)}\s*>\}}\}}\s*$")
        j = next((k for k in range(i + 1, len(lines)) if close.match(lines[k])), None)
        if j is None:
            i += 1
            continue
        code = "\n".join(lines[i + 1 : j]).rstrip("\n")
        if code.strip():
            out.append((i + 1, code))
        i = j + 1
    return out


def mdx_as_markdown(text: str) -> str:
    """An MDX page as CommonMark reads its blocks, line for line: lines of JSX component tags
    and ``import``/``export`` lines blank (outside fences: code is never touched)."""
    lines = text.split("\n")
    fence = ""
    for i, line in enumerate(lines):
        m = re.match(r"^\s*(`{3,}|~{3,})", line)
        if fence:
            rest = line.strip()
            if m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence):
                fence = "" if not rest[len(m.group(1)) :].strip() else fence
            continue
        if m:
            fence = m.group(1)
        elif _JSX_LINE.match(line) or _ESM.match(line):
            lines[i] = ""
    return "\n".join(lines)


def rst_blocks(text: str) -> list[tuple[int, str]]:
    """(line, code) of each literal block, as docutils reads it: the indented lines after a
    paragraph ending in ``::`` (dedented by their indentation); the body of a code directive
    (its argument and options, up to the first blank line, left out; dedented by the
    indentation of the directive's lines, options included, so a body indented deeper than
    its options keeps the difference, as Sphinx shows it); each doctest block (``>>>``
    opening a paragraph, up to the blank line). A comment's lines hold none; ``line`` is
    the block's ``::`` or directive line."""
    lines = text.split("\n")
    out: list[tuple[int, str]] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        if _DOCTEST.match(line) and (i == 0 or not lines[i - 1].strip()):
            j = _paragraph_end(lines, i)
            out.append((i + 1, textwrap.dedent("\n".join(lines[i:j])).rstrip()))
            i = j
            continue
        e = _EXPLICIT.match(line)
        if e is not None:
            indent = len(e.group("indent").expandtabs(8))
            rest = e.group("rest") or ""
            d = _DIRECTIVE.match(rest)
            if d is None and _NOT_COMMENT.match(rest) is None:  # a comment
                empty = not rest.strip() and (i + 1 >= len(lines) or not lines[i + 1].strip())
                i = i + 1 if empty else _block_end(lines, i + 1, indent)
                continue
            name = d.group("name").lower() if d is not None else ""
            if d is not None and (name in _CODE_NAMES or _CODE_NAME.search(name)):
                j = _block_end(lines, i + 1, indent)
                code = _directive_body(d.group("arg"), lines[i + 1 : j], name in _CODE_NAMES)
                if code.strip():
                    out.append((i + 1, code))
                i = j
                continue
            i += 1
            continue
        m = _LITERAL_MARK.match(line)
        if m is not None:
            j = _block_end(lines, i + 1, len(m.group("indent").expandtabs(8)))
            code = textwrap.dedent("\n".join(lines[i + 1 : j])).strip("\n")
            if code.strip():
                out.append((i + 1, code))
                i = j
                continue
        i += 1
    return out


def _indent_of(line: str) -> int:
    return len(line.expandtabs(8)) - len(line.expandtabs(8).lstrip())


def _block_end(lines: list[str], start: int, indent: int) -> int:
    """The line after an indented block starting at ``start``: blank lines and lines
    indented deeper than ``indent`` (trailing blank lines left out)."""
    j = start
    while j < len(lines) and (not lines[j].strip() or _indent_of(lines[j]) > indent):
        j += 1
    while j > start and not lines[j - 1].strip():
        j -= 1
    return j


def _paragraph_end(lines: list[str], start: int) -> int:
    j = start
    while j < len(lines) and lines[j].strip():
        j += 1
    return j


def _directive_body(argument: str, below: list[str], known: bool) -> str:
    """A code directive's body from the lines ``below`` its own, as docutils splits them:
    dedented together, the first lines up to a blank one its argument and options (of a
    directive whose own line has no argument and whose next line is no option, every line
    is the body when it is not one Sphinx knows: the reader keeps a body written so)."""
    block = textwrap.dedent("\n".join(below)).split("\n") if below else []
    if not block:
        return ""
    if not argument.strip() and block[0].strip() and not block[0].startswith(":") and not known:
        return "\n".join(block).strip("\n")
    items = [argument.strip(), *block] if argument.strip() else block
    cut = next((k for k, x in enumerate(items) if not x.strip()), len(items))
    return "\n".join(items[cut + 1 :]).strip("\n")


def indexed_blocks(nodes: Iterable[Node]) -> set[str]:
    """Every fenced block the nodes hold: each ``code_sample``'s code, and each fence of a
    page's Markdown (a section's Markdown is a slice of its page's)."""
    held: set[str] = set()
    for n in nodes:
        if n.kind == "code_sample":
            code = n.dims.get("code")
            if isinstance(code, str) and code.strip():
                held.add(code.rstrip("\n"))
        elif n.kind == "page" and n.content and ("`" in n.content or "~" in n.content):
            held.update(code for _, code in markdown_blocks(n.content))
    return held


def check_tree(root: Path, batch: DocsBatch | None = None) -> Verbatim:
    """The code blocks of the pages read from ``root`` against the nodes ``batch`` holds
    (None: the tree read now, as ``cogitave index`` reads it)."""
    batch = read_docs(root) if batch is None else batch
    shape = str(batch.stats.get("shape", "plain"))
    pages = sorted({str(n.meta["path"]) for n in batch.nodes if n.kind == "page"})
    held = indexed_blocks(batch.nodes)
    blocks = 0
    misses: list[Miss] = []
    reader = TreeReader(root)  # the tree is read as the index reads it: nothing outside it
    for rel in pages:
        fmt = format_of(rel, shape)
        data = None if fmt is None else reader.read_bytes(root / rel)
        if fmt is None or data is None:
            continue
        text = data.decode("utf-8", "replace").replace("\r\n", "\n").replace("\r", "\n")
        for line, code in source_blocks(text, fmt):
            blocks += 1
            if code not in held:
                misses.append(Miss(rel, line, code.split("\n", 1)[0].strip()[:80]))
    return Verbatim(len(pages), blocks, blocks - len(misses), tuple(misses))


def _code_span(text: str) -> str:
    """``text`` as one inline code span (backticks inside it kept)."""
    ticks = "`"
    while ticks in text:
        ticks += "`"
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{ticks}{pad}{text}{pad}{ticks}"


def table(rows: Sequence[tuple[str, Verbatim | str]], listed: int = 10) -> list[str]:
    """Markdown lines: one row per tree (a string instead of a count: why it was not
    checked), then each tree's first ``listed`` misses."""
    out = [
        "| collection | pages | code blocks | verbatim | share | not verbatim |",
        "|---|---|---|---|---|---|",
    ]
    notes: list[str] = []
    for name, v in rows:
        if isinstance(v, str):
            out.append(f"| {name} | - | - | - | - | {v} |")
            continue
        out.append(
            f"| {name} | {v.pages} | {v.blocks} | {v.verbatim} | {v.share:.4f} | {len(v.misses)} |"
        )
        notes += [f"- {name} `{m}`: {_code_span(m.first)}" for m in v.misses[:listed]]
        if len(v.misses) > listed:
            notes.append(f"- {name}: {len(v.misses) - listed} more")
    return out + (["", *notes] if notes else [])
