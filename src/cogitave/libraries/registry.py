"""A registry of packs: a team publishes a library version's index once, every machine imports
it without embedding anything again.

A registry is a static folder, or the http(s) URL such a folder is served at, holding
``index.json`` and the packs it names::

    {"packs": [{"library": "FastAPI", "version": "0.115.0",
                "url": "fastapi-0.115.0.cogpack",        # relative to index.json, or http(s)
                "sha256": "<64 hex>", "encoder": "<name or null>", "graph": "<graph or null>"}]}

Reading one (:func:`open_registry`): a folder path, a ``file://`` URL, or an http(s) URL
fetched through the crawl's :class:`~cogitave.ingest.web.fetch.Fetcher` under a
:class:`~cogitave.ingest.web.policy.FetchPolicy` (``start`` kind: the registry the user named
may be an intranet host, but a public one may not redirect into a private network; a
deadline; ``index.json`` at most :data:`MAX_INDEX_BYTES`). A registry is hostile input: the
file must be a JSON object with a ``packs`` list of at most :data:`MAX_ENTRIES`, or the whole
registry is refused (one :class:`CorruptionError` naming it and what is wrong). A single bad
entry (a field of the wrong type or too long, a name or version the library layout would
refuse, a hash that is not 64 hex digits, a URL that is absolute but not http(s), or relative
but leaving the registry: ``..``, a leading ``/``, a query) is skipped and said in
:attr:`Registry.skipped`: one publisher's mistake does not hide the rest.

Importing (:func:`import_from_registry`, :func:`fetch_from_registries`): the entry of the
library version made with the collection's encoder (a pack of another encoder is never a
match: its vectors are not comparable), streamed into a temporary file inside the collection
folder (a staging folder of ``libs/``: same file system as the import, collected after a
crash), at most :data:`~cogitave.libraries.packs.MAX_PACK_BYTES`, its SHA-256 computed as it
arrives and compared with the index before the import is attempted (and its ``pack.json``
naming the library version and encoder the index gives); then the verified import of any
pack (:meth:`LibraryCollection.import_pack`), with ``registry:<location>`` as the version's
source. On any failure the temporary file is removed, and a collection made for the import
is removed again.

Publishing (:func:`publish`): the pack is written into the registry folder as
``<key>-<version>.cogpack`` (safe characters only; a short hash is added when another entry
already uses the name) and ``index.json`` is replaced in one rename, the entry of the same
library version and encoder replaced, every other entry kept, all under the registry's lock
file (``.index.lock``), so publishers never lose each other's entries.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import hashlib
import json
import logging
import os
import re
import shutil
import tarfile
import threading
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urljoin, urlsplit
from urllib.request import url2pathname

from cogitave.errors import (
    CogitaveError,
    CorruptionError,
    IngestError,
    InputError,
    NotFoundError,
)
from cogitave.libraries import layout
from cogitave.libraries.layout import LibraryEntry, version_order
from cogitave.libraries.names import MAX_NAME, check_version, library_key
from cogitave.libraries.packs import MAX_HEAD_BYTES, MAX_PACK_BYTES, SUFFIX
from cogitave.printable import printable
from cogitave.store.roots import atomic_write

log = logging.getLogger(__name__)

INDEX = "index.json"
LOCK = ".index.lock"
MAX_INDEX_BYTES = 8 * 2**20
MAX_ENTRIES = 100_000
MAX_FIELD = MAX_NAME
"""The longest library name, version, encoder or graph name an entry may give."""
MAX_URL = 2048
INDEX_SECONDS = 60.0
"""How long reading an ``index.json`` over http may take in all."""
PACK_SECONDS = 3600.0
"""How long downloading one pack may take in all."""
_CHUNK = 1 << 20
_HEX = re.compile(r"[0-9a-f]{64}")
_SEGMENT = re.compile(r"[A-Za-z0-9._~@+-]+")
_FIELDS = ("library", "version", "url", "sha256", "encoder", "graph")


@dataclass(frozen=True)
class RegistryEntry:
    """One pack a registry offers."""

    library: str
    version: str
    url: str
    """As the index gives it: relative to the index, or an absolute http(s) URL."""
    sha256: str
    encoder: str | None
    graph: str | None = None

    @property
    def ref(self) -> str:
        return f"{library_key(self.library)}@{self.version}"

    def to_dict(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in _FIELDS}


@dataclass(frozen=True)
class Registry:
    """A registry's index, read and checked: where it is and the packs it offers."""

    location: str
    """As the user named it (a folder, a ``file://`` or http(s) URL)."""
    index_url: str
    """The ``index.json`` read: an http(s) URL, or a path for a folder registry."""
    entries: tuple[RegistryEntry, ...]
    skipped: tuple[str, ...] = ()
    """Why each bad entry was skipped."""

    @property
    def is_remote(self) -> bool:
        return urlsplit(self.index_url).scheme in ("http", "https")

    @property
    def source(self) -> str:
        """What an imported version records as its source."""
        return f"registry:{self.location}"

    def versions(self, library: str) -> list[RegistryEntry]:
        """The entries of ``library`` (any encoder), oldest version first."""
        key = library_key(library)
        held = [e for e in self.entries if library_key(e.library) == key]
        return sorted(held, key=lambda e: version_order(e.version))

    def find(
        self, library: str, version: str, encoder: str | Any | None, graph: str | None = None
    ) -> RegistryEntry | None:
        """The entry of ``library`` at ``version`` made with ``encoder`` (``Any``: any, the
        default encoder's first) and, when both are known, its ``graph``; None when there
        is none. A pack of another encoder is never a match (:meth:`missing` says so)."""
        same = [e for e in self.versions(library) if e.version == version]
        if encoder is not Any:
            same = [e for e in same if e.encoder == encoder]
            same = [e for e in same if graph is None or e.graph is None or e.graph == graph]
            return same[-1] if same else None
        from cogitave.expand.embed import DEFAULT_ENCODER

        same.sort(key=lambda e: e.encoder != DEFAULT_ENCODER)
        return same[0] if same else None

    def missing(self, library: str, version: str, encoder: str | Any | None) -> str:
        """Why the registry has no pack of ``library@version`` for ``encoder``: what it
        holds of the library instead, with each version's encoder."""
        held = self.versions(library)
        want = "" if encoder is Any else f" made with encoder {encoder!r}"
        head = f"registry {self.location} holds no pack of {library}@{version}{want}"
        if not held:
            return f"{head}, and no version of {library}"
        listed = ", ".join(f"{e.version} ({e.encoder or 'no encoder'})" for e in held[-20:])
        more = f" and {len(held) - 20} older" if len(held) > 20 else ""
        other = [e for e in held if e.version == version]
        if other:
            head += " (only of another encoder: vectors of different encoders are not comparable)"
        return f"{head}; it holds {library} {listed}{more}"


