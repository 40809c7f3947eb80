"""A source path -> the format to read it with (``index`` without ``--format``), and the hint
that names the format that fits when another was asked for.

A ``.jsonl`` file is JSONL; a folder holding ``corpus.jsonl`` is BEIR; a docs tree (MkDocs,
Hugo, Docusaurus, VitePress, Next.js, Sphinx, or any folder of Markdown/MDX/RST pages) is
``docs``; an importable package folder (``__init__.py``) or a folder of installed
distributions (``*.dist-info``: a ``site-packages``) is ``pyapi``. A docs format asked for a
folder without pages is a one-line error that names what was looked for and the format that
fits what is there (:func:`format_hint`). Folders are looked at through a
:class:`~cogitave.ingest.confined.TreeReader`: nothing outside them.
"""

from __future__ import annotations

import fnmatch
from collections import Counter
from pathlib import Path

from cogitave.errors import InputError
from cogitave.ingest.confined import TreeReader
from cogitave.ingest.docs.paths import MD_SUFFIXES, MKDOCS_NAMES, RST_SUFFIXES
from cogitave.ingest.docs.site import count_pages
from cogitave.ingest.smart import CORPUS_FILES as SMART_CORPORA

MAX_HINT_ENTRIES = 20_000  # files and folders looked at for a hint

DOC_FORMATS = ("docs", "markdown")
LOOKED_FOR = (
    "Markdown/MDX pages (.md, .mdx), reStructuredText (.rst, _sources/*.rst.txt) or a built "
    "HTML site (index.html beside objects.inv, searchindex.js, _static/, sitemap.xml ...)"
)


def detect_format(path: Path) -> str:
    """``docs``, ``jsonl``, ``beir`` or ``pyapi`` for ``path``; an :class:`InputError` when
    none fits."""
    if not path.exists():
        raise InputError(f"source not found: {path}")
    if path.is_file():
        name = path.name.lower()
        if name.endswith(".jsonl"):
            return "jsonl"
        if name in MKDOCS_NAMES or name.endswith((*MD_SUFFIXES, *RST_SUFFIXES)):
            return "docs"
        raise InputError(
            f"cannot tell the format of {path}: give a .jsonl file, a docs folder or a "
            "BEIR folder, or pass --format"
        )
    if TreeReader(path).is_file(path / "corpus.jsonl"):
        return "beir"
    if is_python_package(path):
        return "pyapi"
    if has_pages(path) or is_built_html(path):
        return "docs"
    raise InputError(
        f"no documents in {path}: looked for {LOOKED_FOR} and corpus.jsonl{format_hint(path)}"
    )


def has_pages(path: Path) -> bool:
    """True when a folder holds at least one Markdown, MDX or reStructuredText page."""
    counts = count_pages(TreeReader(path), path)
    return counts["markdown"] + counts["rst"] > 0


def is_built_html(path: Path) -> bool:
    """True for a folder a generator built (read as HTML: :mod:`cogitave.ingest.web.folder`)."""
    from cogitave.ingest.web.folder import is_built_site

    return is_built_site(path)


def is_python_package(path: Path) -> bool:
    """True for an importable package folder or a ``site-packages`` (the ``pyapi`` format)."""
    from cogitave.ingest.pyapi.dist import is_package_source

    return is_package_source(path)


def _names(path: Path, pattern: str) -> list[str]:
    """Names of the entries of a folder (inside it) that match an ``fnmatch`` pattern."""
    return [p.name for p in TreeReader(path).listdir(path) if fnmatch.fnmatch(p.name, pattern)]


def check_format(path: Path, fmt: str) -> None:
    """Refuse a format for a folder that holds nothing of it, suggesting the format that fits."""
    if not path.is_dir():
        return
    if fmt == "pyapi":
        if not is_python_package(path):
            raise InputError(
                f"no Python package in {path} for --format pyapi: looked for __init__.py (a "
                f"package folder) or *.dist-info folders (a site-packages){format_hint(path)}"
            )
        return
    if fmt in DOC_FORMATS:
        if not _names(path, "mkdocs.y*ml") and not has_pages(path) and not is_built_html(path):
            hint = format_hint(path)
            raise InputError(
                f"no documents for --format {fmt} in {path}: looked for {LOOKED_FOR}{hint}"
            )
        return
    wanted = {"jsonl": "*.jsonl", "beir": "corpus.jsonl"}.get(fmt)
    if wanted and not _names(path, wanted) and has_pages(path):
        counts = count_pages(TreeReader(path), path)
        raise InputError(
            f"no {wanted} in {path} for --format {fmt}: it holds "
            f"{counts['markdown'] + counts['rst']} documentation pages: try --format docs "
            "(or leave --format out)"
        )


def format_hint(path: Path, fmt: str = "auto") -> str:
    """``"; <what the folder holds>: try --format X"`` when a format other than ``fmt`` fits
    what the folder ``path`` holds ("" for a file, or when nothing else fits): an installed
    Python package, BEIR, JSONL, Cranfield, SMART, documentation pages; HTML is named as not
    read."""
    if not path.is_dir():
        return ""
    if fmt != "pyapi" and is_python_package(path):
        return "; it is an installed Python package: try --format pyapi"
    reader = TreeReader(path)
    found: Counter[str] = Counter()
    seen = 0
    for _here, dirs, files in reader.walk(path):
        found.update(Path(f).suffix.lower() for f in files)
        found["pages"] += sum(1 for f in files if f.endswith((*MD_SUFFIXES, *RST_SUFFIXES)))
        seen += len(dirs) + len(files)
        if seen > MAX_HINT_ENTRIES:
            break
    top = [p.name for p in reader.listdir(path)]
    if "corpus.jsonl" in top and fmt != "beir":
        return "; it is a BEIR folder: try --format beir"
    if found[".jsonl"] and fmt != "jsonl":
        return f"; it holds {found['.jsonl']} .jsonl file(s): try --format jsonl on one of them"
    if any(fnmatch.fnmatch(n, "cran.all.1400*") for n in top) and fmt != "cranfield":
        return "; try --format cranfield"
    if any(n.lower() in SMART_CORPORA for n in top) and fmt != "smart":
        return "; it is a SMART test collection: try --format smart"
    if found["pages"] and fmt not in DOC_FORMATS:
        return f"; found {found['pages']} documentation pages: try --format docs"
    if found[".html"]:
        return f"; it holds {found['.html']} HTML file(s), which are not read: index the sources"
    return ""
