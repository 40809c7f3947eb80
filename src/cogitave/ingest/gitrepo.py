"""The git facts of a tree (its checked-out commit, branch and the tags naming that commit),
read from ``.git`` as files: ``git`` itself is never run on an untrusted tree, since its
config can run programs (``core.fsmonitor``, ``core.hooksPath``, filters).

What is read, all through the tree's :class:`~cogitave.ingest.confined.TreeReader` (nothing
outside the tree or the folders allowed outside it):

- the ``.git`` found at the start folder or the nearest folder above it; a ``.git`` *file*
  (a worktree, a submodule) names the git folder (``gitdir: ...``) and a worktree's
  ``commondir`` names the shared one: each is followed only where the reader may read;
- ``HEAD``: a symbolic ref (``ref: refs/heads/main``) or a detached commit; refs are read
  loose (``refs/...``) and from ``packed-refs``, symbolic refs followed a few levels;
- tags: loose ``refs/tags/**`` and packed ones; a lightweight tag names the commit, an
  annotated one is peeled through its tag object: the ``^`` line of ``packed-refs``, else the
  object itself, loose (zlib) or in a pack (``objects/pack/*.idx`` v2 and the ``.pack``
  entry, deltas applied), read in slices and bounded.

Anything unexpected (a name that is not a ref, a malformed object, a file refused) is passed
over quietly: the fact is then unknown (None), never an error.
"""

from __future__ import annotations

import os
import re
import struct
import zlib
from dataclasses import dataclass
from pathlib import Path

from cogitave.ingest.confined import TreeReader

_SHA = re.compile(r"^(?:[0-9a-f]{40}|[0-9a-f]{64})$")
_REF = re.compile(r"^refs/[A-Za-z0-9._/@+-]+$")
MAX_SYMREF_DEPTH = 5
MAX_TAG_DEPTH = 5  # a tag of a tag of ...
MAX_DELTA_DEPTH = 64
MAX_OBJECT_BYTES = 1 << 20  # a tag object (or a delta base of one): larger is not read
MAX_TAGS = 20_000  # tags looked at
_PACK_SLICE = 1 << 16
_OBJ_COMMIT, _OBJ_TAG, _OFS_DELTA, _REF_DELTA = 1, 4, 6, 7
_TYPES = {1: "commit", 2: "tree", 3: "blob", 4: "tag"}
# Refs that belong to a worktree, not to the shared git folder (git's own list).
_PER_WORKTREE = ("refs/bisect/", "refs/worktree/", "refs/rewritten/")


@dataclass(frozen=True)
class GitHead:
    """The checked-out state of a work tree."""

    commit: str | None  # None: no commit yet, or it could not be read
    branch: str | None  # ``main`` (None: detached)
    tags: tuple[str, ...]  # the tags naming ``commit``, sorted
    git_dir: Path


def find_git_dir(start: Path, reader: TreeReader) -> Path | None:
    """The git folder of the work tree holding ``start`` (the nearest ``.git`` at or above
    it), or None: none, or one the reader may not read (outside the tree: quietly)."""
    here = Path(os.path.abspath(start))
    for folder in (here, *here.parents):
        dot = folder / ".git"
        if not os.path.lexists(dot):
            continue
        if not reader.allows(dot):
            return None
        if os.path.isdir(dot):
            return dot
        text = _text(reader, dot)
        if text is None or not text.startswith("gitdir:"):
            return None
        target = Path(os.path.normpath(folder / text[len("gitdir:") :].strip()))
        return target if reader.allows(target) and os.path.isdir(target) else None
    return None


def read_head(start: Path, reader: TreeReader) -> GitHead | None:
    """The git facts of the work tree holding ``start``; None when it is in none the reader
    may read (see the module doc)."""
    git_dir = find_git_dir(start, reader)
    if git_dir is None:
        return None
    repo = _Repo(git_dir, reader)
    if repo.common is None:
        return None
    head = _text(reader, git_dir / "HEAD")
    if head is None:
        return GitHead(None, None, (), git_dir)
    branch: str | None = None
    if head.startswith("ref:"):
        name = head[4:].strip()
        branch = name.removeprefix("refs/heads/") if name.startswith("refs/heads/") else None
        commit = repo.resolve(name)
    else:
        commit = head.strip() if _SHA.match(head.strip()) else None
    tags = repo.tags_of(commit) if commit else ()
    return GitHead(commit, branch, tags, git_dir)