@dataclass(frozen=True)
class ImportResult:
    """A library version imported from a registry."""

    registry: str
    entry: RegistryEntry
    library: LibraryEntry
    bytes: int


# -- reading an index --------------------------------------------------------------------------
def open_registry(location: str | Path) -> Registry:
    """Read and check the index of the registry at ``location`` (see the module doc)."""
    text = str(location).strip()
    if not text:
        raise InputError("a registry location is empty")
    scheme = urlsplit(text).scheme.lower()
    if scheme in ("http", "https"):
        index_url = text if urlsplit(text).path.endswith(".json") else _slash(text) + INDEX
        data = _download_bytes(index_url, text)
    elif scheme == "file" or not scheme or len(scheme) == 1:  # a drive letter is a path
        path = Path(url2pathname(urlsplit(text).path)) if scheme == "file" else Path(text)
        index_path = path if path.suffix == ".json" and not path.is_dir() else path / INDEX
        if not index_path.is_file():
            raise NotFoundError(f"registry {text}: no {INDEX} at {index_path}")
        index_url = str(index_path.resolve())
        data = _read_bounded(index_path, text)
        text = index_url if path.suffix == ".json" else str(path.resolve())  # not the cwd's
    else:
        raise InputError(
            f"registry {text}: not a folder, a file:// or an http(s) URL (scheme {scheme!r})"
        )
    entries, skipped = parse_index(data, text)
    for why in skipped[:20]:
        log.warning("registry %s: %s", text, why)
    return Registry(text, index_url, entries, skipped)


