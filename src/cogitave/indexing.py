"""Indexing: a source -> a collection kept in sync with it (the application layer of writes).

What ``cogitave index | watch | delete`` do, for the CLI and for programs: read a source
(:func:`read`), open or create the collection it goes to (:func:`open_collection`), sync the
source into it (:func:`index`; a sharded collection is built or synced on Ray or in one
process), keep it in sync as its files change (:func:`watch`), delete nodes or a source. Every
check runs before the collection is touched: a bad source, a bad record (unless ``skip_bad``)
or a folder that is not a collection changes nothing. Readers are opened here too
(:func:`open_reader`): a plain or a sharded collection, behind the same
:class:`~cogitave.reader.Reader`.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cogitave import opening
from cogitave.errors import CogitaveError, ConflictError, IngestError, InputError, NotFoundError
from cogitave.ingest.remote import GitSource, Location, WebSource
from cogitave.libraries.names import library_key
from cogitave.store.roots import RootStore

if TYPE_CHECKING:  # the engine loads only when a command needs it (``--help`` stays fast)
    from cogitave.collection import Collection
    from cogitave.ingest.records import Batch, Problem
    from cogitave.ingest.web.crawl import Crawl
    from cogitave.libraries.collection import ProjectPins
    from cogitave.publish import Progress, Published
    from cogitave.reader import Reader

FORMATS = ("auto", "jsonl", "beir", "cranfield", "smart", "docs", "markdown", "pyapi")
WATCH_LOCK_TRIES = 20
"""Attempts (0.5 s apart) of a watch's sync while another writer holds the lock."""


@dataclass(frozen=True)
class Origin:
    """Where a fetched source came from, for its provenance: what the user named, and the
    commit and tag of a clone."""

    source: str
    commit: str | None = None
    tag: str | None = None
    root: Path | None = None
    """The checkout's folder (the source may be a folder of it): its package names it."""
    files_url: str | None = None
    """Where the repository's web view shows the folder read, at the commit (None: a host
    with no web view known, or no repository): the pages' URLs when nothing names the
    published docs."""


@dataclass(frozen=True)
class SourceSpec:
    """What one source is and how to read it."""

    source: Location
    """A path, a site to crawl (:class:`WebSource`) or a repository (:class:`GitSource`)."""
    collection: Path
    fmt: str = "auto"
    schema: Path | None = None
    skip_bad: bool = False
    name: str | None = None
    add_only: bool = False
    base_url: str | None = None
    allow_outside: tuple[Path, ...] = ()
    library: str | None = None
    """The library the source is the docs of (a collection of libraries; None: named from the
    docs when the collection holds libraries)."""
    version: str | None = None
    """Its version (None: read from the docs, else ``latest``)."""
    replace: bool = False
    """Index a library version already indexed from another source over it."""
    encoder: str | None = None
    """The sentence encoder of a new collection (None: the default); an existing collection
    keeps its own, and naming another one is refused (``reembed`` moves a collection)."""
    origin: Origin | None = None
    """Set for a path fetched from elsewhere (a clone): its provenance."""

    @property
    def source_id(self) -> str:
        """The source's name in the collection: ``name``, else the URL it was fetched from,
        else its resolved path."""
        if self.name:
            return self.name
        if self.origin is not None:
            return self.origin.source
        if isinstance(self.source, Path):
            return str(self.source.resolve())
        return str(self.source)

    @property
    def path(self) -> Path:
        """The source's path (a site or a repository has none until fetched)."""
        if not isinstance(self.source, Path):
            raise InputError(f"{self.source} is not a file or folder")
        return self.source

    @property
    def as_library(self) -> bool:
        """Whether the source goes into a collection of libraries."""
        from cogitave.libraries.layout import is_library_collection

        return bool(self.library or self.version) or is_library_collection(self.collection)


@dataclass(frozen=True)
class IndexResult:
    """What one sync of a source did."""

    source: str
    read: int
    skipped: tuple[Problem, ...]
    live: int
    root: str
    published: Published | None = None
    """The sync (None for a sharded collection, which is rebuilt shard by shard)."""
    shards: int | None = None
    report: str = field(default="", repr=False)
    library: str | None = None
    """``name@version`` when the source was indexed as a library version."""
    others: tuple[IndexResult, ...] = ()
    """The other versions a versioned docs tree gave, each synced on its own."""


