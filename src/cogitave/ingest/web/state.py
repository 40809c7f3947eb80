"""What a crawl keeps for the next one: per URL its validators and what the page gave.

:class:`WebPage` is a page as the graph builder needs it (title, Markdown, API objects,
breadcrumb, previous/next), already extracted, so a page that answers 304 Not Modified is
rebuilt from here without its body being fetched or converted again. :class:`PageRecord`
adds the ``ETag``/``Last-Modified`` validators and the page's links (the crawl follows a
304 page's links as it would the page's). :class:`CrawlState` is every record of a crawl,
serialised deterministically (sorted JSON, gzip without a timestamp): the same site gives the
same bytes, so an unchanged site publishes no new root.
"""

from __future__ import annotations

import gzip
import io
import json
from dataclasses import asdict, dataclass, field
from typing import Any

from cogitave.ingest.web.markdown import ApiFound

STATE_FORMAT = 1
MAX_STATE_BYTES = 1 << 30  # decompressed: a state past this is not read (a fresh crawl)


@dataclass(frozen=True)
class WebPage:
    """A crawled page, ready for the graph (URLs are crawled ones, normalised)."""

    url: str
    title: str
    markdown: str
    generator: str = ""
    api: tuple[ApiFound, ...] = ()
    breadcrumb: tuple[tuple[str, str | None], ...] = ()
    prev: str | None = None
    next: str | None = None
    source: str = "html"
    """``html``, ``markdown`` (the site's Markdown alternate) or ``rendered`` (a browser's)."""
    description: str = ""
    keywords: str = ""

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["api"] = [asdict(a) for a in self.api]
        d["breadcrumb"] = [list(c) for c in self.breadcrumb]
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> WebPage:
        return cls(
            url=d["url"],
            title=d["title"],
            markdown=d["markdown"],
            generator=d.get("generator", ""),
            api=tuple(ApiFound(**a) for a in d.get("api", ())),
            breadcrumb=tuple((c[0], c[1]) for c in d.get("breadcrumb", ())),
            prev=d.get("prev"),
            next=d.get("next"),
            source=d.get("source", "html"),
            description=d.get("description", ""),
            keywords=d.get("keywords", ""),
        )


@dataclass(frozen=True)
class PageRecord:
    """One URL's outcome: validators, links to follow, and the page (None: fetched but not
    an answer, ``skip`` says why)."""

    url: str
    etag: str | None = None
    last_modified: str | None = None
    links: tuple[str, ...] = ()
    page: WebPage | None = None
    skip: str | None = None

    def conditional(self) -> dict[str, str]:
        """The headers that ask the server whether the page changed."""
        h: dict[str, str] = {}
        if self.etag:
            h["If-None-Match"] = self.etag
        if self.last_modified:
            h["If-Modified-Since"] = self.last_modified
        return h

    def to_dict(self) -> dict[str, Any]:
        return {
            "url": self.url,
            "etag": self.etag,
            "last_modified": self.last_modified,
            "links": list(self.links),
            "page": self.page.to_dict() if self.page else None,
            "skip": self.skip,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> PageRecord:
        page = d.get("page")
        return cls(
            d["url"],
            d.get("etag"),
            d.get("last_modified"),
            tuple(d.get("links", ())),
            WebPage.from_dict(page) if page else None,
            d.get("skip"),
        )


@dataclass
class CrawlState:
    """Every record of one crawl of ``start``."""

    start: str
    records: dict[str, PageRecord] = field(default_factory=dict)
    markdown_twins: str = ""
    """How the site names its pages' Markdown (``""``: it does not; see the crawl)."""

    def to_bytes(self) -> bytes:
        body = {
            "format": STATE_FORMAT,
            "start": self.start,
            "markdown_twins": self.markdown_twins,
            "records": [self.records[u].to_dict() for u in sorted(self.records)],
        }
        data = json.dumps(body, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
        return gzip.compress(data.encode("utf-8"), mtime=0)

    @classmethod
    def from_bytes(cls, data: bytes | None) -> CrawlState | None:
        """The state in ``data``; None for none, or one this version does not read."""
        if not data:
            return None
        try:
            with gzip.GzipFile(fileobj=io.BytesIO(data)) as f:
                raw = f.read(MAX_STATE_BYTES + 1)
            if len(raw) > MAX_STATE_BYTES:
                return None
            body = json.loads(raw)
        except (OSError, ValueError, EOFError):
            return None
        if not isinstance(body, dict) or body.get("format") != STATE_FORMAT:
            return None
        try:
            records = [PageRecord.from_dict(r) for r in body.get("records", ())]
        except (KeyError, TypeError):
            return None
        state = cls(str(body.get("start", "")), {r.url: r for r in records})
        state.markdown_twins = str(body.get("markdown_twins", ""))
        return state