def _slash(url: str) -> str:
    return url if url.endswith("/") else url + "/"


def _read_bounded(path: Path, where: str) -> bytes:
    with path.open("rb") as f:
        data = f.read(MAX_INDEX_BYTES + 1)
    if len(data) > MAX_INDEX_BYTES:
        raise CorruptionError(f"registry {where}: {INDEX} is larger than {MAX_INDEX_BYTES} bytes")
    return data


def parse_index(data: bytes, where: str) -> tuple[tuple[RegistryEntry, ...], tuple[str, ...]]:
    """The entries of an ``index.json`` and why each bad one was skipped; a file that is not
    an index at all is one :class:`CorruptionError`."""
    if len(data) > MAX_INDEX_BYTES:
        raise CorruptionError(f"registry {where}: {INDEX} is larger than {MAX_INDEX_BYTES} bytes")
    try:
        raw = json.loads(data)
    except (ValueError, RecursionError) as e:
        raise CorruptionError(f"registry {where}: {INDEX} is not JSON ({e})") from e
    if not isinstance(raw, dict) or not isinstance(raw.get("packs"), list):
        raise CorruptionError(f'registry {where}: {INDEX} is not an object with a "packs" list')
    packs = raw["packs"]
    if len(packs) > MAX_ENTRIES:
        raise CorruptionError(
            f"registry {where}: {INDEX} names {len(packs):,} packs (at most {MAX_ENTRIES:,})"
        )
    entries: list[RegistryEntry] = []
    skipped: list[str] = []
    for i, item in enumerate(packs):
        try:
            entries.append(parse_entry(item))
        except ValueError as e:
            skipped.append(f"entry {i} skipped: {e}")
    return tuple(entries), tuple(skipped)


def parse_entry(item: object) -> RegistryEntry:
    """One checked entry, or ``ValueError`` saying what is wrong with it."""
    if not isinstance(item, dict):
        raise ValueError("not an object")
    unknown = sorted(set(item) - set(_FIELDS))
    if unknown:
        raise ValueError(f"unknown field {str(unknown[0])[:40]!r}")
    for k in ("library", "version", "url", "sha256"):
        if not isinstance(item.get(k), str):
            raise ValueError(f"{k} is not a string")
    for k in ("encoder", "graph"):
        if item.get(k) is not None and not isinstance(item.get(k), str):
            raise ValueError(f"{k} is neither a string nor null")
    for k in ("library", "version", "encoder", "graph"):
        v = item.get(k)
        if isinstance(v, str) and (len(v) > MAX_FIELD or any(ord(c) < 32 for c in v)):
            raise ValueError(f"{k} is longer than {MAX_FIELD} characters or holds control ones")
    library, version = item["library"], item["version"]
    try:
        library_key(library)
        _check_version(version)
    except CogitaveError as e:
        raise ValueError(str(e)) from e
    if not _HEX.fullmatch(item["sha256"]):
        raise ValueError("sha256 is not 64 lower-case hex digits")
    url = item["url"]
    why = url_problem(url)
    if why:
        raise ValueError(f"url {url[:80]!r}: {why}")
    return RegistryEntry(library, version, url, item["sha256"], item.get("encoder"),
                         item.get("graph"))  # fmt: skip


