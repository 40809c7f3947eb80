"""The rendering browser under the crawl's fetch policy: the filtering proxy alone (a plain
client through it), then the system's Chromium confined by it (a page on one local server
reaching for another port by script, image, redirect and navigation), its sandbox, and a
crawl whose JavaScript shell redirects the browser elsewhere."""

from __future__ import annotations

import asyncio
import contextlib
import os
import pwd
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import SimpleHTTPRequestHandler

import httpx
import pytest

import cogitave.ingest.web.render as render_module
from cogitave.errors import IngestError
from cogitave.ingest.web.crawl import crawl_site
from cogitave.ingest.web.proxy import FilteringProxy, origins
from cogitave.ingest.web.render import (
    Launch,
    RenderError,
    browser_args,
    find_browser,
    launch_mode,
    render,
)
from tests.ingest.web.helpers import Route, Server, options, serve

SECRET = "B-ONLY-CONTENT-7f3a"
"""Text only server B serves: it must never reach a DOM."""

needs_browser = pytest.mark.skipif(find_browser() is None, reason="no Chromium on this system")


def html(body: str) -> Route:
    return Route(body.encode(), headers={"Content-Type": "text/html; charset=utf-8"}, etag=False)


@contextmanager
def counted(routes: dict[str, Route]) -> Iterator[tuple[Server, list[object]]]:
    """A server, and the list of every TCP connection it accepted (not only whole
    requests)."""
    with serve(routes) as s:
        accepted: list[object] = []

        def verify(request: object, address: object) -> bool:
            accepted.append(address)
            return True

        s.httpd.verify_request = verify  # type: ignore[method-assign]
        yield s, accepted


def server_b() -> dict[str, Route]:
    """B: a page, an image, JSON, all readable from any origin."""
    cors = {"Access-Control-Allow-Origin": "*"}
    return {
        "/": html(f"<main><h1>B</h1><p>{SECRET}</p></main>"),
        "/img.png": Route(b"\x89PNG" + SECRET.encode(), headers={"Content-Type": "image/png"}),
        "/data": Route(SECRET.encode(), headers={"Content-Type": "text/plain", **cors}),
    }


# -- the proxy ---------------------------------------------------------------------------------
async def _through(proxy: FilteringProxy, url: str) -> httpx.Response:
    async with httpx.AsyncClient(proxy=proxy.url, trust_env=False) as client:
        return await client.get(url)


async def _raw(proxy: FilteringProxy, data: bytes) -> bytes:
    """What the proxy answers to ``data`` sent on a fresh connection, up to its close."""
    reader, writer = await asyncio.open_connection("127.0.0.1", proxy.port)
    writer.write(data)
    await writer.drain()
    out = await reader.read()
    writer.close()
    return out


def test_the_proxy_forwards_what_is_allowed_and_refuses_the_rest() -> None:
    a_routes = {"/page": html("<p>A's page</p>"), "/moved": Route(b"", status=302, etag=False)}
    with counted(a_routes) as (a, _), counted(server_b()) as (b, b_conns):
        a_routes["/moved"].headers["Location"] = b.url + "/"

        async def run() -> tuple[FilteringProxy, list[httpx.Response]]:
            async with FilteringProxy(origins([a.url])) as proxy:
                answers = [
                    await _through(proxy, a.url + "/page"),
                    await _through(proxy, b.url + "/data"),
                    await _through(proxy, a.url + "/moved"),
                ]
            return proxy, answers

        proxy, (ok, refused, moved) = asyncio.run(run())
    assert ok.status_code == 200 and ok.text == "<p>A's page</p>"
    assert refused.status_code == 403 and SECRET not in refused.text
    # a redirect is handed to the client, not followed by the proxy
    assert moved.status_code == 302 and moved.headers["location"] == b.url + "/"
    assert b.hits.total() == 0 and b_conns == []
    assert a.hits["/page"] == 1 and a.hits["/moved"] == 1
    assert [(r.url, r.reason) for r in proxy.refused] == [(b.url + "/data", "origin")]
    assert proxy.refusals == 1 and proxy.forwarded == 2


