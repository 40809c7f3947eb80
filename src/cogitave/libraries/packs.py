"""Index packs: one library version as one portable file, imported without re-embedding.

A pack is a tar file (gzip, fast level) of:

- ``pack.json``: the format, the library (name, version, source, commit, indexed at), the
  encoder's name and width, the root id, and every object with its SHA-256 and size;
- ``root.json``: the library version's root manifest (its id is its SHA-256);
- ``objects/<sha256>``: every object the root names (node records, lexical index files, term
  arrays, vectors and their HNSW graphs, the graph, statistics, the text -> vector cache).

Importing reads the tar once, front to back, and nothing becomes visible until all of it is
checked (a damaged or hostile pack is one :class:`~cogitave.errors.InputError` naming what is
wrong, and the collection is as it was):

- ``pack.json`` comes first and is held to a strict schema: known keys only, each of its type;
  the library name and version as :mod:`cogitave.libraries.names` allows them; the source,
  commit, date and encoder printable and bounded (:data:`MAX_SOURCE` ...); the object count,
  every object's size and their sum bounded (:data:`MAX_MEMBERS`,
  :data:`MAX_UNPACKED_BYTES`); no JSON nested deeper than :data:`MAX_DEPTH` or holding a
  string longer than :data:`MAX_JSON_STRING`;
- ``root.json`` comes second: it must hash to the root pack.json names, parse as a root, name
  only what a root may name (object hashes; lexical index files by plain file names; a root
  id as parent), and name exactly the objects pack.json sizes;
- then only ``objects/<sha256>`` regular files that the root names, each once, each streamed
  into a staging store while it stays within the size pack.json declares for it (the writing
  stops at the first byte past it), and kept only if it hashes to its name;
- the decompressed stream itself is counted: no tar header or member can make the import
  read more than the declared sizes and a small overhead, and a truncated or damaged file is
  an error naming the pack, never an interrupted-looking exit.
"""

from __future__ import annotations

import contextlib
import gzip
import hashlib
import itertools
import json
import os
import re
import shutil
import tarfile
import time
import uuid
import zlib
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import IO, Any

from cogitave.errors import (
    CogitaveError,
    ConflictError,
    CorruptionError,
    EncoderError,
    InputError,
    StorageError,
)
from cogitave.expand.embed import check_identity
from cogitave.libraries.layout import LibraryEntry
from cogitave.libraries.names import MAX_NAME, MAX_VERSION, check_version, library_key
from cogitave.printable import is_printable_text, printable
from cogitave.schema import Schema
from cogitave.store.manifest import Manifest
from cogitave.store.roots import RootStore, atomic_write, is_root_id

FORMAT = "cogitave-pack/1"
SUFFIX = ".cogpack"
MAX_MEMBERS = 200_000
"""Objects one pack may hold."""
MAX_PACK_BYTES = 50 * 2**30
"""The largest pack file read."""
MAX_UNPACKED_BYTES = 64 * 2**30
"""The most its objects may add up to (pack.json declares the sum; each object is held to
its declared size while it is written)."""
MAX_HEAD_BYTES = 32 * 2**20
MAX_ROOT_BYTES = 64 * 2**20
MAX_DEPTH = 64
"""How deeply pack.json and root.json may nest."""
MAX_JSON_STRING = 64 * 1024
"""The longest string or key pack.json or root.json may hold."""
MAX_SOURCE = 2048
MAX_COMMIT = 100
MAX_INDEXED_AT = 40
MAX_ENCODER = 200
MAX_DIM = 65_536
MAX_FILE_NAME = 255
_CHUNK = 1 << 20
_TAR_SLACK = 4 * 512 + 10240  # a member's header, pax header and padding; the end record


@dataclass(frozen=True)
class PackInfo:
    """What a pack holds."""

    library: str
    name: str
    version: str
    source: str
    commit: str | None
    indexed_at: str
    encoder: str | None
    encoder_dim: int | None
    root: str
    objects: int
    bytes: int


def is_pack(path: Path) -> bool:
    """A file that is a pack (by its suffix, or a tar whose first member is ``pack.json``)."""
    if not path.is_file():
        return False
    if path.name.endswith(SUFFIX):
        return True
    try:
        with tarfile.open(path, "r:*") as tar:
            first = tar.next()
            return first is not None and first.name == "pack.json"
    except (tarfile.TarError, OSError, EOFError):
        return False


