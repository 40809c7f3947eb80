"""The read path as a list of stages, each with one signature and one diagnostics record.

A stage takes the :class:`~cogitave.query.context.QueryContext` and the ranked candidates so
far and returns the new ranked candidates and its diagnostics, keyed as they appear in a
response (``{"gate": {...}}``; sub-timings under ``timings_ms``). The engine runs, times and
records them in one loop (:meth:`cogitave.query.engine.Engine.search`) and builds the
response's diagnostics from those records alone (:func:`diagnostics`)::

    planned: plan -> lenses -> fuse -> feedback -> exclude -> gate -> boost -> rerank
             -> backfill -> pages -> present
    plain:   lenses -> fuse -> exclude -> pages -> present

Each stage calls the module named after it (``prism``, ``legs``, ``fuse``, ``feedback``,
``exclude``, ``coherence``, ``boost``, ``rerank``, ``pages``, ``present``); this module only
binds them to the context.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from cogitave.expand import analysis
from cogitave.expand.lexicon import lexicon_from_config
from cogitave.query import legs
from cogitave.query.boost import no_boost_reason, residual_boost
from cogitave.query.candidates import CandidateVectors
from cogitave.query.coherence import gate as coherence_gate
from cogitave.query.context import Info, QueryContext, Stage
from cogitave.query.exclude import exclusions
from cogitave.query.feedback import feedback_query
from cogitave.query.fuse import RRF_K, Fused, rrf
from cogitave.query.lens import LensResult, dense_lens
from cogitave.query.pages import arrange_pages, attach_groups
from cogitave.query.present import present as present_hits
from cogitave.query.prism import plan as make_plan
from cogitave.query.ranked import Ranked, StageRecord
from cogitave.query.rerank import graph_rerank
from cogitave.schema import WHOLE


def plan(ctx: QueryContext, ranked: Ranked) -> tuple[Ranked, Info]:
    """The Prism: rewrites, routes, depths, channels, the residual phrase."""
    lexicon = lexicon_from_config(ctx.settings.lexicon)
    ctx.prism = make_plan(ctx.req, ctx.port, ctx.settings, lexicon, ctx.embed)
    return ranked, {"plan": ctx.prism.to_dict()}


def lenses(ctx: QueryContext, ranked: Ranked) -> tuple[Ranked, Info]:
    """Every lens of the plan (or the plain system), run; the encoder beside BM25."""
    if ctx.prism is None:
        ctx.lenses = legs.plain(ctx)
        return ranked, {"lenses": lens_records(ctx.lenses), "timings_ms": {}}
    ctx.lenses = legs.planned(ctx, ctx.prism)
    bm25 = next((lens for lens in ctx.lenses if lens.name == "bm25"), None)
    smoothing = (
        bm25.info.get("smoothing", {"applied": False, "reason": "off"})
        if bm25 is not None
        else {"applied": False, "reason": "no BM25 anchor"}
    )
    return ranked, {
        "lenses": lens_records(ctx.lenses),
        "smoothing": smoothing,
        "timings_ms": {"embed": ctx.embed_ms},
    }


def fuse(ctx: QueryContext, ranked: Ranked) -> tuple[Ranked, Info]:
    """RRF of the lenses; the planner's adds score evidence (``[fusion]``), the plain
    systems stay the plain formula they are the baseline of."""
    ctx.fused = _fused(ctx)
    return ctx.fused, {"fusion": _fusion_record(ctx, ctx.fused)}


def feedback(ctx: QueryContext, ranked: Ranked) -> tuple[Ranked, Info]:
    """The dense anchor asked again with the query moved toward the fused top, then fused
    again (:mod:`cogitave.query.feedback`; opt-in)."""
    fb = ctx.settings.feedback
    at = next((i for i, lens in enumerate(ctx.lenses) if lens.name == "dense"), None)
    if not fb.enabled or at is None or "__whole__" not in ctx.dense_q:
        return ranked, {"feedback": {"applied": False, "reason": "off"}}
    vectors = CandidateVectors(ctx.port, ranked.nids)
    q2, info = feedback_query(ctx.dense_q["__whole__"], ranked, vectors, fb.top, fb.weight)
    if q2 is None:
        return ranked, {"feedback": info}
    old = ctx.lenses[at]
    ctx.lenses = list(ctx.lenses)
    ctx.lenses[at] = dense_lens(ctx.port, "dense", WHOLE, q2, old.depth, ctx.where)
    ctx.fused = _fused(ctx)
    moved = len(set(old.nids[:10].tolist()) - set(ctx.lenses[at].nids[:10].tolist()))
    return ctx.fused, {
        "feedback": {**info, "dense_top10_changed": moved},
        "lenses": lens_records(ctx.lenses),
        "fusion": _fusion_record(ctx, ctx.fused),
    }


def exclude(ctx: QueryContext, ranked: Ranked) -> tuple[Ranked, Info]:
    """``-term`` exclusions; the filters themselves ran inside every leg."""
    excluded = ctx.prism.excluded_stems if ctx.prism is not None else ()
    kept, removed = exclusions(ctx.port, ranked, excluded)
    where = ctx.where
    if not where and not excluded:
        return kept, {"filters": {}}
    info: dict[str, Any] = {
        "filters": {d: list(v) for d, v in where.values.items()} if where else {},
        "excluded": list(excluded),
        "removed": removed,
        "applied": "inside every lens",
    }
    if where and where.path_prefix:
        info["path_prefix"] = where.path_prefix
    return kept, {"filters": info}


def gate(ctx: QueryContext, ranked: Ranked) -> tuple[Ranked, Info]:
    """Cross-dimension coherence: survivors; rejects kept aside for ``backfill``."""
    assert ctx.prism is not None
    ctx.vectors = CandidateVectors(ctx.port, ranked.nids)
    g = coherence_gate(
        ctx.port,
        ctx.prism,
        ranked,
        ctx.dense_q,
        share=ctx.settings.coherence.dense_top_share,
        backfill=ctx.req.backfill,
        vectors=ctx.vectors,
    )
    ctx.backfilled = g.backfilled
    return g.kept, {"gate": g.stats}


def boost(ctx: QueryContext, ranked: Ranked) -> tuple[Ranked, Info]:
    """The residual boost, when the plan has a dropped real-word phrase."""
    prism = ctx.prism
    assert prism is not None
    if not (prism.residual and "__residual__" in ctx.dense_q and len(ranked)):
        return ranked, {"boost": {"applied": False, "reason": no_boost_reason(prism)}}
    have = ctx.port.vector_dims()
    dims = [d for d in ctx.port.schema.semantic if d in have] or [WHOLE]
    out, info = residual_boost(
        ctx.port,
        ranked,
        ctx.dense_q["__residual__"],
        dims,
        ctx.settings.boost.residual_factor,
        ctx.vectors,
    )
    return out, {"boost": {**info, "phrase": prism.residual_phrase}}


def rerank(ctx: QueryContext, ranked: Ranked) -> tuple[Ranked, Info]:
    """The bounded graph rerank (``[rerank] enabled``)."""
    if not ctx.settings.rerank.enabled:
        return ranked, {}
    out, info = graph_rerank(ctx.port, ranked)
    return out, {"rerank": info}


def backfill(ctx: QueryContext, ranked: Ranked) -> tuple[Ranked, Info]:
    """The gate's rejects after the survivors (``backfill: true``), ordered by evidence."""
    tail = ctx.backfilled
    if not len(tail):
        return ranked, {}
    start = float(ranked.scores[-1]) if len(ranked) else 0.0
    return Ranked(
        np.concatenate([ranked.nids, tail.nids]),
        np.concatenate([ranked.scores, np.full(len(tail), start * 0.5)]),
    ), {}