# -- readers ----------------------------------------------------------------------------------
def open_reader(
    path: Path, *, ray: str | None = None, partial: bool = False, root: str | None = None
) -> Reader:
    """The collection at ``path`` to read: sharded (shards in this process, or actors on
    Ray with ``ray``) or plain (at ``root``, a retained root id, when given)."""
    from cogitave.distributed.layout import is_sharded
    from cogitave.libraries.layout import is_library_collection

    if is_sharded(path):
        from cogitave.distributed.facade import ShardedCollection

        return ShardedCollection.open(path, ray, allow_partial=partial)
    if is_library_collection(path):
        from cogitave.libraries.collection import LibraryCollection

        if ray is not None:
            raise InputError(f"--ray needs a sharded collection; {path} holds libraries")
        if root is not None:
            raise InputError(
                f"{path} holds libraries, each with its own roots: read one version with "
                "--library NAME@VERSION instead of --root"
            )
        return LibraryCollection.open(path)
    if ray is not None:
        raise InputError(f"--ray needs a sharded collection; {path} is not one")
    return open_collection(path, root=root)


def open_any(path: str | Path, root: str | None = None) -> Reader:
    """``cogitave.open``: the collection at ``path``, plain (at ``root``, a retained root id,
    when given), sharded or of libraries, as the :class:`~cogitave.reader.Reader` every
    surface reads (``NotFoundError`` when ``path`` holds none)."""
    return open_reader(Path(path), root=root)


def _open_other(path: Path, root: str | None) -> Reader | None:
    """The reader of a folder of libraries or a sharded collection (None: neither), for
    ``Collection.open`` (:mod:`cogitave.opening`)."""
    from cogitave.distributed.layout import is_sharded
    from cogitave.libraries.layout import is_library_collection

    if not (is_sharded(path) or is_library_collection(path)):
        return None
    return open_reader(path, root=root)


opening.register(_open_other)


def use_project(reader: Reader, folder: Path) -> ProjectPins | None:
    """Pin each library a project uses to its version (``--project``); None: the reader holds
    no libraries to pin."""
    from cogitave.libraries.collection import LibraryCollection

    if not isinstance(reader, LibraryCollection):
        return None
    return reader.use_project(folder)


def open_collection(path: Path, *, root: str | None = None) -> Collection:
    """The plain collection at ``path`` (``NotFoundError`` when there is none)."""
    from cogitave.collection import Collection

    check_folder(path)
    if not Collection.exists(path):
        raise NotFoundError(f"no collection at {path}")
    return Collection.open(path, root)


def check_folder(path: Path) -> None:
    """A collection path must be a collection, or a folder a collection can be made in."""
    from cogitave.distributed.layout import is_sharded
    from cogitave.libraries.layout import is_library_collection

    if path.exists() and not path.is_dir():
        raise InputError(f"--collection {path} is a file, not a collection folder")
    if not path.is_dir() or is_sharded(path) or is_library_collection(path):
        return
    try:
        foreign = RootStore(path).foreign_entries()
    except PermissionError as e:
        raise InputError(f"cannot read --collection {path}: permission denied") from e
    if foreign:  # never write a collection into a folder of other files
        raise InputError(
            f"--collection {path} is a folder that holds other files, not a collection"
        )


# -- reading a source -------------------------------------------------------------------------
def read(spec: SourceSpec, version: str | None = None) -> Batch:
    """The source's batch (of docs ``version``, in a tree that holds several), checked: a
    missing or unreadable source, no documents, or (unless ``skip_bad``) a bad record is one
    error, and nothing is written."""
    from cogitave.ingest.sources import read_source

    batch = read_source(
        spec.path,
        spec.fmt,
        schema=spec.schema,
        base_url=spec.base_url,
        allow_outside=spec.allow_outside,
        version=version,
        library=spec.library,
        files_url=spec.origin.files_url if spec.origin else None,
    )
    if batch.problems and not spec.skip_bad:
        batch.raise_if_bad()
    return batch