def write_pack(store: RootStore, entry: LibraryEntry, out: Path) -> PackInfo:
    """Write library version ``entry`` (its collection's ``store``) to ``out``."""
    root_bytes = (store.roots / f"{entry.root}.json").read_bytes()
    manifest = store.read_root(entry.root)
    digests = list(dict.fromkeys(manifest.objects()))
    sizes = {d: store.object_path(d).stat().st_size for d in digests}
    info = PackInfo(
        library=entry.ref,
        name=entry.name,
        version=entry.version,
        source=entry.source,
        commit=entry.commit,
        indexed_at=entry.indexed_at,
        encoder=manifest.encoder_name,
        encoder_dim=manifest.encoder_dim,
        root=entry.root,
        objects=len(digests),
        bytes=sum(sizes.values()),
    )
    head = {"format": FORMAT, **asdict(info), "object_sizes": sizes}
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f".{out.name}.{uuid.uuid4().hex}.tmp")
    try:
        with tarfile.open(tmp, "w:gz", compresslevel=1) as tar:
            _add_bytes(tar, "pack.json", json.dumps(head, indent=1).encode())
            _add_bytes(tar, "root.json", root_bytes)
            for d in digests:
                tar.add(store.object_path(d), arcname=f"objects/{d}", recursive=False)
        os.replace(tmp, out)
    finally:
        tmp.unlink(missing_ok=True)
    return info


def _add_bytes(tar: tarfile.TarFile, name: str, data: bytes) -> None:
    import io

    ti = tarfile.TarInfo(name)
    ti.size = len(data)
    ti.mtime = int(time.time())
    tar.addfile(ti, io.BytesIO(data))


def unpack(
    pack: Path, store: RootStore, encoder: str | type[Any] | None, progress: Any = None
) -> tuple[PackInfo, bytes]:
    """Stream a pack's objects into ``store`` (a staging store) and check it whole; its info
    and root bytes. ``encoder``: the one the pack must have been made with (``Any``: the
    collection holds nothing yet and takes the pack's).

    Order and bounds (the module doc): ``pack.json`` first, checked against its schema;
    ``root.json`` second, hashing to the root pack.json names, every name in it one the store
    format allows, its objects exactly the ones pack.json sizes; then only those objects,
    each written while it stays within its declared size. Anything else is an
    :class:`InputError` naming the pack and what is wrong; ``store`` may then hold partial
    objects (its owner removes it)."""
    if not pack.is_file():
        raise InputError(f"no pack at {printable(pack)}")
    if pack.stat().st_size > MAX_PACK_BYTES:
        raise InputError(f"{printable(pack)} is larger than {MAX_PACK_BYTES} bytes")
    with _open_stream(pack) as stream:
        tar = _tar(stream, pack)
        members = _members(tar, pack)
        member, f = _next_member(tar, members, "pack.json", pack)
        head = _head(_read_whole(member, f, MAX_HEAD_BYTES, "pack.json", pack), pack, encoder)
        sizes: dict[str, int] = head["object_sizes"]
        # everything still to read: the root, the declared objects, their tar headers
        stream.limit = (
            stream.read_bytes + MAX_ROOT_BYTES + head["bytes"] + _TAR_SLACK * (len(sizes) + 4)
        )
        member, f = _next_member(tar, members, "root.json", pack)
        root_bytes = _read_whole(member, f, MAX_ROOT_BYTES, "root.json", pack)
        manifest = check_root(root_bytes, head, pack)
        _check_room(store, head["bytes"], pack)
        want = dict(sizes)
        for done, member in enumerate(members, 1):
            digest = member.name.removeprefix("objects/")
            if digest not in want:
                why = "twice" if digest in sizes else "without its root naming it"
                raise _bad(pack, f"it holds object {digest[:12]} {why}")
            if member.size != want[digest]:
                raise _bad(
                    pack,
                    f"object {digest[:12]} is {member.size} bytes; pack.json declares "
                    f"{want[digest]}",
                )
            obj = tar.extractfile(member)
            assert obj is not None
            _store_object(store, obj, digest, want.pop(digest), pack)
            if progress is not None:
                progress("import", done, len(sizes))
        # to the end of the file: a gzip stream cut short or failing its CRC is refused even
        # when every member arrived
        while stream.read(_CHUNK):
            pass
    if want:
        first = next(iter(want))
        raise _bad(pack, f"it lacks {len(want)} object(s) its root names (first {first[:12]})")
    check_identity(manifest.encoder, f"the pack {printable(pack)}")
    info = PackInfo(**{k: head[k] for k in PackInfo.__dataclass_fields__})
    return info, root_bytes


