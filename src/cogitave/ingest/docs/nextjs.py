"""A Next.js site with a Markdown content folder (React's docs: ``src/content``) -> a
:class:`~cogitave.ingest.docs.site.Site`; pages are ``.md``/``.mdx`` at clean URLs."""

from __future__ import annotations

from pathlib import Path

from cogitave.ingest.confined import TreeReader
from cogitave.ingest.docs.jsconfig import config_file
from cogitave.ingest.docs.site import Site

CONFIGS = tuple(f"next.config.{e}" for e in ("js", "mjs", "ts", "cjs"))
CONTENT_DIRS = ("src/content", "content", "src/pages", "pages")


def detect_nextjs(path: Path, reader: TreeReader) -> Site | None:
    """A Next.js site with a Markdown content folder (React's docs: ``src/content``)."""
    if config_file(reader, path, CONFIGS) is None:
        return None
    for rel in CONTENT_DIRS:
        root = path / rel
        if reader.is_dir(root):
            site = Site("nextjs", path, root, "github", config_dir=path)
            site.suffixes = (".md", ".mdx")
            return site
    return None