# -- writing ----------------------------------------------------------------------------------
def index(
    spec: SourceSpec,
    *,
    progress: Progress | None = None,
    on_read: Callable[[Batch], None] | None = None,
    shards: int | None = None,
    ray: str | None = None,
    embed_actors: int = 1,
) -> IndexResult:
    """Sync the source into the collection (created if absent): new nodes added, changed
    ones replaced, vanished ones deleted (kept with ``add_only``); nothing changed, no new
    root. ``on_read`` sees the batch before the long embedding step (the ingest report)."""
    from cogitave.collection import Collection
    from cogitave.distributed.layout import is_sharded
    from cogitave.expand.embed import DEFAULT_ENCODER

    check_folder(spec.collection)
    from cogitave.libraries.packs import is_pack

    if spec.library and spec.version and not isinstance(spec.source, Path):
        # a site or a repository names its version only once fetched: when both are
        # given, a version held from elsewhere is refused before anything is downloaded
        where = spec.source_id if isinstance(spec.source, WebSource) else str(spec.source)
        check_conflict(spec, spec.library, spec.version, where)
    if isinstance(spec.source, WebSource):
        if shards is not None or ray is not None:
            raise InputError("a crawled site is indexed into one collection: drop --shards/--ray")
        return _index_site(spec, spec.source, progress, on_read)
    if isinstance(spec.source, GitSource):
        spec = fetch_repository(spec, spec.source)
    if is_pack(spec.path):
        return _import_pack(spec, progress)
    if spec.as_library:
        if shards is not None or ray is not None or is_sharded(spec.collection):
            raise InputError("a collection of libraries is not sharded: drop --shards/--ray")
        return _index_library(spec, progress, on_read)
    batch = read(spec)
    if on_read is not None:
        on_read(batch)
    report = str(getattr(batch, "report", "") or "")
    skipped = tuple(batch.problems)
    if shards is not None or ray is not None or is_sharded(spec.collection):
        roots = _index_sharded(
            batch, spec.collection, shards, ray, embed_actors, progress, spec.encoder
        )
        return IndexResult(
            spec.source_id,
            len(batch.nodes),
            skipped,
            len(batch.nodes),
            "",
            None,
            len(roots),
            report,
        )
    if Collection.exists(spec.collection):
        col = Collection.open(spec.collection, encoder=spec.encoder)
    else:
        col = Collection.create(
            spec.collection,
            batch.schema,  # type: ignore[arg-type]
            encoder=spec.encoder or DEFAULT_ENCODER,
        )
    res = col.sync(
        spec.source_id,
        batch.nodes,
        add_only=spec.add_only,
        progress=progress,
        identity=_identity_blob(spec),
    )
    return IndexResult(
        spec.source_id, len(batch.nodes), skipped, len(col), col.root, res, None, report
    )


