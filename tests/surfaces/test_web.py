"""The search page at ``/``: served open (the API key guards the data, not the page), and
driven end to end in headless Chromium against a real uvicorn server.

The browser tests need ``/usr/bin/chromium``, ``/usr/bin/chromedriver`` (Debian's ``chromium``
and ``chromium-driver``) and the ``selenium`` package; without them they are skipped, saying
which is missing, except in CI (``CI=true``), where they fail. A screenshot of the page goes
to ``tests/artifacts/`` (gitignored).
"""

from __future__ import annotations

import os
import re
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from cogitave.collection import Collection
from cogitave.libraries.collection import LibraryCollection
from cogitave.nodes import Node
from cogitave.reader import Reader
from cogitave.schema import EDGE_LABELS
from cogitave.surfaces.http import STATIC_DIR, bind, create_app
from tests.conftest import IN_CI, SCHEMA
from tests.helpers import BASE_URL, docs_collection

CHROMIUM = os.environ.get("COGITAVE_CHROMIUM", "/usr/bin/chromium")
CHROMEDRIVER = os.environ.get("COGITAVE_CHROMEDRIVER", "/usr/bin/chromedriver")
ARTIFACTS = Path(__file__).resolve().parents[1] / "artifacts"
KEY = "s3cret-key"
WAIT_S = 15.0


@pytest.fixture(scope="module")
def col(tmp_path_factory: pytest.TempPathFactory) -> Collection:
    return docs_collection(tmp_path_factory)


# -- the page over plain HTTP (no browser) ------------------------------------------------------


def test_page_and_static_files_are_served(col: Collection) -> None:
    with TestClient(create_app(col), base_url=BASE_URL) as c:
        page = c.get("/")
        assert page.status_code == 200
        assert page.headers["content-type"].startswith("text/html")
        assert "default-src 'self'" in page.headers["content-security-policy"]
        html = page.text
        for ref in ("/static/app.js", "/static/style.css"):
            assert ref in html
            assert c.get(ref).status_code == 200
        assert c.get("/static/app.js").headers["content-type"].split(";")[0] in (
            "text/javascript",
            "application/javascript",
        )
        # no CDN, no remote resource: the page works offline
        for name in ("index.html", "app.js", "style.css"):
            text = (STATIC_DIR / name).read_text(encoding="utf-8")
            assert not re.search(r"(src|href)=[\"']?(https?:)?//", text), name
            assert "@import" not in text and "url(http" not in text, name
        missing = c.get("/static/nope.js")
        assert missing.status_code == 404 and missing.json()["error"]["code"] == "not_found"
        assert c.get("/static/..%2fhttp.py").status_code == 404
        assert "/" not in c.get("/openapi.json").json()["paths"]
        # the page serves any collection: its hints name syntax, not this project's docs
        hints = " ".join(re.findall(r'placeholder="([^"]*)"', html)).lower()
        assert hints and not any(q in hints for q in ("fusion", "tokenizer", "configuraton"))


def test_the_api_key_guards_data_not_the_page(col: Collection) -> None:
    with TestClient(create_app(col, api_key=KEY), base_url=BASE_URL) as c:
        assert c.get("/").status_code == 200
        assert c.get("/static/app.js").status_code == 200
        assert c.get("/roots").status_code == 401
        assert c.post("/search", json={"query": "pip"}).status_code == 401
        assert c.get("/static").status_code == 401  # only the files under /static/ are open
        ok = {"Authorization": f"Bearer {KEY}"}
        assert c.post("/search", json={"query": "pip"}, headers=ok).status_code == 200


def test_the_page_knows_the_nine_edge_labels() -> None:
    js = (STATIC_DIR / "app.js").read_text(encoding="utf-8")
    block = re.search(r"const EDGE_LABELS = \[(.*?)\];", js, re.S)
    assert block is not None
    assert tuple(re.findall(r'"(\w+)"', block.group(1))) == EDGE_LABELS
    assert ".innerHTML" not in js and "insertAdjacentHTML" not in js and "eval(" not in js


