"""A path -> the docs tree it is: :func:`detect_site` picks the site generator.

Detection order for a folder: ``mkdocs.yml`` in it; a Docusaurus, VitePress, Starlight,
Next.js or Sphinx config (:mod:`~cogitave.ingest.docs.docusaurus` ...); a Hugo ``content/``
folder in it, or the folder itself looks like Hugo content (named ``content`` or holding
``_index.md``); an ``mkdocs.yml`` up to three levels down (a repository whose docs live in
``docs/en/``); a folder of mostly reStructuredText (Sphinx without ``conf.py``); else a plain
folder. A file: ``mkdocs.yml``, or a single Markdown or RST page.
"""

from __future__ import annotations

import re
from pathlib import Path

from cogitave.errors import IngestError, InputError
from cogitave.ingest.confined import TreeReader
from cogitave.ingest.docs.docusaurus import detect_docusaurus
from cogitave.ingest.docs.hugo import detect_hugo
from cogitave.ingest.docs.mkdocs import config_in, find_config, mkdocs_site
from cogitave.ingest.docs.nextjs import detect_nextjs
from cogitave.ingest.docs.paths import MD_SUFFIXES, MKDOCS_NAMES, RST_SUFFIXES, strip_md
from cogitave.ingest.docs.site import Site, count_pages
from cogitave.ingest.docs.sphinx_site import detect_sphinx
from cogitave.ingest.docs.starlight import detect_starlight
from cogitave.ingest.docs.urls import rewrite_rule
from cogitave.ingest.docs.vitepress import detect_vitepress

DETECTORS = (detect_vitepress, detect_starlight, detect_nextjs, detect_sphinx)


def detect_site(path: Path, reader: TreeReader | None = None, version: str | None = None) -> Site:
    """Detect the shape of ``path`` (a folder, an ``mkdocs.yml`` or a single ``.md`` file);
    every file is read through ``reader`` (by default, one confined to ``path``). A tree that
    holds several versions of its docs (Docusaurus) is read at ``version`` (None: the one the
    site serves by default); a version asked of any other tree, or one it does not hold, is
    an :class:`InputError` naming what it holds."""
    reader = reader or TreeReader.for_source(path)
    site = _detect_site(path, reader, version)
    if version is not None and not site.versions and site.shape != "docusaurus":
        raise InputError(f"{path}: its docs are not versioned: leave the version out")
    site.reader = reader
    if site.shape in ("nextjs", "plain") and path.is_dir():
        _suffix_translations(site)
    return site


def _detect_site(path: Path, reader: TreeReader, version: str | None) -> Site:
    if path.is_file():
        if path.name in MKDOCS_NAMES:
            return mkdocs_site(path.parent, path, reader)
        if path.suffix in MD_SUFFIXES:
            return Site("plain", path.parent, path.parent, "github")
        if path.name.endswith(RST_SUFFIXES):
            return Site("sphinx", path.parent, path.parent, "sphinx", suffixes=RST_SUFFIXES)
        raise IngestError(f"not a Markdown file, mkdocs.yml or folder: {path}")
    if not path.is_dir():
        raise IngestError(f"source not found: {path}")
    config = config_in(path, reader)
    if config is not None:
        return mkdocs_site(path, config, reader)
    docusaurus = detect_docusaurus(path, reader, version)
    if docusaurus is not None:
        return docusaurus
    for detect in DETECTORS:
        found = detect(path, reader)
        if found is not None:
            return found
    hugo = detect_hugo(path, reader)
    if hugo is not None:
        return hugo
    nested = find_config(path, reader)
    if nested is not None:
        site = mkdocs_site(path, nested, reader)
        site.notes.append(f"using {nested.relative_to(path).as_posix()}")
        return site
    counts = count_pages(reader, path)
    if counts["rst"] > counts["markdown"]:
        site = Site("sphinx", path, path, "sphinx", suffixes=RST_SUFFIXES)
        site.notes.append("reStructuredText folder without conf.py")
        return site
    return Site("plain", path, path, "github")


# `page.fr.mdx` beside `page.mdx`: a translation (Nextra, Fumadocs). Two letters (and a region)
# only; these two-letter suffixes name a programming language or a kind of file instead.
_TRANSLATION = re.compile(r"^(?P<stem>.+)\.(?P<code>[a-z]{2}(?:[-_][A-Za-z]{2,4})?)$")
_NOT_LANGUAGES = frozenset("js ts py go rb rs kt cs sh md db io ui ci vs qa ml os".split())  # noqa: SIM905
MIN_TRANSLATED_PAGES = 3


def _suffix_translations(site: Site) -> None:
    """Read one language of a site whose translations sit beside its pages as
    ``page.<lang>.mdx``: a suffix counts as a language when at least
    :data:`MIN_TRANSLATED_PAGES` pages carry it. The default is the unsuffixed page; when every
    page has a suffix (Nextra's ``page.en-US.mdx``), English, else the most common suffix,
    served without it."""
    names: dict[str, set[str]] = {}  # stem (folder-relative, no suffix) -> codes ("" none)
    for file in site.files():
        rel = strip_md(file.relative_to(site.docs_root).as_posix())
        m = _TRANSLATION.match(rel)
        if m and m.group("code") not in _NOT_LANGUAGES:
            names.setdefault(m.group("stem"), set()).add(m.group("code"))
        else:
            names.setdefault(rel, set()).add("")
    counts: dict[str, int] = {}
    for codes in names.values():
        for code in codes - {""}:
            counts[code] = counts.get(code, 0) + 1
    langs = sorted(c for c, n in counts.items() if n >= MIN_TRANSLATED_PAGES)
    if not langs:
        return
    suffixed = sum(1 for codes in names.values() if "" not in codes and codes & set(langs))
    unsuffixed = sum(1 for codes in names.values() if "" in codes and codes & set(langs))
    default = ""
    if suffixed > unsuffixed:
        english = [c for c in langs if c.split("-")[0].split("_")[0] == "en"]
        default = english[0] if english else max(langs, key=lambda c: counts[c])
    others = [c for c in langs if c != default]
    site.leave_out(
        "another language", [f"**/*.{c}.{ext}" for c in others for ext in ("md", "mdx", "markdown")]
    )
    if default:
        for ext in ("md", "mdx", "markdown"):
            site.rewrites.append(rewrite_rule(f":path*.{default}.{ext}", f":path*.{ext}"))
    shown = default or "the unsuffixed pages"
    site.notes.append(f"translations beside the pages ({', '.join(others)}): read {shown}")
