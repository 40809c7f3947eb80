"""Exact filters and ``-term`` exclusions over fused candidates.

BM25 lenses apply filters themselves; the dense lenses cannot, so after fusion every candidate
must hold one of each filter's values (casefolded, as indexed) and no excluded stem may be in
its semantic text.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from cogitave.query.ranked import Ranked
from cogitave.schema import WHOLE
from cogitave.store.port import ReadPort


def apply_filters(
    port: ReadPort,
    ranked: Ranked,
    filters: Mapping[str, Sequence[str]],
    excluded: Sequence[str],
) -> tuple[Ranked, dict[str, Any]]:
    """The candidates that pass every filter and hold no excluded stem, and what was removed."""
    if not len(ranked) or (not filters and not excluded):
        return ranked, {}
    ids = ranked.nids
    ok = np.ones(len(ids), bool)
    for dim, values in filters.items():
        ok &= port.match(dim, "value", [v.strip().casefold() for v in values], ids)
    if excluded and ok.any():
        ok[ok] = ~port.match(WHOLE, "text", list(excluded), ids[ok])
    info = {
        "filters": {d: list(v) for d, v in filters.items()},
        "excluded": list(excluded),
        "removed": int((~ok).sum()),
    }
    return ranked.keep(ok), info
