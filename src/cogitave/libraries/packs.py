"""Index packs: one library version as one portable file, imported without re-embedding.

A pack is a tar file (gzip, fast level) of:

- ``pack.json``: the format, the library (name, version, source, commit, indexed at), the
  encoder's name and width, the root id, and every object with its SHA-256 and size;
- ``root.json``: the library version's root manifest (its id is its SHA-256);
- ``objects/<sha256>``: every object the root names (node records, lexical index files, term
  arrays, vectors and their HNSW graphs, the graph, statistics, the text -> vector cache).

Importing reads members one by one (no member is ever extracted by its own name: only
``pack.json``, ``root.json`` and ``objects/<64 hex>`` regular files are accepted, each streamed
into the collection's object store under the hash it hashes to), checks that every object the
manifest names arrived and hashes to its name, that the root hashes to its id, and that the
pack's encoder is the collection's, before anything becomes visible: a damaged pack, a pack
of another encoder, or one that names a file outside the store is refused with the reason,
and the collection is as it was.
"""

from __future__ import annotations

import hashlib
import json
import os
import tarfile
import time
import uuid
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import IO, Any

from cogitave.errors import ConflictError, CorruptionError, EncoderError, InputError
from cogitave.expand.embed import check_identity
from cogitave.libraries.layout import LibraryEntry
from cogitave.store.manifest import Manifest
from cogitave.store.roots import RootStore, atomic_write, is_root_id

FORMAT = "cogitave-pack/1"
SUFFIX = ".cogpack"
MAX_MEMBERS = 200_000
MAX_PACK_BYTES = 50 * 2**30
_CHUNK = 1 << 20


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
    collection holds nothing yet and takes the pack's)."""
    if not pack.is_file():
        raise InputError(f"no pack at {pack}")
    if pack.stat().st_size > MAX_PACK_BYTES:
        raise InputError(f"{pack} is larger than {MAX_PACK_BYTES} bytes")
    try:
        tar = tarfile.open(pack, "r:*")  # noqa: SIM115  (closed by the with below)
    except (tarfile.TarError, OSError, EOFError) as e:
        raise CorruptionError(f"{pack} is not a pack (not a readable tar file: {e})") from e
    with tar:
        head: dict[str, Any] | None = None
        root_bytes: bytes | None = None
        seen: set[str] = set()
        for i, member in enumerate(_members(tar, pack)):
            if i > MAX_MEMBERS:
                raise CorruptionError(f"{pack} holds more than {MAX_MEMBERS} members")
            f = tar.extractfile(member)
            assert f is not None
            if member.name == "pack.json":
                head = _head(f.read(1 << 24), pack, encoder)
            elif member.name == "root.json":
                root_bytes = f.read(1 << 26)
            else:
                digest = member.name.removeprefix("objects/")
                _store_object(store, f, digest, pack)
                seen.add(digest)
                if progress is not None and head is not None:
                    progress("import", len(seen), int(head["objects"]))
        if head is None or root_bytes is None:
            raise CorruptionError(f"{pack} lacks pack.json or root.json: not a whole pack")
    rid = str(head["root"])
    if hashlib.sha256(root_bytes).hexdigest() != rid:
        raise CorruptionError(f"{pack}: its root manifest does not hash to its id {rid[:12]}")
    manifest = Manifest.from_json(root_bytes, source=f"{pack}:root.json")
    missing = [d for d in dict.fromkeys(manifest.objects()) if d not in seen]
    if missing:
        raise CorruptionError(
            f"{pack} lacks {len(missing)} object(s) its root names (first {missing[0][:12]})"
        )
    if manifest.encoder_name != head["encoder"]:
        raise CorruptionError(f"{pack}: pack.json and the root disagree on the encoder")
    check_identity(manifest.encoder, f"the pack {pack}")
    info = PackInfo(**{k: head[k] for k in PackInfo.__dataclass_fields__})
    return info, root_bytes


def _members(tar: tarfile.TarFile, pack: Path) -> Any:
    """The pack's members; anything but the expected regular files is refused."""
    for member in tar:
        name = member.name
        ok_name = name in ("pack.json", "root.json") or (
            name.startswith("objects/") and _is_hash(name.removeprefix("objects/"))
        )
        if not ok_name or not member.isreg():
            raise CorruptionError(
                f"{pack}: unexpected member {name!r} (a pack holds pack.json, root.json and "
                "objects/<sha256> files only)"
            )
        yield member


def _is_hash(s: str) -> bool:
    return len(s) == 64 and all(c in "0123456789abcdef" for c in s)


def _head(data: bytes, pack: Path, encoder: str | type[Any] | None) -> dict[str, Any]:
    try:
        head = json.loads(data)
        if head.get("format") != FORMAT:
            raise ValueError(f"format {head.get('format')!r}, not {FORMAT}")
        missing = [k for k in PackInfo.__dataclass_fields__ if k not in head]
        if missing:
            raise ValueError(f"missing {', '.join(missing)}")
        if not is_root_id(str(head["root"])):
            raise ValueError("its root is not a root id")
    except (ValueError, AttributeError) as e:
        raise CorruptionError(f"{pack}: not a pack manifest ({e})") from e
    if encoder is not Any and head["encoder"] != encoder:
        raise EncoderError(
            f"{pack} was made with encoder {head['encoder']!r}; this collection embeds with "
            f"{encoder!r}: vectors of different encoders are not comparable (index the "
            "library's docs instead)"
        )
    return dict(head)


def _store_object(store: RootStore, f: IO[bytes], digest: str, pack: Path) -> None:
    """Stream one object into ``store``, refusing it unless it hashes to its name."""
    h = hashlib.sha256()
    tmp = store.tmp / f"{digest}.{uuid.uuid4().hex}.part"
    with tmp.open("wb") as out:
        while chunk := f.read(_CHUNK):
            h.update(chunk)
            out.write(chunk)
    if h.hexdigest() != digest:
        tmp.unlink(missing_ok=True)
        raise CorruptionError(f"{pack}: object {digest[:12]} is damaged (its hash differs)")
    store.put_file(tmp, digest)
    tmp.unlink(missing_ok=True)


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
            f"{info.library} was indexed from {existing.source}; the pack holds it from "
            f"{info.source}: pass --replace to replace it"
        )