def connect(port: int) -> str:
    return f"CONNECT 127.0.0.1:{port} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n"


def test_connect_is_checked_on_the_host_and_port_before_a_tunnel_opens() -> None:
    a_site = counted({"/x": html("<p>through the tunnel</p>")})
    with a_site as (a, a_conns), counted(server_b()) as (b, b_conns):
        a_port, b_port = a.httpd.server_address[1], b.httpd.server_address[1]
        allow = origins([f"https://127.0.0.1:{a_port}/"])

        async def run() -> tuple[FilteringProxy, bytes, bytes]:
            async with FilteringProxy(allow) as proxy:
                no = await _raw(proxy, connect(b_port).encode())
                yes = await _raw(
                    proxy, (connect(a_port) + "GET /x HTTP/1.0\r\nHost: a\r\n\r\n").encode()
                )
            return proxy, no, yes

        proxy, no, yes = asyncio.run(run())
    assert no.startswith(b"HTTP/1.1 403")
    assert b_conns == [] and b.hits.total() == 0
    assert yes.startswith(b"HTTP/1.1 200") and b"through the tunnel" in yes
    assert proxy.tunnels == 1 and len(a_conns) == 1
    assert [r.url for r in proxy.refused] == [f"https://127.0.0.1:{b_port}/"]


def test_a_tunnel_to_the_page_s_own_origin_needs_no_second_check() -> None:
    """A policy that admits one path of a host (the page) still lets the page's ``https``
    connection open: the page was checked whole before the browser started."""
    with counted({"/x": html("<p>own origin</p>")}) as (a, a_conns):
        port = a.httpd.server_address[1]
        page = f"https://127.0.0.1:{port}/docs/page"

        def allow(url: str) -> str | None:
            return None if url == page else "scope"

        async def run() -> tuple[FilteringProxy, bytes]:
            async with FilteringProxy(allow, page=page) as proxy:
                get = "GET /x HTTP/1.0\r\nHost: a\r\n\r\n"
                return proxy, await _raw(proxy, (connect(port) + get).encode())

        proxy, out = asyncio.run(run())
    assert out.startswith(b"HTTP/1.1 200") and b"own origin" in out
    assert proxy.tunnels == 1 and proxy.refusals == 0 and len(a_conns) == 1


def test_each_request_on_a_kept_alive_connection_is_checked() -> None:
    """The browser reuses its connection to the proxy: the second request on it is checked
    as the first was."""
    with counted({"/x": html("<p>A</p>")}) as (a, _), counted(server_b()) as (b, b_conns):

        def get(url: str, last: bool = False) -> str:
            host = url.split("/")[2]
            close = "Connection: close\r\n" if last else ""
            return f"GET {url} HTTP/1.1\r\nHost: {host}\r\n{close}\r\n"

        async def run() -> tuple[FilteringProxy, bytes]:
            async with FilteringProxy(origins([a.url])) as proxy:
                both = get(a.url + "/x") + get(b.url + "/data", last=True)
                return proxy, await _raw(proxy, both.encode())

        proxy, out = asyncio.run(run())
    assert out.startswith(b"HTTP/1.1 200") and b"HTTP/1.1 403" in out
    assert SECRET.encode() not in out
    assert b.hits.total() == 0 and b_conns == []
    assert [r.url for r in proxy.refused] == [b.url + "/data"]


def test_a_request_that_is_not_absolute_is_refused() -> None:
    async def run() -> tuple[FilteringProxy, bytes]:
        async with FilteringProxy(lambda url: None) as proxy:
            return proxy, await _raw(proxy, b"GET /x HTTP/1.1\r\nHost: a\r\n\r\n")

    proxy, out = asyncio.run(run())
    assert out.startswith(b"HTTP/1.1 403") and proxy.forwarded == 0


def test_a_policy_that_fails_refuses() -> None:
    def broken(url: str) -> str | None:
        raise RuntimeError("no policy")

    with counted(server_b()) as (b, b_conns):

        async def run() -> tuple[FilteringProxy, httpx.Response]:
            async with FilteringProxy(broken) as proxy:
                return proxy, await _through(proxy, b.url + "/data")

        proxy, answer = asyncio.run(run())
    assert answer.status_code == 403 and b_conns == []
    assert proxy.refused[0].reason == "policy error: RuntimeError"


