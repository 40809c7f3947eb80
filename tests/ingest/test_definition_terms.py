"""Definition-list entries with ids (Hugo's auto term ids) -> ``term`` nodes, in long lists only.

A reference page that lists dozens of settings in one section is one node otherwise: too long
for its vector, too long for a BM25 match on one setting, and an answer that spends an
agent's whole token budget on the list.
"""

from __future__ import annotations

from pathlib import Path

from cogitave import Collection, SearchRequest
from cogitave.ingest.docs import MIN_SECTION_TERMS, read_docs
from cogitave.ingest.docs.parse import parse_page
from tests.ingest.helpers import by_uid, edges_of, write

SETTINGS = [f"setting{i:02d}" for i in range(MIN_SECTION_TERMS)]


def settings_page() -> str:
    lines = ["---", "title: All settings", "---", "", "## Settings", ""]
    for name in SETTINGS:
        lines += [f"`{name}`", f": (`string`) What {name} sets. See [details][].", ""]
    lines += [
        "`baseURL`",
        ": (`string`) The absolute URL of your published site, with a trailing slash.",
        "",
        "## Other",
        "",
        "`short`",
        ": a list of two entries stays in its section",
        "",
        "`list`",
        ": second entry",
        "",
        "[details]: /configuration/details/",
    ]
    return "\n".join(lines) + "\n"


def test_parse_entries_with_their_lines() -> None:
    page = parse_page("## S\n\n`a`\n: first\n  more\n`b`\n: second\n", "github", term_anchors=True)
    assert [(e.anchor, e.term, e.markdown) for e in page.entries] == [
        ("a", "`a`", "`a`\n: first\n  more"),
        ("b", "`b`", "`b`\n: second"),
    ]
    assert page.entries[1].line == 5
    assert parse_page("`a`\n: first\n", "github").entries == []  # no ids, no entries


def test_a_long_list_gives_term_nodes_a_short_one_does_not(tmp_path: Path) -> None:
    write(tmp_path, "hugo.toml", 'baseURL = "https://x.example/"\n')
    write(tmp_path, "content/configuration/all.md", settings_page())
    nodes = by_uid(read_docs(tmp_path))
    term = nodes["configuration/all#baseurl"]
    assert term.kind == "term"
    assert term.dims["title"] == "baseURL"
    assert term.dims["body"].startswith("(string) The absolute URL of your published site")
    assert term.meta["url"] == "https://x.example/configuration/all/#baseurl"
    assert term.meta["breadcrumb"] == ["Configuration", "All settings", "Settings", "baseURL"]
    assert edges_of(term, "partOf") == ["configuration/all#settings"]
    # a reference link, alone in the entry, keeps its text
    assert nodes["configuration/all#setting00"].dims["body"].endswith("See details.")
    assert "configuration/all#short" not in nodes  # two entries: the section holds them
    kinds = [n.kind for n in nodes.values()]
    assert kinds.count("term") == MIN_SECTION_TERMS + 1


def test_a_setting_is_found_as_its_own_entry(tmp_path: Path) -> None:
    write(tmp_path, "hugo.toml", 'baseURL = "https://x.example/"\n')
    write(tmp_path, "content/configuration/all.md", settings_page())
    write(tmp_path, "content/guide.md", "# Guide\n\nHow to write a page.\n")
    batch = read_docs(tmp_path)
    col = Collection.create(tmp_path / "col", batch.schema, encoder=None)
    col.add(batch.nodes)
    col.publish()
    res = col.search(SearchRequest(query="absolute URL of the published site", limit=3))
    assert res.results[0].uid == "configuration/all#baseurl"
