"""Docs trees are untrusted input: nothing outside the tree being read reaches a node or the
report, whatever the tree names (includes of every syntax, symlinked files and folders,
config folders), unless the caller allowed that folder; what is refused is listed. Each
finding has its regression test; a property test builds hostile trees at random."""

from __future__ import annotations

import json
import os
import re
import secrets
import tempfile
import textwrap
import threading
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import cogitave.ingest
from cogitave.errors import IngestError
from cogitave.ingest.confined import MAX_FILE_BYTES, TreeReader
from cogitave.ingest.docs import DocsBatch, read_docs
from tests.ingest.helpers import write

MARKER = "SECRET-" + secrets.token_hex(8)


def leaks(batch: DocsBatch, marker: str = MARKER) -> list[str]:
    """Where ``marker`` shows: node fields, edges, the report and its stats."""
    found = []
    for n in batch.nodes:
        record = [n.uid, n.kind, n.dims, n.content, n.meta, [(e.label, e.dst) for e in n.edges]]
        if marker in json.dumps(record, default=str):
            found.append(n.uid)
    if marker in batch.report or marker in json.dumps(batch.stats, default=str):
        found.append("report")
    if any(marker in str(p) for p in batch.problems):
        found.append("problems")
    return found


@pytest.fixture
def secret(tmp_path: Path) -> Path:
    """A folder outside every tree, holding files with the marker."""
    folder = tmp_path / "secret"
    for name in ("s.txt", "s.py", "s.md", "s.rst", "id_rsa"):
        write(folder, name, f"# {MARKER}\n\n{MARKER} body\n")
    return folder


# -- finding 1: includes read outside the tree --------------------------------------------------
def test_includes_outside_the_tree_are_refused_and_listed(tmp_path: Path, secret: Path) -> None:
    tree = tmp_path / "tree"
    write(
        tree,
        "page.md",
        f"""
        # Page

        {{! {secret}/s.txt !}}

        {{* ../secret/id_rsa *}}

        {{! /etc/passwd !}}

        ```
        {{!> ../secret/s.py !}}
        ```
        """,
    )
    batch = read_docs(tree)
    assert leaks(batch) == []
    assert "root:" not in json.dumps([n.content for n in batch.nodes])
    refused = "\n".join(batch.stats["refused"])
    assert "page.md:5: ../secret/id_rsa: resolves to" in refused
    assert f"--allow-outside {secret}" in refused and "/etc/passwd" in refused
    last = batch.report.splitlines()[-1]
    assert last.startswith("to read what the tree names outside it: --allow-outside ")
    assert f"--allow-outside {secret}" in last
    allowed = read_docs(tree, allow_outside=[secret])
    assert MARKER in json.dumps([n.content for n in allowed.nodes])
    assert all("/etc/passwd" in r for r in allowed.stats["refused"])


# -- finding 2: symlinks --------------------------------------------------------------------------
def test_symlinks_out_of_the_tree_are_not_followed(tmp_path: Path, secret: Path) -> None:
    tree = tmp_path / "tree"
    write(tree, "index.md", '# Home\n\n--8<-- "link.txt"\n\n{* link.py *}\n')
    write(tree, "inside.txt", "inside text\n")
    os.symlink(secret / "s.md", tree / "passwd.md")
    os.symlink(secret / "s.txt", tree / "link.txt")
    os.symlink(secret / "s.py", tree / "link.py")
    os.symlink(secret, tree / "folder")
    os.symlink(tree / "inside.txt", tree / "ok.txt")  # inside -> inside: read
    write(tree, "b.md", '# B\n\n--8<-- "ok.txt"\n')
    batch = read_docs(tree)
    assert leaks(batch) == []
    assert {n.uid for n in batch.nodes if n.kind == "page"} == {"index", "b"}
    assert "inside text" in str(next(n.content for n in batch.nodes if n.uid == "b"))
    refused = "\n".join(batch.stats["refused"])
    for name in ("passwd.md", "link.txt", "link.py", "folder"):
        assert name in refused, name


def test_rst_literalinclude_of_a_symlink_out_of_the_tree(tmp_path: Path, secret: Path) -> None:
    tree = tmp_path / "tree"
    write(tree, "conf.py", "project = 'x'\n")
    write(
        tree,
        "index.rst",
        "Home\n====\n\n.. literalinclude:: link.py\n\n.. include:: link.txt\n",
    )
    os.symlink(secret / "s.py", tree / "link.py")
    os.symlink(secret / "s.txt", tree / "link.txt")
    batch = read_docs(tree)
    assert leaks(batch) == []
    assert any("index.rst:4: link.py" in r for r in batch.stats["refused"])
    assert any("index.rst:6: link.txt" in r for r in batch.stats["refused"])


