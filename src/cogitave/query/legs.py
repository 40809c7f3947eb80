"""Which lenses a search runs, and running them: a plan (or a plain system) -> lens results.

``planned``: every lens the Prism names. The whole-query BM25 anchor (smoothed over like
candidates, :mod:`cogitave.query.smooth`), the whole-query dense anchor, BM25 and dense of each
explicitly routed dimension, the noise channels, and an exact lens per routed exact dimension.
The encoder and then the dense lenses run on a worker beside the BM25 lenses
(:func:`~cogitave.query.lens.run_lenses`).

``hybrid``, ``bm25``, ``dense``: the plain legs over the whole node (or each listed dimension),
the baselines the planner is measured against; ``hybrid`` encodes on the same worker while its
BM25 legs run.

Every lens gets the request's filter and ranks only the nodes it allows.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Mapping
from dataclasses import replace
from functools import partial

import numpy as np

from cogitave.expand import analysis
from cogitave.query import lens as lens_mod
from cogitave.query.context import QueryContext
from cogitave.query.lens import LensResult, bm25_lens, dense_job, exact_lens, ms_since
from cogitave.query.prism import DimPlan, Prism
from cogitave.query.smooth import smooth
from cogitave.schema import WHOLE

BM25_DEPTH = 100
"""Depth of the plain systems' legs (at least the page asked for)."""


def plain(ctx: QueryContext) -> list[LensResult]:
    """The plain systems' lenses: whole-node BM25 and/or dense (or per listed dimension)."""
    req, port, where = ctx.req, ctx.port, ctx.where
    stems = analysis.stems(req.query)
    depth = max(BM25_DEPTH, req.offset + req.limit)
    lenses: list[LensResult] = []
    dims = req.dimensions
    dense = req.mode in ("dense", "hybrid") and ctx.embed is not None
    lexical = req.mode in ("bm25", "hybrid") and bool(stems)
    # The query is encoded on a worker while this thread runs BM25: a hybrid query waits
    # for the slower leg, not for both.
    encoding = (
        lens_mod.pool("encode").submit(_embed_timed, ctx, [req.query])
        if dense and lexical
        else None
    )
    if lexical:
        for d in dims or (WHOLE,):
            name = "bm25" if d == WHOLE else f"bm25:{d}"
            lenses.append(bm25_lens(port, name, d, stems, depth, where))
    if dense:
        if encoding is not None:
            mat, ctx.embed_ms = encoding.result()
        else:
            mat, ctx.embed_ms = _embed_timed(ctx, [req.query])
        q = mat[0]
        have = port.vector_dims()
        for d in [d for d in dims if d in have] if dims else [WHOLE]:
            name = "dense" if d == WHOLE else f"dense:{d}"
            lenses.append(lens_mod.dense_lens(port, name, d, q, depth, where))
    return lenses


def planned(ctx: QueryContext, prism: Prism) -> list[LensResult]:
    """Every lens the Prism names; the query vectors land in ``ctx.dense_q``."""
    port, where, dense_q = ctx.port, ctx.where, ctx.dense_q
    shared = _shared_dims(ctx, prism) if ctx.has_dense else {}
    texts = _dense_texts(ctx, prism, shared) if ctx.has_dense else {}
    depth = prism.anchor_depth
    slots: list[Callable[[], LensResult]] = []
    if prism.whole_stems:
        slots.append(partial(_bm25_anchor, ctx, prism, depth))
    if ctx.has_dense:
        slots.append(dense_job(port, "dense", WHOLE, dense_q, "__whole__", depth, where))
    for p in prism.lensed:
        if p.type == "semantic":
            slots.append(
                partial(bm25_lens, port, f"bm25:{p.dim}", p.dim, p.stems, p.bm25_depth, where)
            )
            if p.dim in texts or p.dim in shared:
                slots.append(
                    dense_job(port, f"dense:{p.dim}", p.dim, dense_q, p.dim, p.dense_depth, where)
                )
    # A channel over the whole node asks exactly what the dense anchor asks (same vector,
    # same depth): it reuses the anchor's hits under its own weight instead of searching
    # again (at 100k nodes the second search cost 4 ms on a 2-core box).
    reused = [c for c in prism.channels if ctx.has_dense and c.dim == WHOLE]
    for c in (c for c in prism.channels if c not in reused):
        slots.append(
            dense_job(
                port,
                f"channel:{c.dim}",
                c.dim,
                dense_q,
                "__whole__",
                depth,
                where,
                weight=c.weight,
                kind="channel",
            )
        )

    def vectors() -> None:
        if texts:
            mat, ctx.embed_ms = _embed_timed(ctx, list(texts.values()))
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
    symbol = symbol_lens(ctx, pool)
    if symbol is not None:
        lenses.append(symbol)
    # An exact dimension is matched for every routed one: its lens ranks nothing (every
    # match ties) but marks the pool's candidates, or supplies them when nothing else did.
    for p in prism.gated:
        if p.type == "exact":
            among = pool if pool is not None and len(pool) else None
            lenses.append(exact_lens(port, f"exact:{p.dim}", p.dim, p.stems, among, where))
    return lenses


