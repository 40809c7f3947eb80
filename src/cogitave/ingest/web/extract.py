"""A fetched HTML page -> what the docs graph needs of it: the main content as Markdown, the
title, breadcrumb, previous/next pages, links, language, alternates, and whether it is an
answer at all.

The main content is chosen per generator, from the marks each leaves in its HTML (Sphinx and
the Read the Docs theme, MkDocs and Material, Docusaurus, VitePress, Starlight, Hugo/Docsy,
Nextra, GitBook); a page none of them made goes to a general extractor (readability-lxml) and,
failing that, to its ``<main>``/``<article>``. Inside the content, site chrome is removed
before conversion: permalink icons, "edit this page", feedback widgets, the previous/next
footer, breadcrumbs, local tables of contents, copy buttons.

Not every page is an answer: search pages, Sphinx's general and module indexes, 404 pages,
pages a site marks ``noindex`` and pages that are navigation only (links and almost no prose)
are flagged (:attr:`Extracted.not_answer`), so the crawl follows their links and indexes
nothing of them. An HTML page whose body holds almost no text but scripts is an empty shell
(:attr:`Extracted.shell`): a JavaScript application that renders in the browser.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from lxml import etree
from lxml import html as lxml_html
from lxml.cssselect import CSSSelector

from cogitave.ingest.web.markdown import ApiFound, HtmlElement, heading_anchor, to_markdown

SHELL_MAX_TEXT = 200
"""Characters of visible text under which a page with scripts is an empty shell."""
NAV_ONLY_MAX_TEXT = 80
"""Characters of prose (outside links and headings) under which a page of links is a
navigation page."""


@dataclass(frozen=True)
class Generator:
    """How one site generator marks its pages: a mark that identifies it, the element that
    holds the main content (first found wins), and its breadcrumb links."""

    name: str
    marks: tuple[str, ...]
    main: tuple[str, ...]
    crumbs: tuple[str, ...] = ()


GENERATORS = (
    Generator("mkdocs-material", (".md-content", ".md-container"),
              ("article.md-content__inner", ".md-content"),
              ("nav.md-path a", ".md-path a")),
    Generator("docusaurus", (".theme-doc-markdown", "#__docusaurus"),
              (".theme-doc-markdown", "article .markdown", "article"),
              (".theme-doc-breadcrumbs a", "nav[aria-label='Breadcrumbs'] a")),
    Generator("vitepress", (".VPDoc", ".vp-doc", "#VPContent"), (".vp-doc > div", ".vp-doc"),
              (".VPSidebarItem.has-active > .item .text",)),
    Generator("starlight", (".sl-markdown-content", "starlight-theme-select"),
              (".sl-markdown-content",)),
    Generator("docsy", (".td-content", ".td-main"), (".td-content",),
              ("ol.breadcrumb a", "nav[aria-label='breadcrumb'] a")),
    Generator("readthedocs", (".wy-nav-content", ".rst-content"),
              ("div[itemprop='articleBody']", ".rst-content div[role='main']", ".document"),
              (".wy-breadcrumbs li.breadcrumb-item a",
               ".wy-breadcrumbs li:not(.wy-breadcrumbs-aside) a")),
    Generator("sphinx", ("div.sphinxsidebar", "div.bodywrapper", "link[rel='index']",
                         ".sphinxsidebarwrapper", "#furo-main-content", ".bd-article"),
              ("div[itemprop='articleBody']", "article[role='main']", ".bd-article",
               "div.body[role='main']", "div[role='main']", "div.body", "article"),
              ("div.related li.nav-item a", ".bd-breadcrumbs a", "nav.breadcrumbs a")),
    Generator("nextra", (".nextra-content", ".nextra-nav-container", ".nextra-sidebar-container"),
              ("article main", ".nextra-content", "main article", "article"),
              (".nextra-breadcrumb a",)),
    Generator("gitbook", ("[data-testid='page.contentEditor']", "meta[content*='GitBook']"),
              ("[data-testid='page.contentEditor']", "main")),
    Generator("mkdocs", ("meta[name='generator'][content^='mkdocs']",),
              ("div[role='main']", "main", "article")),
    Generator("hugo", ("meta[name='generator'][content^='Hugo']",),
              ("main article", "article", "main", "#content")),
)  # fmt: skip
GENERIC_CRUMBS = (
    "[aria-label='breadcrumb'] a", "[aria-label='breadcrumbs'] a", "[aria-label='Breadcrumb'] a",
    ".breadcrumbs a", ".breadcrumb a",
)  # fmt: skip
# What a trail's first item says when it is only the table of contents' label.
TOC_LABELS = frozenset(("contents", "table of contents", "toc", "site contents"))
# Inside the main content: chrome, not content (tags; classes; a tag with a class).
CHROME_TAGS = frozenset(
    "script style noscript template button nav footer form iframe".split()  # noqa: SIM905
)
CHROME_CLASSES = frozenset(
    "headerlink hash-link header-anchor anchor-link sl-anchor-link anchorjs-link "  # noqa: SIM905
    "md-source-file md-content__button md-feedback theme-edit-this-page theme-doc-footer "
    "theme-doc-breadcrumbs theme-doc-toc-mobile theme-doc-version-badge "
    "theme-doc-version-banner pagination-nav edit-link edit-this-page rst-footer-buttons "
    "prev-next-area prev-next-bottom td-page-meta td-page-meta__lastmod feedback--container "
    "copybutton md-clipboard breadcrumbs breadcrumb VPDocFooter vp-doc-footer pager "
    "sl-hidden sr-only visually-hidden viewcode-link md-tags skip-link nextra-breadcrumb "
    "toc".split()
)
CHROME_TAGGED = frozenset({("a", "anchor"), ("span", "lang"), ("div", "toc")})
CHROME_CLASS_PARTS = ("lastmod", "last-updated")


def is_chrome(el: HtmlElement) -> bool:
    """Whether an element inside the main content is site chrome (see the constants)."""
    tag = el.tag if isinstance(el.tag, str) else ""
    if tag in CHROME_TAGS:
        return True
    attrs = el.attrib
    if attrs.get("role") == "navigation" or "hidden" in attrs:
        return True
    if attrs.get("id") == "skip-to-content":
        return True
    classes = attrs.get("class", "").split()
    if not classes:
        return False
    if any(c in CHROME_CLASSES or (tag, c) in CHROME_TAGGED for c in classes):
        return True
    if "contents" in classes and "local" in classes:  # Sphinx's local table of contents
        return True
    return any(p in c for c in classes for p in CHROME_CLASS_PARTS)


NOT_ANSWERS = (
    (re.compile(r"(?:^|/)search(?:\.html?)?/?$"), "search"),
    (re.compile(r"(?:^|/)(?:genindex(?:-[\w-]+)?|py-modindex|[a-z]*-?modindex)\.html?$"), "index"),
    (re.compile(r"(?:^|/)404(?:\.html?)?/?$"), "404"),
)
_TITLE_SEPARATORS = re.compile(r"\s+(?:[—–|·»:]|-{1,2})\s+")


@dataclass
class Extracted:
    """What one HTML page gives the crawl and the graph."""

    title: str
    markdown: str
    generator: str
    lang: str | None = None
    api: list[ApiFound] = field(default_factory=list)
    breadcrumb: list[tuple[str, str | None]] = field(default_factory=list)
    """Ancestors, top first: (title, URL or None)."""
    prev: str | None = None
    next: str | None = None
    links: list[str] = field(default_factory=list)
    """Every link of the page, as written (the crawl resolves them)."""
    hreflang: dict[str, str] = field(default_factory=dict)
    markdown_alternate: str | None = None
    canonical: str | None = None
    site_name: str | None = None
    """The site's name as its pages give it (``og:site_name``)."""
    description: str = ""
    """The page's ``<meta name="description">`` (else ``og:description``)."""
    keywords: str = ""
    shell: bool = False
    not_answer: str | None = None


