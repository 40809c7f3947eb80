"""A start URL -> the site's pages, extracted, with a report and the state for next time.

:func:`crawl_site` fetches the start page first: an unreachable host, an error status, a page
that is not HTML, a redirect loop or a robots.txt that forbids it is one
:class:`~cogitave.errors.IngestError` (bad input: nothing is published). A start page that
redirects moves a default scope with it (``/`` -> ``/3/``). Then the site's own lists are
read (robots.txt's sitemaps, ``sitemap.xml`` and sitemap indexes, ``llms.txt`` and
``llms-full.txt``, Sphinx's ``objects.inv``), and every page's links are followed, breadth
first, by a few workers sharing the per-host gates of the :class:`~cogitave.ingest.web.fetch.
Fetcher`. For each URL in scope: robots.txt asked; a conditional request when the previous
crawl kept the page (a 304 reuses it, links included); the page extracted
(:mod:`~cogitave.ingest.web.extract`), rendered by the system's Chromium first when it is an
empty JavaScript shell (``render``), its Markdown alternate read when the site offers one;
other languages, non-answers, sizes and types skipped and counted. A page that fails
transiently (5xx, timeout) keeps its previous version; one that is gone (404, 410) or no
longer linked from anywhere is dropped, so a re-sync deletes it.

Every request, the start page's and the site files' included, goes through the crawl's
:class:`~cogitave.ingest.web.policy.FetchPolicy` before it is sent: pages in the scope, the
site's files on its own hosts, no private address from a public start; what it refused is in
the report. Past ``--max-time`` or the request budget the crawl stops queuing and finishes
with the pages it read (said in the report; not a failure). Past ``max_failures`` failed URLs
(default 10% of those fetched) the crawl is a :class:`~cogitave.errors.CrawlFailedError`
carrying the report: nothing is published.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import os
import re
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, replace
from typing import Any
from urllib.parse import urlsplit

from protego import Protego

from cogitave.errors import CrawlFailedError, IngestError, InputError
from cogitave.ingest.web.discover import MAX_SITEMAPS, llms_links, robots_of, sitemap_urls
from cogitave.ingest.web.extract import Extracted, extract
from cogitave.ingest.web.fetch import Failure, Fetcher, Response, user_agent
from cogitave.ingest.web.inventory import Inventory, parse_inventory
from cogitave.ingest.web.options import CrawlOptions
from cogitave.ingest.web.policy import FetchPolicy
from cogitave.ingest.web.render import RENDER_MODES, RenderError, find_browser, render
from cogitave.ingest.web.report import CrawlReport, printable
from cogitave.ingest.web.scope import (
    Naming,
    Resolver,
    Scope,
    addresses,
    is_asset,
    normalize,
    primary_language,
)
from cogitave.ingest.web.state import CrawlState, PageRecord, WebPage

HTML_TYPES = frozenset({"text/html", "application/xhtml+xml", ""})
MARKDOWN_TYPES = frozenset({"text/markdown", "text/x-markdown", "text/plain"})
POOL_AFTER = 50
"""Pages extracted in the crawl's own process before worker processes take over."""
MAX_RENDERS = 2
"""Browser renders at once (each is a Chromium process)."""
Progress = Callable[[str, int, int], None]


@dataclass
class Crawl:
    """What a crawl gives the graph and the next crawl."""

    start: str
    scope: Scope
    pages: list[WebPage]
    report: CrawlReport
    state: CrawlState
    inventory: Inventory | None = None
    site_name: str | None = None
    base_url: str | None = None

    @property
    def public_prefix(self) -> str:
        """The URL the crawled prefix is published at."""
        return self.base_url or self.scope.prefix


def failure_limit(spec: str, attempted: int) -> float:
    """The most failures ``--max-failures`` allows: ``N`` URLs, or ``P%`` of those tried."""
    text = spec.strip()
    try:
        if text.endswith("%"):
            share = float(text[:-1])
            if not 0 <= share <= 100:
                raise ValueError
            return share / 100 * attempted
        n = int(text)
        if n < 0:
            raise ValueError
        return float(n)
    except ValueError:
        raise InputError(f"--max-failures must be a count or a percentage, not {spec!r}") from None


