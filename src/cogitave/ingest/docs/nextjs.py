"""A Next.js site with a Markdown content folder (React's docs: ``src/content``) -> a
:class:`~cogitave.ingest.docs.site.Site`; pages are ``.md``/``.mdx`` at clean URLs."""

from __future__ import annotations

from pathlib import Path

from cogitave.ingest.docs.site import Site

CONFIGS = tuple(f"next.config.{e}" for e in ("js", "mjs", "ts", "cjs"))
CONTENT_DIRS = ("src/content", "content", "src/pages", "pages")


def detect_nextjs(path: Path) -> Site | None:
    """A Next.js site with a Markdown content folder (React's docs: ``src/content``)."""
    if not any((path / n).is_file() for n in CONFIGS):
        return None
    for rel in CONTENT_DIRS:
        root = path / rel
        if root.is_dir():
            site = Site("nextjs", path, root, "github", config_dir=path)
            site.suffixes = (".md", ".mdx")
            return site
    return None
