"""A detected docs tree as data: :class:`Site` (shape, folders, nav, URL settings, the files
its config keeps out) and the walk that lists its page files.

The generator modules (:mod:`~cogitave.ingest.docs.mkdocs`, :mod:`~cogitave.ingest.docs.hugo`,
:mod:`~cogitave.ingest.docs.docusaurus`, ...) fill one in; :mod:`~cogitave.ingest.docs.layout`
picks the generator.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cogitave.ingest.confined import TreeReader
from cogitave.ingest.docs.hugo_urls import HugoUrls
from cogitave.ingest.docs.parse import AnchorStyle
from cogitave.ingest.docs.paths import MD_SUFFIXES, RST_SUFFIXES, Shape
from cogitave.ingest.globs import GitIgnore, Matcher, compile_globs

SKIP_DIRS = frozenset({"node_modules", "__pycache__", "_build", "_static", "_templates"})


@dataclass
class NavGroup:
    """A titled nav group; ``children`` are page rel paths (str) and sub-groups, in order."""

    title: str
    children: list[str | NavGroup] = field(default_factory=list)
    titles: dict[str, str] = field(default_factory=dict)  # page rel -> nav title

    def page_titles(self) -> dict[str, str]:
        """Nav titles of pages in this group and all sub-groups."""
        out = dict(self.titles)
        for child in self.children:
            if isinstance(child, NavGroup):
                out.update(child.page_titles())
        return out


@dataclass
class Excludes:
    """The files a site's config keeps out of the build (MkDocs ``exclude_docs`` and
    ``draft_docs``, Sphinx ``exclude_patterns``, VitePress ``srcExclude``): setting name ->
    gitignore-style spec or path globs, matched on paths relative to the docs root."""

    gitignore: dict[str, GitIgnore] = field(default_factory=dict)
    globs: dict[str, list[Matcher]] = field(default_factory=dict)

    def why(self, rel: str) -> str | None:
        """The setting that excludes ``rel`` (a glob excludes a folder's files too)."""
        for name, spec in self.gitignore.items():
            if spec.match_file(rel):
                return name
        parts = rel.split("/")
        prefixes = ["/".join(parts[:n]) for n in range(1, len(parts) + 1)]
        for name, patterns in self.globs.items():
            if any(p.fullmatch(x) for p in patterns for x in prefixes):
                return name
        return None


@dataclass(frozen=True)
class DocVersion:
    """One version of the docs a versioned tree holds (Docusaurus ``versioned_docs``)."""

    version: str  # its name: ``versions.json``'s, or the unreleased docs' label (``next``)
    current: bool  # the version the site serves by default (read when none is asked)
    url_prefix: str  # the URL path its pages are served under, below the site's base URL


@dataclass
class Site:
    """A detected docs tree."""

    shape: Shape
    base: Path  # the folder the caller named (paths in meta are relative to it)
    docs_root: Path  # the folder page uids are relative to
    anchor_style: AnchorStyle
    config_dir: Path | None = None
    nav: NavGroup | None = None
    redirects: dict[str, str] = field(default_factory=dict)  # old rel path -> target
    site_url: str = ""
    # with no site URL: where the repository the tree was cloned from shows its files at the
    # commit read (``https://github.com/o/r/blob/<commit>/docs/``), the tree's paths below it
    files_url: str = ""
    # which rule gave the URLs: base_url, site, metadata, repository, none ("": another
    # reader's, which names its own)
    url_rule: str = ""
    notes: list[str] = field(default_factory=list)
    nav_missing: list[str] = field(default_factory=list)
    other_trees: tuple[str, ...] = ()  # URL prefixes of other language trees
    suffixes: tuple[str, ...] = MD_SUFFIXES  # the page files this site is made of
    route_base: str = ""  # URL path the docs are served under (Docusaurus `/docs`)
    clean_urls: bool = False  # VitePress `cleanUrls`
    # `trailingSlash`; None: the generator's default (Astro: with, Docusaurus: without)
    trailing_slash: bool | None = None
    _files: list[Path] | None = field(default=None, repr=False, compare=False)
    order_key: str = ""  # front-matter key ordering pages in a folder (reading order)
    group_titles: dict[str, str] = field(default_factory=dict)  # folder -> title
    root_doc: str = "index"  # Sphinx's master document
    # Sphinx ``|version|``/``|release|`` as ``conf.py`` sets them (what a page shows)
    substitutions: dict[str, str] = field(default_factory=dict)
    # Sphinx: where autodoc directives read the objects they name (None: nowhere)
    api: Any = None
    excludes: Excludes = field(default_factory=Excludes)  # files the config keeps out
    directory_urls: bool = True  # MkDocs `use_directory_urls` (false: `a/b.html`)
    hugo: HugoUrls = field(default_factory=HugoUrls)  # Hugo `permalinks` and `uglyURLs`
    # VitePress `rewrites`; MkDocs i18n (`page.en.md` and `en/page.md` served as `page/`)
    rewrites: list[tuple[Matcher, str]] = field(default_factory=list)
    # the versions of the docs the tree holds (none: it is not versioned), and the name of
    # the one read when the site names it (a ``versions.json`` entry, a configured label)
    versions: tuple[DocVersion, ...] = ()
    version: str | None = None
    # what reads the tree's files (the folder the caller named, when not given)
    reader: TreeReader | None = field(default=None, repr=False, compare=False)

    def tree(self) -> TreeReader:
        """The reader confined to the tree."""
        if self.reader is None:
            self.reader = TreeReader(self.base)
        return self.reader

    def files(self) -> list[Path]:
        """Page files under the docs root, sorted, hidden and build folders skipped (walked
        once: detection and the read share the list)."""
        if self._files is None:
            partials = self.shape == "docusaurus"  # `_x.md` files are partials, not pages
            pages = walk_pages(self.tree(), self.docs_root, self.suffixes, partials)
            self._files = sorted(pages)
        return list(self._files)

    def leave_out(
        self, setting: str, globs: Sequence[str], trees: Sequence[str] = (), source: str = ""
    ) -> None:
        """Another language's files: those matching ``globs`` are left out (the reason named
        ``setting``), and links into the URL prefixes ``/<tree>/`` lead to another language
        tree. ``source``: the config the names come from (for an error)."""
        self.excludes.globs[setting] = compile_globs(globs, f"{source or 'the site'}: {setting}")
        self.other_trees += tuple(f"/{t.lower()}/" for t in trees)


def walk_pages(
    reader: TreeReader, root: Path, suffixes: tuple[str, ...], skip_partials: bool = False
) -> Iterator[Path]:
    """Files under ``root`` ending in ``suffixes``; hidden files and folders, build folders
    (and with ``skip_partials``, ``_x`` files and folders) left out; nothing outside the tree
    (:meth:`~cogitave.ingest.confined.TreeReader.walk`)."""

    def keep_dir(d: str) -> bool:
        return not d.startswith(".") and d not in SKIP_DIRS and not (skip_partials and d[:1] == "_")

    def want(name: str) -> bool:
        partial = skip_partials and name.startswith("_")
        return name.endswith(suffixes) and not name.startswith(".") and not partial

    for here, dirnames, filenames in reader.walk(root, want=want, keep_dir=keep_dir):
        dirnames[:] = [d for d in dirnames if keep_dir(d)]
        for name in filenames:
            if want(name):
                yield here / name


def count_pages(reader: TreeReader, root: Path) -> dict[str, int]:
    """How many Markdown/MDX and reStructuredText files a folder holds (for detection)."""
    counts = {"markdown": 0, "rst": 0}
    for file in walk_pages(reader, root, (*MD_SUFFIXES, *RST_SUFFIXES)):
        counts["rst" if file.name.endswith(RST_SUFFIXES) else "markdown"] += 1
    return counts
