"""HTTP with manners: one request -> one bounded, policed response.

:class:`Fetcher` is what a crawl asks for every URL. Each request:

- asks the crawl's :class:`~cogitave.ingest.web.policy.FetchPolicy` first, and again for
  every redirect hop, before a byte is sent (scheme, scope or same site, no private address
  from a public start host; the request budget and the crawl's deadline), so a refusal costs
  the site nothing and is recorded with its reason;
- goes through its host's :class:`HostGate`: at most ``concurrency`` requests in flight per
  host, and requests started at most ``rate`` per second (a robots.txt ``Crawl-delay`` that
  asks for less is honoured); a ``Retry-After`` pauses the whole host;
- names the project in its ``User-Agent`` (``cogitave-query/<version>``);
- has timeouts for connecting, each read and the whole request (no slow server hangs it),
  the whole request cut short by the crawl's deadline;
- is retried only where trying again can help: 429 and 5xx answers with exponential backoff
  (``Retry-After`` honoured, up to :attr:`Manners.max_wait`), a timeout or a dropped
  connection once, a refused connection or an unknown host never;
- reads at most ``max_bytes`` of body, counted as it decodes (into memory, or written to a
  ``sink`` as it decodes, for a body too large to hold: a registry's pack): the fetcher asks for
  ``gzip, deflate`` only and decodes the raw stream itself (:class:`BoundedDecoder`), each
  step producing at most what is left of the bound, at most two encodings stacked; another
  encoding (``br``, ``zstd``, unknown) is refused, never decoded;
- follows redirects itself, hop by hop, so each target is checked (no loop, at most
  ``max_redirects`` hops).

Failures are values, not exceptions the crawl must know: :class:`Failure` carries a reason
(``timeout``, ``connection``, ``redirect loop``, ``size``, ...) for the report.
"""

from __future__ import annotations

import asyncio
import codecs
import email.utils
import random
import time
import zlib
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Protocol
from urllib.parse import urlsplit

import httpx

from cogitave.ingest.web.options import Manners
from cogitave.ingest.web.policy import FetchPolicy
from cogitave.ingest.web.scope import Resolver, addresses, normalize

RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})
REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
ACCEPT_ENCODING = "gzip, deflate"
"""The only encodings asked for, and with ``x-gzip`` the only ones decoded."""
MAX_ENCODINGS = 2
"""Content encodings stacked on one body (``gzip, gzip``); more is refused."""
DECODE_STEP = 64 * 1024
"""The most bytes one decompression call may produce."""
_SCOPE_REASONS = frozenset({"scope", "excluded", "language"})
# Codecs a charset may not name: not text encodings of a page, or able to smuggle markup
_NOT_CHARSETS = frozenset({"idna", "punycode", "unicode_escape", "raw_unicode_escape", "utf_7"})


def user_agent() -> str:
    """``cogitave-query/<version>``: the project, as every request names it."""
    from cogitave import __version__

    return f"cogitave-query/{__version__} (documentation indexer)"


class Sink(Protocol):
    """Where a body goes instead of memory (a binary file): emptied (``seek(0)``,
    ``truncate()``) before each attempt's body, so a retried request never appends."""

    def write(self, data: bytes, /) -> object: ...

    def seek(self, offset: int, whence: int = 0, /) -> int: ...

    def truncate(self, size: int | None = None, /) -> int: ...


@dataclass(frozen=True)
class Response:
    """A response read whole: the URL it came from after redirects, status, headers, body
    (decoded: no content encoding left; empty when it went to a :class:`Sink`)."""

    url: str
    status: int
    headers: Mapping[str, str]
    body: bytes
    redirected_from: tuple[str, ...] = ()

    @property
    def content_type(self) -> str:
        return self.headers.get("content-type", "").split(";", 1)[0].strip().lower()

    def text(self) -> str:
        """The body decoded (the charset the server names when it is a text encoding of a
        page, else UTF-8; bad bytes replaced)."""
        charset = "utf-8"
        for part in self.headers.get("content-type", "").split(";")[1:]:
            key, _, value = part.strip().partition("=")
            if key.lower() == "charset" and value.strip():
                charset = value.strip().strip("\"'")
        try:
            codec = codecs.lookup(charset)
            if codec.name.replace("-", "_") in _NOT_CHARSETS:
                raise LookupError(charset)
            return self.body.decode(codec.name, errors="replace")
        except (LookupError, UnicodeError, ValueError, TypeError):
            return self.body.decode("utf-8", errors="replace")


