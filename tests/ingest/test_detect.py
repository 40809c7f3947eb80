"""The input format from the path (``index`` without ``--format``) and its one-line errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from cogitave import Collection
from cogitave.errors import InputError
from cogitave.ingest.detect import check_format, detect_format
from cogitave.ingest.docs.layout import detect_site
from tests.helpers import run_cli
from tests.ingest.helpers import write

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "docs"


@pytest.mark.parametrize(
    ("tree", "shape"),
    [("sphinx", "sphinx"), ("docusaurus", "docusaurus"), ("vitepress", "vitepress"),
     ("nextjs", "nextjs")],
)  # fmt: skip
def test_each_fixture_is_docs_of_its_shape(tree: str, shape: str) -> None:
    assert detect_format(FIXTURES / tree) == "docs"
    assert detect_site(FIXTURES / tree).shape == shape


def test_files_and_folders(tmp_path: Path) -> None:
    write(tmp_path, "a.jsonl", "{}\n")
    write(tmp_path, "beir/corpus.jsonl", "{}\n")
    write(tmp_path, "plain/a.mdx", "# A\n")
    write(tmp_path, "rst/a.rst", "A\n=\n")
    write(tmp_path, "rst/b.rst", "B\n=\n")
    assert detect_format(tmp_path / "a.jsonl") == "jsonl"
    assert detect_format(tmp_path / "beir") == "beir"
    assert detect_format(tmp_path / "plain") == "docs"
    assert detect_format(tmp_path / "rst") == "docs"
    assert detect_site(tmp_path / "rst").shape == "sphinx"  # RST without conf.py
    assert detect_site(tmp_path / "plain").shape == "plain"


def test_no_documents_names_what_was_looked_for_and_what_fits(tmp_path: Path) -> None:
    write(tmp_path, "data/x.jsonl", "{}\n")
    with pytest.raises(InputError, match=r"looked for Markdown.*try --format jsonl"):
        detect_format(tmp_path / "data")
    with pytest.raises(InputError, match=r"no documents for --format markdown.*\.rst"):
        check_format(tmp_path / "data", "markdown")
    write(tmp_path, "beir/corpus.jsonl", "{}\n")
    with pytest.raises(InputError, match="try --format beir"):
        check_format(tmp_path / "beir", "docs")
    with pytest.raises(
        InputError, match=r"no \*\.jsonl .* 2 documentation pages: try --format docs"
    ):
        check_format(FIXTURES / "vitepress" / "docs" / "guide", "jsonl")
    write(tmp_path, "cran/cran.all.1400", ".I 1\n")
    with pytest.raises(InputError, match="try --format cranfield"):
        detect_format(tmp_path / "cran")
    with pytest.raises(InputError, match="cannot tell the format"):
        detect_format(write(tmp_path, "notes.csv", "a,b\n"))


def test_cli_index_picks_docs_and_takes_a_base_url(tmp_path: Path) -> None:
    col = tmp_path / "col"
    proc = run_cli("index", "--collection", str(col), str(FIXTURES / "vitepress"),
                   "--base-url", "https://other.example/v/")  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "markdown (vitepress)" in proc.stderr
    page = Collection.open(col).get("guide/features")
    assert page.meta["url"] == "https://other.example/v/guide/features"
    assert page.meta["breadcrumb"] == ["Getting Started", "Features"]
    bad = run_cli(
        "index", "--collection", str(tmp_path / "c2"), str(tmp_path), "--format", "docs", ok=False
    )
    assert bad.returncode == 2
    assert "no documents for --format docs" in bad.stderr
    assert "Traceback" not in bad.stderr
