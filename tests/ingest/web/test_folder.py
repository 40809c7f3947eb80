"""A built HTML site on disk, read as HTML by the crawler's own steps (no network): the API
reference autodoc generated is kept, nothing outside the folder is read, and URLs come from
--base-url, the site's canonical links, or paths from its root with a warning."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from cogitave import Collection
from cogitave.ingest.docs import read_docs
from cogitave.ingest.sources import read_source
from cogitave.ingest.web.folder import (
    ORIGIN,
    FolderFetcher,
    canonical_base,
    is_built_site,
    read_html_folder,
)
from cogitave.ingest.web.options import CrawlOptions

MODULE = '''
"""Mylib connects engines."""


class Engine:
    """An engine that runs jobs."""

    def __init__(self, workers: int = 4) -> None:
        self.workers = workers

    def run(self, job: str, *, retries: int = 0) -> bool:
        """Run ``job``; retry up to ``retries`` times."""
        return True


def connect(url: str, timeout: float = 5.0) -> Engine:
    """Connect to the engine at ``url``."""
    return Engine()
'''
API_NAMES = {"mylib", "mylib.Engine", "mylib.Engine.run", "mylib.connect"}


def build(root: Path, conf_extra: str = "") -> Path:
    """A Sphinx project whose API page is one ``automodule`` directive, built to HTML."""
    src = root / "src"
    src.mkdir(parents=True)
    (src / "mylib.py").write_text(MODULE)
    (src / "conf.py").write_text(
        "import os, sys\nsys.path.insert(0, os.path.abspath('.'))\n"
        "project = 'Mylib'\nrelease = '2.1.0'\nextensions = ['sphinx.ext.autodoc']\n" + conf_extra
    )
    (src / "index.rst").write_text("Mylib\n=====\n\nMylib connects engines.\n\n"
                                   ".. toctree::\n\n   api\n   guide\n")  # fmt: skip
    (src / "api.rst").write_text("API reference\n=============\n\n.. automodule:: mylib\n"
                                 "   :members:\n")  # fmt: skip
    (src / "guide.rst").write_text(
        textwrap.dedent("""\
        Guide
        =====

        Connect first, then run a job on the engine you got back.

        .. code-block:: python

           engine = mylib.connect("tcp://localhost:9000")
           engine.run("backup", retries=2)
        """)
    )
    out = root / "html"
    cmd = [sys.executable, "-m", "sphinx", "-q", "-b", "html", str(src), str(out)]
    subprocess.run(cmd, check=True, capture_output=True, timeout=300)
    return out


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("sphinx")
    return build(tmp_path_factory.mktemp("autodoc"))


def test_a_built_sphinx_folder_keeps_the_api_reference_autodoc_made(built: Path) -> None:
    assert is_built_site(built)
    batch = read_source(built, base_url="https://mylib.example/en/2.1/")
    api = {n.uid: n for n in batch.nodes if n.kind == "api"}
    assert set(api) == API_NAMES
    run = api["mylib.Engine.run"]
    assert "run(job: str, *, retries: int = 0)" in run.dims["code"]
    assert run.meta["url"] == "https://mylib.example/en/2.1/api.html#mylib.Engine.run"
    assert run.meta["objtype"] == "method"
    code = [n for n in batch.nodes if n.kind == "code_sample"]
    assert any('engine.run("backup", retries=2)' in (n.content or "") for n in code)
    # the sources Sphinx copied hold only the directive: what the folder gave before
    sources = read_docs(built / "_sources")
    assert not [n for n in sources.nodes if n.kind == "api"]
    assert str(built) in batch.report and ORIGIN not in batch.report


def test_the_folder_is_searched_and_its_objects_resolve(built: Path, tmp_path: Path) -> None:
    batch = read_source(built, base_url="https://mylib.example/")
    col = Collection.create(tmp_path / "c", batch.schema)
    col.add(batch.nodes)
    col.publish()
    found = col.resolve_xref("mylib.Engine")
    assert found.candidates and found.candidates[0].uid == "mylib.Engine"


def test_without_a_base_url_paths_are_from_the_root_and_the_report_says_so(built: Path) -> None:
    batch = read_html_folder(built)
    urls = {n.meta["url"] for n in batch.nodes if n.kind == "api"}
    assert "/api.html#mylib.connect" in urls
    assert "no public URL" in batch.report and "--base-url" in batch.report


def test_the_sites_canonical_links_give_its_public_url(tmp_path: Path) -> None:
    pytest.importorskip("sphinx")
    html = build(tmp_path, "html_baseurl = 'https://docs.mylib.example/en/stable/'\n")
    assert canonical_base(html) == "https://docs.mylib.example/en/stable/"
    batch = read_source(html)
    api = {n.uid: n.meta["url"] for n in batch.nodes if n.kind == "api"}
    assert api["mylib.connect"] == "https://docs.mylib.example/en/stable/api.html#mylib.connect"
    assert "no public URL" not in batch.report


def test_nothing_outside_the_folder_and_no_other_host_is_read(tmp_path: Path) -> None:
    secret = tmp_path / "secret.html"
    secret.write_text("<html><body><main><h1>Secret</h1><p>SECRET-TOKEN-42</p></main></body>")
    site = tmp_path / "site"
    site.mkdir()
    (site / "objects.inv").write_bytes(b"")
    (site / "index.html").write_text(
        "<html><head><title>Home</title></head><body><main><h1>Home</h1>"
        "<p>Read the <a href='leak.html'>leak</a>.</p>"
        "<p>Some prose so the page is an answer and not navigation alone, about engines.</p>"
        "</main></body></html>"
    )
    (site / "leak.html").symlink_to(secret)
    batch = read_source(site, base_url="https://x.example/")
    text = " ".join((n.content or "") for n in batch.nodes)
    assert "SECRET-TOKEN-42" not in text and "Home" in text
    assert "refused" in batch.report and "leak.html" in batch.report
    fetcher = FolderFetcher(site, CrawlOptions())
    other = asyncio.run(fetcher.get("http://127.0.0.1:9/index.html"))
    assert getattr(other, "skip", None) == "refused" and fetcher.requests == 0
    escaped = asyncio.run(fetcher.get(ORIGIN + "/../secret.html"))
    assert getattr(escaped, "status", None) == 404
