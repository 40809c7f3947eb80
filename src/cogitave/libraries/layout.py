"""A collection of libraries on disk: one ordinary collection per library version, and one
manifest naming their roots.

::

    DIR/LIBRARIES.json          the view: per library version its folder, pinned root and
                                provenance; the graph of every version together
    DIR/libs/<key>@<version>/   an ordinary collection (its own roots and HEAD)
    DIR/graph/                  an object store holding the graph of every library (one copy,
                                with the supersededBy edges between versions)
    DIR/LOCK                    the writer lock of the whole collection
    DIR/libs/.<kind>-<pid>-<id>/        a staging folder (an import being checked, a first
    DIR/libs/.<kind>-<pid>-<id>.lock    index being built) and its owner's lock

A library version is written into its own collection first; then ``LIBRARIES.json`` is
replaced in one rename, so readers always see one consistent set of roots (as a sharded
collection's ``SHARDS.json``). A search scoped to one library version reads that version's
collection alone, so it scores exactly what a collection of that library alone scores.

Recovery. A version's first index (or first import) is built in a staging folder
(:func:`staging_dir`) and renamed to ``libs/<key>@<version>`` just before ``LIBRARIES.json``
names it. A writer killed on the way leaves a staging folder, or at worst a version folder the
manifest does not name (an orphan); neither blocks anything: every writer collects the staging
folders no live process owns (:func:`collect_staging`; an owner holds its lock file with
``flock``, which the kernel drops when the owner dies), the next index of that version takes
an orphan's place, and ``cogitave delete --library NAME@VERSION`` removes one.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from packaging.version import InvalidVersion, Version

from cogitave.distributed.layout import ShardedManifest, ShardRef
from cogitave.errors import ConflictError, CorruptionError, NotFoundError, StorageError
from cogitave.libraries.names import library_key
from cogitave.store.roots import atomic_write, is_root_id

MANIFEST = "LIBRARIES.json"
FORMAT = "cogitave-libraries/1"
LIBS = "libs"
MAX_LIBRARIES = 256  # a view's ids pack the library number in 8 bits
UNVERSIONED = ("latest", "main", "master", "next", "dev", "current")


@dataclass(frozen=True)
class LibraryEntry:
    """One library version of a collection, and where its docs came from."""

    name: str
    """The library's name as first indexed ("FastAPI")."""
    version: str
    dir: str
    """Its collection folder, relative to the collection."""
    root: str
    source: str = ""
    """The path or URL it was indexed from."""
    commit: str | None = None
    """The git commit of the source, when known."""
    indexed_at: str = ""
    nodes: int = 0
    pages: int = 0

    @property
    def key(self) -> str:
        return library_key(self.name)

    @property
    def ref(self) -> str:
        """``key@version``: what selects this version and prefixes its uids."""
        return f"{self.key}@{self.version}"


@dataclass(frozen=True)
class LibrariesManifest:
    """One consistent view of a collection of libraries."""

    libraries: tuple[LibraryEntry, ...] = ()
    graph: dict[str, Any] = field(default_factory=dict)
    encoder: str | None = None
    """The encoder every library version is embedded with (None: BM25 only)."""

    def find(self, ref: str) -> LibraryEntry | None:
        return next((e for e in self.libraries if e.ref == ref), None)

    def versions(self, key: str) -> list[LibraryEntry]:
        """The held versions of library ``key``, in the order they were first indexed."""
        return [e for e in self.libraries if e.key == key]

    def with_entry(self, entry: LibraryEntry) -> LibrariesManifest:
        """This manifest with ``entry`` added, or replacing the entry of its ref."""
        libs = [e for e in self.libraries if e.ref != entry.ref]
        at = next((i for i, e in enumerate(self.libraries) if e.ref == entry.ref), len(libs))
        libs.insert(at, entry)
        return replace(self, libraries=tuple(libs))

    def without(self, ref: str) -> LibrariesManifest:
        return replace(self, libraries=tuple(e for e in self.libraries if e.ref != ref))

    def sharded(self, entries: Sequence[LibraryEntry]) -> ShardedManifest:
        """The view over ``entries`` as a sharded collection's manifest (each library version a
        shard), with the graph of every library."""
        shards = tuple(ShardRef(e.dir, e.root) for e in entries)
        return ShardedManifest(shards, dict(self.graph))

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "encoder": self.encoder,
            "libraries": [asdict(e) for e in self.libraries],
            "graph": self.graph,
        }


