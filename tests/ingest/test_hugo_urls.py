"""Hugo's `permalinks` and `uglyURLs` -> the URLs Hugo builds, and links written to them."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from cogitave.ingest.docs import read_docs
from cogitave.ingest.docs.hugo_urls import HugoUrls, expand, hugo_config
from tests.ingest.helpers import by_uid, edges_of, write


def urls(root: Path) -> dict[str, str]:
    return {n.uid: n.meta["url"] for n in read_docs(root).nodes if n.kind == "page"}


def test_ugly_urls_for_the_whole_site(tmp_path: Path) -> None:
    write(tmp_path, "hugo.toml", 'baseURL = "https://x.example/"\nuglyURLs = true\n')
    write(tmp_path, "content/_index.md", "---\ntitle: Home\n---\nSee [A](/posts/a.html).\n")
    write(tmp_path, "content/posts/_index.md", "---\ntitle: Posts\n---\n")
    write(tmp_path, "content/posts/a.md", "---\ntitle: A\n---\n## Part\n\nText.\n")
    write(
        tmp_path, "content/posts/b/index.md", "---\ntitle: B\n---\nBack to [posts](/posts.html).\n"
    )
    got = urls(tmp_path)
    assert got["posts/a"] == "https://x.example/posts/a.html"
    assert got["posts/b/index"] == "https://x.example/posts/b.html"  # a leaf bundle
    assert got["posts/_index"] == "https://x.example/posts.html"  # a section's own page
    assert got["_index"] == "https://x.example/"  # the home page stays /
    nodes = by_uid(read_docs(tmp_path))
    assert nodes["posts/a#part"].meta["url"] == "https://x.example/posts/a.html#part"
    assert edges_of(nodes["_index"], "xref") == ["posts/a"]
    assert edges_of(nodes["posts/b/index"], "xref") == ["posts/_index"]


def test_ugly_urls_per_section(tmp_path: Path) -> None:
    write(tmp_path, "hugo.yaml", "uglyURLs:\n  books: true\n  films: false\n")
    write(tmp_path, "content/books/a.md", "# A\n")
    write(tmp_path, "content/films/b.md", "# B\n")
    got = urls(tmp_path)
    assert got["books/a"] == "/books/a.html" and got["films/b"] == "/films/b/"


def test_permalinks_map_form_by_kind_with_date_and_slug_tokens(tmp_path: Path) -> None:
    write(
        tmp_path,
        "hugo.toml",
        "[permalinks.page]\narticles = '/blog/:year/:month/:slug/'\n"
        "[permalinks.section]\narticles = '/blog/'\n",
    )
    write(tmp_path, "content/articles/_index.md", "---\ntitle: Articles\n---\n")
    write(
        tmp_path,
        "content/articles/first.md",
        "---\ntitle: My First Post!\ndate: 2024-05-03T10:00:00-05:00\n---\n"
        "Next: [second](/blog/2024/06/second-one/).\n",
    )
    write(
        tmp_path,
        "content/articles/second.md",
        "---\ntitle: Ignored\nslug: Second One\ndate: 2024-06-01\n---\nText.\n",
    )
    write(tmp_path, "content/about.md", "# About\n")
    got = urls(tmp_path)
    assert got["articles/first"] == "/blog/2024/05/my-first-post/"
    assert got["articles/second"] == "/blog/2024/06/second-one/"
    assert got["articles/_index"] == "/blog/"
    assert got["about"] == "/about/"  # no pattern for the home section
    nodes = by_uid(read_docs(tmp_path))
    assert edges_of(nodes["articles/first"], "xref") == ["articles/second"]


def test_permalinks_older_form_and_the_url_front_matter_wins(tmp_path: Path) -> None:
    write(tmp_path, "config/_default/hugo.toml", "title = 'x'\n")
    write(tmp_path, "config/_default/permalinks.toml", "posts = '/:year/:contentbasename/'\n")
    write(tmp_path, "content/posts/a.md", "---\ndate: 2023-01-02\n---\n# A\n")
    write(tmp_path, "content/posts/b.md", "---\ndate: 2023-01-02\nurl: /elsewhere/\n---\n# B\n")
    got = urls(tmp_path)
    assert got["posts/a"] == "/2023/a/" and got["posts/b"] == "/elsewhere/"


def test_permalinks_array_form_first_match_and_a_note_for_what_it_cannot_decide(
    tmp_path: Path,
) -> None:
    write(
        tmp_path,
        "hugo.toml",
        "[[permalinks]]\npattern = '/x/:slug/'\n[permalinks.target]\nkinds = ['page']\n"
        "[[permalinks]]\npattern = '/docs-root/:sections[1:]/:slug/'\n"
        "[permalinks.target]\npath = '{/docs/**}'\n"
        "[[permalinks]]\npattern = '/:section/:contentbasename/'\n",
    )
    write(tmp_path, "content/docs/guide/setup.md", "---\ntitle: Set Up\n---\n# S\n")
    write(tmp_path, "content/notes/n1.md", "# N\n")
    batch = read_docs(tmp_path)
    got = {n.uid: n.meta["url"] for n in batch.nodes if n.kind == "page"}
    assert got["docs/guide/setup"] == "/docs-root/guide/set-up/"
    assert got["notes/n1"] == "/notes/n1/"
    assert any("permalinks entry '/x/:slug/'" in note for note in batch.stats["notes"])


def test_tokens() -> None:
    when = {"date": datetime(2024, 3, 9, 8, 0)}
    secs = ["docs", "guide", "deep"]

    def x(pattern: str) -> str:
        return expand(pattern, sections=secs, front=when, basename="page", title="A Title")

    assert x("/:year/:month/:day/:title/") == "/2024/03/09/a-title/"
    assert x("/:06/:1/:2/:Jan/") == "/24/3/9/Mar/"
    assert x("/:monthname/:weekdayname/:weekday/:yearday/") == "/March/Saturday/6/69/"
    assert x("/:sections/") == "/docs/guide/deep/"
    assert x("/:sections[1:]/") == "/guide/deep/"
    assert x("/:sections[:last]/") == "/docs/guide/"
    assert x("/:sections[last]/") == "/deep/"
    assert x("/:sections[1:2]/") == "/guide/deep/"  # both ends in, as Hugo documents
    assert x("/:section/:slugorcontentbasename/") == "/docs/page/"
    assert x("/:unknown/") == "/:unknown/"


def test_config_keys_ignore_case_and_a_broken_file_is_passed_over(tmp_path: Path) -> None:
    write(tmp_path, "hugo.toml", "this is not toml =\n")
    write(tmp_path, "config/_default/hugo.yaml", "BaseURL: https://c.example/\nUGLYURLS: true\n")
    config = hugo_config(tmp_path)
    assert config["baseurl"] == "https://c.example/"
    assert HugoUrls.from_config(config).is_ugly("any")
    assert HugoUrls.from_config({}) == HugoUrls()  # nothing to apply
