"""HTTP with manners: one request -> one bounded, policed response.

:class:`Fetcher` is what a crawl asks for every URL. Each request:

- goes through its host's :class:`HostGate`: at most ``concurrency`` requests in flight per
  host, and requests started at most ``rate`` per second (a robots.txt ``Crawl-delay`` that
  asks for less is honoured); a ``Retry-After`` pauses the whole host;
- names the project in its ``User-Agent`` (``cogitave-query/<version>``);
- has timeouts for connecting, each read and the whole request (no slow server hangs it);
- is retried with exponential backoff on 429 and 5xx answers and on timeouts (``Retry-After``
  honoured, up to :attr:`Manners.max_wait`);
- reads at most ``max_bytes`` of body (a larger one is refused while streaming);
- follows redirects itself, hop by hop, so each target is checked: only http(s), never from a
  public host into a private address (:func:`~cogitave.ingest.web.scope.redirect_refusal`),
  within the scope when the caller says so, no loop, at most ``max_redirects`` hops.

Failures are values, not exceptions the crawl must know: :class:`Failure` carries a reason
(``timeout``, ``connection``, ``redirect loop``, ``size``, ...) for the report.
"""

from __future__ import annotations

import asyncio
import email.utils
import random
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from urllib.parse import urlsplit

import httpx

from cogitave.ingest.web.options import Manners
from cogitave.ingest.web.scope import Resolver, addresses, normalize, redirect_refusal

RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})
REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})


def user_agent() -> str:
    """``cogitave-query/<version>``: the project, as every request names it."""
    from cogitave import __version__

    return f"cogitave-query/{__version__} (documentation indexer)"


@dataclass(frozen=True)
class Response:
    """A response read whole: the URL it came from after redirects, status, headers, body."""

    url: str
    status: int
    headers: Mapping[str, str]
    body: bytes
    redirected_from: tuple[str, ...] = ()

    @property
    def content_type(self) -> str:
        return self.headers.get("content-type", "").split(";", 1)[0].strip().lower()

    def text(self) -> str:
        """The body decoded (the charset the server names, else UTF-8, bad bytes replaced)."""
        charset = "utf-8"
        for part in self.headers.get("content-type", "").split(";")[1:]:
            key, _, value = part.strip().partition("=")
            if key.lower() == "charset" and value.strip():
                charset = value.strip().strip("\"'")
        try:
            return self.body.decode(charset, errors="replace")
        except LookupError:
            return self.body.decode("utf-8", errors="replace")


@dataclass(frozen=True)
class Failure:
    """A URL that gave no usable response: why (``status`` when the server answered)."""

    url: str
    reason: str
    status: int | None = None
    skip: str | None = None
    """Set when this is not a failure but a skip the report counts by reason (``scope``,
    ``size``, ``refused``)."""
    detail: str = ""
    """What the transport said (``connection``: refused, unknown host, reset)."""

    def __str__(self) -> str:
        head = f"HTTP {self.status}" if self.status else self.reason
        return f"{head}: {self.detail}" if self.detail else head


ScopeCheck = Callable[[str], str | None]
"""A normalised URL -> why a redirect may not go there (None: it may)."""


@dataclass
class HostGate:
    """A host's share of the crawl: requests in flight and the time the next may start."""

    concurrency: int
    interval: float
    slots: asyncio.Semaphore = field(init=False)
    next_at: float = 0.0

    def __post_init__(self) -> None:
        self.slots = asyncio.Semaphore(max(1, self.concurrency))

    async def wait_turn(self) -> None:
        """Wait until a request may start (holding a slot is the caller's)."""
        now = time.monotonic()
        at = max(now, self.next_at)
        self.next_at = at + self.interval
        if at > now:
            await asyncio.sleep(at - now)

    def pause(self, seconds: float) -> None:
        """No request starts on this host for ``seconds`` (a ``Retry-After``)."""
        self.next_at = max(self.next_at, time.monotonic() + seconds)


