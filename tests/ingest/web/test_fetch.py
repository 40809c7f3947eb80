"""The fetcher against hostile local servers: bodies bounded while they decode (a stacked gzip
bomb never produces more than the bound), only the encodings it asked for, retries only
where they help, a charset or a redirect that is not what it claims."""

from __future__ import annotations

import asyncio
import gzip
import io
import threading
import zlib
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import pytest

from cogitave.ingest.web.fetch import BoundedDecoder, Failure, Fetcher, Response, TooLarge
from cogitave.ingest.web.options import Manners
from tests.ingest.web.helpers import FAST, Route, serve

T = TypeVar("T")
LIMIT = 1024 * 1024


def run(job: Callable[[Fetcher], Awaitable[T]], manners: Manners = FAST) -> tuple[T, Fetcher]:
    async def go() -> tuple[T, Fetcher]:
        async with Fetcher(manners, "127.0.0.1") as f:
            return await job(f), f

    return asyncio.run(go())


def zeros_gzip(size: int) -> bytes:
    """gzip of ``size`` zero bytes, compressed a megabyte at a time (never held whole)."""
    z = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    block = bytes(1024 * 1024)
    parts = [z.compress(block) for _ in range(size // len(block))]
    return b"".join(parts) + z.flush()


def encoded(body: bytes, encoding: str) -> Route:
    return Route(body, headers={"Content-Type": "text/html", "Content-Encoding": encoding})


def test_a_stacked_gzip_bomb_is_refused_while_it_decodes() -> None:
    """gzip(gzip(100 MB of zeros)) is a few kilobytes; decoded step by step, no step produces
    more than the bound (one byte past it shows it is past)."""
    bomb = gzip.compress(zeros_gzip(100 * 1024 * 1024), 9)
    assert len(bomb) < 200_000
    with serve({"/bomb": encoded(bomb, "gzip, gzip")}) as s:
        res, f = run(lambda f: f.get(s.url + "/bomb", max_bytes=LIMIT))
    assert isinstance(res, Failure) and res.skip == "size"
    assert 0 < f.decoded_most <= LIMIT + 1


def test_the_decoder_bounds_every_stage() -> None:
    inner = zeros_gzip(20 * 1024 * 1024)
    d = BoundedDecoder(["gzip", "gzip"], LIMIT)
    got = 0
    with pytest.raises(TooLarge):
        for piece in d.feed(gzip.compress(inner)):
            got += len(piece)
    assert got <= LIMIT and d.most <= LIMIT + 1


@pytest.mark.parametrize(
    ("encoding", "why"),
    [("gzip, gzip, gzip", "more than 2"), ("br", "br"), ("zstd", "zstd"), ("lzma", "lzma")],
)
def test_encodings_not_asked_for_are_refused(encoding: str, why: str) -> None:
    body = gzip.compress(b"<html><body>x</body></html>")
    with serve({"/p": encoded(body, encoding)}) as s:
        res, _ = run(lambda f: f.get(s.url + "/p"))
        asked = s.log[-1][1]["Accept-Encoding"]
    assert asked == "gzip, deflate"
    assert isinstance(res, Failure) and res.skip == "encoding" and why in res.reason


def test_the_encodings_it_decodes() -> None:
    html = b"<html><body><p>" + b"words " * 2000 + b"</p></body></html>"
    raw = zlib.compressobj(6, zlib.DEFLATED, -zlib.MAX_WBITS)
    routes = {
        "/gzip": encoded(gzip.compress(html), "gzip"),
        "/x-gzip": encoded(gzip.compress(html), "x-gzip"),
        "/twice": encoded(gzip.compress(gzip.compress(html)), "gzip, gzip"),
        "/members": encoded(gzip.compress(html[:100]) + gzip.compress(html[100:]), "gzip"),
        "/deflate": encoded(zlib.compress(html), "deflate"),
        "/raw-deflate": encoded(raw.compress(html) + raw.flush(), "deflate"),
        "/identity": encoded(html, "identity"),
        "/bad": encoded(b"\x1f\x8bnot gzip at all", "gzip"),
    }
    with serve(routes) as s:

        async def all_of(f: Fetcher) -> dict[str, Response | Failure]:
            return {p: await f.get(s.url + p) for p in routes}

        got, _ = run(all_of)
    for path in set(routes) - {"/bad"}:
        res = got[path]
        assert isinstance(res, Response) and res.body == html, path
        assert "content-encoding" not in res.headers
    bad = got["/bad"]
    assert isinstance(bad, Failure) and bad.skip == "encoding"


def test_a_timeout_is_tried_once_more_and_a_refused_connection_never() -> None:
    release = threading.Event()

    def hang(handler: Any) -> tuple[int, dict[str, str], bytes]:
        release.wait(30)
        return 200, {}, b""

    slow = Manners(rate=0, timeout=0.2, deadline=0.2, retries=3, backoff=0.01)
    with serve({"/slow": Route(answer=hang)}) as s:
        try:
            res, f = run(lambda f: f.get(s.url + "/slow"), slow)
        finally:
            release.set()
        assert isinstance(res, Failure) and res.reason == "timeout"
        assert s.hits["/slow"] == 2 and f.requests == 2 and f.retried == 1
    dead = s.url  # the server is gone: its port refuses
    res, f = run(lambda f: f.get(dead + "/"), slow)
    assert isinstance(res, Failure) and res.reason == "connection"
    assert f.requests == 1 and f.retried == 0


def test_a_charset_that_is_not_a_text_encoding() -> None:
    body = "<p>café</p>".encode()
    for charset in ("idna", "punycode", "base64", "utf-7", "no-such-codec", "latin-1"):
        res = Response("http://h/", 200, {"content-type": f"text/html; charset={charset}"}, body)
        text = res.text()
        assert "caf" in text and "<p>" in text, charset


def test_a_redirect_to_a_data_url_is_a_refusal_not_an_exception() -> None:
    routes = {"/r": Route(status=302, headers={"Location": "data:text/html,<p>x</p>"}, etag=False)}
    with serve(routes) as s:
        res, f = run(lambda f: f.get(s.url + "/r", kind="start"))
    assert isinstance(res, Failure) and res.skip == "refused" and "scheme" in res.reason
    assert f.policy.refused == {"scheme": ["data:text/html,<p>x</p>"]}


def test_a_sink_gets_the_decoded_body_bounded_and_once() -> None:
    """A body streamed to a file: decoded, bounded as in memory, and a retried request (the
    first attempt dropped half-way) starts the file again instead of appending."""
    body = bytes(range(256)) * 2048  # 512 KiB
    calls = {"n": 0}

    def flaky(handler: Any) -> tuple[int, dict[str, str], bytes]:
        calls["n"] += 1
        if calls["n"] == 1:  # half the body, then the connection drops
            handler.send_response(200)
            handler.send_header("Content-Length", str(len(body)))
            handler.end_headers()
            handler.wfile.write(body[: len(body) // 2])
            handler.wfile.flush()
            raise ConnectionAbortedError("dropped on purpose")
        return 200, {}, body

    bomb = gzip.compress(zeros_gzip(20 * 1024 * 1024), 9)
    routes = {
        "/gz": encoded(gzip.compress(body), "gzip"),
        "/flaky": Route(answer=flaky),
        "/bomb": encoded(bomb, "gzip, gzip"),
        "/moved": Route(status=302, headers={"Location": "/gz"}, etag=False),
    }
    with serve(routes) as s:
        for path in ("/gz", "/moved", "/flaky"):
            sink = io.BytesIO(b"stale bytes of an earlier use")
            res, _ = run(lambda f, p=path, k=sink: f.get(s.url + p, sink=k))  # type: ignore[misc]
            assert isinstance(res, Response) and res.status == 200 and res.body == b"", path
            assert sink.getvalue() == body, path
        assert s.hits["/flaky"] == 2
        sink = io.BytesIO()
        res, f = run(lambda f: f.get(s.url + "/bomb", max_bytes=LIMIT, sink=sink))
    assert isinstance(res, Failure) and res.skip == "size"
    assert len(sink.getvalue()) <= LIMIT and f.decoded_most <= LIMIT + 1
