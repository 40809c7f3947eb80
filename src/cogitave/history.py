"""A site's history: release notes, changelogs, blog posts and announcements, known by a
node's path, URL or uid (a path segment, a dated path) or a page's title. The page-aware
ranking demotes them (:mod:`cogitave.query.pages`) and the ``context-v3`` and ``context-v4``
text recipes embed them as pages alone (:mod:`cogitave.texts`)."""

from __future__ import annotations

import re

from cogitave.nodes import strip_host

# A path segment (its extension dropped) that names a release history.
_NOTES_SEGMENTS = frozenset(
    {
        "release-notes",
        "release_notes",
        "releasenotes",
        "releases",
        "changelog",
        "changelogs",
        "change-log",
        "changes",
        "history",
        "whats-new",
        "whatsnew",
        "news",
    }
)
_NOTES_TITLE = re.compile(
    r"^\s*(release notes|release history|changelog|change log|what'?s new)\b", re.IGNORECASE
)
# A blog: a path segment naming one, a dated path (``2024/10/01/``, ``2024-10-01-post``), or
# an announcement's title. A page's age says nothing of whether it answers; a guide does.
_BLOG_SEGMENTS = frozenset({"blog", "blogs", "_posts", "announcements"})
_DATED_PATH = re.compile(
    r"(?:^|/)(?:19|20)\d\d/(?:0?[1-9]|1[0-2])/|(?:^|/)(?:19|20)\d\d-\d\d-\d\d-"
)
_ANNOUNCEMENT_TITLE = re.compile(r"^\s*announcing\b", re.IGNORECASE)


def _segment(names: frozenset[str]) -> re.Pattern[str]:
    """A path segment that is one of ``names`` once its extension is dropped (one regex
    search per name: a split and a set test per segment cost 27 us a page)."""
    alts = "|".join(sorted((re.escape(n) for n in names), key=len, reverse=True))
    return re.compile(rf"(?:^|/)(?:{alts})(?:\.[^./]*)?(?:/|$)", re.IGNORECASE)


_NOTES_SEGMENT = _segment(_NOTES_SEGMENTS)
_BLOG_SEGMENT = _segment(_BLOG_SEGMENTS)
# Words of a query that asks for the history itself (the demotion is then off). Not "post"
# (an HTTP method) nor "release" (of a lock, a connection): words that mean the history.
_ASKS_HISTORY = re.compile(
    r"\b(blogs?|announce(?:s|d|ment|ments)?|announcing|releases|released|changelogs?|"
    r"change ?log|release ?notes?|what'?s new|new in|news)\b",
    re.IGNORECASE,
)


def is_release_notes(uid: str, kind: str, path: str = "", url: str = "", title: str = "") -> bool:
    """Release notes, changelogs and "what's new" pages, by a path segment or the title (of a
    page)."""
    for name in (path, strip_host(url), uid.split("#", 1)[0]):
        if _NOTES_SEGMENT.search(name.strip("/")):
            return True
    return bool(title) and kind in ("page", "node") and bool(_NOTES_TITLE.match(title))


def is_blog_post(uid: str, kind: str, path: str = "", url: str = "", title: str = "") -> bool:
    """Blog posts and announcements: a ``blog`` (``_posts``, ``announcements``) path
    segment, a dated path, or a page titled "Announcing ..."."""
    for name in (path, strip_host(url), uid.split("#", 1)[0]):
        name = name.strip("/")
        if _DATED_PATH.search(name) or _BLOG_SEGMENT.search(name):
            return True
    return bool(title) and kind in ("page", "node") and bool(_ANNOUNCEMENT_TITLE.match(title))


def is_history(uid: str, kind: str, path: str = "", url: str = "", title: str = "") -> bool:
    """Release notes or a blog post."""
    return is_release_notes(uid, kind, path, url, title) or is_blog_post(
        uid, kind, path, url, title
    )


def asks_for_history(query: str) -> bool:
    """Whether the query asks for release notes, a changelog or a blog post itself."""
    return bool(_ASKS_HISTORY.search(query))