def _check_version(version: str) -> None:
    if check_version(version) != version:
        raise InputError(f"not a version: {version!r} (spaces around it)")


def url_problem(url: str) -> str | None:
    """Why ``url`` may not name a pack (None: it may): an absolute http(s) URL, or a relative
    path of plain segments that stays inside the registry."""
    if not url or len(url) > MAX_URL:
        return f"empty or longer than {MAX_URL} characters"
    parts = urlsplit(url)
    if parts.scheme or parts.netloc:
        if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
            return "an absolute URL that is not http(s)"
        return None
    if parts.query or parts.fragment or url.startswith("/"):
        return "a relative URL with a query, a fragment or a leading '/'"
    segments = unquote(url).split("/")
    for seg in segments:
        if seg in ("", ".", "..") or not _SEGMENT.fullmatch(seg):
            return "leaves the registry, or a path segment of other characters"
    return None


# -- importing -----------------------------------------------------------------------------------
def import_from_registry(
    collection: Path,
    registry: str | Registry,
    library: str,
    version: str,
    *,
    replace: bool = False,
    progress: Any = None,
) -> ImportResult:
    """Import ``library@version`` from ``registry`` into the collection of libraries at
    ``collection`` (created if absent); a registry without that version for the collection's
    encoder is a :class:`NotFoundError` listing what it holds."""
    reg = registry if isinstance(registry, Registry) else open_registry(registry)
    encoder, graph = _wanted(collection)
    entry = reg.find(library, version, encoder, graph)
    if entry is None:
        raise NotFoundError(reg.missing(library, version, encoder))
    return _import(collection, reg, entry, replace=replace, progress=progress)


def fetch_from_registries(
    collection: Path,
    registries: Sequence[str],
    library: str,
    version: str,
    *,
    replace: bool = False,
    progress: Any = None,
) -> ImportResult | None:
    """Import ``library@version`` from the first of ``registries`` (in order) that holds it
    for the collection's encoder; None when none does (a registry that cannot be read is
    skipped with a warning). A registry that holds it but whose pack fails verification is
    an error, not a reason to try the next."""
    encoder, graph = _wanted(collection)
    for location in registries:
        try:
            reg = open_registry(location)
        except CogitaveError as e:
            log.warning("registry %s skipped: %s", location, e)
            continue
        entry = reg.find(library, version, encoder, graph)
        if entry is not None:
            return _import(collection, reg, entry, replace=replace, progress=progress)
        if reg.versions(library):
            log.info("%s", reg.missing(library, version, encoder))
    return None


@contextlib.contextmanager
def _target(path: Path) -> Iterator[Any]:
    """The collection of libraries at ``path``, created if absent and removed again when
    what follows fails before it holds anything."""
    from cogitave.collection import Collection
    from cogitave.libraries.collection import LibraryCollection

    if Collection.exists(path):
        raise InputError(f"{path} holds one library already: import packs into a new collection")
    made_dir = not path.exists()
    made = not layout.is_library_collection(path)
    lib = LibraryCollection.open(path) if not made else LibraryCollection.create(path)
    try:
        yield lib
    except BaseException:
        if made and not layout.read_manifest(path).libraries:
            for name in (layout.MANIFEST, "LOCK"):
                (path / name).unlink(missing_ok=True)
            for folder in (path / layout.LIBS, path / "graph", *((path,) if made_dir else ())):
                with contextlib.suppress(OSError):
                    folder.rmdir()  # only if empty
        raise


def _wanted(path: Path) -> tuple[str | Any | None, str | None]:
    """The encoder (``Any``: the collection holds nothing yet) and graph a pack must have."""
    from cogitave.collection import Collection
    from cogitave.expand.models import recorded_graph
    from cogitave.store.roots import RootStore

    if Collection.exists(path):
        raise InputError(f"{path} holds one library already: import packs into a new collection")
    if not layout.is_library_collection(path):
        return Any, None
    manifest = layout.read_manifest(path)
    if not manifest.libraries:
        return Any, None
    first = manifest.libraries[0]
    recorded = RootStore(path / first.dir).read_root(first.root).encoder
    return manifest.encoder, recorded_graph(recorded)


