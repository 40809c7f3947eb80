"""Graph segments: the immutable, content-addressed adjacency of one root.

nodes + edges -> node index (uid -> dense int id, kind, title) + CSR adjacency per edge label in
both directions. Ids are the ranks of the uids in sorted order, so the same live graph always
gives the same ids and the same bytes (and therefore the same object hash).

Binary format (version :data:`GRAPH_FORMAT`), one file, every array 64-byte aligned so that a
memory map of the object can serve all of them without copying::

    b"CGGRAPH\\0" | u64 LE header length | JSON header | padding | array bytes ...

The header names each array (``dtype``, ``shape``, ``offset``) plus ``meta`` (kind names, label
names, counts). Arrays: ``uid.blob``/``uid.off`` and ``title.blob``/``title.off`` (UTF-8 blobs
with int64 offsets), ``kind`` (int32 code per node), ``out.<label>.indptr``/``.indices`` and
``in.<label>.indptr``/``.indices`` (int32 CSR, neighbours sorted), and the dangling edges
(``dangling.src``, ``dangling.label``, ``dangling.blob``/``dangling.off``): edges whose
destination is not in the graph. They are not traversable, but they are kept so that
:func:`apply` revives them when the destination is published later. This gives the invariant
the tests check: ``apply(build(A), added, removed)`` has the same bytes as ``build`` of the
resulting live nodes.

No pickles anywhere: strings are UTF-8 blobs, arrays are raw little-endian buffers.
"""

from __future__ import annotations

import json
import struct
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

import numpy as np

from cogitave.errors import CorruptionError
from cogitave.nodes import Node
from cogitave.schema import EDGE_LABELS
from cogitave.store.roots import RootStore

GRAPH_FORMAT = 1
MAGIC = b"CGGRAPH\x00"
ALIGN = 64
_DTYPES = frozenset({"<i4", "<i8", "|u1", "|i1"})
LABEL_CODE: dict[str, int] = {label: i for i, label in enumerate(EDGE_LABELS)}

Titles = Mapping[str, str] | Callable[[Node], str] | None
"""Where a node's title comes from: a ``uid -> title`` mapping, a function of the node, or
``None`` for the node's ``title`` dimension."""

Direction = Literal["out", "in"]


def _title_of(titles: Titles) -> Callable[[Node], str]:
    if titles is None:
        return lambda n: n.text("title")
    if callable(titles):
        return lambda n: str(titles(n) or "")  # type: ignore[operator]
    mapping = titles
    return lambda n: str(mapping.get(n.uid, "") or "")