SYMBOL_WEIGHT = 4.0
"""The symbol lens's RRF weight: a name typed whole outweighs two lenses' worth of words (its
neighbours, ``Client.get`` and ``USE_CLIENT_DEFAULT``, top both word lenses with their
score evidence)."""
_SYMBOL = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+")


def symbol_lens(ctx: QueryContext, pool: np.ndarray | None) -> LensResult | None:
    """A query that is one dotted name (``httpx.Client``, ``pathlib.Path.read_text()``): the
    candidates named exactly that (their title, or their uid within its library), as a lens
    of their own. Without it an agent asking for ``httpx.Client`` got
    ``httpx.USE_CLIENT_DEFAULT`` first (the same words, and more of them). Read among the
    pool the other lenses found, so filters hold and nothing is scanned."""
    text = ctx.req.query.strip().removesuffix("()")
    if pool is None or not len(pool) or not _SYMBOL.fullmatch(text):
        return None
    t0 = time.perf_counter()
    facts = ctx.port.node_facts(pool.tolist())
    named = [
        int(nid)
        for nid, f in zip(pool.tolist(), facts, strict=True)
        if f.title == text or f.uid.rpartition(":")[2] == text
    ]
    if not named:
        return None
    nids = np.asarray(named, np.uint64)
    nids = nids[np.argsort(ctx.port.uid_rank(nids), kind="stable")]
    return LensResult(
        "symbol",
        "exact",
        nids,
        np.ones(len(nids), np.float32),
        depth=len(nids),
        ms=ms_since(t0),
        weight=SYMBOL_WEIGHT,
        info={"symbol": text, "tied": True},
    )


def _bm25_anchor(ctx: QueryContext, prism: Prism, depth: int) -> LensResult:
    """The whole-query BM25 lens (the Prism's function-word weights, its compounds and
    phrases matched whole too), smoothed over like candidates when the collection has
    vectors (:mod:`cogitave.query.smooth`); how is in the lens's ``info``."""
    sm = ctx.settings.smoothing
    bm25 = partial(
        bm25_lens,
        ctx.port,
        "bm25",
        WHOLE,
        prism.whole_stems,
        where=ctx.where,
        term_weights=prism.anchor_weights,
        phrases=prism.phrases,
    )
    if not (sm.enabled and sm.weight > 0 and ctx.has_dense):
        lens = bm25(depth)
        reason = "off" if ctx.has_dense else "no vectors"
        return replace(lens, info={"smoothing": {"applied": False, "reason": reason}})
    lens = bm25(max(depth, sm.candidates))
    lens, info = smooth(ctx.port, lens, sm, depth)
    return replace(lens, info={**lens.info, "smoothing": info})


def _embed_timed(ctx: QueryContext, texts: list[str]) -> tuple[np.ndarray, float]:
    """One batched encoder call and its time in ms."""
    assert ctx.embed is not None
    t = time.perf_counter()
    return ctx.embed(texts), ms_since(t)


def _semantic_routed(ctx: QueryContext, prism: Prism) -> list[DimPlan]:
    have = ctx.port.vector_dims()
    return [p for p in prism.gated if p.type == "semantic" and p.dim in have]


def _shared_dims(ctx: QueryContext, prism: Prism) -> dict[str, str]:
    """Routed dimensions served by the whole-query vector: one routed dimension holding
    every routed term, no noise. Its text is the query less its unrouted words, and the
    whole-query vector serves it (one encoder text per query instead of two; the encoder
    is most of a query's time)."""
    semantic = _semantic_routed(ctx, prism)
    if len(prism.gated) == 1 and len(semantic) == 1 and not prism.rewritten.noise:
        return {semantic[0].dim: "__whole__"}
    return {}


def _dense_texts(ctx: QueryContext, prism: Prism, shared: Mapping[str, str]) -> dict[str, str]:
    """What the encoder embeds for a plan, by key: ``__whole__``, each routed semantic
    dimension's text (unless ``shared``: the whole-query vector serves it),
    ``__residual__``."""
    texts = {"__whole__": prism.whole_text or ctx.req.query}
    for p in _semantic_routed(ctx, prism):
        if p.dim not in shared:
            texts[p.dim] = p.text
    if prism.residual:
        texts["__residual__"] = prism.residual_phrase
    return texts
