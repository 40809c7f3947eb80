"""The docs graph while it is built: pages by uid, the node and edge draft, the report's
tally and the link resolver, with the services every step of the read uses.

:class:`Builder` is that state. Its methods are the narrow interface the steps
(:mod:`~cogitave.ingest.docs.pages`, :mod:`~cogitave.ingest.docs.structure`,
:mod:`~cogitave.ingest.docs.nodes`, :mod:`~cogitave.ingest.docs.edges`) share: add a page,
read an include, a page's URL (absolute when the site's base is known), a file's path as
shown to the user, a page's Markdown with its includes expanded. Every file is read through
the site's :class:`~cogitave.ingest.confined.TreeReader`: an include that resolves outside
the tree is refused and listed, and what one page pulls in through includes is bounded by
:data:`~cogitave.ingest.confined.MAX_INCLUDED_BYTES`.
"""

from __future__ import annotations

import os
import posixpath
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit

from cogitave.ingest.confined import MAX_INCLUDED_BYTES, TreeReader
from cogitave.ingest.docs.frontmatter import FrontMatter, FrontMatterMapping, Unbuilt, strings
from cogitave.ingest.docs.graph import GraphDraft
from cogitave.ingest.docs.includes import expand, language_of, rewrite_links, tidy
from cogitave.ingest.docs.links import LinkResolver, PageRef
from cogitave.ingest.docs.parse import ParsedPage, parse_page, slugify
from cogitave.ingest.docs.paths import humanize, is_index, normalize_url
from cogitave.ingest.docs.report import Tally
from cogitave.ingest.docs.site import Site
from cogitave.ingest.docs.sphinx import ApiEntry, RstSource
from cogitave.ingest.docs.urls import url_of
from cogitave.ingest.records import Problem


@dataclass
class Page:
    """A page of the tree: its file, text, front matter, parse, URL and title."""

    uid: str
    rel: str
    file: Path
    text: str
    front: FrontMatter
    parsed: ParsedPage
    url: str
    title: str
    aliases: list[str]
    api: list[ApiEntry] = field(default_factory=list)  # Sphinx: the objects it declares

    @property
    def ref(self) -> PageRef:
        return PageRef(self.uid, self.rel, self.url)

    def container(self, heading: int) -> str:
        """uid of the innermost section holding ``heading`` (the page when none)."""
        s = self.parsed.section_of(heading)
        return self.uid if s < 0 else f"{self.uid}#{self.parsed.headings[s].anchor}"

    def at(self, anchor: str) -> str:
        """The URL of ``anchor`` on this page (on its section's page, for a page shown there:
        its URL has an anchor already)."""
        return f"{self.url.partition('#')[0]}#{anchor}" if anchor else self.url

    def heading_trail(self, i: int) -> list[str]:
        """Titles of the sections from the page down to heading ``i`` (included)."""
        out: list[str] = []
        while i >= 0:
            h = self.parsed.headings[i]
            if h.is_section:
                out.append(h.text)
            i = h.parent
        return out[::-1]


