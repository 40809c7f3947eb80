"""Includes in Markdown -> the included text, so a page's content reads as the site shows it.

Handled: FastAPI's ``{* ../../docs_src/x.py hl[3:5] ln[1:9] *}`` and mdx_include's
``{! path !}`` (the file, or its ``ln`` line ranges, fenced with its language; inside a fence,
just the lines); MkDocs snippets ``--8<-- "path"`` and the block form between two ``--8<--``
lines; Hugo's ``{{% include "x.md" %}}`` (the page's Markdown) and its code shortcodes
(``code-toggle``, ``highlight``) turned into fences, other shortcodes removed. Files come
from the caller's reader (the builder's, confined to the tree): a file it does not give
(missing, or refused) keeps the directive as written.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from cogitave.ingest.docs.frontmatter import split_front_matter

# (path as written) -> (text, language) or None
Reader = Callable[[str], tuple[str, str] | None]
EXT_LANGUAGE = {
    ".py": "python", ".js": "javascript", ".ts": "typescript", ".md": "markdown",
    ".yml": "yaml", ".yaml": "yaml", ".toml": "toml", ".json": "json", ".sh": "bash",
    ".html": "html", ".css": "css", ".txt": "text", ".go": "go", ".rs": "rust",
    ".sql": "sql", ".ini": "ini", ".dockerfile": "dockerfile",
}  # fmt: skip

INCLUDE = re.compile(r"^\s*\{([*!])>?\s*(\S+?)(?:\s+([^*!]*?))?\s*\1\}\s*$")
_SNIPPET = re.compile(r"""^(\s*)(;?)-{1,}8<-{1,}\s+(["']?)([^"']+?)\3\s*$""")
_SNIPPET_BLOCK = re.compile(r"^\s*-{1,}8<-{1,}\s*$")
_FENCE = re.compile(r"^\s*(`{3,}|~{3,})")
_LN = re.compile(r"ln\[([\d:,\s]+)\]")
_HL = re.compile(r"hl\[([\d:,\s]+)\]")
_HUGO_INCLUDE = re.compile(
    r"^\s*\{\{[<%]\s*(?:include|readfile)\s+(?:file=)?[\"']([^\"']+)[\"'][^>%]*[>%]\}\}\s*$"
)
# one written ``/>}}`` has no body (``code-toggle config=build`` shows the site's settings):
# it is no fence, and goes as any other shortcode
_HUGO_CODE_OPEN = re.compile(r"^\s*\{\{<\s*(code-toggle|highlight|code)\b([^>]*?)(?<!/)>\}\}\s*$")
_HUGO_CODE_CLOSE = re.compile(r"^\s*\{\{<\s*/\s*(code-toggle|highlight|code)\s*>\}\}\s*$")
_HUGO_SHORTCODE = re.compile(r"\{\{[<%]\s*/?\s*(?!(?:rel)?ref\b)[\w-]+[^{}]*?[>%]\}\}")


def language_of(file: Path) -> str:
    """The code language of an included file, by its extension (``text`` without one)."""
    suffix = file.suffix.lower()
    return EXT_LANGUAGE.get(suffix, suffix.lstrip(".") or "text")


def line_ranges(spec: str, total: int) -> list[tuple[int, int]]:
    """``1:9,15:20`` -> [(1, 9), (15, 20)] (1-based, inclusive, clipped to ``total``)."""
    out: list[tuple[int, int]] = []
    for part in spec.split(","):
        a, sep, b = part.strip().partition(":")
        try:
            start = int(a) if a.strip() else 1
            end = int(b) if b.strip() else (total if sep else start)
        except ValueError:
            continue
        out.append((max(1, start), min(total, end)))
    return out


def _select(text: str, options: str) -> str:
    m = _LN.search(options or "")
    if not m:
        return text.rstrip("\n")
    lines = text.rstrip("\n").split("\n")
    parts = ["\n".join(lines[a - 1 : b]) for a, b in line_ranges(m.group(1), len(lines))]
    return "\n\n# ...\n\n".join(p for p in parts if p)


def _fence(code: str, language: str, options: str = "") -> str:
    ticks = "```"
    while ticks in code:
        ticks += "`"
    hl = _HL.search(options or "")
    info = language
    if hl:
        lines = [
            str(n)
            for a, b in line_ranges(hl.group(1), 10_000)
            for n in range(a, b + 1)
        ]  # fmt: skip
        info += f' hl_lines="{" ".join(lines)}"'
    return f"{ticks}{info}\n{code}\n{ticks}"


def expand_snippets(text: str, read: Reader) -> str:
    """MkDocs snippets (``--8<--``) replaced by the files' text (before parsing the page)."""
    if "8<-" not in text:
        return text
    out: list[str] = []
    block: list[str] | None = None
    for line in text.split("\n"):
        if _SNIPPET_BLOCK.match(line):
            if block is None:
                block = []
            else:
                for path in block:
                    found = read(path.strip())
                    if found is not None:
                        out.append(found[0].rstrip("\n"))
                block = None
            continue
        if block is not None:
            if line.strip() and not line.strip().startswith(";"):
                block.append(line.strip().strip("\"'"))
            continue
        m = _SNIPPET.match(line)
        if m and not m.group(2):
            found = read(m.group(4).strip())
            if found is not None:
                indent = m.group(1)
                out.extend(indent + x for x in found[0].rstrip("\n").split("\n"))
                continue
        elif m:
            line = line.replace(";", "", 1)  # `;--8<--` is an escaped example
        out.append(line)
    return "\n".join(out)


def expand(markdown: str, read: Reader, *, hugo: bool = False) -> str:
    """The Markdown with FastAPI/mdx_include includes (and Hugo's) expanded."""
    if "{*" not in markdown and "{!" not in markdown and not (hugo and "{{" in markdown):
        return markdown
    out: list[str] = []
    fence: str | None = None
    for line in markdown.split("\n"):
        f = _FENCE.match(line)
        if fence is not None:
            if f and f.group(1)[0] == fence[0] and len(f.group(1)) >= len(fence):
                fence = None
                out.append(line)
                continue
            m = INCLUDE.match(line)
            found = read(m.group(2)) if m else None
            out.append(_select(found[0], m.group(3) or "") if m and found else line)
            continue
        if f:
            fence = f.group(1)
            out.append(line)
            continue
        m = INCLUDE.match(line)
        if m:
            found = read(m.group(2))
            if found is not None:
                options = m.group(3) or ""
                out.append(_fence(_select(found[0], options), found[1], options))
                continue
        if hugo and "{{" in line:
            line = _hugo_line(line, read)
        out.append(line)
    return "\n".join(out)


def _hugo_line(line: str, read: Reader) -> str:
    inc = _HUGO_INCLUDE.match(line)
    if inc:
        found = read(inc.group(1))
        if found is not None:
            return split_front_matter(found[0]).body.strip("\n")
        return line
    opened = _HUGO_CODE_OPEN.match(line)
    if opened:
        args = opened.group(2)
        if opened.group(1) == "highlight":
            words = args.split()
            language = words[0].strip("\"'") if words else "text"
        else:
            lang = re.search(r"lang(?:uage)?=[\"']?(\w+)", args)
            language = lang.group(1) if lang else "toml"
        return f"```{language}"
    if _HUGO_CODE_CLOSE.match(line):
        return "```"
    return _HUGO_SHORTCODE.sub("", line)


def tidy(markdown: str) -> str:
    """Runs of blank lines (left by removed markup) collapsed to one, outside code fences."""
    out: list[str] = []
    fence: str | None = None
    blank = 0
    for line in markdown.split("\n"):
        f = _FENCE.match(line)
        if fence is None and f:
            fence = f.group(1)
        elif fence is not None and f and f.group(1)[0] == fence[0]:
            fence = None
        elif fence is None and not line.strip():
            blank += 1
            if blank > 1:
                continue
            out.append("")
            continue
        blank = 0
        out.append(line)
    return "\n".join(out).strip("\n")


_LINK = re.compile(r"(\]\()(<[^<>\n]*>|[^()\s]+)((?:\s+\"[^\"\n]*\")?\))")
_SPAN = re.compile(r"(`+[^`]*?`+)")


def rewrite_links(markdown: str, url_of: Callable[[str], str | None]) -> str:
    """Inline link targets replaced by ``url_of(target)`` where it gives one; code (fenced or
    inline) is left alone."""
    if "](" not in markdown:
        return markdown

    def one(m: re.Match[str]) -> str:
        url = url_of(m.group(2).strip("<>"))
        return m.group(0) if url is None else f"{m.group(1)}{url}{m.group(3)}"

    out: list[str] = []
    fence: str | None = None
    for line in markdown.split("\n"):
        f = _FENCE.match(line)
        if fence is None and f:
            fence = f.group(1)
        elif fence is not None:
            if f and f.group(1)[0] == fence[0] and len(f.group(1)) >= len(fence):
                fence = None
        elif "](" in line:
            parts = _SPAN.split(line)
            line = "".join(p if i % 2 else _LINK.sub(one, p) for i, p in enumerate(parts))
        out.append(line)
    return "\n".join(out)
