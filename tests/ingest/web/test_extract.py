"""An HTML page -> its main content as Markdown, title, breadcrumb, previous/next and
whether it is an answer, for each generator's markup (``tests/fixtures/web``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from cogitave.ingest.web.extract import extract
from cogitave.ingest.web.markdown import code_language, to_markdown

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "web"
CHROME_WORDS = ("Edit this page", "Edit page", "Copyright", "Previous", "On this page",
                "Copy", "Was this helpful", "Direct link", "Section titled", "Last modified",
                "Permalink", "¶")  # fmt: skip


def link(href: str) -> str | None:
    return href


@pytest.mark.parametrize(
    ("name", "generator", "crumbs", "prev", "nxt"),
    [
        ("docusaurus", "docusaurus", ["🏠", "Guides"], "/docs/intro", "/docs/guides/retries"),
        ("vitepress", "vitepress", ["Guides"], "/guide/intro.html", "/guide/retries.html"),
        ("starlight", "starlight", ["Guides"], "/guides/intro/", "/guides/retries/"),
        ("docsy", "docsy", ["Documentation", "Guides"], None, None),
        ("readthedocs", "readthedocs", ["Guides"], "intro.html", "retries.html"),
        ("nextra", "nextra", ["Guides"], None, None),
        ("gitbook", "gitbook", ["Guides"], None, None),
    ],
)
def test_generator_pages(
    name: str, generator: str, crumbs: list[str], prev: str | None, nxt: str | None
) -> None:
    html = (FIXTURES / f"{name}.html").read_text(encoding="utf-8")
    ex = extract(html, f"https://acme.example/{name}/configure", link)
    assert ex is not None
    assert ex.generator == generator
    assert ex.title == "Configure the client"
    assert ex.not_answer is None and not ex.shell
    md = ex.markdown
    assert md.startswith("# Configure the client")
    assert "reads its settings from `acme.toml` before the first request" in md
    assert "## Timeouts { #timeouts }" in md
    assert "```python\nclient = Client(timeout=5)\n```" in md
    assert "[retries](" in md and "#backoff)" in md
    for word in CHROME_WORDS:
        assert word not in md, f"{name}: chrome {word!r} in the content"
    assert [t for t, _ in ex.breadcrumb if t != "Configure the client"] == crumbs
    assert (ex.prev, ex.next) == (prev, nxt)


def test_starlight_keeps_its_asides_and_title_outside_the_content() -> None:
    html = (FIXTURES / "starlight.html").read_text(encoding="utf-8")
    ex = extract(html, "https://acme.example/guides/configure/", link)
    assert ex is not None
    assert "Timeouts apply per request." in ex.markdown
    assert ex.site_name == "Acme"


def test_hreflang_and_site_name() -> None:
    html = (FIXTURES / "docusaurus.html").read_text(encoding="utf-8")
    ex = extract(html, "https://acme.example/docs/guides/configure", link)
    assert ex is not None
    assert ex.hreflang["fr"] == "https://acme.example/fr/docs/guides/configure"
    assert ex.site_name == "Acme Docs"
    assert ex.lang == "en"


def page(body: str, title: str = "A page", head: str = "") -> str:
    return (f"<html lang='en'><head><title>{title} - Site</title>{head}</head><body>"
            f"<nav><a href='/'>Home</a></nav><main>{body}</main></body></html>")  # fmt: skip


def test_not_answers() -> None:
    links = "".join(f"<li><a href='/p{i}/'>Page {i}</a></li>" for i in range(8))
    nav = extract(page(f"<h1>Contents</h1><ul>{links}</ul>" + "x" * 300), "https://h/c/", link)
    assert nav is not None and nav.not_answer is None  # prose beside the links: an answer
    nav = extract(page(f"<h1>Contents</h1><ul>{links}</ul>"), "https://h/contents/", link)
    assert nav is not None and nav.not_answer == "navigation"
    body = "<h1>Index</h1><p>" + "words " * 100 + "</p>"
    for url, reason in (
        ("https://h/genindex.html", "index"),
        ("https://h/search.html", "search"),
        ("https://h/py-modindex.html", "index"),
        ("https://h/404.html", "404"),
    ):
        ex = extract(page(body), url, link)
        assert ex is not None and ex.not_answer == reason, url
    lost = extract(page(body, "Page not found"), "https://h/x/", link)
    assert lost is not None and lost.title == "Index"
    noindex = extract(
        page(body, head="<meta name='robots' content='noindex'>"), "https://h/y/", link
    )
    assert noindex is not None and noindex.not_answer == "noindex"


def test_an_empty_javascript_shell() -> None:
    shell = (
        "<html><head><script src='/app.js'></script></head>"
        "<body><div id='root'></div></body></html>"
    )
    ex = extract(shell, "https://h/app/", link)
    assert ex is not None and ex.shell
    full = extract(
        page("<h1>Real</h1><p>" + "text " * 80 + "</p><script>1</script>"), "https://h/", link
    )
    assert full is not None and not full.shell


def test_unknown_layouts_fall_back_to_readability() -> None:
    said = "explains how the frobnicator settles its gears."
    prose = "".join(f"<p>Paragraph {i} {said}</p>" for i in range(12))
    html = (f"<html><head><title>Gears</title></head><body><div id='menu'><a href='/a'>A</a>"
            f"<a href='/b'>B</a></div><div class='post'><h1>Gears</h1>{prose}</div>"
            f"<div id='foot'>© someone</div></body></html>")  # fmt: skip
    ex = extract(html, "https://h/gears", link)
    assert ex is not None and ex.generator == "readability"
    assert "frobnicator settles" in ex.markdown and ex.title == "Gears"


def test_markdown_shapes() -> None:
    from lxml import html as lxml_html

    root = lxml_html.fragment_fromstring(
        """<div><section id="intro"><h2>Intro<a class="headerlink" href="#intro">¶</a></h2>
        <p>Use <strong>bold</strong>, <em>stress</em> and *stars* in a
        <a href="x.html#y">link</a>.</p>
        <ol start="3"><li>third<ul><li>nested</li></ul></li><li>fourth</li></ol>
        <table><tr><th>key</th><th>value</th></tr><tr><td>a|b</td><td>1</td></tr></table>
        <blockquote><p>quoted</p></blockquote>
        <dl class="py method"><dt class="sig" id="mod.Thing.run"><span>Thing.run</span>
        (<em>fast=True</em>)<a class="headerlink" href="#mod.Thing.run">¶</a></dt>
        <dd><p>Run it.</p></dd></dl>
        <pre><code class="language-rust">fn main() {}</code></pre></section></div>"""
    )
    out = to_markdown(root, lambda href: "https://h/" + href)
    md = out.markdown
    assert "## Intro { #intro }" in md and "¶" not in md
    assert "**bold**" in md and "*stress*" in md and "\\*stars\\*" in md
    assert "[link](https://h/x.html#y)" in md
    assert "3. third\n   - nested\n4. fourth" in md
    assert "| key | value |\n|---|---|\n| a\\|b | 1 |" in md
    assert "> quoted" in md
    assert "```rust\nfn main() {}\n```" in md
    assert "`Thing.run (fast=True)`" in md
    (api,) = out.api
    assert (api.name, api.objtype, api.section) == ("mod.Thing.run", "method", "intro")
    assert "Run it." in api.markdown


def test_code_language_marks() -> None:
    from lxml import html as lxml_html

    for snippet, language in (
        ("<div class='highlight-python3'><div><pre>x</pre></div></div>", "python"),
        ("<pre data-language='ts'><code>x</code></pre>", "typescript"),
        ("<pre><code class='lang-go'>x</code></pre>", "go"),
        ("<div><pre>x</pre></div>", "text"),
        # Sphinx's wrapper above a line-number table; `default`: Python when Pygments lexed it
        ("<div class='highlight-rust notranslate'><table class='highlighttable'><tr>"
         "<td class='linenos'><pre>1</pre></td><td class='code'><div class='highlight'>"
         "<pre>fn</pre></div></td></tr></table></div>", "rust"),
        ("<div class='highlight-default notranslate'><div class='highlight'><pre><span></span>"
         "<span class='kn'>import</span> os</pre></div></div>", "python"),
        ("<div class='highlight-default notranslate'><div class='highlight'><pre><span></span>"
         "$ make</pre></div></div>", "text"),
    ):  # fmt: skip
        root = lxml_html.fragment_fromstring(snippet, create_parent="div")
        assert code_language(root.xpath(".//pre")[-1]) == language, snippet


def test_a_table_of_contents_label_is_not_a_breadcrumb() -> None:
    html = """<html><head><title>Templates</title></head><body>
    <div class="related" role="navigation"><ul>
      <li class="nav-item nav-item-0"><a href="index.html">Contents:</a> &#187;</li>
      <li class="nav-item nav-item-1"><a href="api.html">API</a> &#187;</li>
    </ul></div>
    <div class="bodywrapper"><div class="body" role="main">
      <h1>Templates</h1><p>Template designer documentation, long enough to be a page.</p>
    </div></div><div class="sphinxsidebar"></div></body></html>"""
    ex = extract(html, "https://jinja.example/templates.html", link)
    assert ex is not None and ex.generator == "sphinx"
    assert [t for t, _ in ex.breadcrumb] == ["API"]