# -- reading the tar stream: decompressed bytes counted and bounded ----------------------------
class _Stream:
    """The pack's tar bytes (gunzipped when compressed), read front to back; reading past
    :attr:`limit` decompressed bytes, or a damaged or truncated file, is an InputError (so
    neither a tar header nor a member can make the import read without bound)."""

    def __init__(self, raw: IO[bytes], pack: Path) -> None:
        self.raw, self.pack = raw, pack
        self.read_bytes = 0
        self.limit = MAX_HEAD_BYTES + _TAR_SLACK * 4

    def read(self, n: int = -1) -> bytes:
        if n is None or n < 0:
            n = self.limit + 1 - self.read_bytes
        n = min(n, self.limit + 1 - self.read_bytes)
        try:
            data = self.raw.read(max(n, 0))
        except (EOFError, OSError, zlib.error) as e:
            raise _damaged(self.pack, e) from None
        self.read_bytes += len(data)
        if self.read_bytes > self.limit:
            raise _bad(self.pack, "it holds more data than its pack.json declares")
        return data


@contextlib.contextmanager
def _open_stream(pack: Path) -> Iterator[_Stream]:
    with pack.open("rb") as fh:
        magic = fh.read(2)
        fh.seek(0)
        raw: IO[bytes] = gzip.GzipFile(fileobj=fh, mode="rb") if magic == b"\x1f\x8b" else fh
        with raw:
            yield _Stream(raw, pack)


def _tar(stream: _Stream, pack: Path) -> tarfile.TarFile:
    try:
        return tarfile.open(fileobj=stream, mode="r|")  # type: ignore[call-overload, no-any-return]
    except tarfile.TarError as e:
        raise _bad(pack, f"it is not a pack (not a readable tar file: {printable(e)})") from None


def _members(tar: tarfile.TarFile, pack: Path) -> Iterator[tarfile.TarInfo]:
    """The pack's members, in order; anything but the expected regular files is refused."""
    it = iter(tar)
    for i in itertools.count():
        try:
            member = next(it)
        except StopIteration:
            return
        except tarfile.TarError as e:
            raise _damaged(pack, e) from None
        if i > MAX_MEMBERS + 2:
            raise _bad(pack, f"it holds more than {MAX_MEMBERS} objects")
        name = member.name
        ok_name = name in ("pack.json", "root.json") or (
            name.startswith("objects/") and is_root_id(name.removeprefix("objects/"))
        )
        if not ok_name or not member.isreg():
            raise _bad(
                pack,
                f"unexpected member {printable(name, 100)!r} (a pack holds pack.json, root.json "
                "and objects/<sha256> files only)",
            )
        yield member


def _next_member(
    tar: tarfile.TarFile, members: Iterator[tarfile.TarInfo], name: str, pack: Path
) -> tuple[tarfile.TarInfo, IO[bytes]]:
    """The next member, which must be ``name``, and its reader (a tar stream: read it before
    the next member is asked for)."""
    member = next(members, None)
    if member is None:
        raise _bad(pack, f"it lacks {name}: not a whole pack")
    if member.name != name:
        shown = printable(member.name.split("/")[0], 40)
        raise _bad(pack, f"it holds {shown} where {name} belongs: not a pack")
    f = tar.extractfile(member)
    assert f is not None
    return member, f


def _read_whole(member: tarfile.TarInfo, f: IO[bytes], bound: int, what: str, pack: Path) -> bytes:
    if member.size > bound:
        raise _bad(pack, f"its {what} is {member.size} bytes, more than {bound}")
    try:
        data = f.read(member.size)
    except (EOFError, tarfile.TarError) as e:
        raise _damaged(pack, e) from None
    if len(data) != member.size:
        raise _bad(pack, f"it is truncated inside {what}")
    return data


