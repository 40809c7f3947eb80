"""Page files and URL paths: the names every part of the docs reader shares.

A page's ``rel`` path (relative to the docs root, ``a/b.md``) -> its uid stem (``a/b``),
whether it is a folder's index page, a title made from its file name; a URL path -> its
normal form (``/a/b/``).
"""

from __future__ import annotations

import posixpath
import re
from typing import Literal
from urllib.parse import urlsplit

Shape = Literal[
    "mkdocs", "hugo", "plain", "docusaurus", "vitepress", "nextjs", "sphinx", "starlight", "web"
]
MD_SUFFIXES = (".md", ".markdown", ".mdx")
RST_SUFFIXES = (".rst.txt", ".rst")
INDEX_STEMS = ("index", "_index", "README")
MKDOCS_NAMES = ("mkdocs.yml", "mkdocs.yaml")
NUMBER_PREFIX = re.compile(r"^\d+[-_.]")


def strip_md(rel: str) -> str:
    """``a/b.md`` -> ``a/b`` (also ``.mdx``, ``.rst``, ``.rst.txt``)."""
    for suffix in (*MD_SUFFIXES, *RST_SUFFIXES):
        if rel.endswith(suffix):
            return rel[: -len(suffix)]
    return rel


def is_index(rel: str) -> bool:
    """True for a folder's section page (``index.md``, ``_index.md``, ``README.md``)."""
    return posixpath.basename(strip_md(rel)) in INDEX_STEMS


def normalize_url(path: str) -> str:
    """``/a/b`` and ``/a/b/index.html`` -> ``/a/b/``; ``..`` segments collapsed."""
    path = urlsplit(path).path or "/"
    if path.endswith(("/index.html", "/index.htm")):
        path = path.rsplit("/", 1)[0] + "/"
    elif path.endswith((".html", ".htm")):
        path = path.rsplit(".", 1)[0] + "/"
    norm = posixpath.normpath(path) if path not in ("", "/") else "/"
    norm = "/" + norm.lstrip("/")
    return norm if norm.endswith("/") else norm + "/"


def humanize(rel: str) -> str:
    """A title from a file name: ``first-steps.md`` -> ``First steps`` (index: its folder)."""
    stem = NUMBER_PREFIX.sub("", posixpath.basename(strip_md(rel)))
    if stem in INDEX_STEMS:
        stem = posixpath.basename(posixpath.dirname(strip_md(rel))) or "Home"
    words = stem.replace("-", " ").replace("_", " ").strip()
    return words[:1].upper() + words[1:] if words else "Untitled"
