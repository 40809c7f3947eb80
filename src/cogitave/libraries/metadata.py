"""A package name (and version) -> what its package index says about it: where its
repository and documentation are, and which versions it has published.

Two indexes: PyPI's JSON API (``{pypi}/NAME/VERSION/json``, ``{pypi}/NAME/json`` for the
releases) and the npm registry (``{npm}/NAME/VERSION``, ``{npm}/NAME`` abbreviated for the
versions). Their base URLs come from the settings (``[libraries] pypi_url``, ``npm_url``),
overridden by ``$COGITAVE_PYPI_URL`` and ``$COGITAVE_NPM_URL``, so a private index (or a test's
local server) stands in for the public one.

Every request goes through the crawler's :class:`~cogitave.ingest.web.fetch.Fetcher` under a
:class:`~cogitave.ingest.web.policy.FetchPolicy` (http(s) only, no private address from a
public index, a request budget, timeouts, a bounded body). A response is hostile input:
the JSON must be an object, every field read is type-checked and bounded
(:data:`MAX_URL`, :data:`MAX_VERSIONS`), and a URL that is not one is dropped.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, urlsplit

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

from cogitave.errors import PackageIndexError
from cogitave.libraries.project import Dependency
from cogitave.printable import printable

PYPI_URL = "https://pypi.org/pypi"
NPM_URL = "https://registry.npmjs.org"
MAX_META_BYTES = 4 * 1024 * 1024
"""The largest metadata document of one version read."""
MAX_LIST_BYTES = 32 * 1024 * 1024
"""The largest document listing a package's versions read (PyPI's hold every release)."""
MAX_URL = 2000
MAX_VERSIONS = 20_000
"""Versions of one package considered; more are not read."""
REQUEST_TIME = 120.0
"""Seconds the requests of one look-up may take in all."""
_NPM_ABBREVIATED = "application/vnd.npm.install-v1+json; q=1.0, application/json; q=0.8"
_REPO_KEYS = ("source", "source code", "repository", "code", "github", "gitlab", "git")
_DOC_KEYS = ("documentation", "docs", "doc", "api reference", "reference")
_HOME_KEYS = ("homepage", "home", "home page", "website")
_FORGES = ("github.com", "gitlab.com", "bitbucket.org", "codeberg.org")


@dataclass(frozen=True)
class PackageMeta:
    """What an index says of one version of a package (each URL checked, else None)."""

    index: str  # the URL the metadata came from
    repository: str | None  # a git URL (``https://github.com/org/repo``, ``file://...``)
    subdir: str | None  # the package's folder in a monorepo (npm ``repository.directory``)
    documentation: str | None  # an http(s) URL of its docs site
    homepage: str | None


def index_urls(pypi: str | None = None, npm: str | None = None) -> tuple[str, str]:
    """The PyPI JSON API and npm registry base URLs: the environment's, else the given
    settings', else the public ones."""
    got = (
        os.environ.get("COGITAVE_PYPI_URL") or pypi or PYPI_URL,
        os.environ.get("COGITAVE_NPM_URL") or npm or NPM_URL,
    )
    return got[0].rstrip("/"), got[1].rstrip("/")


def meta_url(dep: Dependency, version: str, bases: tuple[str, str]) -> str:
    """The metadata URL of ``dep`` at ``version``."""
    name, ver = quote(dep.name, safe="@"), quote(version, safe="")
    if dep.ecosystem == "npm":
        return f"{bases[1]}/{name.replace('/', '%2F')}/{ver}"
    return f"{bases[0]}/{name}/{ver}/json"


def package_meta(dep: Dependency, version: str, bases: tuple[str, str]) -> PackageMeta:
    """The metadata of ``dep`` at ``version``; a :class:`PackageIndexError` saying why not
    (not found, not JSON, unreachable)."""
    url = meta_url(dep, version, bases)
    data = fetch_json(url, MAX_META_BYTES)
    if dep.ecosystem == "npm":
        return _npm_meta(url, data)
    return _pypi_meta(url, data)


