"""The engine: (read port, request) -> response. The one ranking every surface reads.

``planned`` (the default mode) runs the whole read path as a list of stages over one ranked
value (:class:`~cogitave.query.ranked.Ranked`), each stage leaving one diagnostics record
(:mod:`cogitave.query.stages`)::

    plan -> lenses -> fuse -> feedback -> exclude -> gate -> boost -> rerank -> backfill
    -> pages -> present

``hybrid`` (RRF of whole-query BM25 and whole-query dense), ``bm25`` and ``dense`` run the
plain legs through the same fuse, exclude, pages and present stages, for evaluation and
comparison. Filters run inside every leg (:class:`~cogitave.store.port.Where`). Every stage is
a function of the read port and the request (:mod:`cogitave.store.port`), so it runs the same
on one root or on a sharded view. Diagnostics are always on: they are cheap.
"""

from __future__ import annotations

import time

import numpy as np

from cogitave.config import Settings
from cogitave.errors import QueryError
from cogitave.expand.lexicon import lexicon_from_config
from cogitave.nodes import strip_host
from cogitave.query import stages
from cogitave.query.context import QueryContext
from cogitave.query.encoder import query_encoder
from cogitave.query.lens import ms_since
from cogitave.query.ranked import Ranked, StageRecord
from cogitave.query.rewrite import rewrite
from cogitave.query.types import SearchRequest, SearchResponse
from cogitave.schema import WHOLE
from cogitave.store.port import ReadPort, Where


class Engine:
    """Answers searches against one read port (a snapshot, or a sharded view)."""

    def __init__(self, port: ReadPort, settings: Settings | None = None) -> None:
        self.port = port
        self.settings = settings or port.settings

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
        return query_encoder(name, self.port.encoder_graph).encode_queries(texts)

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
    def context(self, req: SearchRequest) -> QueryContext:
        """A checked request's context, before any stage ran."""
        self._check_request(req)
        embed = self.embed if self.has_dense else None
        return QueryContext(req, self.port, self.settings, embed, where=where_of(req))

    def search(self, req: SearchRequest) -> SearchResponse:
        """Run the read path for ``req``: each stage of the mode's pipeline in turn, timed
        and recorded; the diagnostics are built from the records (see the module doc)."""
        t0 = time.perf_counter()
        ctx = self.context(req)
        ranked = Ranked.empty()
        records: list[StageRecord] = []
        for name, stage in stages.PLANNED if req.mode == "planned" else stages.PLAIN:
            t = time.perf_counter()
            ranked, info = stage(ctx, ranked)
            records.append(StageRecord(name, ms_since(t), info))
        diag = stages.diagnostics(ctx, records, ms_since(t0))
        return SearchResponse(ctx.hits, self.port.root, diag, ctx.nodes)


def where_of(req: SearchRequest) -> Where | None:
    """The request's filters as the legs apply them (None: no filter): exact values
    casefolded as indexed, the path prefix without scheme, host or leading ``/``."""
    values = {d: tuple(v.strip().casefold() for v in vals) for d, vals in req.filters.items()}
    prefix = strip_host(req.path_prefix.strip()) if req.path_prefix else ""
    where = Where(values, prefix)
    return where or None