def parse_html(text: str) -> HtmlElement | None:
    """An HTML document's tree (None for one with no element)."""
    try:
        doc = lxml_html.document_fromstring(text.encode("utf-8", "replace"))
    except (etree.ParserError, ValueError):
        return None
    return doc


def extract(text: str, url: str, link: Callable[[str], str | None]) -> Extracted | None:
    """The facts of the page at ``url`` (see the module doc); ``link`` maps a link as written
    to the URL the Markdown shows (None: text only). None when the text is not HTML."""
    doc = parse_html(text)
    if doc is None:
        return None
    head = _head_facts(doc)
    classes = _page_classes(doc)
    gen, main = _main_content(doc, classes)
    crumbs = _breadcrumb(doc, gen, classes)
    prev, nxt = _neighbours(doc)
    links = [str(a.get("href")) for a in doc.iter("a") if a.get("href")]
    page_h1 = _page_title_h1(doc, main)
    shell = _is_shell(doc)
    if main is None:
        main = _fallback(text)
        gen = "readability" if main is not None else gen
    title_tag = _text(doc.find(".//title")) if doc.find(".//title") is not None else ""
    out = Extracted(
        title="",
        markdown="",
        generator=gen,
        lang=head["lang"],
        breadcrumb=crumbs,
        prev=prev,
        next=nxt,
        links=links,
        hreflang=head["hreflang"],
        markdown_alternate=head["markdown"],
        canonical=head["canonical"],
        site_name=head["site_name"],
        description=head["description"],
        keywords=head["keywords"],
        shell=shell,
    )
    if main is None:
        out.title = _clean_title(title_tag)
        out.not_answer = "empty"
        return out
    for el in [e for e in main.iterdescendants() if is_chrome(e)]:
        if el.getparent() is not None:
            el.drop_tree()
    converted = to_markdown(main, link)
    markdown = converted.markdown
    if page_h1 is not None and not re.match(r"^# ", markdown):
        anchor = heading_anchor(page_h1)
        attr = f" {{ #{anchor} }}" if anchor and re.fullmatch(r"[\w:.-]+", anchor) else ""
        markdown = f"# {' '.join(_text(page_h1).split())}{attr}\n\n{markdown}"
    first = re.match(r"^# (.+?)(?: \{ #[\w:.-]+ \})?$", markdown, re.M)
    out.title = first.group(1).strip() if first else _clean_title(title_tag)
    out.markdown, out.api = markdown, converted.api
    out.not_answer = _not_answer(url, doc, main, out.title, head["noindex"])
    return out