def _index_library(
    spec: SourceSpec, progress: Progress | None, on_read: Callable[[Batch], None] | None
) -> IndexResult:
    """Sync the source as a library version (the collection of libraries created if absent):
    its name and version as given, else as its docs say, else the folder's name and
    ``latest``. A docs tree that holds several versions (a versioned Docusaurus site) gives
    every one of them, each a library version of its own, unless ``version`` picks one."""
    from cogitave.collection import Collection
    from cogitave.errors import EncoderError
    from cogitave.expand.embed import DEFAULT_ENCODER, canonical_name
    from cogitave.ingest.sources import doc_versions
    from cogitave.libraries.collection import LibraryCollection
    from cogitave.libraries.layout import is_library_collection

    path = spec.collection
    if Collection.exists(path):
        raise InputError(
            f"{path} holds one library already (made before libraries, or without "
            "--library): index libraries into a new collection"
        )
    name, version, commit = identity(spec)
    shown = _shown_source(spec)
    if name is None:
        raise InputError(
            f"cannot tell which library {shown} documents: no site config, objects.inv or "
            "package metadata names it; name it with --library NAME"
        )
    held = [v.version for v in doc_versions(spec.path, allow_outside=spec.allow_outside)]
    # Every released version; the unreleased docs ("next") only when asked for by name.
    released = [v for v in held if v.casefold() != "next"]
    todo = [(spec.version, spec.version)] if spec.version else [(v, v) for v in released]
    if not held:
        if version is None:
            raise InputError(
                f"cannot tell which version of {name} {shown} documents: no site config, "
                "objects.inv, package metadata or git tag gives it; name it with --version "
                "VERSION (--version latest for docs that follow the newest release)"
            )
        todo = [(version, None)]
    source = spec.origin.source if spec.origin else str(spec.path.resolve())
    for label, _ in todo:
        check_conflict(spec, name, label, source)
    # not ``or``: an empty collection of libraries has no length, and is falsy
    if is_library_collection(path):
        lib = LibraryCollection.open(path)
    else:
        lib = LibraryCollection.create(path, encoder=spec.encoder or DEFAULT_ENCODER)
    if spec.encoder and lib.manifest.encoder != canonical_name(spec.encoder):
        raise EncoderError(
            f"{path} embeds with {lib.manifest.encoder!r}, not {spec.encoder!r}: the libraries "
            "of a collection share one encoder"
        )
    results: list[IndexResult] = []
    for label, docs_version in todo:
        batch = read(spec, docs_version)
        if on_read is not None:
            on_read(batch)
        res = lib.sync_library(
            name,
            label,
            batch.nodes,
            schema=batch.schema,
            source=source,
            commit=commit,
            replace_source=spec.replace,
            progress=progress,
        )
        e = lib.manifest.find(f"{library_key(name)}@{label}")
        assert e is not None
        report = str(getattr(batch, "report", "") or "")
        results.append(
            IndexResult(
                e.ref, len(batch.nodes), tuple(batch.problems), e.nodes, e.root, res, None,
                report, e.ref,
            )
        )  # fmt: skip
    return replace(results[0], others=tuple(results[1:]))


def _import_pack(spec: SourceSpec, progress: Progress | None) -> IndexResult:
    """Import an index pack (a library version, checked object by object, not re-embedded)."""
    from cogitave.collection import Collection
    from cogitave.libraries.collection import LibraryCollection
    from cogitave.libraries.layout import is_library_collection

    path = spec.collection
    if Collection.exists(path):
        raise InputError(f"{path} holds one library already: import packs into a new collection")
    # not ``or``: an empty collection of libraries has no length, and is falsy
    if is_library_collection(path):
        lib = LibraryCollection.open(path)
        e = lib.import_pack(spec.path, replace=spec.replace, progress=progress)
    else:
        # made for this pack: a pack refused leaves no collection behind
        made = [p for p in (path, *path.parents) if not p.exists()]
        before = set(os.listdir(path)) if path.is_dir() else set()
        try:
            lib = LibraryCollection.create(path)
            e = lib.import_pack(spec.path, replace=spec.replace, progress=progress)
        except BaseException:
            _unmake(path, before, made)
            raise
    return IndexResult(str(spec.source), e.nodes, (), e.nodes, e.root, library=e.ref)


def _unmake(path: Path, before: set[str], made: list[Path]) -> None:
    """Undo :meth:`LibraryCollection.create` at ``path``: the entries it added to a folder
    that held ``before``, and the folders ``made`` for it (deepest first), when empty."""
    import shutil

    if path.is_dir():
        for name in set(os.listdir(path)) - before:
            p = path / name
            if p.is_dir() and not p.is_symlink():
                shutil.rmtree(p, ignore_errors=True)
            else:
                p.unlink(missing_ok=True)
    for p in made:
        with contextlib.suppress(OSError):
            p.rmdir()


def reembed(path: Path, encoder: str, progress: Progress | None = None) -> tuple[str, bool]:
    """Move the plain collection at ``path`` to ``encoder``: a new root whose every vector is
    that encoder's (:meth:`Collection.reembed`). (root id, whether a root was written)."""
    from cogitave.distributed.layout import is_sharded
    from cogitave.expand.embed import load_encoder
    from cogitave.libraries.layout import is_library_collection

    load_encoder(encoder)  # an unknown or uninstalled encoder fails before any work
    if is_sharded(path):
        raise InputError(
            f"{path} is sharded: re-embedding a sharded collection is not supported; index "
            "its sources into a new collection with --shards N --encoder NAME"
        )
    if is_library_collection(path):
        raise InputError(
            f"{path} holds libraries: re-embedding a collection of libraries is not "
            "supported; index the libraries into a new collection with --encoder NAME"
        )
    return open_collection(path).reembed(encoder, progress)


