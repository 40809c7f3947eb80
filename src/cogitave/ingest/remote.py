"""What ``cogitave index SOURCE`` names: a path, a published site, or a git repository.

:func:`locate` reads the argument as typed: ``http(s)://...`` is a site to crawl
(:class:`WebSource`); ``git+<url>[@REF][#SUBDIR]`` a repository to clone (:class:`GitSource`;
``<url>`` is ``https://``, ``ssh://``, ``file://`` or a path), and so is a path to a bare
repository or a ``file://`` URL naming one; anything else is a path. Parsing only: nothing is
fetched or imported here beyond plain values.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

from cogitave.errors import InputError
from cogitave.ingest.web.options import CrawlOptions

_REF = re.compile(r"^[A-Za-z0-9._/+-]+$")


@dataclass(frozen=True)
class WebSource:
    """A docs site to crawl from ``url``."""

    url: str
    options: CrawlOptions = field(default_factory=CrawlOptions)

    def __str__(self) -> str:
        return self.url


@dataclass(frozen=True)
class GitSource:
    """A git repository: where git fetches it from, the ref to check out (None: its default
    branch) and the folder of the docs inside it (None: found as for a folder)."""

    url: str
    ref: str | None = None
    subdir: str | None = None
    text: str = ""
    """As the user wrote it (the source's name)."""

    def __str__(self) -> str:
        return self.text or self.url


Location = Path | WebSource | GitSource


def is_bare_repository(path: Path) -> bool:
    """A folder that is a bare git repository (``HEAD``, ``objects/``, ``refs/``)."""
    return (
        path.is_dir()
        and (path / "HEAD").is_file()
        and (path / "objects").is_dir()
        and (path / "refs").is_dir()
        and not (path / ".git").exists()
    )


def locate(text: str, crawl: CrawlOptions | None = None) -> Location:
    """The source ``text`` names (see the module doc); ``crawl``: the options of a site."""
    low = text.lower()
    if low.startswith("git+"):
        return parse_git(text)
    if low.startswith(("http://", "https://")):
        return WebSource(text, crawl or CrawlOptions())
    if low.startswith("file://"):
        path = Path(urlsplit(text).path)
        if is_bare_repository(path) or (path / ".git").exists():
            return GitSource(text, None, None, text)
        raise InputError(f"{text}: a file:// source must name a git repository")
    if re.match(r"^[a-z][a-z0-9+.-]*://", low):
        raise InputError(f"{text}: cannot index a {low.split(':', 1)[0]}:// source")
    path = Path(text)
    if is_bare_repository(path):
        return GitSource(os.path.abspath(path), None, None, text)
    return path


def parse_git(text: str) -> GitSource:
    """``git+<url>[@REF][#SUBDIR]``: the ``@`` after the host and path names the ref (an
    ``@`` in ``user@host`` does not)."""
    rest = text[4:]
    rest, _, subdir = rest.partition("#")
    scheme, sep, after = rest.partition("://")
    if not sep:
        scheme, after = "", rest
    host, slash, path = after.partition("/") if scheme else ("", "", after)
    ref = None
    if "@" in path:
        path, _, ref = path.rpartition("@")
    url = f"{scheme}://{host}{slash}{path}" if scheme else path
    if not path.strip("/") and scheme != "file":
        raise InputError(f"{text}: no repository path in the git URL")
    if ref is not None and (not _REF.match(ref) or ".." in ref or ref.startswith("-")):
        raise InputError(f"{text}: {ref!r} is not a branch, tag or commit name")
    sub = subdir.strip("/") or None
    if sub is not None and (".." in sub.split("/") or sub.startswith("-")):
        raise InputError(f"{text}: the folder #{subdir} must stay inside the repository")
    if scheme and scheme not in ("https", "http", "ssh", "git", "file"):
        raise InputError(f"{text}: git over {scheme} is not supported")
    return GitSource(url, ref or None, sub, text)