class Fetcher:
    """The crawl's HTTP client (see the module doc); use as an async context manager."""

    def __init__(self, manners: Manners, start_host: str, *, resolve: Resolver = addresses) -> None:
        self.manners = manners
        self.start_host = start_host
        self.resolve = resolve
        self.gates: dict[str, HostGate] = {}
        self.delays: dict[str, float] = {}  # host -> robots.txt Crawl-delay
        self.requests = 0
        self.retried = 0
        m = manners
        self._client = httpx.AsyncClient(
            headers={"User-Agent": user_agent(), "Accept-Encoding": "gzip, deflate"},
            timeout=httpx.Timeout(m.timeout, connect=m.timeout),
            follow_redirects=False,
            limits=httpx.Limits(max_connections=max(8, 2 * m.concurrency)),
        )

    async def __aenter__(self) -> Fetcher:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self._client.aclose()

    def gate(self, host: str) -> HostGate:
        if host not in self.gates:
            rate = self.manners.rate
            interval = 1.0 / rate if rate > 0 else 0.0
            interval = max(interval, self.delays.get(host, 0.0))
            self.gates[host] = HostGate(self.manners.concurrency, interval)
        return self.gates[host]

    async def get(
        self,
        url: str,
        headers: Mapping[str, str] | None = None,
        *,
        scope: ScopeCheck | None = None,
        max_bytes: int | None = None,
    ) -> Response | Failure:
        """GET ``url`` (normalised), following redirects that pass the policy and ``scope``;
        a 304 or an error status is a :class:`Response` too (the caller decides)."""
        seen: list[str] = [url]
        current = url
        while True:
            res = await self._retrying(current, headers or {}, max_bytes)
            if isinstance(res, Failure) or res.status not in REDIRECT_STATUSES:
                if isinstance(res, Response) and len(seen) > 1:
                    return Response(res.url, res.status, res.headers, res.body, tuple(seen[:-1]))
                return res
            location = res.headers.get("location", "")
            raw = urlsplit(location).scheme.lower() if location else ""
            if raw and raw not in ("http", "https"):
                return Failure(url, f"refused {redirect_refusal(self.start_host, location)}",
                               skip="refused")  # fmt: skip
            target = normalize(location, current) if location else None
            if target is None:
                return Failure(url, "a redirect without a usable Location", res.status)
            refusal = redirect_refusal(self.start_host, target, self.resolve)
            if refusal is not None:
                return Failure(url, f"refused {refusal}", skip="refused")
            if target in seen:
                return Failure(url, f"a redirect loop ({' -> '.join([*seen, target])})")
            if len(seen) > self.manners.max_redirects:
                return Failure(url, f"more than {self.manners.max_redirects} redirects")
            why = scope(target) if scope is not None else None
            if why is not None:
                return Failure(url, f"redirects to {target}", skip=why)
            seen.append(target)
            current = target

    async def _retrying(
        self, url: str, headers: Mapping[str, str], max_bytes: int | None
    ) -> Response | Failure:
        m = self.manners
        host = urlsplit(url).netloc
        gate = self.gate(host)
        last: Response | Failure | None = None
        for attempt in range(m.retries + 1):
            async with gate.slots:
                await gate.wait_turn()
                self.requests += 1
                last = await self._once(url, headers, max_bytes or m.max_bytes)
            retry = self._retry_after(last, attempt)
            if retry is None:
                return last
            self.retried += 1
            if isinstance(last, Response) and "retry-after" in last.headers:
                gate.pause(retry)
            await asyncio.sleep(retry)
        assert last is not None
        return last

    def _retry_after(self, res: Response | Failure, attempt: int) -> float | None:
        """Seconds to wait before trying again, or None: no retry."""
        m = self.manners
        if attempt >= m.retries:
            return None
        backoff = m.backoff * (2**attempt) * (1 + random.random() / 4)
        if isinstance(res, Failure):
            if res.skip is not None or res.reason not in ("timeout", "connection"):
                return None
            return backoff if res.reason == "timeout" or attempt == 0 else None
        if res.status not in RETRY_STATUSES:
            return None
        given = parse_retry_after(res.headers.get("retry-after"))
        return min(m.max_wait, given) if given is not None else backoff

    async def _once(
        self, url: str, headers: Mapping[str, str], max_bytes: int
    ) -> Response | Failure:
        try:
            return await asyncio.wait_for(
                self._read(url, headers, max_bytes), timeout=self.manners.deadline
            )
        except (TimeoutError, httpx.TimeoutException):
            return Failure(url, "timeout")
        except httpx.TransportError as e:
            return Failure(url, "connection", detail=str(e) or type(e).__name__)
        except _TooLarge:
            return Failure(url, f"larger than {max_bytes:,} bytes", skip="size")

    async def _read(self, url: str, headers: Mapping[str, str], max_bytes: int) -> Response:
        async with self._client.stream("GET", url, headers=dict(headers)) as r:
            declared = r.headers.get("content-length", "")
            if declared.isdigit() and int(declared) > max_bytes:
                raise _TooLarge
            chunks: list[bytes] = []
            size = 0
            async for chunk in r.aiter_bytes():
                size += len(chunk)
                if size > max_bytes:
                    raise _TooLarge
                chunks.append(chunk)
            return Response(str(r.url), r.status_code, dict(r.headers), b"".join(chunks))


class _TooLarge(Exception):
    """A body past the size limit (caught inside the fetcher)."""


def parse_retry_after(value: str | None) -> float | None:
    """Seconds a ``Retry-After`` header asks for (delta seconds or an HTTP date), or None."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when is None:
        return None
    return max(0.0, when.timestamp() - time.time())
