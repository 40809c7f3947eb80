"""The one rule every network request of a crawl obeys: what it may reach, how much, how long.

A site is untrusted input: its pages, robots.txt, sitemaps, ``llms.txt`` and redirects name
URLs, and whatever the crawl fetches from them may be indexed and served back by search. So
every request of a crawl, the first hop included, asks the crawl's :class:`FetchPolicy`
before a byte is sent, and a refused one is recorded with its reason (the crawl report lists
them). What a request may reach depends on what it is for (its *kind*):

- ``start``: the start page the user named. Its redirects stay on the start host, or in the
  ``--scope`` given.
- ``page``: a page the crawl queued (a link, a sitemap entry, an ``llms.txt`` link) and each
  of its redirect hops: within the crawl's :class:`~cogitave.ingest.web.scope.Scope`
  (prefixes, globs, languages).
- ``site``: a file the site names or serves beside its pages (robots.txt, the sitemaps a
  robots.txt or a sitemap index names, ``llms.txt``, ``objects.inv``, a page's Markdown
  alternate and its twins): **same-site** only, that is on the start page's host (and port)
  or one of the scope's prefixes', any path. A site may make the crawl read its own files,
  never another host's.

Whatever the kind: only ``http``/``https``; a URL at most :data:`MAX_URL` characters; and
never, from a public start host, a host that is or resolves to a private, loopback,
link-local or otherwise non-public address (every address it resolves to is checked; a crawl
started on ``127.0.0.1`` on purpose may stay there). :meth:`FetchPolicy.refusal` is that rule
for ``site`` as a plain synchronous call, safe from another thread: what a page rendered in
a browser may load (any path of the crawl's hosts, nothing else). The addresses are checked
when a request is decided; the connection resolves the name again, so a DNS answer that
changes in between (rebinding) is not covered.

Besides where, how much: each request counts against a crawl-wide **request budget** and a
**deadline** (``--max-time``): past either, no request starts (:meth:`FetchPolicy.spend`
says why), and the crawl finishes with what it has read. Bodies are bounded by the fetcher
while they decode (:mod:`~cogitave.ingest.web.fetch`).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from urllib.parse import urlsplit

from cogitave.ingest.web.scope import Resolver, Scope, addresses, is_private

MAX_URL = 8192
"""The longest URL the crawl requests (a longer one is refused, ``length``)."""
KINDS = ("start", "page", "site")
SCHEMES = ("http", "https")


def _now() -> float:
    """The clock deadlines are read on (tests replace it to move time without waiting)."""
    return time.monotonic()


class FetchPolicy:
    """Where a crawl's requests may go and how many and how long they may take (see the
    module doc). ``scope`` is the crawl's, kept current by the crawl (:attr:`scope`);
    ``given``: the scope was given (``--scope``), so the start page may redirect within it.
    ``scope=None``: no scope (only the scheme, length and address rules)."""

    def __init__(
        self,
        start: str,
        scope: Scope | None,
        *,
        given: bool = False,
        resolve: Resolver = addresses,
        max_time: float | None = None,
        max_requests: int | None = None,
    ) -> None:
        self.start = start
        self.start_host = urlsplit(start).hostname or ""
        self.scope = scope
        self.given = given
        self.resolve = resolve
        self.max_time = max_time
        self.max_requests = max_requests
        self.began = _now()
        self.requests = 0
        self.refused: dict[str, list[str]] = {}
        """Reason -> the URLs refused for it, in the order asked."""
        self.spent: str | None = None
        """``max-time`` or ``max-requests`` once the crawl ran out of either."""
        self._lock = threading.Lock()
        self._private: dict[str, bool] = {}
        self.public_start = not self._is_private(self.start_host)

    # -- where ---------------------------------------------------------------------------
    def refusal(self, url: str) -> str | None:
        """Why ``url`` may not be requested for the site (``scheme``, ``length``, ``other
        site``, ``private address``), or None: a file the site serves or a resource one of
        its pages needs, on one of the crawl's hosts, any path. Synchronous and safe from
        any thread (a browser's filtering proxy asks it for every request); records
        nothing."""
        return self._refusal(url, "site")

    def check(self, url: str, kind: str = "page", *, first: bool = True) -> str | None:
        """Why the crawl may not request ``url`` for ``kind`` (``first``: the URL the crawl
        chose, not a redirect hop), or None; a refusal is recorded under its reason."""
        why = self._refusal(url, kind, first=first)
        if why is not None:
            with self._lock:
                self.refused.setdefault(why, []).append(url)
        return why

    def _refusal(self, url: str, kind: str, *, first: bool = False) -> str | None:
        if kind not in KINDS:
            raise ValueError(f"unknown request kind {kind!r}")
        if len(url) > MAX_URL:
            return "length"
        try:
            parts = urlsplit(url)
            host = parts.hostname or ""
            netloc = parts.netloc.lower()
        except ValueError:
            return "scheme"
        if parts.scheme.lower() not in SCHEMES:
            return "scheme"
        if not host:
            return "scheme"
        if self.public_start and self._is_private(host):
            return "private address"
        scope = self.scope
        if scope is None or (kind == "start" and first):
            return None
        if kind == "start":
            if self.given:
                return scope.why_not(url)
            return None if netloc == urlsplit(self.start).netloc.lower() else "other site"
        if kind == "page":
            return scope.why_not(url)
        return None if netloc in self.hosts() else "other site"

    def hosts(self) -> set[str]:
        """The crawl's hosts (``host[:port]``, as URLs name them): the start page's and its
        scope's prefixes'."""
        scope = self.scope
        prefixes = scope.prefixes if scope is not None else ()
        return {urlsplit(u).netloc.lower() for u in (self.start, *prefixes)}

    def _is_private(self, host: str) -> bool:
        key = host.lower()
        with self._lock:
            known = self._private.get(key)
        if known is None:
            known = is_private(key, self.resolve)
            with self._lock:
                self._private[key] = known
        return known

    # -- how many, how long --------------------------------------------------------------
    def remaining(self) -> float | None:
        """Seconds left before the deadline (None: no deadline)."""
        if self.max_time is None:
            return None
        return self.max_time - (_now() - self.began)

    def expired(self) -> str | None:
        """``max-time`` past the deadline, ``max-requests`` past the budget, else None."""
        if self.spent is None:
            left = self.remaining()
            if left is not None and left <= 0:
                self.spent = "max-time"
            elif self.max_requests is not None and self.requests >= self.max_requests:
                self.spent = "max-requests"
        return self.spent

    def spend(self) -> str | None:
        """Count one request about to be sent; past the deadline or the budget, why it may
        not be (``max-time``, ``max-requests``), counting nothing."""
        why = self.expired()
        if why is None:
            with self._lock:
                self.requests += 1
        return why


Allow = Callable[[str], str | None]
"""A URL -> why it may not be requested, or None (:meth:`FetchPolicy.refusal`)."""