FetcherFactory = Callable[[FetchPolicy], Any]
"""The crawl's policy -> a fetcher (an async context manager with ``get``, ``requests``,
``retried`` and ``delays`` as :class:`~cogitave.ingest.web.fetch.Fetcher` has)."""


def crawl_site(
    start: str,
    options: CrawlOptions,
    previous: CrawlState | None = None,
    *,
    progress: Progress | None = None,
    resolve: Resolver = addresses,
    fetcher: FetcherFactory | None = None,
) -> Crawl:
    """Crawl the site at ``start`` (see the module doc); ``previous``: the last crawl's
    state, for conditional requests; ``fetcher``: what answers the requests instead of the
    network (a built site on disk, :mod:`~cogitave.ingest.web.folder`)."""
    if options.render not in RENDER_MODES:
        modes = ", ".join(RENDER_MODES)
        raise InputError(f"--render must be one of {modes}, not {options.render!r}")
    failure_limit(options.max_failures, 0)  # a bad value fails before any request
    if options.max_pages < 1:
        raise InputError("--max-pages must be at least 1")
    if not options.max_time > 0:
        raise InputError("--max-time must be more than 0 seconds")
    crawler = _Crawler(start, options, previous, progress, resolve, fetcher)
    return asyncio.run(crawler.run())


