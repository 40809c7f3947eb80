"""Content roots: immutable objects, manifests named by their hash, an atomic HEAD.

Layout of a collection directory::

    HEAD                  id of the current root (hex SHA-256), replaced atomically
    roots/<id>.json       manifest; <id> is the SHA-256 of the file's bytes
    objects/<sha256>      immutable blobs (segment files), named by the hash of their bytes
    snapshots/<id>/       a root's lexical index, materialised as hard links into objects/
    readers/<id>.<token>  one per open reader of root <id>, held with a shared flock
    LOCK                  held (flock) by the single writer
    tmp/                  writer scratch space; anything here is garbage after a crash

Publishing writes every new object first, then the manifest, then moves HEAD with
write-temp / fsync / rename / fsync-directory. A publish that dies at any point leaves HEAD on
the previous root, whole and readable; the orphans it may leave in ``objects/`` and ``tmp/``
are collected by the next publish. Readers pin a root id: nothing a root names is ever
rewritten, and retention only deletes roots that are neither HEAD, nor among the newest kept,
nor held by a reader (:meth:`RootStore.pin`).

A reader's hold is a file in ``readers/`` locked with a shared ``flock`` for as long as the
reader has the root open. Retention tries each such file with an exclusive, non-blocking lock:
refused, a reader (in any process on this machine) still has the root; granted, the reader is
gone (closed, or killed: the kernel drops a dead process's locks) and the file is removed. A
directory the reader cannot write (a read-only mount) gives no hold, and such a reader is back
to the newest-kept rule.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import json
import os
import shutil
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from cogitave.errors import ConflictError, CorruptionError, NotFoundError, StorageError
from cogitave.store.manifest import FORMAT_VERSION, Manifest

DEFAULT_RETENTION = 8
_PIN_SUFFIX = ".pin"
_HEX = frozenset("0123456789abcdef")


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        while chunk := f.read(1 << 20):
            h.update(chunk)
    return h.hexdigest()


def fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def atomic_write(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` so that a crash leaves either the old file or the new one."""
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex}.tmp")
    with tmp.open("wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
    fsync_dir(path.parent)


def is_root_id(s: object) -> bool:
    """A root id (or an object hash): 64 lowercase hex digits."""
    return isinstance(s, str) and len(s) == 64 and set(s) <= _HEX


def root_id(rid: object) -> str:
    """``rid`` if it is a root id, else ``NotFoundError``: checked before any path is built
    from it, so no id can name a file outside the collection."""
    if not is_root_id(rid):
        shown = repr(rid)[:80]
        raise NotFoundError(f"{shown} is not a root id (64 lowercase hex characters)")
    return rid  # type: ignore[return-value]


def object_hash(digest: object) -> str:
    """``digest`` if it is an object hash (64 lowercase hex digits), else the corruption of
    the manifest that named it; checked before a path is built from it."""
    if not is_root_id(digest):
        raise CorruptionError(f"{repr(digest)[:80]} is not an object hash (64 hex characters)")
    return digest  # type: ignore[return-value]


def file_name(name: object) -> str:
    """``name`` if it is a plain file name (no separator, not ``.``/``..``, no NUL), else
    corruption: a lexical file table names files inside a snapshot directory only."""
    if not isinstance(name, str) or name in ("", ".", "..") or any(c in name for c in "/\\\x00"):
        raise CorruptionError(f"{repr(name)[:80]} is not a file name of a lexical index")
    return name


class Pin:
    """A reader's hold on one root (see the module doc); :meth:`release` ends it, once."""

    def __init__(self, path: Path, fd: int) -> None:
        self.path, self._fd = path, fd

    def release(self) -> None:
        fd, self._fd = self._fd, -1
        if fd >= 0:
            with contextlib.suppress(OSError):
                self.path.unlink(missing_ok=True)
            os.close(fd)


@dataclass(frozen=True)
class RootInfo:
    """One retained root, as ``cogitave roots`` lists it."""

    id: str
    parent: str | None
    created: str
    nodes: int
    edges: int
    segments: int
    head: bool
    held: bool = False
    """An open reader holds it (kept past the retention count until the reader closes it)."""


class RootStore:
    """Objects, manifests and HEAD of one collection directory."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.objects = self.path / "objects"
        self.roots = self.path / "roots"
        self.snapshots = self.path / "snapshots"
        self.readers = self.path / "readers"
        self.tmp = self.path / "tmp"

    # -- layout -----------------------------------------------------------------------------
    LAYOUT = frozenset(
        {"HEAD", "LOCK", "objects", "roots", "snapshots", "readers", "tmp", "objects.verified"}
    )
    """The names a collection directory holds."""

    def exists(self) -> bool:
        return (self.path / "HEAD").is_file()

    def foreign_entries(self) -> list[str]:
        """Names in the directory that a collection does not hold (a folder of other files
        is never written into). Empty for a collection or an empty folder."""
        if self.exists() or not self.path.is_dir():
            return []
        return sorted(p.name for p in self.path.iterdir() if p.name not in self.LAYOUT)

    def init(self) -> None:
        for d in (self.objects, self.roots, self.snapshots, self.tmp):
            d.mkdir(parents=True, exist_ok=True)

    # -- objects ----------------------------------------------------------------------------
    def put_bytes(self, data: bytes) -> str:
        """Store ``data`` as an object; returns its hash (no-op when already present)."""
        digest = sha256_bytes(data)
        dst = self.objects / digest
        if not dst.exists():
            atomic_write(dst, data)
        return digest

    def put_file(self, src: Path, digest: str | None = None) -> str:
        """Move or link a finished file into objects/ under its hash."""
        digest = object_hash(digest or sha256_file(src))
        dst = self.objects / digest
        if not dst.exists():
            with src.open("rb") as f:
                os.fsync(f.fileno())
            tmp = self.objects / f".{digest}.{uuid.uuid4().hex}.tmp"
            try:
                os.link(src, tmp)
            except OSError:
                shutil.copyfile(src, tmp)
            os.replace(tmp, dst)
            fsync_dir(self.objects)
        return digest

    def object_path(self, digest: str) -> Path:
        p = self.objects / object_hash(digest)
        if not p.is_file():
            raise CorruptionError(f"missing object {digest} (file {p})", details={"file": str(p)})
        return p

    def get_bytes(self, digest: str, *, verify: bool = True) -> bytes:
        p = self.object_path(digest)
        data = p.read_bytes()
        if verify and sha256_bytes(data) != digest:
            raise CorruptionError(f"checksum mismatch in {p}", details={"file": str(p)})
        return data

    def check_objects(self, manifest: Manifest) -> None:
        """Check every object a manifest names exists and hashes to its name.

        An object is hashed once and then trusted while its size and mtime stay as recorded
        in ``objects.verified`` (as git trusts its index): opening a root costs a ``stat`` per
        object, and a file changed on disk after it was checked is hashed again."""
        cache_path = self.path / "objects.verified"
        try:
            cache: dict[str, list[int]] = json.loads(cache_path.read_bytes())
        except (OSError, ValueError):
            cache = {}
        fresh: dict[str, list[int]] = {}
        changed = False
        for digest in dict.fromkeys(referenced_objects(manifest)):
            p = self.object_path(digest)
            st = p.stat()
            sig = [st.st_size, st.st_mtime_ns]
            if cache.get(digest) != sig:
                if sha256_file(p) != digest:
                    raise CorruptionError(
                        f"checksum mismatch in {p} (object of this root)", details={"file": str(p)}
                    )
                changed = True
            fresh[digest] = sig
        if changed:
            with contextlib.suppress(OSError):
                atomic_write(cache_path, json.dumps({**cache, **fresh}).encode())

    # -- manifests and HEAD -----------------------------------------------------------------
    def write_root(self, manifest: Manifest) -> str:
        """Write a manifest (object hashes must already be stored); returns the root id. The
        format is this version's; ``created`` is now unless the manifest has one."""
        created = manifest.created or datetime.now(UTC).isoformat(timespec="milliseconds")
        data = manifest.with_(format=FORMAT_VERSION, created=created).to_json()
        rid = sha256_bytes(data)
        dst = self.roots / f"{rid}.json"
        if not dst.exists():
            atomic_write(dst, data)
        return rid

    def set_head(self, rid: str) -> None:
        atomic_write(self.path / "HEAD", (root_id(rid) + "\n").encode())

    def snapshot_dir(self, rid: str) -> Path:
        """Where root ``rid``'s lexical index is materialised."""
        return self.snapshots / root_id(rid)

    def head(self) -> str:
        p = self.path / "HEAD"
        try:
            rid = p.read_bytes().decode("ascii", errors="replace").strip()
        except FileNotFoundError as e:
            raise NotFoundError(f"no collection at {self.path} (HEAD missing)") from e
        if not is_root_id(rid):
            raise CorruptionError(f"HEAD of {self.path} is not a root id", details={"file": str(p)})
        return rid

    def read_root(self, rid: str) -> Manifest:
        """A manifest, checked against its id."""
        p = self.roots / f"{root_id(rid)}.json"
        try:
            data = p.read_bytes()
        except FileNotFoundError as e:
            raise NotFoundError(f"root {rid} is not retained in {self.path}") from e
        if sha256_bytes(data) != rid:
            raise CorruptionError(f"checksum mismatch in manifest {p}", details={"file": str(p)})
        return Manifest.from_json(data, source=str(p))

    def list_roots(self, *, clean: bool = False) -> list[RootInfo]:
        """Retained roots, newest first (``clean``: see :meth:`held`)."""
        head = self.head() if self.exists() else None
        holds = self.held(clean=clean)
        out = []
        for p in self.roots.glob("*.json"):
            rid = p.stem
            try:
                m = self.read_root(rid)
            except (CorruptionError, NotFoundError):
                continue
            out.append(
                RootInfo(
                    id=rid,
                    parent=m.parent,
                    created=m.created or "",
                    nodes=m.node_count or 0,
                    edges=m.edge_count or 0,
                    segments=len(m.segments),
                    head=rid == head,
                    held=rid in holds,
                )
            )
        # Newest first along HEAD's parent chain (timestamps can tie within a millisecond),
        # then any other retained root by creation time.
        by_id = {r.id: r for r in out}
        chain: list[RootInfo] = []
        rid = head
        while rid in by_id and by_id[rid] not in chain:
            chain.append(by_id[rid])
            rid = by_id[rid].parent
        rest = sorted((r for r in out if r not in chain), key=lambda r: r.created, reverse=True)
        return chain + rest

    # -- writer lock ------------------------------------------------------------------------
    @contextlib.contextmanager
    def writer_lock(self) -> Iterator[None]:
        """Exclusive writer lock; a second writer gets a ConflictError at once. A file-system
        failure while it is held (a full disk, a read-only mount) is a :class:`StorageError`:
        HEAD moves last, so it still names the previous root."""
        try:
            self.path.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.path / "LOCK", os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as e:
            raise self._storage_error(e) from e
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError as e:
                raise ConflictError(
                    f"another writer holds the lock on {self.path} (file LOCK); "
                    "one writer at a time"
                ) from e
            try:
                yield
            except OSError as e:
                raise self._storage_error(e) from e
        finally:
            os.close(fd)

    def _storage_error(self, e: OSError) -> StorageError:
        what = e.strerror or type(e).__name__
        where = f" ({e.filename})" if e.filename else ""
        return StorageError(
            f"cannot write the collection at {self.path}: {what}{where}; nothing was "
            "published, HEAD still names the previous root",
            details={"errno": errno.errorcode.get(e.errno or 0, str(e.errno))},
        )

    # -- readers' holds ----------------------------------------------------------------------
    def pin(self, rid: str) -> Pin | None:
        """Hold root ``rid`` against retention until the pin is released (None when this
        directory cannot be written: no hold, see the module doc)."""
        rid = root_id(rid)
        for _ in range(3):
            path = self.readers / f"{rid}.{uuid.uuid4().hex}{_PIN_SUFFIX}"
            try:
                self.readers.mkdir(exist_ok=True)
                fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_RDWR | os.O_CLOEXEC, 0o644)
            except OSError:
                return None
            try:
                fcntl.flock(fd, fcntl.LOCK_SH)
                # Retention may have taken the file for a dead reader's between our create
                # and our lock: the hold counts only if the name still leads to our file.
                if os.fstat(fd).st_ino == os.stat(path).st_ino:
                    return Pin(path, fd)
            except OSError:
                pass
            os.close(fd)
        return None

    def held(self, *, clean: bool = True) -> set[str]:
        """Root ids some live reader holds; the files of gone readers are removed (with
        ``clean``; a listing leaves them to the next publish)."""
        out: set[str] = set()
        try:
            entries = list(self.readers.iterdir())
        except OSError:
            return out
        for p in entries:
            rid = p.name.split(".", 1)[0]
            if not (p.name.endswith(_PIN_SUFFIX) and is_root_id(rid)) or rid in out:
                continue
            try:
                fd = os.open(p, os.O_RDONLY | os.O_CLOEXEC)
            except OSError:
                continue
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                out.add(rid)  # refused: a reader holds it
            else:
                if clean:
                    with contextlib.suppress(OSError):
                        p.unlink(missing_ok=True)
            finally:
                os.close(fd)
        return out

    # -- retention --------------------------------------------------------------------------
    def retain(self, keep: int = DEFAULT_RETENTION, pinned: tuple[str, ...] = ()) -> list[str]:
        """Delete roots past the newest ``keep`` (never HEAD, ``pinned``, or a root an open
        reader holds), then every object and snapshot no retained root names. Returns the
        deleted root ids."""
        roots = self.list_roots(clean=True)
        head = self.head()
        kept = {r.id for r in roots[:keep]} | {head, *pinned} | {r.id for r in roots if r.held}
        dropped = [r.id for r in roots if r.id not in kept]
        for rid in dropped:
            (self.roots / f"{root_id(rid)}.json").unlink(missing_ok=True)
            shutil.rmtree(self.snapshot_dir(rid), ignore_errors=True)
        live: set[str] = set()
        for rid in kept:
            with contextlib.suppress(NotFoundError, CorruptionError):
                live |= set(referenced_objects(self.read_root(rid)))
        for p in self.objects.iterdir():
            if p.name not in live:
                p.unlink(missing_ok=True)
        for p in self.snapshots.iterdir():
            # only whole snapshot dirs: a reader may be building ".<root>.<pid>.<tid>" now
            if is_root_id(p.name) and p.name not in kept:
                shutil.rmtree(p, ignore_errors=True)
        shutil.rmtree(self.tmp, ignore_errors=True)
        self.tmp.mkdir(exist_ok=True)
        cache_path = self.path / "objects.verified"
        with contextlib.suppress(OSError, ValueError):
            cache = json.loads(cache_path.read_bytes())
            atomic_write(
                cache_path, json.dumps({k: v for k, v in cache.items() if k in live}).encode()
            )
        return dropped


def referenced_objects(manifest: Manifest) -> Iterator[str]:
    """Every object hash a manifest names (see :meth:`Manifest.objects`)."""
    return manifest.objects()
