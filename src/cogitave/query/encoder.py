"""The query encoder: query texts -> unit vectors, through one LRU cache per encoder name.

Queries repeat (a user refines, an agent retries, the planner asks for the whole query and a
routed dimension's text in one call): each distinct text is encoded once, and a call's misses
go to the encoder in one batch. One cache per encoder name, graph and process, shared by every
engine (the model itself is loaded once, :func:`cogitave.expand.embed.load_encoder`).

Queries that arrive together are encoded together (:class:`QueryBatcher`): a caller that finds
a runner's place free (one per core) runs the encoder on everything waiting; callers that arrive
while every place is taken wait, and the first of them to find a place free runs the next batch
with all that gathered meanwhile. No clock decides anything: a query alone never waits, and
under load a batch is whatever queued while the others ran (at most :data:`MAX_QUERY_BATCH`
texts). A vector is a function of its text alone (the default
graphs fix their activation ranges, :mod:`cogitave.expand.graphs`), so a batch-mate never
changes a ranking. ``COGITAVE_QUERY_BATCHING=0`` encodes each call on its own (the baseline
``bench/load.py`` compares against).
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from cogitave.expand.embed import (
    DEFAULT_BATCH_SIZE,
    Encoder,
    check_texts,
    default_threads,
    encode_queries,
    env_count,
    load_encoder,
)

QUERY_CACHE_SIZE = 4096
MAX_QUERY_BATCH = 64
"""Texts in one batched encoder call (queries beyond it wait for the next batch)."""
BATCHING_ENV = "COGITAVE_QUERY_BATCHING"
_QUERY_ENCODERS: dict[tuple[str, str | None], CachedQueryEncoder] = {}


def query_encoder(name: str, graph: str | None = None) -> CachedQueryEncoder:
    """The process-wide cached query encoder for an encoder name and the graph a collection's
    vectors were made by (None: the default graph): rows of two graphs never share a cache."""
    key = (name, graph)
    enc = _QUERY_ENCODERS.get(key)
    if enc is None:
        enc = _QUERY_ENCODERS.setdefault(key, CachedQueryEncoder(load_encoder(name, graph)))
    return enc


RUNNERS_ENV = "COGITAVE_QUERY_RUNNERS"


def query_runners() -> int:
    """Encoder batches run at once in this process: ``COGITAVE_QUERY_RUNNERS``, else one per
    core the process counts as its own (:func:`~cogitave.expand.embed.default_threads`: a
    server of N processes gives each its share, :mod:`cogitave.surfaces.processes`)."""
    return env_count(RUNNERS_ENV) or default_threads()


def batching_enabled() -> bool:
    """Whether concurrent queries share encoder calls (``COGITAVE_QUERY_BATCHING``, default on)."""
    return os.environ.get(BATCHING_ENV, "1").strip().lower() not in ("0", "false", "no", "off")


@dataclass
class _Call:
    """One caller's texts and, once its batch ran, its rows or the batch's error."""

    texts: list[str]
    rows: np.ndarray | None = None
    error: BaseException | None = None
    done: bool = False


@dataclass
class BatchStats:
    """What the batcher did: encoder calls, the texts they held, and the largest batch."""

    calls: int = 0
    texts: int = 0
    largest: int = 0
    sizes: list[int] = field(default_factory=list, repr=False)


class QueryBatcher:
    """Concurrent callers' texts -> one encoder call per batch (see the module doc)."""

    def __init__(
        self,
        encode: Callable[[list[str]], np.ndarray],
        max_batch: int = MAX_QUERY_BATCH,
        runners: int = 1,
    ):
        if max_batch < 1:
            raise ValueError("max_batch must be >= 1")
        if runners < 1:
            raise ValueError("runners must be >= 1")
        self._encode = encode
        self.max_batch = max_batch
        #: Batches encoded at once: one per core keeps every core busy while queries queue
        #: (one batch at a time left a core idle whenever the rest of the work was done).
        self.runners = runners
        self._waiting: list[_Call] = []
        self._running = 0
        self._cond = threading.Condition()
        self.stats = BatchStats()

    def encode(self, texts: list[str]) -> np.ndarray:
        """Rows for ``texts`` (in order), encoded alone or with whatever else is waiting."""
        me = _Call(list(texts))
        with self._cond:
            self._waiting.append(me)
            while not me.done and self._running >= self.runners:
                self._cond.wait()
            if me.done:
                return self._result(me)
            self._running += 1
            batch = self._take()
        while True:
            if batch:
                self._run(batch)
            with self._cond:
                if me.done or not batch:
                    # Hand over: a waiting caller (if any) runs the next batch. A caller whose
                    # texts another runner took waits for that batch.
                    self._running -= 1
                    self._cond.notify_all()
                    while not me.done:
                        self._cond.wait()
                    return self._result(me)
                batch = self._take()  # this caller's texts did not fit: run again

    def _take(self) -> list[_Call]:
        """The oldest waiting calls, up to max_batch texts (at least one call). Under the lock."""
        batch: list[_Call] = []
        size = 0
        while self._waiting and (not batch or size + len(self._waiting[0].texts) <= self.max_batch):
            call = self._waiting.pop(0)
            batch.append(call)
            size += len(call.texts)
        return batch

    def _run(self, batch: list[_Call]) -> None:
        texts = [t for call in batch for t in call.texts]
        try:
            rows = self._encode(texts)
        except BaseException as e:  # every caller of the batch sees its error
            with self._cond:
                for call in batch:
                    call.error, call.done = e, True
                self._cond.notify_all()
            return
        with self._cond:
            self.stats.calls += 1
            self.stats.texts += len(texts)
            self.stats.largest = max(self.stats.largest, len(texts))
            start = 0
            for call in batch:
                call.rows = rows[start : start + len(call.texts)]
                call.done = True
                start += len(call.texts)
            self._cond.notify_all()

    @staticmethod
    def _result(call: _Call) -> np.ndarray:
        if call.error is not None:
            raise call.error
        assert call.rows is not None
        return call.rows


class CachedQueryEncoder:
    """LRU cache of query rows in front of an encoder; misses go out in one batched call,
    shared with other callers' misses when several wait at once (:class:`QueryBatcher`)."""

    def __init__(
        self,
        encoder: Encoder,
        maxsize: int = QUERY_CACHE_SIZE,
        *,
        batching: bool | None = None,
    ) -> None:
        self.encoder = encoder
        self.name = encoder.name
        self.dim = encoder.dim
        self.maxsize = maxsize
        self._rows: OrderedDict[str, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()
        on = batching_enabled() if batching is None else batching
        self.batcher = QueryBatcher(self._encode_misses, runners=query_runners()) if on else None

    def _encode_misses(self, texts: list[str]) -> np.ndarray:
        return encode_queries(self.encoder, texts)

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
            if self.batcher is not None:
                rows = self.batcher.encode(misses)
            else:
                rows = self._encode_misses(misses)
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
