"""An MkDocs project: ``mkdocs.yml`` -> a :class:`~cogitave.ingest.docs.site.Site`.

Read from the config: ``docs_dir``, ``site_url``, ``use_directory_urls``, ``nav`` (groups,
titles, reading order), the ``redirects`` plugin's maps, ``exclude_docs`` and ``draft_docs``
(gitignore syntax), the ``i18n`` plugin (mkdocs-static-i18n: the default language is read)
and ``extra.alternate`` (other language trees). The config is YAML with MkDocs' own tags
(``!!python/name:``, ``!ENV``), read as plain values and never run.
"""

from __future__ import annotations

import os
import posixpath
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from cogitave.errors import IngestError
from cogitave.ingest.confined import TreeReader
from cogitave.ingest.docs.frontmatter import load_yaml
from cogitave.ingest.docs.jsconfig import config_file, docs_folder
from cogitave.ingest.docs.paths import MKDOCS_NAMES, normalize_url
from cogitave.ingest.docs.site import SKIP_DIRS, NavGroup, Site
from cogitave.ingest.docs.urls import rewrite_rule
from cogitave.ingest.globs import GitIgnore, GlobError

_SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")
# What MkDocs always excludes, before ``exclude_docs`` (dot-files, which the walk skips anyway,
# and a top-level ``templates/`` folder of theme overrides).
MKDOCS_EXCLUDE_ALWAYS = (".*", "/templates/")


def config_in(folder: Path, reader: TreeReader) -> Path | None:
    """The ``mkdocs.yml`` (or ``.yaml``) of ``folder``, if it has one."""
    return config_file(reader, folder, MKDOCS_NAMES)


def find_config(path: Path, reader: TreeReader, depth: int = 3) -> Path | None:
    """The shallowest ``mkdocs.yml`` up to ``depth`` folders down (among equals, English
    first, then alphabetical): a repository whose docs live in ``docs/en/``."""
    found: list[Path] = []
    for dirpath, dirnames, filenames in reader.walk(path, want=MKDOCS_NAMES.__contains__):
        rel_depth = len(Path(dirpath).relative_to(path).parts)
        dirnames[:] = sorted(d for d in dirnames if not d.startswith(".") and d not in SKIP_DIRS)
        if rel_depth >= depth:
            dirnames[:] = []
        found.extend(Path(dirpath) / n for n in filenames if n in MKDOCS_NAMES)
    found.sort(key=lambda p: (len(p.parts), p.parent.name != "en", str(p)))
    return found[0] if found else None


def mkdocs_site(base: Path, config: Path, reader: TreeReader) -> Site:
    """The site of the config file ``config``; ``base`` is the folder the caller named."""
    config_dir = config.parent
    site = Site("mkdocs", base, config_dir / "docs", "toc", config_dir=config_dir, reader=reader)
    try:
        settings = load_yaml(reader.read_text(config) or "")
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as e:
        site.notes.append(f"cannot read {config.name}: {str(e).splitlines()[0]}")
        settings = {}
    if not isinstance(settings, Mapping):
        settings = {}
    docs_dir = settings.get("docs_dir", "docs")
    site.docs_root = Path(os.path.abspath(config_dir / str(docs_dir)))
    docs_folder(reader, config, "docs_dir", site.docs_root)
    if not reader.is_dir(site.docs_root):
        raise IngestError(f"{config}: docs_dir {docs_dir!r} is not a folder")
    site.site_url = str(settings.get("site_url") or "")
    site.directory_urls = settings.get("use_directory_urls", True) is not False
    if "nav" in settings and isinstance(settings["nav"], list):
        site.nav = NavGroup("")
        _nav_items(settings["nav"], site.nav, site)
    site.redirects = _redirect_maps(settings.get("plugins"))
    _excludes(site, settings, str(config))
    _i18n(site, settings.get("plugins"), str(config))
    extra = settings.get("extra")
    alternate = extra.get("alternate") if isinstance(extra, Mapping) else None
    if isinstance(alternate, list):
        links = (a.get("link") for a in alternate if isinstance(a, Mapping))
        site.other_trees += tuple(
            normalize_url(x).lower() for x in links if isinstance(x, str) and x.strip("/")
        )
    return site


def _excludes(site: Site, config: Mapping[str, Any], source: str) -> None:
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
            try:
                site.excludes.gitignore[key] = GitIgnore(lines)
            except GlobError as e:
                raise IngestError(f"{source}: {key}: {e}") from None


def _i18n(site: Site, plugins: Any, source: str) -> None:
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
        globs = [f"{x}/**" for x in others]
        site.leave_out("i18n: another language", globs, others, source)
        site.rewrites.append(rewrite_rule(f"{default}/:rest*", ":rest*", f"{source}: i18n"))
    else:
        globs = [f"**/*.{x}.{ext}" for x in others for ext in ("md", "markdown")]
        site.leave_out("i18n: another language", globs, others, source)
        site.rewrites.append(rewrite_rule(f":path*.{default}.md", ":path*.md", f"{source}: i18n"))
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