@dataclass(frozen=True)
class Pin:
    """The version a project uses of a library, and how it was chosen."""

    version: str
    match: str = "exact"
    """exact | nearest | range | latest: anything but exact is said on every hit."""
    wanted: str | None = None


def version_order(version: str) -> tuple[int, Any]:
    """A sort key: unversioned labels ("latest", "main") newest, then versions by value, then
    other labels by name."""
    if version.casefold() in UNVERSIONED:
        return (2, version)
    try:
        return (1, Version(version.lstrip("vV").replace(".x", ".0")))
    except InvalidVersion:
        return (0, version)


def is_library_collection(path: str | Path) -> bool:
    """True if ``path`` holds a collection of libraries."""
    return (Path(path) / MANIFEST).is_file()


def read_manifest(path: str | Path) -> LibrariesManifest:
    """The current view of the collection of libraries at ``path``."""
    p = Path(path) / MANIFEST
    if not p.is_file():
        raise NotFoundError(f"no collection of libraries at {path}")
    try:
        raw = json.loads(p.read_bytes())
        if raw.get("format") != FORMAT:
            raise ValueError(f"unknown format {raw.get('format')!r}")
        libs = tuple(LibraryEntry(**e) for e in raw["libraries"])
    except (ValueError, KeyError, TypeError) as e:
        raise CorruptionError(f"{p}: not a libraries manifest ({e})") from e
    for e in libs:
        if not is_root_id(e.root) or not _inside(e.dir):
            raise CorruptionError(f"{p}: bad entry for {e.name}@{e.version}")
    return LibrariesManifest(libs, dict(raw.get("graph") or {}), raw.get("encoder"))


def _inside(rel: str) -> bool:
    parts = Path(rel).parts
    return len(parts) == 2 and parts[0] == LIBS and parts[1] not in ("", ".", "..")


def write_manifest(path: str | Path, manifest: LibrariesManifest) -> None:
    """Publish a view: every root in it must already be written (temp file + rename)."""
    if len(manifest.libraries) > MAX_LIBRARIES:
        raise ConflictError(f"a collection holds at most {MAX_LIBRARIES} library versions")
    atomic_write(Path(path) / MANIFEST, json.dumps(manifest.to_dict(), indent=1).encode())


def library_dir(key: str, version: str) -> str:
    """The folder of a library version, relative to the collection (a safe file name)."""
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in version)[:100] or "_"
    return f"{LIBS}/{key}@{safe}"


def new_library_dir(manifest: LibrariesManifest, key: str, version: str) -> str:
    """The folder for a version the manifest does not hold yet: :func:`library_dir`, or, when
    another version's folder has that name (two versions that differ only in characters a
    folder name replaces), the same with ``~2``, ``~3``..."""
    base = library_dir(key, version)
    used = {e.dir for e in manifest.libraries}
    rel, n = base, 1
    while rel in used:
        n += 1
        rel = f"{base}~{n}"
    return rel


def orphans(path: str | Path, manifest: LibrariesManifest) -> list[str]:
    """Version folders under ``libs/`` the manifest does not name (left by a writer killed
    between building a version and publishing it), relative to the collection."""
    libs = Path(path) / LIBS
    named = {e.dir for e in manifest.libraries}
    try:
        entries = sorted(libs.iterdir())
    except OSError:
        return []
    return [
        f"{LIBS}/{p.name}"
        for p in entries
        if not p.name.startswith(".") and p.is_dir() and f"{LIBS}/{p.name}" not in named
    ]


def staging_leftovers(path: str | Path) -> list[str]:
    """Staging folders and files under ``libs/`` (and temporary manifests beside
    ``LIBRARIES.json``) that no live process owns, relative to the collection."""
    return _staging(Path(path), collect=False)