def _blob(strings: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    encoded = [s.encode("utf-8") for s in strings]
    off = np.zeros(len(encoded) + 1, np.int64)
    if encoded:
        np.cumsum([len(b) for b in encoded], out=off[1:])
    return np.frombuffer(b"".join(encoded), np.uint8).copy(), off


def _unblob(blob: np.ndarray, off: np.ndarray) -> list[str]:
    raw = blob.tobytes()
    o = off.tolist()
    return [raw[o[i] : o[i + 1]].decode("utf-8") for i in range(len(o) - 1)]


class GraphSegment:
    """An immutable graph: dense ids ``0..n-1``, kinds, titles, per-label CSR both ways.

    Build with :meth:`build` or :func:`apply`; persist with :meth:`to_bytes` / :meth:`write`;
    open with :meth:`from_bytes` / :meth:`load` / :meth:`open` (memory-mapped).
    """

    def __init__(self, arrays: Mapping[str, np.ndarray], meta: Mapping[str, Any]) -> None:
        self._a = dict(arrays)
        self.meta: dict[str, Any] = dict(meta)
        self.n_nodes: int = int(self.meta["nodes"])
        self.kind_names: tuple[str, ...] = tuple(self.meta["kinds"])
        self.dangling: int = int(self.meta["dangling"])
        self._kind = self._a["kind"]
        self._empty_indptr = np.zeros(self.n_nodes + 1, np.int32)
        self._empty = np.zeros(0, np.int32)
        self._id_of: dict[str, int] | None = None
        self._uids: list[str] | None = None
        self._titles: list[str] | None = None
        self._memo: dict[Any, Any] = {}
        self._validate()

    # -- construction -----------------------------------------------------------------------
    @classmethod
    def build(cls, nodes: Iterable[Node], titles: Titles = None) -> GraphSegment:
        """The graph of ``nodes`` (a later node with the same uid replaces an earlier one)."""
        by_uid: dict[str, Node] = {}
        for n in nodes:
            by_uid.pop(n.uid, None)
            by_uid[n.uid] = n
        title = _title_of(titles)
        recs = [(n.uid, n.kind, title(n)) for n in by_uid.values()]
        e_src: list[int] = []
        e_lab: list[int] = []
        e_dst: list[str] = []
        for pos, n in enumerate(by_uid.values()):
            for e in n.edges:
                e_src.append(pos)
                e_lab.append(LABEL_CODE[e.label])
                e_dst.append(e.dst)
        return _assemble(recs, e_src, e_lab, e_dst)

    # -- serialisation ----------------------------------------------------------------------
    def to_bytes(self) -> bytes:
        """The segment's canonical bytes (same graph -> same bytes)."""
        entries = []
        offset = 0
        for name in sorted(self._a):
            arr = np.ascontiguousarray(self._a[name])
            entries.append((name, arr, offset))
            offset += -(-arr.nbytes // ALIGN) * ALIGN
        header = {
            "format": GRAPH_FORMAT,
            "meta": self.meta,
            "arrays": [
                {"name": n, "dtype": a.dtype.str, "shape": list(a.shape), "offset": o}
                for n, a, o in entries
            ],
        }
        hjson = json.dumps(header, sort_keys=True, separators=(",", ":")).encode()
        start = -(-(len(MAGIC) + 8 + len(hjson)) // ALIGN) * ALIGN
        out = bytearray(start + offset)
        out[: len(MAGIC)] = MAGIC
        out[len(MAGIC) : len(MAGIC) + 8] = struct.pack("<Q", len(hjson))
        out[len(MAGIC) + 8 : len(MAGIC) + 8 + len(hjson)] = hjson
        for _, arr, o in entries:
            out[start + o : start + o + arr.nbytes] = arr.tobytes()
        return bytes(out)

    @classmethod
    def from_bytes(
        cls, data: bytes | memoryview | np.ndarray, *, source: str = "graph"
    ) -> GraphSegment:
        """Open a segment from bytes or a memory map (arrays are views, not copies)."""
        buf = np.frombuffer(data, np.uint8) if not isinstance(data, np.ndarray) else data
        try:
            if buf[: len(MAGIC)].tobytes() != MAGIC:
                raise ValueError("bad magic")
            (hlen,) = struct.unpack("<Q", buf[len(MAGIC) : len(MAGIC) + 8].tobytes())
            header = json.loads(buf[len(MAGIC) + 8 : len(MAGIC) + 8 + hlen].tobytes())
            if header.get("format") != GRAPH_FORMAT:
                raise ValueError(
                    f"format {header.get('format')}, this version reads {GRAPH_FORMAT}"
                )
            start = -(-(len(MAGIC) + 8 + hlen) // ALIGN) * ALIGN
            arrays: dict[str, np.ndarray] = {}
            for ent in header["arrays"]:
                dt = str(ent["dtype"])
                if dt not in _DTYPES:
                    raise ValueError(f"dtype {dt} not allowed")
                count = int(np.prod(ent["shape"], dtype=np.int64))
                off = start + int(ent["offset"])
                nbytes = count * np.dtype(dt).itemsize
                if off < start or off + nbytes > len(buf):
                    raise ValueError(f"array {ent['name']} out of bounds")
                arrays[str(ent["name"])] = buf[off : off + nbytes].view(dt).reshape(ent["shape"])
            return cls(arrays, header["meta"])
        except CorruptionError:
            raise
        except (ValueError, KeyError, TypeError, struct.error, UnicodeDecodeError) as e:
            raise CorruptionError(f"{source}: not a valid graph segment ({e})") from e

    @classmethod
    def load(cls, path: str | Path, *, mmap: bool = True) -> GraphSegment:
        """Open a segment file, memory-mapped by default."""
        p = Path(path)
        data: np.ndarray | bytes = (
            np.memmap(p, np.uint8, mode="r") if mmap and p.stat().st_size else p.read_bytes()
        )
        return cls.from_bytes(data, source=str(p))

    def write(self, store: RootStore) -> str:
        """Store the segment as a content-addressed object; returns its hash (``graph_obj``)."""
        return store.put_bytes(self.to_bytes())

    @classmethod
    def open(cls, store: RootStore, digest: str, *, mmap: bool = True) -> GraphSegment:
        """Open the segment object ``digest`` of ``store`` (memory-mapped by default)."""
        return cls.load(store.object_path(digest), mmap=mmap)

    # -- node index -------------------------------------------------------------------------
    def uid(self, id: int) -> str:
        o = self._a["uid.off"]
        return self._a["uid.blob"][int(o[id]) : int(o[id + 1])].tobytes().decode("utf-8")

    def title(self, id: int) -> str:
        o = self._a["title.off"]
        return self._a["title.blob"][int(o[id]) : int(o[id + 1])].tobytes().decode("utf-8")

    def kind(self, id: int) -> str:
        return self.kind_names[int(self._kind[id])]

    def id_of(self, uid: str) -> int | None:
        """The id of ``uid``, or ``None`` when the graph has no such node."""
        if self._id_of is None:
            self._id_of = {u: i for i, u in enumerate(self.uids())}
        return self._id_of.get(uid)

    def uids(self) -> list[str]:
        """Every uid, by id (sorted)."""
        if self._uids is None:
            self._uids = _unblob(self._a["uid.blob"], self._a["uid.off"])
        return self._uids

    def titles(self) -> list[str]:
        """Every title, by id."""
        if self._titles is None:
            self._titles = _unblob(self._a["title.blob"], self._a["title.off"])
        return self._titles

    def ids_of_kind(self, kind: str) -> np.ndarray:
        """Ids of the nodes of ``kind`` (empty for an unknown kind)."""
        key = ("kind", kind)
        if key not in self._memo:
            try:
                code = self.kind_names.index(kind)
            except ValueError:
                self._memo[key] = self._empty
            else:
                self._memo[key] = np.flatnonzero(self._kind == code).astype(np.int32)
        out: np.ndarray = self._memo[key]
        return out

    def memo(self, key: Any, factory: Callable[[], Any]) -> Any:
        """A derived, read-only index of this segment, computed once (e.g. a title index)."""
        if key not in self._memo:
            self._memo[key] = factory()
        return self._memo[key]

    # -- adjacency --------------------------------------------------------------------------
    def csr(self, label: str, direction: Direction) -> tuple[np.ndarray, np.ndarray]:
        """``(indptr, indices)`` of ``label`` in ``direction`` (empty arrays when absent)."""
        ip = self._a.get(f"{direction}.{label}.indptr")
        if ip is None:
            return self._empty_indptr, self._empty
        return ip, self._a[f"{direction}.{label}.indices"]

    def out(self, id: int, label: str) -> np.ndarray:
        """Destinations of ``id -[label]->`` (sorted)."""
        ip, ix = self.csr(label, "out")
        return ix[int(ip[id]) : int(ip[id + 1])]

    def in_(self, id: int, label: str) -> np.ndarray:
        """Sources of ``-[label]-> id`` (sorted)."""
        ip, ix = self.csr(label, "in")
        return ix[int(ip[id]) : int(ip[id + 1])]

    def edges(self) -> Iterator[tuple[str, str, str]]:
        """Every traversable edge as ``(src uid, label, dst uid)``, by src id then label."""
        uids = self.uids()
        for src in range(self.n_nodes):
            for label in EDGE_LABELS:
                for dst in self.out(src, label).tolist():
                    yield uids[src], label, uids[dst]

    def dangling_edges(self) -> Iterator[tuple[str, str, str]]:
        """Edges dropped because their destination is absent, as ``(src uid, label, dst)``."""
        labels = self.meta["labels"]
        dst = _unblob(self._a["dangling.blob"], self._a["dangling.off"])
        for s, lab, d in zip(
            self._a["dangling.src"].tolist(), self._a["dangling.label"].tolist(), dst, strict=True
        ):
            yield self.uid(s), labels[lab], d

    # -- counts -----------------------------------------------------------------------------
    @property
    def n_edges(self) -> int:
        return int(sum(self.count_by_label().values()))

    def count_by_label(self) -> dict[str, int]:
        """Traversable edges per label (labels without edges are left out)."""
        return {
            label: int(self.csr(label, "out")[1].shape[0])
            for label in EDGE_LABELS
            if self.csr(label, "out")[1].shape[0]
        }

    def count_by_kind(self) -> dict[str, int]:
        counts = np.bincount(self._kind, minlength=len(self.kind_names)).tolist()
        return {k: int(c) for k, c in zip(self.kind_names, counts, strict=True) if c}

    def __len__(self) -> int:
        return self.n_nodes

    def __repr__(self) -> str:
        return f"GraphSegment(nodes={self.n_nodes}, edges={self.n_edges}, dangling={self.dangling})"

    # -- checks -----------------------------------------------------------------------------
    def _validate(self) -> None:
        n = self.n_nodes
        a = self._a
        bad: str | None = None
        if a["uid.off"].shape != (n + 1,) or a["title.off"].shape != (n + 1,):
            bad = "offset arrays do not match the node count"
        elif a["kind"].shape != (n,) or (n and int(a["kind"].max()) >= len(self.kind_names)):
            bad = "kind codes out of range"
        elif int(a["uid.off"][-1]) > a["uid.blob"].shape[0]:
            bad = "uid blob truncated"
        elif int(a["title.off"][-1]) > a["title.blob"].shape[0]:
            bad = "title blob truncated"
        else:
            for name in a:
                if not name.endswith(".indptr"):
                    continue
                ip, ix = a[name], a[name[: -len("indptr")] + "indices"]
                if ip.shape != (n + 1,) or int(ip[0]) != 0 or int(ip[-1]) != ix.shape[0]:
                    bad = f"{name} does not match its indices"
                elif ix.shape[0] and (int(ix.min()) < 0 or int(ix.max()) >= n):
                    bad = f"{name[:-7]}indices out of range"
                elif n and int(np.diff(ip).min()) < 0:
                    bad = f"{name} is not monotone"
                if bad:
                    break
        if bad:
            raise CorruptionError(f"graph segment is corrupt: {bad}")


def _assemble(
    recs: Sequence[tuple[str, str, str]],
    e_src: Sequence[int],
    e_lab: Sequence[int],
    e_dst: Sequence[str],
) -> GraphSegment:
    """Records ``(uid, kind, title)`` + edges (src position, label code, dst uid) -> segment."""
    n = len(recs)
    order = sorted(range(n), key=lambda p: recs[p][0])
    new_id = np.empty(n, np.int64)
    new_id[order] = np.arange(n)
    uids = [recs[p][0] for p in order]
    id_of = {u: i for i, u in enumerate(uids)}
    kinds = sorted({r[1] for r in recs})
    kind_code = {k: i for i, k in enumerate(kinds)}

    arrays: dict[str, np.ndarray] = {}
    arrays["uid.blob"], arrays["uid.off"] = _blob(uids)
    arrays["title.blob"], arrays["title.off"] = _blob([recs[p][2] for p in order])
    arrays["kind"] = np.array([kind_code[recs[p][1]] for p in order], np.int32)

    src = new_id[np.asarray(e_src, np.int64)] if len(e_src) else np.zeros(0, np.int64)
    lab = np.asarray(e_lab, np.int64)
    dst = np.array([id_of.get(u, -1) for u in e_dst], np.int64)
    live = dst >= 0
    span = max(n, 1)
    for label, code in LABEL_CODE.items():
        sel = live & (lab == code)
        if not sel.any():
            continue
        s, d = src[sel], dst[sel]
        fwd = np.unique(s * span + d)  # dedupes repeated edges; sorted by (src, dst)
        rev = np.unique(d * span + s)  # sorted by (dst, src)
        for direction, keys in (("out", fwd), ("in", rev)):
            head, tail = keys // span, keys % span
            indptr = np.zeros(n + 1, np.int32)
            np.cumsum(np.bincount(head, minlength=n), out=indptr[1:])
            arrays[f"{direction}.{label}.indptr"] = indptr
            arrays[f"{direction}.{label}.indices"] = tail.astype(np.int32)

    # Dangling edges: unique, sorted by (src, label, dst uid) so the bytes are canonical.
    dang = sorted({(int(src[i]), int(lab[i]), e_dst[i]) for i in np.flatnonzero(~live).tolist()})
    arrays["dangling.src"] = np.array([d[0] for d in dang], np.int32)
    arrays["dangling.label"] = np.array([d[1] for d in dang], np.int8)
    arrays["dangling.blob"], arrays["dangling.off"] = _blob([d[2] for d in dang])
    meta = {
        "nodes": n,
        "kinds": kinds,
        "labels": list(EDGE_LABELS),
        "dangling": len(dang),
    }
    # Normalise dtypes to the explicit little-endian forms the format names.
    for name, arr in arrays.items():
        if arr.dtype == np.int64:
            arrays[name] = arr.astype("<i8")
        elif arr.dtype == np.int32:
            arrays[name] = arr.astype("<i4")
    return GraphSegment(arrays, meta)


def apply(
    base: GraphSegment | None,
    added: Sequence[Node],
    removed_uids: Collection[str],
    titles: Titles = None,
) -> GraphSegment:
    """The graph after a publish: ``base`` minus ``removed_uids``, with ``added`` put in.

    An added node whose uid exists replaces it (its out-edges are replaced); edges into a
    removed node leave the adjacency (they wait as dangling edges in case it comes back).
    Equal, byte for byte, to :meth:`GraphSegment.build` of the resulting live nodes.
    """
    if base is None:
        return GraphSegment.build([n for n in added if n.uid not in removed_uids], titles)
    dropped = set(removed_uids)
    new_nodes: dict[str, Node] = {}
    for n in added:
        new_nodes.pop(n.uid, None)
        new_nodes[n.uid] = n
    for uid in dropped:
        new_nodes.pop(uid, None)
    gone = dropped | set(new_nodes)

    uids = base.uids()
    titles_base = base.titles()
    keep = [i for i, u in enumerate(uids) if u not in gone]
    pos_of = {old: p for p, old in enumerate(keep)}
    recs: list[tuple[str, str, str]] = [(uids[i], base.kind(i), titles_base[i]) for i in keep]
    e_src: list[int] = []
    e_lab: list[int] = []
    e_dst: list[str] = []
    keep_mask = np.zeros(base.n_nodes, bool)
    keep_mask[keep] = True
    for label, code in LABEL_CODE.items():
        ip, ix = base.csr(label, "out")
        if not ix.shape[0]:
            continue
        srcs = np.repeat(np.arange(base.n_nodes), np.diff(ip))
        sel = keep_mask[srcs]
        for s, d in zip(srcs[sel].tolist(), ix[sel].tolist(), strict=True):
            e_src.append(pos_of[s])
            e_lab.append(code)
            e_dst.append(uids[d])
    d_src = base._a["dangling.src"].tolist()
    d_lab = base._a["dangling.label"].tolist()
    d_dst = _unblob(base._a["dangling.blob"], base._a["dangling.off"])
    base_labels = base.meta["labels"]
    for s, lab, d in zip(d_src, d_lab, d_dst, strict=True):
        if keep_mask[s]:
            e_src.append(pos_of[s])
            e_lab.append(LABEL_CODE[base_labels[lab]])
            e_dst.append(d)
    title = _title_of(titles)
    for n in new_nodes.values():
        pos = len(recs)
        recs.append((n.uid, n.kind, title(n)))
        for e in n.edges:
            e_src.append(pos)
            e_lab.append(LABEL_CODE[e.label])
            e_dst.append(e.dst)
    return _assemble(recs, e_src, e_lab, e_dst)


def write_graph_segment(store: RootStore, graph: GraphSegment) -> dict[str, Any]:
    """Store ``graph``; returns its manifest entry (``graph_obj`` plus counts)."""
    return {
        "graph_obj": graph.write(store),
        "nodes": graph.n_nodes,
        "edges": graph.n_edges,
        "dangling": graph.dangling,
    }


def publish_graph(
    store: RootStore, entry: Mapping[str, Any], adds: Sequence[Node], removed: Collection[str]
) -> dict[str, Any]:
    """The graph entry after a write: the graph of ``entry`` (empty: none yet) with ``adds``
    put in and ``removed`` taken out, plus the alias table (alias or redirect path -> uid)
    that ``resolve_xref`` reads (``aliases_obj``). Unchanged: ``entry`` itself."""
    if entry and not adds and not removed:
        return dict(entry)
    prev = GraphSegment.open(store, entry["graph_obj"]) if entry else None
    graph = apply(prev, adds, set(removed), titles=None)
    aliases = read_aliases(store, entry)
    gone = set(removed) | {n.uid for n in adds}
    aliases = {a: u for a, u in aliases.items() if u not in gone}
    for n in adds:
        for alias in n.meta.get("aliases", ()) if isinstance(n.meta, Mapping) else ():
            if isinstance(alias, str) and alias:
                aliases[alias] = n.uid
    out = write_graph_segment(store, graph)
    out["aliases_obj"] = store.put_bytes(
        json.dumps(aliases, sort_keys=True, ensure_ascii=False).encode()
    )
    return out


def read_aliases(store: RootStore, entry: Mapping[str, Any] | None) -> dict[str, str]:
    """The alias table a graph entry names (empty when it names none)."""
    obj = (entry or {}).get("aliases_obj")
    return json.loads(store.get_bytes(obj)) if obj else {}
