"""The query encoder: an LRU cache of query rows; a call's misses go out in one batch, shared
with the misses of callers waiting at the same time."""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Callable, Sequence

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cogitave.expand.embed import DEFAULT_ENCODER, get_encoder
from cogitave.query.encoder import (
    BATCHING_ENV,
    CachedQueryEncoder,
    QueryBatcher,
    _Call,
    query_encoder,
)


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


# -- queries arriving together share an encoder call ------------------------------------------
def _batcher_over(fake: FakeEncoder, max_batch: int = 64) -> QueryBatcher:
    return QueryBatcher(lambda texts: fake.encode(texts), max_batch=max_batch)


def test_callers_waiting_together_are_encoded_in_one_call() -> None:
    # Three callers queued while a batch ran (put in place as the batcher's lock would leave
    # them); the next caller runs one encoder call for all four, each getting its own rows.
    fake = FakeEncoder()
    batcher = _batcher_over(fake)
    queued = [_Call(["a"]), _Call(["b", "c"]), _Call(["d"])]
    batcher._waiting.extend(queued)
    mine = batcher.encode(["e"])
    assert fake.calls == [["a", "b", "c", "d", "e"]]
    assert batcher.stats.calls == 1 and batcher.stats.largest == 5
    direct = fake.encode(["a", "b", "c", "d", "e"])
    np.testing.assert_array_equal(mine, direct[4:])
    for call, want in zip(queued, (direct[0:1], direct[1:3], direct[3:4]), strict=True):
        assert call.done and call.error is None
        assert call.rows is not None
        np.testing.assert_array_equal(call.rows, want)


def test_a_batch_holds_at_most_max_batch_texts_oldest_first() -> None:
    fake = FakeEncoder()
    batcher = _batcher_over(fake, max_batch=3)
    batcher._waiting.extend([_Call(["a", "b"]), _Call(["c", "d"]), _Call(["e"])])
    batcher.encode(["f"])
    # oldest first, never more than 3 texts, and the caller runs batches until its own is done
    assert fake.calls == [["a", "b"], ["c", "d", "e"], ["f"]]
    assert not batcher._waiting and not batcher._running


def test_an_encoder_error_reaches_every_caller_of_the_batch() -> None:
    def broken(texts: list[str]) -> np.ndarray:
        raise RuntimeError("model failed")

    batcher = QueryBatcher(broken)
    other = _Call(["x"])
    batcher._waiting.append(other)
    with pytest.raises(RuntimeError, match="model failed"):
        batcher.encode(["y"])
    assert other.done and isinstance(other.error, RuntimeError)
    assert not batcher._running  # the next caller is not locked out
    batcher._encode = FakeEncoder().encode  # type: ignore[assignment]
    assert batcher.encode(["z"]).shape == (1, 8)