def _import(
    path: Path, reg: Registry, entry: RegistryEntry, *, replace: bool, progress: Any
) -> ImportResult:
    with _target(path) as lib, layout.staging_dir(lib.path, "download") as folder:
        tmp = folder / f"pack{SUFFIX}"
        size = download(reg, entry, tmp)
        _check_holds(tmp, reg, entry)
        imported = lib.import_pack(tmp, replace=replace, progress=progress, source=reg.source)
    return ImportResult(reg.location, entry, imported, size)


def _check_holds(pack: Path, reg: Registry, entry: RegistryEntry) -> None:
    """Refuse a pack whose ``pack.json`` (its first member) names another library version
    or encoder than the index says: the registry's index must not lie about what it hands
    out (the import itself then checks the pack whole)."""
    head: Any = None
    try:
        with tarfile.open(pack, "r|*") as tar:
            first = tar.next()
            if first is not None and first.name == "pack.json" and first.isreg():
                f = tar.extractfile(first)
                if f is not None and first.size <= MAX_HEAD_BYTES:
                    head = json.loads(f.read(MAX_HEAD_BYTES))
    except (tarfile.TarError, OSError, EOFError, ValueError, RecursionError):
        head = None
    if not isinstance(head, dict):
        raise CorruptionError(
            f"registry {reg.location}: the pack of {entry.ref} is not a pack (no pack.json first)"
        )
    held = (head.get("library"), head.get("encoder"))
    if held != (entry.ref, entry.encoder):
        raise CorruptionError(
            f"registry {reg.location}: its index names {entry.ref} ({entry.encoder}), the pack "
            f"holds {printable(str(held[0]), 120)} ({printable(str(held[1]), 120)}): refused "
            "before import"
        )


class _Digest:
    """A file that hashes what is written to it (and starts again when emptied)."""

    def __init__(self, f: Any, limit: int) -> None:
        self.f = f
        self.limit = limit
        self.size = 0
        self.h = hashlib.sha256()

    def write(self, data: bytes, /) -> int:
        self.size += len(data)
        if self.size > self.limit:
            raise _TooLarge
        self.h.update(data)
        return int(self.f.write(data))

    def seek(self, offset: int, whence: int = 0, /) -> int:
        return int(self.f.seek(offset, whence))

    def truncate(self, size: int | None = None, /) -> int:
        n = int(self.f.truncate(size))
        if n == 0:
            self.size, self.h = 0, hashlib.sha256()
        return n


class _TooLarge(Exception):
    pass


def pack_location(reg: Registry, entry: RegistryEntry) -> str:
    """Where ``entry``'s pack is: an http(s) URL, or a path inside a folder registry."""
    if urlsplit(entry.url).scheme:
        return entry.url
    if reg.is_remote:
        return urljoin(reg.index_url, entry.url)
    base = Path(reg.index_url).parent.resolve()
    path = (base / unquote(entry.url)).resolve()
    if not path.is_relative_to(base):
        raise CorruptionError(
            f"registry {reg.location}: the pack of {entry.ref} leads outside the registry"
        )
    return str(path)