def export_pack(path: Path, ref: str, out: Path) -> Any:
    """Write library version ``ref`` of the collection at ``path`` to the pack file ``out``."""
    from cogitave.libraries.collection import LibraryCollection
    from cogitave.libraries.layout import is_library_collection

    if not is_library_collection(path):
        raise InputError(f"{path} holds no libraries to pack (index with --library first)")
    return LibraryCollection.open(path).export_pack(ref, out)


def publish_pack(path: Path, ref: str, registry: Path, out: Path | None = None) -> Any:
    """Write library version ``ref`` of the collection at ``path`` into the registry folder
    ``registry`` and name it in its index (:func:`cogitave.libraries.registry.publish`); a
    copy at ``out`` too when given. The registry's entry."""
    from cogitave.libraries.registry import copy_pack, publish

    entry = publish(path, ref, registry)
    if out is not None:
        copy_pack(registry, entry, out)
    return entry


def import_from_registry(
    path: Path,
    ref: str,
    version: str | None = None,
    registry: str | None = None,
    *,
    replace: bool = False,
    progress: Progress | None = None,
) -> Any:
    """Import library version ``ref`` (``NAME@VERSION``, or ``NAME`` and ``version``) into the
    collection of libraries at ``path`` from ``registry``, else from the first registry of
    the collection's ``libraries.registries`` setting that holds it (an ``ImportResult``)."""
    from cogitave.libraries import registry as registries
    from cogitave.libraries.layout import is_library_collection
    from cogitave.libraries.names import split_ref

    check_folder(path)
    name, at = split_ref(ref)
    if at and version and at != version:
        raise InputError(f"--library {ref} and --version {version} disagree")
    version = at or version
    if not version:
        raise InputError(f"give the version to import: --library {name}@VERSION")
    if registry is not None:
        return registries.import_from_registry(
            path, registry, name, version, replace=replace, progress=progress
        )
    listed: tuple[str, ...] = ()
    if is_library_collection(path):
        from cogitave.libraries.collection import LibraryCollection

        listed = LibraryCollection.open(path).settings().libraries.registries
    if not listed:
        raise InputError(
            "no SOURCE and no --registry, and the collection names no registries "
            "(settings --set 'libraries.registries=[\"URL_OR_FOLDER\"]')"
        )
    res = registries.fetch_from_registries(
        path, listed, name, version, replace=replace, progress=progress
    )
    if res is None:
        raise NotFoundError(
            f"no registry of libraries.registries ({', '.join(listed)}) holds {name}@{version} "
            "for this collection's encoder"
        )
    return res


def identity(spec: SourceSpec) -> tuple[str | None, str | None, str | None]:
    """The library name, version and git commit of a source: as given, else as its metadata
    says (:func:`cogitave.ingest.sources.identify`: an installed package's metadata, the
    site's config, ``objects.inv``, the package, the git tag), never from a path (None: not
    found); a clone's tag and commit are the checkout's."""
    from cogitave.ingest.sources import identify

    origin = spec.origin or Origin("")
    ident = identify(
        spec.path, allow_outside=spec.allow_outside, library=spec.library, root=origin.root
    )
    named = ident.name if ident.name and not _from_path(ident.name_from) else None
    name = spec.library or named
    # A clone's tag names the version it checked out, over what the files say.
    version = spec.version or origin.tag or ident.version
    return name, version, origin.commit or ident.commit


def _from_path(how: str) -> bool:
    """Whether an identity's name was the folder's (``identify``'s last resort)."""
    return how.startswith(("the folder's name", "the name of the folder above"))


def _shown_source(spec: SourceSpec) -> str:
    return spec.origin.source if spec.origin else str(spec.source)


def _identity_blob(spec: SourceSpec) -> bytes | None:
    """The library a source indexed into a plain collection documents, as JSON for its
    source's entry (None: its metadata names none, or it is not a docs tree)."""
    import json

    from cogitave.ingest.sources import DOC_FORMATS, detect_format

    try:
        if (detect_format(spec.path) if spec.fmt == "auto" else spec.fmt) not in DOC_FORMATS:
            return None
        name, version, commit = identity(spec)
    except CogitaveError:
        return None
    if name is None:
        return None
    return json.dumps({"name": name, "version": version, "commit": commit}).encode()


