"""Node segments: the stored records of the nodes one publish added, and the live-node view.

A node segment is immutable and names these objects:

- ``nodes_obj``: the node records as JSON lines (what the content API returns);
- ``offsets_obj``: ``int64`` byte offsets of each record (n + 1 entries) for random access;
- ``nids_obj``: ``uint64`` internal ids of the records, in row order;
- ``deletes_obj``: ``uint64`` ids this publish removed (deleted or replaced nodes);
- ``uids_obj``: the records' uids, newline-joined (loads without parsing the records);
- ``facts_obj`` and ``facts_offsets_obj``: per record, ``[kind, path, url, title]`` as JSON
  lines (:class:`~cogitave.nodes.NodeFacts`) and their ``int64`` byte offsets: what the
  ranking stages read of a candidate (its page, its kind), a short line against a record of
  a few kilobytes; absent in roots written before them (the records are parsed instead);
- ``terms``: per lexical field, the forward term index of the records (``keys_obj``, see
  :mod:`cogitave.store.terms`); absent in roots written before that index.

Internal ids (nids) grow monotonically across publishes, so an update is a new nid for the same
uid and the old nid is dead forever: a deleted or replaced version can never come back.
:class:`NodeTable` joins all segments of a root into arrays indexed by nid.
"""

from __future__ import annotations

import io
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np

from cogitave.errors import CorruptionError
from cogitave.nodes import Node, NodeFacts
from cogitave.schema import Schema
from cogitave.store.arrays import load_npy, npy_bytes
from cogitave.store.roots import RootStore
from cogitave.store.terms import write_terms


def write_node_segment(
    store: RootStore,
    nodes: Sequence[Node],
    nids: np.ndarray,
    deletes: np.ndarray,
    schema: Schema,
) -> dict[str, Any]:
    """Store one publish's node records and their term arrays; returns the segment's manifest
    entry."""
    buf = io.BytesIO()
    offsets = np.zeros(len(nodes) + 1, np.int64)
    records = [node.to_record() for node in nodes]
    for i, rec in enumerate(records):
        buf.write(json.dumps(rec, ensure_ascii=False, separators=(",", ":")).encode())
        buf.write(b"\n")
        offsets[i + 1] = buf.tell()
    entry: dict[str, Any] = {
        "count": len(nodes),
        "nodes_obj": store.put_bytes(buf.getvalue()),
        "offsets_obj": store.put_bytes(npy_bytes(offsets)),
        "nids_obj": store.put_bytes(npy_bytes(np.asarray(nids, np.uint64))),
        # uids have no line breaks (ingest validates), so one blob loads without JSON parsing.
        "uids_obj": store.put_bytes("\n".join(n.uid for n in nodes).encode()),
        "deletes_obj": store.put_bytes(npy_bytes(np.asarray(deletes, np.uint64))),
        **write_facts(store, records),
    }
    terms = write_terms(store, schema, nodes, nids)
    if terms is not None:
        entry["terms"] = terms
    return entry


def write_facts(store: RootStore, records: Sequence[Mapping[str, Any]]) -> dict[str, str]:
    """The facts lines of a segment's records and their offsets (the entry's two keys)."""
    buf = io.BytesIO()
    offsets = np.zeros(len(records) + 1, np.int64)
    for i, rec in enumerate(records):
        facts = NodeFacts.of_record(rec)[1:]  # the uid is in ``uids_obj``
        buf.write(json.dumps(facts, ensure_ascii=False, separators=(",", ":")).encode())
        buf.write(b"\n")
        offsets[i + 1] = buf.tell()
    return {
        "facts_obj": store.put_bytes(buf.getvalue()),
        "facts_offsets_obj": store.put_bytes(npy_bytes(offsets)),
    }