class _Repo:
    """The refs and objects of one git folder (and its shared ``commondir``)."""

    def __init__(self, git_dir: Path, reader: TreeReader) -> None:
        self.git_dir = git_dir
        self.reader = reader
        self.common: Path | None = git_dir
        pointer = (
            _text(reader, git_dir / "commondir")
            if _is_file(reader, git_dir / "commondir")
            else None
        )
        if pointer is not None:
            common = Path(os.path.normpath(git_dir / pointer.strip()))
            self.common = common if reader.allows(common) and os.path.isdir(common) else None
        self._packed: dict[str, tuple[str, str | None]] | None = None
        self._fully_peeled = False
        self._indexes: list[tuple[Path, Path]] | None = None

    # -- refs -----------------------------------------------------------------------------
    def resolve(self, name: str, depth: int = 0) -> str | None:
        """The commit (or object) a ref names, following symbolic refs."""
        if depth > MAX_SYMREF_DEPTH or not _is_ref(name) or self.common is None:
            return None
        own = name.startswith(_PER_WORKTREE)
        loose = (self.git_dir if own else self.common) / name
        text = _text(self.reader, loose) if _is_file(self.reader, loose) else None
        if text is not None:
            text = text.strip()
            if text.startswith("ref:"):
                return self.resolve(text[4:].strip(), depth + 1)
            return text if _SHA.match(text) else None
        packed = self.packed().get(name)
        return packed[0] if packed else None

    def packed(self) -> dict[str, tuple[str, str | None]]:
        """``packed-refs``: ref -> (object, peeled commit when the file gives it)."""
        if self._packed is None:
            self._packed = {}
            assert self.common is not None
            path = self.common / "packed-refs"
            text = _text(self.reader, path) if _is_file(self.reader, path) else None
            last = ""
            lines = (text or "").splitlines()
            # `# pack-refs with: peeled fully-peeled`: every annotated tag has its `^` line,
            # so a tag without one names its object itself.
            traits = lines[0].partition("# pack-refs with:")[2] if lines else ""
            self._fully_peeled = "peeled" in traits.split()
            for line in lines:
                if line.startswith("^") and last:
                    peeled = line[1:].strip()
                    if _SHA.match(peeled):
                        self._packed[last] = (self._packed[last][0], peeled)
                    continue
                sha, _, name = line.partition(" ")
                last = ""
                if _SHA.match(sha) and _is_ref(name.strip()):
                    last = name.strip()
                    self._packed[last] = (sha, None)
        return self._packed

    def tags_of(self, commit: str) -> tuple[str, ...]:
        """The tags (lightweight or annotated) that name ``commit``."""
        packed = self.packed()
        tags: dict[str, tuple[str, str | None]] = {
            name: (sha, peeled or (sha if self._fully_peeled else None))
            for name, (sha, peeled) in packed.items()
            if name.startswith("refs/tags/")
        }
        assert self.common is not None
        top = self.common / "refs" / "tags"
        if self.reader.allows(top) and os.path.isdir(top):
            for here, _dirs, files in self.reader.walk(top):
                for file in files:
                    name = (here / file).relative_to(self.common).as_posix()
                    if len(tags) >= MAX_TAGS:
                        break
                    sha = self.resolve(name)
                    if sha is not None:
                        tags[name] = (sha, None)  # a loose ref wins over a packed one
        out: list[str] = []
        for name, (sha, peeled) in list(tags.items())[:MAX_TAGS]:
            if sha == commit or peeled == commit or (peeled is None and self.peel(sha) == commit):
                out.append(name.removeprefix("refs/tags/"))
        return tuple(sorted(out))

    def peel(self, sha: str) -> str | None:
        """The object an annotated tag (or a chain of them) names at last; None for any
        other object, or one that cannot be read."""
        for _ in range(MAX_TAG_DEPTH):
            found = self.object(sha)
            if found is None or found[0] != "tag":
                return None
            m = re.match(rb"object ([0-9a-f]{40}|[0-9a-f]{64})\n", found[1])
            if m is None:
                return None
            sha = m.group(1).decode()
            if not found[1][m.end() :].startswith(b"type tag\n"):
                return sha
        return None

    # -- objects --------------------------------------------------------------------------
    def object(self, sha: str) -> tuple[str, bytes] | None:
        """(type, body) of an object, loose or packed, at most :data:`MAX_OBJECT_BYTES`."""
        loose = self._loose(sha)
        return loose if loose is not None else self._packed_object(sha, 0)

    def _loose(self, sha: str) -> tuple[str, bytes] | None:
        assert self.common is not None
        path = self.common / "objects" / sha[:2] / sha[2:]
        data = _bytes(self.reader, path) if _is_file(self.reader, path) else None
        if data is None:
            return None
        raw = _inflate(data, MAX_OBJECT_BYTES + 64)
        if raw is None:
            return None
        head, nul, body = raw.partition(b"\0")
        kind, _, size = head.decode("ascii", "replace").partition(" ")
        if not nul or not size.isdigit() or int(size) != len(body):
            return None  # malformed, or larger than read
        return kind, body

    def indexes(self) -> list[tuple[Path, Path]]:
        """(idx, pack) pairs of ``objects/pack``."""
        if self._indexes is None:
            self._indexes = []
            assert self.common is not None
            folder = self.common / "objects" / "pack"
            if self.reader.allows(folder) and os.path.isdir(folder):
                for idx in self.reader.listdir(folder):
                    pack = idx.with_suffix(".pack")
                    if idx.suffix == ".idx" and _is_file(self.reader, pack):
                        self._indexes.append((idx, pack))
        return self._indexes

    def _packed_object(self, sha: str, depth: int) -> tuple[str, bytes] | None:
        for idx, pack in self.indexes():
            offset = _idx_offset(self.reader, idx, bytes.fromhex(sha))
            if offset is not None:
                return self._pack_entry(pack, offset, depth)
        return None

    def _pack_entry(self, pack: Path, offset: int, depth: int) -> tuple[str, bytes] | None:
        """The object at ``offset`` of ``pack``, deltas resolved (bounded depth and size)."""
        if depth > MAX_DELTA_DEPTH:
            return None
        head = _read_at(self.reader, pack, offset, _PACK_SLICE)
        if not head:
            return None
        byte = head[0]
        kind, size, shift, i = (byte >> 4) & 7, byte & 15, 4, 1
        while byte & 0x80:
            if i >= len(head) or shift > 60:
                return None
            byte = head[i]
            size |= (byte & 0x7F) << shift
            shift, i = shift + 7, i + 1
        if size > MAX_OBJECT_BYTES:
            return None
        base: tuple[str, bytes] | None = None
        if kind == _OFS_DELTA:
            if i >= len(head):
                return None
            byte = head[i]
            back, i = byte & 0x7F, i + 1
            while byte & 0x80:
                if i >= len(head):
                    return None
                byte = head[i]
                back, i = ((back + 1) << 7) | (byte & 0x7F), i + 1
            if not 0 < back <= offset:
                return None
            base = self._pack_entry(pack, offset - back, depth + 1)
        elif kind == _REF_DELTA:
            width = 32 if len(head) >= i + 32 and self._sha256() else 20
            ref = head[i : i + width].hex()
            i += width
            base = self._loose(ref) or self._packed_object(ref, depth + 1)
        elif kind not in _TYPES:
            return None
        data = self._inflate_at(pack, offset + i, head[i:], size)
        if data is None:
            return None
        if kind in _TYPES:
            return _TYPES[kind], data
        if base is None:
            return None
        applied = _apply_delta(base[1], data)
        return (base[0], applied) if applied is not None else None

    def _inflate_at(self, pack: Path, start: int, first: bytes, size: int) -> bytes | None:
        """``size`` bytes inflated from the zlib stream at ``start`` of ``pack``."""
        stream = zlib.decompressobj()
        out = bytearray()
        chunk, pos = first, start + len(first)
        try:
            while True:
                out += stream.decompress(chunk, size + 1 - len(out))
                if stream.eof or len(out) > size:
                    break
                chunk = _read_at(self.reader, pack, pos, _PACK_SLICE) or b""
                if not chunk:
                    return None
                pos += len(chunk)
        except zlib.error:
            return None
        return bytes(out) if len(out) == size else None

    def _sha256(self) -> bool:
        assert self.common is not None
        config = self.common / "config"
        text = _text(self.reader, config) if _is_file(self.reader, config) else None
        return bool(text and re.search(r"(?im)^\s*objectformat\s*=\s*sha256\s*$", text))