def check_conflict(spec: SourceSpec, name: str, version: str, source: str) -> None:
    """Refuse, before anything is fetched or read, to index library version ``name@version``
    from ``source`` over the same version indexed from another source (unless ``replace``)."""
    from cogitave.libraries.collection import LibraryCollection
    from cogitave.libraries.layout import is_library_collection

    if spec.replace or not is_library_collection(spec.collection):
        return
    ref = f"{library_key(name)}@{version}"
    entry = LibraryCollection.open(spec.collection).manifest.find(ref)
    if entry is not None and entry.source and entry.source != source:
        raise ConflictError(
            f"{ref} was indexed from {entry.source}; indexing it from {source} would replace "
            "it: pass --replace to do so"
        )


#: ``cogitave index``'s options of a crawled site, at their defaults (given for anything but a
#: site, they are refused).
CRAWL_DEFAULTS: dict[str, Any] = {
    "scope": None, "include": None, "exclude": None, "max_pages": 10_000,
    "max_failures": "10%", "render": "auto", "concurrency": 4, "rate": 10.0,
    "all_languages": False, "max_time": 3600.0,
}  # fmt: skip


def locate_source(
    text: str, crawl: dict[str, Any] | None = None, base_url: str | None = None
) -> Location:
    """The source a command-line argument names: a path, a site (crawled with ``crawl``, keys
    as :data:`CRAWL_DEFAULTS`) or a git repository; crawl options given for anything but a
    site are refused."""
    from cogitave.ingest.remote import locate
    from cogitave.ingest.web.options import CrawlOptions, Manners

    c = {**CRAWL_DEFAULTS, **(crawl or {})}
    given = sorted(k for k, v in c.items() if v != CRAWL_DEFAULTS[k])
    where = locate(text)
    if not isinstance(where, WebSource):
        if given:
            names = ", ".join("--" + k.replace("_", "-") for k in given)
            what = "a git repository" if isinstance(where, GitSource) else "a folder or file"
            raise InputError(f"{names}: options of a crawled site, and {text} is {what}")
        return where
    options = CrawlOptions(
        scopes=tuple(c["scope"] or ()),
        include=tuple(c["include"] or ()),
        exclude=tuple(c["exclude"] or ()),
        max_pages=c["max_pages"],
        max_failures=c["max_failures"],
        render=c["render"],
        languages=c["all_languages"],
        base_url=base_url,
        manners=Manners(concurrency=c["concurrency"], rate=c["rate"]),
        max_time=c["max_time"],
    )
    return WebSource(text, options)


def fetch_repository(spec: SourceSpec, source: GitSource) -> SourceSpec:
    """The spec of a repository's checkout: cloned (shallow) into the cache, or fetched
    again when it is there; its commit and tag recorded as its origin."""
    from cogitave.ingest.clone import checkout, web_folder
    from cogitave.ingest.identity import tag_version

    got = checkout(source)
    tag = tag_version(got.tag) if got.tag else None
    origin = Origin(str(source), got.commit, tag, got.root, web_folder(source, got))
    return replace(spec, source=got.path, origin=origin)


