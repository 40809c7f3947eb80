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
from typing import Literal, Protocol

import numpy as np

from cogitave.config import Settings
from cogitave.expand.stats import CorpusStats
from cogitave.nodes import Node
from cogitave.schema import Schema
from cogitave.store.graph import GraphSegment

MatchKind = Literal["text", "value"]
Filters = Mapping[str, Sequence[str]]


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
    def settings(self) -> Settings: ...

    def warm(self) -> None:
        """Open every index a first query would read."""
        ...

    def bm25(
        self,
        scope: str,
        stems: Sequence[str],
        depth: int,
        filters: Filters | None = None,
        weights: Mapping[str, float] | None = None,
    ) -> tuple[np.ndarray, np.ndarray]:
        """Top ``depth`` live ids by BM25 of ``stems`` (OR) over ``scope``, restricted by exact
        ``filters`` (dimension -> allowed values), a stem in ``weights`` scoring that multiple
        of its BM25: (ids uint64, scores float32), best first."""
        ...

    def match(
        self, dim: str, kind: MatchKind, tokens: Sequence[str], among: np.ndarray
    ) -> np.ndarray:
        """Bool mask over ``among``: the node holds ANY of ``tokens`` in ``dim`` (see the
        module docstring for ``kind``)."""
        ...

    def match_all(self, dim: str, kind: MatchKind, tokens: Sequence[str], limit: int) -> np.ndarray:
        """Ids (up to ``limit``, unordered) of live nodes holding any of ``tokens`` in ``dim``."""
        ...

    def dense(self, dim: str, q: np.ndarray, depth: int) -> tuple[np.ndarray, np.ndarray]:
        """Top ``depth`` live ids by cosine to ``q`` among ``dim``'s vectors (WHOLE: the
        whole-node vectors): (ids, similarities), best first."""
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
