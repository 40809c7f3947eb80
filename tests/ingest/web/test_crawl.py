"""A crawl against a site served from this process: discovery, manners, redirects, bad start
pages, the failure limit, re-sync with 304s, rendering an empty JavaScript shell."""

from __future__ import annotations

import asyncio
import gzip
import time
from typing import Any

import pytest

from cogitave.errors import CrawlFailedError, IngestError, InputError
from cogitave.ingest.web import policy as policy_module
from cogitave.ingest.web.build import read_crawl
from cogitave.ingest.web.crawl import crawl_site
from cogitave.ingest.web.fetch import Failure, Fetcher, Response
from cogitave.ingest.web.options import Manners
from cogitave.ingest.web.render import find_browser
from tests.conftest import IN_CI
from tests.ingest.web.helpers import FAST, Proxy, Route, options, page, public, serve

PROSE = "This page explains one part of the demo in enough words to be an answer. " * 3


def site(**extra: Route) -> dict[str, Route]:
    """A small docs site under /docs/: linked pages, one only in the sitemap, one only in
    llms.txt, a disallowed one, a French one, an image, a link off the site."""
    nav = "<a href='/docs/'>Home</a> <a href='/docs/guide/'>Guide</a>"
    routes = {
        "/robots.txt": Route(b"User-agent: *\nDisallow: /docs/private/\n"),
        "/docs/": page("Home", f"""<p>{PROSE}</p>
            <p><a href='guide/'>Guide</a> <a href='private/secret.html'>secret</a>
            <a href='/fr/docs/'>Français</a> <a href='logo.png'>logo</a>
            <a href='https://elsewhere.example/x'>elsewhere</a> <a href='/blog/'>blog</a></p>""",
                       nav=nav),
        "/docs/guide/": page("Guide", f"""<p>{PROSE}</p>
            <h2 id="steps">Steps</h2><p>Then read <a href='../api/#client'>the client</a>.</p>
            <pre><code class='language-python'>import demo</code></pre>""", nav=nav),
        "/docs/api/": page("API", f"<p>{PROSE}</p><h2 id='client'>Client</h2><p>{PROSE}</p>"),
        "/docs/only-in-sitemap/": page("Sitemap page", f"<p>{PROSE}</p>"),
        "/docs/only-in-llms/": page("Llms page", f"<p>{PROSE}</p>"),
        "/docs/private/secret.html": page("Secret", f"<p>{PROSE}</p>"),
        "/fr/docs/": page("Accueil", f"<p>{PROSE}</p>", lang="fr"),
        "/sitemap.xml": Route(b"""<?xml version="1.0"?>
            <urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
            <url><loc>URL/docs/only-in-sitemap/</loc></url></urlset>"""),
        "/docs/llms.txt": Route(b"# Demo\n\n- [Llms page](only-in-llms/): listed here only\n",
                                headers={"Content-Type": "text/plain"}),
    }  # fmt: skip
    routes.update(extra)
    return routes


def with_sitemap_host(routes: dict[str, Route], url: str) -> dict[str, Route]:
    sm = routes["/sitemap.xml"]
    routes["/sitemap.xml"] = Route(sm.body.replace(b"URL", url.encode()))
    return routes


def test_discovery_and_manners() -> None:
    with serve() as s:
        s.routes.update(with_sitemap_host(site(), s.url))
        crawl = crawl_site(s.url + "/docs/", options())
    urls = {p.url.removeprefix(s.url) for p in crawl.pages}
    assert urls == {"/docs/", "/docs/guide/", "/docs/api/", "/docs/only-in-sitemap/",
                    "/docs/only-in-llms/"}  # fmt: skip
    r = crawl.report
    assert r.skipped["robots"] == [s.url + "/docs/private/secret.html"]
    assert s.url + "/blog/" in r.skipped["scope"]
    assert "https://elsewhere.example/x" in r.skipped["scope"]
    assert s.hits["/docs/private/secret.html"] == 0 and s.hits["/fr/docs/"] == 0
    assert s.hits["/docs/logo.png"] == 0
    assert r.found_by["sitemap"] >= 1 and r.found_by["llms.txt"] >= 1
    assert not r.failed
    agents = {h.get("User-Agent", "") for _, h in s.log}
    assert all(a.startswith("cogitave-query/") for a in agents)
    text = r.format()
    assert "robots 1" in text and "scope" in text


