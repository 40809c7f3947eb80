"""A snapshot: everything a reader needs from one pinned root, opened once.

root id -> manifest, schema, statistics, lexical reader, node table, forward term index (and,
as they are added, vector and graph segments). Nothing here changes after open: a writer
publishing a new root never touches the files of this one.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from cogitave.expand.stats import CorpusStats
from cogitave.schema import Schema
from cogitave.store.graph import GraphSegment
from cogitave.store.lexical import LexicalReader
from cogitave.store.nodes import NodeTable
from cogitave.store.roots import RootStore
from cogitave.store.terms import TermIndex
from cogitave.store.vectors import DimVectors


@dataclass
class Snapshot:
    store: RootStore
    root: str
    manifest: dict[str, Any]

    @classmethod
    def open(cls, store: RootStore, root: str | None = None) -> Snapshot:
        rid = root or store.head()
        manifest = store.read_root(rid)
        store.check_objects(manifest)
        return cls(store, rid, manifest)

    @cached_property
    def schema(self) -> Schema:
        return Schema.from_dict(self.manifest["schema"], source=f"root {self.root[:12]}")

    @cached_property
    def stats(self) -> CorpusStats:
        obj = self.manifest.get("stats_obj")
        return CorpusStats.from_bytes(self.store.get_bytes(obj)) if obj else CorpusStats()

    @cached_property
    def lexical(self) -> LexicalReader:
        return LexicalReader.for_root(
            self.store, self.root, self.manifest["lexical"]["files"], self.schema
        )

    @cached_property
    def nodes(self) -> NodeTable:
        return NodeTable(self.store, self.manifest["segments"], self.manifest["next_nid"])

    @cached_property
    def terms(self) -> TermIndex:
        """Which tokens each node holds per lexical field (``available`` is false for roots
        written before the index: ask the lexical reader then)."""
        return TermIndex(self.store, self.manifest["segments"])

    @cached_property
    def vectors(self) -> dict[str, DimVectors]:
        """Per semantic dimension, its vector segments (empty without an encoder)."""
        alive = self.nodes.alive
        return {
            d: DimVectors(self.store, entries, alive)
            for d, entries in self.manifest.get("vectors", {}).items()
            if entries
        }

    @cached_property
    def graph(self) -> GraphSegment:
        """The property graph of the root (an empty one before the first publish)."""
        entry = self.manifest.get("graph")
        if not entry:
            return GraphSegment.build([])
        return GraphSegment.open(self.store, entry["graph_obj"])

    @cached_property
    def aliases(self) -> dict[str, str]:
        """Alias / redirect path -> uid, for ``resolve_xref``."""
        entry = self.manifest.get("graph") or {}
        obj = entry.get("aliases_obj")
        return json.loads(self.store.get_bytes(obj)) if obj else {}

    @property
    def encoder_name(self) -> str | None:
        spec = self.manifest.get("encoder")
        return spec["name"] if spec else None

    def uid_of(self, nid: int) -> str:
        return self.nodes.uid_of[int(nid)]
