"""Documentation trees -> a knowledge graph: MkDocs, Hugo, Docusaurus, VitePress, Next.js
content folders, Sphinx (sources or a built tree's ``_sources``) and plain folders of Markdown,
MDX or reStructuredText.

:func:`read_markdown` detects the shape (see :mod:`cogitave.ingest.md_layout` and
:mod:`cogitave.ingest.site_configs`), turns MDX into Markdown (:mod:`cogitave.ingest.mdx`) and
reStructuredText into Markdown (:mod:`cogitave.ingest.sphinx`), parses each page with
markdown-it-py and returns a :class:`MarkdownBatch` of nodes and out-edges plus a report.

Every page, section, code sample and API object carries ``meta["path"]`` (the source file,
relative to the folder named), ``meta["url"]`` (absolute when the site's base URL is known or
given) and ``meta["breadcrumb"]`` (nav groups / folder titles / toctree parents, the page, its
enclosing sections). ``content`` is clean Markdown: front matter removed, includes expanded
(:mod:`cogitave.ingest.md_includes`).

Nodes (uid: kind):
- ``tutorial/path-params``: ``page`` (title, body = the intro before the first section,
  description, keywords); ``content`` is the page's Markdown; meta also ``aliases``.
- ``tutorial/path-params#anchor``: ``section`` per h2..h4 (and any h1 after the title), anchors
  as the generator makes them (MkDocs' toc with ``{ #custom-id }``, GitHub/Hugo, VitePress,
  docutils ids); body runs to the next heading of the same or a higher level, so it includes
  nested sections' text; ``content`` is that slice of Markdown.
- ``tutorial/path-params#code-3``: ``code_sample`` per fenced block or include (code, title,
  exact ``language``); numbered in page order, a missing include keeps its number.
- ``src:docs_src/x/tutorial001.py``: ``source_file`` per included file.
- ``nav:learn/tutorial-user-guide``: ``nav_group`` per MkDocs nav group (an untitled group takes
  the title of its index page).
- ``pathlib.Path.read_text``: ``api`` per object a Sphinx page declares (dotted name).
- ``product:<slug>``, ``role:<slug>``, ``skill:<slug>``, ``path:<slug>``: front-matter entities.

Edges: ``partOf`` (section -> parent section/page; code_sample and api -> section/page; page ->
nav group or the page whose toctree lists it, else the nearest folder index page; nav group ->
parent group; page -> learning path), ``xref`` (resolved links and Sphinx roles; an anchor that
exists targets the section or API object), ``implementedBy``
(innermost page/section -> code_sample), ``derivedFrom`` (code_sample -> source_file),
``dependsOn`` (front-matter prerequisites, and the reading order: each page depends on the page
before it in the same MkDocs nav group or Sphinx toctree, or among the regular pages of a Hugo
section ordered by explicit ``weight`` (a Docusaurus folder by ``sidebar_position``), since
that order is how the authors sequence learning), ``appliesTo`` /
``forRole`` / ``teachesSkill`` (front-matter entities), ``supersededBy`` (front matter -> page).

Front-matter keys are chosen by :class:`FrontMatterMapping` (defaults and TOML form in
:mod:`cogitave.ingest.md_frontmatter`); ``aliases`` and MkDocs ``redirects`` maps become
``meta["aliases"]`` (URL paths) and resolve links too.

Nothing in the tree is fatal: unreadable or undecodable files become ``Batch.problems`` (the page
is left out; ``raise_if_bad`` then refuses the batch unless the caller skips bad records), while
bad front matter, broken links, missing anchors and missing includes are only listed in
``batch.report`` and ``batch.stats`` (same numbers: ``nodes`` by kind, ``edges`` by label,
``links`` counts with ``resolved_share``, first 50 ``unresolved``, ``unresolved_by_reason``, ...).
"""

from __future__ import annotations

import itertools
import os
import posixpath
import re
import time
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from cogitave.ingest import sphinx
from cogitave.ingest.md_frontmatter import (
    FrontMatter,
    FrontMatterMapping,
    Unbuilt,
    entity_slug,
    hugo_cascade,
    split_front_matter,
    strings,
    unpublished,
)
from cogitave.ingest.md_includes import expand, expand_snippets, rewrite_links, tidy
from cogitave.ingest.md_layout import (
    INDEX_STEMS,
    RST_SUFFIXES,
    NavGroup,
    Site,
    detect_site,
    humanize,
    is_index,
    normalize_url,
    strip_md,
)
from cogitave.ingest.md_links import LinkKind, LinkResolver, PageRef
from cogitave.ingest.md_parse import (
    MAX_SECTION_LEVEL,
    CodeBlock,
    DefEntry,
    ParsedPage,
    myst_targets,
    parse_page,
    slugify,
)
from cogitave.ingest.md_report import GraphDraft, Tally, format_report
from cogitave.ingest.mdx import to_markdown
from cogitave.ingest.records import MAX_LISTED, Batch, Problem, check_uid
from cogitave.ingest.rst import ApiObject, RstDoc, parse_rst
from cogitave.schema import Dimension, Schema