# -- the parts ------------------------------------------------------------------------------
def _head_facts(doc: HtmlElement) -> dict[str, object]:
    hreflang: dict[str, str] = {}
    markdown = canonical = None
    noindex = False
    for el in doc.iter("link"):
        rel = (el.get("rel") or "").lower().split()
        href = el.get("href")
        if not href:
            continue
        if "alternate" in rel and el.get("hreflang"):
            hreflang[str(el.get("hreflang")).lower()] = str(href)
        elif "alternate" in rel and (el.get("type") or "").lower() in (
            "text/markdown", "text/x-markdown"
        ):  # fmt: skip
            markdown = str(href)
        elif "canonical" in rel:
            canonical = str(href)
    site_name = None
    meta: dict[str, str] = {}
    for el in doc.iter("meta"):
        key = (el.get("name") or el.get("property") or "").lower()
        if key in ("description", "og:description", "keywords") and el.get("content"):
            meta.setdefault(key, " ".join(str(el.get("content")).split()))
        if (el.get("name") or "").lower() == "robots" and "noindex" in (el.get("content") or ""):
            noindex = True
        if (el.get("property") or "").lower() == "og:site_name" and el.get("content"):
            site_name = " ".join(str(el.get("content")).split()) or None
    lang = doc.get("lang") or doc.get("xml:lang")
    return {"hreflang": hreflang, "markdown": markdown, "canonical": canonical,
            "noindex": noindex, "lang": str(lang) if lang else None,
            "site_name": site_name, "keywords": meta.get("keywords", ""),
            "description": meta.get("description") or meta.get("og:description", "")}  # fmt: skip


@functools.cache
def _selector(css: str) -> CSSSelector:
    """A compiled CSS selector (compiling one costs more than running it)."""
    return CSSSelector(css, translator="html")


_CLASS_IN_CSS = re.compile(r"\.([\w-]+)")