class Builder:
    """The state of one read (see the module doc)."""

    def __init__(self, site: Site, mapping: FrontMatterMapping) -> None:
        self.site = site
        self.reader: TreeReader = site.tree()
        self.mapping = mapping
        self.pages: dict[str, Page] = {}
        self.graph = GraphDraft()
        self.tally = Tally()
        self.problems: list[Problem] = []
        self.resolver = LinkResolver(site.shape, site.site_url, other_trees=site.other_trees)
        self.sources: dict[Path, str | None] = {}  # included file -> its source_file uid
        self.trail: dict[str, list[str]] = {}  # page uid -> titles above it (nav, toctree)
        self.rst: dict[str, RstSource] = {}  # reStructuredText pages, parsed, by uid
        self.snippets: set[str] = set()  # uids of pages built nowhere (drafts, headless...)
        # MyST ``(label)=`` -> (node uid, anchor of the heading on its page, heading title)
        self.myst_labels: dict[str, tuple[str, str, str]] = {}
        self.cascades: dict[str, Unbuilt] = {}  # Hugo: section folder -> the pages below unbuilt
        self.api_refs: Counter[str] = Counter()  # Python-domain roles: resolved / undeclared
        self.texts: dict[Path, str] = {}  # page file -> its text (to find an include's line)
        self._included: Counter[Path] = Counter()  # page file -> bytes its includes pulled in
        self._base = Path(os.path.abspath(site.base))
        self._shown: dict[tuple[Path, bool], str] = {}
        self._rel_files: dict[str, Path] = {}  # page rel -> its file (a repository's view)

    # -- pages ----------------------------------------------------------------------------
    def add_page(
        self,
        uid: str,
        rel: str,
        file: Path,
        text: str,
        front: FrontMatter,
        nav_titles: Mapping[str, str],
        parsed: ParsedPage | None = None,
        *,
        in_section: bool = False,
    ) -> Page:
        """Add a page; ``in_section``: the page is shown on its section's page (an unbuilt
        page its section lists), so its URL is the section's, at the anchor of its title."""
        shown = self.shown(file)
        hugo = self.site.shape == "hugo"
        if parsed is None:
            style = self.site.anchor_style
            myst = self.site.shape == "sphinx"
            parsed = parse_page(front.body, style, front.offset, term_anchors=hugo, myst_roles=myst)
        titles = self.strings(front.data, self.mapping.title, shown)
        title = (titles[0] if titles else "") or parsed.title or nav_titles.get(rel, "")
        url = url_of(self.site, rel, front.data)
        if in_section:
            section = posixpath.dirname(url.rstrip("/")) + "/"
            url = f"{section}#{slugify(title or humanize(rel), self.site.anchor_style)}"
        aliases = self.strings(front.data, self.mapping.aliases, shown)
        parent_url = url if is_index(rel) else posixpath.dirname(url.rstrip("/")) + "/"
        aliases = [normalize_url(a if a.startswith("/") else parent_url + a) for a in aliases]
        page = Page(uid, rel, file, text, front, parsed, url, title or humanize(rel), aliases)
        self.pages[uid] = page
        self.resolver.add_page(page.ref, aliases, _anchor_map(page), page.title)
        return page

    # -- includes -------------------------------------------------------------------------
    def read_include(self, file: Path, written: str, line: int = 0) -> tuple[str, str] | None:
        """(text, language) of the file an include in ``file`` (at ``line``; 0: unknown)
        names, found like :meth:`find_include`; None when it is missing, unreadable or
        refused (listed in the report: outside the tree, too large, past the page's budget)."""
        found = self.find_include(file, written.lstrip("/"), line)
        if found is None:
            return None
        where = self._where(file, written, line)
        try:
            text = self.reader.read_text(found, where=where, written=written)
        except (OSError, UnicodeDecodeError):
            return None
        if text is None:
            return None
        self._included[file] += len(text)
        if self._included[file] > MAX_INCLUDED_BYTES:
            mb = MAX_INCLUDED_BYTES // (1024 * 1024)
            self.reader.refuse(where, written, f"past the {mb} MB a page may include; not read")
            return None
        return text, language_of(found)

    def find_include(self, file: Path, written: str, line: int = 0) -> Path | None:
        """The file an include directive in ``file`` names: ``written`` relative to the first
        of :meth:`include_bases` it is found from, inside the tree (or a folder allowed
        outside it). One found only outside is refused and listed, with the
        ``--allow-outside`` that would read it."""
        refused: Path | None = None
        for base in self.include_bases(file):
            candidate = Path(os.path.normpath(base / written))
            where = self.reader.locate(candidate)
            if where == "file":
                return candidate
            if where == "outside" and refused is None:
                refused = candidate
        if refused is not None:
            real = self.reader.real(refused)
            reason, allow = self.reader.outside_reason(real), self.reader.allow_for(real)
            self.reader.refuse(self._where(file, written, line), written, reason, allow)
        return None

    def include_bases(self, file: Path) -> list[Path]:
        """Folders an include path is relative to: the page's folder first (as the brief of
        mdx_include says), then the folders MkDocs is run from: FastAPI writes
        ``../../docs_src/...`` relative to ``docs/en/``."""
        bases = [file.parent, self.site.config_dir, self.site.docs_root, self.site.base]
        return [b for b in bases if b is not None]

    def _where(self, file: Path, written: str, line: int) -> str:
        """``file:line`` of an include (the first line naming ``written`` when not known)."""
        if not line:
            lines = self.texts.get(file, "").split("\n")
            line = next((n for n, x in enumerate(lines, 1) if written in x), 0)
        return f"{self.shown(file)}:{line}" if line else self.shown(file)

    def expanded(self, page: Page, markdown: str) -> str:
        """Markdown with include directives replaced by the included text, and links to pages
        of the tree carrying their URLs."""
        hugo = self.site.shape == "hugo"
        text = expand(markdown, lambda p: self.read_include(page.file, p), hugo=hugo)
        return tidy(rewrite_links(text, lambda target: self._link_url(page, target)))

    def _link_url(self, page: Page, target: str) -> str | None:
        """The URL a link in ``page`` leads to when it names a page or section of the tree."""
        res = self.resolver.resolve(target, page.ref, "link")
        if res.status not in ("resolved", "self"):
            return None
        page_uid = res.uid.partition("#")[0]
        if page_uid not in self.pages:
            return None  # an API object: its page's links are written as URLs already
        anchor = urlsplit(target).fragment  # as written: the site's own anchor
        target_page = self.pages[page_uid]
        return self.absolute(target_page.at(anchor), target_page.file)

    # -- plumbing -------------------------------------------------------------------------
    def absolute(self, url: str, file: Path | None = None) -> str:
        """A site URL path made absolute: below the site's base URL when it is known; else,
        for a tree read from a repository whose web view is known, the page's ``file`` there
        (at the commit read) with the URL's anchor; else as it is."""
        if not url.startswith("/"):
            return url
        base = self.site.site_url
        if base:
            return base.rstrip("/") + url
        if self.site.files_url and file is not None:
            shown = self.shown(file)
            if not Path(shown).is_absolute() and not shown.startswith("../"):
                anchor = url.partition("#")[2]
                page = self.site.files_url + quote(shown, safe="/")
                return f"{page}#{anchor}" if anchor else page
        return url

    def url_of(self, rel: str) -> str:
        """The absolute URL of the page file ``rel`` (no front matter)."""
        if self.site.files_url and rel not in self._rel_files:
            self._rel_files.update({p.rel: p.file for p in self.pages.values()})
            self._rel_files.update({s.rel: s.file for s in self.rst.values()})
        return self.absolute(url_of(self.site, rel, {}), self._rel_files.get(rel))

    def strings(self, front: Mapping[str, Any], keys: tuple[str, ...], shown: str) -> list[str]:
        """Front-matter strings under ``keys``; unusable values are reported."""
        values, bad = strings(front, keys)
        self.tally.bad_front_matter.extend(f"{shown}: {b}" for b in bad)
        return values

    def shown(self, file: Path, *, common: bool = False) -> str:
        """Path relative to the folder the caller named (or their common folder)."""
        key = (file, common)
        if key not in self._shown:
            # abspath, not resolve: a symlinked page keeps its own path.
            target = Path(os.path.abspath(file))
            base = self._base
            if common and not target.is_relative_to(base):
                base = Path(os.path.commonpath([base, target]))
            rel = target.relative_to(base) if target.is_relative_to(base) else target
            self._shown[key] = rel.as_posix()
        return self._shown[key]


def _anchor_map(page: Page) -> dict[str, str]:
    anchors: dict[str, str] = {}
    for i, h in enumerate(page.parsed.headings):
        anchors.setdefault(h.anchor, page.container(i))
        anchors.setdefault(h.anchor.lower(), page.container(i))
    for anchor, heading in page.parsed.terms:
        anchors.setdefault(anchor, page.container(heading))
    return anchors
