"""Reciprocal Rank Fusion.

``score(d) = sum over lenses L that returned d of  w_L / (k + rank_L(d))``, ranks from 1,
``k = 60`` (Cormack, Clarke & Büttcher, 2009). Fusion reads rank positions only: BM25 scores
are unbounded and cosine is bounded, and no calibration between them is needed. Every lens has
weight 1 unless the planner says otherwise (extra whole-query dense channels carry the noise
weight). Ties are broken by uid, so the order is deterministic whatever the lens order.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from cogitave.query.lens import LensResult

RRF_K = 60


@dataclass(frozen=True)
class Fused:
    """Fused candidates: nids best first, RRF scores, and each one's rank in every lens."""

    nids: np.ndarray
    scores: np.ndarray
    ranks: dict[int, dict[str, int]]


def rrf(lenses: Sequence[LensResult], uid_of: Callable[[int], str], k: int = RRF_K) -> Fused:
    """Fuse ranked lenses with RRF; ``uid_of`` names a nid for the deterministic tie-break."""
    scores: dict[int, float] = {}
    ranks: dict[int, dict[str, int]] = {}
    for lens in lenses:
        tied = bool(lens.info.get("tied"))  # a binary lens: every match shares rank 1
        for i, nid in enumerate(lens.nids.tolist(), 1):
            i = 1 if tied else i
            scores[nid] = scores.get(nid, 0.0) + lens.weight / (k + i)
            ranks.setdefault(nid, {})[lens.name] = i
    order = sorted(scores, key=lambda n: (-scores[n], uid_of(n)))
    return Fused(
        nids=np.asarray(order, np.uint64),
        scores=np.asarray([scores[n] for n in order], np.float64),
        ranks=ranks,
    )
