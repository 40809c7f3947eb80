"""The rendering browser's only way out: a filtering HTTP proxy on 127.0.0.1.

:func:`~cogitave.ingest.web.render.render` starts one :class:`FilteringProxy` per page and
makes Chromium send every request through it (loopback included). Each request is checked
with the crawl's ``allow`` callable (``url -> None`` when allowed, else a short reason)
before anything leaves this machine:

- ``GET http://host/path`` (any method, absolute form): the whole URL is checked; an allowed
  request is forwarded with httpx (no redirects followed: each redirect the browser follows
  comes back as a new request and is checked again; a bounded body each way; timeouts); a
  refused one is answered ``403`` and never reaches the host.
- ``CONNECT host:port`` (``https://`` and WebSockets): the proxy sees a host and a port, not
  the path inside the TLS tunnel, so it checks ``https://host[:port]/``; the tunnel opens
  only when that is allowed, else ``403``. A tunnel to the origin of the ``page`` being
  rendered (which its caller has already allowed) opens without asking again, so a policy
  that admits only some paths of a host still lets the page load.

Every refusal is kept (:class:`Refusal`, the first :data:`MAX_LISTED`; all are counted).
``allow`` runs on a worker thread, so it may block (resolve a name, say); an exception in it
refuses the request. :func:`origins` builds an ``allow`` that admits given origins only.
"""

from __future__ import annotations

import asyncio
import contextlib
import html
import secrets
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from urllib.parse import urlsplit

import h11
import httpx

Allow = Callable[[str], str | None]
"""``url -> None`` when the browser may request it, else the reason it may not."""

MAX_HEAD = 64 * 1024
"""Bytes of a request's line and headers."""
MAX_REQUEST_BODY = 1024 * 1024
MAX_RESPONSE_BODY = 20 * 1024 * 1024
CONNECT_TIMEOUT = 10.0
READ_TIMEOUT = 15.0
"""Seconds the proxy waits for a host to connect, and for each read from it or the browser."""
MAX_LISTED = 100
"""Refusals kept with their URLs (all of them are counted)."""

HOP_BY_HOP = frozenset(
    {
        "connection", "keep-alive", "proxy-authenticate", "proxy-authorization",
        "proxy-connection", "te", "trailer", "trailers", "transfer-encoding", "upgrade",
        "host", "content-length",
    }
)  # fmt: skip
NO_BODY_STATUSES = frozenset({204, 304})


@dataclass(frozen=True)
class Refusal:
    """A request the browser made and the proxy refused: its URL (``https://host/`` for a
    tunnel) and the reason ``allow`` gave."""

    url: str
    reason: str


def origins(urls: Iterable[str]) -> Allow:
    """An ``allow`` that admits the origins (scheme, host, port) of ``urls`` and nothing
    else."""
    allowed = {_origin(u) for u in urls}

    def allow(url: str) -> str | None:
        return None if _origin(url) in allowed else "origin"

    return allow


def _origin(url: str) -> tuple[str, str, int | None]:
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    try:
        port = parts.port or {"http": 80, "https": 443}.get(scheme)
    except ValueError:
        port = None
    return scheme, (parts.hostname or "").lower(), port


