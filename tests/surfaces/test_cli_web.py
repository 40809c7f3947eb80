"""``cogitave index URL``: a site served from this process, indexed, re-synced (304s, no
embedding, a deleted page deleted), its crawl report printed and kept with the root; a crawl
past ``--max-failures`` exits 1 and a bad start URL exits 2, both publishing nothing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cogitave.collection import Collection
from cogitave.ingest.docs.read import docs_schema
from cogitave.libraries.collection import LibraryCollection
from tests.helpers import run_cli
from tests.ingest.web.helpers import Route, page, serve

PROSE = "Each page of this site says enough about widgets to be worth an answer. " * 3
FAST = ("--rate", "0")


def routes() -> dict[str, Route]:
    links = "<a href='/guide/'>guide</a> <a href='/faq/'>faq</a> <a href='/api/'>api</a>"
    return {
        "/": page("Widgets", f"<p>{PROSE}</p>{links}", head="<meta property='og:site_name' "
                  "content='Widgets'>"),
        "/guide/": page("Guide", f"<p>{PROSE}</p><h2 id='setup'>Setup</h2><p>{PROSE}</p>"),
        "/faq/": page("FAQ", f"<p>{PROSE}</p><h2 id='why'>Why</h2><p>{PROSE}</p>"),
        "/api/": page("API", f"<p>{PROSE}</p>"),
    }  # fmt: skip


def files(col: Path) -> dict[str, object]:
    """What a command that publishes nothing must leave as it was."""
    if not col.exists():
        return {}
    return {
        "head": (col / "HEAD").read_text() if (col / "HEAD").exists() else None,
        "roots": sorted(p.name for p in (col / "roots").glob("*")),
        "objects": sorted(p.name for p in (col / "objects").glob("*")),
    }


@pytest.fixture
def col(tmp_path: Path) -> Path:
    """A plain collection without an encoder (BM25 only: nothing to embed in these tests)."""
    Collection.create(tmp_path / "col", docs_schema(), encoder=None)
    return tmp_path / "col"


def test_index_resync_and_delete(col: Path) -> None:
    with serve(routes()) as s:
        first = run_cli("index", "-c", str(col), s.url + "/", *FAST)
        assert "indexed" in first.stdout and "added" in first.stdout
        assert "crawl of " + s.url in first.stderr and "fetched 4" in first.stderr
        c = Collection.open(col)
        source = s.url + "/"
        report = json.loads(c.source_object(source, "report") or b"{}")
        assert report["fetched"] == 4 and report["pages"] == 4
        assert c.source_object(source, "state") is not None
        before = files(col)
        s.log.clear()
        again = run_cli("index", "-c", str(col), s.url + "/", *FAST)
        assert "nothing changed" in again.stdout
        assert "unchanged 4 (304)" in again.stderr
        assert files(col) == before
        pages = [h for p, h in s.log if p.endswith("/")]
        assert len(pages) == 4 and all("If-None-Match" in h for h in pages)
        # the FAQ goes away: its page and section are deleted
        del s.routes["/faq/"]
        s.routes["/"] = page("Widgets", f"<p>{PROSE}</p><a href='/guide/'>guide</a>"
                             "<a href='/api/'>api</a>")  # fmt: skip
        third = run_cli("index", "-c", str(col), s.url + "/", *FAST)
    assert "2 deleted" in third.stdout and "1 changed" in third.stdout
    assert "0 texts embedded" in third.stdout
    c = Collection.open(col)
    assert not any(u.startswith("faq") for u in c.source_uids(source))
    hit = c.search("widgets setup", limit=1).results[0]
    assert hit.url == s.url + "/guide/#setup"


def test_a_site_as_a_library_with_its_public_url(tmp_path: Path) -> None:
    libs = tmp_path / "libs"
    LibraryCollection.create(libs, encoder=None)
    with serve(routes()) as s:
        res = run_cli("index", "-c", str(libs), s.url + "/", "--base-url",
                      "https://widgets.example/", "--version", "2.0", *FAST)  # fmt: skip
    assert "widgets@2.0" in res.stdout
    lib = LibraryCollection.open(libs)
    (entry,) = lib.libraries()
    assert (entry.name, entry.version, entry.source) == ("Widgets", "2.0", s.url + "/")
    hit = lib.search("widgets setup", limit=1).results[0]
    assert hit.url == "https://widgets.example/guide/#setup"


def test_too_many_failures_exit_1_and_publish_nothing(col: Path) -> None:
    site = routes()
    # retried at once (Retry-After: 0), three times, then failed
    site["/faq/"] = Route(b"down", status=503, headers={"Retry-After": "0"})
    site["/api/"] = Route(b"gone", status=404)
    before = files(col)
    with serve(site) as s:
        res = run_cli("index", "-c", str(col), s.url + "/", *FAST, ok=False)
        assert files(col) == before
        allowed = run_cli("index", "-c", str(col), s.url + "/", *FAST, "--max-failures", "50%")
    assert res.returncode == 1
    assert res.stderr.strip().splitlines()[-1].startswith("error[crawl_failed]: 2 of 4 URLs")
    assert f"503: {s.url}/faq/" in res.stderr  # the report, before the error line
    assert "indexed" in allowed.stdout


@pytest.mark.parametrize(
    ("site", "words"),
    [
        ({}, "HTTP 404"),
        ({"/": Route(b"%PDF-1.4", headers={"Content-Type": "application/pdf"})}, "not an HTML"),
        ({"/": Route(status=301, headers={"Location": "/"}, etag=False)}, "redirect loop"),
    ],
)
def test_bad_start_urls_exit_2(tmp_path: Path, site: dict[str, Route], words: str) -> None:
    target = tmp_path / "new"
    with serve(site) as s:
        res = run_cli("index", "-c", str(target), s.url + "/", *FAST, ok=False)
    assert res.returncode == 2
    (line,) = res.stderr.strip().splitlines()
    assert line.startswith("error[ingest]: ") and words in line
    assert not target.exists()


def test_an_unreachable_host_and_misplaced_options(tmp_path: Path) -> None:
    with serve() as s:
        dead = s.url
    res = run_cli("index", "-c", str(tmp_path / "c"), dead + "/", *FAST, ok=False)
    assert res.returncode == 2 and res.stderr.startswith("error[ingest]: cannot fetch")
    folder = tmp_path / "docs"
    folder.mkdir()
    res = run_cli("index", "-c", str(tmp_path / "c"), str(folder), "--max-pages", "5", ok=False)
    assert res.returncode == 2 and "--max-pages" in res.stderr and "is a folder" in res.stderr
    res = run_cli("index", "-c", str(tmp_path / "c"), str(folder), "--max-time", "60", ok=False)
    assert res.returncode == 2 and "--max-time" in res.stderr and "is a folder" in res.stderr
    res = run_cli("index", "-c", str(tmp_path / "c"), "git+file:///r.git", *FAST, ok=False)
    assert res.returncode == 2 and "--rate" in res.stderr and "a git repository" in res.stderr
    res = run_cli("index", "-c", str(tmp_path / "c"), "ftp://h/docs", ok=False)
    assert res.returncode == 2 and "ftp://" in res.stderr


def test_the_help_names_the_git_url_whole() -> None:
    """Rich reads ``[...]`` as markup: the ref and subfolder parts must survive it."""
    res = run_cli("index", "--help")
    assert "repo[@REF][#SUBDIR]" in " ".join(res.stdout.split()).replace("│ ", "")