def test_the_graph_of_a_crawl() -> None:
    with serve() as s:
        s.routes.update(with_sitemap_host(site(), s.url))
        crawl = crawl_site(s.url + "/docs/", options(base_url="https://demo.example/docs/"))
    batch = read_crawl(crawl)
    nodes = {n.uid: n for n in batch.nodes}
    guide = nodes["guide"]
    assert guide.kind == "page" and guide.meta["url"] == "https://demo.example/docs/guide/"
    assert nodes["guide#steps"].meta["url"] == "https://demo.example/docs/guide/#steps"
    assert ("xref", "api#client") in {(e.label, e.dst) for e in nodes["guide#steps"].edges}
    code = next(n for n in batch.nodes if n.kind == "code_sample")
    assert code.dims["language"] == "python" and "import demo" in code.dims["code"]
    assert ("partOf", "index") in {(e.label, e.dst) for e in guide.edges}
    assert "Copyright" not in (guide.content or "")
    assert batch.report.startswith("crawl of ")


def test_a_page_description_is_kept_unless_the_whole_site_shares_it() -> None:
    shared = "<meta name='description' content='Demo: the documentation of the demo.'>"
    own = "<meta name='description' content='How to  install the demo.'>"
    routes = {f"/docs/{n}/": page(n.title(), f"<p>{PROSE}</p>", head=shared)
              for n in ("one", "two", "three", "four")}  # fmt: skip
    routes["/docs/"] = page("Home", f"<p>{PROSE}</p>" + "".join(
        f"<a href='{n}/'>{n}</a> " for n in ("one", "two", "three", "four", "setup")),
        head=shared)  # fmt: skip
    routes["/docs/setup/"] = page("Setup", f"<p>{PROSE}</p>", head=own)
    with serve(routes) as s:
        crawl = crawl_site(s.url + "/docs/", options())
    nodes = {n.uid: n for n in read_crawl(crawl).nodes}
    assert nodes["setup"].dims["description"] == "How to install the demo."
    assert not nodes["one"].dims.get("description")


def test_retry_after_is_honoured() -> None:
    calls: list[float] = []

    def busy(handler: Any) -> tuple[int, dict[str, str], bytes]:
        calls.append(time.monotonic())
        if len(calls) == 1:
            return 429, {"Retry-After": "1"}, b""
        return 200, {"Content-Type": "text/html"}, page("Busy", f"<p>{PROSE}</p>").body

    with serve() as s:
        s.routes.update({"/": page("Home", f"<p>{PROSE}</p><a href='/busy/'>busy</a>"),
                         "/busy/": Route(answer=busy)})  # fmt: skip
        crawl = crawl_site(s.url + "/", options())
    assert {p.url for p in crawl.pages} == {s.url + "/", s.url + "/busy/"}
    assert len(calls) == 2 and calls[1] - calls[0] >= 0.95
    assert crawl.report.retried == 1 and not crawl.report.failed


def redirect(to: str, status: int = 302) -> Route:
    return Route(status=status, headers={"Location": to}, etag=False)


def test_redirects_stay_in_scope() -> None:
    with serve() as s:
        s.routes.update({
            "/docs/": page("Home", f"<p>{PROSE}</p><a href='a/'>a</a> <a href='b/'>b</a>"
                                   "<a href='c/'>c</a>"),
            "/docs/a/": redirect("/blog/post/"),
            "/docs/b/": redirect("/docs/moved/"),
            "/docs/c/": redirect("file:///etc/passwd"),
            "/docs/moved/": page("Moved", f"<p>{PROSE}</p>"),
            "/blog/post/": page("Blog", f"<p>{PROSE}</p>"),
        })  # fmt: skip
        crawl = crawl_site(s.url + "/docs/", options())
    assert {p.url for p in crawl.pages} == {s.url + "/docs/", s.url + "/docs/moved/"}
    assert s.hits["/blog/post/"] == 0
    assert s.url + "/docs/a/" in crawl.report.skipped["scope"]
    assert crawl.report.skipped["refused"] == [s.url + "/docs/c/"]


