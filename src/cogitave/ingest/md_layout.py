"""Docs tree layout: which shape a folder is (MkDocs, Hugo, plain), its pages, URLs and nav.

Detection order for a folder: ``mkdocs.yml`` in it; a Hugo ``content/`` folder in it; the folder
itself looks like Hugo content (named ``content`` or holding ``_index.md``); an ``mkdocs.yml``
up to three levels down (a repository whose docs live in ``docs/en/``); else a plain folder.
"""

from __future__ import annotations

import os
import posixpath
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

import pathspec
import yaml

from cogitave.errors import IngestError
from cogitave.ingest.globs import glob_regex
from cogitave.ingest.hugo_urls import HugoUrls, expand, hugo_config
from cogitave.ingest.hugo_urls import Kind as HugoKind
from cogitave.ingest.md_frontmatter import load_yaml
from cogitave.ingest.md_parse import AnchorStyle

Shape = Literal[
    "mkdocs", "hugo", "plain", "docusaurus", "vitepress", "nextjs", "sphinx", "starlight"
]
MD_SUFFIXES = (".md", ".markdown", ".mdx")
RST_SUFFIXES = (".rst.txt", ".rst")
INDEX_STEMS = ("index", "_index", "README")
_SKIP_DIRS = frozenset({"node_modules", "__pycache__", "_build", "_static", "_templates"})
_NUMBER_PREFIX = re.compile(r"^\d+[-_.]")
_LANG_DIR = re.compile(r"^[a-z]{2,3}(?:[-_][A-Za-z]{2,4})?$")
_SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")
MKDOCS_NAMES = ("mkdocs.yml", "mkdocs.yaml")


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

    gitignore: dict[str, pathspec.PathSpec] = field(default_factory=dict)
    globs: dict[str, list[re.Pattern[str]]] = field(default_factory=dict)

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
    excludes: Excludes = field(default_factory=Excludes)  # files the config keeps out
    directory_urls: bool = True  # MkDocs `use_directory_urls` (false: `a/b.html`)
    hugo: HugoUrls = field(default_factory=HugoUrls)  # Hugo `permalinks` and `uglyURLs`
    # VitePress `rewrites`; MkDocs i18n (`page.en.md` and `en/page.md` served as `page/`)
    rewrites: list[tuple[re.Pattern[str], str]] = field(default_factory=list)

    def files(self) -> list[Path]:
        """Page files under the docs root, sorted, hidden and build folders skipped (walked
        once: detection and the read share the list)."""
        if self._files is None:
            partials = self.shape == "docusaurus"  # `_x.md` files are partials, not pages
            self._files = sorted(_walk(self.docs_root, self.suffixes, partials))
        return list(self._files)

    def leave_out(self, setting: str, globs: Sequence[str], trees: Sequence[str] = ()) -> None:
        """Another language's files: those matching ``globs`` are left out (the reason named
        ``setting``), and links into the URL prefixes ``/<tree>/`` lead to another language
        tree."""
        self.excludes.globs[setting] = [glob_regex(g) for g in globs]
        self.other_trees += tuple(f"/{t.lower()}/" for t in trees)

    def url_of(self, rel: str, front: Mapping[str, Any]) -> str:
        """The URL path of the page at ``rel`` (relative to the docs root)."""
        return page_url(self.shape, rel, front, self)


def _walk(root: Path, suffixes: tuple[str, ...], skip_partials: bool = False) -> Iterator[Path]:
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if not d.startswith(".") and d not in _SKIP_DIRS]
        if skip_partials:
            dirnames[:] = [d for d in dirnames if not d.startswith("_")]
        for name in filenames:
            partial = skip_partials and name.startswith("_")
            if name.endswith(suffixes) and not name.startswith(".") and not partial:
                yield Path(dirpath) / name


def count_pages(root: Path) -> dict[str, int]:
    """How many Markdown/MDX and reStructuredText files a folder holds (for detection)."""
    counts = {"markdown": 0, "rst": 0}
    for file in _walk(root, (*MD_SUFFIXES, *RST_SUFFIXES)):
        counts["rst" if file.name.endswith(RST_SUFFIXES) else "markdown"] += 1
    return counts