# -- the browser --------------------------------------------------------------------------------


def _missing_browser() -> str | None:
    for path, pkg in ((CHROMIUM, "chromium"), (CHROMEDRIVER, "chromium-driver")):
        if not (os.path.isfile(path) and os.access(path, os.X_OK)):
            return f"{path} not found: apt-get install {pkg} to run the browser tests"
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "the selenium package is not installed: pip install selenium"
    return None


class LiveServer:
    """uvicorn in a thread on a socket bound before it starts (as ``cogitave serve`` does):
    the kernel queues the first connections until the server accepts them, so nothing waits
    for it to start."""

    def __init__(self, col: Reader, api_key: str | None = None) -> None:
        import uvicorn

        self.sock = bind("127.0.0.1", 0)
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        app = create_app(col, api_key=api_key, host="127.0.0.1")
        config = uvicorn.Config(app, log_level="warning", ws="none", lifespan="on")
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(
            target=self.server.run, kwargs={"sockets": [self.sock]}, daemon=True
        )

    def __enter__(self) -> LiveServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=WAIT_S)
        self.sock.close()


@pytest.fixture(scope="module")
def server(col: Collection) -> Iterator[str]:
    with LiveServer(col) as s:
        yield s.url


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    reason = _missing_browser()
    if reason and IN_CI:
        pytest.fail(f"{reason} (CI installs it: .ci/run)")
    if reason:
        pytest.skip(reason)
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    for flag in (
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-dev-shm-usage",
        "--window-size=1440,1000",
        f"--user-data-dir={tmp_path_factory.mktemp('chromium-profile')}",
    ):
        opts.add_argument(flag)
    driver = webdriver.Chrome(options=opts, service=Service(executable_path=CHROMEDRIVER))
    driver.set_page_load_timeout(WAIT_S)
    try:
        yield driver
    finally:
        driver.quit()


def wait_for(check: Callable[[], Any], what: str, timeout: float = WAIT_S) -> Any:
    """Poll ``check`` until it returns something truthy (errors count as not yet)."""
    deadline = time.monotonic() + timeout
    last: Exception | None = None
    while time.monotonic() < deadline:
        try:
            value = check()
            if value:
                return value
        except Exception as e:  # a stale or absent element: try again
            last = e
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}" + (f" ({last!r})" if last else ""))


def css(driver: Any, selector: str) -> list[Any]:
    from selenium.webdriver.common.by import By

    return list(driver.find_elements(By.CSS_SELECTOR, selector))


def text_of(driver: Any, selector: str) -> str:
    return " ".join(e.text for e in css(driver, selector))


def open_page(driver: Any, url: str) -> None:
    """Load the page and open the Prism (collapsed by default: results get the width)."""
    driver.get(url + "/")
    wait_for(lambda: driver.execute_script("return document.body.dataset.ready"), "the page")
    assert not css(driver, "#prism-box")[0].get_attribute("open")
    css(driver, "#prism-box > summary")[0].click()


def type_query(driver: Any, text: str) -> None:
    from selenium.webdriver.common.keys import Keys

    box = css(driver, "#q")[0]
    box.send_keys(Keys.CONTROL, "a")
    box.send_keys(Keys.DELETE)
    for ch in text:  # as a person types: the debounce coalesces the keystrokes
        box.send_keys(ch)


def settle(driver: Any, query: str) -> None:
    """Wait until the page shows the answer to ``query``."""
    wait_for(
        lambda: (
            driver.execute_script("return document.body.dataset.searchState") == "done"
            and query in text_of(driver, "#prism .kv code")
        ),
        f"results for {query!r}",
    )


def shot(driver: Any, name: str) -> Path:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / name
    driver.save_screenshot(str(path))
    return path


