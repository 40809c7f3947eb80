"""Where a docs tree's pages are opened: :func:`public_urls` picks the first rule that gives
it, and says which in the report.

1. ``--base-url``;
2. the site's configuration (MkDocs ``site_url``, Docusaurus ``url``, ...);
3. the package metadata beside the tree (:func:`documentation_url`: ``pyproject.toml``
   ``[project.urls]``, ``package.json`` ``homepage``);
4. a tree cloned from a repository on a host with a web view (GitHub, GitLab, Codeberg,
   Bitbucket: :func:`cogitave.ingest.remote.file_url`): each page's file there, at the
   commit read, with the page's anchor (the one its docs generator gives; the host's own
   rendering names most headings alike);
5. none: pages keep URLs from the site's root (``/api.html``) that no reader can open, and
   the report says how to give one.
"""

from __future__ import annotations

import json
import re
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from cogitave.ingest.confined import TreeReader
from cogitave.ingest.docs.site import Site

_DOC_KEYS = ("documentation", "docs", "doc", "homepage", "home")


def documentation_url(start: Path, levels: int = 2) -> tuple[str, str] | None:
    """(URL, where it was read) of the docs a package's metadata names, from the nearest
    ``pyproject.toml`` (``[project.urls]``: Documentation, else Homepage; Poetry's
    ``documentation``/``homepage``) or ``package.json`` (``homepage``) at ``start`` or up to
    ``levels`` folders above it (a repository's docs folder reads its project's metadata).
    Each file is read alone, confined to its folder, bounded."""
    here = start if start.is_dir() else start.parent
    for _ in range(levels + 1):
        reader = TreeReader(here)
        for name in ("pyproject.toml", "package.json"):
            file = here / name
            text = reader.read_text(file) if reader.is_file(file) else None
            if text is None:
                continue
            try:
                data = tomllib.loads(text) if name.endswith(".toml") else json.loads(text)
            except (tomllib.TOMLDecodeError, ValueError):
                continue
            found = _metadata_url(data, name)
            if found is not None:
                return found[0], f"{file} ({found[1]})"
        if here.parent == here:
            break
        here = here.parent
    return None


def _metadata_url(data: Any, name: str) -> tuple[str, str] | None:
    """(URL, key) of the docs a parsed ``pyproject.toml`` or ``package.json`` names."""
    if not isinstance(data, dict):
        return None
    tables: list[tuple[Mapping[str, Any], str]] = []
    if name == "package.json":
        tables.append((data, "homepage"))
    else:
        project = data.get("project")
        if isinstance(project, Mapping):
            urls = project.get("urls")
            if isinstance(urls, Mapping):
                tables.append((urls, "[project.urls]"))
        tool = data.get("tool")
        poetry = tool.get("poetry") if isinstance(tool, Mapping) else None
        if isinstance(poetry, Mapping):
            tables.append((poetry, "[tool.poetry]"))
    for table, label in tables:
        by_key = {str(k).strip().lower(): v for k, v in table.items()}
        for key in _DOC_KEYS:
            value = by_key.get(key)
            if isinstance(value, str) and re.match(r"^https?://[^\s/]+", value.strip()):
                url = value.strip()
                if len(url) <= 2048:
                    return (url if url.endswith("/") else url + "/"), f"{label} {key}"
    return None


def public_urls(site: Site, path: Path, base_url: str | None, files_url: str | None) -> None:
    """Where the site's pages are opened, by the first rule that gives it: ``--base-url``,
    the site's configuration, the package metadata's docs URL, the repository's web view
    (``files_url``), else site paths no reader can open; the rule is kept in
    ``site.url_rule`` and said in a note of the report."""
    if base_url:
        site.site_url, site.url_rule = base_url, "base_url"
        site.notes.append(f"URLs under {base_url}, as given (--base-url)")
        return
    if site.site_url:
        site.url_rule = "site"
        site.notes.append(f"URLs under {site.site_url}, as the site's configuration names it")
        return
    found = documentation_url(path)
    if found is not None:
        site.site_url, site.url_rule = found[0], "metadata"
        site.notes.append(
            f"URLs under {found[0]}: read from {found[1]}, as the site's configuration "
            "names none (--base-url to give another)"
        )
        return
    if files_url:
        site.files_url, site.url_rule = files_url, "repository"
        site.notes.append(
            f"URLs at each page's file in the repository's web view, at the commit read "
            f"({files_url}): --base-url, the site's configuration and the package metadata "
            "name no published docs (--base-url to give them)"
        )
        return
    site.url_rule = "none"
    site.notes.append(
        "no public URL: the site's configuration, the package metadata and --base-url "
        "give none, so hits link to paths from the site's root (/page/), which no "
        "reader can open and which other libraries share: pass --base-url"
    )