# -- finding 3: no "two folders up" ---------------------------------------------------------------
@pytest.mark.parametrize("config", ["conf.py", "mkdocs.yml"])
def test_includes_do_not_reach_above_the_tree(tmp_path: Path, config: str) -> None:
    write(tmp_path, "a/x.txt", f"{MARKER}\n")
    tree = tmp_path / "a" / "b" / "docs"
    if config == "conf.py":
        write(tree, "conf.py", "project = 'x'\n")
        write(tree, "index.rst", "Home\n====\n\n.. include:: ../../x.txt\n")
    else:
        write(tree, "mkdocs.yml", "site_name: x\n")
        write(tree, "docs/index.md", '# Home\n\n--8<-- "../../../x.txt"\n')
    batch = read_docs(tree)
    assert leaks(batch) == []
    assert batch.stats["refused_count"] == 1


# -- finding 4: config folders outside the tree ---------------------------------------------------
CONFIGS = {
    "mkdocs": ("mkdocs.yml", "site_name: x\ndocs_dir: {path}\n", "docs_dir"),
    "docusaurus": (
        "docusaurus.config.js",
        "module.exports = {{ presets: [['classic', {{ docs: {{ path: '{path}' }} }}]] }};\n",
        "docs.path",
    ),
    "vitepress": (".vitepress/config.mts", "export default {{ srcDir: '{path}' }}\n", "srcDir"),
}


@pytest.mark.parametrize("generator", sorted(CONFIGS))
def test_a_config_folder_outside_the_tree_needs_allow_outside(
    tmp_path: Path, secret: Path, generator: str
) -> None:
    name, text, setting = CONFIGS[generator]
    tree = tmp_path / "tree"
    write(tree, name, text.format(path=secret))
    write(tree, "docs/index.md", "# Home\n")
    with pytest.raises(IngestError) as err:
        read_docs(tree)
    message = err.value.message
    assert f"{setting} {secret} is outside the tree" in message, message
    assert f"--allow-outside {secret}" in message and "\n" not in message
    batch = read_docs(tree, allow_outside=[secret])
    assert "s" in {n.uid for n in batch.nodes}  # read when allowed


def test_fastapi_read_from_its_config_names_the_flag(tmp_path: Path) -> None:
    """The consequence for a tree whose includes live beside it: read from the repository
    root they are inside; read from the config, the report names the flag."""
    repo = tmp_path / "repo"
    write(repo, "docs/en/mkdocs.yml", "site_name: x\n")
    write(repo, "docs/en/docs/index.md", "# Home\n\n{* ../../docs_src/app.py *}\n")
    write(repo, "docs_src/app.py", "app = 1\n")
    whole = read_docs(repo)
    assert whole.stats["refused_count"] == 0 and "src:docs_src/app.py" in {
        n.uid for n in whole.nodes
    }
    config = read_docs(repo / "docs" / "en" / "mkdocs.yml")
    assert config.stats["allow_outside"] == [str(repo / "docs_src")]
    assert f"--allow-outside {repo / 'docs_src'}" in config.report
    allowed = read_docs(repo / "docs" / "en" / "mkdocs.yml", allow_outside=[repo / "docs_src"])
    assert allowed.stats["refused_count"] == 0
    assert any(n.kind == "source_file" for n in allowed.nodes)


# -- bounds ---------------------------------------------------------------------------------------
def test_a_file_over_the_size_cap_is_refused(tmp_path: Path) -> None:
    write(tmp_path, "index.md", '# Home\n\n--8<-- "big.txt"\n')
    write(tmp_path, "huge.md", b"# Huge\n" + b"x" * MAX_FILE_BYTES)
    write(tmp_path, "big.txt", b"y" * (MAX_FILE_BYTES + 1))
    batch = read_docs(tmp_path)
    assert {n.uid for n in batch.nodes if n.kind == "page"} == {"index"}
    refused = "\n".join(batch.stats["refused"])
    assert "huge.md: larger than 10 MB" in refused and "big.txt: larger than 10 MB" in refused