def _check_room(store: RootStore, need: int, pack: Path) -> None:
    try:
        free = shutil.disk_usage(store.path).free
    except OSError:
        return
    if need > free:
        raise StorageError(
            f"{printable(pack)} unpacks to {need:,} bytes; {store.path} has {free:,} free"
        )


def copy_bounded(src: IO[bytes], out: IO[bytes], limit: int) -> tuple[int, str]:
    """Copy ``src`` to ``out`` while it stays within ``limit`` bytes: (bytes, SHA-256). Past
    the limit nothing more is written and ``ValueError`` is raised (``out`` then holds at most
    ``limit`` bytes)."""
    h = hashlib.sha256()
    n = 0
    while True:
        chunk = src.read(min(_CHUNK, limit + 1 - n))
        if not chunk:
            return n, h.hexdigest()
        n += len(chunk)
        if n > limit:
            raise ValueError(f"more than {limit} bytes")
        h.update(chunk)
        out.write(chunk)


def _store_object(store: RootStore, f: IO[bytes], digest: str, size: int, pack: Path) -> None:
    """Stream one object into ``store``, refusing it unless it is its declared size and
    hashes to its name."""
    tmp = store.tmp / f"{digest}.{uuid.uuid4().hex}.part"
    try:
        with tmp.open("wb") as out:
            try:
                n, got = copy_bounded(f, out, size)
            except ValueError:
                raise _bad(
                    pack, f"object {digest[:12]} holds more than the {size} bytes declared"
                ) from None
            except (EOFError, tarfile.TarError) as e:
                raise _damaged(pack, e) from None
        if n != size:
            raise _bad(pack, f"it is truncated inside object {digest[:12]}")
        if got != digest:
            raise _bad(pack, f"object {digest[:12]} is damaged (its hash differs)")
        store.put_file(tmp, digest)
    finally:
        tmp.unlink(missing_ok=True)


# -- what pack.json and root.json may say ------------------------------------------------------
_HEAD_KEYS = frozenset({"format", *PackInfo.__dataclass_fields__, "object_sizes"})
_COMMIT = re.compile(r"[0-9A-Za-z._-]+")
_INDEXED_AT = re.compile(r"[0-9A-Za-z:.+-]*")
_LEXICAL_FILE = re.compile(rf"[A-Za-z0-9_.-]{{1,{MAX_FILE_NAME}}}")


def _json(data: bytes, what: str, pack: Path) -> Any:
    try:
        value = json.loads(data)
    except RecursionError:
        raise _bad(pack, f"its {what} is nested too deeply") from None
    except (ValueError, UnicodeDecodeError) as e:
        raise _bad(pack, f"its {what} is not JSON ({printable(e, 120)})") from None
    depth = _depth(value, MAX_DEPTH, MAX_JSON_STRING)
    if depth is not None:
        raise _bad(pack, f"its {what} {depth}")
    return value


def _depth(value: Any, left: int, longest: int) -> str | None:
    """Why ``value`` is out of bounds (nested deeper than ``left``, a string or key longer
    than ``longest``), or None. Iterative: a deep value cannot exhaust the stack."""
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        v, d = stack.pop()
        if d > left:
            return f"is nested deeper than {left} levels"
        if isinstance(v, str):
            if len(v) > longest:
                return f"holds a string of {len(v)} characters (at most {longest})"
        elif isinstance(v, dict):
            for k, x in v.items():
                if len(k) > longest:
                    return f"holds a key of {len(k)} characters (at most {longest})"
                stack.append((x, d + 1))
        elif isinstance(v, list):
            stack.extend((x, d + 1) for x in v)
    return None


def _text_field(head: dict[str, Any], key: str, most: int, pack: Path, *, null: bool = False,
                pattern: re.Pattern[str] | None = None) -> None:  # fmt: skip
    v = head[key]
    if v is None and null:
        return
    if not isinstance(v, str):
        raise _bad(pack, f"pack.json: {key!r} is {_kind(v)}, not a string")
    if len(v) > most:
        raise _bad(pack, f"pack.json: {key!r} is {len(v)} characters long (at most {most})")
    if not is_printable_text(v) or (pattern is not None and not pattern.fullmatch(v)):
        raise _bad(pack, f"pack.json: {key!r} is not a valid {key}: {printable(v, 80)!r}")