def _idx_offset(reader: TreeReader, idx: Path, sha: bytes) -> int | None:
    """The pack offset of the object ``sha`` from a version 2 pack index, or None."""
    head = _read_at(reader, idx, 0, 8 + 256 * 4)
    if head is None or len(head) < 8 + 256 * 4 or head[:4] != b"\xfftOc":
        return None
    if struct.unpack(">I", head[4:8])[0] != 2:
        return None
    fanout = struct.unpack(">256I", head[8:])
    total = fanout[255]
    low = fanout[sha[0] - 1] if sha[0] else 0
    high = fanout[sha[0]]
    width = len(sha)
    if high <= low or high > total:
        return None
    names_at = 8 + 256 * 4
    names = _read_at(reader, idx, names_at + low * width, (high - low) * width)
    if names is None or len(names) < (high - low) * width:
        return None
    found = next((n for n in range(high - low) if names[n * width : (n + 1) * width] == sha), None)
    if found is None:
        return None
    at = low + found
    offsets_at = names_at + total * width + total * 4
    raw = _read_at(reader, idx, offsets_at + at * 4, 4)
    if raw is None or len(raw) < 4:
        return None
    offset = struct.unpack(">I", raw)[0]
    if offset & 0x80000000:
        large = _read_at(reader, idx, offsets_at + total * 4 + (offset & 0x7FFFFFFF) * 8, 8)
        if large is None or len(large) < 8:
            return None
        offset = struct.unpack(">Q", large)[0]
    return offset


