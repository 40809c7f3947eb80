"""What a crawl did, counted and listed: printed after the crawl and kept with the root.

Discovered URLs (by where they were found: the start page, sitemaps, llms.txt, links),
pages fetched, unchanged (304), rendered by the browser, indexed; URLs skipped by reason
(``robots``, ``scope``, ``excluded``, ``language``, ``size``, ``encoding``, ``type``,
``refused``, ``duplicate``, ``max-pages``, ``max-time``, ``max-requests``, and the pages that
are not answers: ``search``, ``index``, ``404``, ``noindex``, ``navigation``, ``empty``);
URLs that failed, by HTTP status or transport reason; URLs the fetch policy refused to
request, by reason (``scope``, ``other site``, ``private address``, ``scheme``, ``length``).
Nothing is dropped silently: a page cap that was reached says how many URLs it left, and
every list names its first URLs.

Every string a site chose (its URLs, what its server said) goes through :func:`printable`
before it is kept: control characters (a terminal's escape sequences among them) are shown
escaped and the string is cut at :data:`MAX_SHOWN` characters, so a hostile page cannot
drive the terminal the report is printed on, nor swell the report.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from cogitave.printable import MAX_SHOWN, printable

__all__ = ["MAX_SHOWN", "CrawlReport", "printable"]

SHOWN = 10
"""URLs listed per reason in the printed report (the kept report lists up to LISTED)."""
LISTED = 200


@dataclass
class CrawlReport:
    """The counts and URLs of one crawl."""

    start: str
    discovered: int = 0
    found_by: Counter[str] = field(default_factory=Counter)
    fetched: int = 0
    unchanged: int = 0
    rendered: int = 0
    markdown: int = 0
    pages: int = 0
    requests: int = 0
    retried: int = 0
    seconds: float = 0.0
    skipped: dict[str, list[str]] = field(default_factory=dict)
    failed: dict[str, list[str]] = field(default_factory=dict)
    refused: dict[str, list[str]] = field(default_factory=dict)
    """URLs the fetch policy would not request, by reason (nothing was sent)."""
    notes: list[str] = field(default_factory=list)

    def skip(self, reason: str, url: str) -> None:
        self.skipped.setdefault(printable(reason), []).append(printable(url))

    def fail(self, reason: str, url: str) -> None:
        self.failed.setdefault(printable(reason), []).append(printable(url))

    def refuse(self, reason: str, url: str) -> None:
        """A URL refused for ``reason`` (listed once per reason: a browser asks the same
        resource of every page)."""
        urls = self.refused.setdefault(printable(reason), [])
        shown = printable(url)
        if shown not in urls:
            urls.append(shown)

    def note(self, text: str) -> None:
        """A line for the reader (site strings in it are made printable here too)."""
        self.notes.append(printable(text, 4 * MAX_SHOWN))

    @property
    def failures(self) -> int:
        return sum(len(v) for v in self.failed.values())

    @property
    def rate(self) -> float:
        """Pages (fetched or unchanged) per second."""
        done = self.fetched + self.unchanged
        return done / self.seconds if self.seconds > 0 else 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "start": self.start,
            "discovered": self.discovered,
            "found_by": dict(sorted(self.found_by.items())),
            "fetched": self.fetched,
            "unchanged": self.unchanged,
            "rendered": self.rendered,
            "markdown": self.markdown,
            "pages": self.pages,
            "requests": self.requests,
            "retried": self.retried,
            "seconds": round(self.seconds, 3),
            "skipped": _listed(self.skipped),
            "failed": _listed(self.failed),
            "refused": _listed(self.refused),
            "notes": self.notes,
        }

    def to_bytes(self) -> bytes:
        return json.dumps(self.to_dict(), sort_keys=True, ensure_ascii=False).encode("utf-8")

    def format(self) -> str:
        """The report as text, a few URLs per reason."""
        found = ", ".join(f"{k} {v}" for k, v in sorted(self.found_by.items()))
        lines = [
            f"crawl of {printable(self.start)}: {self.pages} pages indexed in {self.seconds:.1f} s "
            f"({self.rate:.1f} pages/s, {self.requests} requests, {self.retried} retried)",
            f"discovered {self.discovered} URLs" + (f" ({found})" if found else ""),
            f"fetched {self.fetched}, unchanged {self.unchanged} (304), rendered "
            f"{self.rendered}, from Markdown {self.markdown}",
        ]
        tables = (("skipped", self.skipped), ("failed", self.failed), ("refused", self.refused))
        for title, table in tables:
            if not table and title == "refused":
                continue
            if not table:
                lines.append(f"{title}: none")
                continue
            total = sum(len(v) for v in table.values())
            counts = ", ".join(f"{k} {len(v)}" for k, v in sorted(table.items()))
            lines.append(f"{title} {total}: {counts}")
            for reason, urls in sorted(table.items()):
                for url in sorted(urls)[:SHOWN]:
                    lines.append(f"  {reason}: {url}")
                if len(urls) > SHOWN:
                    lines.append(f"  {reason}: ... ({len(urls) - SHOWN} more)")
        lines.extend(f"note: {n}" for n in self.notes)
        return "\n".join(lines)


def _listed(table: dict[str, list[str]]) -> dict[str, dict[str, Any]]:
    return {k: {"count": len(v), "urls": sorted(v)[:LISTED]} for k, v in sorted(table.items())}