def pages(ctx: QueryContext, ranked: Ranked) -> tuple[Ranked, Info]:
    """Hidden kinds and excluded paths out, release notes demoted, one hit per page."""
    nids, scores, ctx.groups, info = arrange_pages(
        ctx.port, ctx.req, ctx.settings.docs, ranked.nids, ranked.scores
    )
    return Ranked(nids, scores), {"pages": info, "total_hits": len(nids)}


def present(ctx: QueryContext, ranked: Ranked) -> tuple[Ranked, Info]:
    """The requested page of hits, with the stored nodes they came from."""
    req = ctx.req
    page = ranked.page(req.offset, req.limit)
    qterms = set(analysis.surface(req.query))
    if ctx.prism is not None:
        qterms |= set(ctx.prism.rewritten.tokens)
    assert ctx.fused is not None
    hits, ctx.nodes = present_hits(
        ctx.port,
        page,
        ctx.fused,
        qterms,
        first_rank=req.offset + 1,
        backfilled=frozenset(ctx.backfilled.nids.tolist()),
    )
    ctx.hits = attach_groups(hits, ctx.groups)
    return page, {}


PLANNED: tuple[tuple[str, Stage], ...] = (
    ("plan", plan),
    ("lenses", lenses),
    ("fuse", fuse),
    ("feedback", feedback),
    ("exclude", exclude),
    ("gate", gate),
    ("boost", boost),
    ("rerank", rerank),
    ("backfill", backfill),
    ("pages", pages),
    ("present", present),
)
PLAIN: tuple[tuple[str, Stage], ...] = (
    ("lenses", lenses),
    ("fuse", fuse),
    ("exclude", exclude),
    ("pages", pages),
    ("present", present),
)


def diagnostics(ctx: QueryContext, records: Sequence[StageRecord], total_ms: float) -> Info:
    """A response's diagnostics, from the stage records alone: each record's keys, the
    stages' times (and their sub-timings), the total."""
    out: dict[str, Any] = {"mode": ctx.req.mode, "root": ctx.port.root, "plan": None}
    timings: dict[str, float] = {}
    for r in records:
        info = dict(r.info)
        timings[r.name] = r.ms
        timings.update(info.pop("timings_ms", {}))
        out.update(info)
    out["timings_ms"] = {k: round(v, 3) for k, v in timings.items()}
    out["total_ms"] = total_ms
    return out


def lens_records(lenses: Sequence[LensResult]) -> list[dict[str, Any]]:
    return [
        {
            "name": lens.name,
            "kind": lens.kind,
            "depth": lens.depth,
            "hits": len(lens),
            "weight": lens.weight,
            "ms": round(lens.ms, 3),
        }
        for lens in lenses
    ]


def _score_weight(ctx: QueryContext) -> float:
    return ctx.settings.fusion.score_weight if ctx.prism is not None else 0.0


def _fused(ctx: QueryContext) -> Fused:
    port = ctx.port
    return rrf(ctx.lenses, port.uid_of, uid_rank=port.uid_rank, score_weight=_score_weight(ctx))


def _fusion_record(ctx: QueryContext, fused: Fused) -> Mapping[str, Any]:
    return {
        "method": "rrf",
        "k": RRF_K,
        "score_weight": _score_weight(ctx),
        "candidates": len(fused.nids),
    }
