"""Searches over a sharded view through the read port alone: the plain systems.

``bm25``, ``dense`` and ``hybrid`` run here as the engine runs them (same depths, same RRF,
same filters, same presentation), every snapshot question going through the port, so they
answer on one process's view or on shard actors alike. ``planned`` needs the engine's
planner, gate, boost and rerank stages, which read the port once the engine takes any
:class:`~cogitave.store.port.ReadPort`; until then it is refused with a clear error.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

import numpy as np

from cogitave.distributed.view import ShardedView
from cogitave.errors import QueryError
from cogitave.expand import analysis
from cogitave.query.engine import BM25_DEPTH, query_encoder, snippet, title_of
from cogitave.query.fuse import RRF_K, rrf
from cogitave.query.lens import LensResult
from cogitave.query.types import Hit, SearchRequest, SearchResponse
from cogitave.schema import WHOLE


def systems(view: ShardedView) -> tuple[str, ...]:
    """The systems a sharded view answers here."""
    return ("bm25", "dense", "hybrid") if WHOLE in view.vector_dims() else ("bm25",)


def search(view: ShardedView, req: SearchRequest) -> SearchResponse:
    """One search over the view: lenses (scattered) -> RRF -> filters -> a page of hits."""
    t0 = time.perf_counter()
    if req.mode not in systems(view):
        raise QueryError(
            f"mode {req.mode!r} is not available on this sharded collection; "
            f"available: {', '.join(systems(view))}"
        )
    schema = view.schema
    for d in req.dimensions or ():
        schema[d]
    for d in req.filters:
        if schema[d].type != "exact":
            raise QueryError(f"filter {d!r}: filters apply to exact dimensions only")
    view.take_missing()
    lenses = _lenses(view, req)
    fused = rrf(lenses, view.uid_of)
    ids, scores = fused.nids, fused.scores
    if req.filters and len(ids):
        ok = np.ones(len(ids), bool)
        for dim, values in req.filters.items():
            ok &= view.match(dim, "value", [v.strip().casefold() for v in values], ids)
        ids, scores = ids[ok], scores[ok]
    page = slice(req.offset, req.offset + req.limit)
    qterms = set(analysis.surface(req.query))
    page_ids = ids[page]
    nodes = view.nodes(page_ids.tolist()) if len(page_ids) else []
    hits = tuple(
        Hit(
            uid=node.uid,
            rank=req.offset + i + 1,
            score=round(float(score), 6),
            kind=node.kind,
            title=title_of(node, schema.semantic),
            snippet=snippet(node, schema.semantic, qterms),
            lenses=dict(ranks),
            url=_meta(node.meta, "url"),
            path=_meta(node.meta, "path"),
        )
        for i, (node, score, ranks) in enumerate(
            zip(nodes, scores[page], fused.ranks_for(page_ids), strict=True)
        )
    )
    missing = view.take_missing()
    diag: dict[str, Any] = {
        "mode": req.mode,
        "root": view.root,
        "shards": len(view.clients),
        "partial": bool(missing),
        "missing_shards": [view.clients[i].label for i in missing],
        "lenses": [
            {"name": x.name, "kind": x.kind, "depth": x.depth, "hits": len(x)} for x in lenses
        ],
        "fusion": {"method": "rrf", "k": RRF_K, "candidates": len(fused.nids)},
        "total_hits": len(ids),
        "total_ms": round((time.perf_counter() - t0) * 1e3, 3),
    }
    return SearchResponse(results=hits, root=view.root, diagnostics=diag)


def _lenses(view: ShardedView, req: SearchRequest) -> list[LensResult]:
    stems = analysis.stems(req.query)
    depth = max(BM25_DEPTH, req.offset + req.limit)
    dims = req.dimensions
    out: list[LensResult] = []
    if req.mode in ("bm25", "hybrid") and stems:
        for name, scope in [(f"bm25:{d}", d) for d in dims] if dims else [("bm25", WHOLE)]:
            ids, scores = view.bm25(scope, stems, depth, req.filters or None)
            out.append(LensResult(name, "bm25", ids, scores, depth=depth))
    if req.mode in ("dense", "hybrid"):
        name = view.encoder_name
        if name is None:
            raise QueryError("this collection has no encoder, so no dense search")
        q = query_encoder(name).encode_queries([req.query])[0]
        have = view.vector_dims()
        for d in [d for d in dims if d in have] if dims else [WHOLE]:
            ids, sims = view.dense(d, q, depth)
            out.append(
                LensResult("dense" if d == WHOLE else f"dense:{d}", "dense", ids, sims, depth=depth)
            )
    return out


def _meta(meta: Any, key: str) -> str:
    value = meta.get(key) if isinstance(meta, Mapping) else None
    return value if isinstance(value, str) else ""