def _ask_together(encode: Callable[[list[str]], np.ndarray], texts: list[str]) -> None:
    """One thread per text, released together, each asking ``encode`` for its text alone:
    every thread ends, and each got exactly its text's row."""
    got: dict[int, np.ndarray] = {}
    start = threading.Barrier(len(texts))

    def ask(i: int) -> None:
        start.wait()
        got[i] = encode([texts[i]])

    threads = [threading.Thread(target=ask, args=(i,)) for i in range(len(texts))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert not any(t.is_alive() for t in threads)
    direct = FakeEncoder().encode(texts)
    for i in range(len(texts)):
        np.testing.assert_array_equal(got[i][0], direct[i])


def test_concurrent_callers_get_their_own_rows_and_fewer_calls() -> None:
    # Real threads: whatever the interleaving, every caller gets exactly its texts' rows, and
    # the encoder ran at most once per caller (usually far fewer).
    fake = FakeEncoder()
    cache = CachedQueryEncoder(fake, batching=True)
    texts = [f"query number {i}" for i in range(40)]
    _ask_together(cache.encode_queries, texts)
    assert cache.batcher is not None
    assert cache.batcher.stats.texts == len(texts)
    assert len(fake.calls) == cache.batcher.stats.calls <= len(texts)


def test_batching_can_be_turned_off(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(BATCHING_ENV, "0")
    assert CachedQueryEncoder(FakeEncoder()).batcher is None
    monkeypatch.delenv(BATCHING_ENV)
    assert CachedQueryEncoder(FakeEncoder()).batcher is not None


def _ask(batcher: QueryBatcher, got: dict[str, np.ndarray], text: str) -> threading.Thread:
    """A caller on its own thread asking ``batcher`` for ``text``; its rows land in ``got``."""
    t = threading.Thread(target=lambda: got.__setitem__(text, batcher.encode([text])))
    t.start()
    return t


def _until_queued(batcher: QueryBatcher, n: int, pause: threading.Event) -> None:
    """Return once ``n`` callers wait in the batcher's queue (``pause``: an event never set
    while this waits, to yield between looks)."""
    while True:
        with batcher._cond:
            if len(batcher._waiting) == n:
                return
        pause.wait(0.001)


def test_runners_encode_that_many_batches_at_once_and_the_next_waits() -> None:
    # The encoder blocks until released: two callers both get a runner's place and are
    # inside the encoder together; a third waits (two places only) and runs once one frees.
    fake = FakeEncoder()
    inside = threading.Semaphore(0)
    release = threading.Event()
    lock = threading.Lock()
    active, peak = [0], [0]

    def blocking(texts: list[str]) -> np.ndarray:
        with lock:
            active[0] += 1
            peak[0] = max(peak[0], active[0])
        inside.release()
        release.wait()
        with lock:
            active[0] -= 1
        return fake.encode(texts)

    batcher = QueryBatcher(blocking, runners=2)
    got: dict[str, np.ndarray] = {}
    threads = [_ask(batcher, got, "a")]
    inside.acquire()
    threads.append(_ask(batcher, got, "b"))
    inside.acquire()  # both runners are inside the encoder now
    assert batcher._running == 2
    threads.append(_ask(batcher, got, "c"))
    _until_queued(batcher, 1, release)  # "c" waits behind the two runners (no place is free)
    assert [c.texts for c in batcher._waiting] == [["c"]]
    release.set()
    for t in threads:
        t.join(timeout=60)
    assert not any(t.is_alive() for t in threads)
    assert peak[0] == 2 and sorted(map(tuple, fake.calls)) == [("a",), ("b",), ("c",)]
    for text in "abc":
        np.testing.assert_array_equal(got[text], FakeEncoder().encode([text]))
    assert batcher._running == 0 and not batcher._waiting


def test_a_caller_whose_texts_another_runner_took_waits_for_that_batch() -> None:
    # Two runners hold "a" and "b"; "c" and "d" queue. When "a" ends, one of their callers
    # runs ["c", "d"]; when "b" ends, the other finds a place free and nothing left to take:
    # it encodes nothing and waits for the batch that holds its texts.
    fake = FakeEncoder()
    gates = {t: threading.Event() for t in "abc"}
    inside = {t: threading.Event() for t in "abc"}

    def gated(texts: list[str]) -> np.ndarray:
        inside[texts[0]].set()
        gates[texts[0]].wait()
        return fake.encode(texts)

    batcher = QueryBatcher(gated, runners=2)
    got: dict[str, np.ndarray] = {}
    threads = [_ask(batcher, got, "a")]
    inside["a"].wait()
    threads.append(_ask(batcher, got, "b"))
    inside["b"].wait()
    threads.append(_ask(batcher, got, "c"))
    _until_queued(batcher, 1, gates["c"])
    threads.append(_ask(batcher, got, "d"))
    _until_queued(batcher, 2, gates["c"])
    gates["a"].set()
    inside["c"].wait()  # one of the two callers runs ["c", "d"]
    gates["b"].set()  # frees a place: the other caller takes an empty batch and waits
    threads[1].join(timeout=60)
    gates["c"].set()
    for t in threads:
        t.join(timeout=60)
    assert not any(t.is_alive() for t in threads)
    assert sorted(map(tuple, fake.calls)) == [("a",), ("b",), ("c", "d")]  # nothing empty
    for text in "abcd":
        np.testing.assert_array_equal(got[text], FakeEncoder().encode([text]))
    assert batcher._running == 0 and not batcher._waiting


def test_many_runners_still_give_each_caller_its_own_rows() -> None:
    fake = FakeEncoder()
    batcher = QueryBatcher(lambda texts: fake.encode(texts), runners=3)
    texts = [f"q{i}" for i in range(60)]
    _ask_together(batcher.encode, texts)
    assert batcher.stats.texts == len(texts) and batcher._running == 0


def test_runners_come_from_the_environment_else_one_per_core(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from cogitave.expand.embed import default_threads
    from cogitave.query.encoder import RUNNERS_ENV, query_runners

    monkeypatch.setenv(RUNNERS_ENV, "3")
    assert query_runners() == 3
    assert CachedQueryEncoder(FakeEncoder(), batching=True).batcher.runners == 3  # type: ignore[union-attr]
    for bad in ("0", "-1", "two", ""):
        monkeypatch.setenv(RUNNERS_ENV, bad)
        assert query_runners() == default_threads()
    monkeypatch.delenv(RUNNERS_ENV)
    assert query_runners() == default_threads()