# -- a published site -------------------------------------------------------------------------
def _index_site(
    spec: SourceSpec,
    site: WebSource,
    progress: Progress | None,
    on_read: Callable[[Batch], None] | None,
) -> IndexResult:
    """Crawl the site (conditional requests from the state the last crawl kept), build its
    graph, and sync it with the crawl's state and report kept beside the source; a crawl
    past ``--max-failures``, or one that found no page, publishes nothing."""
    from cogitave.ingest.web.build import read_crawl
    from cogitave.ingest.web.crawl import crawl_site
    from cogitave.ingest.web.state import CrawlState
    from cogitave.schema import Schema

    previous = CrawlState.from_bytes(_kept_state(spec))
    crawl = crawl_site(site.url, site.options, previous, progress=progress)
    batch = read_crawl(crawl, Schema.load(spec.schema) if spec.schema else None)
    if on_read is not None:
        on_read(batch)
    if batch.problems and not spec.skip_bad:
        batch.raise_if_bad()
    if not batch.nodes:
        raise IngestError(f"no pages to index at {site.url} (see the crawl report)")
    state, report = crawl.state.to_bytes(), crawl.report.to_bytes()
    if spec.as_library:
        return _sync_site_library(spec, crawl, batch, state, report, progress)
    from cogitave.collection import Collection

    if Collection.exists(spec.collection):
        col = Collection.open(spec.collection)
    else:
        col = Collection.create(spec.collection, batch.schema)  # type: ignore[arg-type]
    res = col.sync(spec.source_id, batch.nodes, add_only=spec.add_only, progress=progress,
                   state=state, report=report)  # fmt: skip
    return IndexResult(spec.source_id, len(batch.nodes), tuple(batch.problems), len(col),
                       col.root, res, None, getattr(batch, "report", ""))  # fmt: skip


def _sync_site_library(
    spec: SourceSpec,
    crawl: Crawl,
    batch: Batch,
    state: bytes,
    report: bytes,
    progress: Progress | None,
) -> IndexResult:
    """A crawled site as a library version: named as given, else as the site names itself
    (``og:site_name``, its Sphinx inventory's project, its host), at the version given, else
    its inventory's, else ``latest``."""
    from cogitave.collection import Collection
    from cogitave.libraries.collection import LibraryCollection
    from cogitave.libraries.layout import is_library_collection

    path = spec.collection
    if Collection.exists(path):
        raise InputError(f"{path} holds one library already: index libraries into a new collection")
    inv = crawl.inventory
    named = crawl.site_name or (inv.project if inv else None)
    name = spec.library or named or site_name(crawl.start)
    version = spec.version or (inv.version if inv and inv.version else None) or "latest"
    # not ``or``: an empty collection of libraries has no length, and is falsy
    if is_library_collection(path):
        lib = LibraryCollection.open(path)
    else:
        lib = LibraryCollection.create(path)
    res = lib.sync_library(name, version, batch.nodes, schema=batch.schema,
                           source=spec.source_id, replace_source=spec.replace,
                           progress=progress, state=state, report=report)  # fmt: skip
    e = lib.manifest.find(f"{library_key(name)}@{version}")
    assert e is not None
    return IndexResult(e.ref, len(batch.nodes), tuple(batch.problems), e.nodes, e.root, res,
                       None, getattr(batch, "report", ""), e.ref)  # fmt: skip


def site_name(url: str) -> str:
    """A library name from a site's host: ``docs.python.org`` -> ``python``."""
    from urllib.parse import urlsplit

    host = (urlsplit(url).hostname or "site").lower()
    parts = [p for p in host.split(".") if p not in ("www", "docs", "doc", "developer", "dev")]
    return parts[0] if len(parts) > 1 else (parts[0] if parts else host)


def _kept_state(spec: SourceSpec) -> bytes | None:
    """The state the last crawl of this source kept in the collection (None: none)."""
    from cogitave.collection import Collection
    from cogitave.libraries.layout import is_library_collection

    path = spec.collection
    if is_library_collection(path):
        from cogitave.libraries.collection import LibraryCollection

        ref = None
        if spec.library and spec.version:
            ref = f"{library_key(spec.library)}@{spec.version}"
        return LibraryCollection.open(path).source_state(spec.source_id, ref)
    if Collection.exists(path):
        return Collection.open(path).source_object(spec.source_id, "state")
    return None


def _index_sharded(
    batch: Batch,
    collection: Path,
    shards: int | None,
    ray: str | None,
    actors: int,
    progress: Progress | None,
    encoder: str | None = None,
) -> list[str]:
    """Create or sync a sharded collection (on Ray with ``ray``): the shard root ids."""
    from cogitave.collection import Collection
    from cogitave.distributed.build import build_sharded
    from cogitave.distributed.layout import is_sharded
    from cogitave.expand.embed import DEFAULT_ENCODER, canonical_name

    if Collection.exists(collection) and not is_sharded(collection):
        raise InputError(f"{collection} is an ordinary collection; shard into a new directory")
    if ray is not None:
        from cogitave.distributed.actors import connect

        connect(ray)
    return build_sharded(
        collection,
        batch.nodes,
        batch.schema,
        shards=shards,
        encoder=canonical_name(encoder) if encoder else DEFAULT_ENCODER,
        use_ray=ray is not None,
        embed_actors=actors,
        progress=progress,
    )


