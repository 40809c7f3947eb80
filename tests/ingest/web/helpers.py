"""Helpers the crawler tests share: a docs site served on 127.0.0.1 from this process (static
pages with ETags, or a folder a generator built), pages of HTML, fast crawl manners, a
forward proxy that lets a local server play a public host, and the real generators (Sphinx,
MkDocs with Material) building small sites once per session."""

from __future__ import annotations

import hashlib
import http.client
import shutil
import subprocess
import sys
import textwrap
import threading
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from cogitave.ingest.web.options import CrawlOptions, Manners

FAST = Manners(concurrency=4, rate=0, timeout=5, deadline=10, retries=2, backoff=0.05)
"""Manners for a local server: no rate limit, short timeouts and backoff."""


def options(**kw: Any) -> CrawlOptions:
    """Crawl options with :data:`FAST` manners (``manners=`` to change them)."""
    kw.setdefault("manners", FAST)
    return CrawlOptions(**kw)


@dataclass
class Route:
    """One path's answer: a status, headers, a body; ``etag`` answers 304 to a matching
    ``If-None-Match``. ``answer`` (handler -> (status, headers, body)) replaces it all."""

    body: bytes = b""
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    etag: bool = True
    answer: Callable[[SimpleHTTPRequestHandler], tuple[int, dict[str, str], bytes]] | None = None


def page(title: str, body: str, *, head: str = "", lang: str = "en", nav: str = "") -> Route:
    """An HTML page (a generic site: ``<main>`` holds the content)."""
    html = f"""<!doctype html>
<html lang="{lang}"><head><meta charset="utf-8"><title>{title} - Demo</title>{head}</head>
<body><header><a href="/">Demo</a></header>
<nav class="sidebar">{nav}</nav>
<main><article><h1 id="top">{title}</h1>
{textwrap.dedent(body)}
</article></main>
<footer>Copyright Demo. <a href="https://demo.example/about/">About</a></footer></body></html>"""
    return Route(html.encode("utf-8"), headers={"Content-Type": "text/html; charset=utf-8"})


