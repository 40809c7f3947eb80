"""Which URLs a crawl may fetch, and the names a crawled page gets.

A URL is normalised once (:func:`normalize`: scheme and host lower-cased, default port and
fragment dropped, ``/x/index.html`` -> ``/x/``, dot segments resolved), then tested against
the :class:`Scope`: by default the start page's host and the folder of its path
(``https://docs.python.org/3/`` -> everything under ``/3/``); ``--scope`` URL prefixes
replace that (wider: ``https://docs.python.org/``; narrower: ``.../3/library/``; another
host). Inside the scope, ``--include``/``--exclude`` globs are matched on the path below the
prefix, and other languages' pages (a ``/fr/``-style first folder, a page ``hreflang`` names)
are left out unless asked for.

A redirect is an untrusted instruction from the site: :func:`redirect_refusal` refuses one to
a scheme other than http(s) (``file://``, ``ftp://``, ``javascript:``), and one from a public
host to a private, loopback or link-local address (a crawl started on ``127.0.0.1`` on
purpose may stay there). Whether it may leave the scope is the scope's answer. The crawl
applies these rules, :func:`is_private` and the scope to every request it sends, not only to
redirects (:mod:`~cogitave.ingest.web.policy`).
"""

from __future__ import annotations

import ipaddress
import posixpath
import re
import socket
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from urllib.parse import urljoin, urlsplit, urlunsplit

from cogitave.errors import InputError
from cogitave.ingest.globs import Matcher, compile_globs

_DEFAULT_PORTS = {"http": 80, "https": 443}
# ISO 639-1 codes a docs site puts first in a path for its translations (``/fr/``,
# ``/pt-br/``, ``/zh-hans/``). Two-letter folders that usually mean something else in docs
# (``go``, ``js``, ``ui``, ``id``, ``io``, ``os``...) are not among them.
_LANGUAGES = frozenset(
    "af am ar az be bg bn bs ca cs cy da de el en eo es et eu fa fi fr ga gl gu he hi hr "  # noqa: SIM905
    "hu hy is it ja ka kk km kn ko ky lo lt lv mk ml mn mr ms my nb ne nl nn no pa pl ps "
    "pt ro ru si sk sl sq sr sv sw ta te tg th tk tl tr uk ur uz vi yo zh zu".split()
)
_LANG_SEGMENT = re.compile(r"^(?P<code>[a-z]{2})(?:[-_](?:[a-z]{2}|[a-z]{4}|\d{3}))?$", re.I)
# Asset files a link may name: never fetched as pages.
ASSET_SUFFIXES = frozenset(
    ".png .jpg .jpeg .gif .svg .webp .ico .avif .bmp .pdf .zip .gz .tgz .bz2 .xz .tar "  # noqa: SIM905
    ".whl .exe .dmg .mp4 .webm .mp3 .wav .ogg .css .js .mjs .map .woff .woff2 .ttf .eot "
    ".json .xml .rss .atom .csv .epub .inv .txt".split()
)


def normalize(url: str, base: str | None = None) -> str | None:
    """``url`` (relative to ``base`` when given) as one canonical http(s) URL: no fragment,
    lower-case scheme and host, no default port, ``index.html`` folded into its folder; None
    for anything that is not an http(s) URL."""
    try:
        full = urljoin(base, url.strip()) if base else url.strip()
        parts = urlsplit(full)
        port = parts.port
    except ValueError:
        return None
    scheme = parts.scheme.lower()
    if scheme not in _DEFAULT_PORTS or not parts.hostname:
        return None
    host = parts.hostname.lower()
    if ":" in host:
        host = f"[{host}]"
    if port is not None and port != _DEFAULT_PORTS[scheme]:
        host = f"{host}:{port}"
    path = parts.path or "/"
    trailing = path.endswith("/")
    path = posixpath.normpath(path) if path != "/" else "/"
    path = "/" + path.lstrip("/")
    if trailing and not path.endswith("/"):
        path += "/"
    for index in ("index.html", "index.htm"):
        if path.endswith("/" + index):
            path = path[: -len(index)]
    return urlunsplit((scheme, host, path, parts.query, ""))