def test_origins_compares_scheme_host_and_port() -> None:
    allow = origins(["http://127.0.0.1:8000/docs/"])
    assert allow("http://127.0.0.1:8000/assets/app.js") is None
    assert allow("HTTP://127.0.0.1:8000/") is None
    assert allow("http://127.0.0.1:8001/") == "origin"
    assert allow("https://127.0.0.1:8000/") == "origin"
    assert allow("http://localhost:8000/") == "origin"
    assert origins(["https://docs.example/"])("https://docs.example:443/x") is None


# -- the browser -------------------------------------------------------------------------------
def _render(url: str, allow_origin: str) -> render_module.Rendered:
    browser = find_browser()
    assert browser is not None
    return asyncio.run(render(browser, url, "cogitave-test", allow=origins([allow_origin])))


@needs_browser
def test_scripts_and_images_cannot_reach_another_port() -> None:
    with counted(server_b()) as (b, b_conns):
        shell = f"""<!doctype html><html><head><title>A</title></head><body>
        <div id="out">waiting</div><img src="{b.url}/img.png">
        <script>
        document.body.insertAdjacentHTML('beforeend', '<main><h1>Rendered by A</h1></main>');
        fetch("{b.url}/data").then(r => r.text())
          .then(t => {{ document.getElementById('out').textContent = 'got ' + t; }})
          .catch(e => {{ document.getElementById('out').textContent = 'failed'; }});
        new Image().src = "{b.url.replace("127.0.0.1", "localhost")}/img.png";
        </script></body></html>"""
        with counted({"/": html(shell)}) as (a, _):
            done = _render(a.url + "/", a.url)
    assert "Rendered by A" in done.html
    assert SECRET not in done.html
    assert b.hits.total() == 0 and b_conns == []
    refused = {r.url for r in done.refused}
    assert {b.url + "/img.png", b.url + "/data"} <= refused
    assert done.forwarded >= 1 and done.refusals >= 2


@needs_browser
def test_no_kind_of_request_reaches_another_port() -> None:
    """XHR, a worker's fetch, a WebSocket, EventSource, a beacon, an iframe, a stylesheet's
    image, a prefetch and a form: none of them opens a connection to B."""
    with counted(server_b()) as (b, b_conns):
        ws = b.url.replace("http://", "ws://")
        shell = f"""<!doctype html><html><head><title>A</title>
        <link rel="prefetch" href="{b.url}/prefetch"><link rel="stylesheet" href="{b.url}/s.css">
        <style>body {{ background: url("{b.url}/bg.png"); }}</style></head><body>
        <iframe src="{b.url}/"></iframe>
        <form id="f" method="post" action="{b.url}/form" target="sink"></form>
        <iframe name="sink"></iframe>
        <script>
        const x = new XMLHttpRequest(); x.open("GET", "{b.url}/xhr"); x.send();
        new Worker("/worker.js");
        try {{ new WebSocket("{ws}/socket"); }} catch (e) {{}}
        try {{ new EventSource("{b.url}/events"); }} catch (e) {{}}
        navigator.sendBeacon("{b.url}/beacon", "x");
        document.getElementById("f").submit();
        document.body.insertAdjacentHTML('beforeend', '<p>Rendered by A</p>');
        </script></body></html>"""
        worker = Route(
            f'fetch("{b.url}/from-worker");'.encode(),
            headers={"Content-Type": "text/javascript"},
            etag=False,
        )
        with counted({"/": html(shell), "/worker.js": worker}) as (a, _):
            done = _render(a.url + "/", a.url)
    assert "Rendered by A" in done.html and SECRET not in done.html
    assert b.hits.total() == 0 and b_conns == []
    assert a.hits["/worker.js"] == 1
    refused = {r.url for r in done.refused}
    assert {b.url + "/xhr", b.url + "/from-worker"} <= refused