class _Crawler:
    """One crawl's state while it runs."""

    def __init__(
        self,
        text: str,
        options: CrawlOptions,
        previous: CrawlState | None,
        progress: Progress | None,
        resolve: Resolver,
        fetcher: FetcherFactory | None = None,
    ) -> None:
        self.fetcher = fetcher
        start = normalize(text)
        if start is None:
            raise InputError(f"not an http(s) URL: {printable(text)}")
        self.text = text
        self.start = start
        self.o = options
        self.previous = previous if previous and previous.start == start else None
        self.progress = progress or (lambda stage, done, total: None)
        self.resolve = resolve
        scope = Scope.of(start, options.scopes, options.include, options.exclude,
                         other_languages=options.languages)  # fmt: skip
        self.policy = FetchPolicy(start, scope, given=bool(options.scopes), resolve=resolve,
                                  max_time=options.max_time,
                                  max_requests=options.request_budget)  # fmt: skip
        self.report = CrawlReport(text)
        self.records: dict[str, PageRecord] = {}
        self.seen: set[str] = set()
        self.queued = 0
        self.done = 0
        self.queue: asyncio.Queue[str] = asyncio.Queue()
        self.robots: dict[str, Protego | None] = {}
        self.inventory: Inventory | None = None
        self.site_name: str | None = None
        self.twins = ""  # how the site names its pages' Markdown (see _probe_twins)
        self.listed_md: set[str] = set()  # pages llms.txt names as Markdown
        self.browser = find_browser() if options.render != "never" else None
        if options.render == "always" and self.browser is None:
            raise InputError("--render always needs Chromium (none found; set COGITAVE_CHROMIUM)")
        self.renders = asyncio.Semaphore(MAX_RENDERS)
        self.shells_unrendered = 0
        self.extracted = 0
        self.pool: ProcessPoolExecutor | None = None
        self.f: Fetcher | Any

    @property
    def scope(self) -> Scope:
        """The crawl's scope: the policy's, which every request is checked against."""
        scope = self.policy.scope
        assert scope is not None
        return scope

    @scope.setter
    def scope(self, scope: Scope) -> None:
        self.policy.scope = scope

    # -- the crawl ---------------------------------------------------------------------------
    async def run(self) -> Crawl:
        import time

        began = time.monotonic()
        made = self.fetcher(self.policy) if self.fetcher else Fetcher(self.o.manners, self.policy)
        async with made as self.f:
            await self._start_page()
            await self._site_lists()
            workers = [asyncio.create_task(self._worker()) for _ in range(self._workers())]
            await self.queue.join()
            for w in workers:
                w.cancel()
            await asyncio.gather(*workers, return_exceptions=True)
            self.report.requests, self.report.retried = self.f.requests, self.f.retried
        if self.pool is not None:
            self.pool.shutdown()
        self.report.seconds = time.monotonic() - began
        return self._finish()

    def _workers(self) -> int:
        hosts = {urlsplit(p).netloc for p in self.scope.prefixes}
        return max(1, self.o.manners.concurrency) * len(hosts)

    async def _start_page(self) -> None:
        url = self.start
        if not await self._allowed(url):
            host = urlsplit(url).netloc
            raise IngestError(
                f"{printable(self.text)}: robots.txt of {host} disallows it for cogitave-query"
            )
        old = self.previous.records.get(url) if self.previous else None
        self.seen.add(url)
        res = await self.f.get(url, old.conditional() if old else None, kind="start")
        text = printable(self.text)
        if isinstance(res, Failure):
            target = printable(res.target)
            if res.skip in ("scope", "excluded", "language"):
                raise IngestError(f"{text} redirects to {target}, outside the scope (--scope)")
            if res.skip == "refused" and res.reason.endswith("(other site)"):
                raise IngestError(
                    f"{text} redirects to {target}, another host: start there, or pass --scope"
                )
            raise IngestError(f"cannot fetch {text}: {printable(res)}")
        if res.status == 304 and old is not None:
            self.report.unchanged += 1
            self._accept(url, old, "start")
            return
        if res.status != 200:
            raise IngestError(f"cannot fetch {text}: HTTP {res.status}")
        final = normalize(res.url) or url
        if final != url:  # the policy let every hop through: the scope follows a default one
            self.scope = self.scope.rebased(final, given=bool(self.o.scopes))
        if res.content_type not in HTML_TYPES:
            raise IngestError(f"{text} is not an HTML page ({printable(res.content_type)})")
        self.seen.update((url, final))
        self.report.fetched += 1
        rec = await self._page(final, res, start=True)
        if rec is None:
            raise IngestError(f"{text} is not an HTML page")
        self._accept(final, rec, "start")

    async def _site_lists(self) -> None:
        """Sitemaps, llms.txt and objects.inv: URLs and facts the links may not give."""
        origin = _origin(self.scope.prefix)
        robots = self.robots.get(urlsplit(origin).netloc)
        maps = list(robots.sitemaps) if robots is not None else []
        maps += [origin + "/sitemap.xml", self.scope.prefix + "sitemap.xml"]
        await self._sitemaps([u for m in dict.fromkeys(maps) if (u := normalize(m))])
        llms_found = False
        for name in ("llms.txt", "llms-full.txt"):
            for where in dict.fromkeys((self.scope.prefix + name, origin + "/" + name)):
                res = await self._quiet_get(where)
                if res is None or res.content_type in ("text/html", "application/xhtml+xml"):
                    continue
                llms_found = True
                for link in llms_links(res.text()):
                    target = self._canon(link, where)
                    if target is None:
                        continue
                    page = _page_of_markdown(target)
                    if page != target:
                        self.listed_md.add(page)
                    self._enqueue(page, "llms.txt")
        if llms_found or self.listed_md:
            await self._probe_twins()
            if self.twins:
                await self._start_twin()
        # Sphinx's inventory (one request; a site without one answers 404): api kinds
        res = await self._quiet_get(self.scope.prefix + "objects.inv")
        if res is not None:
            self.inventory = parse_inventory(res.body)

    async def _sitemaps(self, todo: list[str]) -> None:
        """The sitemaps in ``todo`` and those their indexes name, each read once, at most
        :data:`MAX_SITEMAPS`; every one asked of the policy (same site) first."""
        read = 0
        named = set(todo)
        while todo and read < MAX_SITEMAPS:
            url = todo.pop(0)
            read += 1
            res = await self._quiet_get(url)
            found = sitemap_urls(res.body) if res is not None else None
            if found is None:
                continue
            for more in found.sitemaps:
                u = self._canon(more, url)
                if u is not None and u not in named:
                    named.add(u)
                    todo.append(u)
            for loc in found.pages:
                target = self._canon(loc, url)
                if target is not None:
                    self._enqueue(target, "sitemap")
        if todo:
            self.report.note(f"{len(todo)} more sitemaps not read (at most {MAX_SITEMAPS})")

    async def _probe_twins(self) -> None:
        """Whether the site serves each page's Markdown beside it, and how it names it:
        ``index.html.md`` / ``page.md`` (asked once, of the start page)."""
        for style in ("html.md", "md"):
            twin = _twin(self.start, style)
            if twin is None:
                continue
            res = await self._quiet_get(twin)
            if res is not None and res.content_type in MARKDOWN_TYPES and not _looks_html(res):
                self.twins = style
                return

    async def _start_twin(self) -> None:
        """The start page was read before the probe found the twins: read its twin now."""
        for url, rec in list(self.records.items()):
            if rec.page is None or rec.page.source != "html":
                continue
            markdown = await self._markdown_of(url, None, rec.page.title)
            if markdown is not None:
                page = replace(rec.page, markdown=markdown, source="markdown")
                self.records[url] = replace(rec, page=page)
                self.report.markdown += 1

    async def _worker(self) -> None:
        while True:
            url = await self.queue.get()
            try:
                await self._visit(url)
            except Exception as e:  # one page's surprise must not end the crawl
                self.report.fail(f"error ({type(e).__name__})", url)
            finally:
                self.done += 1
                self.progress("crawl", self.done, self.queued)
                self.queue.task_done()

    async def _visit(self, url: str) -> None:
        if not await self._allowed(url):
            self.report.skip("robots", url)
            return
        old = self.previous.records.get(url) if self.previous else None
        headers = old.conditional() if old is not None else None
        res = await self.f.get(url, headers, kind="page")
        if isinstance(res, Failure):
            if res.skip is not None:
                self.report.skip(res.skip, url)
                if res.skip in _OUT_OF_TIME:
                    self._keep(url, old)
                return
            self.report.fail(res.reason, url)
            self._keep(url, old)
            return
        if res.status == 304 and old is not None:
            self.report.unchanged += 1
            self._accept(url, old, "links")
            return
        if res.status != 200:
            self.report.fail(str(res.status), url)
            if res.status >= 500 or res.status == 429:
                self._keep(url, old)
            return
        final = normalize(res.url) or url
        if final != url:
            if final in self.seen:
                self.report.skip("duplicate", url)
                return
            self.seen.add(final)
        if res.content_type not in HTML_TYPES:
            self.report.skip("type", url)
            return
        self.report.fetched += 1
        rec = await self._page(final, res)
        if rec is None:
            self.report.skip("type", url)
            return
        self._accept(final, rec, "links")

    async def _page(self, url: str, res: Response, *, start: bool = False) -> PageRecord | None:
        """The record of an HTML page: extracted (rendered first when it is a shell), its
        Markdown alternate read, or the reason it is not an answer."""
        ex = await self._extract(res.text(), url)
        if ex is None:
            return None
        source = "html"
        if self.browser and (self.o.render == "always" or ex.shell) and not self.policy.expired():
            rendered = await self._render(url)
            if rendered is not None:
                ex, source = rendered, "rendered"
                self.report.rendered += 1
        if start:
            self.scope = self.scope.with_language(primary_language(ex.lang))
            self.site_name = ex.site_name
        for lang, href in ex.hreflang.items():
            if lang == "x-default" or primary_language(lang) == self.scope.language:
                continue
            other = self._canon(href, url)
            if other is not None and other != url:
                self.scope.hreflang_others.add(other)
        links = tuple(dict.fromkeys(n for a in ex.links if (n := self._canon(a, url))))
        etag, modified = res.headers.get("etag"), res.headers.get("last-modified")
        lang, mine = primary_language(ex.lang), self.scope.language
        skip = None
        if not start and not self.o.languages and lang and mine and lang != mine:
            skip = "language"
        elif ex.shell and source != "rendered":
            skip = "javascript"
            self.shells_unrendered += 1
        elif ex.not_answer:
            skip = ex.not_answer
        if skip is not None:
            if start and skip != "navigation":
                why = _SKIP_WORDS.get(skip, skip)
                raise IngestError(f"{self.text} is not a page to index ({why})")
            return PageRecord(url, etag, modified, links, None, skip)
        markdown = None
        if ex.markdown_alternate or url in self.listed_md or self.twins:
            markdown = await self._markdown_of(url, ex.markdown_alternate, ex.title)
            if markdown is not None:
                source = "markdown"
                self.report.markdown += 1
        page = WebPage(
            url=url,
            title=ex.title,
            markdown=markdown or ex.markdown,
            generator=ex.generator,
            api=tuple(ex.api),
            breadcrumb=tuple((t, self._canon(h, url) if h else None) for t, h in ex.breadcrumb),
            prev=self._canon(ex.prev, url) if ex.prev else None,
            next=self._canon(ex.next, url) if ex.next else None,
            source=source,
            description=ex.description,
            keywords=ex.keywords,
        )
        return PageRecord(url, etag, modified, links, page)

    async def _render(self, url: str) -> Extracted | None:
        assert self.browser is not None
        async with self.renders:
            try:
                rendered = await render(self.browser, url, user_agent(), allow=self.policy.refusal)
            except (RenderError, OSError) as e:
                self.report.note(f"could not render {url}: {e}")
                return None
        for refusal in rendered.refused:  # what the page asked the browser to load elsewhere
            self.report.refuse(f"browser: {refusal.reason}", refusal.url)
        return await self._extract(rendered.html, url)

    async def _markdown_of(self, url: str, alternate: str | None, title: str) -> str | None:
        """The page's Markdown alternate, when the site serves one (its ``<link>``, or the
        twin llms.txt and the probe found), with the page's title as its heading."""
        candidates = []
        if alternate:
            candidates.append(normalize(alternate, url))
        if self.twins:
            candidates.append(_twin(url, self.twins))
        for twin in dict.fromkeys(c for c in candidates if c):
            res = await self._quiet_get(twin)
            if res is None or res.content_type not in MARKDOWN_TYPES or _looks_html(res):
                continue
            text = _strip_front_matter(res.text()).strip()
            if not text:
                continue
            if not re.match(r"^# ", text):
                text = f"# {title}\n\n{text}"
            return text + "\n"
        return None

    # -- bookkeeping -------------------------------------------------------------------------
    def _accept(self, url: str, rec: PageRecord, found_by: str) -> None:
        self.records[url] = rec
        if rec.skip is not None and rec.page is None:
            self.report.skip(rec.skip, url)
        for link in rec.links:
            self._enqueue(link, "links")

    def _keep(self, url: str, old: PageRecord | None) -> None:
        """A page that failed for now keeps what the last crawl had of it."""
        if old is not None and old.page is not None:
            self.records[url] = old

    def _enqueue(self, url: str, found_by: str) -> None:
        if url in self.seen:
            return
        self.seen.add(url)
        if is_asset(url):
            return
        why = self.scope.why_not(url)
        if why is not None:
            self.report.skip(why, url)
            return
        if self.queued + 1 >= self.o.max_pages:
            self.report.skip("max-pages", url)
            return
        spent = self.policy.expired()
        if spent is not None:  # out of time or requests: no more queued
            self.report.skip(spent, url)
            self._keep(url, self.previous.records.get(url) if self.previous else None)
            return
        self.queued += 1
        self.report.discovered += 1
        self.report.found_by[found_by] += 1
        self.queue.put_nowait(url)
        self.progress("crawl", self.done, self.queued)

    async def _allowed(self, url: str) -> bool:
        host = urlsplit(url).netloc
        if host not in self.robots:
            res = await self._quiet_get(_origin(url) + "/robots.txt")
            parsed = robots_of(res.text()) if res is not None else None
            self.robots[host] = parsed
            delay = parsed.crawl_delay("cogitave-query") if parsed is not None else None
            if delay:
                self.f.delays[host] = min(float(delay), 30.0)
        robots = self.robots[host]
        return robots is None or robots.can_fetch(url, "cogitave-query")

    async def _quiet_get(self, url: str) -> Response | None:
        """A site file that may well be absent (robots.txt, sitemaps, llms.txt, objects.inv,
        a Markdown alternate): its 200 response, else None (counted nowhere; a URL the
        policy refused, on another site or a private address, is in the report's
        ``refused``)."""
        res = await self.f.get(url, kind="site")
        if isinstance(res, Failure) or res.status != 200:
            return None
        return res

    @property
    def naming(self) -> Naming:
        return Naming(self.scope.prefixes, self.o.base_url)

    def _canon(self, href: str | None, base: str) -> str | None:
        return self.naming.canon(href, base)

    async def _extract(self, text: str, url: str) -> Extracted | None:
        """The page's facts; past :data:`POOL_AFTER` pages on a machine with more than one
        core, in worker processes (extraction is CPU work; the crawl's I/O goes on)."""
        writer = self.naming.writer(url)
        self.extracted += 1
        cores = os.cpu_count() or 1
        if self.pool is None and cores > 1 and self.extracted > POOL_AFTER:
            context = multiprocessing.get_context("forkserver")
            self.pool = ProcessPoolExecutor(max_workers=cores, mp_context=context)
        if self.pool is None:
            return extract(text, url, writer)
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self.pool, extract, text, url, writer)

    def _finish(self) -> Crawl:
        report = self.report
        for reason, urls in self.policy.refused.items():
            for url in urls:
                report.refuse(reason, url)
        if self.shells_unrendered:
            report.note(
                f"{self.shells_unrendered} pages are JavaScript shells and no browser rendered "
                "them (install chromium, or --render always)"
            )
        if report.skipped.get("max-pages"):
            report.note(
                f"--max-pages {self.o.max_pages} reached: "
                f"{len(report.skipped['max-pages'])} URLs not fetched"
            )
        if self.policy.spent == "max-time":
            report.note(
                f"--max-time {self.o.max_time:g} s reached: the crawl stopped there, "
                f"{len(report.skipped.get('max-time', []))} URLs not fetched; the pages read "
                "are indexed (a re-sync keeps the others' last version)"
            )
        elif self.policy.spent == "max-requests":
            report.note(
                f"the request budget ({self.o.request_budget} requests) ran out: "
                f"{len(report.skipped.get('max-requests', []))} URLs not fetched; the pages "
                "read are indexed"
            )
        if self.policy.spent is not None and self.previous is not None:
            # cut short: the pages it never reached keep their last version, not deleted
            for url, old in self.previous.records.items():
                if url not in self.seen:
                    self._keep(url, old)
        pages = [r.page for u, r in sorted(self.records.items()) if r.page is not None]
        report.pages = len(pages)
        state = CrawlState(self.start, dict(self.records), self.twins)
        attempted = report.fetched + report.unchanged + report.failures
        limit = failure_limit(self.o.max_failures, attempted)
        if report.failures > limit:
            raise CrawlFailedError(
                f"{report.failures} of {attempted} URLs failed, more than --max-failures "
                f"{self.o.max_failures} allows; nothing was published",
                details={"report": report.format()},
            )
        return Crawl(self.start, self.scope, pages, report, state, self.inventory,
                     self.site_name, self.o.base_url)  # fmt: skip


