"""IR metrics through trec_eval (pytrec-eval-terrier): nDCG@10, recall@100, MRR@10.

Runs are ``{query id: {doc id: score}}``; qrels ``{query id: {doc id: gain}}``. Queries with
no judgments are left out; judged queries the system returned nothing for score 0 (trec_eval
skips a query absent from the run, which would flatter a system that fails on it).
"""

from __future__ import annotations

from collections.abc import Mapping

import pytrec_eval

Run = Mapping[str, Mapping[str, float]]
Qrels = Mapping[str, Mapping[str, int]]
METRICS = ("ndcg@10", "recall@100", "mrr@10")


def evaluate(run: Run, qrels: Qrels) -> dict[str, float]:
    """Mean nDCG@10, recall@100 and MRR@10 over the judged queries."""
    judged = {q: dict(d) for q, d in qrels.items() if any(g > 0 for g in d.values())}
    if not judged:
        return {m: 0.0 for m in METRICS}
    full = {q: {d: float(s) for d, s in run.get(q, {}).items()} for q in judged}
    top10 = {q: dict(sorted(d.items(), key=lambda x: -x[1])[:10]) for q, d in full.items()}
    per_q = pytrec_eval.RelevanceEvaluator(judged, {"ndcg_cut.10", "recall.100"}).evaluate(
        {q: d or {"__none__": 0.0} for q, d in full.items()}
    )
    rr = pytrec_eval.RelevanceEvaluator(judged, {"recip_rank"}).evaluate(
        {q: d or {"__none__": 0.0} for q, d in top10.items()}
    )
    n = len(judged)
    return {
        "ndcg@10": sum(v["ndcg_cut_10"] for v in per_q.values()) / n,
        "recall@100": sum(v["recall_100"] for v in per_q.values()) / n,
        "mrr@10": sum(v["recip_rank"] for v in rr.values()) / n,
    }