@needs_browser
def test_webrtc_sends_no_udp() -> None:
    """A STUN server on a loopback UDP port gets no datagram from the page's peer
    connection."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as udp:
        udp.bind(("127.0.0.1", 0))
        udp.setblocking(False)
        port = udp.getsockname()[1]
        shell = f"""<!doctype html><body><p id="o">Rendered by A</p><script>
        for (let i = 0; i < 5; i++) {{
          const pc = new RTCPeerConnection({{iceServers: [{{urls: "stun:127.0.0.1:{port}"}}]}});
          pc.createDataChannel("d");
          pc.createOffer().then(o => pc.setLocalDescription(o));
        }}
        </script></body>"""
        with counted({"/": html(shell)}) as (a, _):
            done = _render(a.url + "/", a.url)
        datagrams = 0
        with contextlib.suppress(BlockingIOError):
            while udp.recv(2048) is not None:
                datagrams += 1
    assert "Rendered by A" in done.html
    assert datagrams == 0


@needs_browser
def test_a_redirect_of_the_browser_to_another_port_is_refused() -> None:
    with counted(server_b()) as (b, b_conns):
        away = Route(b"", status=302, headers={"Location": b.url + "/"}, etag=False)
        with counted({"/": away}) as (a, _), pytest.raises(RenderError, match="does not fetch"):
            _render(a.url + "/", a.url)
    assert b.hits.total() == 0 and b_conns == []


@needs_browser
def test_a_redirect_within_the_origin_is_followed() -> None:
    routes = {
        "/": Route(b"", status=302, headers={"Location": "/real/"}, etag=False),
        "/real/": html("<script>document.write('<p>built by ' + 'script</p>')</script>"),
    }
    with counted(routes) as (a, _):
        done = _render(a.url + "/", a.url)
    assert "built by script" in done.html and a.hits["/real/"] == 1


@needs_browser
def test_a_script_navigating_to_another_port_is_not_rendered() -> None:
    with counted(server_b()) as (b, b_conns):
        shell = f"<!doctype html><script>location.href = '{b.url}/';</script>"
        a_site = counted({"/": html(shell)})
        with a_site as (a, _), pytest.raises(RenderError, match="does not fetch"):
            _render(a.url + "/", a.url)
    assert b.hits.total() == 0 and b_conns == []


@needs_browser
def test_the_browsers_error_page_is_not_a_dom() -> None:
    with serve({}) as gone:
        url = gone.url + "/"
    with pytest.raises(RenderError, match="could not load"):
        _render(url, url)


@needs_browser
def test_a_refused_or_failed_tunnel_gives_no_dom() -> None:
    """A redirect to ``https://`` on another port is refused at ``CONNECT``; an allowed
    ``https://`` host that does not answer fails there: the browser's error page is no DOM."""
    with counted(server_b()) as (b, b_conns):
        b_tls = b.url.replace("http://", "https://") + "/"
        away = Route(b"", status=302, headers={"Location": b_tls}, etag=False)
        # Chromium answers a refused tunnel with its error page (ERR_...) or, as 156 does, with
        # no DOM at all: either way nothing is indexed and the other server saw nothing.
        with counted({"/": away}) as (a, _), pytest.raises(RenderError, match=r"ERR_|no DOM"):
            _render(a.url + "/", a.url)
    assert b.hits.total() == 0 and b_conns == []
    with serve({}) as gone:
        url = gone.url.replace("http://", "https://") + "/"
    with pytest.raises(RenderError, match=r"could not load it \(ERR_|no DOM"):
        _render(url, url)


@needs_browser
def test_the_page_itself_is_checked_before_the_browser_starts() -> None:
    with counted(server_b()) as (b, b_conns), pytest.raises(RenderError, match="refused"):
        _render(b.url + "/", "http://127.0.0.1:1/")
    assert b_conns == []