def test_a_public_site_cannot_redirect_into_a_private_address() -> None:
    """The served host plays a public one (a name the resolver calls public); its redirect
    to 127.0.0.1 is refused, while the same redirect from a private start host is not."""

    async def fetch(start_host: str, url: str) -> Response | Failure:
        public = {"docs.example.com": ["93.184.216.34"]}
        async with Fetcher(FAST, start_host, resolve=lambda h: public.get(h, [])) as f:
            return await f.get(url)

    with serve() as s:
        s.routes.update({"/r": redirect(s.url + "/inside"), "/inside": page("In", "<p>x</p>")})
        refused = asyncio.run(fetch("docs.example.com", s.url + "/r"))
        allowed = asyncio.run(fetch("127.0.0.1", s.url + "/r"))
    assert isinstance(refused, Failure) and refused.skip == "refused"
    assert "private address" in refused.reason
    assert isinstance(allowed, Response) and allowed.status == 200
    assert allowed.url == s.url + "/inside"


@pytest.mark.parametrize(
    ("routes", "words"),
    [
        ({}, "HTTP 404"),
        ({"/": Route(b'{"a": 1}', headers={"Content-Type": "application/json"})}, "not an HTML"),
        ({"/": redirect("/a"), "/a": redirect("/")}, "redirect loop"),
        ({"/robots.txt": Route(b"User-agent: *\nDisallow: /\n"), "/": page("H", "<p>x</p>")},
         "robots.txt"),
        ({"/": redirect("data:text/html,<p>x</p>")}, "refused a redirect \\(scheme\\)"),
    ],
)  # fmt: skip
def test_bad_start_pages(routes: dict[str, Route], words: str) -> None:
    with serve(routes) as s, pytest.raises(IngestError, match=words):
        crawl_site(s.url + "/", options())


def test_an_unreachable_host(monkeypatch: pytest.MonkeyPatch) -> None:
    with serve() as s:
        dead = s.url
    tries: list[str] = []
    once = Fetcher._once

    async def counted(self: Fetcher, url: str, *a: Any, **kw: Any) -> Any:
        tries.append(url)
        return await once(self, url, *a, **kw)

    monkeypatch.setattr(Fetcher, "_once", counted)
    with pytest.raises(IngestError, match="cannot fetch"):
        crawl_site(dead + "/", options())
    # bounded work: the start page (and robots.txt) tried at most 1 + retries times each
    assert 0 < len(tries) <= 2 * (FAST.retries + 1), tries


def test_failures_past_the_limit_publish_nothing() -> None:
    links = " ".join(f"<a href='/p{i}/'>p{i}</a>" for i in range(6))
    routes = {"/": page("Home", f"<p>{PROSE}</p>{links}")}
    for i in range(6):
        routes[f"/p{i}/"] = (
            Route(b"boom", status=500) if i < 2 else page(f"P{i}", f"<p>{PROSE}</p>")
        )
    with serve(routes) as s:
        with pytest.raises(CrawlFailedError) as e:
            crawl_site(s.url + "/", options())
        assert "2 of 7 URLs failed" in e.value.message
        assert f"500: {s.url}/p0/" in e.value.details["report"]
        crawl = crawl_site(s.url + "/", options(max_failures="2"))
        assert sorted(crawl.report.failed["500"]) == [s.url + "/p0/", s.url + "/p1/"]
        assert s.hits["/p0/"] == 3 * 2  # the first try and FAST's two retries, twice


def test_caps_sizes_and_languages_are_counted() -> None:
    links = " ".join(f"<a href='/p{i}/'>p{i}</a>" for i in range(5))
    routes = {
        "/": page("Home", f"<p>{PROSE}</p>{links}<a href='/big/'>big</a><a href='/fr/'>fr</a>"
                          "<a href='/de-page/'>de</a>"),
        "/big/": page("Big", "<p>" + "x" * 5000 + "</p>"),
        "/de-page/": page("Seite", f"<p>{PROSE}</p>", lang="de"),
        **{f"/p{i}/": page(f"P{i}", f"<p>{PROSE}</p>") for i in range(5)},
    }  # fmt: skip
    with serve(routes) as s:
        small = Manners(rate=0, retries=0, max_bytes=4000)
        crawl = crawl_site(s.url + "/", options(manners=small))
        capped = crawl_site(s.url + "/", options(max_pages=3))
    assert crawl.report.skipped["size"] == [s.url + "/big/"]
    assert sorted(crawl.report.skipped["language"]) == [s.url + "/de-page/", s.url + "/fr/"]
    assert len(capped.report.skipped["max-pages"]) >= 4
    assert any("--max-pages 3 reached" in n for n in capped.report.notes)