_SKIP_WORDS = {
    "search": "a search page",
    "index": "a generated index",
    "404": "a not-found page",
    "noindex": "it is marked noindex",
    "javascript": "an empty JavaScript shell, and no browser to render it",
    "empty": "no content",
    "language": "another language",
}


_OUT_OF_TIME = frozenset({"max-time", "max-requests"})


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


def _page_of_markdown(url: str) -> str:
    """The page a Markdown file listed in llms.txt stands for: ``x/index.html.md`` ->
    ``x/``, ``x.html.md`` -> ``x.html``, ``x.md`` -> ``x``."""
    path = urlsplit(url).path
    if not path.endswith(".md"):
        return url
    stem = path[: -len(".md")]
    if stem.endswith("/index.html") or stem.endswith("/index"):
        stem = stem.rsplit("/", 1)[0] + "/"
    return normalize(stem, url) or url


def _twin(url: str, style: str) -> str | None:
    """The URL of a page's Markdown twin in ``style`` (``html.md``: ``x/index.html.md``,
    ``x.html.md``; ``md``: ``x/index.md``, ``x.md``)."""
    path = urlsplit(url).path
    if path.endswith("/"):
        name = path + ("index.html.md" if style == "html.md" else "index.md")
    elif style == "html.md" and path.endswith(".html"):
        name = path + ".md"
    elif style == "md":
        name = re.sub(r"\.html?$", "", path) + ".md"
    else:
        return None
    return normalize(name, url)


def _looks_html(res: Response) -> bool:
    return res.body[:512].lstrip().lower().startswith((b"<!doctype html", b"<html"))


def _strip_front_matter(text: str) -> str:
    if text.startswith("---\n"):
        end = text.find("\n---", 4)
        if end != -1:
            return text[end + 4 :].lstrip("\n")
    return text