def test_misspelled_query_shows_the_rewrite_and_results(browser: Any, server: str) -> None:
    open_page(browser, server)
    assert "root" in wait_for(
        lambda: "nodes" in text_of(browser, "#root-line") and text_of(browser, "#root-line"),
        "the root line",
    )
    query = "configuraton file tokenizer"
    type_query(browser, query)
    settle(browser, query)
    rewrite = text_of(browser, "#prism .rewrite")
    assert "configuraton" in rewrite and "configuration" in rewrite, rewrite
    assert "edit" in rewrite  # the reason, as the engine wrote it
    hits = css(browser, "#results .hit")
    assert hits, "no results"
    assert "configuration" in text_of(browser, "#results .hit mark").lower()
    # the route of each term, with idf values per home
    routes = text_of(browser, "#prism table.routes")
    assert "tokenizer" in routes and "idf" in routes.lower()
    assert css(browser, "#prism table.routes .idf.chosen")
    # lens ranks as bars, with an accessible name
    lens = css(browser, "#results .hit .lens:not(.missing)")[0]
    assert re.search(r"rank \d+ of \d+", lens.get_attribute("aria-label"))
    # the Prism shows timings, the total and the root id
    prism = text_of(browser, "#prism")
    for word in ("Timings", "total", "Coherence gate", "anchors", "channels"):
        assert word in prism, word
    assert browser.execute_script("return new URL(location.href).searchParams.get('q')") == query
    shot(browser, "web-rewrite.png")


def test_open_a_result_then_a_related_node(browser: Any, server: str) -> None:
    open_page(browser, server)
    type_query(browser, "reciprocl rank fusion")  # misspelled: the Prism shows the rewrite
    settle(browser, "reciprocl rank fusion")
    assert "reciprocal" in text_of(browser, "#prism .rewrite .to")
    first = css(browser, "#results .hit")[0]
    uid = first.get_attribute("data-uid")
    css(browser, "#results .hit .hit-open")[0].click()
    wait_for(lambda: uid in text_of(browser, "#node .node-nav"), "the node panel")
    wait_for(lambda: css(browser, "#node .content.md"), "the node content")
    related = wait_for(lambda: css(browser, "#node .related li button"), "related nodes")
    wait_for(lambda: css(browser, "#node .steps li"), "the learning path")
    assert "selected" in css(browser, "#results .hit")[0].get_attribute("class")
    shot(browser, "web-search.png")
    target = related[0].get_attribute("title")
    related[0].click()
    wait_for(lambda: target in text_of(browser, "#node .node-nav"), f"the related node {target}")
    wait_for(lambda: css(browser, "#node .node-title"), "its title")
    back = wait_for(lambda: css(browser, "#node .node-nav button"), "the back button")
    back[0].click()
    wait_for(lambda: uid in text_of(browser, "#node .node-nav"), "back to the first node")


def test_stale_answers_are_dropped(browser: Any, server: str) -> None:
    open_page(browser, server)
    # The first query's answer ignores the abort and is held until the second is shown; then
    # it is let through, and the page must drop it.
    browser.execute_script(
        """
        const real = window.fetch;
        window.pip = {held: false, read: false, release: null};
        window.fetch = (url, opts = {}) => {
          const body = opts.body ? JSON.parse(opts.body) : {};
          const p = real(url, {...opts, signal: undefined});
          if (body.query !== "pip") return p;
          return p.then((r) => new Promise((ok) => {
            const json = r.json.bind(r);
            r.json = () => json().then((d) => { window.pip.read = true; return d; });
            window.pip.release = () => ok(r);
            window.pip.held = true;
          }));
        };
        """
    )
    type_query(browser, "pip")
    wait_for(lambda: browser.execute_script("return window.pip.held"), "the first answer")
    type_query(browser, "toml configuration")
    settle(browser, "toml configuration")
    browser.execute_script("window.pip.release()")
    # read by the page; what the page does with it runs in the same turn, before this script
    wait_for(lambda: browser.execute_script("return window.pip.read"), "the late answer read")
    assert browser.execute_script("return document.body.dataset.searchState") == "done"
    assert "toml configuration" in text_of(browser, "#prism .kv code")
    assert "pip" not in text_of(browser, "#prism .kv code")


