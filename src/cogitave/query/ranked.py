"""The one value the read path passes from stage to stage, and a stage's diagnostics record.

Every stage after the lenses takes a :class:`Ranked` (ids best first, their scores) and
returns a :class:`Ranked` plus a :class:`StageRecord` saying what it did and how long it took.
Ids are the read port's (:mod:`cogitave.store.port`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np


@dataclass(frozen=True)
class Ranked:
    """Candidates best first: ``nids`` (uint64 port ids) and their ``scores`` (float64)."""

    nids: np.ndarray
    scores: np.ndarray

    @classmethod
    def empty(cls) -> Ranked:
        return cls(np.zeros(0, np.uint64), np.zeros(0, np.float64))

    def __len__(self) -> int:
        return len(self.nids)

    def keep(self, mask: np.ndarray) -> Ranked:
        """The candidates where ``mask`` holds, in the same order."""
        return Ranked(self.nids[mask], self.scores[mask])

    def reorder(self, scores: np.ndarray) -> Ranked:
        """The same candidates under new ``scores``, best first (ties keep the old order)."""
        order = np.argsort(-scores, kind="stable")
        return Ranked(self.nids[order], scores[order])

    def page(self, offset: int, limit: int) -> Ranked:
        return Ranked(self.nids[offset : offset + limit], self.scores[offset : offset + limit])


@dataclass(frozen=True)
class StageRecord:
    """What one stage did: its name, wall time in ms and its own numbers (JSON-ready)."""

    name: str
    ms: float
    info: Mapping[str, Any] = field(default_factory=dict)