def watch(
    spec: SourceSpec,
    on_result: Callable[[IndexResult | CogitaveError], None],
    *,
    stop: threading.Event | None = None,
    debounce: int = 300,
) -> None:
    """Sync the source after each burst of file changes (one publish per burst) until
    ``stop`` is set or the process is interrupted. Each burst's result (or error: a bad
    edit must not end the watch) goes to ``on_result``; a burst that meets another writer
    waits for it (:data:`WATCH_LOCK_TRIES` times 0.5 s) rather than being lost."""
    from cogitave.sync import watch as watch_changes

    if not isinstance(spec.source, Path):
        raise InputError(f"--watch follows a folder's files; index {spec.source} again to sync it")

    def burst(paths: set[Path]) -> None:
        for attempt in range(WATCH_LOCK_TRIES):
            try:
                on_result(index(spec))
            except ConflictError as e:
                if attempt + 1 < WATCH_LOCK_TRIES:
                    time.sleep(0.5)
                    continue
                on_result(e)
            except CogitaveError as e:
                on_result(e)
            return

    watch_changes(
        spec.path,
        burst,
        ignore=[spec.collection],
        stop=stop,
        quiet_ms=debounce,
        max_ms=10 * debounce,
    )


@dataclass(frozen=True)
class Deleted:
    """What a delete did: the uids deleted, those unknown, the root after it."""

    deleted: tuple[str, ...]
    unknown: int
    root: str
    live: int


def delete_nodes(path: Path, uids: Sequence[str]) -> Deleted:
    """Delete live nodes by uid and publish (nothing to delete: no new root)."""
    col = open_collection(path)
    wanted = list(dict.fromkeys(uids))
    live = [u for u in wanted if col.snapshot.id_of(u) is not None]
    if live:
        col.delete(live)
        col.publish()
    return Deleted(tuple(live), len(wanted) - len(live), col.root, len(col))


def delete_source(path: Path, name: str) -> Deleted:
    """Delete every node recorded for source ``name`` and forget the source."""
    col = open_collection(path)
    res = col.delete_source(name)
    return Deleted(tuple(res.deleted), 0, res.root or col.root, len(col))


def project_docs() -> Path:
    """The project's own docs folder (the demo's embedded default corpus)."""
    import cogitave

    here = Path(cogitave.__file__).resolve()
    for parent in here.parents:
        if (parent / "docs" / "index.md").is_file() and (parent / "pyproject.toml").is_file():
            return parent / "docs"
    raise InputError("the project's docs/ folder was not found; pass --docs PATH")


def docs_source(docs: Path) -> Path:
    """A docs folder, or the ``mkdocs.yml`` beside it (its nav gives the reading order)."""
    if docs.name == "docs" and (docs.parent / "mkdocs.yml").is_file():
        return docs.parent / "mkdocs.yml"
    return docs


def delete_library(path: Path, ref: str) -> list[str]:
    """Delete ``name@version`` (or every version of ``name``) from a collection of libraries;
    returns the versions deleted."""
    from cogitave.libraries.collection import LibraryCollection
    from cogitave.libraries.layout import is_library_collection

    if not is_library_collection(path):
        raise InputError(f"{path} holds no libraries (delete its nodes with --uid or --source)")
    lib = LibraryCollection.open(path)
    # a folder a killed first index left: the manifest does not name it, nothing reads it
    unpublished = [f"{rel} (never published)" for rel in lib.delete_unpublished(ref)]
    try:
        return [e.ref for e in lib.delete_library(ref)] + unpublished
    except NotFoundError:
        if unpublished:
            return unpublished
        raise


def remove_collection(path: Path) -> None:
    """Remove the plain collection at ``path`` (nothing when there is none; a folder that is
    not a collection is never removed)."""
    import shutil

    from cogitave.collection import Collection

    if Collection.exists(path):
        shutil.rmtree(path)
