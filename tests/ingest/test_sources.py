"""The source registry: a path and a format name -> a batch, with one error and a hint for
every way reading a source fails."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cogitave.errors import IngestError, InputError, SchemaError
from cogitave.ingest import sources
from cogitave.ingest.docs import DocsBatch
from cogitave.ingest.records import Batch
from cogitave.ingest.sources import FORMATS, READERS, SourceOptions, read_source
from tests.ingest.helpers import CISI_LIKE, write

CRANFIELD_LIKE = ".I 1\n.T\nflow past a plate\n.A\nsmith\n.W\nthe boundary layer.\n"


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    write(tmp_path, "recs.jsonl", json.dumps({"uid": "a", "title": "alpha"}) + "\n")
    write(tmp_path, "beir/corpus.jsonl", json.dumps({"_id": "d1", "text": "beta"}) + "\n")
    write(tmp_path, "cran/cran.all.1400", CRANFIELD_LIKE)
    write(tmp_path, "cisi/CISI.ALL", CISI_LIKE)
    write(tmp_path, "docs/index.md", "# Home\n\nWelcome.\n")
    return tmp_path


@pytest.mark.parametrize(
    ("rel", "fmt", "uids"),
    [
        ("recs.jsonl", "auto", {"a"}),
        ("recs.jsonl", "jsonl", {"a"}),
        ("beir", "auto", {"d1"}),
        ("beir", "beir", {"d1"}),
        ("cran", "cranfield", {"1"}),
        ("cran/cran.all.1400", "cranfield", {"1"}),
        ("cisi", "smart", {"1", "2"}),
        ("docs", "auto", {"index"}),
        ("docs", "docs", {"index"}),
        ("docs", "markdown", {"index"}),
    ],
)
def test_every_format_reads_through_one_call(tree: Path, rel: str, fmt: str, uids: set) -> None:
    batch = read_source(tree / rel, fmt)
    assert {n.uid for n in batch.nodes} == uids
    assert set(READERS) == set(FORMATS) - {"auto"}


def test_a_schema_file_and_docs_options_reach_the_reader(tree: Path, tmp_path: Path) -> None:
    schema = write(tmp_path, "schema.toml", "[dimensions.title]\ntype = 'semantic'\n")
    batch = read_source(tree / "recs.jsonl", "jsonl", schema=schema)
    assert batch.schema is not None and batch.schema.dimensions[0].name == "title"
    docs = read_source(tree / "docs", base_url="https://x.dev")
    assert isinstance(docs, DocsBatch) and docs.nodes[0].meta["url"] == "https://x.dev/"
    bad = write(tmp_path, "bad.toml", "[dimensions.x]\ntype = 'nope'\n")
    with pytest.raises(SchemaError):
        read_source(tree / "recs.jsonl", schema=bad)


def test_allow_outside_is_the_only_way_out_of_a_docs_tree(tmp_path: Path) -> None:
    write(tmp_path, "shared/app.py", "app = 1\n")
    docs = tmp_path / "site"
    write(docs, "index.md", "# Home\n\n{* ../shared/app.py *}\n")
    confined = read_source(docs)
    assert isinstance(confined, DocsBatch) and confined.stats["refused_count"] == 1
    assert f"--allow-outside {tmp_path / 'shared'}" in confined.report
    allowed = read_source(docs, allow_outside=[tmp_path / "shared"])
    assert isinstance(allowed, DocsBatch) and allowed.stats["refused_count"] == 0
    assert any(n.kind == "source_file" for n in allowed.nodes)


def test_a_missing_source_and_an_unknown_format(tmp_path: Path) -> None:
    with pytest.raises(IngestError, match=r"source not found: .*gone \(to remove its nodes"):
        read_source(tmp_path / "gone")
    write(tmp_path, "a.jsonl", "{}\n")
    with pytest.raises(InputError, match=r"unknown format 'xml'; use one of auto, jsonl"):
        read_source(tmp_path / "a.jsonl", "xml")


def test_a_folder_without_the_format_names_the_one_that_fits(tree: Path) -> None:
    with pytest.raises(InputError, match=r"no corpus\.jsonl .* try --format docs"):
        read_source(tree / "docs", "beir")
    # the reader's own error, with the hint of what the folder holds
    with pytest.raises(IngestError, match=r"no \.jsonl files in folder .*; try --format cranfield"):
        read_source(tree / "cran", "jsonl")
    with pytest.raises(InputError, match=r"no documents for --format docs .* try --format smart"):
        read_source(tree / "cisi", "docs")


def test_no_documents_is_an_error(tmp_path: Path) -> None:
    write(tmp_path, "empty.jsonl", "\n")
    with pytest.raises(InputError, match=r"no jsonl documents in .*empty\.jsonl$"):
        read_source(tmp_path / "empty.jsonl")
    write(tmp_path, "mixed/a.md", "# A\n")
    write(tmp_path, "mixed/empty.jsonl", "\n")
    with pytest.raises(InputError, match=r"no jsonl documents .*: try --format docs"):
        read_source(tmp_path / "mixed", "jsonl")


def test_bad_records_keep_the_readers_words(tmp_path: Path) -> None:
    write(tmp_path, "bad.jsonl", '{"uid": "a"\n')
    batch = read_source(tmp_path / "bad.jsonl")
    assert batch.problems and not batch.nodes  # refused later by raise_if_bad, no hint


@pytest.mark.parametrize(
    ("error", "message"),
    [
        (PermissionError(13, "Permission denied", "/t/page.md"), "cannot read /t/page.md: per"),
        (UnicodeDecodeError("utf-8", b"\xff", 0, 1, "invalid start byte"), "cannot read "),
        (IsADirectoryError(21, "Is a directory"), "cannot read "),
    ],
)
def test_read_failures_are_one_input_error(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, error: Exception, message: str
) -> None:
    def failing(path: Path, options: SourceOptions) -> Batch:
        raise error

    monkeypatch.setitem(sources.READERS, "jsonl", failing)
    write(tmp_path, "a.jsonl", "{}\n")
    with pytest.raises(InputError) as err:
        read_source(tmp_path / "a.jsonl")
    assert type(err.value) is InputError and err.value.message.startswith(message)
    assert "\n" not in err.value.message


def test_a_tree_without_a_site_url_takes_its_packages_documentation_url(tmp_path: Path) -> None:
    # A repository's docs folder whose site config names no URL: the project's metadata beside
    # it gives one (so hits can be opened and two libraries' /api/ never collide); with no
    # metadata either, the report says so and how to fix it.
    from cogitave.ingest.docs import read_docs

    docs = tmp_path / "repo" / "docs"
    docs.mkdir(parents=True)
    (docs / "guide.md").write_text("# Guide\n\nHow to use the thing, in a few plain words.\n")
    plain = read_docs(docs)
    assert {n.meta["url"] for n in plain.nodes if n.kind == "page"} == {"/guide/"}
    assert "no public URL" in plain.report and "--base-url" in plain.report
    (tmp_path / "repo" / "pyproject.toml").write_text(
        '[project]\nname = "thing"\nversion = "1.0"\n\n[project.urls]\n'
        'Homepage = "https://thing.example/"\nDocumentation = "https://docs.thing.example/en/1.0"\n'
    )
    batch = read_docs(docs)
    assert {n.meta["url"] for n in batch.nodes if n.kind == "page"} == {
        "https://docs.thing.example/en/1.0/guide/"
    }
    assert "[project.urls] documentation" in batch.report
    given = read_docs(docs, base_url="https://mirror.example/")
    assert {n.meta["url"] for n in given.nodes if n.kind == "page"} == {
        "https://mirror.example/guide/"
    }


def test_a_clone_without_a_docs_url_links_to_its_files_in_the_repository_view(
    tmp_path: Path,
) -> None:
    # the web view comes after the package metadata's docs URL, and links between pages
    # (Markdown and reStructuredText alike) lead to the other page's file there
    from cogitave.ingest.docs import read_docs

    view = "https://github.com/org/thing/blob/0123abc/docs/"
    docs = tmp_path / "repo" / "docs"
    docs.mkdir(parents=True)
    (docs / "guide.md").write_text(
        "# Guide\n\nSee [the API](api/ref.md#calls).\n\n## Setup\n\nRun it.\n"
    )
    (docs / "api").mkdir()
    (docs / "api" / "ref.md").write_text("# Ref\n\n## Calls\n\nCall it.\n")
    batch = read_docs(docs, files_url=view)
    urls = {n.uid: n.meta["url"] for n in batch.nodes}
    assert urls["guide"] == view + "guide.md" and urls["guide#setup"] == view + "guide.md#setup"
    assert urls["api/ref#calls"] == view + "api/ref.md#calls"
    guide = next(n for n in batch.nodes if n.uid == "guide")
    assert f"[the API]({view}api/ref.md#calls)" in (guide.content or "")
    assert batch.stats["url_rule"] == "repository" and view in batch.report
    (tmp_path / "repo" / "pyproject.toml").write_text(
        '[project]\nname = "thing"\n\n[project.urls]\nDocumentation = "https://thing.example/"\n'
    )
    named = read_docs(docs, files_url=view)
    assert {n.meta["url"] for n in named.nodes if n.kind == "page"} == {
        "https://thing.example/guide/",
        "https://thing.example/api/ref/",
    }
    assert named.stats["url_rule"] == "metadata"
    sphinx = tmp_path / "sphinx"
    sphinx.mkdir()
    (sphinx / "conf.py").write_text("")
    (sphinx / "index.rst").write_text("Home\n====\n\nRead :doc:`usage`.\n")
    (sphinx / "usage.rst").write_text("Usage\n=====\n\nText.\n")
    rst = read_docs(sphinx, files_url=view)
    home = next(n for n in rst.nodes if n.uid == "index")
    assert f"[Usage]({view}usage.rst)" in (home.content or "")
    assert home.meta["url"] == view + "index.rst"
