"""The query encoder: an LRU cache of query rows; a call's misses go out in one batch."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from cogitave.expand.embed import DEFAULT_ENCODER, get_encoder
from cogitave.query.encoder import CachedQueryEncoder, query_encoder


class FakeEncoder:
    """Deterministic hash vectors; records every call."""

    name = "fake"
    dim = 8

    def __init__(self) -> None:
        self.calls: list[list[str]] = []

    def encode(
        self,
        texts: Sequence[str],
        *,
        batch_size: int = 8,
        progress: Callable[[int], None] | None = None,
    ) -> np.ndarray:
        self.calls.append(list(texts))
        rows = [
            np.frombuffer(hashlib.sha256(t.encode()).digest()[:32], dtype=np.uint8)[:8]
            for t in texts
        ]
        out = np.array(rows, dtype=np.float32).reshape(len(texts), self.dim) + 1.0
        return out / np.linalg.norm(out, axis=1, keepdims=True)


def test_query_cache_batches_misses_into_one_call() -> None:
    fake = FakeEncoder()
    cache = CachedQueryEncoder(fake, maxsize=3)
    first = cache.encode_queries(["a", "b", "a"])
    assert fake.calls == [["a", "b"]]
    np.testing.assert_array_equal(first[0], first[2])
    again = cache.encode_queries(["b", "c", "d", "a"])
    assert fake.calls[1] == ["c", "d"]  # hits are not re-encoded
    np.testing.assert_array_equal(again[0], first[1])
    np.testing.assert_array_equal(again[3], first[0])
    assert cache.cache_info() == (3, 3)  # "b" was the least recently used
    cache.encode_queries(["b"])
    assert fake.calls[2] == ["b"]
    assert cache.encode_queries([]).shape == (0, 8)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(st.sampled_from("abcdefg"), max_size=6), max_size=8))
def test_query_cache_matches_direct_encoding(batches: list[list[str]]) -> None:
    fake = FakeEncoder()
    cache = CachedQueryEncoder(fake, maxsize=4)
    for batch in batches:
        calls_before = len(fake.calls)
        got = cache.encode_queries(batch)
        assert got.shape == (len(batch), 8)
        if batch:
            np.testing.assert_array_equal(got, FakeEncoder().encode(batch))
        assert len(fake.calls) - calls_before <= 1
        assert cache.cache_info()[0] <= 4


def test_query_cache_over_real_encoder() -> None:
    encoder = get_encoder(DEFAULT_ENCODER)
    cache = CachedQueryEncoder(encoder)
    queries = ["insulin resistance causes", "what is a vector database"]
    np.testing.assert_array_equal(cache.encode_queries(queries), cache.encode_queries(queries))
    np.testing.assert_allclose(cache.encode_queries(queries), encoder.encode(queries), atol=1e-6)


def test_one_cache_per_encoder_name() -> None:
    assert query_encoder(DEFAULT_ENCODER) is query_encoder(DEFAULT_ENCODER)