def download(reg: Registry, entry: RegistryEntry, out: Path, limit: int = MAX_PACK_BYTES) -> int:
    """Copy ``entry``'s pack to ``out``, hashing it as it arrives: its size, once it hashes
    to the index's ``sha256`` (else :class:`CorruptionError` and no ``out``)."""
    where = pack_location(reg, entry)
    try:
        with out.open("wb") as f:
            sink = _Digest(f, limit)
            if urlsplit(where).scheme in ("http", "https"):
                _fetch(where, reg.location if reg.is_remote else where, sink, limit)
            else:
                _copy(Path(where), sink, reg, entry)
            f.flush()
            os.fsync(f.fileno())
        if sink.h.hexdigest() != entry.sha256:
            raise CorruptionError(
                f"registry {reg.location}: the pack of {entry.ref} ({entry.url}) does not hash "
                f"to the sha256 its index gives (got {sink.h.hexdigest()[:12]}, expected "
                f"{entry.sha256[:12]}): refused before import"
            )
        return sink.size
    except _TooLarge:
        out.unlink(missing_ok=True)
        raise CorruptionError(
            f"registry {reg.location}: the pack of {entry.ref} is larger than {limit:,} bytes"
        ) from None
    except BaseException:
        out.unlink(missing_ok=True)
        raise


def _copy(path: Path, sink: _Digest, reg: Registry, entry: RegistryEntry) -> None:
    if not path.is_file():
        raise NotFoundError(f"registry {reg.location}: no pack of {entry.ref} at {path}")
    with path.open("rb") as f:
        while chunk := f.read(_CHUNK):
            sink.write(chunk)


# -- the network ---------------------------------------------------------------------------------
def _download_bytes(url: str, start: str) -> bytes:
    buf = _Memory()
    try:
        _fetch(url, start, buf, MAX_INDEX_BYTES, seconds=INDEX_SECONDS)
    except _TooLarge:
        raise CorruptionError(
            f"registry {start}: {INDEX} is larger than {MAX_INDEX_BYTES} bytes"
        ) from None
    return buf.getvalue()


class _Memory:
    def __init__(self) -> None:
        self.parts: list[bytes] = []

    def write(self, data: bytes, /) -> int:
        self.parts.append(data)
        return len(data)

    def seek(self, offset: int, whence: int = 0, /) -> int:
        return 0

    def truncate(self, size: int | None = None, /) -> int:
        self.parts.clear()
        return 0

    def getvalue(self) -> bytes:
        return b"".join(self.parts)


def _fetch(url: str, start: str, sink: Any, limit: int, seconds: float = PACK_SECONDS) -> None:
    """GET ``url`` into ``sink`` through the crawl's fetcher: the policy's ``start`` rules
    from ``start`` (the registry the user named: a public one never leads into a private
    network), ``seconds`` in all, at most ``limit`` bytes decoded."""
    from cogitave.ingest.web.fetch import Failure, Fetcher
    from cogitave.ingest.web.options import Manners
    from cogitave.ingest.web.policy import FetchPolicy

    manners = Manners(rate=0, deadline=seconds, retries=2, max_bytes=limit)
    policy = FetchPolicy(start, None, max_time=seconds, max_requests=20)

    async def go() -> Any:
        async with Fetcher(manners, policy) as f:
            return await f.get(url, kind="start", max_bytes=limit, sink=sink)

    res = _run(go)
    if isinstance(res, Failure):
        if res.skip == "size":
            raise _TooLarge
        raise IngestError(f"registry {start}: {url}: {res.reason}{_detail(res)}")
    if res.status == 404:
        raise NotFoundError(f"registry {start}: no {url} (HTTP 404)")
    if res.status != 200:
        raise IngestError(f"registry {start}: {url}: HTTP {res.status}")


def _detail(res: Any) -> str:
    return f" ({res.detail})" if res.detail else ""


