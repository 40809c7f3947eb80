"""The query encoder: query texts -> unit vectors, through one LRU cache per encoder name.

Queries repeat (a user refines, an agent retries, the planner asks for the whole query and a
routed dimension's text in one call): each distinct text is encoded once, and a call's misses
go to the encoder in one batch. One cache per encoder name, graph and process, shared by every
engine (the model itself is loaded once, :func:`cogitave.expand.embed.load_encoder`).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence

import numpy as np

from cogitave.expand.embed import (
    DEFAULT_BATCH_SIZE,
    Encoder,
    check_texts,
    encode_queries,
    load_encoder,
)

QUERY_CACHE_SIZE = 4096
_QUERY_ENCODERS: dict[tuple[str, str | None], CachedQueryEncoder] = {}


def query_encoder(name: str, graph: str | None = None) -> CachedQueryEncoder:
    """The process-wide cached query encoder for an encoder name and the graph a collection's
    vectors were made by (None: the default graph): rows of two graphs never share a cache."""
    key = (name, graph)
    enc = _QUERY_ENCODERS.get(key)
    if enc is None:
        enc = _QUERY_ENCODERS.setdefault(key, CachedQueryEncoder(load_encoder(name, graph)))
    return enc


class CachedQueryEncoder:
    """LRU cache of query rows in front of an encoder; misses go out in one batched call."""

    def __init__(self, encoder: Encoder, maxsize: int = QUERY_CACHE_SIZE) -> None:
        self.encoder = encoder
        self.name = encoder.name
        self.dim = encoder.dim
        self.maxsize = maxsize
        self._rows: OrderedDict[str, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()

    def encode_queries(self, texts: Sequence[str]) -> np.ndarray:
        """float32 (n, dim) rows for queries, encoding every uncached distinct text at once."""
        items = check_texts(texts)
        if not items:
            return np.zeros((0, self.dim), dtype=np.float32)
        found: dict[str, np.ndarray] = {}
        with self._lock:
            for text in items:
                row = self._rows.get(text)
                if row is not None:
                    self._rows.move_to_end(text)
                    found[text] = row
        misses = list(dict.fromkeys(t for t in items if t not in found))
        if misses:
            # Encoded outside the lock: a slow batch must not block cache hits elsewhere.
            rows = encode_queries(self.encoder, misses)
            with self._lock:
                for text, row in zip(misses, rows, strict=True):
                    row = row.copy()
                    row.flags.writeable = False
                    found[text] = row
                    self._rows[text] = row
                    self._rows.move_to_end(text)
                while len(self._rows) > self.maxsize:
                    self._rows.popitem(last=False)
        return np.stack([found[t] for t in items]).astype(np.float32, copy=False)

    def encode(
        self,
        texts: Sequence[str],
        *,
        batch_size: int = DEFAULT_BATCH_SIZE,
        progress: Callable[[int], None] | None = None,
    ) -> np.ndarray:
        """The Encoder protocol over the cache (batch_size is ignored: misses go at once)."""
        out = self.encode_queries(texts)
        if progress is not None and len(out):
            progress(len(out))
        return out

    def cache_info(self) -> tuple[int, int]:
        """(entries, maxsize)."""
        with self._lock:
            return len(self._rows), self.maxsize
