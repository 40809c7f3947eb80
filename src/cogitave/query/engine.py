"""The engine: (read port, request) -> response. The one ranking every surface reads.

``planned`` (the default mode) runs the whole read path as a list of stages over one ranked
value (:class:`~cogitave.query.ranked.Ranked`), each stage leaving one diagnostics record::

    plan -> lenses -> fuse -> feedback -> filter -> gate -> boost -> rerank -> pages -> present

The whole-query BM25 lens is smoothed over like candidates inside its own slot
(:mod:`cogitave.query.smooth`; ``diagnostics["smoothing"]``).

``hybrid`` (RRF of whole-query BM25 and whole-query dense), ``bm25`` and ``dense`` run the
plain legs through the same fuse, filter and present stages, for evaluation and comparison.
Every stage is a function of the read port and the request (:mod:`cogitave.store.port`), so it
runs the same on one root or on a sharded view. Diagnostics are always on: they are cheap.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from functools import partial
from typing import Any

import numpy as np

from cogitave.config import Settings
from cogitave.errors import QueryError
from cogitave.expand import analysis
from cogitave.expand.embed import CachedQueryEncoder, load_encoder
from cogitave.expand.lexicon import lexicon_from_config
from cogitave.query import lens as lens_mod
from cogitave.query.boost import residual_boost
from cogitave.query.candidates import CandidateVectors
from cogitave.query.coherence import gate
from cogitave.query.feedback import feedback_query
from cogitave.query.filters import apply_filters
from cogitave.query.fuse import RRF_K, Fused, rrf
from cogitave.query.lens import LensResult, bm25_lens, dense_job, exact_lens, ms_since
from cogitave.query.pages import arrange_pages, attach_groups
from cogitave.query.present import present
from cogitave.query.prism import DimPlan, Prism, plan
from cogitave.query.ranked import Ranked, StageRecord
from cogitave.query.rerank import graph_rerank
from cogitave.query.rewrite import rewrite
from cogitave.query.smooth import smooth
from cogitave.query.types import SearchRequest, SearchResponse
from cogitave.schema import WHOLE
from cogitave.store.port import Filters, ReadPort

BM25_DEPTH = 100

_QUERY_ENCODERS: dict[str, CachedQueryEncoder] = {}


def query_encoder(name: str) -> CachedQueryEncoder:
    """The process-wide cached query encoder for an encoder name."""
    enc = _QUERY_ENCODERS.get(name)
    if enc is None:
        enc = _QUERY_ENCODERS.setdefault(name, CachedQueryEncoder(load_encoder(name)))
    return enc


class Engine:
    """Answers searches against one read port (a snapshot, or a sharded view)."""

    def __init__(self, port: ReadPort, settings: Settings | None = None) -> None:
        self.port = port
        self.settings = settings or port.settings

    @property
    def snap(self) -> ReadPort:
        """The read port (named for the snapshot it usually is)."""
        return self.port

    def systems(self) -> tuple[str, ...]:
        """The modes this snapshot can run (dense modes need stored vectors)."""
        if self.has_dense:
            return ("bm25", "dense", "hybrid", "planned")
        return ("bm25", "planned")

    @property
    def has_dense(self) -> bool:
        return WHOLE in self.port.vector_dims()

    def warm(self) -> None:
        """Load everything a first query would: the lexicon, the spelling index, the encoder,
        the indexes, the dense samples, the graph. Servers call this before taking traffic."""
        lexicon = lexicon_from_config(self.settings.lexicon)
        rewrite(["zzzwarmupzzz"], self.port.stats, lexicon, dims=self.port.schema.names)
        self.port.warm()
        if self.has_dense:
            self.embed(["warm up"])

    def embed(self, texts: list[str]) -> np.ndarray:
        """Query embeddings through the process-wide LRU cache (one batched call for misses)."""
        name = self.port.encoder_name
        if name is None:
            raise QueryError("this collection has no encoder, so no dense search")
        return query_encoder(name).encode_queries(texts)

    # -- validation -------------------------------------------------------------------------
    def _check_request(self, req: SearchRequest) -> None:
        schema = self.port.schema
        for d in req.dimensions or ():
            schema[d]  # raises naming the known dimensions
        for d in req.filters:
            if schema[d].type != "exact":
                raise QueryError(f"filter {d!r}: filters apply to exact dimensions only")
        if req.mode not in self.systems():
            raise QueryError(
                f"mode {req.mode!r} needs dense vectors, which this collection does not have; "
                f"available: {', '.join(self.systems())}"
            )

    # -- the pipeline -----------------------------------------------------------------------
    def search(self, req: SearchRequest) -> SearchResponse:
        """Run the read path for ``req``; see the module docstring."""
        t0 = time.perf_counter()
        self._check_request(req)
        records: list[StageRecord] = []

        def timed(name: str, fn: Callable[[], Any]) -> Any:
            t = time.perf_counter()
            out = fn()
            records.append(StageRecord(name, ms_since(t), {}))
            return out

        prism: Prism | None = None
        if req.mode == "planned":
            prism = timed("plan", lambda: self.plan(req))
            lenses, dense_q, embed_ms = timed("lenses", lambda: self.planned_lenses(req, prism))
        else:
            lenses, dense_q, embed_ms = timed("lenses", lambda: self.plain_lenses(req))
        t = time.perf_counter()
        fused: Fused = self.fuse(prism, lenses)
        ranked, filt = self.filter_stage(req, prism, fused)
        records.append(StageRecord("fuse", ms_since(t), {"candidates": len(fused)}))
        diag: dict[str, Any] = {"mode": req.mode, "root": self.port.root}
        if prism is not None:
            bm25 = next((lens for lens in lenses if lens.name == "bm25"), None)
            diag["smoothing"] = (
                bm25.info.get("smoothing", {"applied": False, "reason": "off"})
                if bm25 is not None
                else {"applied": False, "reason": "no BM25 anchor"}
            )
            t = time.perf_counter()
            lenses, fused, ranked, filt, diag["feedback"] = self.feedback_stage(
                req, prism, lenses, dense_q, fused, ranked, filt
            )
            records.append(StageRecord("feedback", ms_since(t), diag["feedback"]))
        backfilled = Ranked.empty()
        if prism is not None:
            vectors = CandidateVectors(self.port, ranked.nids)
            t = time.perf_counter()
            ranked, backfilled, diag["gate"] = self.gate_stage(req, prism, ranked, dense_q, vectors)
            records.append(StageRecord("gate", ms_since(t), diag["gate"]))
            t = time.perf_counter()
            ranked, diag["boost"] = self.boost_stage(prism, ranked, dense_q, vectors)
            records.append(StageRecord("boost", ms_since(t), diag["boost"]))
            t = time.perf_counter()
            if self.settings.rerank.enabled:
                ranked, diag["rerank"] = graph_rerank(self.port, ranked)
            records.append(StageRecord("rerank", ms_since(t), diag.get("rerank", {})))
        if len(backfilled):
            start = float(ranked.scores[-1]) if len(ranked) else 0.0
            tail = Ranked(backfilled.nids, np.full(len(backfilled), start * 0.5))
            ranked = Ranked(
                np.concatenate([ranked.nids, tail.nids]),
                np.concatenate([ranked.scores, tail.scores]),
            )
        t = time.perf_counter()
        nids, scores, groups, diag["pages"] = arrange_pages(
            self.port, req, self.settings.docs, ranked.nids, ranked.scores
        )
        ranked = Ranked(nids, scores)
        records.append(StageRecord("pages", ms_since(t), diag["pages"]))
        t = time.perf_counter()
        qterms = set(analysis.surface(req.query))
        if prism is not None:
            qterms |= set(prism.rewritten.tokens)
        results = present(
            self.port,
            ranked.page(req.offset, req.limit),
            fused,
            qterms,
            first_rank=req.offset + 1,
            backfilled=frozenset(backfilled.nids.tolist()),
        )
        results = attach_groups(results, groups)
        records.append(StageRecord("present", ms_since(t), {}))
        timings = {r.name: r.ms for r in records}
        if prism is not None:
            timings["embed"] = embed_ms
        diag.update(
            {
                "plan": prism.to_dict() if prism is not None else None,
                "lenses": [
                    {
                        "name": lens.name,
                        "kind": lens.kind,
                        "depth": lens.depth,
                        "hits": len(lens),
                        "weight": lens.weight,
                        "ms": round(lens.ms, 3),
                    }
                    for lens in lenses
                ],
                "fusion": {
                    "method": "rrf",
                    "k": RRF_K,
                    "score_weight": self._score_weight(prism),
                    "candidates": len(fused.nids),
                },
                "filters": filt,
                "total_hits": len(ranked),
                "timings_ms": {k: round(v, 3) for k, v in timings.items()},
                "total_ms": ms_since(t0),
            }
        )
        return SearchResponse(results=results, root=self.port.root, diagnostics=diag)

    # -- stages -----------------------------------------------------------------------------
    def plan(self, req: SearchRequest) -> Prism:
        """The Prism of ``req`` (rewrites, routes, depths, channels, residual phrase)."""
        lexicon = lexicon_from_config(self.settings.lexicon)
        return plan(req, self.port, self.settings, lexicon, self.embed if self.has_dense else None)

    def plain_lenses(
        self, req: SearchRequest
    ) -> tuple[list[LensResult], dict[str, np.ndarray], float]:
        """The plain systems' lenses: whole-node BM25 and/or dense (or per listed dimension)."""
        stems = analysis.stems(req.query)
        depth = max(BM25_DEPTH, req.offset + req.limit)
        lenses: list[LensResult] = []
        dims = req.dimensions
        port = self.port
        if req.mode in ("bm25", "hybrid") and stems:
            for d in dims or (WHOLE,):
                name = "bm25" if d == WHOLE else f"bm25:{d}"
                lenses.append(bm25_lens(port, name, d, stems, depth, req.filters))
        embed_ms = 0.0
        if req.mode in ("dense", "hybrid"):
            t = time.perf_counter()
            q = self.embed([req.query])[0]
            embed_ms = ms_since(t)
            have = port.vector_dims()
            for d in [d for d in dims if d in have] if dims else [WHOLE]:
                name = "dense" if d == WHOLE else f"dense:{d}"
                lenses.append(lens_mod.dense_lens(port, name, d, q, depth))
        return lenses, {}, embed_ms

    def planned_lenses(
        self, req: SearchRequest, prism: Prism
    ) -> tuple[list[LensResult], dict[str, np.ndarray], float]:
        """Every lens the Prism names; the encoder runs beside the BM25 lenses."""
        port = self.port
        dense_q: dict[str, np.ndarray] = {}
        shared = self._shared_dims(prism) if self.has_dense else {}
        texts = self._dense_texts(prism, req, shared) if self.has_dense else {}
        encoding = (
            lens_mod.pool("encode").submit(self._embed_timed, list(texts.values()))
            if texts
            else None
        )
        depth = prism.anchor_depth
        filters = req.filters
        slots: list[Callable[[], LensResult]] = []
        if prism.whole_stems:
            slots.append(
                partial(self._bm25_anchor, prism.whole_stems, prism.anchor_weights, depth, filters)
            )
        if self.has_dense:
            slots.append(dense_job(port, "dense", WHOLE, dense_q, "__whole__", depth))
        for p in prism.lensed:
            if p.type == "semantic":
                slots.append(
                    partial(bm25_lens, port, f"bm25:{p.dim}", p.dim, p.stems, p.bm25_depth, filters)
                )
                if p.dim in texts or p.dim in shared:
                    slots.append(
                        dense_job(port, f"dense:{p.dim}", p.dim, dense_q, p.dim, p.dense_depth)
                    )
        # A channel over the whole node asks exactly what the dense anchor asks (same vector,
        # same depth): it reuses the anchor's hits under its own weight instead of searching
        # again (at 100k nodes the second search cost 4 ms on a 2-core box).
        reused = [c for c in prism.channels if self.has_dense and c.dim == WHOLE]
        for c in (c for c in prism.channels if c not in reused):
            slots.append(
                dense_job(
                    port,
                    f"channel:{c.dim}",
                    c.dim,
                    dense_q,
                    "__whole__",
                    depth,
                    weight=c.weight,
                    kind="channel",
                )
            )
        embed_ms = 0.0

        def vectors() -> None:
            nonlocal embed_ms
            if encoding is not None:
                mat, embed_ms = encoding.result()
                dense_q.update(zip(texts, mat, strict=True))
                for dim, key in shared.items():
                    dense_q[dim] = dense_q[key]

        lenses = lens_mod.run_lenses(slots, vectors)
        anchor = next((lens for lens in lenses if lens.name == "dense"), None)
        if anchor is not None:
            lenses += [
                replace(
                    anchor,
                    name=f"channel:{c.dim}",
                    kind="channel",
                    weight=c.weight,
                    ms=0.0,
                    info={**anchor.info, "hits_of": "dense"},
                )
                for c in reused
            ]
        pool = np.unique(np.concatenate([lens.nids for lens in lenses])) if lenses else None
        # An exact dimension is matched for every routed one: its lens ranks nothing (every
        # match ties) but marks the pool's candidates, or supplies them when nothing else did.
        for p in prism.gated:
            if p.type == "exact":
                among = pool if pool is not None and len(pool) else None
                lenses.append(exact_lens(port, f"exact:{p.dim}", p.dim, p.stems, among))
        return lenses, dense_q, embed_ms

    def _bm25_anchor(
        self,
        stems: Sequence[str],
        weights: Mapping[str, float],
        depth: int,
        filters: Filters | None,
    ) -> LensResult:
        """The whole-query BM25 lens (``weights``: the Prism's function-word weights),
        smoothed over like candidates when the collection has vectors
        (:mod:`cogitave.query.smooth`); how is in the lens's ``info``."""
        sm = self.settings.smoothing
        bm25 = partial(bm25_lens, self.port, "bm25", WHOLE, stems, term_weights=weights)
        if not (sm.enabled and sm.weight > 0 and self.has_dense):
            lens = bm25(depth, filters)
            reason = "off" if self.has_dense else "no vectors"
            return replace(lens, info={"smoothing": {"applied": False, "reason": reason}})
        lens = bm25(max(depth, sm.candidates), filters)
        lens, info = smooth(self.port, lens, sm, depth)
        return replace(lens, info={**lens.info, "smoothing": info})

    def feedback_stage(
        self,
        req: SearchRequest,
        prism: Prism,
        lenses: list[LensResult],
        dense_q: Mapping[str, np.ndarray],
        fused: Fused,
        ranked: Ranked,
        filt: dict[str, Any],
    ) -> tuple[list[LensResult], Fused, Ranked, dict[str, Any], dict[str, Any]]:
        """The feedback lens (:mod:`cogitave.query.feedback`): the dense anchor asked again
        with the query moved toward the fused top, then fused again."""
        fb = self.settings.feedback
        at = next((i for i, lens in enumerate(lenses) if lens.name == "dense"), None)
        if not fb.enabled or at is None or "__whole__" not in dense_q:
            return lenses, fused, ranked, filt, {"applied": False, "reason": "off"}
        q2, info = feedback_query(
            dense_q["__whole__"],
            ranked,
            CandidateVectors(self.port, ranked.nids),
            fb.top,
            fb.weight,
        )
        if q2 is None:
            return lenses, fused, ranked, filt, info
        old = lenses[at]
        lenses = list(lenses)
        lenses[at] = lens_mod.dense_lens(self.port, "dense", WHOLE, q2, old.depth)
        fused = self.fuse(prism, lenses)
        ranked, filt = self.filter_stage(req, prism, fused)
        moved = len(set(old.nids[:10].tolist()) - set(lenses[at].nids[:10].tolist()))
        return lenses, fused, ranked, filt, {**info, "dense_top10_changed": moved}

    def fuse(self, prism: Prism | None, lenses: list[LensResult]) -> Fused:
        """RRF of the lenses; the planner's adds score evidence (``[fusion]``), the plain
        systems stay the plain formula they are the baseline of."""
        return rrf(
            lenses,
            self.port.uid_of,
            uid_rank=self.port.uid_rank,
            score_weight=self._score_weight(prism),
        )

    def _score_weight(self, prism: Prism | None) -> float:
        return self.settings.fusion.score_weight if prism is not None else 0.0

    def filter_stage(
        self, req: SearchRequest, prism: Prism | None, fused: Ranked
    ) -> tuple[Ranked, dict[str, Any]]:
        """Exact filters (for the dense legs, which cannot filter) and ``-term`` exclusions."""
        excluded = prism.excluded_stems if prism is not None else ()
        return apply_filters(self.port, fused, req.filters, excluded)

    def gate_stage(
        self,
        req: SearchRequest,
        prism: Prism,
        ranked: Ranked,
        dense_q: Mapping[str, np.ndarray],
        vectors: CandidateVectors,
    ) -> tuple[Ranked, Ranked, dict[str, Any]]:
        """Cross-dimension coherence: survivors, backfilled rejects, the gate's numbers."""
        g = gate(
            self.port,
            prism,
            ranked,
            dense_q,
            share=self.settings.coherence.dense_top_share,
            backfill=req.backfill,
            vectors=vectors,
        )
        return g.kept, g.backfilled, g.stats

    def boost_stage(
        self,
        prism: Prism,
        ranked: Ranked,
        dense_q: Mapping[str, np.ndarray],
        vectors: CandidateVectors,
    ) -> tuple[Ranked, dict[str, Any]]:
        """The residual boost, when the plan has a dropped real-word phrase."""
        if prism.residual and "__residual__" in dense_q and len(ranked):
            have = self.port.vector_dims()
            dims = [d for d in self.port.schema.semantic if d in have] or [WHOLE]
            out, info = residual_boost(
                self.port,
                ranked,
                dense_q["__residual__"],
                dims,
                self.settings.boost.residual_factor,
                vectors,
            )
            return out, {**info, "phrase": prism.residual_phrase}
        return ranked, {"applied": False, "reason": _no_boost_reason(prism)}

    # -- planned lenses' helpers ------------------------------------------------------------
    def _embed_timed(self, texts: list[str]) -> tuple[np.ndarray, float]:
        """One batched encoder call and its time in ms."""
        t = time.perf_counter()
        return self.embed(texts), ms_since(t)

    def _semantic_routed(self, prism: Prism) -> list[DimPlan]:
        have = self.port.vector_dims()
        return [p for p in prism.gated if p.type == "semantic" and p.dim in have]

    def _shared_dims(self, prism: Prism) -> dict[str, str]:
        """Routed dimensions served by the whole-query vector: one routed dimension holding
        every routed term, no noise. Its text is the query less its unrouted words, and the
        whole-query vector serves it (one encoder text per query instead of two; the encoder
        is most of a query's time)."""
        semantic = self._semantic_routed(prism)
        if len(prism.gated) == 1 and len(semantic) == 1 and not prism.rewritten.noise:
            return {semantic[0].dim: "__whole__"}
        return {}

    def _dense_texts(
        self, prism: Prism, req: SearchRequest, shared: Mapping[str, str]
    ) -> dict[str, str]:
        """What the encoder embeds for a plan, by key: ``__whole__``, each routed semantic
        dimension's text (unless ``shared``: the whole-query vector serves it),
        ``__residual__``."""
        texts = {"__whole__": prism.whole_text or req.query}
        for p in self._semantic_routed(prism):
            if p.dim not in shared:
                texts[p.dim] = p.text
        if prism.residual:
            texts["__residual__"] = prism.residual_phrase
        return texts


def _no_boost_reason(prism: Prism) -> str:
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
