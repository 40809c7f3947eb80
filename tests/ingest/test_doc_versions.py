"""A docs tree that holds several versions (Docusaurus ``versions.json``): each version listed
with the URL path it is served under, and read one at a time with that version's URLs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cogitave.errors import InputError
from cogitave.ingest.docs import DocsBatch, read_docs
from cogitave.ingest.sources import DocVersion, doc_versions, read_source
from tests.ingest.helpers import write


def three_versions(root: Path, options: str = "") -> Path:
    """A Docusaurus site with 2.0 and 1.0 released and the unreleased docs."""
    docs = f"docs: {{ {options} }}" if options else ""
    write(
        root,
        "docusaurus.config.js",
        f"module.exports = {{ title: 'Demo', url: 'https://x.dev', presets: "
        f"[['classic', {{ {docs} }}]] }};\n",
    )
    write(root, "versions.json", json.dumps(["2.0", "1.0"]))
    for folder, words in (
        ("docs", "Unreleased"),
        ("versioned_docs/version-2.0", "Two"),
        ("versioned_docs/version-1.0", "One"),
    ):
        write(
            root,
            f"{folder}/intro.md",
            f"# Intro\n\n{words} wording. See [setup](guide/setup.md).\n",
        )
        write(root, f"{folder}/guide/setup.md", f"# Setup\n\n{words} setup.\n")
    write(root, "versioned_sidebars/version-2.0-sidebars.json", "{}")
    return root


def urls(batch: DocsBatch) -> dict[str, str]:
    return {n.uid: n.meta["url"] for n in batch.nodes if n.kind == "page"}


def test_the_versions_a_docusaurus_site_holds(tmp_path: Path) -> None:
    three_versions(tmp_path)
    assert doc_versions(tmp_path) == (
        DocVersion("next", False, "/docs/next/"),
        DocVersion("2.0", True, "/docs/"),
        DocVersion("1.0", False, "/docs/1.0/"),
    )


def test_each_version_is_read_with_its_own_urls(tmp_path: Path) -> None:
    three_versions(tmp_path)
    expected = {
        None: ("Two", "https://x.dev/docs"),
        "2.0": ("Two", "https://x.dev/docs"),
        "1.0": ("One", "https://x.dev/docs/1.0"),
        "next": ("Unreleased", "https://x.dev/docs/next"),
    }
    for version, (words, prefix) in expected.items():
        batch = read_source(tmp_path, version=version)
        assert isinstance(batch, DocsBatch)
        assert urls(batch) == {"intro": f"{prefix}/intro", "guide/setup": f"{prefix}/guide/setup"}
        nodes = {n.uid: n for n in batch.nodes}
        assert f"{words} wording." in (nodes["intro"].content or "")
        # a link between pages of the version leads to the page of that version
        assert ("xref", "guide/setup") in {(e.label, e.dst) for e in nodes["intro"].edges}
        assert f"({prefix}/guide/setup)" in (nodes["intro"].content or "")
    older = read_docs(tmp_path, version="1.0")
    assert older.stats["docs_root"] == "versioned_docs/version-1.0"
    assert any(
        "version 1.0: reading versioned_docs/version-1.0/" in n for n in older.stats["notes"]
    )
    # Docusaurus's own name for the unreleased docs reads them too
    assert urls(read_docs(tmp_path, version="current")) == urls(read_docs(tmp_path, version="next"))


def test_an_unknown_version_names_the_versions_held(tmp_path: Path) -> None:
    three_versions(tmp_path)
    with pytest.raises(InputError, match=r"no docs version '3\.0'; the versions it holds: next, "):
        read_source(tmp_path, version="3.0")
    with pytest.raises(InputError, match=r"2\.0 \(served by default\), 1\.0"):
        read_source(tmp_path, version="3.0")


def test_a_tree_without_versions(tmp_path: Path) -> None:
    write(tmp_path, "mkdocs.yml", "site_name: Demo\n")
    write(tmp_path, "docs/index.md", "# Home\n")
    assert doc_versions(tmp_path) == ()
    with pytest.raises(InputError, match="its docs are not versioned: leave the version out"):
        read_source(tmp_path, version="1.0")
    write(tmp_path, "recs.jsonl", '{"uid": "a", "title": "alpha"}\n')
    with pytest.raises(InputError, match="a version is read from a versioned docs tree, not jsonl"):
        read_source(tmp_path / "recs.jsonl", version="1.0")
    site = tmp_path / "site"
    write(site, "docusaurus.config.js", "module.exports = { url: 'https://x.dev' };\n")
    write(site, "docs/a.md", "# A\n")
    assert doc_versions(site) == ()
    with pytest.raises(InputError, match="not versioned"):
        read_source(site, version="2.0")


def test_the_config_moves_versions(tmp_path: Path) -> None:
    # lastVersion 'current' with a label: the unreleased docs are served at the docs route
    # under that name; a version's `path` renames its URL segment.
    three_versions(
        tmp_path,
        "lastVersion: 'current', routeBasePath: 'guide', versions: {\n"
        "  current: { label: '3.0-beta', banner: 'none' },\n"
        "  '1.0': { label: 'v1 (legacy)', path: 'legacy' },\n"
        "}",
    )
    assert doc_versions(tmp_path) == (
        DocVersion("3.0-beta", True, "/guide/"),
        DocVersion("2.0", False, "/guide/2.0/"),
        DocVersion("1.0", False, "/guide/legacy/"),
    )
    assert urls(read_docs(tmp_path))["intro"] == "https://x.dev/guide/intro"
    assert (
        urls(read_docs(tmp_path, version="legacy"))["intro"] == "https://x.dev/guide/legacy/intro"
    )
    # onlyIncludeVersions keeps those named; a route of '/' serves the last version at the root
    three_versions(tmp_path, "routeBasePath: '/', onlyIncludeVersions: ['1.0', 'current']")
    assert doc_versions(tmp_path) == (
        DocVersion("next", False, "/next/"),
        DocVersion("1.0", True, "/"),
    )
    assert urls(read_docs(tmp_path))["guide/setup"] == "https://x.dev/guide/setup"
    # includeCurrentVersion: false leaves the unreleased docs out; disableVersioning keeps
    # them alone (the tree is then read as one version)
    three_versions(tmp_path, "includeCurrentVersion: false")
    assert [v.version for v in doc_versions(tmp_path)] == ["2.0", "1.0"]
    with pytest.raises(
        InputError, match=r"the versions it holds: 2\.0 \(served by default\), 1\.0$"
    ):
        read_docs(tmp_path, version="next")
    three_versions(tmp_path, "disableVersioning: true")
    assert doc_versions(tmp_path) == ()
    assert "Unreleased wording." in (
        next(n for n in read_docs(tmp_path).nodes if n.uid == "intro").content or ""
    )


def test_a_version_whose_folder_is_missing_is_not_held(tmp_path: Path) -> None:
    three_versions(tmp_path)
    write(tmp_path, "versions.json", json.dumps(["2.0", "1.5", "1.0"]))
    assert [v.version for v in doc_versions(tmp_path)] == ["next", "2.0", "1.0"]


def test_the_docs_plugin_configured_on_its_own(tmp_path: Path) -> None:
    three_versions(tmp_path)
    write(
        tmp_path,
        "docusaurus.config.js",
        """
        module.exports = {
          url: 'https://x.dev',
          presets: [['classic', { blog: false }]],
          plugins: [
            ['@docusaurus/plugin-content-docs', { id: 'community', path: 'community' }],
            ['@docusaurus/plugin-content-docs', {
              lastVersion: 'current',
              versions: { current: { label: 'v3', path: 'v3' }, '1.0': { path: 'v1' } },
            }],
          ],
        };
        """,
    )
    assert doc_versions(tmp_path) == (
        DocVersion("v3", True, "/docs/v3/"),
        DocVersion("2.0", False, "/docs/2.0/"),
        DocVersion("1.0", False, "/docs/v1/"),
    )
    assert urls(read_docs(tmp_path))["intro"] == "https://x.dev/docs/v3/intro"
