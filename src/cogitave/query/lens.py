"""Lenses: one ranked leg of execution each, as a plain ranked list of node ids.

A lens is anything that ranks nodes: BM25 of a dimension, dense of a dimension, the
whole-query dense channel, or an optional learned-sparse / late-interaction retriever. Fusion
reads only ranks, so lenses can be added or removed without recalibrating anything.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, Protocol

import numpy as np

LensKind = Literal["bm25", "dense", "channel", "sparse", "late"]


@dataclass(frozen=True)
class LensResult:
    """The output of one lens: nids best first, their raw scores, and how it ran."""

    name: str
    kind: LensKind
    nids: np.ndarray  # uint64, best first
    scores: np.ndarray  # float32, same order; not comparable across lenses
    depth: int = 0
    ms: float = 0.0
    weight: float = 1.0
    info: dict[str, object] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.nids)


class Retriever(Protocol):
    """The interface an optional extra retriever (SPLADE, ColBERT/SPLATE) implements to join
    fusion as one more lens: given the query text and a depth, return a ranked lens."""

    name: str

    def retrieve(self, query: str, depth: int) -> LensResult: ...
