"""The command line of libraries: index versions, list them, search one or all, pin a
project's versions, delete."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers import run_cli, write_tree

SITE = {
    "mkdocs.yml": "site_name: Demo Kit\nnav:\n  - index.md\n  - guide.md\n",
    "docs/index.md": "# Demo Kit\n\nWelcome. Read [the guide](guide.md).\n",
    "docs/guide.md": "# Guide\n\nConfigure the retry budget of the client.\n\n"
    "## Timeouts\n\nSet a timeout per request.\n",
}


@pytest.fixture(scope="module")
def col(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("lib-cli")
    old = write_tree(root / "v1", SITE)
    new = write_tree(
        root / "v2", {**SITE, "docs/guide.md": SITE["docs/guide.md"] + "\n## Retries\n\nRetry.\n"}
    )
    c = root / "col"
    run_cli("index", "-c", str(c), "--library", "demo-kit", "--version", "1.0.0", str(old), "-q")
    run_cli("index", "-c", str(c), "--library", "demo-kit", "--version", "2.0.0", str(new), "-q")
    return c


def test_libraries_lists_versions_newest_first(col: Path) -> None:
    body = json.loads(run_cli("libraries", "-c", str(col), "--json").stdout)
    (lib,) = body["libraries"]
    assert lib["key"] == "demo-kit"
    assert [v["version"] for v in lib["versions"]] == ["2.0.0", "1.0.0"]
    assert [v["default"] for v in lib["versions"]] == [True, False]
    assert lib["versions"][0]["source"].endswith("v2") and lib["versions"][0]["pages"] >= 2
    table = run_cli("libraries", "-c", str(col)).stdout
    assert "demo-kit" in table and "1.0.0" in table


def test_search_one_version_or_the_default(col: Path) -> None:
    def versions(*args: str) -> set[str]:
        res = run_cli("search", "retry timeout", "-c", str(col), "--json", *args)
        return {h["library"] for h in json.loads(res.stdout)["results"]}

    assert versions() == {"demo-kit@2.0.0"}
    assert versions("--library", "demo-kit@1.0.0") == {"demo-kit@1.0.0"}
    assert versions("--library", "Demo Kit@1.0.0") == {"demo-kit@1.0.0"}
    bad = run_cli("search", "x", "-c", str(col), "--library", "demo-kit@9", ok=False)
    assert bad.returncode == 2 and "versions held: 1.0.0, 2.0.0" in bad.stderr
    bad = run_cli("search", "x", "-c", str(col), "--library", "demokid", ok=False)
    assert "closest: demo-kit" in bad.stderr


def test_a_project_pins_the_version_it_uses(col: Path, tmp_path: Path) -> None:
    (tmp_path / "requirements.txt").write_text("demo-kit==1.4.2\nrequests==2.0\n")
    res = run_cli(
        "search", "retry", "-c", str(col), "--project", str(tmp_path), "--format", "markdown"
    )
    assert "demo-kit 1.0.0, nearest to 1.4.2" in res.stdout  # never silently another version
    assert "demo-kit@1.0.0 (nearest" in res.stderr
    js = run_cli("search", "retry", "-c", str(col), "--project", str(tmp_path), "--json").stdout
    assert {h["library"] for h in json.loads(js)["results"]} == {"demo-kit@1.0.0"}


def test_another_source_needs_replace_and_delete_removes(col: Path, tmp_path: Path) -> None:
    other = write_tree(tmp_path / "other", SITE)
    bad = run_cli("index", "-c", str(col), "--library", "demo-kit", "--version", "1.0.0",
                  str(other), "-q", ok=False)  # fmt: skip
    assert bad.returncode == 2 and "--replace" in bad.stderr
    run_cli("delete", "-c", str(col), "--library", "demo-kit@1.0.0")
    body = json.loads(run_cli("libraries", "-c", str(col), "--json").stdout)
    assert [v["version"] for v in body["libraries"][0]["versions"]] == ["2.0.0"]


def test_a_plain_collection_is_not_turned_into_libraries(tmp_path: Path) -> None:
    site = write_tree(tmp_path / "site", SITE)
    run_cli("index", "-c", str(tmp_path / "plain"), str(site), "-q")
    bad = run_cli("index", "-c", str(tmp_path / "plain"), "--library", "x", str(site), ok=False)
    assert bad.returncode == 2 and "new collection" in bad.stderr
    body = json.loads(run_cli("libraries", "-c", str(tmp_path / "plain"), "--json").stdout)
    # named as its docs name it (mkdocs.yml site_name), not after the folder
    assert [lib["key"] for lib in body["libraries"]] == ["demo-kit"]


def test_pack_and_import_from_the_command_line(col: Path, tmp_path: Path) -> None:
    pack = tmp_path / "demo.cogpack"
    res = run_cli("pack", "-c", str(col), "--library", "demo-kit@2.0.0", "-o", str(pack))
    assert "packed demo-kit@2.0.0" in res.stdout and pack.is_file()
    res = run_cli("index", "-c", str(tmp_path / "offline"), str(pack), "-q")
    assert "imported demo-kit@2.0.0" in res.stdout and "nothing embedded" in res.stdout
    hits = run_cli("search", "retry", "-c", str(tmp_path / "offline"), "--json").stdout
    assert {h["library"] for h in json.loads(hits)["results"]} == {"demo-kit@2.0.0"}
    bad = run_cli("pack", "-c", str(col), "--library", "nope", "-o", str(pack), ok=False)
    assert bad.returncode == 2 and "no library" in bad.stderr


def test_a_versioned_docs_tree_gives_every_released_version(tmp_path: Path) -> None:
    site = {
        "docusaurus.config.js": "module.exports = { title: 'Demo', url: 'https://x.dev' };\n",
        "versions.json": '["2.0", "1.0"]',
    }
    for folder, words in (
        ("docs", "Unreleased"),
        ("versioned_docs/version-2.0", "Two"),
        ("versioned_docs/version-1.0", "One"),
    ):
        site[f"{folder}/intro.md"] = f"# Intro\n\n{words} wording about retries.\n"
    tree = write_tree(tmp_path / "site", site)
    res = run_cli("index", "-c", str(tmp_path / "c"), "--library", "demo", str(tree), "-q")
    assert "demo@2.0" in res.stdout and "demo@1.0" in res.stdout and "next" not in res.stdout
    body = json.loads(run_cli("libraries", "-c", str(tmp_path / "c"), "--json").stdout)
    assert [v["version"] for v in body["libraries"][0]["versions"]] == ["2.0", "1.0"]
    args = ("search", "retries", "-c", str(tmp_path / "c"), "--json", "--library", "demo@1.0")
    hit = json.loads(run_cli(*args).stdout)["results"][0]
    assert hit["library"] == "demo@1.0" and hit["url"] == "https://x.dev/docs/1.0/intro"
    one = run_cli("index", "-c", str(tmp_path / "d"), "--library", "demo", "--version", "next",
                  str(tree), "-q")  # fmt: skip
    assert "demo@next" in one.stdout


def test_recorded_strings_reach_the_terminal_escaped(tmp_path: Path) -> None:
    from dataclasses import replace

    from cogitave.libraries.collection import LibraryCollection
    from tests.conftest import SCHEMA, make_nodes

    lib = LibraryCollection.create(tmp_path / "c", encoder=None)
    nodes = [replace(n, uid=f"p{i}", kind="page") for i, n in enumerate(make_nodes(3, seed=1))]
    lib.sync_library("kit", "1", nodes, schema=SCHEMA, source="/s\x1b[2J[red]x" + "y" * 5000)
    table = run_cli("--width", "400", "libraries", "-c", str(tmp_path / "c")).stdout
    assert "\x1b" not in table and "\\x1b[2J[red]x" in table and "y" * 300 not in table


def test_a_projects_strings_reach_the_terminal_escaped(col: Path, tmp_path: Path) -> None:
    (tmp_path / "package.json").write_text(
        json.dumps({"dependencies": {"demo-kit": "^2.0.0 \x1b[2J\x1b]0;title\x07"}})
    )
    res = run_cli("search", "retry", "-c", str(col), "--project", str(tmp_path), "--json")
    assert "demo-kit@" in res.stderr and "\x1b" not in res.stderr and "\\x1b" in res.stderr
    md = run_cli(
        "search", "retry", "-c", str(col), "--project", str(tmp_path), "--format", "markdown"
    )
    assert "demo-kit 2.0.0, range to ^2.0.0 \\x1b[2J" in md.stdout and "\x1b" not in md.stdout