def backfill_facts(store: RootStore, segments: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Node segment entries with facts lines added where they are missing (segments written
    before them), from their stored records."""
    out: list[dict[str, Any]] = []
    for seg in segments:
        entry = dict(seg)
        if "facts_obj" not in entry:
            data = store.get_bytes(entry["nodes_obj"]) if entry["count"] else b""
            entry.update(write_facts(store, [json.loads(line) for line in data.splitlines()]))
        out.append(entry)
    return out


def _mapped(store: RootStore, digest: str) -> np.ndarray:
    """An object's bytes, memory-mapped, as a plain array: slicing a ``np.memmap`` costs
    about 5 us of subclass bookkeeping per slice, most of reading a short line."""
    return np.memmap(store.object_path(digest), np.uint8, mode="r").view(np.ndarray)


@dataclass
class _Segment:
    data: np.ndarray  # memory-mapped JSONL bytes
    offsets: np.ndarray
    nids: np.ndarray
    # the memory-mapped facts lines (a view: its slices join without copies) and their
    # offsets; None in a segment written before them
    facts: memoryview | None = None
    fact_offsets: np.ndarray | None = None


class NodeTable:
    """Every node of a root by nid: liveness, uid, and record access."""

    def __init__(self, store: RootStore, segments: Sequence[dict[str, Any]], next_nid: int):
        self.segments: list[_Segment] = []
        self.alive = np.zeros(next_nid, bool)
        self.seg_of = np.full(next_nid, -1, np.int32)
        self.row_of = np.zeros(next_nid, np.int64)
        dead: list[np.ndarray] = []
        uid_lists: list[tuple[np.ndarray, list[str]]] = []
        for si, seg in enumerate(segments):
            nids = load_npy(store, seg["nids_obj"], mmap=False).astype(np.int64)
            if len(nids) and (nids.min() < 0 or nids.max() >= next_nid):
                p = store.object_path(seg["nids_obj"])
                raise CorruptionError(f"node ids out of range in {p}", details={"file": str(p)})
            data = _mapped(store, seg["nodes_obj"]) if seg["count"] else np.zeros(0, np.uint8)
            offsets = load_npy(store, seg["offsets_obj"], mmap=False)
            part = _Segment(data, offsets, nids)
            if "facts_obj" in seg and seg["count"]:
                part.facts = memoryview(_mapped(store, seg["facts_obj"]))
                part.fact_offsets = load_npy(store, seg["facts_offsets_obj"], mmap=False)
            self.segments.append(part)
            uids = store.get_bytes(seg["uids_obj"]).decode().split("\n") if seg["count"] else []
            uid_lists.append((nids, uids))
            self.alive[nids] = True
            self.seg_of[nids] = si
            self.row_of[nids] = np.arange(len(nids))
            dead.append(load_npy(store, seg["deletes_obj"], mmap=False).astype(np.int64))
        if dead:
            d = np.concatenate(dead)
            if len(d) and (d.min() < 0 or d.max() >= next_nid):
                raise CorruptionError("deleted node ids out of range in a node segment")
            self.alive[d] = False
        self.uid_of: dict[int, str] = {}
        self.nid_of: dict[str, int] = {}
        self._cache: dict[int, Node] = {}
        for nids, uids in uid_lists:
            live = self.alive[nids]
            for nid, uid, ok in zip(nids.tolist(), uids, live.tolist(), strict=True):
                if ok:
                    self.uid_of[nid] = uid
                    self.nid_of[uid] = nid

    @cached_property
    def uid_rank(self) -> np.ndarray:
        """Per nid, the rank of its uid among the live uids in sorted order (dead nids rank
        last): the deterministic tie-break as one integer array, built once per root."""
        rank = np.full(len(self.alive), len(self.nid_of), np.int64)
        uids = sorted(self.nid_of)
        rank[np.fromiter((self.nid_of[u] for u in uids), np.int64, len(uids))] = np.arange(
            len(uids)
        )
        return rank

    @property
    def live_count(self) -> int:
        return len(self.nid_of)

    def record(self, nid: int) -> dict[str, Any]:
        seg = self.segments[int(self.seg_of[nid])]
        row = int(self.row_of[nid])
        raw = seg.data[int(seg.offsets[row]) : int(seg.offsets[row + 1])].tobytes()
        rec: dict[str, Any] = json.loads(raw)
        return rec

    def facts_of(self, nids: Sequence[int]) -> list[NodeFacts]:
        """The ranking facts of live nids: their segments' facts lines, parsed as one JSON
        array (one parse of 200 lines costs what a few parses of one do), or their records
        in segments written before facts were kept."""
        ids = np.asarray(nids, np.int64).reshape(-1)
        segs, rows = self.seg_of[ids].tolist(), self.row_of[ids].tolist()
        uids = [self.uid_of.get(nid) for nid in ids.tolist()]
        out: list[NodeFacts | None] = [None] * len(ids)
        lines: list[memoryview] = []
        at: list[int] = []
        for i, (si, row, uid) in enumerate(zip(segs, rows, uids, strict=True)):
            seg = self.segments[si]
            if seg.facts is None or seg.fact_offsets is None or uid is None:
                out[i] = NodeFacts.of_record(self.record(int(ids[i])))
                continue
            lo, hi = seg.fact_offsets[row : row + 2].tolist()
            lines.append(seg.facts[lo : hi - 1])  # without its newline
            at.append(i)
        if lines:
            parsed = json.loads(b"[" + b",".join(lines) + b"]")
            for i, (kind, path, url, title) in zip(at, parsed, strict=True):
                out[i] = NodeFacts(uids[i], kind, path, url, title)  # type: ignore[arg-type]
        return [f for f in out if f is not None]

    def node(self, nid: int) -> Node:
        n = self._cache.get(nid)
        if n is None:
            n = Node.from_record(self.record(nid))
            if len(self._cache) > 4096:
                self._cache.clear()
            self._cache[nid] = n
        return n

    def live_nids(self) -> np.ndarray:
        return np.flatnonzero(self.alive).astype(np.uint64)
