"""The feedback lens: the whole-query dense anchor, asked again from where the fusion landed.

After the first fusion, the stored whole-node vectors of the top :attr:`Feedback.top` fused
candidates are averaged into a centroid, and the dense anchor runs again with the query
``normalise(q + weight * centroid)`` in place of ``q`` (Rocchio's relevance feedback, with the
fused top standing in for judged documents). Both retrievers agree on the top of a fusion far
more often than either alone is right, so the centroid carries the corpus's own vocabulary for
what the query means: the dense leg moves toward documents like the consensus top and away
from near-misses that only share the query's surface.

Nothing new is embedded: the centroid is made of stored vectors, and the cost is one more
HNSW search.

Off by default (``[feedback] enabled = true`` turns it on). It was added for Cranfield
(RRF(BM25, dense) 0.4141 -> 0.4245 nDCG@10 with the feedback dense leg), but across every
collection measured it does not pay: planned without it, against with it (top 5, weight 0.3),
nDCG@10 SciFact 0.7287 = 0.7287, Cranfield 0.4155 vs 0.4182, CISI 0.4035 vs 0.4027, CACM
0.5251 vs 0.5198, Debian facets 0.7372 vs 0.7328 and its fields-only control 0.7067 vs 0.7020;
nDCG@5 of the docs questions FastAPI 0.817 vs 0.809, Hugo 0.671 vs 0.664, this project's docs
0.892 vs 0.901 (six better, two worse, one equal; bench/RESULTS.md "Unseen collections").
A collection like Cranfield, many judged relevant documents per query in one narrow field, is
where it helps.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from cogitave.query.candidates import CandidateVectors
from cogitave.query.ranked import Ranked
from cogitave.schema import WHOLE


def feedback_query(
    q: np.ndarray, ranked: Ranked, vectors: CandidateVectors, top: int, weight: float
) -> tuple[np.ndarray | None, dict[str, Any]]:
    """The feedback query vector (None when fewer than ``top`` candidates have a vector)."""
    ids = ranked.nids[:top]
    if len(ids) < top:
        return None, {"applied": False, "reason": f"fewer than {top} candidates"}
    mat, has = vectors.of(WHOLE, ids)
    if int(has.sum()) < top:
        return None, {"applied": False, "reason": "top candidates without vectors"}
    centroid = mat[has].mean(axis=0)
    out = q + weight * centroid
    norm = float(np.linalg.norm(out))
    if not norm:
        return None, {"applied": False, "reason": "zero vector"}
    return (out / norm).astype(np.float32), {"applied": True, "top": top, "weight": weight}