def detect_site(path: Path) -> Site:
    """Detect the shape of ``path`` (a folder, an ``mkdocs.yml`` or a single ``.md`` file)."""
    site = _detect_site(path)
    if site.shape in ("nextjs", "plain") and path.is_dir():
        _suffix_translations(site)
    return site


# `page.fr.mdx` beside `page.mdx`: a translation (Nextra, Fumadocs). Two letters (and a region)
# only; these two-letter suffixes name a programming language or a kind of file instead.
_TRANSLATION = re.compile(r"^(?P<stem>.+)\.(?P<code>[a-z]{2}(?:[-_][A-Za-z]{2,4})?)$")
_NOT_LANGUAGES = frozenset("js ts py go rb rs kt cs sh md db io ui ci vs qa ml os".split())  # noqa: SIM905
MIN_TRANSLATED_PAGES = 3


def _suffix_translations(site: Site) -> None:
    """Read one language of a site whose translations sit beside its pages as
    ``page.<lang>.mdx``: a suffix counts as a language when at least
    :data:`MIN_TRANSLATED_PAGES` pages carry it. The default is the unsuffixed page; when every
    page has a suffix (Nextra's ``page.en-US.mdx``), English, else the most common suffix,
    served without it."""
    names: dict[str, set[str]] = {}  # stem (folder-relative, no suffix) -> codes ("" none)
    for file in site.files():
        rel = strip_md(file.relative_to(site.docs_root).as_posix())
        m = _TRANSLATION.match(rel)
        if m and m.group("code") not in _NOT_LANGUAGES:
            names.setdefault(m.group("stem"), set()).add(m.group("code"))
        else:
            names.setdefault(rel, set()).add("")
    counts: dict[str, int] = {}
    for codes in names.values():
        for code in codes - {""}:
            counts[code] = counts.get(code, 0) + 1
    langs = sorted(c for c, n in counts.items() if n >= MIN_TRANSLATED_PAGES)
    if not langs:
        return
    suffixed = sum(1 for codes in names.values() if "" not in codes and codes & set(langs))
    unsuffixed = sum(1 for codes in names.values() if "" in codes and codes & set(langs))
    default = ""
    if suffixed > unsuffixed:
        english = [c for c in langs if c.split("-")[0].split("_")[0] == "en"]
        default = english[0] if english else max(langs, key=lambda c: counts[c])
    others = [c for c in langs if c != default]
    site.leave_out(
        "another language", [f"**/*.{c}.{ext}" for c in others for ext in ("md", "mdx", "markdown")]
    )
    if default:
        for ext in ("md", "mdx", "markdown"):
            site.rewrites.append(rewrite_rule(f":path*.{default}.{ext}", f":path*.{ext}"))
    shown = default or "the unsuffixed pages"
    site.notes.append(f"translations beside the pages ({', '.join(others)}): read {shown}")


def _detect_site(path: Path) -> Site:
    if path.is_file():
        if path.name in MKDOCS_NAMES:
            return _mkdocs(path.parent, path)
        if path.suffix in MD_SUFFIXES:
            return Site("plain", path.parent, path.parent, "github")
        if path.name.endswith(RST_SUFFIXES):
            return Site("sphinx", path.parent, path.parent, "sphinx", suffixes=RST_SUFFIXES)
        raise IngestError(f"not a Markdown file, mkdocs.yml or folder: {path}")
    if not path.is_dir():
        raise IngestError(f"source not found: {path}")
    from cogitave.ingest import site_configs as sc

    for name in MKDOCS_NAMES:
        if (path / name).is_file():
            return _mkdocs(path, path / name)
    detectors = (
        sc.detect_docusaurus,
        sc.detect_vitepress,
        sc.detect_starlight,
        sc.detect_nextjs,
        sc.detect_sphinx,
    )
    for detect in detectors:
        found = detect(path)
        if found is not None:
            return found
    if (path / "content").is_dir():
        return _hugo(path, path / "content")
    if path.name == "content" or (path / "_index.md").is_file():
        return _hugo(path, path)
    nested = _find_mkdocs(path)
    if nested is not None:
        site = _mkdocs(path, nested)
        site.notes.append(f"using {nested.relative_to(path).as_posix()}")
        return site
    counts = count_pages(path)
    if counts["rst"] > counts["markdown"]:
        site = Site("sphinx", path, path, "sphinx", suffixes=RST_SUFFIXES)
        site.notes.append("reStructuredText folder without conf.py")
        return site
    return Site("plain", path, path, "github")