def newest_matching(dep: Dependency, bases: tuple[str, str]) -> str | None:
    """The newest published version of ``dep`` its declared range allows (no range: the
    newest release; pre-releases only when the range names one), or None."""
    if dep.ecosystem == "npm":
        name = quote(dep.name, safe="@").replace("/", "%2F")
        data = fetch_json(f"{bases[1]}/{name}", MAX_LIST_BYTES, accept=_NPM_ABBREVIATED)
        versions = _keys(data.get("versions"))
        return _newest_npm(versions, dep.specifier or "*")
    data = fetch_json(f"{bases[0]}/{quote(dep.name, safe='')}/json", MAX_LIST_BYTES)
    releases = data.get("releases")
    versions = [
        v
        for v in _keys(releases)
        if isinstance(releases, dict) and not _all_yanked(releases.get(v))
    ]
    return _newest_python(versions, dep.specifier or "")


def fetch_json(url: str, max_bytes: int, *, accept: str = "application/json") -> dict[str, Any]:
    """The JSON object at ``url``, fetched under a fetch policy (see the module doc)."""
    from cogitave.ingest.web.fetch import Failure, Fetcher
    from cogitave.ingest.web.options import Manners
    from cogitave.ingest.web.policy import FetchPolicy

    async def get() -> Any:
        policy = FetchPolicy(url, None, max_time=REQUEST_TIME, max_requests=12)
        manners = Manners(concurrency=1, rate=0.0, retries=2, max_bytes=max_bytes)
        async with Fetcher(manners, policy) as fetcher:
            return await fetcher.get(url, {"Accept": accept}, kind="start", max_bytes=max_bytes)

    shown = printable(url, 200)
    res = asyncio.run(get())
    if isinstance(res, Failure):
        raise PackageIndexError(f"{shown}: {printable(str(res), 200)}")
    if res.status == 404:
        raise PackageIndexError(f"{shown}: not found (HTTP 404)", details={"status": 404})
    if not 200 <= res.status < 300:
        raise PackageIndexError(f"{shown}: HTTP {res.status}", details={"status": res.status})
    try:
        data = json.loads(res.body)
    except (ValueError, RecursionError):
        raise PackageIndexError(f"{shown}: not JSON") from None
    if not isinstance(data, dict):
        raise PackageIndexError(f"{shown}: not a JSON object")
    return data


# -- reading what an index says --------------------------------------------------------------
def _pypi_meta(url: str, data: dict[str, Any]) -> PackageMeta:
    info = data.get("info")
    if not isinstance(info, dict):
        raise PackageIndexError(f"{printable(url, 200)}: no 'info' object")
    urls: dict[str, str] = {}  # label -> an http(s) URL
    repos: dict[str, str] = {}  # label -> a git URL (a repository may be fetched otherwise)
    project_urls = info.get("project_urls")
    if isinstance(project_urls, dict):
        for k, v in list(project_urls.items())[:64]:
            if not isinstance(k, str) or len(k) > 100:
                continue
            label = k.strip().lower()
            if (u := _http_url(v)) is not None:
                urls.setdefault(label, u)
            if label in _REPO_KEYS and (g := _git_url(v)) is not None:
                repos.setdefault(label, g)
    repo = next((repos[k] for k in _REPO_KEYS if k in repos), None)
    docs = next((urls[k] for k in _DOC_KEYS if k in urls), None) or _http_url(info.get("docs_url"))
    home = next((urls[k] for k in _HOME_KEYS if k in urls), None) or _http_url(
        info.get("home_page")
    )
    if repo is None:
        repo = next((u for u in urls.values() if _forge_repo(u)), None)
    if repo is None and home is not None and _forge_repo(home):
        repo = home
    return PackageMeta(url, _git_url(repo) if repo else None, None, docs, home)


def _npm_meta(url: str, data: dict[str, Any]) -> PackageMeta:
    repo, subdir = data.get("repository"), None
    if isinstance(repo, dict):
        d = repo.get("directory")
        if isinstance(d, str) and 0 < len(d) <= 300 and ".." not in d.split("/"):
            subdir = d.strip("/") or None
        repo = repo.get("url")
    home = _http_url(data.get("homepage"))
    git = _git_url(repo) if isinstance(repo, str) else None
    if git is None and home is not None and _forge_repo(home):
        git = _git_url(home)
    docs = home if home is not None and not _forge_repo(home) else None
    return PackageMeta(url, git, subdir, docs, home)


