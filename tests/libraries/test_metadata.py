"""What a package index says, read as hostile input: PyPI's JSON API and the npm registry
played by a local server; fields of the wrong type, too long or not URLs dropped; repository
URLs in the shapes indexes write them made into what git fetches; the newest version a
range allows (yanked releases left out); a body past the bound, a 404 and non-JSON as one
error each."""

from __future__ import annotations

import json

import pytest

from cogitave.errors import PackageIndexError
from cogitave.libraries import metadata
from cogitave.libraries.metadata import (
    _npm_meta,
    _pypi_meta,
    fetch_json,
    git_url,
    index_urls,
    newest_matching,
    package_meta,
)
from cogitave.libraries.project import Dependency
from tests.ingest.web.helpers import Route, serve


def dep(name: str, ecosystem: str = "python", spec: str | None = None) -> Dependency:
    return Dependency(name, name, ecosystem, None, spec, "requirements.txt")  # type: ignore[arg-type]


def js(data: object) -> Route:
    return Route(json.dumps(data).encode(), headers={"Content-Type": "application/json"},
                 etag=False)  # fmt: skip


@pytest.mark.parametrize(
    ("given", "want"),
    [
        ("https://github.com/pallets/click/tree/main/docs", "https://github.com/pallets/click"),
        ("git+https://github.com/org/repo.git", "https://github.com/org/repo"),
        ("git://github.com/org/repo.git", "https://github.com/org/repo"),
        ("git@github.com:org/repo.git", "https://github.com/org/repo"),
        ("github:org/repo", "https://github.com/org/repo"),
        ("org/repo", "https://github.com/org/repo"),
        ("gitlab:group/proj", "https://gitlab.com/group/proj"),
        ("https://git.example.com/team/lib", "https://git.example.com/team/lib"),
        ("file:///srv/git/lib.git", "file:///srv/git/lib.git"),
        ("https://github.com/justorg", None),
        ("ext::sh -c evil", None),
        ("javascript:alert(1)", None),
        ("https://x/" + "a" * 3000, None),
        ("https://github.com/org/repo\x1b[31m", None),
        (["not", "a", "string"], None),
    ],
)
def test_repository_urls_as_git_fetches_them(given: object, want: str | None) -> None:
    assert git_url(given) == want


def test_pypi_metadata_fields_are_checked() -> None:
    meta = _pypi_meta("u", {"info": {
        "project_urls": {"Homepage": "https://example.org", "Source Code": "https://github.com/a/b",
                         "Documentation": "javascript:alert(1)", 7: "https://x", "Docs": 5},
        "docs_url": None, "home_page": {"a": 1}}})  # fmt: skip
    assert meta.repository == "https://github.com/a/b"
    assert meta.documentation is None and meta.homepage == "https://example.org"
    meta = _pypi_meta("u", {"info": {"home_page": "https://github.com/a/b/", "project_urls": None}})
    assert meta.repository == "https://github.com/a/b" and meta.documentation is None
    with pytest.raises(PackageIndexError, match="no 'info' object"):
        _pypi_meta("u", {"info": []})


def test_npm_metadata_fields_are_checked() -> None:
    meta = _npm_meta("u", {"repository": {"type": "git", "url": "git+https://github.com/v/vite.git",
                                          "directory": "packages/vite"},
                           "homepage": "https://vite.dev"})  # fmt: skip
    assert (meta.repository, meta.subdir, meta.documentation) == (
        "https://github.com/v/vite", "packages/vite", "https://vite.dev")  # fmt: skip
    meta = _npm_meta("u", {"repository": {"url": 3, "directory": "../../etc"},
                           "homepage": "https://github.com/a/b#readme"})  # fmt: skip
    assert meta.subdir is None and meta.repository == "https://github.com/a/b"
    assert meta.documentation is None  # a forge's page is the repository, not a docs site


def test_versions_and_documents_from_a_local_index(monkeypatch: pytest.MonkeyPatch) -> None:
    releases = {"1.0.0": [{"yanked": False}], "1.4.0": [{"yanked": False}],
                "1.5.0": [{"yanked": True}], "2.0.0": [{}], "2.1.0rc1": [{}], "bad": [{}],
                "1.9.0": []}  # fmt: skip
    routes = {
        "/pypi/lib/json": js({"info": {}, "releases": releases}),
        "/pypi/lib/1.4.0/json": js({"info": {"project_urls": {"Repository": "https://h/o/r"}}}),
        "/npm/tinyfetch": js({"versions": {"2.0.0": {}, "2.1.0": {}, "3.0.0": {}}}),
        "/npm/tinyfetch/2.1.0": js({"repository": "github:o/tinyfetch"}),
        "/pypi/big/json": Route(b"[" + b"1," * 600_000 + b"1]", etag=False),
        "/pypi/text/json": Route(b"<html>no</html>", etag=False),
        "/pypi/list/json": js([1, 2]),
    }
    with serve(routes) as server:
        monkeypatch.setenv("COGITAVE_PYPI_URL", f"{server.url}/pypi/")
        monkeypatch.setenv("COGITAVE_NPM_URL", f"{server.url}/npm")
        bases = index_urls("https://ignored", None)
        assert bases == (f"{server.url}/pypi", f"{server.url}/npm")
        assert newest_matching(dep("lib", spec=">=1,<2"), bases) == "1.4.0"
        assert newest_matching(dep("lib"), bases) == "2.0.0"
        assert newest_matching(dep("lib", spec=">=3"), bases) is None
        assert newest_matching(dep("tinyfetch", "npm", "^2.0.0"), bases) == "2.1.0"
        assert package_meta(dep("lib"), "1.4.0", bases).repository == "https://h/o/r"
        npm = package_meta(dep("tinyfetch", "npm"), "2.1.0", bases)
        assert npm.repository == "https://github.com/o/tinyfetch"
        with pytest.raises(PackageIndexError, match=r"not found \(HTTP 404\)"):
            package_meta(dep("gone"), "1.0", bases)
        monkeypatch.setattr(metadata, "MAX_LIST_BYTES", 100_000)
        with pytest.raises(PackageIndexError, match="larger than 100,000 bytes"):
            newest_matching(dep("big"), bases)
        with pytest.raises(PackageIndexError, match="not JSON"):
            fetch_json(f"{server.url}/pypi/text/json", 1000)
        with pytest.raises(PackageIndexError, match="not a JSON object"):
            fetch_json(f"{server.url}/pypi/list/json", 1000)