def _run(job: Any) -> Any:
    """``asyncio.run(job())``, in a thread of its own when this one runs an event loop."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(job())
    box: dict[str, Any] = {}

    def work() -> None:
        try:
            box["res"] = asyncio.run(job())
        except BaseException as e:  # handed to the caller's thread
            box["err"] = e

    t = threading.Thread(target=work)
    t.start()
    t.join()
    if "err" in box:
        raise box["err"]
    return box["res"]


# -- publishing ----------------------------------------------------------------------------------
@contextlib.contextmanager
def registry_lock(folder: Path) -> Iterator[None]:
    """The registry folder's publisher lock (``.index.lock``); a second publisher waits."""
    folder.mkdir(parents=True, exist_ok=True)
    fd = os.open(folder / LOCK, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def pack_name(library: str, version: str, encoder: str | None, taken: set[str]) -> str:
    """The pack's file name in the registry: ``<key>-<version>.cogpack`` in safe characters,
    with a short hash when another entry already uses that name."""
    safe = "".join(c if c.isalnum() or c in "-_.+" else "_" for c in version)[:100]
    name = f"{library_key(library)}-{safe.strip('.') or '_'}{SUFFIX}"
    if name in taken:
        tag = hashlib.sha256(f"{library_key(library)}@{version}|{encoder}".encode()).hexdigest()
        name = f"{name.removesuffix(SUFFIX)}-{tag[:10]}{SUFFIX}"
    return name


def publish(collection: Path, ref: str, folder: Path) -> RegistryEntry:
    """Write library version ``ref`` of the collection of libraries at ``collection`` into
    the registry ``folder`` and name it in its ``index.json`` (see the module doc)."""
    from cogitave.expand.models import recorded_graph
    from cogitave.libraries.collection import LibraryCollection
    from cogitave.store.roots import RootStore

    if not layout.is_library_collection(collection):
        raise InputError(f"{collection} holds no libraries to pack (index with --library first)")
    if folder.exists() and not folder.is_dir():
        raise InputError(f"--registry {folder} is a file, not a registry folder")
    lib = LibraryCollection.open(collection)
    (held,) = lib.select([ref])
    with registry_lock(folder):
        index_path = folder / INDEX
        packs: list[Any] = []
        if index_path.exists():
            raw = _read_bounded(index_path, str(folder))
            parse_index(raw, str(folder))  # refuses a file that is not an index
            packs = list(json.loads(raw)["packs"])
        tmp = folder / f".{uuid.uuid4().hex}{SUFFIX}.tmp"
        try:
            info = lib.export_pack(held.ref, tmp)
            mine = (held.key, held.version, info.encoder)
            keep, old_urls = [], set()
            for p in packs:
                if isinstance(p, dict) and _same(p, mine):
                    old_urls.add(str(p.get("url")))
                else:
                    keep.append(p)
            taken = {str(p.get("url")) for p in keep if isinstance(p, dict)}
            name = pack_name(held.name, held.version, info.encoder, taken)
            graph = recorded_graph(RootStore(collection / held.dir).read_root(held.root).encoder)
            entry = RegistryEntry(held.name, held.version, name, _sha256(tmp), info.encoder,
                                  graph)  # fmt: skip
            data = json.dumps({"packs": [*keep, entry.to_dict()]}, indent=1).encode()
            if len(keep) >= MAX_ENTRIES or len(data) > MAX_INDEX_BYTES:
                raise InputError(
                    f"registry {folder}: its index would pass {MAX_ENTRIES:,} packs or "
                    f"{MAX_INDEX_BYTES:,} bytes, more than a reader accepts: start another one"
                )
            os.replace(tmp, folder / name)
        finally:
            tmp.unlink(missing_ok=True)
        atomic_write(index_path, data)
        for url in old_urls - {name} - taken:
            if url_problem(url) is None and not urlsplit(url).scheme:
                (folder / url).unlink(missing_ok=True)
    return entry


def _same(p: dict[str, Any], mine: tuple[str, str, str | None]) -> bool:
    try:
        return (library_key(str(p.get("library"))), p.get("version"), p.get("encoder")) == mine
    except CogitaveError:
        return False


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        while chunk := f.read(_CHUNK):
            h.update(chunk)
    return h.hexdigest()


def copy_pack(folder: Path, entry: RegistryEntry, out: Path) -> None:
    """Copy a published pack to ``out`` as well (``pack --registry DIR -o FILE``)."""
    out.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(folder / entry.url, out)
