"""Code is indexed as written: every fenced block of a Markdown page and every literal block of
a reStructuredText page (``::``, ``.. code-block::`` and the other code directives, an unknown
directive whose name says code) is found byte for byte in the content of a node read from
the tree (a block nested in a list or a quote: in a fence of that content, read as Markdown;
a fence holding only an include shows the file, and is not checked here).

The source blocks are found here without the reader's own parsers: Markdown fences by
markdown-it's tokens, reStructuredText blocks by their indentation. Run it on any tree with
``COGITAVE_VERBATIM_TREES=/path/one:/path/two``.
"""

from __future__ import annotations

import os
import re
import textwrap
from dataclasses import replace
from pathlib import Path

import pytest
from markdown_it import MarkdownIt

from cogitave.ingest import docs
from cogitave.ingest.docs import DocsBatch, read_docs
from tests.conftest import data_dir

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "docs"
TREES = sorted(p for p in FIXTURES.iterdir() if p.is_dir())
EXTRA = [Path(p) for p in os.environ.get("COGITAVE_VERBATIM_TREES", "").split(os.pathsep) if p]
_CODE_DIRECTIVE = re.compile(
    r"^(?P<indent>\s*)\.\. (?:code-block|sourcecode|code|[\w:-]*(?:example|console|repl|shell)"
    r"[\w:-]*)::.*$"
)
# a paragraph's last line ending in ``::`` (after a list item's marker: its text's column)
_LITERAL_MARK = re.compile(r"^(?P<indent>\s*(?:(?:[-*+]|\d+\.|#\.)\s+)?)(?!\.\. )\S.*::\s*$")
# a fence holding only an include (``{!> ../docs_src/x.py!}``, FastAPI's ``{* x.py *}``)
_INCLUDE = re.compile(r"^\s*\{([*!])>?\s*\S+?(?:\s+[^*!]*?)?\s*\1\}\s*$")
_SKIP = {"node_modules", "_build", ".git"}


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


def rst_blocks(text: str) -> list[tuple[int, str]]:
    """(line, code) of each literal block: the indented lines after a paragraph ending in
    ``::`` or after a code directive (its options left out), dedented by their indentation."""
    lines = text.split("\n")
    out: list[tuple[int, str]] = []
    for i, line in enumerate(lines):
        m = _CODE_DIRECTIVE.match(line) or _LITERAL_MARK.match(line)
        if m is None:
            continue
        indent = len(m.group("indent"))
        j = i + 1
        body: list[str] = []
        while j < len(lines) and (
            not lines[j].strip() or len(lines[j]) - len(lines[j].lstrip()) > indent
        ):
            body.append(lines[j])
            j += 1
        if m.re is _CODE_DIRECTIVE:  # its options, up to the first blank line
            while body and body[0].strip().startswith(":"):
                body.pop(0)
        code = textwrap.dedent("\n".join(body)).strip("\n")
        if code.strip():
            out.append((i + 1, code))
    return out


def verbatim_failures(root: Path) -> list[str]:
    """``file:line`` of every code block of the tree that no node holds as written."""
    held = [n.content or "" for n in read_docs(root).nodes]
    everything = "\x00".join(held)  # one search, never across two nodes
    missed: list[tuple[str, str]] = []
    for file in sorted(root.rglob("*")):
        if _SKIP & set(file.parts) or not file.is_file():
            continue
        if file.suffix in (".md", ".mdx"):
            blocks = markdown_blocks(file.read_text(encoding="utf-8"))
        elif file.suffix == ".rst":
            blocks = rst_blocks(file.read_text(encoding="utf-8"))
        else:
            continue
        missed += [
            (f"{file.relative_to(root)}:{line}", c) for line, c in blocks if c not in everything
        ]
    if not missed:
        return []
    # a block inside a list or a quote is indented or quoted in the Markdown: read as
    # Markdown, its fence holds the code
    fences = {code for content in held if "`" in content or "~" in content
              for _, code in markdown_blocks(content)}  # fmt: skip
    return [where for where, code in missed if code not in fences]


@pytest.mark.parametrize("root", TREES + EXTRA, ids=lambda p: p.name)
def test_every_code_block_is_indexed_verbatim(root: Path) -> None:
    assert verbatim_failures(root) == []


def test_every_code_block_of_the_shared_fastapi_tree_is_indexed_verbatim() -> None:
    # its fences that only name a file to include are left out; the Hugo tree passes too
    # (about ten seconds: run it with COGITAVE_VERBATIM_TREES)
    assert verbatim_failures(data_dir("docs_fastapi")) == []


def test_the_check_finds_the_blocks_it_checks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the finders see each kind of block, and a block the reader changed is reported
    rst = "T\n=\n\nSee::\n\n   a = '\\n'\n\n.. code-block:: py\n   :caption: x\n\n   b\n"
    assert rst_blocks(rst) == [(4, "a = '\\n'"), (8, "b")]
    assert markdown_blocks("# T\n\n~~~py\nx\n~~~\n") == [(3, "x")]
    (tmp_path / "conf.py").write_text("")
    (tmp_path / "index.rst").write_text("T\n=\n\n.. made-up:: arg\n\n   *not code*, prose\n")
    assert verbatim_failures(tmp_path) == []  # prose: not a code block, nothing to hold
    (tmp_path / "index.rst").write_text(rst.replace("py\n", "py\n   :emphasize-lines: 1\n"))
    assert verbatim_failures(tmp_path) == []

    def mangled(root: Path) -> DocsBatch:
        batch = docs.read_docs(root)
        batch.nodes = [
            replace(n, content=(n.content or "").replace("'\\n'", "'n'")) for n in batch.nodes
        ]
        return batch

    monkeypatch.setattr(f"{__name__}.read_docs", mangled)
    assert verbatim_failures(tmp_path) == ["index.rst:4"]
