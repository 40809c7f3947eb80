"""An Astro Starlight site: ``astro.config.*`` using ``@astrojs/starlight`` -> a
:class:`~cogitave.ingest.docs.site.Site` (pages in ``src/content/docs``).

Read: ``site``, ``base``, ``trailingSlash`` and ``locales`` (the root locale is read);
``draft: true`` pages (left out of production builds) and a ``slug`` front matter are read
as Starlight does.
"""

from __future__ import annotations

import os
from pathlib import Path

from cogitave.ingest.confined import TreeReader
from cogitave.ingest.docs.jsconfig import config_file, other_locales, read_text, setting
from cogitave.ingest.docs.site import Site

CONFIGS = tuple(f"astro.config.{e}" for e in ("mjs", "ts", "js", "mts", "cjs"))


def detect_starlight(path: Path, reader: TreeReader) -> Site | None:
    """An Astro Starlight site: ``astro.config.*`` using ``@astrojs/starlight``, in ``path`` or
    ``path/docs``; pages in ``src/content/docs``. Other locales' folders, ``draft: true``
    pages (left out of production builds) and a ``slug`` front matter are read as Starlight
    does; ``trailingSlash: 'never'`` drops the trailing slash Astro's directory URLs have."""
    for folder in (path, path / "docs"):
        config = config_file(reader, folder, CONFIGS)
        if config is None:
            continue
        text = read_text(reader, config)
        if "@astrojs/starlight" not in text:
            continue
        docs_root = Path(os.path.abspath(folder / "src" / "content" / "docs"))
        if not reader.is_dir(docs_root):
            continue
        site = Site("starlight", path, docs_root, "github", config_dir=folder)
        site.suffixes = (".md", ".mdx")
        base = (setting(text, "base") or "").strip("/")
        site.route_base = f"/{base}" if base else ""
        url = setting(text, "site") or ""
        site.site_url = url.rstrip("/") if url.startswith("http") else ""
        site.trailing_slash = setting(text, "trailingSlash") != "never"
        other_locales(site, text, str(config))
        return site
    return None
