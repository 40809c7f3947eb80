"""A Docusaurus site: ``docusaurus.config.*`` -> a :class:`~cogitave.ingest.docs.site.Site`.

Read: the docs plugin's ``path`` and ``routeBasePath`` (under ``docs: {`` in the classic
preset), ``url`` + ``baseUrl``, ``trailingSlash``, ``versions.json`` with ``lastVersion`` (the
version served at the docs route), and ``_category_.json``/``.yml`` folder labels. Pages are
``.md``/``.mdx``; ``_x`` files and folders are partials; ``sidebar_position`` orders a folder.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import yaml

from cogitave.ingest.confined import TreeReader
from cogitave.ingest.docs.jsconfig import (
    config_file,
    docs_folder,
    object_body,
    read_text,
    setting,
    top_level,
)
from cogitave.ingest.docs.site import Site

CONFIGS = tuple(f"docusaurus.config.{e}" for e in ("ts", "js", "mjs", "cjs", "mts"))


def detect_docusaurus(path: Path, reader: TreeReader) -> Site | None:
    """A Docusaurus site: its config in ``path`` or ``path/website``."""
    for folder in (path, path / "website"):
        config = config_file(reader, folder, CONFIGS)
        if config is None:
            continue
        text = read_text(reader, config)
        # The docs plugin's options sit under `docs: {` in the classic preset; only its own
        # keys are read (`versions: { current: { path } }` is not the docs folder).
        block = top_level(object_body(text, "docs") or "")
        docs_path = setting(block, "path") or "docs"
        route = setting(block, "routeBasePath")
        route = "docs" if route is None else route
        docs_root = Path(os.path.abspath(folder / docs_path))
        docs_folder(reader, config, "docs.path", docs_root)
        if not reader.is_dir(docs_root):
            continue
        released = _last_version(reader, folder, block)
        site = Site("docusaurus", path, released or docs_root, "github", config_dir=folder)
        if released is not None:
            site.notes.append(
                f"versioned site: reading {released.name} (served at the docs route); the "
                f"unreleased {docs_path}/ is served under its own version path"
            )
        url, base_url = setting(text, "url") or "", setting(text, "baseUrl") or "/"
        site.site_url = url.rstrip("/") + "/" + base_url.strip("/") if url else ""
        # Links written in pages and URLs here are below baseUrl, which site_url carries.
        site.route_base = "/" + route.strip("/") if route.strip("/") else ""
        # `trailingSlash: true` serves every page at `.../page/`; unset or false, `.../page`.
        site.trailing_slash = bool(re.search(r"(?m)(?:^|[{,\s])trailingSlash\s*:\s*true\b", text))
        site.suffixes = (".md", ".mdx")
        site.order_key = "sidebar_position"
        site.group_titles = _category_labels(reader, docs_root)
        return site
    return None


def _last_version(reader: TreeReader, folder: Path, docs_options: str) -> Path | None:
    """The folder of the version Docusaurus serves at the docs route: with ``versions.json``,
    its first (newest) entry's ``versioned_docs/version-<name>``, unless the docs options set
    ``lastVersion`` (``'current'``: the ``docs/`` folder itself). None: serve ``docs/``."""
    try:
        versions = json.loads(read_text(reader, folder / "versions.json"))
    except (OSError, UnicodeDecodeError, ValueError):
        return None
    if not isinstance(versions, list) or not versions or not isinstance(versions[0], str):
        return None
    last = setting(docs_options, "lastVersion") or versions[0]
    if last == "current":
        return None
    candidate = folder / "versioned_docs" / f"version-{last}"
    return Path(os.path.abspath(candidate)) if reader.is_dir(candidate) else None


def _category_labels(reader: TreeReader, root: Path) -> dict[str, str]:
    """Folder (relative to the docs root) -> its ``_category_.json``/``.yml`` label."""
    out: dict[str, str] = {}
    names = ("_category_.json", "_category_.yml", "_category_.yaml")
    for dirpath, dirnames, filenames in reader.walk(root, want=names.__contains__):
        dirnames[:] = [d for d in dirnames if not d.startswith((".", "_")) and d != "node_modules"]
        for name in names:
            if name in filenames:
                text = read_text(reader, Path(dirpath) / name)
                try:
                    data = json.loads(text) if name.endswith(".json") else yaml.safe_load(text)
                except (ValueError, yaml.YAMLError):
                    continue
                if isinstance(data, dict) and isinstance(data.get("label"), str):
                    rel = Path(dirpath).relative_to(root).as_posix()
                    out[rel] = data["label"]
    return out