def test_graph_console_shows_rows_and_bound_errors(browser: Any, server: str) -> None:
    from selenium.webdriver.common.keys import Keys

    open_page(browser, server)
    bounds = text_of(browser, ".bounds")
    for word in ("read-only", "9 labels", "partOf", "derivedFrom", "4", "100", "1000", "250 ms"):
        assert word in bounds, word
    css(browser, "#graph-run")[0].click()  # the example query in the box
    table = wait_for(lambda: css(browser, "#graph-out table.graph-table"), "the rows")
    assert "s.uid" in table[0].text
    gq = css(browser, "#gq")[0]
    for query, code in (
        ("MATCH (a)-[*]->(b) RETURN a", "unbounded"),
        ("CREATE (n:page {uid: 'x'}) RETURN n", "read_only"),
        ("MATCH (a)-[:likes]->(b) RETURN a", "label"),
    ):
        gq.clear()
        gq.send_keys(query)
        gq.send_keys(Keys.CONTROL, Keys.ENTER)
        err = wait_for(
            lambda c=code: (
                c in text_of(browser, "#graph-out .error") and css(browser, "#graph-out .error")
            ),
            f"the {code} error",
        )
        assert err[0].get_attribute("role") == "alert"
        assert "HTTP 400" in err[0].text
        assert css(browser, "#graph-out .error-code")[0].text == code
        assert css(browser, "#graph-out .error-msg")[0].text  # the server's message
    browser.execute_script("document.getElementById('graph-title').scrollIntoView()")
    shot(browser, "web-graph.png")


def test_keyboard_only_search_and_open(browser: Any, server: str) -> None:
    from selenium.webdriver.common.keys import Keys

    open_page(browser, server)
    css(browser, "body")[0].send_keys("/")
    assert browser.switch_to.active_element.get_attribute("id") == "q"
    type_query(browser, "install with pip")
    settle(browser, "install with pip")
    browser.switch_to.active_element.send_keys(Keys.ARROW_DOWN)
    first = css(browser, "#results .hit-open")[0]
    assert browser.switch_to.active_element == first
    browser.switch_to.active_element.send_keys(Keys.ARROW_DOWN)
    assert browser.switch_to.active_element == css(browser, "#results .hit-open")[1]
    browser.switch_to.active_element.send_keys(Keys.ENTER)
    wait_for(lambda: css(browser, "#node .content.md"), "the node opened with Enter")
    for el in css(browser, "input, select, textarea"):
        eid = el.get_attribute("id")
        assert eid and css(browser, f"label[for='{eid}']"), f"#{eid} has no label"


def test_the_page_sends_the_api_key(browser: Any, col: Collection) -> None:
    with LiveServer(col, api_key=KEY) as s:
        open_page(browser, s.url)
        wait_for(lambda: "API key" in text_of(browser, "#root-line"), "the key prompt")
        assert css(browser, "#key-box")[0].get_attribute("open") is not None
        key = css(browser, "#api-key")[0]
        key.send_keys(KEY)
        key.submit()
        wait_for(lambda: "nodes" in text_of(browser, "#root-line"), "the roots, with the key")
        type_query(browser, "pip")
        settle(browser, "pip")
        assert css(browser, "#results .hit")
        browser.execute_script("sessionStorage.clear()")


def test_server_text_is_never_markup(browser: Any, server: str) -> None:
    open_page(browser, server)
    query = '<img src=x onerror="window.pwned=1"> pip'
    type_query(browser, query)
    settle(browser, query)
    assert css(browser, "#results .hit")
    assert not css(browser, "#prism img, #results img, #status img")
    assert browser.execute_script("return window.pwned") is None


def test_results_get_the_width_and_the_prism_is_one_click_away(browser: Any, server: str) -> None:
    browser.get(server + "/")
    wait_for(lambda: browser.execute_script("return document.body.dataset.ready"), "the page")
    box = css(browser, "#prism-box")[0]
    assert not box.get_attribute("open") and not css(browser, "#prism")[0].is_displayed()
    results = css(browser, ".results-pane")[0].size["width"]
    node = css(browser, ".node-pane")[0].size["width"]
    assert results > node > 0
    css(browser, "#prism-box > summary")[0].click()
    assert css(browser, "#prism")[0].is_displayed()