def _find_mkdocs(path: Path, depth: int = 3) -> Path | None:
    found: list[Path] = []
    for dirpath, dirnames, filenames in os.walk(path):
        rel_depth = len(Path(dirpath).relative_to(path).parts)
        dirnames[:] = sorted(d for d in dirnames if not d.startswith(".") and d not in _SKIP_DIRS)
        if rel_depth >= depth:
            dirnames[:] = []
        found.extend(Path(dirpath) / n for n in filenames if n in MKDOCS_NAMES)
    # The shallowest config wins; among equals, English then alphabetical.
    found.sort(key=lambda p: (len(p.parts), p.parent.name != "en", str(p)))
    return found[0] if found else None


def _hugo(base: Path, content: Path) -> Site:
    site = Site("hugo", base, content, "github")
    # The content folder given directly: the config is in the site folder above it.
    config = hugo_config(base) or (hugo_config(base.parent) if base == content else {})
    url = config.get("baseurl")
    site.site_url = url.strip() if isinstance(url, str) else ""
    site.hugo = HugoUrls.from_config(config)
    site.notes.extend(site.hugo.notes)
    # Multilingual sites keep one content folder per language (content/en/...): URLs have no
    # language prefix, so read one language (English when present) as the root.
    if not any(p.suffix in MD_SUFFIXES for p in content.iterdir() if p.is_file()):
        langs = sorted(
            d
            for d in content.iterdir()
            if d.is_dir() and _LANG_DIR.match(d.name) and (d / "_index.md").is_file()
        )
        if langs:
            chosen = next((d for d in langs if d.name == "en"), langs[0])
            site.docs_root = chosen
            site.other_trees = tuple(f"/{d.name.lower()}/" for d in langs if d != chosen)
            if len(langs) > 1:
                site.notes.append(
                    f"language folders {[d.name for d in langs]}: read {chosen.name!r} only"
                )
    return site