def _int_field(head: dict[str, Any], key: str, lo: int, hi: int, pack: Path,
               *, null: bool = False) -> None:  # fmt: skip
    v = head[key]
    if v is None and null:
        return
    if not isinstance(v, int) or isinstance(v, bool):
        raise _bad(pack, f"pack.json: {key!r} is {_kind(v)}, not an integer")
    if not lo <= v <= hi:
        raise _bad(pack, f"pack.json: {key!r} is {v}, outside {lo}..{hi}")


def _kind(v: Any) -> str:
    names = {dict: "an object", list: "a list", str: "a string", bool: "a boolean",
             int: "an integer", float: "a number", type(None): "null"}  # fmt: skip
    return names.get(type(v), type(v).__name__)


def _head(data: bytes, pack: Path, encoder: str | type[Any] | None) -> dict[str, Any]:
    """pack.json, checked against its schema (every key, type, length and count)."""
    head = _json(data, "pack.json", pack)
    if not isinstance(head, dict):
        raise _bad(pack, f"pack.json is {_kind(head)}, not an object")
    if head.get("format") != FORMAT:
        shown = printable(head.get("format"), 40)
        raise _bad(pack, f"pack.json has format {shown!r}, this version reads {FORMAT}")
    missing = sorted(_HEAD_KEYS - head.keys())
    unknown = sorted(head.keys() - _HEAD_KEYS)
    if missing or unknown:
        what = f"lacks {', '.join(missing)}" if missing else ""
        what += ("; " if what else "") + (
            f"has unknown keys {printable(', '.join(unknown), 80)}" if unknown else ""
        )
        raise _bad(pack, f"pack.json {what}")
    _text_field(head, "name", MAX_NAME, pack)
    _text_field(head, "version", MAX_VERSION, pack)
    _text_field(head, "library", MAX_NAME + MAX_VERSION + 1, pack)
    _text_field(head, "source", MAX_SOURCE, pack)
    _text_field(head, "commit", MAX_COMMIT, pack, null=True, pattern=_COMMIT)
    _text_field(head, "indexed_at", MAX_INDEXED_AT, pack, pattern=_INDEXED_AT)
    _text_field(head, "encoder", MAX_ENCODER, pack, null=True)
    _int_field(head, "encoder_dim", 1, MAX_DIM, pack, null=True)
    _int_field(head, "objects", 0, MAX_MEMBERS, pack)
    _int_field(head, "bytes", 0, MAX_UNPACKED_BYTES, pack)
    if not is_root_id(head["root"]):
        raise _bad(pack, "pack.json: 'root' is not a root id (64 hex characters)")
    try:
        key = library_key(head["name"])
        version = check_version(head["version"])
    except InputError as e:
        raise _bad(pack, f"pack.json: {e.message}") from None
    if head["library"] != f"{key}@{version}":
        raise _bad(pack, f"pack.json: 'library' is not {key}@{printable(version)}")
    sizes = head["object_sizes"]
    if not isinstance(sizes, dict):
        raise _bad(pack, f"pack.json: 'object_sizes' is {_kind(sizes)}, not an object")
    if len(sizes) != head["objects"]:
        raise _bad(pack, f"pack.json sizes {len(sizes)} objects, counts {head['objects']}")
    for digest, size in sizes.items():
        if not is_root_id(digest):
            raise _bad(pack, f"pack.json sizes {printable(digest, 80)!r}, not an object hash")
        if not isinstance(size, int) or isinstance(size, bool) or size < 0:
            raise _bad(pack, f"pack.json: the size of {digest[:12]} is not a count of bytes")
    if sum(sizes.values()) != head["bytes"]:
        raise _bad(pack, f"pack.json: its object sizes do not add up to {head['bytes']} bytes")
    if encoder is not Any and head["encoder"] != encoder:
        raise EncoderError(
            f"{printable(pack)} was made with encoder {printable(head['encoder'])!r}; this "
            f"collection embeds with {encoder!r}: vectors of different encoders are not "
            "comparable (index the library's docs instead)"
        )
    return dict(head)