def collect_staging(path: str | Path) -> list[str]:
    """Remove what :func:`staging_leftovers` lists (call it holding the writer lock); returns
    what was removed."""
    return _staging(Path(path), collect=True)


def _staging(path: Path, *, collect: bool) -> list[str]:
    out: list[str] = []
    libs = path / LIBS
    with contextlib.suppress(OSError):
        for p in sorted(path.iterdir()):
            if p.name.startswith(f".{MANIFEST}.") and p.name.endswith(".tmp"):
                out.append(p.name)
                if collect:
                    p.unlink(missing_ok=True)
    try:
        entries = sorted(libs.iterdir())
    except OSError:
        return out
    names = {p.name for p in entries}
    for p in entries:
        if not p.name.startswith(_STAGING):
            continue
        if p.name.endswith(_LOCK_SUFFIX):
            if p.name[: -len(_LOCK_SUFFIX)] in names:
                continue  # judged with its folder
            fd = _try_owner_lock(p)
            if fd is None:
                continue  # an owner about to make its folder
            try:
                out.append(f"{LIBS}/{p.name}")
                if collect:
                    p.unlink(missing_ok=True)
            finally:
                os.close(fd)
            continue
        lock = libs / (p.name + _LOCK_SUFFIX)
        fd = _try_owner_lock(lock) if lock.exists() else -1
        if fd is None:
            continue  # its owner is alive
        try:
            out.append(f"{LIBS}/{p.name}")
            if collect:
                if p.is_dir() and not p.is_symlink():
                    shutil.rmtree(p, ignore_errors=True)
                else:
                    p.unlink(missing_ok=True)
                lock.unlink(missing_ok=True)
        finally:
            if fd >= 0:
                os.close(fd)
    return out


_LOCK_SUFFIX = ".lock"
STAGING_KINDS = ("import", "new", "download")
"""What a staging folder holds: a pack being checked, a version's first index, a pack being
downloaded from a registry."""
_STAGING = tuple(f".{k}-" for k in STAGING_KINDS)


def _try_owner_lock(lock: Path) -> int | None:
    """An fd holding ``lock`` exclusively when no live owner holds it; None when one does."""
    try:
        fd = os.open(lock, os.O_RDWR | os.O_CLOEXEC)
    except FileNotFoundError:
        return -1
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        return None
    return fd


@contextlib.contextmanager
def staging_dir(path: str | Path, kind: str) -> Iterator[Path]:
    """A new staging folder ``libs/.<kind>-<pid>-<id>/`` owned by this process while the block
    runs (its lock file held with ``flock`` first, made before the folder and removed after
    it), then removed unless the block renamed it away."""
    if kind not in STAGING_KINDS:
        raise ValueError(f"unknown staging kind {kind!r}")
    libs = Path(path) / LIBS
    libs.mkdir(parents=True, exist_ok=True)
    for _ in range(8):
        name = f".{kind}-{os.getpid()}-{uuid.uuid4().hex}"
        lock = libs / (name + _LOCK_SUFFIX)
        fd = os.open(lock, os.O_CREAT | os.O_EXCL | os.O_RDWR | os.O_CLOEXEC, 0o644)
        fcntl.flock(fd, fcntl.LOCK_EX)
        try:
            # a collector may have judged the file ownerless between our create and our lock
            if os.fstat(fd).st_ino == os.stat(lock).st_ino:
                break
        except FileNotFoundError:
            pass
        os.close(fd)
    else:
        raise StorageError(f"cannot make a staging folder in {libs}")
    folder = libs / name
    try:
        folder.mkdir()
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)
        lock.unlink(missing_ok=True)
        os.close(fd)


@contextlib.contextmanager
def writer_lock(path: str | Path) -> Iterator[None]:
    """The collection's exclusive writer lock; a second writer gets a ConflictError at once."""
    Path(path).mkdir(parents=True, exist_ok=True)
    fd = os.open(Path(path) / "LOCK", os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError as e:
            raise ConflictError(
                f"another writer holds the lock on {path} (file LOCK); one writer at a time"
            ) from e
        yield
    finally:
        os.close(fd)