def folder_of(url: str) -> str:
    """The folder a URL's path is in: ``https://h/3/x.html`` -> ``https://h/3/``."""
    parts = urlsplit(url)
    path = parts.path if parts.path.endswith("/") else posixpath.dirname(parts.path) + "/"
    return urlunsplit((parts.scheme, parts.netloc, path.replace("//", "/"), "", ""))


def is_asset(url: str) -> bool:
    """Whether the URL names a file that is not a page (an image, a stylesheet, an archive)."""
    suffix = posixpath.splitext(urlsplit(url).path)[1].lower()
    return suffix in ASSET_SUFFIXES


def language_of(url: str, prefix: str) -> str | None:
    """The language a ``/fr/``-style first folder gives the URL (below the site root, or
    below the scope's ``prefix``), or None."""
    path = urlsplit(url).path
    below = urlsplit(prefix).path
    for rest in (path, path[len(below) :] if path.startswith(below) else ""):
        first, slash, _ = rest.lstrip("/").partition("/")
        m = _LANG_SEGMENT.match(first)
        if slash and m and m.group("code").lower() in _LANGUAGES:  # a folder, not a page
            return m.group("code").lower()
    return None


def primary_language(tag: str | None) -> str | None:
    """``en-US`` -> ``en``; None for no tag."""
    if not tag:
        return None
    code = re.split(r"[-_]", tag.strip().lower(), maxsplit=1)[0]
    return code or None


@dataclass(frozen=True)
class Scope:
    """The URLs one crawl may fetch (see the module doc)."""

    prefixes: tuple[str, ...]
    include: tuple[Matcher, ...] = ()
    exclude: tuple[Matcher, ...] = ()
    language: str | None = None
    """The start page's language: pages of another one are skipped (None: no check)."""
    other_languages: bool = False
    """Crawl other languages' pages too."""
    hreflang_others: set[str] = field(default_factory=set, compare=False)
    """URLs a page's ``hreflang`` alternates name in another language (filled while
    crawling)."""

    @classmethod
    def of(
        cls,
        start: str,
        scopes: Sequence[str] = (),
        include: Sequence[str] = (),
        exclude: Sequence[str] = (),
        *,
        other_languages: bool = False,
    ) -> Scope:
        """The scope of a crawl from ``start`` (normalised): ``scopes`` given, else the
        folder of the start page."""
        prefixes: list[str] = []
        for s in scopes:
            n = normalize(s)
            if n is None:
                raise InputError(f"--scope {s!r} is not an http(s) URL")
            prefixes.append(n if n.endswith("/") else folder_of(n))
        return cls(
            tuple(prefixes) or (folder_of(start),),
            tuple(compile_globs(include, "--include")),
            tuple(compile_globs(exclude, "--exclude")),
            other_languages=other_languages,
        )

    def rebased(self, start: str, given: bool) -> Scope:
        """The scope after the start page redirected to ``start``: a default scope follows it
        (``/`` -> ``/3/`` gives ``/3/``); one given stays."""
        if given:
            return self
        return Scope((folder_of(start),), self.include, self.exclude, self.language,
                     self.other_languages, self.hreflang_others)  # fmt: skip

    def with_language(self, language: str | None) -> Scope:
        return Scope(self.prefixes, self.include, self.exclude, language,
                     self.other_languages, self.hreflang_others)  # fmt: skip

    @property
    def prefix(self) -> str:
        """The first prefix: what page names and URLs are relative to."""
        return self.prefixes[0]

    def holds(self, url: str) -> bool:
        """Whether ``url`` (normalised) is under one of the prefixes."""
        return any(url.startswith(p) or url + "/" == p for p in self.prefixes)

    def why_not(self, url: str) -> str | None:
        """The reason ``url`` (normalised) is not crawled (``scope``, ``excluded``,
        ``language``), or None when it is."""
        if not self.holds(url):
            return "scope"
        rel = self.relative(url)
        if self.include and not any(m.fullmatch(rel) for m in self.include):
            return "excluded"
        if any(m.fullmatch(rel) for m in self.exclude):
            return "excluded"
        if not self.other_languages:
            if url in self.hreflang_others:
                return "language"
            code = language_of(url, self.prefix)
            if code is not None and code != (self.language or "en"):
                return "language"
        return None

    def relative(self, url: str) -> str:
        """The path of ``url`` below the prefix holding it (``library/pathlib.html``)."""
        for p in self.prefixes:
            if url.startswith(p):
                return url[len(p) :].split("?", 1)[0]
        return urlsplit(url).path.lstrip("/")


