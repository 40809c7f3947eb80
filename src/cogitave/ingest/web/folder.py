"""A built HTML site on disk -> the same graph a crawl of it would give.

A folder that a generator built (Sphinx's ``html`` output with its ``objects.inv``, an MkDocs
``site``, any folder with an ``index.html`` and the assets a generator leaves) holds pages no
source tree has: autodoc's API reference, generated indexes, ``|version|`` resolved. So it is
read as HTML, by the crawler itself: :class:`FolderFetcher` answers the crawl's requests from
the folder's files (through the confined :class:`~cogitave.ingest.confined.TreeReader`:
nothing outside the folder, no symlink followed out, the same size bound), and
:func:`read_html_folder` runs :func:`~cogitave.ingest.web.crawl.crawl_site` over it with no
network at all: links, sitemaps, ``objects.inv``, extraction, Markdown and the graph are the
crawler's. The folder's pages get the URLs of ``--base-url``; else the site's own canonical
URL when its pages carry one (Sphinx's ``html_baseurl``, MkDocs' ``site_url``); else paths
from the site's root (``/api.html``), with a warning in the report.
"""

from __future__ import annotations

import mimetypes
import posixpath
import re
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING
from urllib.parse import unquote, urlsplit

from cogitave.ingest.confined import TreeReader
from cogitave.ingest.docs.read import DocsBatch
from cogitave.ingest.web.fetch import Failure, Response
from cogitave.ingest.web.options import CrawlOptions
from cogitave.schema import Schema

if TYPE_CHECKING:
    from cogitave.ingest.web.crawl import Progress

#: The origin the folder is served at inside the crawl (a reserved name: never resolved, never
#: reachable; pages get their public URLs from the base URL).
ORIGIN = "http://built-site.invalid"
#: What makes a folder a built site: an ``index.html`` and one of these beside it.
BUILT_MARKERS = ("objects.inv", "searchindex.js", "_static", "search/search_index.json",
                 "sitemap.xml", "assets", "static")  # fmt: skip
_CANONICAL = re.compile(
    rb"<link\b[^>]*\brel=[\"']?canonical[\"']?[^>]*\bhref=[\"']([^\"']+)[\"']"
    rb"|<link\b[^>]*\bhref=[\"']([^\"']+)[\"'][^>]*\brel=[\"']?canonical",
    re.IGNORECASE,
)


def is_built_site(path: Path) -> bool:
    """Whether ``path`` is a folder a generator built (``index.html`` and a marker)."""
    return (
        path.is_dir()
        and (path / "index.html").is_file()
        and any((path / m).exists() for m in BUILT_MARKERS)
    )


def no_addresses(host: str) -> list[str]:
    """The resolver of a folder's crawl: no name resolves (nothing goes to the network)."""
    return []


class FolderFetcher:
    """The crawl's fetcher over a folder: ``ORIGIN/path`` -> the file (a folder: its
    ``index.html``), a 404 for anything else, another host refused. Same interface as
    :class:`~cogitave.ingest.web.fetch.Fetcher`."""

    def __init__(self, root: Path, options: CrawlOptions) -> None:
        self.reader = TreeReader(root)
        self.max_bytes = options.manners.max_bytes
        self.requests = 0
        self.retried = 0
        self.delays: dict[str, float] = {}

    async def __aenter__(self) -> FolderFetcher:
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        return None

    async def get(
        self,
        url: str,
        headers: Mapping[str, str] | None = None,
        *,
        kind: str = "page",
        max_bytes: int | None = None,
    ) -> Response | Failure:
        parts = urlsplit(url)
        if f"{parts.scheme}://{parts.netloc}" != ORIGIN:
            return Failure(url, "refused another site (a folder is read alone)", skip="refused")
        self.requests += 1
        rel = posixpath.normpath("/" + unquote(parts.path)).lstrip("/")
        path = self.reader.root / rel if rel not in ("", ".") else self.reader.root
        if path.is_dir():
            path = path / "index.html"
        where = self.reader.locate(path)
        if where == "outside":  # a symlink out of the folder: never read
            self.reader.is_file(path)  # recorded with its reason
            return Failure(url, "refused: outside the folder", skip="refused")
        if where == "missing":
            return Response(url, 404, {"content-type": "text/plain"}, b"")
        body = self.reader.read_bytes(path)
        if body is None:  # over the size bound, or refused: the reader recorded why
            return Failure(url, f"larger than {self.max_bytes:,} bytes or refused", skip="size")
        kind_of, _ = mimetypes.guess_type(path.name)
        ctype = kind_of or ("text/html" if path.suffix in (".html", ".htm") else "text/plain")
        if ctype.startswith("text/") and "charset" not in ctype:
            ctype += "; charset=utf-8"
        return Response(url, 200, {"content-type": ctype}, body)


def canonical_base(root: Path) -> str | None:
    """The public URL of the folder's root from its ``index.html``'s canonical link (the
    link of ``index.html`` minus that file's name), or None."""
    try:
        with open(root / "index.html", "rb") as f:
            head = f.read(64 * 1024)
    except OSError:
        return None
    m = _CANONICAL.search(head)
    if m is None:
        return None
    href = (m.group(1) or m.group(2) or b"").decode("utf-8", "replace").strip()
    parts = urlsplit(href)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        return None
    path = parts.path
    if path.endswith("/index.html"):
        path = path[: -len("index.html")]
    elif not path.endswith("/"):
        path = path.rsplit("/", 1)[0] + "/"
    return f"{parts.scheme}://{parts.netloc}{path}"


def folder_options(root: Path, options: CrawlOptions) -> tuple[CrawlOptions, str | None]:
    """The crawl options of a folder read (no browser, the folder's public URL) and the
    warning to report when no public URL is known."""
    base = options.base_url or canonical_base(root)
    warning = None
    if base is None:
        base = "/"
        warning = (
            f"{root}: no public URL (no --base-url, and its pages name no canonical URL): "
            "hits link to paths from the site's root (/page.html); pass --base-url"
        )
    return replace(options, render="never", base_url=base, scopes=()), warning


def read_html_folder(
    path: str | Path,
    options: CrawlOptions | None = None,
    schema: Schema | None = None,
    progress: Progress | None = None,
) -> DocsBatch:
    """The docs graph of the built site in folder ``path`` (see the module doc)."""
    from cogitave.ingest.web.build import read_crawl
    from cogitave.ingest.web.crawl import crawl_site

    root = Path(path).resolve()
    opts, warning = folder_options(root, options or CrawlOptions())
    crawl = crawl_site(
        ORIGIN + "/",
        opts,
        progress=progress,
        resolve=no_addresses,
        fetcher=lambda policy: FolderFetcher(root, opts),
    )
    if warning:
        crawl.report.note(warning)
    batch = read_crawl(crawl, schema)
    batch.report = batch.report.replace(ORIGIN + "/", f"{root}/")  # the folder, not the origin
    return batch