MD_PROBE = """
const f = markdown(arguments[0]);
const d = document.createElement("div");
d.append(f);
return {
  html: d.querySelectorAll("img, script, iframe, [onerror], [onclick]").length,
  text: d.textContent,
  hrefs: [...d.querySelectorAll("a")].map((a) => a.getAttribute("href")),
  code: [...d.querySelectorAll("pre code")].map((c) => [c.className, c.textContent]),
  tags: [...d.children].map((c) => c.tagName.toLowerCase()),
  copies: d.querySelectorAll(".code-box > button.copy + pre > code").length,
};
"""


def test_node_content_renders_as_markdown_without_raw_html(browser: Any, server: str) -> None:
    open_page(browser, server)
    doc = (
        "---\ntitle: x\n---\n# Title\n\nSome **bold** and `code` <img src=x onerror=alert(1)>"
        "\n\n<script>alert(2)</script>\n\n- one\n- [two](https://example.org/two)\n\n"
        "[bad](javascript:alert(3)) [rel](../other/)\n\n```python\nx = '<b>'\n```\n"
    )
    out = browser.execute_script(MD_PROBE, doc)
    assert out["html"] == 0  # raw HTML stays text
    assert "<img src=x onerror=alert(1)>" in out["text"] and "<script>" in out["text"]
    assert "title: x" not in out["text"]  # front matter dropped
    assert out["hrefs"] == ["https://example.org/two", "../other/"]  # javascript: dropped
    assert out["code"] == [["language-python", "x = '<b>'"]]
    assert out["tags"][:3] == ["h4", "p", "p"] and "ul" in out["tags"]
    assert out["tags"][-1] == "div" and out["copies"] == 1  # the code block and its copy button


@pytest.mark.parametrize(
    "target",
    [
        "\x01javascript:alert(2)",
        "\x1fJaVaScRiPt:alert(2)",
        "\x00javascript:alert(2)",
        "\x1b data:text/html,x",
        "\x7f\x01vbscript:x",
    ],
)
def test_a_link_is_read_as_a_browser_reads_it(browser: Any, server: str, target: str) -> None:
    """A browser's URL parser drops leading C0 controls and spaces: such a link to
    javascript: must not pass as a relative one."""
    open_page(browser, server)
    out = browser.execute_script(MD_PROBE, f"[x]({target}) [ok](\x01https://example.org/)")
    hrefs = out["hrefs"]
    assert hrefs[-1] == "https://example.org/"
    for href in hrefs[:-1]:  # what is left is a link the browser does not read as a script
        resolved = browser.execute_script(
            "return new URL(arguments[0], location.href).protocol", href
        )
        assert resolved in ("http:", "https:"), (target, href, resolved)


def test_the_page_shows_when_the_root_changed(browser: Any, tmp_path: Path) -> None:
    from tests.conftest import make_nodes

    live = Collection.create(tmp_path / "col", SCHEMA, encoder=None)
    live.add(make_nodes(20))
    live.publish()
    live.follow(interval=0.05)
    try:
        with LiveServer(live) as s:
            open_page(browser, s.url)
            wait_for(lambda: "nodes" in text_of(browser, "#root-line"), "the root line")
            assert "root changed" not in text_of(browser, "#root-line")
            writer = Collection.open(live.store.path)  # another writer, as another process
            writer.add(make_nodes(3, seed=9))
            rid = writer.publish()
            line = wait_for(
                lambda: "root changed" in (t := text_of(browser, "#root-line")) and t,
                "the root change on the page",
                timeout=15,
            )
            assert rid[:12] in line
    finally:
        live.unfollow()


# -- a collection of libraries: the libraries panel, versions, pins, the agent's answer ----------

SCRIPT = "<script>window.__injected = 1</script>"


