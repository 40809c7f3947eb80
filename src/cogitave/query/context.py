"""What one search carries from stage to stage, besides the ranked list itself.

Every stage of the engine (:mod:`cogitave.query.stages`) has one signature: a
:class:`QueryContext` and a :class:`~cogitave.query.ranked.Ranked` in, a ``Ranked`` and its
diagnostics out. The context holds the request, the read port and what earlier stages made
that later ones read (the plan, the lenses and query vectors, the fused lists, the candidates'
stored vectors, the backfilled tail, the page groups, the hits).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from cogitave.config import Settings
from cogitave.nodes import Node
from cogitave.query.candidates import CandidateVectors
from cogitave.query.fuse import Fused
from cogitave.query.lens import LensResult
from cogitave.query.prism import Prism
from cogitave.query.ranked import Ranked
from cogitave.query.types import Hit, SearchRequest
from cogitave.store.port import ReadPort, Where

Embed = Callable[[list[str]], np.ndarray]
Info = dict[str, Any]


@dataclass
class QueryContext:
    """One search's state. Stages read what earlier stages wrote and add their own."""

    req: SearchRequest
    port: ReadPort
    settings: Settings
    embed: Embed | None
    """Query texts -> unit vectors (None: the collection has no encoder)."""
    where: Where | None = None
    """The request's filters, applied inside every leg (None: no filter)."""
    prism: Prism | None = None
    lenses: list[LensResult] = field(default_factory=list)
    dense_q: dict[str, np.ndarray] = field(default_factory=dict)
    embed_ms: float = 0.0
    fused: Fused | None = None
    vectors: CandidateVectors | None = None
    backfilled: Ranked = field(default_factory=Ranked.empty)
    groups: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    hits: tuple[Hit, ...] = ()
    nodes: tuple[Node, ...] = ()

    @property
    def has_dense(self) -> bool:
        return self.embed is not None


class Stage(Protocol):
    """One step of the read path: (context, ranked) -> (ranked, diagnostics by key)."""

    def __call__(self, ctx: QueryContext, ranked: Ranked) -> tuple[Ranked, Info]: ...
