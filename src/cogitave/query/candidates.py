"""Stored vectors of a query's candidates, gathered once per dimension and query.

The coherence gate (dense top-share evidence) and the residual boost both compare stored
vectors of candidates with a query text; the boost's survivors are a subset of the gate's
candidates. One :class:`CandidateVectors` per query gathers each dimension's rows for the
whole fused candidate set on first use and serves both stages from them.
"""

from __future__ import annotations

import threading

import numpy as np

from cogitave.store.port import ReadPort


class CandidateVectors:
    """Per dimension, the stored vectors of a fixed candidate id set (gathered lazily)."""

    def __init__(self, port: ReadPort, ids: np.ndarray) -> None:
        self.port = port
        self.ids = np.asarray(ids, np.uint64)
        self._order = np.argsort(self.ids, kind="stable")
        self._sorted = self.ids[self._order]
        self._rows: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        self._lock = threading.Lock()

    def _all(self, dim: str) -> tuple[np.ndarray, np.ndarray]:
        got = self._rows.get(dim)
        if got is None:
            with self._lock:
                got = self._rows.get(dim)
                if got is None:
                    got = self._rows[dim] = self.port.vectors_of(dim, self.ids)
        return got

    def of(self, dim: str, ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Vectors of ``ids`` (each must be a candidate, else it reads as having none) and a
        has-vector mask."""
        mat, has = self._all(dim)
        ids = np.asarray(ids, np.uint64)
        pos = np.searchsorted(self._sorted, ids)
        pos = np.minimum(pos, max(len(self._sorted) - 1, 0))
        found = (self._sorted[pos] == ids) if len(self._sorted) else np.zeros(len(ids), bool)
        rows = self._order[pos] if len(self._sorted) else np.zeros(len(ids), np.int64)
        out = np.where(found[:, None], mat[rows], 0.0).astype(np.float32) if len(ids) else mat[:0]
        return out, found & has[rows] if len(ids) else has[:0]