@dataclass(frozen=True)
class Failure:
    """A URL that gave no usable response: why (``status`` when the server answered)."""

    url: str
    reason: str
    status: int | None = None
    skip: str | None = None
    """Set when this is not a failure but a skip the report counts by reason (``scope``,
    ``size``, ``encoding``, ``refused``, ``max-time``, ``max-requests``)."""
    detail: str = ""
    """What the transport said (``connection``: refused, unknown host, reset)."""
    retry: bool = False
    """Whether trying once more may help (a dropped connection, not a refused one)."""
    target: str = ""
    """The URL a refused redirect led to."""

    def __str__(self) -> str:
        head = f"HTTP {self.status}" if self.status else self.reason
        return f"{head}: {self.detail}" if self.detail else head


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
    """The crawl's HTTP client (see the module doc); use as an async context manager.
    ``policy``: the crawl's :class:`FetchPolicy`; a host name instead gives a policy with no
    scope, for a crawl's start host (only the scheme and address rules)."""

    def __init__(
        self, manners: Manners, policy: FetchPolicy | str, *, resolve: Resolver = addresses
    ) -> None:
        if isinstance(policy, str):
            policy = FetchPolicy(f"http://{policy}/", None, resolve=resolve)
        self.manners = manners
        self.policy = policy
        self.gates: dict[str, HostGate] = {}
        self.delays: dict[str, float] = {}  # host -> robots.txt Crawl-delay
        self.requests = 0
        self.retried = 0
        self.decoded_most = 0
        """The most bytes any decoding step of any response produced (at most one past
        the size bound: what the bound is checked against)."""
        m = manners
        self._client = httpx.AsyncClient(
            headers={"User-Agent": user_agent(), "Accept-Encoding": ACCEPT_ENCODING},
            timeout=httpx.Timeout(m.timeout, connect=m.timeout),
            follow_redirects=False,
            limits=httpx.Limits(max_connections=max(8, 2 * m.concurrency)),
            event_hooks={"response": [_stop_at_redirect]},
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
        kind: str = "page",
        max_bytes: int | None = None,
        sink: Sink | None = None,
    ) -> Response | Failure:
        """GET ``url`` (normalised) for ``kind`` (``start``, ``page``, ``site``: see
        :class:`FetchPolicy`), following redirects the policy allows; a 304 or an error
        status is a :class:`Response` too (the caller decides). ``sink``: a 2xx body is
        written there as it decodes (the same bound), not kept in the response."""
        why = await self._check(url, kind, first=True)
        if why is not None:
            skip = why if why in _SCOPE_REASONS else "refused"
            return Failure(url, f"refused ({why})", skip=skip)
        seen: list[str] = [url]
        current = url
        while True:
            res = await self._retrying(current, headers or {}, max_bytes, sink)
            if isinstance(res, Failure) or res.status not in REDIRECT_STATUSES:
                if isinstance(res, Failure) and current != url:
                    return replace(res, url=url)
                if isinstance(res, Response) and len(seen) > 1:
                    return Response(res.url, res.status, res.headers, res.body, tuple(seen[:-1]))
                return res
            location = res.headers.get("location", "").strip()
            if not location:
                return Failure(url, "a redirect without a Location", res.status)
            target = normalize(location, current)
            if target is None:  # not http(s), or no host: the policy says which, and keeps it
                why = await self._check(location, kind, first=False)
                return Failure(url, f"refused a redirect ({why or 'scheme'})", skip="refused",
                               target=location)  # fmt: skip
            if target in seen:
                return Failure(url, f"a redirect loop ({' -> '.join([*seen, target])})")
            if len(seen) > self.manners.max_redirects:
                return Failure(url, f"more than {self.manners.max_redirects} redirects")
            why = await self._check(target, kind, first=False)
            if why in _SCOPE_REASONS:
                return Failure(url, f"redirects to {target}", skip=why, target=target)
            if why is not None:
                return Failure(url, f"refused a redirect to {target} ({why})", skip="refused",
                               target=target)  # fmt: skip
            seen.append(target)
            current = target

    async def _check(self, url: str, kind: str, *, first: bool) -> str | None:
        """The policy's answer, off the event loop (it may resolve a host name)."""
        return await asyncio.to_thread(self.policy.check, url, kind, first=first)

    async def _retrying(
        self, url: str, headers: Mapping[str, str], max_bytes: int | None, sink: Sink | None
    ) -> Response | Failure:
        m = self.manners
        host = urlsplit(url).netloc
        gate = self.gate(host)
        last: Response | Failure | None = None
        for attempt in range(m.retries + 1):
            async with gate.slots:
                await gate.wait_turn()
                spent = self.policy.spend()
                if spent is not None:
                    return Failure(url, spent, skip=spent)
                self.requests += 1
                last = await self._once(url, headers, max_bytes or m.max_bytes, sink)
            retry = self._retry_after(last, attempt)
            left = self.policy.remaining()
            if retry is None or (left is not None and retry >= left):
                return last
            self.retried += 1
            if isinstance(last, Response) and "retry-after" in last.headers:
                gate.pause(retry)
            await asyncio.sleep(retry)
        assert last is not None
        return last

    def _retry_after(self, res: Response | Failure, attempt: int) -> float | None:
        """Seconds to wait before trying again, or None: no retry. 429 and 5xx up to
        ``retries`` times; a timeout or a dropped connection once; nothing else."""
        m = self.manners
        if attempt >= m.retries:
            return None
        backoff = m.backoff * (2**attempt) * (1 + random.random() / 4)
        if isinstance(res, Failure):
            if res.skip is not None or attempt > 0:
                return None
            return backoff if res.reason == "timeout" or res.retry else None
        if res.status not in RETRY_STATUSES:
            return None
        given = parse_retry_after(res.headers.get("retry-after"))
        return min(m.max_wait, given) if given is not None else backoff

    async def _once(
        self, url: str, headers: Mapping[str, str], max_bytes: int, sink: Sink | None = None
    ) -> Response | Failure:
        deadline = self.manners.deadline
        left = self.policy.remaining()
        if left is not None:
            deadline = max(0.001, min(deadline, left))
        try:
            read = self._read(url, headers, max_bytes, sink)
            return await asyncio.wait_for(read, timeout=deadline)
        except _Redirect as r:
            return r.response
        except (TimeoutError, httpx.TimeoutException):
            return Failure(url, "timeout")
        except httpx.ConnectError as e:  # refused, unknown host: trying again will not help
            return Failure(url, "connection", detail=str(e) or type(e).__name__)
        except httpx.TransportError as e:  # dropped, reset: once more may help
            return Failure(url, "connection", detail=str(e) or type(e).__name__, retry=True)
        except (httpx.InvalidURL, httpx.StreamError) as e:
            return Failure(url, "unusable URL", detail=type(e).__name__, skip="refused")
        except TooLarge:
            return Failure(url, f"larger than {max_bytes:,} bytes", skip="size")
        except BadEncoding as e:
            return Failure(url, f"content encoding {e}", skip="encoding")

    async def _read(
        self, url: str, headers: Mapping[str, str], max_bytes: int, sink: Sink | None = None
    ) -> Response:
        """The response; its body read only for a 2xx answer (an error page's is never
        used), decoded as it streams (into ``sink`` when given)."""
        async with self._client.stream("GET", url, headers=dict(headers)) as r:
            heads = {k: v for k, v in r.headers.items() if k != "content-encoding"}
            if not 200 <= r.status_code < 300:
                return Response(str(r.url), r.status_code, heads, b"")
            declared = r.headers.get("content-length", "")
            if declared.isdigit() and int(declared) > max_bytes:
                raise TooLarge
            decoder: BoundedDecoder | None = None
            chunks: list[bytes] = []
            raw = 0
            if sink is not None:
                sink.seek(0)
                sink.truncate()
            try:
                async for chunk in r.aiter_raw():
                    raw += len(chunk)
                    if raw > max_bytes:
                        raise TooLarge
                    if decoder is None:  # an encoding matters once there is a body
                        encodings = r.headers.get_list("content-encoding")
                        decoder = BoundedDecoder(encodings, max_bytes)
                    for piece in decoder.feed(chunk):
                        if sink is None:
                            chunks.append(piece)
                        else:
                            sink.write(piece)
            finally:
                if decoder is not None:
                    self.decoded_most = max(self.decoded_most, decoder.most)
            return Response(str(r.url), r.status_code, heads, b"".join(chunks))


