"""``-term`` exclusions over the fused candidates.

A query's ``-term`` removes every candidate whose semantic text holds the term's stem. (Filters
on exact dimensions and paths are not applied here: every leg applies them itself, see
:class:`~cogitave.store.port.Where`, so a filtered search never starves.)
"""

from __future__ import annotations

from collections.abc import Sequence

from cogitave.query.ranked import Ranked
from cogitave.schema import WHOLE
from cogitave.store.port import ReadPort


def exclusions(port: ReadPort, ranked: Ranked, excluded: Sequence[str]) -> tuple[Ranked, int]:
    """The candidates that hold none of the ``excluded`` stems, and how many were removed."""
    if not len(ranked) or not excluded:
        return ranked, 0
    hit = port.match(WHOLE, "text", list(excluded), ranked.nids)
    return ranked.keep(~hit), int(hit.sum())
