"""What ``cogitave index SOURCE`` names: a path, a published site, or a git repository.

:func:`locate` reads the argument as typed: ``http(s)://...`` is a site to crawl
(:class:`WebSource`); ``git+<url>[@REF][#SUBDIR]`` a repository to clone (:class:`GitSource`;
``<url>`` is ``https://``, ``ssh://``, ``file://`` or a path), and so is a path to a bare
repository or a ``file://`` URL naming one; anything else is a path. Parsing only: nothing is
fetched or imported here beyond plain values.

:func:`file_url` gives where a repository on a well-known host (GitHub, GitLab, Codeberg,
Bitbucket) shows a file at a commit, from the URL git fetches it from alone: a docs tree
read from a clone links there when nothing names its published site.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote, urlsplit

from cogitave.errors import InputError
from cogitave.ingest.web.options import CrawlOptions

_REF = re.compile(r"^[A-Za-z0-9._/+-]+$")
# Where each host's web view shows a file of a repository at a commit, after the
# repository's own address (``https://github.com/OWNER/REPO``).
WEB_VIEWS = {
    "github.com": "blob/{commit}/{path}",
    "gitlab.com": "-/blob/{commit}/{path}",
    "codeberg.org": "src/commit/{commit}/{path}",
    "bitbucket.org": "src/{commit}/{path}",
}
_SCP = re.compile(r"^(?:[\w.+-]+@)?(?P<host>[\w.-]+):(?!/)(?P<path>.+)$")  # git@host:owner/repo
_COMMIT = re.compile(r"^[0-9a-f]{7,64}$")
_NAME = re.compile(r"^[\w.-]+$")


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


def web_address(url: str) -> str | None:
    """``https://HOST/OWNER/REPO`` of the repository git fetches from ``url`` when ``HOST`` is
    one whose web view :data:`WEB_VIEWS` knows (``https``, ``http``, ``ssh``, ``git`` and
    ``user@host:path`` forms; a ``.git`` suffix and a user dropped); None otherwise (a path,
    ``file://``, another host)."""
    m = _SCP.match(url) if "://" not in url else None
    if m is not None:
        host, path = m.group("host"), m.group("path")
    else:
        parts = urlsplit(url)
        if parts.scheme not in ("https", "http", "ssh", "git") or parts.query or parts.fragment:
            return None
        host, path = parts.hostname or "", parts.path
    host = host.lower().removeprefix("www.")
    if host not in WEB_VIEWS:
        return None
    names = [p for p in path.strip("/").split("/") if p]
    if names:
        names[-1] = names[-1].removesuffix(".git")
    # GitHub, Codeberg and Bitbucket: OWNER/REPO; GitLab: groups and subgroups, then REPO
    wanted = len(names) >= 2 if host == "gitlab.com" else len(names) == 2
    if not wanted or not all(_NAME.match(n) and n not in (".", "..") for n in names):
        return None
    return f"https://{host}/{'/'.join(names)}"


def file_url(url: str, commit: str, path: str = "") -> str | None:
    """Where the web view of the repository git fetches from ``url`` shows the file ``path``
    (relative to the repository's root; ``""``: its root folder, a prefix for its files) at
    ``commit`` (a full or abbreviated hash: the files as indexed, whatever the branch does
    next); None when its host is not one :data:`WEB_VIEWS` knows. Nothing is fetched."""
    home = web_address(url)
    if home is None or not _COMMIT.match(commit):
        return None
    host = urlsplit(home).hostname or ""
    shown = quote(path.lstrip("/"), safe="/")
    return f"{home}/" + WEB_VIEWS[host].format(commit=commit, path=shown)