# -- names --------------------------------------------------------------------------------
@dataclass(frozen=True)
class Naming:
    """How a crawl names URLs: the crawled form of a link (absolute, normalised, no query; a
    public URL under ``base_url`` mapped back to the crawled prefix), and the public form a
    page's Markdown shows. Plain data, so a worker process can write a page's links."""

    prefixes: tuple[str, ...]
    base_url: str | None = None

    @property
    def prefix(self) -> str:
        return self.prefixes[0]

    def canon(self, href: str | None, base: str) -> str | None:
        """A link as the crawl names it (None: not an http(s) page)."""
        if not href or href.startswith(("#", "mailto:", "javascript:", "tel:", "data:")):
            return None
        url = normalize(href, base)
        if url is None:
            return None
        parts = urlsplit(url)
        url = urlunsplit((parts.scheme, parts.netloc, parts.path, "", ""))
        pub = normalize(self.base_url) if self.base_url else None
        if pub is not None:
            pub = pub if pub.endswith("/") else pub + "/"
            if url.startswith(pub) or url + "/" == pub:
                url = self.prefix + url[len(pub) :]
        return url

    def public(self, url: str) -> str:
        """The URL readers know a crawled URL by."""
        if self.base_url and url.startswith(self.prefix):
            base = self.base_url if self.base_url.endswith("/") else self.base_url + "/"
            return base + url[len(self.prefix) :]
        return url

    def writer(self, page_url: str) -> LinkWriter:
        return LinkWriter(self, page_url)


@dataclass(frozen=True)
class LinkWriter:
    """How a link of the page at ``page_url`` is written in its Markdown: absolute, one into
    the scope at its public URL, its fragment kept (a link to an API object stays as
    written in a node's content, so it must be a URL a reader can open)."""

    naming: Naming
    page_url: str

    def __call__(self, href: str) -> str | None:
        href = href.strip()
        if href.startswith("#"):
            return href if len(href) > 1 else None
        target = self.naming.canon(href, self.page_url)
        if target is None:
            return None
        fragment = urlsplit(urljoin(self.page_url, href)).fragment
        if any(target.startswith(p) or target + "/" == p for p in self.naming.prefixes):
            target = self.naming.public(target)
        return target + (f"#{fragment}" if fragment else "")


# -- redirects ----------------------------------------------------------------------------
Resolver = Callable[[str], list[str]]


def addresses(host: str) -> list[str]:
    """The IP addresses ``host`` resolves to (none when it does not resolve)."""
    try:
        infos = socket.getaddrinfo(host, None, proto=socket.IPPROTO_TCP)
    except (OSError, UnicodeError):
        return []
    return sorted({str(info[4][0]) for info in infos})


def is_private(host: str, resolve: Resolver = addresses) -> bool:
    """Whether ``host`` is, or resolves to, a private, loopback, link-local or otherwise
    non-public address."""
    name = host.strip("[]")
    try:
        ips = [ipaddress.ip_address(name)]
    except ValueError:
        if name.lower() == "localhost" or name.lower().endswith(".localhost"):
            return True
        ips = []
        for a in resolve(name):
            try:
                ips.append(ipaddress.ip_address(a.split("%", 1)[0]))
            except ValueError:
                continue
    return any(not ip.is_global for ip in ips)


def redirect_refusal(start_host: str, target: str, resolve: Resolver = addresses) -> str | None:
    """Why a redirect (from a crawl started at ``start_host``) to ``target`` is refused, or
    None when it may be followed: only http(s), and never from a public start host into a
    private address."""
    scheme = urlsplit(target).scheme.lower()
    if scheme not in _DEFAULT_PORTS:
        return f"a redirect to a {scheme or 'relative'}: URL"
    host = urlsplit(target).hostname or ""
    if not host:
        return "a redirect without a host"
    if not is_private(start_host, resolve) and is_private(host, resolve):
        return f"a redirect from a public host to a private address ({host})"
    return None