def _mkdocs(base: Path, config_file: Path) -> Site:
    config_dir = config_file.parent
    site = Site("mkdocs", base, config_dir / "docs", "toc", config_dir=config_dir)
    try:
        config = load_yaml(config_file.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as e:
        site.notes.append(f"cannot read {config_file.name}: {str(e).splitlines()[0]}")
        config = {}
    if not isinstance(config, Mapping):
        config = {}
    docs_dir = config.get("docs_dir", "docs")
    site.docs_root = Path(os.path.abspath(config_dir / str(docs_dir)))
    if not site.docs_root.is_dir():
        raise IngestError(f"{config_file}: docs_dir {docs_dir!r} is not a folder")
    site.site_url = str(config.get("site_url") or "")
    site.directory_urls = config.get("use_directory_urls", True) is not False
    if "nav" in config and isinstance(config["nav"], list):
        site.nav = NavGroup("")
        _nav_items(config["nav"], site.nav, site)
    site.redirects = _redirect_maps(config.get("plugins"))
    _mkdocs_excludes(site, config)
    _mkdocs_i18n(site, config.get("plugins"))
    extra = config.get("extra")
    alternate = extra.get("alternate") if isinstance(extra, Mapping) else None
    if isinstance(alternate, list):
        links = (a.get("link") for a in alternate if isinstance(a, Mapping))
        site.other_trees += tuple(
            normalize_url(x).lower() for x in links if isinstance(x, str) and x.strip("/")
        )
    return site


# What MkDocs always excludes, before ``exclude_docs`` (dot-files, which the walk skips anyway,
# and a top-level ``templates/`` folder of theme overrides).
MKDOCS_EXCLUDE_ALWAYS = (".*", "/templates/")


def _mkdocs_excludes(site: Site, config: Mapping[str, Any]) -> None:
    """``exclude_docs`` (added to :data:`MKDOCS_EXCLUDE_ALWAYS`, as MkDocs does) and
    ``draft_docs`` (left out of ``mkdocs build``), in gitignore syntax; ``not_in_nav`` pages
    are still built and stay."""
    for key, always in (("exclude_docs", MKDOCS_EXCLUDE_ALWAYS), ("draft_docs", ())):
        raw = config.get(key) or ""
        if not isinstance(raw, str):
            site.notes.append(f"{key}: expected a multi-line string of patterns, ignored")
            raw = ""
        lines = [*always, *(x for x in raw.splitlines() if x.strip())]
        if lines:
            site.excludes.gitignore[key] = pathspec.GitIgnoreSpec.from_lines(lines)


def _mkdocs_i18n(site: Site, plugins: Any) -> None:
    """The ``i18n`` plugin (mkdocs-static-i18n): read the default language only. Suffix
    structure: ``page.md`` or ``page.<default>.md`` is the page, ``page.<other>.md`` another
    language; folder structure: ``<default>/page.md`` is the page (served at ``/page/``),
    ``<other>/`` another language. The other languages become other language trees."""
    opts = next((p["i18n"] for p in plugins or [] if isinstance(p, Mapping) and "i18n" in p), None)
    if not isinstance(opts, Mapping):
        return
    langs = opts.get("languages")
    if isinstance(langs, list):  # 1.x: [{locale, default, ...}]
        entries = [x for x in langs if isinstance(x, Mapping) and isinstance(x.get("locale"), str)]
        locales = [str(x["locale"]) for x in entries]
        default = next((str(x["locale"]) for x in entries if x.get("default")), None)
    elif isinstance(langs, Mapping):  # 0.x: {fr: {...}} and default_language
        locales = [str(k) for k in langs]
        default = None
    else:
        return
    default = default or str(opts.get("default_language") or (locales[0] if locales else ""))
    others = [x for x in locales if x != default]
    if not default:
        return
    if str(opts.get("docs_structure", "suffix")) == "folder":
        site.leave_out("i18n: another language", [f"{x}/**" for x in others], others)
        site.rewrites.append(rewrite_rule(f"{default}/:rest*", ":rest*"))
    else:
        globs = [f"**/*.{x}.{ext}" for x in others for ext in ("md", "markdown")]
        site.leave_out("i18n: another language", globs, others)
        site.rewrites.append(rewrite_rule(f":path*.{default}.md", ":path*.md"))
    if others:
        site.notes.append(f"i18n languages {[default, *others]}: read {default!r} only")


def _nav_page(value: str) -> str | None:
    if _SCHEME.match(value) or value.startswith("/"):
        return None  # an external link or a site path, not a page file
    return posixpath.normpath(value)


def _nav_items(items: list[Any], group: NavGroup, site: Site) -> None:
    for item in items:
        if isinstance(item, str):
            rel = _nav_page(item)
            if rel is not None:
                group.children.append(rel)
            continue
        if not isinstance(item, Mapping) or len(item) != 1:
            site.notes.append(f"nav entry ignored: {item!r}"[:200])
            continue
        ((title, value),) = item.items()
        title = "" if title is None else str(title)
        if isinstance(value, list):
            sub = NavGroup(title)
            _nav_items(value, sub, site)
            group.children.append(sub)
        elif isinstance(value, str):
            rel = _nav_page(value)
            if rel is not None:
                group.children.append(rel)
                if title:
                    group.titles[rel] = title


def _redirect_maps(plugins: Any) -> dict[str, str]:
    """The ``redirects`` plugin's ``redirect_maps`` (plugins given as a list or a mapping)."""
    entries: list[tuple[str, Any]] = []
    if isinstance(plugins, Mapping):
        entries = list(plugins.items())
    elif isinstance(plugins, list):
        for p in plugins:
            if isinstance(p, Mapping):
                entries.extend(p.items())
    for name, conf in entries:
        if name == "redirects" and isinstance(conf, Mapping):
            maps = conf.get("redirect_maps")
            if isinstance(maps, Mapping):
                return {str(k): str(v) for k, v in maps.items()}
    return {}


def strip_md(rel: str) -> str:
    """``a/b.md`` -> ``a/b`` (also ``.mdx``, ``.rst``, ``.rst.txt``)."""
    for suffix in (*MD_SUFFIXES, *RST_SUFFIXES):
        if rel.endswith(suffix):
            return rel[: -len(suffix)]
    return rel


def is_index(rel: str) -> bool:
    """True for a folder's section page (``index.md``, ``_index.md``, ``README.md``)."""
    return posixpath.basename(strip_md(rel)) in INDEX_STEMS


def page_url(shape: Shape, rel: str, front: Mapping[str, Any], site: Site | None = None) -> str:
    """The site URL path of a page, as its generator builds it (MkDocs and Hugo: directory
    URLs; Sphinx: ``.html``; Docusaurus, Next.js, VitePress clean URLs: no trailing slash)."""
    if site is not None and site.rewrites:
        rel = rewrite_path(rel, site.rewrites)
    stem = strip_md(rel)
    if shape == "sphinx":
        return "/" + stem + ".html"
    if shape in ("docusaurus", "nextjs", "vitepress", "starlight"):
        return _app_url(shape, stem, front, site)
    parts = stem.split("/")
    index = parts[-1] in INDEX_STEMS
    if index:
        parts = parts[:-1]
    if shape == "mkdocs" and site is not None and not site.directory_urls:
        return "/" + "/".join([*parts, "index"] if index else parts) + ".html"
    if shape == "hugo":
        url = front.get("url")
        if isinstance(url, str) and url.strip():
            return normalize_url(url if url.startswith("/") else "/" + url)
        return _hugo_url(stem, front, site)
    return normalize_url("/" + "/".join(parts))


def _hugo_url(stem: str, front: Mapping[str, Any], site: Site | None) -> str:
    """A Hugo page's URL: its path, the front matter ``slug`` in place of a page's last
    segment, or the site's ``permalinks``; ``uglyURLs`` (:mod:`~cogitave.ingest.hugo_urls`)."""
    urls = site.hugo if site is not None else HugoUrls()
    parts = stem.split("/")
    kind: HugoKind = "section" if parts[-1] == "_index" else "page"
    if parts[-1] in INDEX_STEMS:  # `_index.md` (a section), `index.md` (a leaf bundle)
        parts = parts[:-1]
    if not parts:
        return "/"
    sections = parts if kind == "section" else parts[:-1]
    top = sections[0] if sections else ""
    slug = front.get("slug")
    pattern = urls.pattern("/" + "/".join(parts).lower(), top, kind)
    if pattern is not None:
        path = expand(
            pattern,
            sections=sections,
            front=front,
            basename=parts[-1],
            title=humanize(stem),
            section_titles=site.group_titles if site is not None else None,
        )
    else:
        if kind == "page" and isinstance(slug, str) and slug.strip():
            parts[-1] = slug.strip()
        path = "/".join(parts)
    # Hugo lower-cases paths and turns spaces into '-' unless configured otherwise.
    path = "/" + path.lower().replace(" ", "-").strip("/")
    if path != "/" and urls.is_ugly(top):
        return posixpath.normpath(path) + ".html"
    return normalize_url(path)


_PARAM = re.compile(r":([A-Za-z_]\w*)([*+?]?)")
_PARAM_RE = {"": "[^/]+", "?": "[^/]*", "*": ".*", "+": ".+"}


def rewrite_rule(source: str, target: str) -> tuple[re.Pattern[str], str]:
    """A VitePress ``rewrites`` entry: ``source`` with path-to-regexp parameters (``:name``
    one segment, ``:name*``/``:name+`` any rest) as a regex, and ``target`` to fill in."""
    out, at = [], 0
    for m in _PARAM.finditer(source):
        out.append(re.escape(source[at : m.start()]))
        name, mod = m.groups()
        out.append(f"(?P<{name}>{_PARAM_RE[mod]})")
        at = m.end()
    out.append(re.escape(source[at:]))
    return re.compile("".join(out)), target


def rewrite_path(rel: str, rules: list[tuple[re.Pattern[str], str]]) -> str:
    """The path a page is served from after the first matching rewrite (``.md`` kept)."""
    for pattern, target in rules:
        m = pattern.fullmatch(rel) or pattern.fullmatch(strip_md(rel))
        if m:
            values = m.groupdict()
            out = _PARAM.sub(lambda p, v=values: v.get(p.group(1)) or "", target)
            out = out.lstrip("/")
            return out if out.endswith(MD_SUFFIXES) else f"{out}.md"
    return rel


def _app_url(shape: Shape, stem: str, front: Mapping[str, Any], site: Site | None) -> str:
    base = site.route_base.rstrip("/") if site else ""
    parts = stem.split("/")
    if shape == "docusaurus":
        parts = [_NUMBER_PREFIX.sub("", p) for p in parts]
        slug = front.get("slug")
        doc_id = front.get("id")
        if isinstance(slug, str) and slug.strip():
            slug = slug.strip()
            if slug.startswith("/"):
                return (base + slug).rstrip("/") or "/"
            parts = [*parts[:-1], *slug.split("/")]
        elif isinstance(doc_id, str) and doc_id.strip():
            parts[-1] = doc_id.strip()
        # `guides/guides.md`, `guides/index.md` and `guides/README.md` are the folder's page.
        if len(parts) > 1 and parts[-1].lower() == parts[-2].lower():
            parts = parts[:-1]
    index = parts[-1] in INDEX_STEMS
    if index:
        parts = parts[:-1]
    path = "/".join(p for p in parts if p)
    if shape == "vitepress":
        if index:
            return f"{base}/{path}/".replace("//", "/")
        clean = site is None or site.clean_urls
        return f"{base}/{path}" + ("" if clean else ".html")
    if shape == "starlight":  # Astro: lower-cased slugs, directory URLs unless told otherwise
        slug = front.get("slug")
        path = slug.strip().strip("/") if isinstance(slug, str) and slug.strip() else path
        path = "/".join(p.lower().replace(" ", "-") for p in path.split("/"))
        slash = site is None or site.trailing_slash is not False
        return (f"{base}/{path}" + ("/" if slash else "")).replace("//", "/") or "/"
    url = f"{base}/{path}".rstrip("/")
    if shape == "docusaurus" and site is not None and site.trailing_slash is True:
        return url + "/"
    return url or "/"


def normalize_url(path: str) -> str:
    """``/a/b`` and ``/a/b/index.html`` -> ``/a/b/``; ``..`` segments collapsed."""
    path = urlsplit(path).path or "/"
    if path.endswith(("/index.html", "/index.htm")):
        path = path.rsplit("/", 1)[0] + "/"
    elif path.endswith((".html", ".htm")):
        path = path.rsplit(".", 1)[0] + "/"
    norm = posixpath.normpath(path) if path not in ("", "/") else "/"
    norm = "/" + norm.lstrip("/")
    return norm if norm.endswith("/") else norm + "/"


def humanize(rel: str) -> str:
    """A title from a file name: ``first-steps.md`` -> ``First steps`` (index: its folder)."""
    stem = _NUMBER_PREFIX.sub("", posixpath.basename(strip_md(rel)))
    if stem in INDEX_STEMS:
        stem = posixpath.basename(posixpath.dirname(strip_md(rel))) or "Home"
    words = stem.replace("-", " ").replace("_", " ").strip()
    return words[:1].upper() + words[1:] if words else "Untitled"
