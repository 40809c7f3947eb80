"""Publish: pending adds and deletes + the HEAD root -> new segments -> a new content root.

The write path, in order (a crash at any step leaves HEAD on the previous, whole root):

1. take the writer lock; read HEAD (a publish always applies on top of the current HEAD);
2. resolve deletes and replacements to the nids they kill (a sync first plans them: the
   source's recorded uid -> hash map against what it holds now, see :mod:`cogitave.sync`;
   nothing changed, no root);
3. lexical: hard-link the previous segment files, delete by uid, add, commit, store files;
4. node segment: records, offsets, nids, deletes, facts lines, forward term index;
5. write-time expansion: statistics delta (+ added, - removed), applied to the previous ones;
   per-dimension embeddings of the added nodes (the collection's encoder, behind the
   collection's text -> vector cache: :mod:`cogitave.store.textvecs`) into vector
   segments, kept to a few per dimension by a tiered merge policy (``compact`` merges each
   dimension into one; see :mod:`cogitave.store.vectors`);
6. manifest -> ``roots/<sha256>.json``; then HEAD moves (write temp, fsync, rename, fsync dir);
7. retention drops roots past the retained count and unreferenced objects.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from cogitave.config import Settings
from cogitave.errors import CorruptionError, EncoderError, SchemaError
from cogitave.expand.embed import (
    Encoder,
    check_identity,
    encoder_identity,
    l2_normalize,
    load_encoder,
    recorded_graph,
    same_encoder,
)
from cogitave.expand.stats import CorpusStats, StatsBuilder
from cogitave.nodes import Node
from cogitave.schema import WHOLE, Schema
from cogitave.store.graph import publish_graph
from cogitave.store.lexical import LexicalWriter
from cogitave.store.manifest import Manifest
from cogitave.store.nodes import NodeTable, backfill_facts, write_node_segment
from cogitave.store.roots import DEFAULT_RETENTION, RootStore, sha256_bytes
from cogitave.store.terms import backfill_terms
from cogitave.store.textvecs import TextVectors
from cogitave.store.vectors import write_vectors
from cogitave.sync import SourceUpdate, forget, node_hash, plan, read_sources, rehash, write_sources
from cogitave.texts import (
    CONTEXT_WEIGHT,
    DEFAULT_TEXTS,
    PLAIN,
    check_node,
    embed_texts,
    mixed_context,
    texts_recipe,
    vector_dims,
)

Progress = Callable[[str, int, int], None]
"""``progress(stage, done, total)``: called as long stages advance."""


def _noop(stage: str, done: int, total: int) -> None:
    return None


def empty_manifest(
    schema: Schema, encoder: Encoder | None = None, settings: Settings | None = None
) -> Manifest:
    """The first root of a collection: its schema, encoder (or none), settings, no nodes."""
    return Manifest.first(
        schema.to_dict(),
        schema.hash(),
        (settings or Settings()).to_dict(),
        {**encoder_identity(encoder), "texts": DEFAULT_TEXTS} if encoder else None,
    )


@dataclass
class Published:
    """What one publish or sync did. ``root`` is None when nothing changed (no new root)."""

    root: str | None
    added: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    unchanged: int = 0
    encoded: int = 0
    reused: int = 0


def publish(
    store: RootStore,
    adds: Sequence[Node],
    deletes: Sequence[str],
    *,
    schema: Schema | None = None,
    progress: Progress | None = None,
    retention: int = DEFAULT_RETENTION,
    compact: bool = False,
    embedded: Mapping[str, np.ndarray] | None = None,
) -> str:
    """Apply ``adds`` (new or replacing nodes) and ``deletes`` (uids) on top of HEAD and publish
    a new root. ``schema`` is required for the first publish of a collection.

    ``compact`` also rewrites each dimension's vectors as one segment of its live rows (a
    force-merge) and adds the forward term index and the facts lines to node segments written
    before them; with no adds or deletes the other parts of the root are reused as they are.
    ``embedded`` maps texts to vectors already made by the collection's encoder (a distributed
    build embeds on its workers); texts it lacks are encoded here."""
    with store.writer_lock():
        base_id, base = _base(store, schema)
        sources = read_sources(store, base)
        gone = set(deletes) - {n.uid for n in adds}
        touched = forget(sources, gone) | rehash(sources, adds)
        res = _write(
            store,
            base_id,
            base,
            adds,
            deletes,
            progress,
            retention,
            write_sources(store, base, sources, touched),
            compact=compact,
            embedded=embedded,
        )
        assert res.root is not None
        return res.root


def sync(
    store: RootStore,
    update: SourceUpdate,
    *,
    schema: Schema | None = None,
    progress: Progress | None = None,
    retention: int = DEFAULT_RETENTION,
) -> Published:
    """Make the part of the collection that came from ``update.name`` equal to what the
    source holds now (see :func:`cogitave.sync.plan`), on top of HEAD. Nothing changed: no
    new root (``root`` is None)."""
    with store.writer_lock():
        base_id, base = _base(store, schema)
        sources = read_sources(store, base)
        table = NodeTable(store, base.segments, base.next_nid)

        def live_hash(uid: str) -> str | None:
            nid = table.nid_of.get(uid)
            return None if nid is None else node_hash(Node.from_record(table.record(nid)))

        p = plan(sources, update, live_hash)
        entry = base.sources.get(update.name) or {}
        for key, blob in (("state", update.state), ("identity", update.identity)):
            if blob is not None and entry.get(f"{key}_obj") != sha256_bytes(blob):
                p.touched.add(update.name)  # the next sync starts from the new state
        out = Published(None, p.added, p.changed, p.deleted, p.unchanged)
        if p.empty:
            return out
        entries = write_sources(store, base, p.sources, p.touched, update.attached())
        res = _write(store, base_id, base, p.adds, p.deleted, progress, retention, entries)
        out.root, out.encoded, out.reused = res.root, res.encoded, res.reused
        return out


def configure(store: RootStore, settings: Settings, retention: int = DEFAULT_RETENTION) -> str:
    """Publish HEAD again with other settings: nothing is re-indexed or re-embedded (the
    settings are read at query time). Settings equal to HEAD's write no root; HEAD's id is
    returned."""
    with store.writer_lock():
        base_id, base = _base(store, None)
        assert base_id is not None  # _base raised for a missing collection
        if Settings.from_dict(base.settings) == settings:
            return base_id
        rid = store.write_root(
            base.with_(created=None, parent=base_id, settings=settings.to_dict())
        )
        store.set_head(rid)
        store.retain(retention)
        return rid


def reembed(
    store: RootStore,
    encoder: str,
    *,
    progress: Progress | None = None,
    retention: int = DEFAULT_RETENTION,
) -> tuple[str, bool]:
    """Publish HEAD again with ``encoder`` as the collection's encoder and every vector made
    by it: all live nodes' texts are encoded anew (nothing is reused from another encoder:
    the text -> vector cache starts empty), each dimension in one segment; nodes, indexes,
    settings and sources are unchanged. One root never holds two encoders' vectors. Returns
    (root id, whether a root was written): the encoder HEAD already has writes none."""
    progress = progress or _noop
    enc = load_encoder(encoder)
    identity = {**encoder_identity(enc), "texts": DEFAULT_TEXTS}
    with store.writer_lock():
        base_id, base = _base(store, None)
        assert base_id is not None  # _base raised for a missing collection
        current = (base.encoder or {}).get("texts", PLAIN) == DEFAULT_TEXTS
        if same_encoder(base.encoder, enc) and current:
            return base_id, False
        schema = Schema.from_dict(base.schema)
        table = NodeTable(store, base.segments, base.next_nid)
        nids = np.flatnonzero(table.alive).astype(np.uint64)
        nodes = [Node.from_record(table.record(int(n))) for n in nids.tolist()]
        moved = base.with_(encoder=identity, vectors={}, text_vectors=None)
        cache = TextVectors(store, None, enc.name)
        vectors = _embed(
            store, schema, moved, nodes, nids, table.alive, progress, cache, compact=True
        )
        manifest = moved.with_(
            created=None, parent=base_id, vectors=vectors, text_vectors=cache.entry()
        ).with_counts(
            nodes=int(base.counts.get("nodes", len(nodes))),
            edges=int(base.counts.get("edges", 0)),
            vector_rows={d: sum(e["count"] for e in v) for d, v in vectors.items()},
        )
        store.check_objects(manifest)
        rid = store.write_root(manifest)
        store.set_head(rid)
        store.retain(retention)
        return rid, True


def _base(store: RootStore, schema: Schema | None) -> tuple[str | None, Manifest]:
    """HEAD's id and manifest (under the writer lock), or an empty first root."""
    store.init()
    if store.exists():
        base_id = store.head()
        return base_id, store.read_root(base_id)
    if schema is None:
        raise SchemaError("a new collection needs a schema")
    return None, empty_manifest(schema)


