"""A VitePress site: ``.vitepress/config.*`` -> a :class:`~cogitave.ingest.docs.site.Site`.

Read: ``srcDir``, ``base``, ``sitemap.hostname``, ``cleanUrls``, ``srcExclude`` (globs),
``rewrites`` (literal ``'a': 'b'`` pairs, path-to-regexp parameters) and ``locales`` (the
root locale is read). Pages are ``.md``.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from cogitave.ingest.confined import TreeReader
from cogitave.ingest.docs.jsconfig import (
    config_file,
    docs_folder,
    other_locales,
    read_text,
    setting,
    string_list,
    string_pairs,
)
from cogitave.ingest.docs.site import Site
from cogitave.ingest.docs.urls import rewrite_rule
from cogitave.ingest.globs import compile_globs

CONFIGS = tuple(f"config.{e}" for e in ("ts", "js", "mjs", "mts", "cjs", "cts"))


def detect_vitepress(path: Path, reader: TreeReader) -> Site | None:
    """A VitePress site: ``.vitepress/config.*`` in ``path`` or ``path/docs``."""
    for folder in (path, path / "docs"):
        config = config_file(reader, folder / ".vitepress", CONFIGS)
        if config is None:
            continue
        text = read_text(reader, config)
        src = setting(text, "srcDir") or "."
        docs_root = docs_folder(reader, config, "srcDir", Path(os.path.abspath(folder / src)))
        site = Site("vitepress", path, docs_root, "vitepress", config_dir=folder)
        base = setting(text, "base") or "/"
        host = setting(text, "hostname") or ""
        site.site_url = host.rstrip("/") + "/" + base.strip("/") if host else ""
        site.clean_urls = bool(re.search(r"(?m)^\s*cleanUrls\s*:\s*true", text))
        site.suffixes = (".md",)
        if excluded := string_list(text, "srcExclude"):
            site.excludes.globs["srcExclude"] = compile_globs(excluded, f"{config}: srcExclude")
        pairs = string_pairs(text, "rewrites")
        site.rewrites = [rewrite_rule(a, b, f"{config}: rewrites") for a, b in pairs]
        other_locales(site, text, str(config))
        return site
    return None
