"""A page's path and front matter -> its URL path, as its generator builds it.

MkDocs and Hugo: directory URLs (``/a/b/``; MkDocs ``/a/b.html`` without
``use_directory_urls``; Hugo's own rules in :mod:`~cogitave.ingest.docs.hugo_urls`); Sphinx:
``.html``; Docusaurus, Next.js and VitePress with clean URLs: no trailing slash; Starlight:
lower-cased with one; a crawled page (``web``): the URL it was found at. VitePress
``rewrites`` (path-to-regexp ``:param`` patterns) move a page first.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from cogitave.errors import IngestError
from cogitave.ingest.docs import hugo_urls
from cogitave.ingest.docs.paths import (
    INDEX_STEMS,
    MD_SUFFIXES,
    NUMBER_PREFIX,
    Shape,
    normalize_url,
    strip_md,
)
from cogitave.ingest.docs.site import Site
from cogitave.ingest.globs import GlobError, Matcher, compile_route


def url_of(site: Site, rel: str, front: Mapping[str, Any]) -> str:
    """The URL path of the page at ``rel`` (relative to the docs root) of ``site``."""
    return page_url(site.shape, rel, front, site)


def page_url(shape: Shape, rel: str, front: Mapping[str, Any], site: Site | None = None) -> str:
    """The site URL path of a page, as its generator builds it (MkDocs and Hugo: directory
    URLs; Sphinx: ``.html``; Docusaurus, Next.js, VitePress clean URLs: no trailing slash)."""
    if shape == "web":  # a crawled page: the URL it was found at (below the site's base)
        return str(front.get("url") or "/" + strip_md(rel))
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
        if site is None:
            return hugo_urls.page_url(stem, front)
        return hugo_urls.page_url(stem, front, site.hugo, site.group_titles)
    return normalize_url("/" + "/".join(parts))


_PARAM = re.compile(r":([A-Za-z_]\w*)([*+?]?)")


def rewrite_rule(source: str, target: str, where: str = "rewrites") -> tuple[Matcher, str]:
    """A VitePress ``rewrites`` entry: ``source`` with path-to-regexp parameters (``:name``
    one segment, ``:name*``/``:name+`` any rest) as a matcher, and ``target`` to fill in;
    ``where`` names the config for an error."""
    try:
        return compile_route(source), target
    except GlobError as e:
        raise IngestError(f"{where}: cannot read the pattern {source!r}: {e}") from None


def rewrite_path(rel: str, rules: list[tuple[Matcher, str]]) -> str:
    """The path a page is served from after the first matching rewrite (``.md`` kept)."""
    for pattern, target in rules:
        values = pattern.groups(rel)
        if values is None:
            values = pattern.groups(strip_md(rel))
        if values is not None:
            out = _PARAM.sub(lambda p, v=values: v.get(p.group(1)) or "", target)
            out = out.lstrip("/")
            return out if out.endswith(MD_SUFFIXES) else f"{out}.md"
    return rel


def _app_url(shape: Shape, stem: str, front: Mapping[str, Any], site: Site | None) -> str:
    base = site.route_base.rstrip("/") if site else ""
    parts = stem.split("/")
    if shape == "docusaurus":
        parts = [NUMBER_PREFIX.sub("", p) for p in parts]
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
