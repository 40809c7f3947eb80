"""The mixed-query semantic-residual boost.

When a routed core is joined by a dropped real-word phrase (at least ``boost.min_known_terms``
zero-hit terms the lexicon knows: words that are real but not in this corpus), the phrase still
says something about what the user wants. The phrase is embedded alone and compared with each
survivor's stored vectors (the best cosine over the node's semantic dimensions); survivors are
reordered by ``rrf * (1 + factor * sim_norm)`` with ``factor = 4`` and ``sim_norm`` the cosine
min-max normalised over the survivors. Negation markers disable the boost (the planner leaves
``Prism.residual`` empty then), since "without X" must not pull X-like nodes up.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from cogitave.store.snapshot import Snapshot


@dataclass(frozen=True)
class Boosted:
    nids: np.ndarray
    scores: np.ndarray
    info: dict[str, Any] = field(default_factory=dict)


def residual_boost(
    snap: Snapshot,
    nids: np.ndarray,
    scores: np.ndarray,
    phrase_vec: np.ndarray,
    dims: Sequence[str],
    factor: float,
) -> Boosted:
    """Reorder survivors by ``rrf * (1 + factor * sim_norm)`` (ties: previous order)."""
    if not len(nids):
        return Boosted(nids, scores, {"applied": False, "reason": "no survivors"})
    best = np.full(len(nids), -1.0, np.float32)
    for d in dims:
        vec = snap.vectors.get(d)
        if vec is None:
            continue
        mat, has = vec.vectors_of(nids.tolist())
        sims = np.where(has, mat @ phrase_vec, -1.0)
        best = np.maximum(best, sims)
    lo, hi = float(best.min()), float(best.max())
    norm = (best - lo) / (hi - lo) if hi > lo else np.zeros_like(best)
    new = scores * (1.0 + factor * norm)
    order = np.argsort(-new, kind="stable")
    return Boosted(
        nids[order],
        new[order],
        {"applied": True, "factor": factor, "sim_range": [round(lo, 4), round(hi, 4)]},
    )