def _write(
    store: RootStore,
    base_id: str | None,
    base: Manifest,
    adds: Sequence[Node],
    deletes: Sequence[str],
    progress: Progress | None,
    retention: int,
    sources: dict[str, dict[str, Any]],
    *,
    compact: bool = False,
    embedded: Mapping[str, np.ndarray] | None = None,
) -> Published:
    """Steps 2-7 of the write path, under the writer lock the caller holds. ``sources`` is
    the new root's source table (:func:`cogitave.sync.write_sources`)."""
    progress = progress or _noop
    schema = Schema.from_dict(base.schema)
    for n in adds:
        try:
            check_node(n, schema)
        except ValueError as e:
            raise SchemaError(f"node {n.uid!r}: {e}") from e
    table = NodeTable(store, base.segments, base.next_nid)
    gone_uids = set(deletes) | {n.uid for n in adds}
    killed = np.asarray(sorted(table.nid_of[u] for u in gone_uids if u in table.nid_of), np.uint64)
    next_nid = int(base.next_nid)
    nids = np.arange(next_nid, next_nid + len(adds), dtype=np.uint64)

    if compact and not adds and not len(killed) and base.lexical_files:
        files = dict(base.lexical_files)  # as it is (a commit may merge segments)
    else:
        work = store.tmp / uuid.uuid4().hex
        lex = LexicalWriter(store, schema, base.lexical_files or None, work / "lex")
        lex.delete(u for u in gone_uids if u in table.nid_of)
        for i, (nid, node) in enumerate(zip(nids.tolist(), adds, strict=True)):
            lex.add(nid, node)
            if i % 1000 == 0:
                progress("lexical", i, len(adds))
        progress("lexical", len(adds), len(adds))
        files = lex.commit()

    segments = list(base.segments)
    if compact:  # node segments written before the forward term index or facts get theirs
        segments = backfill_terms(
            store, schema, segments, lambda n: Node.from_record(table.record(n))
        )
        segments = backfill_facts(store, segments)
    if len(adds) or len(killed):
        segments.append(write_node_segment(store, adds, nids, killed, schema))

    builder = StatsBuilder(schema)
    builder.add_all(adds, +1)
    builder.add_all((table.node(int(n)) for n in killed), -1)
    base_stats = CorpusStats.from_bytes(store.get_bytes(base.stats_obj)) if base.stats_obj else None
    stats = builder.apply(base_stats)

    alive = np.zeros(next_nid + len(adds), bool)
    alive[: len(table.alive)] = table.alive
    alive[killed.astype(np.int64)] = False
    alive[nids.astype(np.int64)] = True
    cache = TextVectors(store, base.text_vectors, base.encoder_name or "")
    vectors = _embed(
        store, schema, base, adds, nids, alive, progress, cache, compact=compact, embedded=embedded
    )
    added_uids = {n.uid for n in adds}
    gone = [u for n in killed if (u := table.uid_of[int(n)]) not in added_uids]
    graph_entry = publish_graph(store, base.graph, adds, gone)

    manifest = base.with_(
        created=None,  # the new root's own time, set when it is written
        parent=base_id,
        lexical_files=files,
        segments=tuple(segments),
        stats_obj=store.put_bytes(stats.to_bytes()),
        next_nid=next_nid + len(adds),
        vectors=vectors,
        graph=graph_entry,
        text_vectors=cache.entry(),
        sources=sources,
    ).with_counts(
        nodes=table.live_count - len(killed) + len(adds),
        edges=graph_entry["edges"],
        vector_rows={d: sum(e["count"] for e in v) for d, v in vectors.items()},
    )
    store.check_objects(manifest)  # hashes the new objects once; readers then only stat
    rid = store.write_root(manifest)
    store.set_head(rid)
    store.retain(retention)
    return Published(rid, encoded=cache.encoded, reused=cache.reused)


