"""Link targets -> page or section uids, the way MkDocs, Hugo and GitHub would resolve them.

A target is tried, in order, as: a page file (``../x.md``, site-absolute ``/x.md``); a site URL
(``/functions/foo/``, relative ``../bar/``, the site's own ``https://host/x/``), then the URL
aliases and redirects; a file path without extension (``x`` -> ``x.md`` / ``x/index.md``). Hugo
``ref``/``relref`` paths, and Hugo's relative links (its link render hook calls ``GetPage``), are
tried relative to the page, then from the content root. Hugo's own documentation writes glossary
links as ``[term](g)`` (a site render hook): those resolve to the page of a ``glossary`` folder
whose title or file name is the term (or its singular).
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass, field
from typing import Literal
from urllib.parse import unquote, urljoin, urlsplit

from cogitave.ingest.docs.paths import INDEX_STEMS, MD_SUFFIXES, Shape, normalize_url

Status = Literal["resolved", "self", "external", "outside", "asset", "dynamic", "unresolved"]
LinkKind = Literal["link", "ref", "undefined", "page_ref"]

_SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")
ASSET_SUFFIXES = frozenset(
    (
        *(".png", ".jpg", ".jpeg", ".gif", ".svg", ".webp", ".ico", ".avif", ".bmp", ".pdf"),
        *(".zip", ".gz", ".tar", ".mp4", ".webm", ".mp3", ".wav", ".py", ".js", ".ts", ".css"),
        *(".scss", ".json", ".yml", ".yaml", ".toml", ".txt", ".csv", ".xml", ".sh", ".go"),
        *(".rs", ".java", ".ipynb", ".woff", ".woff2", ".ttf", ".eot", ".html", ".htm"),
    )
)


@dataclass(frozen=True)
class Resolution:
    """Outcome of one target; ``uid`` is set when resolved (a section when the anchor exists)."""

    status: Status
    uid: str = ""
    reason: str = ""
    missing_anchor: str = ""
    via_alias: bool = False


@dataclass(frozen=True)
class PageRef:
    """What the resolver needs of the page a link is written in."""

    uid: str
    rel: str
    url: str


@dataclass
class LinkResolver:
    """Indexes of pages by file, URL, alias and anchor; :meth:`resolve` is a pure lookup."""

    shape: Shape
    site_url: str = ""
    by_rel: dict[str, str] = field(default_factory=dict)
    by_url: dict[str, str] = field(default_factory=dict)
    by_alias: dict[str, str] = field(default_factory=dict)
    anchors: dict[str, dict[str, str]] = field(default_factory=dict)
    glossary: dict[str, str] = field(default_factory=dict)
    labels: dict[str, str] = field(default_factory=dict)  # MyST ``(label)=`` -> node uid
    # URL prefixes of the site's other trees (other languages): on the site, not ingested.
    other_trees: tuple[str, ...] = ()

    def add_page(
        self, page: PageRef, aliases: list[str], anchors: dict[str, str], title: str = ""
    ) -> None:
        """Register a page: its file, URL, URL aliases and ``anchor -> uid`` map."""
        self.by_rel.setdefault(page.rel.lower(), page.uid)
        self.by_url.setdefault(normalize_url(page.url).lower(), page.uid)
        for alias in aliases:
            self.by_alias.setdefault(alias.lower(), page.uid)
        self.anchors[page.uid] = anchors
        if "glossary/" in page.rel.lower():
            stem = posixpath.basename(page.uid).lower()
            if stem not in INDEX_STEMS:
                self.glossary.setdefault(stem, page.uid)
                self.glossary.setdefault(title.lower(), page.uid)

    def resolve(
        self, target: str, src: PageRef, kind: LinkKind = "link", text: str = ""
    ) -> Resolution:
        """Resolve one link target written in page ``src`` (``text``: the link's text)."""
        raw = target.strip()
        if kind == "undefined":
            return Resolution("unresolved", reason=f"undefined reference [{raw}]")
        if raw == "g" and kind == "link" and self.shape == "hugo":
            return self._glossary(text, src)
        dest = unquote(raw)
        if "{{" in dest:
            return Resolution("dynamic", reason="target built by a shortcode")
        if not dest:
            return Resolution("unresolved", reason="empty link")
        if _SCHEME.match(dest) or dest.startswith("//"):
            local = self._own_site(dest)
            if local is None:
                return Resolution("external")
            dest = local
        parts = urlsplit(dest)
        path, fragment = parts.path, parts.fragment
        if not path:
            res = self._anchor(src.uid, fragment, src)
            hit = self.labels.get(fragment.lower()) if res.missing_anchor else None
            return Resolution("self" if hit == src.uid else "resolved", hit) if hit else res
        hugo_link = kind == "link" and self.shape == "hugo" and not path.startswith("/")
        uid = self._find_ref(path, src) if kind in ("ref", "page_ref") or hugo_link else None
        if uid is None and kind != "ref":
            uid = self._find(path, src)
        via_alias = False
        if uid is None and kind != "ref":
            uid = self.by_alias.get(self._url_key(path, src))
            via_alias = uid is not None
        if uid is None and not fragment and (hit := self.labels.get(path.lower())):
            return Resolution("self" if hit == src.uid else "resolved", hit)  # [](label)
        if uid is None:
            suffix = posixpath.splitext(path.rstrip("/"))[1].lower()
            if kind == "link" and suffix in ASSET_SUFFIXES:
                return Resolution("asset")
            other = bool(self.other_trees) and self._url_key(path, src).startswith(self.other_trees)
            if kind == "link" and other:
                return Resolution("outside", reason="another language tree")
            what = "ref" if kind == "ref" else "page file" if suffix in MD_SUFFIXES else "page"
            return Resolution("unresolved", reason=f"no {what} at {path}")
        res = self._anchor(uid, fragment, src)
        return Resolution(res.status, res.uid, res.reason, res.missing_anchor, via_alias)

    def _glossary(self, text: str, src: PageRef) -> Resolution:
        term = " ".join(text.lower().split())
        candidates = [term, term.replace(" ", "-")]
        for suffix, repl in (("ies", "y"), ("es", ""), ("s", ""), ("ing", ""), ("ing", "e"),
                             ("ed", ""), ("ed", "e"), ("e", "")):  # fmt: skip
            if term.endswith(suffix):
                base = term[: -len(suffix)] + repl
                candidates.extend((base, base.replace(" ", "-")))
        for c in candidates:
            if c in self.glossary:
                uid = self.glossary[c]
                return Resolution("self" if uid == src.uid else "resolved", uid)
        # Last resort, a unique term that starts with the stem ("localize" -> localization).
        stems = {c for c in candidates[2:] if len(c) >= 5}
        hits = {u for k, u in self.glossary.items() if any(k.startswith(st) for st in stems)}
        if len(hits) == 1:
            uid = hits.pop()
            return Resolution("self" if uid == src.uid else "resolved", uid)
        return Resolution("unresolved", reason=f"no glossary term at {text!r}")

    def _own_site(self, text: str) -> str | None:
        if not self.site_url:
            return None
        site, link = urlsplit(self.site_url), urlsplit(text)
        if link.netloc.lower() != site.netloc.lower() or link.scheme not in ("http", "https", ""):
            return None
        prefix = site.path.rstrip("/")
        if not link.path.startswith(prefix):
            return None
        local = link.path[len(prefix) :] or "/"
        return local + (f"#{link.fragment}" if link.fragment else "")

    def _anchor(self, uid: str, fragment: str, src: PageRef) -> Resolution:
        if fragment:
            hit = self.anchors.get(uid, {}).get(fragment) or self.anchors.get(uid, {}).get(
                fragment.lower()
            )
            if hit is None:
                status: Status = "self" if uid == src.uid else "resolved"
                return Resolution(status, uid, missing_anchor=fragment)
            uid = hit
        return Resolution("self" if uid == src.uid else "resolved", uid)

    def _file(self, rel: str) -> str | None:
        rel = posixpath.normpath(rel).lstrip("/")
        if rel.startswith("../"):
            return None
        hit = self.by_rel.get(rel.lower())
        if hit is not None or rel.lower().endswith(MD_SUFFIXES):
            return hit
        for candidate in (
            *(rel + s for s in MD_SUFFIXES),
            *(f"{rel}/{stem}{s}" for stem in INDEX_STEMS for s in MD_SUFFIXES),
        ):
            hit = self.by_rel.get(posixpath.normpath(candidate).lower())
            if hit is not None:
                return hit
        return None

    def _find(self, path: str, src: PageRef) -> str | None:
        here = posixpath.dirname(src.rel)
        if path.lower().endswith(MD_SUFFIXES):
            hit = self._file(path if path.startswith("/") else posixpath.join(here, path))
            if hit is None and self.shape == "docusaurus":
                hit = self._file(path)  # Docusaurus also resolves file paths from the docs root
            return hit
        hit = self.by_url.get(self._url_key(path, src))
        if hit is not None:
            return hit
        # GitHub-style links name a file without its extension, relative to the file.
        return self._file(path if path.startswith("/") else posixpath.join(here, path))

    def _find_ref(self, path: str, src: PageRef) -> str | None:
        # Hugo: relative to the current page first, then from the content root; the uid
        # form ("tutorial/first-steps") and a leading slash are accepted too.
        here = posixpath.dirname(src.rel)
        if not path.startswith("/"):
            hit = self._file(posixpath.join(here, path))
            if hit is not None:
                return hit
        return self._file(path.lstrip("/"))

    def _url_key(self, path: str, src: PageRef) -> str:
        absolute = path if path.startswith("/") else urljoin(src.url, path)
        return normalize_url(absolute).lower()
