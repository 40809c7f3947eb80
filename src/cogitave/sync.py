"""Sources: which nodes came from where, and what re-indexing a source must change.

A source is what one ``cogitave index ... SOURCE`` names (its id: the resolved path, or the
name given with ``--source``). Each root records, per source, the uids it produced and a hash
of each node's record (``sources`` in the manifest: one JSON object per source), so a
re-index decides "unchanged" by hashing, without reading or embedding anything again.

:func:`plan` turns (the recorded map, what the source holds now) into adds and deletes: new
uids are added, changed ones replaced, vanished ones deleted, unchanged ones left alone.
:func:`watch` calls back once per burst of file changes under a source.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cogitave.nodes import Node
from cogitave.store.manifest import Manifest
from cogitave.store.roots import RootStore

SourceMap = dict[str, str]
"""uid -> node hash, for one source."""


def node_hash(node: Node) -> str:
    """A hash of everything a node stores (dims, content, edges, meta): equal hashes, equal
    nodes. Computed on the JSON record, so a node read back from a segment hashes the same."""
    rec = json.dumps(node.to_record(), sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(rec.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def read_sources(store: RootStore, manifest: Manifest) -> dict[str, SourceMap]:
    """Every source recorded in a root: name -> {uid: hash}."""
    out: dict[str, SourceMap] = {}
    for name, entry in manifest.sources.items():
        out[name] = json.loads(store.get_bytes(entry["map_obj"], verify=False))
    return out


def source_sizes(manifest: Manifest) -> dict[str, int]:
    """Every source recorded in a root: name -> how many nodes it produced."""
    return {name: int(entry["nodes"]) for name, entry in manifest.sources.items()}


def write_sources(
    store: RootStore,
    base: Manifest,
    sources: Mapping[str, SourceMap],
    changed: Iterable[str],
    attached: Mapping[str, Mapping[str, bytes]] | None = None,
) -> dict[str, dict[str, Any]]:
    """The source table of a new root: the base's entries, with ``changed`` sources
    rewritten (an empty source is dropped). ``attached``: per source, objects kept with its
    entry as ``<name>_obj`` (a crawl's state and report); a rewritten entry keeps the
    objects it had unless new ones replace them."""
    entries: dict[str, dict[str, Any]] = dict(base.sources)
    for name in set(changed):
        m = sources.get(name) or {}
        if not m:
            entries.pop(name, None)
            continue
        data = json.dumps(m, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
        kept = {k: v for k, v in entries.get(name, {}).items() if k not in ("map_obj", "nodes")}
        entry = {**kept, "map_obj": store.put_bytes(data.encode()), "nodes": len(m)}
        for key, blob in ((attached or {}).get(name) or {}).items():
            entry[f"{key}_obj"] = store.put_bytes(blob)
        entries[name] = entry
    return entries


def source_object(store: RootStore, manifest: Manifest, source: str, key: str) -> bytes | None:
    """The object ``key`` (``state``, ``report``, ``identity``) kept with ``source``'s
    entry, or None."""
    digest = (manifest.sources.get(source) or {}).get(f"{key}_obj")
    return store.get_bytes(digest) if isinstance(digest, str) else None


@dataclass(frozen=True)
class SourceUpdate:
    """What a source holds now. ``add_only``: keep nodes it no longer holds (a stream of
    records appended to)."""

    name: str
    nodes: Sequence[Node]
    add_only: bool = False
    state: bytes | None = None
    """What the next sync of the source starts from (a crawl's validators and pages): kept
    with the source's entry; a new state alone publishes a root."""
    report: bytes | None = None
    """The report of the read, kept with the root this sync publishes (none: none kept)."""
    identity: bytes | None = None
    """The library the source documents (JSON: name, version, commit, read from its
    metadata): kept with the source's entry; a new identity alone publishes a root."""

    def attached(self) -> dict[str, dict[str, bytes]]:
        """The objects this update keeps with its source's entry."""
        pairs = (("state", self.state), ("report", self.report), ("identity", self.identity))
        blobs = {k: v for k, v in pairs if v}
        return {self.name: blobs} if blobs else {}


@dataclass
class Plan:
    """The changes one sync makes, by uid."""

    adds: list[Node] = field(default_factory=list)
    added: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    unchanged: int = 0
    adopted: int = 0
    sources: dict[str, SourceMap] = field(default_factory=dict)
    touched: set[str] = field(default_factory=set)

    @property
    def empty(self) -> bool:
        """No node changes and no source map changes: nothing to publish."""
        return not self.adds and not self.deleted and not self.touched


def plan(
    sources: Mapping[str, SourceMap],
    update: SourceUpdate,
    live_hash: Callable[[str], str | None],
) -> Plan:
    """The adds and deletes that make ``update.name``'s part of the collection equal to
    ``update.nodes``. ``live_hash(uid)`` is the hash of the live node with that uid (None when
    absent): a node already live and equal is adopted by the source, not written again (a
    collection indexed before sources were recorded)."""
    old = sources.get(update.name, {})
    new: SourceMap = {}
    latest: dict[str, Node] = {}
    for n in update.nodes:  # a uid given twice: the last one wins, as in Collection.add
        latest[n.uid] = n
    out = Plan(sources={k: dict(v) for k, v in sources.items()})
    owners = {u: s for s, m in sources.items() if s != update.name for u in m}
    for uid, n in latest.items():
        h = node_hash(n)
        new[uid] = h
        if old.get(uid) == h:
            out.unchanged += 1
            continue
        if uid not in old and uid not in owners and live_hash(uid) == h:
            out.adopted += 1
            out.unchanged += 1
            continue
        out.adds.append(n)
        (out.changed if uid in old or live_hash(uid) is not None else out.added).append(uid)
        if uid in owners:  # the uid moves to this source
            out.sources[owners[uid]].pop(uid, None)
            out.touched.add(owners[uid])
    if update.add_only:
        new = {**old, **new}
    else:
        out.deleted = sorted(u for u in old if u not in new)
    if new != old:
        out.touched.add(update.name)
    out.sources[update.name] = new
    return out


def forget(sources: dict[str, SourceMap], uids: Iterable[str]) -> set[str]:
    """Remove deleted uids from every source; returns the sources changed."""
    gone = set(uids)
    touched = set()
    for name, m in sources.items():
        if gone & m.keys():
            for u in gone & m.keys():
                del m[u]
            touched.add(name)
    return touched


def rehash(sources: dict[str, SourceMap], adds: Iterable[Node]) -> set[str]:
    """Record the new hash of nodes replaced outside a sync in the source that owns them (so
    the next sync of that source puts its own version back); returns the sources changed."""
    owner = {u: s for s, m in sources.items() for u in m}
    touched = set()
    for n in adds:
        if n.uid in owner:
            sources[owner[n.uid]][n.uid] = node_hash(n)
            touched.add(owner[n.uid])
    return touched


def watch(
    source: Path,
    on_burst: Callable[[set[Path]], None],
    *,
    ignore: Sequence[Path] = (),
    stop: threading.Event | None = None,
    quiet_ms: int = 300,
    max_ms: int = 3000,
) -> None:
    """Call ``on_burst(changed paths)`` once per burst of changes under ``source`` (a folder,
    or a file: then its folder, filtered to it), until ``stop`` is set. A burst ends after
    ``quiet_ms`` without a change, or ``max_ms`` after it began; paths under ``ignore`` (the
    collection, when it lives inside the source) and the usual editor/VCS noise never count."""
    from watchfiles import DefaultFilter
    from watchfiles import watch as watch_paths

    source = source.resolve()
    folder = source if source.is_dir() else source.parent
    skip = [p.resolve() for p in ignore]
    noise = DefaultFilter()

    def wanted(change: Any, path: str) -> bool:
        p = Path(path)
        if not noise(change, path) or any(p.is_relative_to(s) for s in skip):
            return False
        return folder == source or p == source

    for changes in watch_paths(
        folder,
        watch_filter=wanted,
        debounce=max_ms,
        step=quiet_ms,
        stop_event=stop,
        raise_interrupt=True,
    ):
        on_burst({Path(p) for _, p in changes})
