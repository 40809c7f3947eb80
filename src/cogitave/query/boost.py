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
from typing import Any

import numpy as np

from cogitave.query.candidates import CandidateVectors
from cogitave.query.prism import Prism
from cogitave.query.ranked import Ranked
from cogitave.store.port import ReadPort


def residual_boost(
    port: ReadPort,
    ranked: Ranked,
    phrase_vec: np.ndarray,
    dims: Sequence[str],
    factor: float,
    vectors: CandidateVectors | None = None,
) -> tuple[Ranked, dict[str, Any]]:
    """Reorder survivors by ``rrf * (1 + factor * sim_norm)`` (ties: previous order)."""
    nids = ranked.nids
    if not len(nids):
        return ranked, {"applied": False, "reason": "no survivors"}
    best = np.full(len(nids), -1.0, np.float32)
    have = port.vector_dims()
    for d in dims:
        if d not in have:
            continue
        mat, has = vectors.of(d, nids) if vectors is not None else port.vectors_of(d, nids)
        best = np.maximum(best, np.where(has, mat @ phrase_vec, -1.0))
    lo, hi = float(best.min()), float(best.max())
    norm = (best - lo) / (hi - lo) if hi > lo else np.zeros_like(best)
    out = ranked.reorder(ranked.scores * (1.0 + factor * norm))
    return out, {"applied": True, "factor": factor, "sim_range": [round(lo, 4), round(hi, 4)]}


def no_boost_reason(prism: Prism) -> str:
    """Why a plan gets no residual boost (for the diagnostics)."""
    if prism.negations:
        return "negation markers disable the boost"
    rw = prism.rewritten
    n = len(rw.known_phrase)
    if n < 2:
        scattered = len(rw.known_zero_hit) - n
        return f"{n} dropped real-word term(s) standing together; the boost needs at least 2" + (
            f" ({scattered} more scattered through the query)" if scattered > 0 else ""
        )
    return "no routed core"