class Server:
    """A site on 127.0.0.1: ``routes`` by path (a path not there is a 404), every request
    counted in ``hits`` and kept in ``log`` (path, headers); or a folder served as files."""

    def __init__(self, routes: dict[str, Route] | None = None, folder: Path | None = None) -> None:
        self.routes = dict(routes or {})
        self.hits: Counter[str] = Counter()
        self.log: list[tuple[str, dict[str, str]]] = []
        server = self

        class Handler(SimpleHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                return None

            def do_GET(self) -> None:
                path = self.path.split("?", 1)[0]
                server.hits[path] += 1
                server.log.append((path, dict(self.headers.items())))
                if folder is not None:
                    super().do_GET()
                    return
                route = server.routes.get(path)
                if route is None:
                    self._send(404, {"Content-Type": "text/html"}, b"<html><body>no</body></html>")
                    return
                if route.answer is not None:
                    self._send(*route.answer(self))
                    return
                headers = dict(route.headers)
                if route.etag and route.status == 200:
                    tag = '"' + hashlib.sha256(route.body).hexdigest()[:16] + '"'
                    headers["ETag"] = tag
                    if self.headers.get("If-None-Match") == tag:
                        self._send(304, {"ETag": tag}, b"")
                        return
                self._send(route.status, headers, route.body)

            def _send(self, status: int, headers: dict[str, str], body: bytes) -> None:
                self.send_response(status)
                for k, v in headers.items():
                    self.send_header(k, v)
                if status != 304:
                    self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                if status != 304:
                    self.wfile.write(body)

        handler = partial(Handler, directory=str(folder)) if folder is not None else Handler
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def __enter__(self) -> Server:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@contextmanager
def serve(routes: dict[str, Route] | None = None, folder: Path | None = None) -> Iterator[Server]:
    """A :class:`Server` running for the ``with`` block."""
    with Server(routes, folder) as s:
        yield s


class Proxy:
    """A forward HTTP proxy on 127.0.0.1 (``HTTP_PROXY``): a request for a host in ``hosts``
    (``docs.example.com``) goes to that local :class:`Server`, one for ``127.0.0.1:PORT`` or
    ``localhost:PORT`` to that port, so a crawl can start on a name a test resolver calls
    public. Every host asked for is counted in ``hits``."""

    def __init__(self, hosts: dict[str, Server]) -> None:
        self.hits: Counter[str] = Counter()
        proxy = self

        class Handler(SimpleHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                return None

            def do_GET(self) -> None:
                parts = urlsplit(self.path)
                proxy.hits[parts.netloc] += 1
                server = hosts.get(parts.netloc)
                port = server.httpd.server_address[1] if server else parts.port or 80
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
                path = parts.path + (f"?{parts.query}" if parts.query else "")
                heads = {k: v for k, v in self.headers.items() if k.lower() != "proxy-connection"}
                try:
                    conn.request("GET", path or "/", headers=heads)
                    res = conn.getresponse()
                    body = res.read()
                except OSError:
                    self.send_response(502)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                self.send_response(res.status)
                for k, v in res.getheaders():
                    if k.lower() not in ("content-length", "transfer-encoding", "connection"):
                        self.send_header(k, v)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def __enter__(self) -> Proxy:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def public(*names: str) -> Callable[[str], list[str]]:
    """A resolver for which ``names`` are public hosts (and every other name unknown)."""
    return lambda host: ["93.184.216.34"] if host in names else []


# -- real generators ---------------------------------------------------------------------------
SPHINX_SOURCES: dict[str, str] = {
    "conf.py": 'project = "Widgets"\nrelease = "2.1"\nhtml_theme = "alabaster"\n',
    "index.rst": """
        Widgets
        =======

        Widgets make small things. Read the guide first, then the reference.

        .. toctree::
           :maxdepth: 2

           guide/install
           guide/usage
           reference
        """,
    "guide/install.rst": """
        Installing widgets
        ==================

        Widgets install with pip on any platform that runs Python.

        With pip
        --------

        .. code-block:: bash

           pip install widgets

        From a checkout
        ---------------

        Build the wheel from the repository, then :doc:`usage` shows the first steps.
        """,
    "guide/usage.rst": """
        Using widgets
        =============

        Call :func:`widgets.make` to make a widget; a :class:`widgets.Widget` remembers its
        size.

        .. code-block:: python

           import widgets
           w = widgets.make(3)
        """,
    "reference.rst": """
        Reference
        =========

        .. py:module:: widgets

        Making widgets
        --------------

        .. py:function:: make(size, *, colour="red")

           Make a widget of *size* squares, painted *colour*.

        .. py:class:: Widget(size)

           A widget and its size.

           .. py:method:: grow(by=1)

              Grow the widget *by* squares.
        """,
}
MKDOCS_SOURCES: dict[str, str] = {
    "mkdocs.yml": """
        site_name: Gadgets
        site_url: https://gadgets.example.org/
        theme:
          name: material
        markdown_extensions:
          - attr_list
          - toc:
              permalink: true
        nav:
          - Home: index.md
          - Tutorial:
              - tutorial/setup.md
              - tutorial/first-gadget.md
          - Reference: reference.md
        """,
    "docs/index.md": """
        # Gadgets

        Gadgets are small tools. Start with [the setup](tutorial/setup.md) and read on.
        """,
    "docs/tutorial/setup.md": """
        # Setup

        Install the gadget toolkit before you build your first gadget.

        ## Install with pip

        ```bash
        pip install gadgets
        ```

        ## Check the install

        Run the doctor command and read its advice.
        """,
    "docs/tutorial/first-gadget.md": """
        # Your first gadget

        Build a gadget from parts, then [check the install](setup.md#check-the-install).

        ## Assemble the parts { #assemble }

        ```python
        from gadgets import Gadget
        g = Gadget(parts=3)
        ```
        """,
    "docs/reference.md": """
        # Reference

        Every option a gadget takes, and what it changes in the assembled tool.

        ## Options

        The `parts` option counts parts; `colour` paints them.
        """,
}


def _write(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return root


_BUILT: dict[str, tuple[Path, Path]] = {}


def sphinx_site(factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(sources, built HTML) of a small Sphinx project, built once per session by Sphinx."""
    if "sphinx" not in _BUILT:
        pytest.importorskip("sphinx")
        root = factory.mktemp("sphinx-site")
        src = _write(root / "src", SPHINX_SOURCES)
        out = root / "html"
        cmd = [sys.executable, "-m", "sphinx", "-q", "-b", "html", str(src), str(out)]
        subprocess.run(cmd, check=True, capture_output=True, timeout=300)
        _BUILT["sphinx"] = (src, out)
    return _BUILT["sphinx"]


def mkdocs_site(factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(sources, built HTML) of a small MkDocs + Material project, built once per session."""
    if "mkdocs" not in _BUILT:
        pytest.importorskip("material")
        root = factory.mktemp("mkdocs-site")
        src = _write(root / "src", MKDOCS_SOURCES)
        out = root / "html"
        cmd = [sys.executable, "-m", "mkdocs", "build", "-q", "-f", str(src / "mkdocs.yml"),
               "-d", str(out)]  # fmt: skip
        subprocess.run(cmd, check=True, capture_output=True, timeout=300, cwd=src)
        _BUILT["mkdocs"] = (src, out)
    return _BUILT["mkdocs"]


def copy_tree(src: Path, dst: Path) -> Path:
    """A copy of a built site, to change without touching the session's."""
    shutil.copytree(src, dst)
    return dst
