"""Indexing names a library from its metadata, never from a path: a built Sphinx site's
``objects.inv``, a git checkout's tag and commit, the same into a new collection as into a
collection of libraries; a source no metadata names is a clear error asking for --library
or --version; a version held from another source is refused before anything is read or
downloaded."""

from __future__ import annotations

import os
import shutil
import subprocess
import zlib
from pathlib import Path

import pytest

from cogitave import indexing
from cogitave.collection import Collection
from cogitave.errors import ConflictError, InputError
from cogitave.indexing import SourceSpec
from cogitave.libraries.collection import LibraryCollection
from tests.helpers import run_cli, write_tree
from tests.ingest.web.helpers import serve

PAGE = (
    "<html><head><title>Echo</title></head><body><main><h1>Echo</h1><p>{}</p></main></body></html>"
)


def built_site(root: Path, inventory: bool = True) -> Path:
    """A built HTML folder, with the ``objects.inv`` Sphinx writes beside it or without."""
    files = {
        "index.html": PAGE.format("Print a message with echo."),
        "api.html": PAGE.format("The echo function writes to the terminal."),
        "_sources/index.rst.txt": "Echo\n====\n\nPrint a message with echo.\n",
        "_sources/api.rst.txt": "API\n===\n\nThe echo function writes to the terminal.\n",
    }
    write_tree(root, files)
    if inventory:
        body = zlib.compress(b"click.echo py:function 1 api.html#$ -\n")
        head = b"# Sphinx inventory version 2\n# Project: Click\n# Version: 8.1.7\n"
        (root / "objects.inv").write_bytes(head + b"# compressed with zlib\n" + body)
    return root


def test_a_built_site_is_named_by_its_inventory_in_either_collection(tmp_path: Path) -> None:
    html = built_site(tmp_path / "html")
    run_cli("index", "-c", str(tmp_path / "plain"), str(html), "-q")
    (entry,) = Collection.open(tmp_path / "plain").libraries()
    assert (entry.key, entry.version) == ("click", "8.1.7")
    LibraryCollection.create(tmp_path / "libs", encoder=None)
    res = run_cli("index", "-c", str(tmp_path / "libs"), str(html), "-q")
    assert "click@8.1.7" in res.stdout


def test_a_source_no_metadata_names_asks_for_the_name_and_version(tmp_path: Path) -> None:
    html = built_site(tmp_path / "html", inventory=False)
    libs = tmp_path / "libs"
    LibraryCollection.create(libs, encoder=None)
    bad = run_cli("index", "-c", str(libs), str(html), "-q", ok=False)
    assert bad.returncode == 2 and "--library NAME" in bad.stderr and "html@" not in bad.stderr
    bad = run_cli("index", "-c", str(libs), "--library", "click", str(html), "-q", ok=False)
    assert bad.returncode == 2 and "--version VERSION" in bad.stderr
    assert LibraryCollection.open(libs).libraries() == []
    ok = run_cli("index", "-c", str(libs), "--library", "click", "--version", "8.1.7", str(html))
    assert "click@8.1.7" in ok.stdout


def test_another_source_is_refused_before_it_is_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    libs = tmp_path / "libs"
    LibraryCollection.create(libs, encoder=None)
    first = built_site(tmp_path / "a")
    indexing.index(SourceSpec(first, libs, library="click", version="8.1.7"))
    reads: list[object] = []
    real = indexing.read
    monkeypatch.setattr(indexing, "read", lambda *a, **k: reads.append(a) or real(*a, **k))
    other = built_site(tmp_path / "b")
    with pytest.raises(ConflictError, match="--replace"):
        indexing.index(SourceSpec(other, libs, library="click", version="8.1.7"))
    with pytest.raises(ConflictError, match="--replace"):  # named by its inventory
        indexing.index(SourceSpec(other, libs))
    assert reads == []
    with serve() as site:  # a site: refused before the first request
        spec = SourceSpec(indexing.locate_source(site.url + "/"), libs, library="click",
                          version="8.1.7")  # fmt: skip
        with pytest.raises(ConflictError, match="--replace"):
            indexing.index(spec)
        assert sum(site.hits.values()) == 0


def git(cwd: Path, *args: str) -> str:
    env = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1",
           "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@t"}  # fmt: skip
    out = subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True)
    return out.stdout.decode().strip()


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_a_repository_is_named_by_its_tag_and_commit_in_either_collection(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COGITAVE_CACHE", str(tmp_path / "cache"))
    work, bare = tmp_path / "work", tmp_path / "tool.git"
    files = {
        "pyproject.toml": '[project]\nname = "tool"\nversion = "0.0.1"\n',
        "docs/index.md": "# Tool\n\nThe tool turns widgets into gadgets.\n",
    }
    write_tree(work, files)
    git(work, "init", "-q", "-b", "main")
    git(work, "add", "-A")
    git(work, "commit", "-q", "-m", "docs")
    git(work, "tag", "-a", "v1.2.0", "-m", "release")
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(bare))
    git(work, "push", "-q", str(bare), "main", "--tags")
    head = git(work, "rev-parse", "HEAD")
    text = f"git+file://{bare}@v1.2.0#docs"
    indexing.index(SourceSpec(indexing.locate_source(text), tmp_path / "plain"))
    (plain,) = Collection.open(tmp_path / "plain").libraries()
    assert (plain.key, plain.version, plain.commit, plain.source) == ("tool", "1.2.0", head, text)
    LibraryCollection.create(tmp_path / "libs", encoder=None)
    res = indexing.index(SourceSpec(indexing.locate_source(text), tmp_path / "libs"))
    (lib,) = LibraryCollection.open(tmp_path / "libs").libraries()
    assert res.library == "tool@1.2.0"
    assert (lib.key, lib.version, lib.commit, lib.source) == ("tool", "1.2.0", head, text)


def test_the_one_library_of_a_plain_collection_answers_by_its_name(tmp_path: Path) -> None:
    html = built_site(tmp_path / "html")
    run_cli("index", "-c", str(tmp_path / "plain"), str(html), "-q")
    res = run_cli("search", "echo", "-c", str(tmp_path / "plain"), "--library", "click", "--json")
    assert '"results"' in res.stdout
    with pytest.raises(InputError):
        indexing.index(SourceSpec(html, tmp_path / "plain", library="other"))