@needs_browser
def test_a_crawled_shell_that_sends_the_browser_elsewhere_indexes_nothing_of_it() -> None:
    """The shell is served to the crawler; the browser's navigation (``Sec-Fetch-Mode``) gets a
    302 to another port."""
    with counted(server_b()) as (b, b_conns):
        shell = (
            b"<!doctype html><html><head><title>App</title></head><body><div id='root'></div>"
            b"<script src='/app.js'></script></body></html>"
        )

        def answer(h: SimpleHTTPRequestHandler) -> tuple[int, dict[str, str], bytes]:
            if h.headers.get("Sec-Fetch-Mode") == "navigate":
                return 302, {"Location": b.url + "/"}, b""
            return 200, {"Content-Type": "text/html"}, shell

        with counted({"/": Route(answer=answer)}) as (a, _):
            try:
                crawl = crawl_site(a.url + "/", options())
            except IngestError:
                crawl = None
    assert b.hits.total() == 0 and b_conns == []
    if crawl is not None:
        assert all(SECRET not in p.markdown for p in crawl.pages)


# -- the sandbox -------------------------------------------------------------------------------
def test_without_a_working_sandbox_the_browser_runs_with_no_sandbox(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    async def fails(args: list[str], launch: Launch) -> bytes:
        raise RenderError("No usable sandbox!")

    monkeypatch.setattr(render_module, "_run", fails)
    monkeypatch.setattr(render_module, "_LAUNCH", {})
    launch = asyncio.run(launch_mode("/nonexistent/chromium"))
    assert launch == Launch(False)
    assert "--no-sandbox" in browser_args("chromium", "/tmp/p", "http://127.0.0.1:1", launch)
    assert "--no-sandbox" not in browser_args(
        "chromium", "/tmp/p", "http://127.0.0.1:1", Launch(True)
    )


@needs_browser
def test_without_the_sandbox_the_proxy_still_confines_the_page(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    browser = find_browser()
    monkeypatch.setattr(render_module, "_LAUNCH", {browser: Launch(False)})
    with counted(server_b()) as (b, b_conns):
        shell = f"""<!doctype html><body><img src="{b.url}/img.png"><script>
        fetch("{b.url}/data").then(r => r.text()).then(t => document.write(t));
        document.body.insertAdjacentHTML("beforeend", "<p>Rendered by A</p>");
        </script></body>"""
        with counted({"/": html(shell)}) as (a, _):
            done = _render(a.url + "/", a.url)
    assert done.sandboxed is False
    assert "Rendered by A" in done.html and SECRET not in done.html
    assert b.hits.total() == 0 and b_conns == []


@needs_browser
@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="no /proc")
def test_the_browser_is_sandboxed_where_the_platform_allows() -> None:
    """Seen from /proc while the page loads: the browser runs without ``--no-sandbox`` when
    the sandbox starts here, and as ``nobody`` when we are root."""
    browser = find_browser()
    assert browser is not None
    launch = asyncio.run(launch_mode(browser))
    agent = f"cogitave-sandbox-test-{os.getpid()}"
    seen: list[tuple[int, list[str]]] = []

    def allow(url: str) -> str | None:
        if not seen:
            seen.extend(_processes_with(f"--user-agent={agent}"))
        return None if url.startswith(a.url) else "origin"

    page = html("<script>document.write('<p>sandboxed ' + 'page</p>')</script>")
    with counted({"/": page}) as (a, _):
        done = asyncio.run(render(browser, a.url + "/", agent, allow=allow))
    assert "sandboxed page" in done.html and done.sandboxed == launch.sandboxed
    assert seen, "the browser was not running while its requests were checked"
    for uid, args in seen:
        assert ("--no-sandbox" in args) == (not launch.sandboxed)
        if launch.sandboxed and os.geteuid() == 0:
            assert uid == pwd.getpwnam("nobody").pw_uid
        elif not launch.sandboxed:
            assert uid == os.geteuid()


def _processes_with(arg: str) -> list[tuple[int, list[str]]]:
    """The real user id and arguments of each process whose command line holds ``arg``."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                args = [a.decode("utf-8", "replace") for a in f.read().split(b"\0") if a]
            with open(f"/proc/{entry}/status") as f:
                uid = next(int(line.split()[1]) for line in f if line.startswith("Uid:"))
        except (OSError, StopIteration):
            continue
        if arg in args:
            found.append((uid, args))
    return found