def _keys(value: Any) -> list[str]:
    if not isinstance(value, dict):
        return []
    return [k for k in list(value)[:MAX_VERSIONS] if isinstance(k, str) and 0 < len(k) <= 100]


def _all_yanked(files: Any) -> bool:
    """A release every file of which is yanked (an empty release has none to install)."""
    if not isinstance(files, list) or not files:
        return True
    return all(isinstance(f, dict) and f.get("yanked") is True for f in files[:1000])


def _newest_python(versions: list[str], specifier: str) -> str | None:
    try:
        spec = SpecifierSet(specifier)
    except InvalidSpecifier:
        return None
    parsed: list[tuple[Version, str]] = []
    for v in versions:
        try:
            parsed.append((Version(v), v))
        except InvalidVersion:
            continue
    allowed = set(spec.filter([p for p, _ in parsed]))
    fits = [(p, v) for p, v in parsed if p in allowed]
    return max(fits)[1] if fits else None


def _newest_npm(versions: list[str], specifier: str) -> str | None:
    import nodesemver

    try:
        got = nodesemver.max_satisfying(versions, specifier, loose=True)
    except (ValueError, TypeError, AttributeError, IndexError):
        return None
    return str(got) if got else None


def _http_url(value: Any) -> str | None:
    """An http(s) URL with a host, at most :data:`MAX_URL` characters, printable."""
    if not isinstance(value, str):
        return None
    u = value.strip()
    if not u or len(u) > MAX_URL or not u.isprintable() or " " in u:
        return None
    try:
        parts = urlsplit(u)
    except ValueError:
        return None
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        return None
    return u


def _forge_repo(url: str) -> bool:
    """A repository page on a code forge (``https://github.com/org/repo[/...]``)."""
    parts = urlsplit(url)
    host = (parts.hostname or "").lower().removeprefix("www.")
    return host in _FORGES and len([p for p in parts.path.split("/") if p]) >= 2


_SCP = re.compile(r"^git@([A-Za-z0-9.-]+):([A-Za-z0-9._/-]+)$")
_SHORT = re.compile(r"^(?:(github|gitlab|bitbucket):)?([A-Za-z0-9._-]+/[A-Za-z0-9._-]+)$")


def git_url(value: Any) -> str | None:
    """A repository the metadata names, as a URL git fetches (see :func:`_git_url`)."""
    return _git_url(value)


def _git_url(value: Any) -> str | None:
    """A repository URL as git fetches it: ``git+`` dropped, ``git://`` and scp-like forms of
    a forge as ``https://``, npm's ``github:org/repo`` and ``org/repo``, a forge's page
    (``/tree/main/docs``) cut to the repository; ``file://`` kept (the caller decides
    whether it may be used). None: not a repository URL."""
    if not isinstance(value, str):
        return None
    u = value.strip()
    if not u or len(u) > MAX_URL or not u.isprintable() or " " in u:
        return None
    u = u.removeprefix("git+")
    if m := _SCP.match(u):
        u = f"https://{m.group(1)}/{m.group(2)}"
    elif m := _SHORT.match(u):
        host = {"gitlab": "gitlab.com", "bitbucket": "bitbucket.org"}.get(m.group(1) or "")
        u = f"https://{host or 'github.com'}/{m.group(2)}"
    try:
        parts = urlsplit(u)
    except ValueError:
        return None
    scheme = parts.scheme.lower()
    if scheme == "file":
        return u if parts.path else None
    if scheme == "git":
        scheme = "https"
    if scheme not in ("http", "https", "ssh") or not parts.hostname:
        return None
    path = parts.path
    host = (parts.hostname or "").lower().removeprefix("www.")
    if host in _FORGES:
        segs = [p for p in path.split("/") if p][:2]
        if len(segs) < 2:
            return None
        path = "/" + "/".join(segs)
    path = path.removesuffix("/").removesuffix(".git")
    return f"{scheme}://{parts.netloc}{path}"
