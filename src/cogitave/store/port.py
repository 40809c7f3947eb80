"""The read port: everything the read path asks of a snapshot, in the engine's own words.

The query engine never sees tantivy, field prefixes, segment files or HNSW graphs: it asks a
:class:`ReadPort` for ranked lists, membership masks and vectors by *dimension* and *kind*.
:class:`~cogitave.store.snapshot.Snapshot` implements it over one root; a sharded view
implements the same methods over several shards (its ids then name a node across shards, and
its statistics are the sums of the shards'), so every stage of the engine runs unchanged on
either.

Ids are unsigned 64-bit integers that the port hands out and takes back; only the port knows
what they mean. Scopes and kinds:

- ``bm25(scope, ...)``: ``scope`` is :data:`~cogitave.schema.WHOLE` (all semantic text of a
  node), a semantic dimension, or an exact dimension (its values and derived enum tails);
- ``match(dim, kind, ...)``: ``kind`` ``"text"`` asks for analysed tokens (stems) in a
  semantic dimension (or an exact dimension's tails), ``"value"`` for an exact dimension's
  casefolded values (filters).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal, Protocol

import numpy as np

from cogitave.config import Settings
from cogitave.expand.stats import CorpusStats
from cogitave.nodes import Node, NodeFacts
from cogitave.schema import Schema
from cogitave.store.graph import GraphSegment

MatchKind = Literal["text", "value"]


@dataclass(frozen=True)
class Where:
    """Which nodes a search may return, applied inside every leg (BM25, dense, exact), never
    after fusion, so a filtered search fills its page whenever enough nodes match.

    ``values``: exact dimension -> allowed values (casefolded, as indexed); a node passes
    when it holds one of each dimension's values. ``path_prefix``: a node passes when its
    stored path, its URL's path or its uid starts with it (without a leading ``/``)."""

    values: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    path_prefix: str = ""

    def __bool__(self) -> bool:
        return bool(self.values) or bool(self.path_prefix)

    def key(self) -> tuple[object, ...]:
        """A hashable identity (masks are cached by it)."""
        return (
            tuple(sorted((d, tuple(sorted(v))) for d, v in self.values.items())),
            self.path_prefix,
        )


class ReadPort(Protocol):
    """What the engine's stages read. Implementations are immutable snapshots."""

    @property
    def root(self) -> str: ...

    @property
    def schema(self) -> Schema: ...

    @property
    def stats(self) -> CorpusStats: ...

    @property
    def graph(self) -> GraphSegment: ...

    @property
    def encoder_name(self) -> str | None: ...

    @property
    def encoder_graph(self) -> str | None:
        """The graph of the encoder the vectors were made by (None: an encoder without
        graphs): queries are embedded by the same one."""
        ...

    @property
    def settings(self) -> Settings: ...

    @property
    def aliases(self) -> Mapping[str, str]:
        """Alias or redirect path -> uid (what ``resolve_xref`` reads beside the graph)."""
        ...

    @property
    def live_count(self) -> int:
        """Live nodes."""
        ...

    def warm(self) -> None:
        """Open every index a first query would read."""
        ...

    def bm25(
        self,
        scope: str,
        stems: Sequence[str],
        depth: int,
        where: Where | None = None,
        weights: Mapping[str, float] | None = None,
        phrases: Mapping[tuple[str, ...], float] | None = None,
    ) -> tuple[np.ndarray, np.ndarray]:
        """Top ``depth`` live ids by BM25 of ``stems`` (OR) over ``scope`` among the nodes
        ``where`` allows, a stem in ``weights`` scoring that multiple of its BM25 and a
        phrase of ``phrases`` (stems, adjacent and in order) adding its weight times its
        BM25: (ids uint64, scores float32), best first."""
        ...

    def match(
        self, dim: str, kind: MatchKind, tokens: Sequence[str], among: np.ndarray
    ) -> np.ndarray:
        """Bool mask over ``among``: the node holds ANY of ``tokens`` in ``dim`` (see the
        module docstring for ``kind``)."""
        ...

    def match_all(
        self,
        dim: str,
        kind: MatchKind,
        tokens: Sequence[str],
        limit: int,
        where: Where | None = None,
    ) -> np.ndarray:
        """Ids (up to ``limit``, unordered) of live nodes ``where`` allows that hold any of
        ``tokens`` in ``dim``."""
        ...

    def dense(
        self, dim: str, q: np.ndarray, depth: int, where: Where | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """Top ``depth`` live ids by cosine to ``q`` among ``dim``'s vectors (WHOLE: the
        whole-node vectors) of the nodes ``where`` allows: (ids, similarities), best first
        (``depth`` of them whenever that many allowed nodes have vectors)."""
        ...

    def vectors_of(self, dim: str, ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Stored ``dim`` vectors of ``ids`` (zero rows where a node has none) and a mask."""
        ...

    def dense_sample(self, dim: str) -> np.ndarray:
        """A seeded uniform sample of ``dim``'s live vectors (the coherence gate's top-share
        threshold is a quantile over it)."""
        ...

    def vector_dims(self) -> frozenset[str]:
        """Dimensions with stored vectors (WHOLE included when the node vectors exist)."""
        ...

    def vector_count(self, dim: str) -> int:
        """Live rows of ``dim``'s vectors."""
        ...

    def uid_of(self, id: int) -> str: ...

    def id_of(self, uid: str) -> int | None: ...

    def uid_rank(self, ids: np.ndarray) -> np.ndarray:
        """Per id, an integer that orders ids as their uids sort (the deterministic
        tie-break of fusion)."""
        ...

    def node(self, id: int) -> Node:
        """The stored node of a live id."""
        ...

    def node_facts(self, ids: Sequence[int]) -> list[NodeFacts]:
        """Uid, kind, path, URL and title of live ids, without their text (one round trip
        per shard)."""
        ...