def lib_page(version: str, library: str) -> list[Node]:
    """One page of ``library`` at ``version``: Markdown with emphasis, inline code, a fenced
    Python block and a script tag that must stay text."""
    body = f"Install **widget** with `pip install {library}=={version}` then {SCRIPT} it."
    content = (
        f"# Widget setup {version}\n\n{body}\n\n"
        f"```python\nimport widget\nwidget.register({version!r})\n```\n"
    )
    return [
        Node(
            uid="guide/setup",
            kind="page",
            dims={"title": f"Widget setup {version}", "body": body},
            content=content,
            meta={"url": "/guide/setup/"},
        )
    ]


@pytest.fixture(scope="module")
def libs_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("libs") / "deps"
    lib = LibraryCollection.create(path, encoder=None)
    for name, version in (("demo", "1.0"), ("demo", "2.0"), ("other", "0.3")):
        commit = f"{name}{version}".ljust(40, "0")
        source = f"/src/{name}-{version}"
        pages = lib_page(version, name)
        lib.sync_library(name, version, pages, schema=SCHEMA, source=source, commit=commit)
    return path


@pytest.fixture(scope="module")
def libs_server(libs_path: Path) -> Iterator[str]:
    with LiveServer(LibraryCollection.open(libs_path)) as s:
        yield s.url


def until(driver: Any, check: Callable[[Any], Any], what: str) -> Any:
    """selenium's explicit wait on a DOM condition, saying what it waited for."""
    from selenium.common.exceptions import StaleElementReferenceException
    from selenium.webdriver.support.ui import WebDriverWait

    wait = WebDriverWait(driver, WAIT_S, ignored_exceptions=(StaleElementReferenceException,))
    return wait.until(check, f"timed out waiting for {what}")


def libraries_shown(driver: Any, url: str, count: int) -> None:
    driver.get(url + "/")
    until(driver, lambda d: d.execute_script("return document.body.dataset.libraries"), "libs")
    until(driver, lambda d: len(css(d, "#libs .lib")) == count, f"{count} libraries")


def search_for(driver: Any, query: str, labels: set[str]) -> list[str]:
    """Search and wait for hits labelled exactly ``labels``; the labels in page order."""
    type_query(driver, query)
    until(
        driver,
        lambda d: (
            d.execute_script("return document.body.dataset.searchState") == "done"
            and {e.text for e in css(d, "#results .lib-label")} == labels
        ),
        f"hits of {sorted(labels)}",
    )
    return [e.text for e in css(driver, "#results .lib-label")]


def test_the_libraries_panel_lists_versions_with_provenance(
    browser: Any, libs_server: str, tmp_path: Path
) -> None:
    from selenium.webdriver.support.ui import Select

    libraries_shown(browser, libs_server, 2)
    rows = {e.get_attribute("data-key"): e for e in css(browser, "#libs .lib")}
    assert set(rows) == {"demo", "other"}
    demo = Select(css(browser, "#libs .lib[data-key='demo'] select.lib-version")[0])
    assert [o.get_attribute("value") for o in demo.options] == ["2.0", "1.0"]
    assert demo.first_selected_option.get_attribute("value") == "2.0"  # the newest held
    assert "newest" in demo.first_selected_option.text
    text = rows["demo"].text
    assert "/src/demo-2.0" in text and "demo2.000000" in text  # the commit, shortened
    assert re.search(r"indexed\s+20\d\d-\d\d-\d\d \S+ \((just now|.* ago)\)", text), text
    demo.select_by_value("1.0")
    until(browser, lambda d: "/src/demo-1.0" in rows["demo"].text, "the 1.0 provenance")
    other = css(browser, "#libs .lib[data-key='other'] select.lib-version")[0]
    assert not other.is_enabled()  # one version held: nothing to choose
    assert css(browser, "#libs-pane")[0].is_displayed()
    browser.save_screenshot(str(tmp_path / "libraries.png"))


