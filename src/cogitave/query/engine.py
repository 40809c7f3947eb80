"""The engine: (snapshot, request) -> response. The one ranking every surface reads.

Stages are pure functions of the snapshot and the request, so a shard could run them:
``lenses -> RRF -> results + diagnostics``. The planner (rewrite, route, Prism, coherence,
boost) and the graph rerank slot in between as they land; a surface never ranks anything.
"""

from __future__ import annotations

import re
import time
from typing import Any

import numpy as np

from cogitave.errors import QueryError
from cogitave.expand import analysis
from cogitave.expand.embed import CachedQueryEncoder, load_encoder
from cogitave.nodes import Node
from cogitave.query.fuse import RRF_K, rrf
from cogitave.query.lens import LensResult
from cogitave.query.types import Hit, SearchRequest, SearchResponse
from cogitave.store.lexical import ALL_FIELD, field_name
from cogitave.store.snapshot import Snapshot

BM25_DEPTH = 100
SNIPPET_CHARS = 240


_QUERY_ENCODERS: dict[str, CachedQueryEncoder] = {}


def query_encoder(name: str) -> CachedQueryEncoder:
    """The process-wide cached query encoder for an encoder name."""
    enc = _QUERY_ENCODERS.get(name)
    if enc is None:
        enc = _QUERY_ENCODERS.setdefault(name, CachedQueryEncoder(load_encoder(name)))
    return enc


class Engine:
    """Answers searches against one snapshot."""

    def __init__(self, snapshot: Snapshot) -> None:
        self.snap = snapshot

    def systems(self) -> tuple[str, ...]:
        """The modes this snapshot can run (dense modes need stored vectors)."""
        if self.snap.vectors:
            return ("bm25", "dense", "hybrid")
        return ("bm25",)

    def embed(self, texts: list[str]) -> np.ndarray:
        """Query embeddings through the process-wide LRU cache (one batched call for misses)."""
        name = self.snap.encoder_name
        if name is None:
            raise QueryError("this collection has no encoder, so no dense search")
        return query_encoder(name).encode_queries(texts)

    def dense_lens(self, dim: str, q: np.ndarray, depth: int, name: str) -> LensResult:
        t0 = time.perf_counter()
        nids, sims = self.snap.vectors[dim].search(q, depth)
        return LensResult(
            name, "dense", nids, sims, depth=depth, ms=(time.perf_counter() - t0) * 1e3
        )

    # -- lenses -----------------------------------------------------------------------------
    def bm25_lens(
        self, field: str, terms: list[str], depth: int, req: SearchRequest, name: str
    ) -> LensResult:
        t0 = time.perf_counter()
        lex = self.snap.lexical
        nids, scores = lex.search(lex.query(field, terms, filters=req.filters), depth)
        return LensResult(
            name, "bm25", nids, scores, depth=depth, ms=(time.perf_counter() - t0) * 1e3
        )

    def _check_request(self, req: SearchRequest) -> None:
        schema = self.snap.schema
        for d in req.dimensions or ():
            schema[d]  # raises naming the known dimensions
        for d in req.filters:
            if schema[d].type != "exact":
                raise QueryError(f"filter {d!r}: filters apply to exact dimensions only")

    # -- search -----------------------------------------------------------------------------
    def search(self, req: SearchRequest) -> SearchResponse:
        t0 = time.perf_counter()
        self._check_request(req)
        if req.mode not in ("planned", *self.systems()):
            raise QueryError(
                f"mode {req.mode!r} needs dense vectors, which this collection does not have; "
                f"available: {', '.join(self.systems())}"
            )
        terms = analysis.stems(req.query)
        depth = max(BM25_DEPTH, req.offset + req.limit)
        mode = req.mode if req.mode != "planned" else self.systems()[-1]
        lenses: list[LensResult] = []
        if terms and mode in ("bm25", "hybrid"):
            if req.dimensions:
                for d in req.dimensions:
                    f = field_name(d, self.snap.schema)
                    lenses.append(self.bm25_lens(f, terms, depth, req, f"bm25:{d}"))
            else:
                lenses.append(self.bm25_lens(ALL_FIELD, terms, depth, req, "bm25"))
        if mode in ("dense", "hybrid"):
            q = self.embed([req.query])[0]
            dims = [d for d in (req.dimensions or self.snap.vectors) if d in self.snap.vectors]
            for d in dims:
                lenses.append(self.dense_lens(d, q, depth, f"dense:{d}"))
        fused = rrf(lenses, self.snap.uid_of)
        page = slice(req.offset, req.offset + req.limit)
        nids = fused.nids[page]
        qterms = set(analysis.surface(req.query))
        results = tuple(
            self._hit(int(nid), req.offset + i + 1, float(score), fused.ranks[int(nid)], qterms)
            for i, (nid, score) in enumerate(zip(nids, fused.scores[page], strict=True))
        )
        diagnostics: dict[str, Any] = {
            "mode": req.mode,
            "root": self.snap.root,
            "terms": terms,
            "lenses": [
                {
                    "name": lens.name,
                    "kind": lens.kind,
                    "depth": lens.depth,
                    "hits": len(lens),
                    "ms": round(lens.ms, 3),
                }
                for lens in lenses
            ],
            "fusion": {"method": "rrf", "k": RRF_K, "candidates": len(fused.nids)},
            "total_ms": round((time.perf_counter() - t0) * 1e3, 3),
        }
        return SearchResponse(results=results, root=self.snap.root, diagnostics=diagnostics)

    # -- presentation -----------------------------------------------------------------------
    def _hit(
        self, nid: int, rank: int, score: float, ranks: dict[str, int], qterms: set[str]
    ) -> Hit:
        node = self.snap.nodes.node(nid)
        return Hit(
            uid=node.uid,
            rank=rank,
            score=round(score, 6),
            kind=node.kind,
            title=title_of(node, self.snap.schema.semantic),
            snippet=snippet(node, self.snap.schema.semantic, qterms),
            lenses=dict(ranks),
        )


def title_of(node: Node, semantic: list[str]) -> str:
    """``title`` if the node has one, else the start of its first semantic dimension."""
    if isinstance(node.dims.get("title"), str):
        return str(node.dims["title"])
    for d in semantic:
        text = node.text(d).strip()
        if text:
            return text[:80] + ("…" if len(text) > 80 else "")
    return node.uid


_WORD = re.compile(r"\w+", re.UNICODE)


def snippet(node: Node, semantic: list[str], qterms: set[str], width: int = SNIPPET_CHARS) -> str:
    """A window of the semantic text with the most query terms in it (plain text)."""
    best, best_hits = "", -1
    for d in semantic:
        if d == "title":
            continue
        text = " ".join(node.text(d).split())
        if not text:
            continue
        positions = [m.start() for m in _WORD.finditer(text) if m.group().lower() in qterms]
        if not positions:
            start, hits = 0, 0
        else:
            arr = np.asarray(positions)
            counts = np.searchsorted(arr, arr + width) - np.arange(len(arr))
            i = int(np.argmax(counts))
            start, hits = max(0, positions[i] - 40), int(counts[i])
        if hits > best_hits:
            end = start + width
            best = ("…" if start else "") + text[start:end] + ("…" if end < len(text) else "")
            best_hits = hits
    return best