def test_markdown_alternates_are_preferred() -> None:
    md = b"# Guide\n\nThe Markdown twin of the guide, as the site serves it.\n"
    routes = {
        "/": page("Home", f"<p>{PROSE}</p><a href='/guide/'>guide</a>"),
        "/guide/": page("Guide", f"<p>{PROSE}</p>",
                        head="<link rel='alternate' type='text/markdown' href='/guide.md'>"),
        "/guide.md": Route(md, headers={"Content-Type": "text/markdown"}),
    }  # fmt: skip
    with serve(routes) as s:
        crawl = crawl_site(s.url + "/", options())
    guide = next(p for p in crawl.pages if p.url.endswith("/guide/"))
    assert guide.source == "markdown" and "Markdown twin" in guide.markdown
    assert crawl.report.markdown == 1


def test_sitemap_indexes_llms_full_and_markdown_twins() -> None:
    """A gzipped sitemap named by a sitemap index, a page listed only in llms-full.txt by its
    Markdown twin, and the ``index.html.md`` twins the site serves beside every page."""
    urlset = b"""<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
        <url><loc>URL/deep/</loc></url></urlset>"""
    twin = {"Content-Type": "text/markdown"}
    routes = {
        "/": page("Home", f"<p>{PROSE}</p>"),
        "/index.html.md": Route(b"# Home\n\nThe home page, in Markdown.\n", headers=twin),
        "/deep/": page("Deep", f"<p>{PROSE}</p>"),
        "/deep/index.html.md": Route(b"# Deep\n\nThe deep page, in Markdown.\n", headers=twin),
        "/full/": page("Full", f"<p>{PROSE}</p>"),
        "/full/index.html.md": Route(b"# Full\n\nOnly llms-full.txt lists me.\n", headers=twin),
        "/llms-full.txt": Route(b"# Site\n\n[Full](/full/index.html.md)\n",
                                headers={"Content-Type": "text/plain"}),
    }  # fmt: skip
    with serve(routes) as s:
        body = gzip.compress(urlset.replace(b"URL", s.url.encode()))
        s.routes["/pages.xml.gz"] = Route(body, headers={"Content-Type": "application/gzip"})
        s.routes["/sitemap.xml"] = Route(
            b"<?xml version='1.0'?><sitemapindex xmlns='http://www.sitemaps.org/schemas/"
            b"sitemap/0.9'><sitemap><loc>" + s.url.encode() + b"/pages.xml.gz</loc></sitemap>"
            b"</sitemapindex>"
        )
        crawl = crawl_site(s.url + "/", options())
    pages = {p.url.removeprefix(s.url): p for p in crawl.pages}
    assert set(pages) == {"/", "/deep/", "/full/"}
    assert {u: p.source for u, p in pages.items()} == dict.fromkeys(pages, "markdown")
    assert "Only llms-full.txt lists me." in pages["/full/"].markdown
    assert crawl.report.found_by["sitemap"] == 1 and crawl.report.found_by["llms.txt"] == 1


def test_a_resync_asks_whether_pages_changed() -> None:
    with serve() as s:
        s.routes.update(with_sitemap_host(site(), s.url))
        first = crawl_site(s.url + "/docs/", options())
        s.log.clear()
        again = crawl_site(s.url + "/docs/", options(), first.state)
        asked = [h for path, h in s.log if path.startswith("/docs/") and path.endswith("/")]
        assert asked and all("If-None-Match" in h for h in asked)
        assert again.report.fetched == 0 and again.report.unchanged == len(first.pages)
        assert [p.to_dict() for p in again.pages] == [p.to_dict() for p in first.pages]
        assert again.state.to_bytes() == first.state.to_bytes()
        # the api page changes, the sitemap page goes
        s.routes["/docs/api/"] = page("API", f"<p>{PROSE} Now with more.</p>")
        s.routes["/sitemap.xml"] = Route(b"<urlset></urlset>")
        third = crawl_site(s.url + "/docs/", options(), again.state)
    assert third.report.fetched == 1
    assert {p.url for p in third.pages} == {p.url for p in first.pages} - {
        s.url + "/docs/only-in-sitemap/"
    }