class FilteringProxy:
    """An HTTP proxy on an ephemeral port of 127.0.0.1 that forwards what ``allow`` admits.

    Used as ``async with FilteringProxy(allow, page=url) as proxy:``, then ``proxy.url`` is
    the address to give the browser; leaving the block closes the listener and every open
    connection and tunnel. ``refused`` lists the refusals, ``refusals`` counts them,
    ``forwarded`` counts the requests forwarded and ``tunnels`` the tunnels opened. The
    proxy's own answers (a refusal, a host that failed) are pages that begin with ``marker``,
    the status and the URL, so a page that ended on one can be told apart.
    """

    def __init__(self, allow: Allow, *, page: str | None = None) -> None:
        self.allow = allow
        self.page_origin = _origin(page) if page else None
        self.refused: list[Refusal] = []
        self.refusals = 0
        self.forwarded = 0
        self.tunnels = 0
        self.marker = f"cogitave-proxy-{secrets.token_hex(8)}"
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[object]] = set()
        self._client: httpx.AsyncClient | None = None

    @property
    def port(self) -> int:
        assert self._server is not None, "the proxy is not started"
        return int(self._server.sockets[0].getsockname()[1])

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def __aenter__(self) -> FilteringProxy:
        self._client = httpx.AsyncClient(
            follow_redirects=False,
            trust_env=False,
            timeout=httpx.Timeout(READ_TIMEOUT, connect=CONNECT_TIMEOUT),
        )
        self._server = await asyncio.start_server(self._accept, "127.0.0.1", 0)
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._server is not None:
            self._server.close()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        if self._server is not None:
            await self._server.wait_closed()
        if self._client is not None:
            await self._client.aclose()

    # -- connections -------------------------------------------------------------------------
    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        conn = h11.Connection(h11.SERVER, max_incomplete_event_size=MAX_HEAD)
        try:
            await self._serve(conn, reader, writer)
        except h11.RemoteProtocolError as e:
            with contextlib.suppress(OSError, h11.ProtocolError):
                await self._answer(conn, writer, e.error_status_hint, "not a request")
        except (OSError, TimeoutError, h11.ProtocolError):
            pass
        finally:
            self._tasks.discard(task)
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()

    async def _serve(
        self, conn: h11.Connection, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        """Requests on one browser connection, one after another (keep-alive)."""
        while True:
            request = await self._next(conn, reader)
            if request is None:
                return
            body = bytearray()
            while True:
                event = await self._next_event(conn, reader)
                if isinstance(event, h11.Data):
                    body += event.data
                    if len(body) > MAX_REQUEST_BODY:
                        await self._answer(conn, writer, 413, "request body too large")
                        return
                elif isinstance(event, h11.EndOfMessage):
                    break
                else:
                    return
            target = request.target.decode("latin-1")
            if request.method == b"CONNECT":
                await self._connect(conn, reader, writer, target)
                return
            await self._forward(conn, writer, request, target, bytes(body))
            if conn.our_state is not h11.DONE or conn.their_state is not h11.DONE:
                return
            conn.start_next_cycle()

    async def _next(self, conn: h11.Connection, reader: asyncio.StreamReader) -> h11.Request | None:
        event = await self._next_event(conn, reader)
        return event if isinstance(event, h11.Request) else None

    async def _next_event(self, conn: h11.Connection, reader: asyncio.StreamReader) -> object:
        while True:
            event = conn.next_event()
            if event is not h11.NEED_DATA:
                return event
            data = await asyncio.wait_for(reader.read(1 << 16), READ_TIMEOUT)
            conn.receive_data(data)

    async def _check(self, url: str) -> str | None:
        """The reason ``allow`` gives for ``url`` (recorded), or None."""
        try:
            reason = await asyncio.to_thread(self.allow, url)
        except Exception as e:  # a policy that fails refuses
            reason = f"policy error: {type(e).__name__}"
        if reason is not None:
            self.refusals += 1
            if len(self.refused) < MAX_LISTED:
                self.refused.append(Refusal(url, reason))
        return reason

    async def _answer(
        self,
        conn: h11.Connection,
        writer: asyncio.StreamWriter,
        status: int,
        text: str,
        url: str = "-",
    ) -> None:
        """An answer of the proxy's own, then the connection closes: a small page whose
        first line is :attr:`marker`, the status and the URL."""
        body = (
            f"<!doctype html><title>{status}</title><body>"
            f"<p>{self.marker} {status} {html.escape(url.replace(' ', '%20'))}</p>"
            f"<p>{html.escape(text)}</p></body>\n"
        ).encode()
        headers = [
            ("content-type", "text/html; charset=utf-8"),
            ("content-length", str(len(body))),
            ("connection", "close"),
            ("cache-control", "no-store"),
        ]
        writer.write(conn.send(h11.Response(status_code=status, headers=headers)))
        writer.write(conn.send(h11.Data(data=body)))
        writer.write(conn.send(h11.EndOfMessage()))
        await writer.drain()

    # -- plain requests ----------------------------------------------------------------------
    async def _forward(
        self,
        conn: h11.Connection,
        writer: asyncio.StreamWriter,
        request: h11.Request,
        url: str,
        body: bytes,
    ) -> None:
        if not url.lower().startswith("http://"):
            reason = "not an absolute http:// URL"
            self.refusals += 1
            if len(self.refused) < MAX_LISTED:
                self.refused.append(Refusal(url, reason))
            await self._answer(conn, writer, 403, f"not fetched by the crawl: {reason}", url)
            return
        reason = await self._check(url)
        if reason is not None:
            await self._answer(conn, writer, 403, f"not fetched by the crawl: {reason}", url)
            return
        method = request.method.decode("ascii", "replace")
        headers = [
            (k.decode("latin-1"), v.decode("latin-1"))
            for k, v in request.headers
            if k.decode("latin-1").lower() not in HOP_BY_HOP
        ]
        assert self._client is not None
        try:
            req = self._client.build_request(method, url, headers=headers, content=body or None)
            res = await self._client.send(req, stream=True)
        except (httpx.HTTPError, ValueError) as e:
            await self._answer(conn, writer, 502, f"upstream: {type(e).__name__}", url)
            return
        self.forwarded += 1
        try:
            payload = bytearray()
            async for chunk in res.aiter_raw():
                payload += chunk
                if len(payload) > MAX_RESPONSE_BODY:
                    await self._answer(conn, writer, 502, "upstream body too large", url)
                    return
        except httpx.HTTPError as e:
            await self._answer(conn, writer, 502, f"upstream: {type(e).__name__}", url)
            return
        finally:
            await res.aclose()
        out = [(k, v) for k, v in res.headers.multi_items() if k.lower() not in HOP_BY_HOP]
        no_body = method == "HEAD" or res.status_code in NO_BODY_STATUSES
        if not no_body:
            out.append(("content-length", str(len(payload))))
        elif method == "HEAD" and "content-length" in res.headers:
            out.append(("content-length", res.headers["content-length"]))
        phrase = res.reason_phrase.encode("latin-1", "replace")
        head = h11.Response(status_code=res.status_code, headers=out, reason=phrase)
        writer.write(conn.send(head))
        if not no_body and payload:
            writer.write(conn.send(h11.Data(data=bytes(payload))))
        writer.write(conn.send(h11.EndOfMessage()))
        await writer.drain()

    # -- tunnels -----------------------------------------------------------------------------
    async def _connect(
        self,
        conn: h11.Connection,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        target: str,
    ) -> None:
        parts = urlsplit("//" + target)
        try:
            host, port = parts.hostname, parts.port
        except ValueError:
            host, port = None, None
        if not host or port is None:
            await self._answer(conn, writer, 400, "CONNECT needs host:port")
            return
        shown = f"[{host}]" if ":" in host else host
        url = f"https://{shown}/" if port == 443 else f"https://{shown}:{port}/"
        reason = None if _origin(url) == self.page_origin else await self._check(url)
        if reason is not None:
            await self._answer(conn, writer, 403, f"not fetched by the crawl: {reason}", url)
            return
        try:
            up_reader, up_writer = await asyncio.wait_for(
                asyncio.open_connection(host, port), CONNECT_TIMEOUT
            )
        except (OSError, TimeoutError):
            await self._answer(conn, writer, 502, "cannot connect", url)
            return
        self.tunnels += 1
        writer.write(conn.send(h11.Response(status_code=200, headers=[])))
        await writer.drain()
        early, _ = conn.trailing_data
        try:
            if early:
                up_writer.write(early)
            await asyncio.gather(_pipe(reader, up_writer), _pipe(up_reader, writer))
        finally:
            up_writer.close()
            with contextlib.suppress(Exception):
                await up_writer.wait_closed()


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """Bytes from ``reader`` to ``writer`` until either side ends."""
    try:
        while data := await reader.read(1 << 16):
            writer.write(data)
            await writer.drain()
    except OSError:
        pass
    finally:
        with contextlib.suppress(OSError):
            if writer.can_write_eof():
                writer.write_eof()