def test_a_slice_of_a_file_over_the_cap(tmp_path: Path, secret: Path) -> None:
    tree = tmp_path / "tree"
    big = write(tree, "pack", b"p" * 100 + b"slice" + b"q" * (MAX_FILE_BYTES + 1))
    reader = TreeReader(tree)
    assert reader.read_at(big, 100, 5) == b"slice"
    assert len(reader.read_at(big, 0, MAX_FILE_BYTES * 2) or b"") == MAX_FILE_BYTES
    assert reader.read_at(big, MAX_FILE_BYTES * 3, 10) == b""
    assert reader.read_at(secret / "s.txt", 0, 10) is None
    assert reader.refusals and "outside the tree" in reader.refusals[-1].reason


def test_a_fifo_named_like_a_page_does_not_hang(tmp_path: Path) -> None:
    write(tmp_path, "index.md", "# Home\n")
    os.mkfifo(tmp_path / "pipe.md")
    done: list[Any] = []
    reader = threading.Thread(target=lambda: done.append(read_docs(tmp_path)), daemon=True)
    reader.start()
    reader.join(60)  # a failure guard: the read never opens the FIFO
    if reader.is_alive():  # it did, and waits for a writer: give it one, then fail
        with open(tmp_path / "pipe.md", "w"):
            pass
        reader.join(60)
        pytest.fail("the read opened the FIFO and waited for a writer")
    assert any("pipe.md: not a regular file" in r for r in done[0].stats["refused"])


def test_an_include_cycle_stops_at_the_depth_cap(tmp_path: Path) -> None:
    write(tmp_path, "conf.py", "project = 'x'\n")
    write(tmp_path, "index.rst", "Home\n====\n\n.. include:: a.inc\n")
    write(tmp_path, "a.inc", "From a.\n\n.. include:: b.inc\n")
    write(tmp_path, "b.inc", "From b.\n\n.. include:: a.inc\n")
    batch = read_docs(tmp_path)
    page = next(n for n in batch.nodes if n.uid == "index")
    assert 3 <= str(page.content).count("From a.") <= 8
    assert any("nested more than" in r for r in batch.stats["refused"])


def test_the_reader_refuses_outside_and_walks_inside(tmp_path: Path, secret: Path) -> None:
    tree = tmp_path / "tree"
    write(tree, "a/b.md", "x")
    os.symlink(secret, tree / "out")
    os.symlink(tree / "a", tree / "in")
    reader = TreeReader(tree)
    assert reader.read_bytes(secret / "s.txt") is None and reader.refusals
    assert reader.read_bytes(tree / "a" / ".." / ".." / "secret" / "s.txt") is None
    found = [here / f for here, _dirs, files in reader.walk(tree) for f in files]
    assert found == [tree / "a" / "b.md"]  # symlinked folders are not descended
    assert reader.allows(tree / "in" / "b.md") and not reader.allows(tree / "out" / "s.txt")


# -- one reader: nothing else in ingest opens a file of a tree ------------------------------------
RAW_ACCESS = re.compile(
    r"\bopen\(|\.read_text\(|\.read_bytes\(|\.rglob\(|\.iterdir\(|os\.walk\(|os\.scandir\("
    r"|\.glob\(|os\.listdir\("
)


# Files read by another route on purpose: the caller's own, not the tree's.
NOT_THE_TREE = {"docs/frontmatter.py": "FrontMatterMapping.load: the caller's mapping file"}


def test_only_the_confined_reader_touches_files() -> None:
    """Docs reading and format detection reach files through ``TreeReader`` only (record
    formats, JSONL, BEIR and SMART, read the one file or folder they are given: they name no
    other file). A method of the reader itself (``reader.read_text(``) is the way in."""
    root = Path(cogitave.ingest.__file__).parent
    offenders = []
    own = ("detect.py", "sources.py", "identity.py", "gitrepo.py")
    for path in [*root.glob("docs/*.py"), *(root / name for name in own)]:
        rel = path.relative_to(root).as_posix()
        if not path.exists() or rel in NOT_THE_TREE:
            continue
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            code = re.sub(r"reader\.\w+\(|tree\(\)\.\w+\(", "", line)
            if RAW_ACCESS.search(code.split("#")[0]):
                offenders.append(f"{rel}:{n}: {line.strip()}")
    assert offenders == []