def _embed(
    store: RootStore,
    schema: Schema,
    base: Manifest,
    adds: Sequence[Node],
    nids: np.ndarray,
    alive: np.ndarray,
    progress: Progress,
    cache: TextVectors,
    *,
    compact: bool = False,
    embedded: Mapping[str, np.ndarray] | None = None,
) -> dict[str, Any]:
    """Per-dimension vector segments for the added nodes (none when the collection has no
    encoder), merged by the policy of :func:`write_vectors` (one per dimension with
    ``compact``). The encoder is the one the collection was created with; it is loaded only
    when there is text to encode."""
    if not base.encoder:
        return dict(base.vectors)
    name, width = base.encoder_name, base.encoder_dim
    if name is None or width is None:
        raise CorruptionError(f"the root's encoder entry is incomplete: {base.encoder}")
    per_dim: dict[str, tuple[list[int], list[str]]] = {d: ([], []) for d in vector_dims(schema)}
    recipe = texts_recipe(base.encoder)
    contexts: list[str] = []  # context-v4: the line mixed into each WHOLE row ("" for none)
    for nid, node in zip(nids.tolist(), adds, strict=True):
        for dim, text in embed_texts(node, schema, recipe).items():
            per_dim[dim][0].append(nid)
            per_dim[dim][1].append(text)
            if dim == WHOLE:
                contexts.append(mixed_context(node, recipe))
    texts = {d: (np.asarray(ids, np.uint64), items) for d, (ids, items) in per_dim.items()}
    # One encoder pass over the distinct texts (a facet's text may equal a node's whole text,
    # and a page's sections share one context line).
    distinct = list(
        dict.fromkeys([*(t for _, items in texts.values() for t in items), *filter(None, contexts)])
    )
    total = len(distinct)
    done = 0

    def step(k: int) -> None:
        nonlocal done
        done += k
        progress("embed", done, total)

    given = embedded or {}

    def encode(new: list[str]) -> np.ndarray:
        if given and all(t in given for t in new):  # embedded elsewhere (a distributed build)
            step(total - len(new))
            rows = np.stack([given[t] for t in new]) if new else np.zeros((0, width))
            step(len(new))
            return rows.astype(np.float32)
        check_identity(base.encoder, "this collection")
        # the graph the collection's vectors came from; loaded only when some text is new
        encoder = load_encoder(name, recorded_graph(base.encoder))
        if encoder.dim != width:
            raise EncoderError(
                f"encoder {name!r} gives {encoder.dim}-d vectors, the collection stores {width}-d"
            )
        step(total - len(new))  # the reused ones
        return encoder.encode(new, progress=step)

    if total:
        progress("embed", 0, total)
    # texts embedded before in this collection are read back, not encoded again
    matrix = cache.encode(distinct, encode, width)
    if total:
        progress("embed", total, total)
    row_of = {t: i for i, t in enumerate(distinct)}

    def rows(dim: str, items: list[str]) -> np.ndarray:
        own = matrix[[row_of[t] for t in items]]
        if dim != WHOLE or not any(contexts):
            return own
        assert len(items) == len(contexts), "a WHOLE row without its context line"
        placed = np.flatnonzero([bool(c) for c in contexts])
        lines = matrix[[row_of[contexts[i]] for i in placed]]
        own[placed] = l2_normalize(own[placed] + CONTEXT_WEIGHT * lines)  # context-v4's mix
        return own

    return write_vectors(
        store, base.vectors, texts, rows, alive, compact=compact, progress=progress
    )
