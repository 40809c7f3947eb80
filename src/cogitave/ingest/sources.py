"""A source path and a format name -> a :class:`~cogitave.ingest.records.Batch`: the one way
a surface reads a source (``cogitave index``, ``watch``, ``demo``).

:data:`READERS` maps each format to its reader: ``jsonl`` (a file, or a folder of them),
``beir`` (a folder with ``corpus.jsonl``), ``cranfield`` (``cran.all.1400``), ``smart`` (CISI,
CACM, MEDLINE, ...), ``docs`` (a documentation tree; ``markdown`` is the same reader),
``pyapi`` (an installed Python package's API reference, read from its source: a package folder,
or a ``site-packages`` with ``library`` naming the distribution; :mod:`~cogitave.ingest.pyapi`).
``auto`` picks one from the path (:func:`~cogitave.ingest.detect.detect_format`), and a
format asked for a folder that holds nothing of it is refused with the one that fits.

:func:`read_source` turns every failure into one :class:`~cogitave.errors.InputError` (an
:class:`~cogitave.errors.IngestError` for the source itself) with a hint: a missing source,
a permission denied, an undecodable file, a source that yields no documents. A docs tree is
read confined to itself: ``allow_outside`` names the folders outside it that may be read too
(what is refused is listed in the batch's report). A tree holding several versions of its docs
(Docusaurus ``versioned_docs``) is read one version at a time: ``version`` names it (None: the
one the site serves by default; :func:`doc_versions` lists them).

:func:`identify` names the library a source documents and its version, from the docs
themselves (:mod:`~cogitave.ingest.identity`); an installed package from its ``METADATA``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from cogitave.errors import IngestError, InputError
from cogitave.ingest import identity, smart
from cogitave.ingest.beir import read_beir
from cogitave.ingest.detect import DOC_FORMATS, check_format, detect_format, format_hint
from cogitave.ingest.docs import read_docs
from cogitave.ingest.docs.site import DocVersion
from cogitave.ingest.identity import SourceIdentity
from cogitave.ingest.jsonl import read_jsonl
from cogitave.ingest.records import Batch
from cogitave.schema import Schema

__all__ = [
    "FORMATS",
    "READERS",
    "DocVersion",
    "SourceIdentity",
    "SourceOptions",
    "doc_versions",
    "identify",
    "read_source",
]

FORMATS = ("auto", "jsonl", "beir", "cranfield", "smart", "docs", "markdown", "pyapi")


@dataclass(frozen=True)
class SourceOptions:
    """What a reader may use besides the path."""

    schema: Schema | None = None
    base_url: str | None = None  # docs: makes URLs absolute, over the site's own setting
    allow_outside: tuple[Path, ...] = ()  # docs: folders outside the tree that may be read
    version: str | None = None  # docs: the version of a versioned tree to read
    library: str | None = None  # pyapi: the distribution a site-packages folder is read for
    # docs: a clone's files in its repository's web view, at the commit read (URLs when
    # nothing names the published docs)
    files_url: str | None = None


SourceReader = Callable[[Path, SourceOptions], Batch]


def _docs(path: Path, o: SourceOptions) -> Batch:
    from cogitave.ingest.web.folder import is_built_site, read_html_folder

    if o.version is None and is_built_site(path):
        # A built site is read as HTML, as a crawl of it would be: its generated pages
        # (autodoc, API indexes) exist only there (:mod:`cogitave.ingest.web.folder`).
        from cogitave.ingest.web.options import CrawlOptions

        return read_html_folder(path, CrawlOptions(base_url=o.base_url), o.schema)
    return read_docs(
        path,
        o.schema,
        base_url=o.base_url,
        allow_outside=o.allow_outside,
        version=o.version,
        files_url=o.files_url,
    )


def _pyapi(path: Path, o: SourceOptions) -> Batch:
    from cogitave.ingest.pyapi import read_pyapi

    return read_pyapi(path, o.library, o.schema)


READERS: dict[str, SourceReader] = {
    "jsonl": lambda path, o: read_jsonl(path, o.schema),
    "beir": lambda path, o: read_beir(path, o.schema),
    "cranfield": lambda path, _o: smart.read_cranfield(path),
    "smart": lambda path, _o: smart.read_corpus(path),
    "docs": _docs,
    "markdown": _docs,
    "pyapi": _pyapi,
}


def read_source(
    path: str | Path,
    fmt: str = "auto",
    schema: Schema | str | Path | None = None,
    base_url: str | None = None,
    allow_outside: Sequence[str | Path] = (),
    version: str | None = None,
    library: str | None = None,
    files_url: str | None = None,
) -> Batch:
    """The source at ``path`` read as ``fmt`` (see the module doc). ``schema``: a schema, or
    the path of its TOML file; ``base_url``, ``allow_outside`` and ``version`` are for docs
    trees (``version``: one the tree holds, else an :class:`InputError` naming them), and
    ``files_url`` (a clone's folder in its repository's web view, at the commit read: the
    pages' URLs when nothing else names them); ``library`` names the distribution a
    ``pyapi`` source is read for."""
    source, found = Path(path), fmt
    if not source.exists():
        raise IngestError(f"source not found: {source} (to remove its nodes: cogitave delete)")
    try:
        declared = Schema.load(schema) if isinstance(schema, str | Path) else schema
        outside = tuple(Path(p) for p in allow_outside)
        options = SourceOptions(declared, base_url, outside, version, library, files_url)
        found = detect_format(source) if fmt == "auto" else fmt
        check_format(source, found)
        if version is not None and found not in DOC_FORMATS:
            raise InputError(f"{source}: a version is read from a versioned docs tree, not {found}")
        reader = READERS.get(found)
        if reader is None:
            raise InputError(f"unknown format {fmt!r}; use one of {', '.join(FORMATS)}")
        batch = reader(source, options)
    except IngestError as e:
        hint = "" if e.details.get("errors") else format_hint(source, found)
        if not hint:  # bad records, or nothing else fits: the reader's own words
            raise
        raise IngestError(e.message + hint, details=e.details) from e
    except PermissionError as e:
        raise InputError(f"cannot read {e.filename or source}: permission denied") from e
    except (UnicodeDecodeError, IsADirectoryError, NotADirectoryError) as e:
        raise InputError(f"cannot read {source}: {e}") from e
    if not batch.nodes and not batch.problems:
        raise InputError(f"no {found} documents in {source}{format_hint(source, found)}")
    return batch


def identify(
    path: str | Path,
    *,
    allow_outside: Sequence[str | Path] = (),
    library: str | None = None,
    root: Path | None = None,
) -> SourceIdentity:
    """The library a source documents and its version: an installed package's from its
    ``METADATA`` (``library`` names the distribution of a ``site-packages``), else as its
    docs say (:func:`cogitave.ingest.identity.identify`; ``root``: the checkout a clone's
    folder is in)."""
    from cogitave.ingest.pyapi import is_package_source, locate

    source = Path(path)
    if is_package_source(source):
        dist = locate(source, library).dist
        where = f"{dist.dist_info.name}/METADATA" if dist.dist_info else "the package folder"
        return SourceIdentity(dist.name, dist.version, None, where, where if dist.version else "")
    return identity.identify(source, allow_outside=allow_outside, root=root)


def doc_versions(
    path: str | Path, *, allow_outside: Sequence[str | Path] = ()
) -> tuple[DocVersion, ...]:
    """The versions of the docs a tree holds (:func:`cogitave.ingest.identity.doc_versions`);
    an installed package holds one."""
    from cogitave.ingest.pyapi import is_package_source

    if is_package_source(Path(path)):
        return ()
    return identity.doc_versions(path, allow_outside=allow_outside)
