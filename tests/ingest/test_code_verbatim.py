"""Code is indexed as written: every code block of a page read from a docs tree (a Markdown
fence, a Hugo code shortcode, a reStructuredText literal block, code directive or doctest
block; what each format means by one: :mod:`cogitave.eval.verbatim`) is the whole of one
fenced block the nodes read from the tree hold, byte for byte.

The source blocks are found there without the reader's own parsers. Run it on any tree with
``COGITAVE_VERBATIM_TREES=/path/one:/path/two``; ``bench/docs_quality.py --verbatim-only``
runs it on the benchmark's trees.
"""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path

import pytest

from cogitave.eval.verbatim import check_tree
from cogitave.ingest.docs import read_docs
from tests.conftest import data_dir

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "docs"
TREES = sorted(p for p in FIXTURES.iterdir() if p.is_dir())
EXTRA = [Path(p) for p in os.environ.get("COGITAVE_VERBATIM_TREES", "").split(os.pathsep) if p]


def verbatim_failures(root: Path) -> list[str]:
    """``file:line`` of every code block of the tree that no node holds as written."""
    return [str(m) for m in check_tree(root).misses]


@pytest.mark.parametrize("root", TREES + EXTRA, ids=lambda p: p.name)
def test_every_code_block_is_indexed_verbatim(root: Path) -> None:
    found = check_tree(root)
    assert found.blocks > 0  # a tree whose blocks the check cannot see checks nothing
    assert [str(m) for m in found.misses] == []


def test_every_code_block_of_the_shared_fastapi_tree_is_indexed_verbatim() -> None:
    # its fences that only name a file to include are left out; the Hugo tree passes too
    # (about ten seconds: run it with COGITAVE_VERBATIM_TREES)
    assert verbatim_failures(data_dir("docs_fastapi")) == []


def test_a_block_the_reader_changed_is_reported(tmp_path: Path) -> None:
    (tmp_path / "conf.py").write_text("")
    rst = (
        "T\n=\n\nSee::\n\n   a = '\\n'\n\n.. code-block:: py\n   :emphasize-lines: 1\n\n   b\n\n"
        ".. made-up:: arg\n\n   *not code*, prose\n"
    )
    (tmp_path / "index.rst").write_text(rst)
    found = check_tree(tmp_path)
    assert (found.blocks, found.verbatim, found.misses) == (2, 2, ())  # prose: not a block
    batch = read_docs(tmp_path)
    mangled = [
        replace(
            n,
            content=(n.content or "").replace("'\\n'", "'n'"),
            dims={k: v.replace("'\\n'", "'n'") if isinstance(v, str) else v
                  for k, v in n.dims.items()},
        )
        for n in batch.nodes
    ]  # fmt: skip
    batch.nodes = mangled
    found = check_tree(tmp_path, batch)
    assert [str(m) for m in found.misses] == ["index.rst:4"]
    assert found.misses[0].first == "a = '\\n'" and found.verbatim == 1
    # held only inside a longer block is not held: a block cut short or joined fails too
    batch.nodes = [
        replace(n, content=(n.content or "").replace("\n```\n", "\nmore\n```\n", 1), dims={})
        for n in read_docs(tmp_path).nodes
    ]
    assert [str(m) for m in check_tree(tmp_path, batch).misses] == ["index.rst:4"]