def _apply_delta(base: bytes, delta: bytes) -> bytes | None:
    """A git delta applied to ``base`` (None when it does not fit)."""
    pos = 0

    def varint() -> int:
        nonlocal pos
        value, shift = 0, 0
        while pos < len(delta):
            byte = delta[pos]
            pos += 1
            value |= (byte & 0x7F) << shift
            shift += 7
            if not byte & 0x80:
                return value
        return -1

    if varint() != len(base):
        return None
    size = varint()
    if not 0 <= size <= MAX_OBJECT_BYTES:
        return None
    out = bytearray()
    while pos < len(delta):
        op = delta[pos]
        pos += 1
        if op & 0x80:
            start = length = 0
            for bit in range(4):
                if op & (1 << bit):
                    if pos >= len(delta):
                        return None
                    start |= delta[pos] << (8 * bit)
                    pos += 1
            for bit in range(3):
                if op & (0x10 << bit):
                    if pos >= len(delta):
                        return None
                    length |= delta[pos] << (8 * bit)
                    pos += 1
            length = length or 0x10000
            if start + length > len(base):
                return None
            out += base[start : start + length]
        elif op:
            out += delta[pos : pos + op]
            pos += op
        else:
            return None
        if len(out) > size:
            return None
    return bytes(out) if len(out) == size else None


def _inflate(data: bytes, limit: int) -> bytes | None:
    try:
        return zlib.decompressobj().decompress(data, limit)
    except zlib.error:
        return None


def _is_ref(name: str) -> bool:
    parts = name.split("/")
    return (
        bool(_REF.match(name))
        and not any(p in ("", ".", "..") for p in parts)
        and (not name.endswith(".lock"))
    )


def _is_file(reader: TreeReader, path: Path) -> bool:
    """A regular file the reader may read (one outside is passed over, not recorded)."""
    return reader.locate(path) == "file"


def _bytes(reader: TreeReader, path: Path) -> bytes | None:
    if not _is_file(reader, path):
        return None
    try:
        return reader.read_bytes(path)
    except OSError:
        return None


def _text(reader: TreeReader, path: Path) -> str | None:
    data = _bytes(reader, path)
    if data is None:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _read_at(reader: TreeReader, path: Path, offset: int, size: int) -> bytes | None:
    if not _is_file(reader, path):
        return None
    try:
        return reader.read_at(path, offset, size)
    except OSError:
        return None