@pytest.mark.skipif(
    find_browser() is None and not IN_CI, reason="no Chromium on this system (CI has it)"
)
def test_an_empty_javascript_shell_is_rendered() -> None:
    app = b"""<!doctype html><html lang="en"><head><title>App</title></head><body>
    <div id="root"></div><script>
    document.getElementById('root').innerHTML = '<main><h1 id="t">Rendered docs</h1>' +
      '<p>This text exists only after the script ran in a browser, which is the point.</p>' +
      '<h2 id="usage">Usage</h2><p>Call the widget with a size and a colour.</p></main>';
    </script></body></html>"""
    with serve({"/": Route(app, headers={"Content-Type": "text/html"})}) as s:
        crawl = crawl_site(s.url + "/", options())
        never = pytest.raises(IngestError, match="JavaScript")
        with never:
            crawl_site(s.url + "/", options(render="never"))
    (only,) = crawl.pages
    assert only.source == "rendered" and only.title == "Rendered docs"
    assert "## Usage { #usage }" in only.markdown
    assert crawl.report.rendered == 1


def test_without_a_browser_shells_are_reported_and_always_is_refused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """No browser is downloaded: without one, a shell page is skipped and said, and
    ``--render always`` is an error before anything is fetched."""
    monkeypatch.setenv("COGITAVE_CHROMIUM", "/nonexistent/chromium")
    shell = b"""<!doctype html><html lang="en"><head><title>App</title></head><body>
    <div id="root"></div><script src="/app.js"></script></body></html>"""
    routes = {"/": page("Home", f"<p>{PROSE}</p><a href='/app/'>app</a>"),
              "/app/": Route(shell, headers={"Content-Type": "text/html"})}  # fmt: skip
    with serve(routes) as s:
        crawl = crawl_site(s.url + "/", options())
        with pytest.raises(InputError, match="--render always needs Chromium"):
            crawl_site(s.url + "/", options(render="always"))
        with pytest.raises(InputError, match="--render must be one of"):
            crawl_site(s.url + "/", options(render="sometimes"))
    assert crawl.report.skipped["javascript"] == [s.url + "/app/"]
    assert crawl.report.rendered == 0
    assert any("JavaScript shells" in n for n in crawl.report.notes)


# -- the fetch policy: what a hostile site can make the crawl request -----------------------
def test_files_a_site_names_on_another_host_are_never_requested() -> None:
    """A page's Markdown alternate, robots.txt's ``Sitemap:`` lines, a sitemap index's
    entries and llms.txt's links that name another host: refused before a byte is sent (the
    other server sees nothing), listed in the report; a sitemap named twice is read once."""
    secret = Route(
        b"# Secret\n\nWhat another host holds.\n", headers={"Content-Type": "text/markdown"}
    )
    with serve({"/secret.md": secret, "/sitemap.xml": Route(b"<urlset></urlset>")}) as other:
        o = other.url
        with serve() as s:
            urlset = f"<urlset><url><loc>{s.url}/guide/</loc></url></urlset>".encode()
            index = (f"<sitemapindex><sitemap><loc>{s.url}/pages.xml</loc></sitemap>"
                     f"<sitemap><loc>{s.url}/pages.xml</loc></sitemap>"
                     f"<sitemap><loc>{o}/sitemap.xml</loc></sitemap></sitemapindex>")  # fmt: skip
            s.routes.update({
                "/robots.txt": Route(f"Sitemap: {o}/sitemap.xml\n".encode()),
                "/sitemap.xml": Route(index.encode()),
                "/pages.xml": Route(urlset),
                "/llms.txt": Route(f"# Site\n\n[Secret]({o}/secret.md)\n".encode(),
                                   headers={"Content-Type": "text/plain"}),
                "/": page("Home", f"<p>{PROSE}</p>",
                          head=f"<link rel='alternate' type='text/markdown' href='{o}/secret.md'>"),
                "/guide/": page("Guide", f"<p>{PROSE}</p>"),
            })  # fmt: skip
            crawl = crawl_site(s.url + "/", options())
        assert sum(other.hits.values()) == 0
    assert s.hits["/pages.xml"] == 1
    pages = {p.url: p for p in crawl.pages}
    assert set(pages) == {s.url + "/", s.url + "/guide/"}
    assert pages[s.url + "/"].source == "html"
    assert "another host" not in pages[s.url + "/"].markdown
    refused = crawl.report.refused["other site"]
    assert o + "/secret.md" in refused and o + "/sitemap.xml" in refused
    assert f"other site 2: {o}/s" not in crawl.report.format()  # listed by reason, counted
    assert "refused " in crawl.report.format()


