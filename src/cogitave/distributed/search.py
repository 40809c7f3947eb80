"""Searches over a sharded view: the one engine, on the read port of the shards.

Every stage of :class:`~cogitave.query.engine.Engine` reads the snapshot through the read
port (:mod:`cogitave.store.port`), which :class:`~cogitave.distributed.view.ShardedView`
implements by scattering each question to the shards and gathering the answers. So a sharded
search is the engine itself: the same plan, lenses, fusion, feedback, gate, boost, rerank and
presentation as on one root. This module adds what only a sharded view knows: how many
shards answered, and which did not (``partial``).
"""

from __future__ import annotations

from typing import Any

from cogitave.distributed.view import ShardedView
from cogitave.query.engine import Engine
from cogitave.query.types import SearchRequest, SearchResponse
from cogitave.schema import WHOLE


def systems(view: ShardedView) -> tuple[str, ...]:
    """The systems a sharded view answers (dense modes need stored vectors)."""
    if WHOLE in view.vector_dims():
        return ("bm25", "dense", "hybrid", "planned")
    return ("bm25", "planned")


def search(view: ShardedView, req: SearchRequest) -> SearchResponse:
    """One search over the view through the engine, with the shards' part in diagnostics."""
    view.take_missing()
    res = Engine(view).search(req)
    missing = view.take_missing()
    diag: dict[str, Any] = dict(res.diagnostics)
    diag["shards"] = len(view.clients)
    diag["partial"] = bool(missing)
    diag["missing_shards"] = [view.clients[i].label for i in missing]
    return SearchResponse(results=res.results, root=res.root, diagnostics=diag)
