"""A source path -> the format to read it with (``index`` without ``--format``).

A ``.jsonl`` file is JSONL; a folder holding ``corpus.jsonl`` is BEIR; a docs tree (MkDocs,
Hugo, Docusaurus, VitePress, Next.js, Sphinx, or any folder of Markdown/MDX/RST pages) is
``docs``. A docs format asked for a folder without pages is a one-line error that names what
was looked for and the format that fits what is there.
"""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path

from cogitave.errors import InputError
from cogitave.ingest.docs.paths import MD_SUFFIXES, MKDOCS_NAMES, RST_SUFFIXES
from cogitave.ingest.docs.site import count_pages
from cogitave.ingest.smart import CORPUS_FILES as SMART_CORPORA

DOC_FORMATS = ("docs", "markdown")
LOOKED_FOR = "Markdown/MDX pages (.md, .mdx) or reStructuredText (.rst, _sources/*.rst.txt)"


def detect_format(path: Path) -> str:
    """``docs``, ``jsonl`` or ``beir`` for ``path``; an :class:`InputError` when none fits."""
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
    if (path / "corpus.jsonl").is_file():
        return "beir"
    if has_pages(path):
        return "docs"
    raise InputError(
        f"no documents in {path}: looked for {LOOKED_FOR} and corpus.jsonl{_hint(path)}"
    )


def has_pages(path: Path) -> bool:
    """True when a folder holds at least one Markdown, MDX or reStructuredText page."""
    counts = count_pages(path)
    return counts["markdown"] + counts["rst"] > 0


def check_format(path: Path, fmt: str) -> None:
    """Refuse a format for a folder that holds nothing of it, suggesting the format that fits."""
    if not path.is_dir():
        return
    if fmt in DOC_FORMATS:
        if not any(path.glob("mkdocs.y*ml")) and not has_pages(path):
            raise InputError(
                f"no documents for --format {fmt} in {path}: looked for {LOOKED_FOR}{_hint(path)}"
            )
        return
    wanted = {"jsonl": "*.jsonl", "beir": "corpus.jsonl"}.get(fmt)
    if wanted and not any(path.glob(wanted)) and has_pages(path):
        counts = count_pages(path)
        raise InputError(
            f"no {wanted} in {path} for --format {fmt}: it holds "
            f"{counts['markdown'] + counts['rst']} documentation pages: try --format docs "
            "(or leave --format out)"
        )


def _hint(path: Path) -> str:
    found: Counter[str] = Counter()
    for n, (_dirpath, _dirs, files) in enumerate(os.walk(path)):
        found.update(Path(f).suffix.lower() for f in files)
        if n > 2000:
            break
    if (path / "corpus.jsonl").is_file():
        return "; it is a BEIR folder: try --format beir"
    if found[".jsonl"]:
        return f"; it holds {found['.jsonl']} .jsonl file(s): try --format jsonl on one of them"
    if any(path.glob("cran.all.1400*")):
        return "; try --format cranfield"
    if any(f.lower() in SMART_CORPORA for f in os.listdir(path)):
        return "; it is a SMART test collection: try --format smart"
    if found[".html"]:
        return f"; it holds {found['.html']} HTML file(s), which are not read: index the sources"
    return ""