def test_a_public_site_cannot_make_the_crawl_read_a_private_address(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The cloud-metadata case: the site plays a public host (``docs.example.com``, reached
    through a local proxy); its Markdown alternate, its robots.txt's sitemap and a link that
    redirects all name a loopback address. None is requested: the private server and the
    proxy see nothing for it, and the page is indexed from its own HTML."""
    iam = Route(b"# Keys\n\nAKIAIOSFODNN7EXAMPLE\n", headers={"Content-Type": "text/markdown"})
    with serve({"/latest/meta-data/iam": iam, "/sitemap.xml": Route(b"<urlset/>")}) as meta:
        port = meta.httpd.server_address[1]
        loot = f"http://localhost:{port}/latest/meta-data/iam"
        with serve() as s:
            s.routes.update({
                "/robots.txt": Route(f"Sitemap: http://127.0.0.1:{port}/sitemap.xml\n".encode()),
                "/": page("Home", f"<p>{PROSE}</p><a href='/go/'>go</a>",
                          head=f"<link rel='alternate' type='text/markdown' href='{loot}'>"),
                "/go/": redirect(loot),
            })  # fmt: skip
            with Proxy({"docs.example.com": s}) as proxy:
                monkeypatch.setenv("HTTP_PROXY", proxy.url)
                monkeypatch.delenv("NO_PROXY", raising=False)
                monkeypatch.delenv("no_proxy", raising=False)
                crawl = crawl_site("http://docs.example.com/", options(),
                                   resolve=public("docs.example.com"))  # fmt: skip
        assert sum(meta.hits.values()) == 0
    assert proxy.hits["docs.example.com"] >= 2
    assert set(proxy.hits) == {"docs.example.com"}
    (home,) = crawl.pages
    assert home.source == "html" and "AKIA" not in home.markdown
    assert set(crawl.report.refused["private address"]) == {
        loot,
        f"http://127.0.0.1:{port}/sitemap.xml",
    }
    assert crawl.report.skipped["refused"] == ["http://docs.example.com/go/"]


def test_start_page_and_robots_redirects_off_site_are_refused_before_sending() -> None:
    with serve({"/": page("Other", f"<p>{PROSE}</p>"),
                "/robots.txt": Route(b"User-agent: *\nDisallow: /\n")}) as other:  # fmt: skip
        with (
            serve({"/": redirect(other.url + "/")}) as s,
            pytest.raises(IngestError, match="another host"),
        ):
            crawl_site(s.url + "/", options())
        with serve({"/robots.txt": redirect(other.url + "/robots.txt"),
                    "/": page("Home", f"<p>{PROSE}</p>")}) as s:  # fmt: skip
            crawl = crawl_site(s.url + "/", options())
        assert sum(other.hits.values()) == 0
    assert [p.url for p in crawl.pages] == [s.url + "/"]
    assert crawl.report.refused["other site"] == [other.url + "/robots.txt"]


def test_site_strings_reach_the_report_printable_and_bounded() -> None:
    """Terminal escapes and a 5 MB URL from a page: escaped and cut before they are kept."""
    huge = "https://elsewhere.example/" + "a" * 5_000_000
    links = (f"<a href='https://elsewhere.example/\x1b[2J\x1b]0;owned\x07x'>e</a>"
             f"<a href='{huge}'>huge</a><a href='/r/'>r</a>"
        "<a href='https://elsewhere.example/\u202egpj.exe'>e</a>")  # fmt: skip
    routes = {"/": page("Home", f"<p>{PROSE}</p>{links}"),
              "/r/": redirect("/docs\x1b[31m/x")}  # fmt: skip
    with serve(routes) as s:
        crawl = crawl_site(s.url + "/", options(max_failures="5"))
    text, kept = crawl.report.format(), crawl.report.to_bytes()
    assert "\x1b" not in text and "\u202e" not in text and "\x07" not in text
    assert b"\x1b" not in kept and b"\xe2\x80\xae" not in kept
    assert "\\x1b[2J" in text
    assert max(len(line) for line in text.splitlines()) < 1000
    assert len(kept) < 50_000


def test_a_start_page_in_a_charset_that_is_no_text_encoding() -> None:
    home = page("Home", f"<p>{PROSE}</p>")
    home.headers["Content-Type"] = "text/html; charset=idna"
    with serve({"/": home}) as s:
        crawl = crawl_site(s.url + "/", options())
    assert [p.title for p in crawl.pages] == ["Home"]


def test_past_the_deadline_the_crawl_finishes_with_what_it_read(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The clock jumps past ``--max-time`` while /p1/ is served: nothing more is requested,
    the pages read are kept, and the report says why the rest was not fetched. A re-sync cut
    short the same way keeps the last version of the pages it did not reach."""
    clock, jump = [0.0], [True]
    monkeypatch.setattr(policy_module, "_now", lambda: clock[0])

    def late(handler: Any) -> tuple[int, dict[str, str], bytes]:
        clock[0] += 601 if jump[0] else 0
        body = page("P1", f"<p>{PROSE}</p><a href='/p2/'>p2</a>").body
        return 200, {"Content-Type": "text/html"}, body

    routes = {"/": page("Home", f"<p>{PROSE}</p><a href='/p1/'>p1</a><a href='/p3/'>p3</a>"),
              "/p1/": Route(answer=late),
              "/p2/": page("P2", f"<p>{PROSE}</p><a href='/p4/'>p4</a>"),
              "/p3/": page("P3", f"<p>{PROSE}</p>"),
              "/p4/": page("P4", f"<p>{PROSE}</p>")}  # fmt: skip
    one = Manners(concurrency=1, rate=0, timeout=5, deadline=10, retries=0)
    with serve(routes) as s:
        crawl = crawl_site(s.url + "/", options(manners=one, max_time=600))
        assert s.hits["/p2/"] == 0 and s.hits["/p3/"] == 0
        assert {p.url for p in crawl.pages} == {s.url + "/", s.url + "/p1/"}
        assert sorted(crawl.report.skipped["max-time"]) == [s.url + "/p2/", s.url + "/p3/"]
        assert any("--max-time 600 s reached" in n for n in crawl.report.notes)
        assert not crawl.report.failed
        jump[0] = False
        full = crawl_site(s.url + "/", options(manners=one, max_time=600))
        assert len(full.pages) == 5
        jump[0] = True
        s.hits.clear()
        again = crawl_site(s.url + "/", options(manners=one, max_time=600), full.state)
    assert s.hits["/p2/"] == s.hits["/p3/"] == s.hits["/p4/"] == 0
    assert [p.to_dict() for p in again.pages] == [p.to_dict() for p in full.pages]


def test_the_request_budget_stops_a_crawl() -> None:
    links = " ".join(f"<a href='/p{i}/'>p{i}</a>" for i in range(20))
    routes = {"/": page("Home", f"<p>{PROSE}</p>{links}"),
              **{f"/p{i}/": page(f"P{i}", f"<p>{PROSE}</p>") for i in range(20)}}  # fmt: skip
    with serve(routes) as s:
        crawl = crawl_site(s.url + "/", options(max_requests=8))
    assert sum(s.hits.values()) == 8 and crawl.report.requests == 8
    assert crawl.report.skipped["max-requests"]
    assert any("request budget (8 requests)" in n for n in crawl.report.notes)
    assert crawl.pages and not crawl.report.failed


@pytest.mark.skipif(
    find_browser() is None and not IN_CI, reason="no Chromium on this system (CI has it)"
)
def test_the_browser_asks_the_crawls_policy_and_the_report_lists_its_refusals() -> None:
    # A shell whose script loads an image from another host: the browser's request goes
    # to the crawl's policy (same site only), is refused, never reaches the other server,
    # and the crawl report lists it once.
    with serve({"/pixel.png": Route(b"PNG", headers={"Content-Type": "image/png"})}) as other:
        shell = (
            "<!doctype html><html lang='en'><head><title>App</title></head><body>"
            "<div id='root'></div><script>"
            "document.getElementById('root').innerHTML = '<main><h1>Rendered</h1><p>"
            f'{PROSE}</p><img src="{other.url}/pixel.png"></main>\';'
            "</script></body></html>"
        ).encode()
        with serve({"/": Route(shell, headers={"Content-Type": "text/html"})}) as s:
            crawl = crawl_site(s.url + "/", options(render="always"))
        assert sum(other.hits.values()) == 0
    assert crawl.report.rendered == 1
    refused = crawl.report.refused.get("browser: other site", [])
    assert other.url + "/pixel.png" in refused and len(refused) == len(set(refused))