async def _stop_at_redirect(response: httpx.Response) -> None:
    """A redirect is the fetcher's to follow: hand it over before httpx reads its
    ``Location`` (which it would refuse with an exception for a ``data:`` URL)."""
    if response.status_code in REDIRECT_STATUSES:
        heads = {k: v for k, v in response.headers.items()}
        url = str(response.request.url)
        raise _Redirect(Response(url, response.status_code, heads, b""))


class _Redirect(Exception):
    """A redirect answer, handed to the fetcher before httpx reads its Location."""

    def __init__(self, response: Response) -> None:
        self.response = response


class TooLarge(Exception):
    """A body past the size limit (:class:`BoundedDecoder`; the fetcher makes it a
    ``size`` skip)."""


class BadEncoding(Exception):
    """A content encoding not decoded, or data that does not decode (:class:`BoundedDecoder`;
    the fetcher makes it an ``encoding`` skip)."""


class BoundedDecoder:
    """A body's content encodings undone as it streams, bounded: ``feed`` raw bytes, get
    decoded pieces. Every decompression call may produce at most :data:`DECODE_STEP` bytes
    and at most what is left of ``limit`` (plus the one byte that shows it is past), at
    every stage of a stack, so no step ever holds more than the bound: a 3 KB body that
    inflates to gigabytes is refused after ``limit`` bytes. ``gzip``/``x-gzip`` and
    ``deflate`` (zlib or raw) only, at most :data:`MAX_ENCODINGS` stacked."""

    def __init__(self, encodings: Sequence[str], limit: int) -> None:
        names = [e.strip().lower() for v in encodings for e in v.split(",")]
        names = [n for n in names if n and n != "identity"]
        if len(names) > MAX_ENCODINGS:
            raise BadEncoding(f"{', '.join(names)} (more than {MAX_ENCODINGS} stacked)")
        for n in names:
            if n not in ("gzip", "x-gzip", "deflate"):
                raise BadEncoding(f"{n} (not asked for)")
        self.limit = limit
        # the last encoding applied is the first undone
        self.stages = [_Inflate(n, limit) for n in reversed(names)]
        self.size = 0

    @property
    def most(self) -> int:
        """The most bytes any stage produced so far."""
        return max([self.size, *(s.produced for s in self.stages)])

    def feed(self, data: bytes) -> Iterator[bytes]:
        """The decoded pieces of the next raw bytes."""
        for piece in self._through(0, data):
            self.size += len(piece)
            if self.size > self.limit:
                raise TooLarge
            yield piece

    def _through(self, i: int, data: bytes) -> Iterator[bytes]:
        if i == len(self.stages):
            if data:
                yield data
            return
        for piece in self.stages[i].decode(data):
            yield from self._through(i + 1, piece)