@functools.cache
def _needed_classes(css: str) -> frozenset[str]:
    """The classes every element a selector matches must carry somewhere in the page."""
    bare = re.sub(r"\[[^\]]*\]|:not\([^)]*\)", "", css)  # attribute values, negations
    return frozenset(_CLASS_IN_CSS.findall(bare))


def _select(doc: HtmlElement, css: str, classes: frozenset[str] | None = None) -> list[HtmlElement]:
    """The elements ``css`` matches; ``classes`` (every class the page uses) skips a
    selector naming a class the page lacks without running it over a large page."""
    if classes is not None and not _needed_classes(css) <= classes:
        return []
    return list(_selector(css)(doc))


def _first(
    doc: HtmlElement, selectors: tuple[str, ...], classes: frozenset[str] | None = None
) -> HtmlElement | None:
    for sel in selectors:
        found = _select(doc, sel, classes)
        if found:
            return found[0]
    return None


def _page_classes(doc: HtmlElement) -> frozenset[str]:
    """Every class any element of the page carries (one pass)."""
    out: set[str] = set()
    for el in doc.iter():
        value = el.get("class") if isinstance(el.tag, str) else None
        if value:
            out.update(value.split())
    return frozenset(out)


def _main_content(doc: HtmlElement, classes: frozenset[str]) -> tuple[str, HtmlElement | None]:
    """The generator that made the page and its main content element."""
    for gen in GENERATORS:
        if _first(doc, gen.marks, classes) is None:
            continue
        main = _first(doc, gen.main, classes)
        if main is not None and _text(main).strip():
            return gen.name, main
    main = _first(doc, ("main article", "article[role='main']", "[role='main']", "main", "article"))
    if main is not None and _text(main).strip():
        return "generic", main
    return "generic", None


def _fallback(text: str) -> HtmlElement | None:
    """The main content as readability-lxml finds it, when no generator's layout applies."""
    try:
        from readability import Document

        summary = Document(text).summary(html_partial=True)
    except Exception:  # its parser raises a broad set of errors on odd input
        return None
    try:
        el = lxml_html.fragment_fromstring(summary, create_parent="div")
    except (etree.ParserError, ValueError):
        return None
    return el if _text(el).strip() else None


def _page_title_h1(doc: HtmlElement, main: HtmlElement | None) -> HtmlElement | None:
    """The page's ``<h1>`` when it sits outside the main content (Starlight, some themes)."""
    if main is not None and main.find(".//h1") is not None:
        return None
    for h1 in doc.iter("h1"):
        if _text(h1).strip() and not h1.xpath("ancestor::header[@role='banner']|ancestor::nav"):
            return h1
    return None


def _breadcrumb(
    doc: HtmlElement, gen: str, classes: frozenset[str]
) -> list[tuple[str, str | None]]:
    selectors: tuple[str, ...] = ()
    for g in GENERATORS:
        if g.name == gen:
            selectors = g.crumbs
    for sel in (*selectors, *GENERIC_CRUMBS):
        found = _select(doc, sel, classes)
        if found:
            return _without_toc_label(
                [(t, a.get("href")) for a in found if (t := " ".join(_text(a).split()))]
            )
    crumbs = _json_ld_crumbs(doc)
    return _without_toc_label(crumbs or _sidebar_trail(doc))


def _without_toc_label(crumbs: list[tuple[str, str | None]]) -> list[tuple[str, str | None]]:
    """The trail without a leading item that only labels the site's table of contents
    (Sphinx's root page, shown as "Contents:" on Jinja's pages): it names no section."""
    if crumbs and crumbs[0][0].rstrip(" :").lower() in TOC_LABELS:
        return crumbs[1:]
    return crumbs


def _json_ld_crumbs(doc: HtmlElement) -> list[tuple[str, str | None]]:
    for script in doc.xpath("//script[@type='application/ld+json']"):
        try:
            data = json.loads(script.text or "")
        except ValueError:
            continue
        for item in data if isinstance(data, list) else [data]:
            if isinstance(item, dict) and item.get("@type") == "BreadcrumbList":
                out: list[tuple[str, str | None]] = []
                for e in item.get("itemListElement") or []:
                    if not isinstance(e, dict):
                        continue
                    target = e.get("item")
                    name = e.get("name") or (target.get("name") if isinstance(target, dict) else "")
                    href = target.get("@id") if isinstance(target, dict) else target
                    if isinstance(name, str) and name.strip():
                        out.append((name.strip(), href if isinstance(href, str) else None))
                return out
    return []


