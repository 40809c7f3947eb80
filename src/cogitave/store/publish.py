"""Publish: pending adds and deletes + the HEAD root -> new segments -> a new content root.

The write path, in order (a crash at any step leaves HEAD on the previous, whole root):

1. take the writer lock; read HEAD (a publish always applies on top of the current HEAD);
2. resolve deletes and replacements to the nids they kill;
3. lexical: hard-link the previous segment files, delete by uid, add, commit, store files;
4. node segment: records, offsets, nids, deletes;
5. write-time expansion: statistics delta (+ added, - removed), applied to the previous ones;
   further tiers (vectors, graph) each take a :class:`PublishContext`;
6. manifest -> ``roots/<sha256>.json``; then HEAD moves (write temp, fsync, rename, fsync dir);
7. retention drops roots past the retained count and unreferenced objects.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from cogitave.errors import SchemaError
from cogitave.expand.stats import CorpusStats, StatsBuilder
from cogitave.ingest.records import check_against
from cogitave.nodes import Node
from cogitave.schema import Schema
from cogitave.store.lexical import LexicalWriter
from cogitave.store.nodes import NodeTable, write_node_segment
from cogitave.store.roots import DEFAULT_RETENTION, RootStore

Progress = Callable[[str, int, int], None]
"""``progress(stage, done, total)``: called as long stages advance."""


@dataclass
class PublishContext:
    """What an expansion tier sees: the previous root and this publish's changes."""

    store: RootStore
    schema: Schema
    base: dict[str, Any]
    added: Sequence[Node]
    added_nids: np.ndarray
    killed_nids: np.ndarray
    table: NodeTable
    progress: Progress | None


def _noop(stage: str, done: int, total: int) -> None:
    return None


def empty_manifest(schema: Schema) -> dict[str, Any]:
    return {
        "parent": None,
        "schema": schema.to_dict(),
        "schema_hash": schema.hash(),
        "lexical": {"files": {}},
        "segments": [],
        "next_nid": 0,
        "counts": {"nodes": 0, "edges": 0},
    }


def publish(
    store: RootStore,
    adds: Sequence[Node],
    deletes: Sequence[str],
    *,
    schema: Schema | None = None,
    progress: Progress | None = None,
    retention: int = DEFAULT_RETENTION,
    extra: dict[str, Any] | None = None,
) -> str:
    """Apply ``adds`` (new or replacing nodes) and ``deletes`` (uids) on top of HEAD and publish
    a new root. ``schema`` is required for the first publish of a collection."""
    progress = progress or _noop
    with store.writer_lock():
        store.init()
        if store.exists():
            base_id: str | None = store.head()
            base = store.read_root(base_id)
        else:
            if schema is None:
                raise SchemaError("a new collection needs a schema")
            base_id, base = None, empty_manifest(schema)
        schema = Schema.from_dict(base["schema"])
        for n in adds:
            try:
                check_against(n, schema)
            except ValueError as e:
                raise SchemaError(f"node {n.uid!r}: {e}") from e
        table = NodeTable(store, base["segments"], base["next_nid"])
        gone_uids = set(deletes) | {n.uid for n in adds}
        killed = np.asarray(
            sorted(table.nid_of[u] for u in gone_uids if u in table.nid_of), np.uint64
        )
        next_nid = int(base["next_nid"])
        nids = np.arange(next_nid, next_nid + len(adds), dtype=np.uint64)

        work = store.tmp / uuid.uuid4().hex
        lex = LexicalWriter(store, schema, base["lexical"]["files"] or None, work / "lex")
        lex.delete(u for u in gone_uids if u in table.nid_of)
        for i, (nid, node) in enumerate(zip(nids.tolist(), adds, strict=True)):
            lex.add(nid, node)
            if i % 1000 == 0:
                progress("lexical", i, len(adds))
        progress("lexical", len(adds), len(adds))
        files = lex.commit()

        segments = list(base["segments"])
        if len(adds) or len(killed):
            segments.append(write_node_segment(store, adds, nids, killed))

        builder = StatsBuilder(schema)
        builder.add_all(adds, +1)
        builder.add_all((table.node(int(n)) for n in killed), -1)
        base_stats = (
            CorpusStats.from_bytes(store.get_bytes(base["stats_obj"]))
            if base.get("stats_obj")
            else None
        )
        stats = builder.apply(base_stats)

        manifest: dict[str, Any] = {
            **base,
            **(extra or {}),
            "parent": base_id,
            "lexical": {"files": files},
            "segments": segments,
            "stats_obj": store.put_bytes(stats.to_bytes()),
            "next_nid": next_nid + len(adds),
        }
        manifest.pop("created", None)
        manifest.pop("format", None)
        manifest["counts"] = {
            **manifest.get("counts", {}),
            "nodes": table.live_count - len(killed) + len(adds),
        }
        rid = store.write_root(manifest)
        store.set_head(rid)
        store.retain(retention)
        return rid
