"""Where a docs tree is published, when its site's configuration does not say: the package
metadata beside it (``pyproject.toml`` ``[project.urls]``, ``package.json`` ``homepage``).

A tree read without a public URL gives pages URLs from the site's root (``/api.html``) that no
reader can open; the docs reader asks :func:`documentation_url` before it settles for that,
and says in its report where the URL came from, or that there is none.
"""

from __future__ import annotations

import json
import re
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from cogitave.ingest.confined import TreeReader

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
