"""What a source code block is, per format (:mod:`cogitave.eval.verbatim`), and the table the
docs benchmark prints of the counts."""

from __future__ import annotations

from cogitave.eval.verbatim import (
    HUGO,
    MD,
    MDX,
    RST,
    Miss,
    Verbatim,
    format_of,
    indexed_blocks,
    rst_blocks,
    source_blocks,
    table,
)
from cogitave.nodes import Node


def test_formats_by_file_and_site() -> None:
    assert format_of("a.rst") == RST and format_of("_sources/a.rst.txt") == RST
    assert format_of("a.md") == MD and format_of("a.md", "vitepress") == MD
    assert format_of("a.mdx") == MDX and format_of("a.md", "nextjs") == MDX
    assert format_of("content/a.md", "hugo") == HUGO
    assert format_of("a.ipynb") is None


def test_rst_literal_blocks_as_docutils_reads_them() -> None:
    text = "\n".join(
        [
            "Intro::",  # 1
            "",
            "   a = 1",
            "",
            "1) By a tuple::",  # 5: an enumerator's text column
            "",
            "      >>> f()",
            "",
            "   Prose of the item, no code.",
            "",
            "::",  # 11: a line of ``::`` alone
            "",
            "   b = 2",
            "",
            ">>> c = 3",  # 15: a doctest block, to the blank line
            "3",
            "",
            ".. XXX a comment holds no block::",  # 18
            "",
            "   hidden = 1",
            "",
            "   >>> hidden",
            "",
            ".. _target:",  # 24: a target is no comment
            "",
            "Tail::",  # 26
            "",
            "   d = 4",
        ]
    )
    assert rst_blocks(text) == [
        (1, "a = 1"),
        (5, ">>> f()"),
        (11, "b = 2"),
        (15, ">>> c = 3\n3"),
        (26, "d = 4"),
    ]


def test_rst_code_directives_as_sphinx_shows_them() -> None:
    text = "\n".join(
        [
            ".. code-block:: py",  # 1
            "   :caption: x",
            "",
            "   b",
            "",
            ".. doctest::",  # 6: a body deeper than its options keeps the difference
            "   :options: +SKIP",
            "",
            "    >>> 1",
            "",
            ".. testcode::",  # 11: a line right below is the test group's name
            "   import random",
            "",
            "   random.random()",
            "",
            ".. click:example::",  # 16: an unknown code directive's body right below it
            "   @click.command()",
            "   def f(): ...",
            "",
            ".. note::",  # 20: not code; a literal block inside is
            "",
            "   See::",
            "",
            "      e = 5",
        ]
    )
    assert rst_blocks(text) == [
        (1, "b"),
        (6, " >>> 1"),
        (11, "random.random()"),
        (16, "@click.command()\ndef f(): ..."),
        (22, "e = 5"),
    ]


def test_markdown_mdx_and_hugo_blocks() -> None:
    md = "# T\n\n~~~py\nx\n~~~\n\n```py\n{* ./src/x.py *}\n```\n\n- item\n\n  ```\n  y\n  ```\n"
    assert source_blocks(md, MD) == [(3, "x"), (13, "y")]  # an include's fence: no block
    # a fence right below a JSX tag is a fence in MDX (CommonMark: part of an HTML block)
    mdx = "import X from 'x'\n\n<Sandpack>\n```js\nz()\n```\n</Sandpack>\n"
    assert source_blocks(mdx, MDX) == [(4, "z()")]
    assert source_blocks(mdx, MD) == []
    hugo = (
        "{{< code-toggle config=build />}}\n\n{{< code-toggle file=hugo >}}\n[a]\nb = 1\n"
        "{{< /code-toggle >}}\n\n```\n{{< highlight go >}}\nnot a shortcode\n"
        "{{< /highlight >}}\n```\n"
    )
    assert source_blocks(hugo, HUGO) == [
        (3, "[a]\nb = 1"),
        (8, "{{< highlight go >}}\nnot a shortcode\n{{< /highlight >}}"),
    ]


def test_indexed_blocks_are_whole_fences() -> None:
    page = Node("p", "page", {}, content="Text `x`.\n\n> ```py\n> a = 1\n> ```\n")
    sample = Node("p#code-1", "code_sample", {"code": "b = 2\n"})
    held = indexed_blocks([page, sample, Node("p#s", "section", {}, content="```\nc\n```")])
    assert held == {"a = 1", "b = 2"}  # a section's Markdown is a slice of its page's


def test_the_table_rows_and_misses() -> None:
    miss = Miss("a.md", 3, "x = `1` | 2")
    rows = [
        ("one", Verbatim(2, 4, 3, (miss,))),
        ("two", "not found: /nowhere"),
    ]
    lines = table(rows)
    assert lines[2] == "| one | 2 | 4 | 3 | 0.7500 | 1 |"
    assert lines[3] == "| two | - | - | - | - | not found: /nowhere |"
    assert lines[-1] == "- one `a.md:3`: ``x = `1` | 2``"


def test_a_page_path_out_of_the_tree_is_not_read(tmp_path) -> None:
    # The check reads pages as the index does, through the confined reader: a page named by a
    # link out of the tree (or a path with ..) is left out, never read.
    from cogitave.eval.verbatim import check_tree
    from cogitave.ingest.docs import DocsBatch

    tree, outside = tmp_path / "docs", tmp_path / "secret.md"
    tree.mkdir()
    outside.write_text("```\ntop secret\n```\n")
    (tree / "link.md").symlink_to(outside)
    nodes = [
        Node("link", kind="page", meta={"path": "link.md"}),
        Node("up", kind="page", meta={"path": "../secret.md"}),
    ]
    got = check_tree(tree, DocsBatch(nodes, []))
    assert got.blocks == 0 and got.misses == ()
