"""A site's history: what the page-aware ranking demotes and context-v3 and v4 embed as pages."""

from __future__ import annotations

import pytest

from cogitave.history import asks_for_history, is_blog_post, is_history, is_release_notes


@pytest.mark.parametrize(
    ("uid", "kind", "path", "url", "title"),
    [
        ("docs/release-notes#0-100", "section", "docs/en/docs/release-notes.md", "", ""),
        ("changelog", "page", "", "https://x.test/CHANGELOG.html", ""),
        ("whatsnew/3.11#pep-654", "section", "whatsnew/3.11.rst", "", ""),
        ("notes", "page", "", "", "Release notes"),
        ("news", "page", "", "", "What's new in 2.0"),
    ],
)
def test_release_notes_by_path_url_uid_or_a_pages_title(uid, kind, path, url, title) -> None:
    assert is_release_notes(uid, kind, path, url, title) and is_history(uid, kind, path, url, title)


@pytest.mark.parametrize(
    ("uid", "path", "title"),
    [
        ("blog/announcing-vite4#x", "blog/announcing-vite4.md", ""),
        ("src/content/blog/2022/03/08/react-18-upgrade-guide", "", ""),
        ("posts/2024-05-01-hello", "_posts/2024-05-01-hello.md", ""),
        ("launch", "", "Announcing version 5"),
    ],
)
def test_blog_posts_by_a_segment_a_dated_path_or_an_announcement(uid, path, title) -> None:
    assert is_blog_post(uid, "page", path, "", title)


@pytest.mark.parametrize(
    ("uid", "kind", "path", "title"),
    [
        ("tutorial/first-steps", "page", "docs/tutorial/first-steps.md", "First steps"),
        ("guide/release#lock", "section", "guide/locks.md", "Release notes"),  # a section's title
        ("history-of-x", "page", "docs/history-of-x.md", "History of X"),
    ],
)
def test_guides_are_not_history(uid, kind, path, title) -> None:
    assert not is_history(uid, kind, path, "", title)


def test_a_query_that_asks_for_the_history() -> None:
    assert asks_for_history("what's new in 0.110") and asks_for_history("react 19 blog post")
    assert not asks_for_history("release a lock after the request")
    assert not asks_for_history("post a form with a file")