def check_root(root_bytes: bytes, head: dict[str, Any], pack: Path) -> Manifest:
    """The pack's root manifest, refused unless it hashes to the root pack.json names, parses,
    names only what a root may name (object hashes; plain lexical file names; a root id as
    its parent), agrees with pack.json on the encoder, and names exactly the objects pack.json
    sizes."""
    rid = str(head["root"])
    if hashlib.sha256(root_bytes).hexdigest() != rid:
        raise _bad(pack, f"its root manifest does not hash to its id {rid[:12]}")
    raw = _json(root_bytes, "root.json", pack)
    try:
        manifest = Manifest.from_json(root_bytes, source=f"{pack.name}:root.json")
    except CorruptionError as e:
        raise _bad(pack, printable(e.message)) from None
    for name, digest in manifest.lexical_files.items():
        if not isinstance(name, str) or name in (".", "..") or not _LEXICAL_FILE.fullmatch(name):
            raise _bad(
                pack, f"its root names lexical file {printable(name, 80)!r}: not a file name"
            )
        if not is_root_id(digest):
            raise _bad(pack, f"its root names {printable(digest, 80)!r} as an object")
    try:
        Schema.from_dict(manifest.schema, source=f"{pack.name}:root.json")
    except (CogitaveError, KeyError, TypeError, ValueError, AttributeError) as e:
        raise _bad(pack, f"its root's schema does not load ({printable(e, 120)})") from None
    if manifest.parent is not None and not is_root_id(manifest.parent):
        raise _bad(pack, "its root names a parent that is not a root id")
    bad = [v for v in _obj_values(raw) if not is_root_id(v)]
    if bad:
        raise _bad(pack, f"its root names {printable(bad[0], 80)!r} as an object")
    if manifest.encoder_name != head["encoder"]:
        raise _bad(pack, "pack.json and the root disagree on the encoder")
    if manifest.encoder_dim != head["encoder_dim"]:
        raise _bad(pack, "pack.json and the root disagree on the encoder's width")
    named = set(manifest.objects())
    if named != set(head["object_sizes"]):
        extra = sorted(set(head["object_sizes"]) - named)
        if extra:
            raise _bad(
                pack, f"pack.json sizes object {extra[0][:12]}, which its root does not name"
            )
        lack = sorted(named - set(head["object_sizes"]))
        raise _bad(pack, f"pack.json does not size object {lack[0][:12]}, which its root names")
    return manifest


def _obj_values(x: Any) -> Iterator[Any]:
    """Every value under a key ending in ``_obj`` (whatever its type)."""
    stack = [x]
    while stack:
        v = stack.pop()
        if isinstance(v, dict):
            for k, y in v.items():
                if k.endswith("_obj") and not isinstance(y, dict | list):
                    if y is not None:
                        yield y
                else:
                    stack.append(y)
        elif isinstance(v, list):
            stack.extend(v)


def _bad(pack: Path, what: str) -> InputError:
    return InputError(f"the pack {printable(pack, 200)}: {what}; nothing was imported")


def _damaged(pack: Path, e: BaseException) -> InputError:
    why = printable(str(e) or type(e).__name__, 120)
    return _bad(pack, f"it is damaged or truncated ({why})")


def install_root(store: RootStore, rid: str, root_bytes: bytes) -> None:
    """Make a checked root this store's HEAD (its manifest written byte for byte)."""
    if hashlib.sha256(root_bytes).hexdigest() != rid:
        raise CorruptionError(f"root {rid[:12]} does not hash to its id")
    atomic_write(store.roots / f"{rid}.json", root_bytes)
    store.set_head(rid)


def check_replace(existing: LibraryEntry | None, info: PackInfo, replace: bool) -> None:
    """A version held from another source is replaced only when asked."""
    if existing is not None and existing.source != info.source and not replace:
        raise ConflictError(
            f"{info.library} was indexed from {printable(existing.source)}; the pack holds it "
            f"from {printable(info.source)}: pass --replace to replace it"
        )
