"""Cross-dimension coherence: after RRF, keep candidates coherent across the touched dimensions.

A candidate **passes** a routed dimension ``d`` when

- it matches one of ``d``'s routed terms by BM25 in ``d`` (an exact test over the candidate
  set, not "was in the lens's top-k"), or in another *home* of that term (a term with several
  dimension homes is forgiven across its homes), or
- ``d`` is semantic and the candidate's stored ``d`` vector is in ``d``'s dense top-15% for the
  query's ``d`` text (or, forgiven across homes, its vector of another semantic home of
  ``d``'s terms is in that home's top-15% for the same text). Exactly: the candidate's
  cosine is at least the 85th percentile of the cosines over a seeded uniform sample (up to
  2,048) of the dimension's vectors. The diagnostics say
  ``dense_top: "sample"`` and give the threshold.

With ``n`` routed dimensions:

- ``n <= 1``: nothing to be coherent across; every candidate passes;
- ``n == 2``: strict AND; if that leaves no candidate, relax to N-1 (one dimension may fail);
- ``n >= 3``: N-1; an emphatic dimension (``dim:term``, ``+term``, a quoted phrase, a
  repeated word) can never be the one that fails, and neither can the node's text unit
  (``_all``): it holds the query's topic, and the facets are its constraints. Measured on the
  Debian packages facet set (bench/facets.py), forgiving the text let "lisp terminal email"
  keep Lisp terminal programs with nothing to do with mail.

``backfill`` (off by default) pads the tail with rejected candidates ordered by evidence (the
number of dimensions passed, then RRF score). Zero survivors stay zero, backfill or not: the
precision contract holds.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from cogitave.query.candidates import CandidateVectors
from cogitave.query.prism import DimPlan, Prism
from cogitave.query.ranked import Ranked
from cogitave.schema import WHOLE
from cogitave.store.port import ReadPort


@dataclass(frozen=True)
class GateResult:
    """Survivors (in fused order), backfilled rejects (ordered by evidence), the gate's
    numbers."""

    kept: Ranked
    backfilled: Ranked
    stats: dict[str, Any] = field(default_factory=dict)


def bm25_evidence(
    port: ReadPort, p: DimPlan, homes: Mapping[str, Sequence[str]], cands: np.ndarray
) -> np.ndarray:
    """Bool mask over ``cands``: matches a routed term of ``p`` in ``p.dim`` or its homes."""
    per_dim: dict[str, list[str]] = {}
    for term, stem in zip(p.terms, p.stems, strict=True):
        for d in dict.fromkeys((p.dim, *homes.get(term, ()))):
            per_dim.setdefault(d, []).append(stem)
    hit = np.zeros(len(cands), bool)
    for d, stems in per_dim.items():
        if len(cands):
            hit |= port.match(d, "text", stems, cands)
    return hit


def dense_evidence(
    port: ReadPort,
    dim: str,
    q: np.ndarray,
    cands: np.ndarray,
    share: float,
    vectors: CandidateVectors | None = None,
) -> tuple[np.ndarray, float]:
    """Bool mask over ``cands``: stored ``dim`` vector in the dimension's dense top ``share``;
    also the similarity threshold used."""
    if not port.vector_count(dim):
        return np.zeros(len(cands), bool), float("nan")
    sample = port.dense_sample(dim)
    threshold = float(np.quantile(sample @ q, 1.0 - share)) if len(sample) else float("inf")
    mat, has = vectors.of(dim, cands) if vectors is not None else port.vectors_of(dim, cands)
    return has & (mat @ q >= threshold), threshold


def gate(
    port: ReadPort,
    prism: Prism,
    ranked: Ranked,
    dense_q: Mapping[str, np.ndarray],
    *,
    share: float,
    backfill: bool,
    vectors: CandidateVectors | None = None,
) -> GateResult:
    """Apply the coherence rules to the fused candidates (best first)."""
    dims = prism.gated
    n = len(dims)
    cands = ranked.nids
    none = Ranked.empty()
    if n <= 1 or not len(cands):
        return GateResult(ranked, none, {"routed": n, "rule": "none"})
    passed = np.zeros((n, len(cands)), bool)
    thresholds: dict[str, float] = {}
    schema = port.schema
    for i, p in enumerate(dims):
        passed[i] = bm25_evidence(port, p, prism.homes, cands)
        if p.type == "semantic" and p.dim in dense_q:
            # forgiveness across homes holds for dense evidence too: the dimension's text may
            # sit in the dense top share of any semantic home of its terms
            homes = [h for t in p.terms for h in prism.homes.get(t, ())]
            for h in dict.fromkeys((p.dim, *homes)):
                if h != WHOLE and schema[h].type != "semantic":
                    continue
                dense, thr = dense_evidence(port, h, dense_q[p.dim], cands, share, vectors)
                passed[i] |= dense
                thresholds[f"{p.dim}@{h}" if h != p.dim else h] = round(thr, 4)
    # the node's text carries the query's topic: N-1 may forgive a facet, never the text
    emphatic = np.array([p.emphatic or p.dim == WHOLE for p in dims])
    count = passed.sum(axis=0)
    emph_ok = passed[emphatic].all(axis=0) if emphatic.any() else np.ones(len(cands), bool)
    relaxed = False
    if n == 2:
        ok = count == n
        if not ok.any():
            ok = (count >= n - 1) & emph_ok
            relaxed = True
        rule = "strict_and"
    else:
        ok = (count >= n - 1) & emph_ok
        rule = "n_minus_1"
    back = none
    if backfill and ok.any():
        rej = np.flatnonzero(~ok)
        order = rej[np.lexsort((-ranked.scores[rej], -count[rej]))]
        back = Ranked(cands[order], ranked.scores[order])
    stats = {
        "routed": n,
        "rule": rule,
        "relaxed": relaxed,
        "candidates": len(cands),
        "passed": int(ok.sum()),
        "rejected": int((~ok).sum()),
        "backfilled": len(back),
        "per_dimension": {p.dim: int(passed[i].sum()) for i, p in enumerate(dims)},
        "dense_top": "sample",
        "dense_threshold": thresholds,
    }
    return GateResult(ranked.keep(ok), back, stats)