# A section listing at least this many definition-list entries with ids (a reference of
# settings or fields) gets a node per entry; a shorter list stays in its section's node.
MIN_SECTION_TERMS = 20
_REF_LINK = re.compile(r"\[([^\]\n]+)\]\[[^\]\n]*\]")  # [text][] and [text][label]
_DEF_MARK = re.compile(r"(?m)^: ")  # a definition line's marker

__all__ = ["FrontMatterMapping", "MarkdownBatch", "markdown_schema", "read_markdown"]

SCHEMA_DIMENSIONS: tuple[Dimension, ...] = (
    Dimension("title", "semantic"),
    Dimension("body", "semantic"),
    Dimension("code", "semantic"),
    Dimension("description", "semantic"),
    Dimension("keywords", "semantic"),
    Dimension("language", "exact"),
)
EXT_LANGUAGE = {
    ".py": "python", ".js": "javascript", ".ts": "typescript", ".md": "markdown",
    ".yml": "yaml", ".yaml": "yaml", ".toml": "toml", ".json": "json", ".sh": "bash",
    ".html": "html", ".css": "css", ".txt": "text", ".go": "go", ".rs": "rust",
    ".sql": "sql", ".ini": "ini", ".dockerfile": "dockerfile",
}  # fmt: skip
# Front-matter entity fields -> (uid prefix / node kind, edge label from the page).
ENTITY_FIELDS = (
    ("products", "product", "appliesTo"),
    ("roles", "role", "forRole"),
    ("skills", "skill", "teachesSkill"),
    ("paths", "path", "partOf"),
)


@dataclass
class MarkdownBatch(Batch):
    """A :class:`Batch` plus a human-readable ``report`` and the same numbers in ``stats``."""

    report: str = ""
    stats: dict[str, Any] = field(default_factory=dict)


def markdown_schema(declared: Schema | None = None) -> Schema:
    """The declared schema's dimensions, plus the Markdown ones it does not declare."""
    dims = list(declared.dimensions) if declared else []
    have = {d.name for d in dims}
    dims.extend(d for d in SCHEMA_DIMENSIONS if d.name not in have)
    return Schema(tuple(dims))


def read_markdown(
    path: str | Path,
    schema: Schema | None = None,
    *,
    mapping: FrontMatterMapping | None = None,
    base_url: str | None = None,
) -> MarkdownBatch:
    """Read a docs tree (MkDocs, Hugo, Docusaurus, VitePress, Next.js, Sphinx or a plain
    Markdown/MDX/RST folder) into nodes and edges (see the module doc). ``base_url`` makes
    URLs absolute, over the site's own setting."""
    started = time.perf_counter()
    site = detect_site(Path(path))
    if base_url:
        site.site_url = base_url
    builder = _Builder(site, mapping or FrontMatterMapping())
    builder.run()
    return builder.finish(schema, time.perf_counter() - started)


@dataclass
class _Page:
    uid: str
    rel: str
    file: Path
    text: str
    front: FrontMatter
    parsed: ParsedPage
    url: str
    title: str
    aliases: list[str]

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


