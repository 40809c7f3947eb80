"""A deterministic, cheap stand-in encoder for agreement checks and benchmarks at scale.

Each text is the L2-normalised sum of seeded random vectors of its lowercased words (a hashed
bag-of-words projection). It has no semantic quality; it is here so that a sharded and an
unsharded build can be compared on real corpora in seconds instead of the minutes the
sentence encoder takes on a small machine. Register it with :func:`register`.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence

import numpy as np

from cogitave.expand import analysis
from cogitave.expand.embed import register_encoder

NAME = "hashed-bow-64"


class HashedBowEncoder:
    name = NAME
    dim = 64

    def __init__(self) -> None:
        self._vec: dict[str, np.ndarray] = {}

    def _word(self, w: str) -> np.ndarray:
        v = self._vec.get(w)
        if v is None:
            seed = int.from_bytes(hashlib.blake2b(w.encode(), digest_size=8).digest(), "little")
            v = np.random.default_rng(seed).standard_normal(self.dim).astype(np.float32)
            self._vec[w] = v
        return v

    def encode(
        self,
        texts: Sequence[str],
        *,
        batch_size: int = 64,
        progress: Callable[[int], None] | None = None,
    ) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), np.float32)
        for i, t in enumerate(texts):
            for w in analysis.surface(t):
                out[i] += self._word(w)
        if progress is not None and len(texts):
            progress(len(texts))
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return (out / np.maximum(norms, 1e-12)).astype(np.float32)


def register() -> str:
    """Register the encoder under :data:`NAME` in this process; returns the name."""
    register_encoder(NAME, HashedBowEncoder)
    return NAME
