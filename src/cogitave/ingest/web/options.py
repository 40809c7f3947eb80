"""How a site is crawled, as plain values the command line fills in (nothing here fetches,
so reading the options costs no import of the crawler)."""

from __future__ import annotations

from dataclasses import dataclass, field

DEFAULT_MAX_PAGES = 10_000
DEFAULT_MAX_FAILURES = "10%"
DEFAULT_MAX_TIME = 3600.0
"""Seconds a whole crawl may take before it stops queuing and finishes with what it read."""
REQUESTS_PER_PAGE = 4
"""The request budget per page the crawl may fetch (a page, its retries, its Markdown)."""
SITE_REQUESTS = 200
"""Requests for the site's own files on top (robots.txt per host, sitemaps, llms.txt)."""


@dataclass(frozen=True)
class Manners:
    """How politely and how boundedly a crawl fetches."""

    concurrency: int = 4
    """Requests in flight per host."""
    rate: float = 10.0
    """Requests started per second per host (0: no limit)."""
    timeout: float = 20.0
    """Seconds to connect, and between two reads of a response."""
    deadline: float = 60.0
    """Seconds one request may take in all (a server trickling bytes is cut off)."""
    retries: int = 3
    """Attempts after the first, on 429 and 5xx (a timeout or a dropped connection is tried
    once more at most, a refused connection never)."""
    backoff: float = 0.5
    """Seconds before the first retry; doubled each time."""
    max_wait: float = 60.0
    """The longest ``Retry-After`` honoured (a longer one waits this long)."""
    max_bytes: int = 10 * 1024 * 1024
    """The largest body read (a page, a sitemap)."""
    max_redirects: int = 10


@dataclass(frozen=True)
class CrawlOptions:
    """What to crawl and how (the command line's ``index URL`` options)."""

    scopes: tuple[str, ...] = ()
    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    max_pages: int = DEFAULT_MAX_PAGES
    max_failures: str = DEFAULT_MAX_FAILURES
    render: str = "auto"
    languages: bool = False
    """Crawl other languages' pages too."""
    base_url: str | None = None
    """The public URL the crawled prefix is published at (hits carry it)."""
    manners: Manners = field(default_factory=Manners)
    max_time: float = DEFAULT_MAX_TIME
    """Seconds the whole crawl may take (``--max-time``)."""
    max_requests: int | None = None
    """Requests the whole crawl may send (None: :attr:`request_budget`'s default)."""

    @property
    def request_budget(self) -> int:
        """The most requests the crawl sends: ``max_requests``, else
        :data:`REQUESTS_PER_PAGE` per page it may fetch and :data:`SITE_REQUESTS`."""
        if self.max_requests is not None:
            return self.max_requests
        return REQUESTS_PER_PAGE * self.max_pages + SITE_REQUESTS