class _Builder:
    def __init__(self, site: Site, mapping: FrontMatterMapping) -> None:
        self.site = site
        self.mapping = mapping
        self.pages: dict[str, _Page] = {}
        self.graph = GraphDraft()
        self.tally = Tally()
        self.problems: list[Problem] = []
        self.resolver = LinkResolver(site.shape, site.site_url, other_trees=site.other_trees)
        self.sources: dict[Path, str | None] = {}
        self.base = Path(os.path.abspath(site.base))
        self.shown: dict[tuple[Path, bool], str] = {}
        self.trail: dict[str, list[str]] = {}  # page uid -> titles above it (nav, toctree)
        self.rst: dict[str, tuple[Path, str, RstDoc]] = {}
        self.api_anchor: dict[str, dict[str, str]] = {}  # page uid -> anchor -> api uid
        self.rst_api: dict[str, list[tuple[ApiObject, int, str]]] = {}
        self.snippets: set[str] = set()  # uids of pages built nowhere (drafts, headless...)
        # MyST ``(label)=`` -> (node uid, anchor of the heading on its page, heading title)
        self.myst_labels: dict[str, tuple[str, str, str]] = {}
        self.cascades: dict[str, Unbuilt] = {}  # Hugo: section folder -> the pages below unbuilt
        self.api_refs: Counter[str] = Counter()  # Python-domain roles: resolved / undeclared

    # -- pipeline -------------------------------------------------------------------------
    def run(self) -> None:
        nav_titles = self.site.nav.page_titles() if self.site.nav else {}
        files = self.site.files()
        if self.site.shape == "hugo":
            self._hugo_cascades(files)
        for file in files:
            self.tally.files += 1
            self._read(file, nav_titles)
        self.resolver.labels.update({k: uid for k, (uid, _, _) in self.myst_labels.items()})
        if self.rst:
            sphinx.render_all(self)
        self._redirects()
        self._shown_anchors()
        self._transcluded_anchors()
        self._hierarchy()  # first: it gives the breadcrumbs the nodes carry
        for page in self.pages.values():
            self._page_nodes(page)
        for page in self.pages.values():
            self._page_links(page)
            self._front_matter_edges(page)

    def _read(self, file: Path, nav_titles: dict[str, str]) -> None:
        rel = file.relative_to(self.site.docs_root).as_posix()
        shown = self._shown(file)
        excluded = self.site.excludes.why(rel)
        if excluded:
            self.tally.unpublished.append(f"{shown}: {excluded}")
            return
        try:
            text = file.read_bytes().decode("utf-8-sig")
        except OSError as e:
            self.problems.append(Problem(shown, 0, f"unreadable file: {e.strerror or e}"))
            return
        except UnicodeDecodeError as e:
            self.problems.append(Problem(shown, 0, f"not valid UTF-8 (byte {e.start})"))
            return
        uid = strip_md(rel)
        try:
            check_uid(uid)
        except ValueError as e:
            self.problems.append(Problem(shown, 0, str(e)))
            return
        if uid in self.pages:
            self.problems.append(Problem(shown, 0, f"duplicate page uid {uid!r}"))
            return
        text = text.replace("\r\n", "\n")
        if rel.endswith(RST_SUFFIXES):
            found = lambda p: (self._read_include(file, p) or (None,))[0]  # noqa: E731
            self.rst[uid] = (file, rel, parse_rst(text, uid, shown, found))
            return
        front = split_front_matter(text)
        if front.error:
            self.tally.bad_front_matter.append(f"{shown}: {front.error}")
        unbuilt = unpublished(self.site.shape, front.data) or self._cascaded(rel)
        body = front.body
        if self.site.shape not in ("mkdocs", "hugo", "plain") or rel.endswith(".mdx"):
            body = to_markdown(body, mdx=self.site.shape != "vitepress" or rel.endswith(".mdx"))
        if "8<-" in body:
            body = expand_snippets(body, lambda p: self._read_include(file, p))
        targets: dict[int, str] = {}
        if self.site.shape == "sphinx" and ")=" in body:
            body, targets = myst_targets(body)
        front = FrontMatter(front.data, body, front.offset, front.error)
        listed = unbuilt is not None and unbuilt.listed
        page = self._add_page(uid, rel, file, text, front, nav_titles, in_section=listed)
        for line, label in targets.items():
            self.myst_labels[label.lower()] = self._target_of(page, line)
        if unbuilt is not None and not listed:
            # Built nowhere: no node. Links and includes still find it (an include shows its
            # text on the includer, whose anchors its headings become).
            del self.pages[uid]
            self.snippets.add(uid)
            self.tally.unpublished.append(f"{shown}: {unbuilt.reason}")

    @staticmethod
    def _target_of(page: _Page, line: int) -> tuple[str, str, str]:
        """(node uid, anchor, title) of the heading a MyST ``(label)=`` on body ``line`` names:
        the first heading after it; the node is the section holding that heading."""
        for i, h in enumerate(page.parsed.headings):
            if h.line > line:
                return page.container(i), h.anchor, h.text
        return page.uid, "", page.title

    def _hugo_cascades(self, files: list[Path]) -> None:
        """Section folders whose ``_index`` cascades "not built" onto every page below."""
        for file in files:
            if file.name.partition(".")[0] != "_index":
                continue
            try:
                data = split_front_matter(file.read_bytes().decode("utf-8-sig")).data
            except (OSError, UnicodeDecodeError):
                continue  # reported when the page itself is read
            found = hugo_cascade(data)
            if found:
                folder = file.parent.relative_to(self.site.docs_root).as_posix()
                reason = f"{found.reason} (from {self._shown(file)})"
                self.cascades[folder] = Unbuilt(reason, found.listed)

    def _cascaded(self, rel: str) -> Unbuilt | None:
        """The cascade of an ancestor section that keeps the page at ``rel`` from being built
        (a section's own cascade is for the pages below it, not for itself)."""
        if not self.cascades:
            return None
        folder = posixpath.dirname(rel)
        if posixpath.basename(rel).partition(".")[0] == "_index":
            folder = posixpath.dirname(folder) if folder else None
        while folder is not None:
            key = folder or "."
            if key in self.cascades:
                return self.cascades[key]
            folder = posixpath.dirname(folder) if folder else None
        return None

    def _add_page(
        self,
        uid: str,
        rel: str,
        file: Path,
        text: str,
        front: FrontMatter,
        nav_titles: dict[str, str],
        parsed: ParsedPage | None = None,
        *,
        in_section: bool = False,
    ) -> _Page:
        """Add a page; ``in_section``: the page is shown on its section's page (an unbuilt
        page its section lists), so its URL is the section's, at the anchor of its title."""
        shown = self._shown(file)
        hugo = self.site.shape == "hugo"
        if parsed is None:
            style = self.site.anchor_style
            myst = self.site.shape == "sphinx"
            parsed = parse_page(front.body, style, front.offset, term_anchors=hugo, myst_roles=myst)
        titles = self._strings(front.data, self.mapping.title, shown)
        title = (titles[0] if titles else "") or parsed.title or nav_titles.get(rel, "")
        url = self.site.url_of(rel, front.data)
        if in_section:
            section = posixpath.dirname(url.rstrip("/")) + "/"
            url = f"{section}#{slugify(title or humanize(rel), self.site.anchor_style)}"
        aliases = self._strings(front.data, self.mapping.aliases, shown)
        parent_url = url if is_index(rel) else posixpath.dirname(url.rstrip("/")) + "/"
        aliases = [normalize_url(a if a.startswith("/") else parent_url + a) for a in aliases]
        page = _Page(uid, rel, file, text, front, parsed, url, title or humanize(rel), aliases)
        self.pages[uid] = page
        self.resolver.add_page(page.ref, aliases, self._anchor_map(page), page.title)
        return page

    def _anchor_map(self, page: _Page) -> dict[str, str]:
        anchors: dict[str, str] = {}
        for i, h in enumerate(page.parsed.headings):
            anchors.setdefault(h.anchor, page.container(i))
            anchors.setdefault(h.anchor.lower(), page.container(i))
        for anchor, heading in page.parsed.terms:
            anchors.setdefault(anchor, page.container(heading))
        return anchors

    def _shown_anchors(self) -> None:
        # A page shown on its section's page (URL ``section/#anchor``) is that page's anchor:
        # a link to ``section/#anchor`` lands on it.
        for page in self.pages.values():
            base, _, anchor = page.url.partition("#")
            section = self.resolver.by_url.get(normalize_url(base).lower()) if anchor else None
            if section is not None and section != page.uid:
                self.resolver.anchors[section].setdefault(anchor, page.uid)

    def _transcluded_anchors(self) -> None:
        # A Hugo include shortcode renders the snippet's headings inside the including page,
        # so links to those anchors land on the includer (at the include's position).
        for page in self.pages.values():
            anchors = self.resolver.anchors[page.uid]
            for written, heading in page.parsed.transclusions:
                res = self.resolver.resolve(written, page.ref, "ref")
                if res.status == "resolved":
                    for anchor in self.resolver.anchors.get(res.uid, {}):
                        anchors.setdefault(anchor, page.container(heading))

    def _redirects(self) -> None:
        for old, new in self.site.redirects.items():
            target = self.resolver.by_rel.get(posixpath.normpath(new).lower())
            if target is None or target not in self.pages:
                self.site.notes.append(f"redirect {old} -> {new}: target is not a page")
                continue
            alias = self.site.url_of(old, {})
            self.pages[target].aliases.append(alias)
            self.resolver.by_alias.setdefault(alias.lower(), target)

    # -- nodes ----------------------------------------------------------------------------
    def _page_nodes(self, page: _Page) -> None:
        fm, parsed = page.front.data, page.parsed
        desc = self._strings(fm, self.mapping.description, self._shown(page.file))
        keywords = self._strings(fm, self.mapping.keywords, self._shown(page.file))
        crumbs = [*self.trail.get(page.uid, []), page.title]
        meta: dict[str, Any] = {
            "path": self._shown(page.file),
            "url": self._absolute(page.url),
            "breadcrumb": crumbs,
        }
        if page.aliases:
            meta["aliases"] = sorted(set(page.aliases))
        self.graph.node(
            page.uid,
            "page",
            {
                "title": page.title,
                "body": "\n".join(parsed.intro),
                "description": "\n".join(desc),
                "keywords": ", ".join(keywords),
            },
            self._expanded(page, self._page_markdown(page)),
            meta,
        )
        for i, h in enumerate(parsed.headings):
            if not h.is_section:
                continue
            uid = f"{page.uid}#{h.anchor}"
            self.graph.node(
                uid,
                "section",
                {"title": h.text, "body": parsed.section_body(i)},
                self._expanded(page, parsed.section_markdown(i)),
                {
                    "path": meta["path"],
                    "url": self._absolute(page.at(h.anchor)),
                    "anchor": h.anchor,
                    "level": h.level,
                    "line": h.line + page.front.offset + 1,
                    "breadcrumb": [*crumbs, *self._heading_trail(page, i)],
                },
            )
            self.graph.edge(uid, "partOf", page.container(h.parent))
        sections = [parsed.section_of(e.heading) for e in parsed.entries]
        per_section = Counter(sections)
        for entry, section in zip(parsed.entries, sections, strict=True):
            if per_section[section] >= MIN_SECTION_TERMS:
                self._term(page, entry, section, crumbs)
        for n, block in enumerate(parsed.code, 1):
            self._code_sample(page, n, block)
        sphinx.api_nodes(self, page)

    def _term(self, page: _Page, entry: DefEntry, section: int, crumbs: list[str]) -> None:
        """A definition-list entry with an id (a setting, a parameter, a glossary term) as a
        ``term`` node ``partOf`` its section: a reference page lists dozens of them in one
        section, too long for one vector or a BM25 match on one of them."""
        uid = f"{page.uid}#{entry.anchor}"
        if uid in self.graph.nodes:
            return
        # Alone, a reference link (`[text][]`) has no definition to resolve: keep its text.
        written = _REF_LINK.sub(r"\1", entry.markdown)
        head, _, rest = written.partition("\n")
        term = "\n".join(parse_page(head).intro).strip() or head.strip("`")
        definition = "\n".join(parse_page(_DEF_MARK.sub("", rest)).intro)
        self.graph.node(
            uid,
            "term",
            {"title": term, "body": definition},
            self._expanded(page, entry.markdown),
            {
                "path": self._shown(page.file),
                "url": self._absolute(page.at(entry.anchor)),
                "anchor": entry.anchor,
                "line": entry.line + page.front.offset + 1,
                "breadcrumb": [
                    *crumbs,
                    *(self._heading_trail(page, section) if section >= 0 else []),
                    term,
                ],
            },
        )
        self.graph.edge(uid, "partOf", page.container(entry.heading))

    @staticmethod
    def _page_markdown(page: _Page) -> str:
        """The page's Markdown; a title kept in front matter becomes its first heading."""
        body = page.front.body.strip("\n")
        return body if page.parsed.title else f"# {page.title}\n\n{body}"

    def _heading_trail(self, page: _Page, i: int) -> list[str]:
        """Titles of the sections from the page down to heading ``i`` (included)."""
        out: list[str] = []
        while i >= 0:
            h = page.parsed.headings[i]
            if h.is_section:
                out.append(h.text)
            i = h.parent
        return out[::-1]

    def _absolute(self, url: str) -> str:
        """A site URL path made absolute when the site's base URL is known."""
        base = self.site.site_url
        if not base or not url.startswith("/"):
            return url
        return base.rstrip("/") + url

    def _expanded(self, page: _Page, markdown: str) -> str:
        """Markdown with include directives replaced by the included text."""
        hugo = self.site.shape == "hugo"
        text = expand(markdown, lambda p: self._read_include(page.file, p), hugo=hugo)
        return tidy(rewrite_links(text, lambda target: self._link_url(page, target)))

    def _link_url(self, page: _Page, target: str) -> str | None:
        """The URL a link in ``page`` leads to when it names a page or section of the tree."""
        res = self.resolver.resolve(target, page.ref, "link")
        if res.status not in ("resolved", "self"):
            return None
        page_uid = res.uid.partition("#")[0]
        if page_uid not in self.pages:
            return None  # an API object: its page's links are written as URLs already
        anchor = urlsplit(target).fragment  # as written: the site's own anchor
        return self._absolute(self.pages[page_uid].at(anchor))

    def _read_include(self, file: Path, written: str) -> tuple[str, str] | None:
        """(text, language) of a file an include names, searched like :meth:`_include`."""
        for base in self._include_bases(file):
            candidate = Path(os.path.normpath(base / written.lstrip("/")))
            if not candidate.is_file() or not self._inside(candidate):
                continue
            try:
                text = candidate.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                return None
            suffix = candidate.suffix.lower()
            return text, EXT_LANGUAGE.get(suffix, suffix.lstrip(".") or "text")
        return None

    def _include_bases(self, file: Path) -> list[Path]:
        # The page's folder first (as the brief of mdx_include says), then the folders MkDocs
        # is run from: FastAPI writes `../../docs_src/...` relative to `docs/en/`.
        bases = [file.parent, self.site.config_dir, self.site.docs_root, self.site.base]
        return [b for b in bases if b is not None]

    def _inside(self, file: Path) -> bool:
        # Includes may reach the repository around the docs (FastAPI's docs_src), not the disk.
        top = Path(os.path.abspath(self.site.base))
        roots = [top, top.parent, top.parent.parent] if self.site.config_dir else [top]
        target = Path(os.path.abspath(file))
        return any(target.is_relative_to(r) for r in roots)

    def _code_sample(self, page: _Page, n: int, block: CodeBlock) -> None:
        uid = f"{page.uid}#code-{n}"
        meta: dict[str, Any] = {"path": self._shown(page.file), "line": block.line}
        container_heading = page.parsed.section_of(block.heading)
        meta["url"] = self._absolute(
            page.url
            if container_heading < 0
            else page.at(page.parsed.headings[container_heading].anchor)
        )
        meta["breadcrumb"] = [
            *self.trail.get(page.uid, []),
            page.title,
            *(self._heading_trail(page, container_heading) if container_heading >= 0 else []),
        ]
        code, language, source = block.code, block.language, None
        if block.include is None and not code.strip():
            return  # an empty fence shows nothing; it keeps its number for stable uids
        if block.include is not None:
            found = self._include(page, block)
            if found is None:
                return
            source, code, ext_language = found
            language = language if language and language != "text" else ext_language
            meta["include"] = block.include
            if block.options:
                meta["options"] = block.options
        heading = block.heading
        title = page.title
        if heading >= 0:
            h = page.parsed.headings[heading]
            if h.is_section or h.level > MAX_SECTION_LEVEL:
                title = h.text
        content = block.markdown if source is None else f"```{language}\n{code.rstrip()}\n```"
        self.graph.node(uid, "code_sample", {"code": code, "title": title, "language": language},
                   content, meta)  # fmt: skip
        container = page.container(heading)
        self.graph.edge(uid, "partOf", container)
        self.graph.edge(container, "implementedBy", uid)
        if source is not None:
            self.graph.edge(uid, "derivedFrom", source)

    def _include(self, page: _Page, block: CodeBlock) -> tuple[str, str, str] | None:
        """(source uid, code, language) of an included file, creating its node once."""
        written = block.include or ""
        for base in self._include_bases(page.file):
            candidate = Path(os.path.normpath(base / written))
            if candidate.is_file():
                break
        else:
            self.tally.missing_includes.append(f"{self._shown(page.file)}:{block.line}: {written}")
            return None
        if candidate not in self.sources:
            self.sources[candidate] = self._source_node(candidate)
        uid = self.sources[candidate]
        if uid is None:
            self.tally.missing_includes.append(
                f"{self._shown(page.file)}:{block.line}: {written} (unreadable)"
            )
            return None
        dims = self.graph.dims(uid)
        return uid, str(dims["code"]), str(dims["language"])

    def _source_node(self, file: Path) -> str | None:
        try:
            code = file.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            return None
        shown = self._shown(file, common=True)
        uid = f"src:{shown}"
        language = EXT_LANGUAGE.get(file.suffix.lower(), file.suffix.lower().lstrip(".") or "text")
        self.graph.node(uid, "source_file", {"code": code, "language": language}, code,
                   {"path": shown})  # fmt: skip
        return uid

    def _entity(self, kind: str, name: str) -> str:
        uid = f"{kind}:{entity_slug(name)}"
        if uid not in self.graph.nodes:
            self.graph.node(uid, kind, {"title": name}, None, {"name": name})
        return uid

    # -- structure ------------------------------------------------------------------------
    def _hierarchy(self) -> None:
        in_nav: set[str] = set()
        if self.site.nav is not None:
            self._nav_group(self.site.nav, None, in_nav, set())
        if self.site.shape == "sphinx":
            sphinx.toctree_edges(self, in_nav)
        for page in self.pages.values():
            if page.uid not in in_nav and (parent := self._folder_parent(page)) is not None:
                self.graph.edge(page.uid, "partOf", parent)
        if self.site.shape == "hugo" or self.site.order_key:
            self._weight_sequences(self.site.order_key or "weight")
        self._folder_trails()

    def _nav_group(
        self,
        group: NavGroup,
        uid: str | None,
        in_nav: set[str],
        used: set[str],
        trail: tuple[str, ...] = (),
    ) -> None:
        """Nodes and edges of ``group``'s pages and sub-groups (``uid`` None: the nav root)."""
        previous: str | None = None
        for child in group.children:
            if isinstance(child, NavGroup):
                title = child.title or self._group_title(child)
                sub = self._unique(
                    f"{uid}/{entity_slug(title)}" if uid else f"nav:{entity_slug(title)}", used
                )
                pages = [
                    u for c in child.children if isinstance(c, str) and (u := self._rel_uid(c))
                ]
                body = "\n".join(self.pages[u].title for u in pages)
                self.graph.node(
                    sub, "nav_group", {"title": title, "body": body}, None, {"pages": pages}
                )
                if uid is not None:
                    self.graph.edge(sub, "partOf", uid)
                self._nav_group(child, sub, in_nav, used, (*trail, title))
                continue
            page_uid = self._rel_uid(child)
            if page_uid is None:
                self.site.nav_missing.append(child)
                continue
            in_nav.add(page_uid)
            # A group's own index page heads the group: the group title is not repeated.
            shown = trail[:-1] if trail and self.pages[page_uid].title == trail[-1] else trail
            self.trail.setdefault(page_uid, list(shown))
            parent = uid if uid is not None else self._folder_parent(self.pages[page_uid])
            if parent is not None:
                self.graph.edge(page_uid, "partOf", parent)
            if previous is not None:
                self.graph.edge(page_uid, "dependsOn", previous)
            previous = page_uid

    def _rel_uid(self, rel: str) -> str | None:
        uid = self.resolver.by_rel.get(rel.lower())
        return uid if uid in self.pages else None

    def _group_title(self, group: NavGroup) -> str:
        for child in group.children:
            if isinstance(child, str) and (uid := self._rel_uid(child)) and is_index(child):
                return self.pages[uid].title
        for child in group.children:
            if isinstance(child, str):
                folder = posixpath.basename(posixpath.dirname(child))
                return humanize(folder + ".md") if folder else "Section"
        return "Section"

    @staticmethod
    def _unique(uid: str, used: set[str]) -> str:
        candidate, n = uid, 1
        while candidate in used:
            n += 1
            candidate = f"{uid}-{n}"
        used.add(candidate)
        return candidate

    def _folder_parent(self, page: _Page) -> str | None:
        folder = posixpath.dirname(page.uid)
        if is_index(page.rel):
            if not folder:
                return None
            folder = posixpath.dirname(folder)
        while True:
            for stem in INDEX_STEMS:
                uid = f"{folder}/{stem}" if folder else stem
                if uid in self.pages and uid != page.uid:
                    return uid
            if not folder:
                return None
            folder = posixpath.dirname(folder)

    def _folder_trails(self) -> None:
        """Breadcrumb titles for pages no nav placed: the folders above them."""
        if self.site.nav is not None or self.site.shape == "sphinx":
            return
        for page in self.pages.values():
            folders = posixpath.dirname(page.rel).split("/") if "/" in page.rel else []
            if is_index(page.rel):
                folders = folders[:-1]
            trail: list[str] = []
            for n in range(1, len(folders) + 1):
                folder = "/".join(folders[:n])
                index = next(
                    (u for stem in INDEX_STEMS if (u := f"{folder}/{stem}") in self.pages), None
                )
                title = self.site.group_titles.get(folder) or (
                    self.pages[index].title if index else humanize(folder + "/index.md")
                )
                trail.append(title)
            self.trail[page.uid] = trail

    def _weight_sequences(self, key: str) -> None:
        # Section pages are left out: their weights order a site menu, not a lesson sequence.
        groups: dict[str, list[tuple[float, str, str]]] = {}
        for page in self.pages.values():
            weight = page.front.data.get(key)
            if isinstance(weight, int | float) and not isinstance(weight, bool):
                if is_index(page.rel):
                    continue
                if self.site.shape == "hugo":
                    parent = self._folder_parent(page) or ""
                else:  # Docusaurus orders a folder's pages (a sidebar category)
                    parent = posixpath.dirname(page.rel)
                groups.setdefault(parent, []).append((weight, page.title.lower(), page.uid))
        for members in groups.values():
            ordered = [uid for _, _, uid in sorted(members)]
            for prev, cur in itertools.pairwise(ordered):
                self.graph.edge(cur, "dependsOn", prev)

    # -- links and front matter -----------------------------------------------------------
    def _page_links(self, page: _Page) -> None:
        for link in page.parsed.links:
            src = page.container(link.heading)
            self._link(page, src, link.target, link.line, link.kind, link.text)

    def _link(
        self, page: _Page, src: str, target: str, line: int, kind: LinkKind, text: str
    ) -> None:
        res = self.resolver.resolve(target, page.ref, kind, text)
        self.tally.link(res, f"{self._shown(page.file)}:{line}", target, kind)
        if res.status == "resolved" and res.uid.partition("#")[0] not in self.snippets:
            self.graph.edge(src, "xref", res.uid)

    def _front_matter_edges(self, page: _Page) -> None:
        fm = page.front.data
        shown = self._shown(page.file)
        for field_name, kind, label in ENTITY_FIELDS:
            names = self._strings(fm, getattr(self.mapping, field_name), shown)
            for name in names:
                self.graph.edge(page.uid, label, self._entity(kind, name))
        for field_name, label in (
            ("prerequisites", "dependsOn"),
            ("superseded_by", "supersededBy"),
        ):
            targets = self._strings(fm, getattr(self.mapping, field_name), shown)
            for target in targets:
                # Front matter names pages, not sections: the edge goes to the page.
                res = self.resolver.resolve(target.split("#", 1)[0], page.ref, "page_ref")
                self.tally.link(res, shown, target, "page_ref")
                target_page = res.uid.split("#", 1)[0] if res.uid else ""
                if res.status == "resolved" and target_page not in self.snippets:
                    self.graph.edge(page.uid, label, target_page)

    # -- plumbing -------------------------------------------------------------------------
    def _strings(self, front: Mapping[str, Any], keys: tuple[str, ...], shown: str) -> list[str]:
        """Front-matter strings under ``keys``; unusable values are reported."""
        values, bad = strings(front, keys)
        self.tally.bad_front_matter.extend(f"{shown}: {b}" for b in bad)
        return values

    def _shown(self, file: Path, *, common: bool = False) -> str:
        """Path relative to the folder the caller named (or their common folder)."""
        key = (file, common)
        if key not in self.shown:
            # abspath, not resolve: a symlinked page keeps its own path.
            target = Path(os.path.abspath(file))
            base = self.base
            if common and not target.is_relative_to(base):
                base = Path(os.path.commonpath([base, target]))
            rel = target.relative_to(base) if target.is_relative_to(base) else target
            self.shown[key] = rel.as_posix()
        return self.shown[key]

    def finish(self, declared: Schema | None, seconds: float) -> MarkdownBatch:
        """Freeze the draft into a batch with its schema, stats and report."""
        nodes, edge_counts, dropped = self.graph.build()
        head = {
            "shape": self.site.shape,
            "root": str(self.site.base),
            "docs_root": self._shown(self.site.docs_root) or ".",
            "seconds": round(seconds, 3),
        }
        stats = self.tally.stats(head, nodes, edge_counts, dropped, [str(p) for p in self.problems])
        if self.rst:
            stats["api_refs"] = {
                "resolved": self.api_refs["resolved"],
                "undeclared": self.api_refs["undeclared"],
            }
        stats["nav_missing"] = self.site.nav_missing[:MAX_LISTED]
        stats["notes"] = self.site.notes
        return MarkdownBatch(
            nodes=nodes,
            problems=self.problems,
            schema=markdown_schema(declared),
            report=format_report(stats),
            stats=stats,
        )