def _sidebar_trail(doc: HtmlElement) -> list[tuple[str, str | None]]:
    """The groups above the sidebar's current link (``aria-current="page"``, Material's
    active link): each enclosing item's own label, top first."""
    current = doc.xpath(
        "//a[@aria-current='page'] | //*[contains(@class,'md-nav__link--active')]"
        " | //a[contains(@class,'menu__link--active')][not(contains(@class,'sublist'))]"
    )
    if not current:
        return []
    trail: list[tuple[str, str | None]] = []
    here = current[-1]
    for anc in here.iterancestors():
        if anc.tag in ("aside", "body", "header"):
            break
        own = here.getparent() is anc or here.getparent().getparent() is anc
        if anc.tag not in ("li", "details") or own:
            continue
        label = anc.xpath("./summary|./label|./a|./span|./button|./div/a|./div/span|./div/button")
        if label:
            text = " ".join(_text(label[0]).split())
            href = label[0].get("href") if label[0].tag == "a" else None
            if text:
                trail.append((text, href))
    return trail[::-1]


def _neighbours(doc: HtmlElement) -> tuple[str | None, str | None]:
    """The previous and next pages in the site's reading order."""
    found: dict[str, str] = {}
    for el in (*doc.iter("link"), *doc.iter("a")):
        rels = (el.get("rel") or "").lower().split()
        for rel in ("prev", "next"):
            if rel in rels and el.get("href") and rel not in found:
                found[rel] = str(el.get("href"))
    for rel, sels in (
        ("prev", ("a.pagination-nav__link--prev", "a.pager-link.prev", "a.md-footer__link--prev")),
        ("next", ("a.pagination-nav__link--next", "a.pager-link.next", "a.md-footer__link--next")),
    ):
        if rel not in found and (el := _first(doc, sels)) is not None and el.get("href"):
            found[rel] = str(el.get("href"))
    if "previous" not in found:
        for el in doc.iter("link"):
            if "previous" in (el.get("rel") or "").lower().split() and el.get("href"):
                found.setdefault("prev", str(el.get("href")))
    return found.get("prev"), found.get("next")


def _is_shell(doc: HtmlElement) -> bool:
    body = doc.find(".//body")
    if body is None:
        return True
    if not any(s.get("src") or (s.text or "").strip() for s in doc.iter("script")):
        return False
    hidden = sum(
        len(" ".join(str(el.text_content()).split()))
        for el in body.iter("script", "style", "noscript", "template")
    )
    visible = len(" ".join(str(body.text_content()).split())) - hidden
    return visible < SHELL_MAX_TEXT


def _not_answer(
    url: str, doc: HtmlElement, main: HtmlElement, title: str, noindex: bool
) -> str | None:
    path = urlsplit(url).path
    for pattern, reason in NOT_ANSWERS:
        if pattern.search(path):
            return reason
    low = title.lower()
    if re.search(r"\b404\b", low) or "page not found" in low or low.strip() == "not found":
        return "404"
    if noindex:
        return "noindex"
    links = [a for a in main.iter("a") if a.get("href")]
    if len(links) < 5:
        return None

    def size(el: HtmlElement) -> int:
        return len(" ".join(str(el.text_content()).split()))

    headings = [h for h in main.iter("h1", "h2", "h3", "h4")]
    prose = size(main) - sum(size(a) for a in links) - sum(size(h) for h in headings)
    return "navigation" if prose < NAV_ONLY_MAX_TEXT else None


def _clean_title(title: str) -> str:
    """A ``<title>`` without the site's name after a separator (``x — Python 3.11 docs``)."""
    title = " ".join(title.split())
    parts = _TITLE_SEPARATORS.split(title)
    return parts[0].strip() if parts and parts[0].strip() else title


def _text(el: HtmlElement | None) -> str:
    return "" if el is None else str(el.text_content())