# -- hostile trees at random ----------------------------------------------------------------------
def _targets(secret: Path, depth: int) -> list[str]:
    up = "../" * depth
    return [
        str(secret / "s.txt"),
        f"{up}secret/s.txt",
        f"{up}../secret/s.py",
        "link.txt",
        "linkdir/s.txt",
        "/etc/passwd",
        str(secret / "s.md"),
    ]


DIRECTIVES = [
    "{{! {t} !}}",
    "{{* {t} *}}",
    "```\n{{!> {t} !}}\n```",
    '--8<-- "{t}"',
    "--8<--\n{t}\n--8<--",
    '{{{{% include "{t}" %}}}}',
    '{{{{< readfile file="{t}" >}}}}',
    "```{{include}} {t}\n```",
    "```{{literalinclude}} {t}\n```",
    "<<< {t}",
]
RST_DIRECTIVES = [".. include:: {t}", ".. literalinclude:: {t}", ".. include:: {t}\n   :literal:"]

tree_shapes = st.fixed_dictionaries(
    {
        "layout": st.sampled_from(["plain", "mkdocs", "sphinx", "hugo", "vitepress", "docusaurus"]),
        "pages": st.lists(
            st.lists(st.tuples(st.integers(0, 9), st.integers(0, 6)), min_size=1, max_size=4),
            min_size=1,
            max_size=3,
        ),
        "links": st.sets(st.sampled_from(["file", "dir", "page"])),
        "config_out": st.booleans(),
    }
)


def _hostile_tree(root: Path, secret: Path, shape: dict[str, object]) -> Path:
    layout = str(shape["layout"])
    tree = root / "tree"
    docs = {"mkdocs": "docs", "hugo": "content", "vitepress": "docs", "docusaurus": "docs"}.get(
        layout, ""
    )
    folder = tree / docs if docs else tree
    folder.mkdir(parents=True)
    depth = len(folder.relative_to(root).parts)
    out = str(secret) if shape["config_out"] else ""
    if layout == "mkdocs":
        write(tree, "mkdocs.yml", f"site_name: x\n{'docs_dir: ' + out if out else ''}\n")
    elif layout == "sphinx":
        write(tree, "conf.py", "extensions = ['myst_parser']\n")
    elif layout == "vitepress":
        write(tree, "docs/.vitepress/config.mts", f"export default {{ srcDir: '{out or '.'}' }}\n")
    elif layout == "docusaurus":
        docs_path = out or "docs"
        write(
            tree, "docusaurus.config.js", f"module.exports = {{ docs: {{ path: '{docs_path}' }} }}"
        )
    targets = _targets(secret, depth)
    pages = shape["pages"]
    assert isinstance(pages, list)
    for k, page in enumerate(pages):
        lines = [f"# Page {k}", ""]
        rst = layout == "sphinx" and k % 2 == 1
        for directive, target in page:
            if rst:
                template = RST_DIRECTIVES[directive % len(RST_DIRECTIVES)]
            else:
                template = DIRECTIVES[directive]
            lines += [template.format(t=targets[target]), ""]
        if rst:
            write(folder, f"p{k}.rst", f"Page {k}\n======\n\n" + "\n".join(lines[2:]))
        else:
            write(folder, f"p{k}.md", "\n".join(lines))
    links = shape["links"]
    assert isinstance(links, set)
    for place in {tree, folder}:
        if "file" in links:
            os.symlink(secret / "s.txt", place / "link.txt")
        if "dir" in links:
            os.symlink(secret, place / "linkdir")
    if "page" in links:
        os.symlink(secret / "s.md", folder / "leak.md")
        os.symlink(secret / "s.rst", folder / "leak.rst")
    return tree


@settings(max_examples=30, deadline=None)
@given(tree_shapes)
def test_no_byte_of_a_secret_reaches_a_node_or_the_report(shape: dict[str, object]) -> None:
    marker = "SECRET-" + secrets.token_hex(8)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        secret = root / "secret"
        secret.mkdir()
        for name in ("s.txt", "s.py", "s.md", "s.rst"):
            (secret / name).write_text(textwrap.dedent(f"# {marker}\n\n{marker} text\n"))
        tree = _hostile_tree(root, secret, shape)
        try:
            batch = read_docs(tree)
        except IngestError as e:  # a config folder outside the tree: refused as a whole
            assert marker not in e.message and "--allow-outside" in e.message
            return
        assert leaks(batch, marker) == []
