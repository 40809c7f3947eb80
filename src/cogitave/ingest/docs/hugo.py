"""A Hugo site: its content folder -> a :class:`~cogitave.ingest.docs.site.Site`.

A folder is Hugo when it holds ``content/``, or is itself content (named ``content``, or
holding ``_index.md``). The site's config (:func:`~cogitave.ingest.docs.hugo_urls.hugo_config`)
gives ``baseURL``, ``permalinks`` and ``uglyURLs`` (page URLs:
:mod:`~cogitave.ingest.docs.hugo_urls`). A multilingual site keeps one content folder per
language (``content/en/...``): one language is read, English when present.
"""

from __future__ import annotations

import re
from pathlib import Path

from cogitave.ingest.confined import TreeReader
from cogitave.ingest.docs.hugo_urls import HugoUrls, hugo_config
from cogitave.ingest.docs.paths import MD_SUFFIXES
from cogitave.ingest.docs.site import Site

_LANG_DIR = re.compile(r"^[a-z]{2,3}(?:[-_][A-Za-z]{2,4})?$")


HUGO_FOLDERS = ("archetypes", "layouts", "themes")
"""Folders of a Hugo site beside its ``content/``."""


def detect_hugo(path: Path, reader: TreeReader) -> Site | None:
    """The Hugo site of the folder ``path``, or None when it is not one."""
    if reader.is_dir(path / "content") and _looks_like_hugo(path, path / "content", reader):
        return hugo_site(path, path / "content", reader)
    if (path.name == "content" or reader.is_file(path / "_index.md")) and _looks_like_hugo(
        path, path, reader
    ):
        return hugo_site(path, path, reader)
    return None


def _looks_like_hugo(base: Path, content: Path, reader: TreeReader) -> bool:
    """Hugo's own marks: its config, its site folders, or ``_index.md`` section pages at the
    top of ``content``. A folder named ``content`` is not enough: Next.js and Astro sites
    keep their pages in one and serve them with the file names' case, where Hugo would
    lower-case the URLs."""
    if hugo_config(base, reader) or any(reader.is_dir(base / d) for d in HUGO_FOLDERS):
        return True
    if base == content and reader.allows(base.parent) and hugo_config(base.parent, reader):
        return True  # the content folder given, its site's config allowed above it
    if reader.is_file(content / "_index.md"):
        return True
    return any(reader.is_file(d / "_index.md") for d in reader.listdir(content) if reader.is_dir(d))


def hugo_site(base: Path, content: Path, reader: TreeReader) -> Site:
    """The site whose content folder is ``content``; ``base`` is the folder the caller named."""
    site = Site("hugo", base, content, "github", reader=reader)
    # The content folder given directly: the config is in the site folder above it (outside
    # the tree: read only when allowed).
    config = hugo_config(base, reader)
    if not config and base == content:
        config = hugo_config(base.parent, reader)
    url = config.get("baseurl")
    site.site_url = url.strip() if isinstance(url, str) else ""
    site.hugo = HugoUrls.from_config(config, f"the Hugo config of {base}")
    site.notes.extend(site.hugo.notes)
    # Multilingual sites keep one content folder per language (content/en/...): URLs have no
    # language prefix, so read one language (English when present) as the root.
    entries = reader.listdir(content)
    if not any(p.suffix in MD_SUFFIXES for p in entries if reader.is_file(p)):
        langs = sorted(
            d
            for d in entries
            if _LANG_DIR.match(d.name) and reader.is_dir(d) and reader.is_file(d / "_index.md")
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
