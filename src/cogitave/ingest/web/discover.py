"""Where a site lists its pages besides its links: sitemaps, ``llms.txt``, robots.txt.

Pure functions of fetched bytes: :func:`sitemap_urls` reads a sitemap (``<urlset>``) or a
sitemap index (``<sitemapindex>``), gzipped or not, with an XML parser that resolves no
entity and fetches nothing, bounded in size; :func:`llms_links` the links of an
``llms.txt``/``llms-full.txt`` (Markdown links and bare URLs); :func:`robots_of` a
robots.txt as protego reads it. The crawl fetches, decides scope and counts.
"""

from __future__ import annotations

import gzip
import io
import re
from dataclasses import dataclass, field

from lxml import etree
from protego import Protego

MAX_SITEMAP_BYTES = 50 * 1024 * 1024  # decompressed (the sitemap protocol's own limit)
MAX_SITEMAPS = 50
"""Sitemap files read in one crawl (an index naming more is cut, and said)."""
_MD_LINK = re.compile(r"\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
_BARE_URL = re.compile(r"(?<![(<\[])\bhttps?://[^\s)<>\]\"']+")


@dataclass
class Sitemap:
    """What one sitemap file lists."""

    pages: list[str] = field(default_factory=list)
    sitemaps: list[str] = field(default_factory=list)


def _ungzip(data: bytes) -> bytes | None:
    if data[:2] != b"\x1f\x8b":
        return data
    try:
        with gzip.GzipFile(fileobj=io.BytesIO(data)) as f:
            out = f.read(MAX_SITEMAP_BYTES + 1)
    except (OSError, EOFError):
        return None
    return out if len(out) <= MAX_SITEMAP_BYTES else None


def sitemap_urls(data: bytes) -> Sitemap | None:
    """The ``<loc>`` URLs of a sitemap or sitemap index; None when it is not one."""
    raw = _ungzip(data)
    if raw is None or b"<" not in raw[:1024]:
        return None
    parser = etree.XMLParser(
        resolve_entities=False, no_network=True, huge_tree=False, recover=True, load_dtd=False
    )
    try:
        root = etree.fromstring(raw, parser)
    except etree.XMLSyntaxError:
        return None
    if root is None:
        return None
    kind = etree.QName(root).localname
    if kind not in ("urlset", "sitemapindex"):
        return None
    out = Sitemap()
    target = out.pages if kind == "urlset" else out.sitemaps
    for el in root.iter():
        if isinstance(el.tag, str) and etree.QName(el).localname == "loc" and el.text:
            target.append(el.text.strip())
    return out


def llms_links(text: str) -> list[str]:
    """The link targets of an ``llms.txt`` (Markdown links, then bare URLs), in order."""
    found = [m.group(1) for m in _MD_LINK.finditer(text)]
    found.extend(m.group(0).rstrip(".,;:") for m in _BARE_URL.finditer(text))
    return list(dict.fromkeys(found))


def robots_of(text: str) -> Protego:
    """A robots.txt as protego reads it (an empty one allows everything)."""
    return Protego.parse(text)