class _Inflate:
    """One gzip or deflate stage: pieces of at most :data:`DECODE_STEP` bytes, at most
    ``limit`` in all."""

    def __init__(self, name: str, limit: int) -> None:
        self.gzip = name in ("gzip", "x-gzip")
        self.limit = limit
        self.produced = 0
        self.head = b""  # deflate: its first bytes, until they tell zlib from raw
        self.d: zlib._Decompress | None = (
            zlib.decompressobj(16 + zlib.MAX_WBITS) if self.gzip else None
        )

    def decode(self, data: bytes) -> Iterator[bytes]:
        if self.d is None:
            self.head += data
            if len(self.head) < 2:
                return
            b0, b1 = self.head[0], self.head[1]
            wrapped = b0 & 0x0F == 8 and (b0 * 256 + b1) % 31 == 0
            self.d = zlib.decompressobj(zlib.MAX_WBITS if wrapped else -zlib.MAX_WBITS)
            data, self.head = self.head, b""
        d = self.d
        while True:
            if d.eof:
                rest = d.unused_data + data
                if not (self.gzip and rest.startswith(b"\x1f\x8b")):
                    return  # trailing bytes after the stream: ignored
                d = self.d = zlib.decompressobj(16 + zlib.MAX_WBITS)  # the next gzip member
                data = rest
            step = min(DECODE_STEP, self.limit + 1 - self.produced)
            try:
                out = d.decompress(data, step)
            except zlib.error as e:
                raise BadEncoding(f"{'gzip' if self.gzip else 'deflate'} (bad data)") from e
            self.produced += len(out)
            if self.produced > self.limit:
                raise TooLarge
            if out:
                yield out
            data = d.unconsumed_tail
            if not data and len(out) < step and not d.eof:
                return


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