def test_picking_a_version_changes_what_a_search_returns(browser: Any, libs_server: str) -> None:
    from selenium.webdriver.support.ui import Select

    libraries_shown(browser, libs_server, 2)
    assert sorted(search_for(browser, "widget", {"demo@2.0", "other@0.3"})) == [
        "demo@2.0",
        "other@0.3",
    ]
    assert "newest held" in text_of(browser, "#results .hit-lib")
    Select(css(browser, "#libs .lib[data-key='demo'] select.lib-version")[0]).select_by_value("1.0")
    until(
        browser,
        lambda d: {e.text for e in css(d, "#results .lib-label")} == {"demo@1.0", "other@0.3"},
        "hits of demo 1.0",
    )
    demo_hit = next(e for e in css(browser, "#results .hit-lib") if "demo@1.0" in e.text)
    assert "exact" in demo_hit.text and "/src/demo-1.0" in demo_hit.text
    assert "Widget setup 1.0" in text_of(browser, "#results .hit-open")
    # leave a library out: only the other one answers
    css(browser, "#libs .lib[data-key='other'] input.lib-on")[0].click()
    until(
        browser,
        lambda d: {e.text for e in css(d, "#results .lib-label")} == {"demo@1.0"},
        "hits of demo 1.0 alone",
    )
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    browser.save_screenshot(str(ARTIFACTS / "libraries-search.png"))


def test_a_pinned_project_shows_its_pins(browser: Any, libs_path: Path, tmp_path: Path) -> None:
    app = tmp_path / "app"
    app.mkdir()
    (app / "requirements.txt").write_text("demo==1.5\n")  # not held: 1.0 is the nearest
    reader = LibraryCollection.open(libs_path)
    reader.use_project(app)
    with LiveServer(reader) as s:
        libraries_shown(browser, s.url, 2)
        pin = text_of(browser, "#libs .lib[data-key='demo'] .lib-pin")
        assert "project wants 1.5" in pin and "reads 1.0" in pin and "nearest" in pin
        selected = css(browser, "#libs .lib[data-key='demo'] select.lib-version option:checked")
        assert selected[0].get_attribute("value") == "1.0" and "pinned" in selected[0].text
        # the project reads its own libraries only: other is read only when chosen
        assert "not read unless chosen" in text_of(browser, "#libs .lib[data-key='other']")
        search_for(browser, "widget", {"demo@1.0"})
        assert "nearest to 1.5" in text_of(browser, "#results .hit-lib")
        browser.save_screenshot(str(tmp_path / "pins.png"))


def test_the_agent_answer_is_rendered_markdown_with_copyable_code(
    browser: Any, libs_server: str
) -> None:
    libraries_shown(browser, libs_server, 2)
    search_for(browser, "widget", {"demo@2.0", "other@0.3"})
    results = text_of(browser, "#results")
    assert "**" not in results and "`" not in results  # snippets rendered, not raw
    assert SCRIPT in results  # a script in a node's text is text
    css(browser, "#answer-box > summary")[0].click()
    until(browser, lambda d: css(d, "#answer .code-box button.copy"), "a code block")
    answer = text_of(browser, "#answer")
    assert "**" not in answer and "`" not in answer
    assert "widget" in text_of(browser, "#answer strong")
    assert SCRIPT in answer
    code = css(browser, "#answer pre code.language-python")
    assert code and "widget.register(" in code[0].text
    assert browser.execute_script("return document.querySelectorAll('#answer script').length") == 0
    assert browser.execute_script("return window.__injected") is None  # never executed
    button = css(browser, "#answer .code-box button.copy")[0]
    button.click()
    until(browser, lambda d: button.get_attribute("data-copied"), "the copy")
    assert button.text in ("copied", "selected: Ctrl+C")
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    browser.save_screenshot(str(ARTIFACTS / "agent-answer.png"))


def test_a_plain_collection_has_a_one_library_panel(browser: Any, server: str) -> None:
    libraries_shown(browser, server, 1)
    assert not css(browser, "#libs input.lib-on")  # nothing to leave out
    assert not css(browser, "#libs select.lib-version")[0].is_enabled()
    type_query(browser, "install")
    until(browser, lambda d: css(d, "#results .hit"), "results")
    assert not css(browser, "#results .hit-lib")  # a plain collection's hits name no library
