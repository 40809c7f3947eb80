"""The cost model every surface applies: one budget per request, checked before work starts
and enforced while it runs, and the bounded worker pool that runs the work.

=================  ====================================================  ====================
bound              checked before / while it runs                        error
=================  ====================================================  ====================
rows               each operation's ``limit`` (<= 1000); GraphQL: the    ``too_costly``
                   product of the limits along every nested field        (``bound: rows``)
expansions         rows fetched across one request (GraphQL nests        ``too_costly``
                   ``related`` in ``search`` in ``related``: the sum of   (``expansions``)
                   products, not each factor), charged by each field
response bytes     the answer, as JSON (strings and lists from           ``too_costly``
                   parameters count), measured before it is encoded      (``response_bytes``)
wall time          one deadline per request; the caller is answered at   ``too_costly``
                   the deadline, and the work checks it where it loops   (``wall_ms``)
=================  ====================================================  ====================

CPU-heavy work never runs on the event loop: surfaces hand it to :class:`WorkerPool`, a fixed
number of threads with a bounded queue (a full queue is ``unavailable``, 503), so a burst of
heavy requests waits its turn while ``/health`` and light requests keep answering.
"""

from __future__ import annotations

import asyncio
import contextvars
import json
import math
import threading
import time
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, TypeVar

from cogitave.errors import TooCostlyError, UnavailableError

T = TypeVar("T")

MAX_ROWS = 1000
MAX_EXPANSIONS = 5000
MAX_RESPONSE_BYTES = 2_000_000
WALL_MS = 5000
WORKERS = 4
QUEUE = 32
# Pure-Python work holds the GIL for slices of sys.getswitchinterval() (5 ms by default); a
# server sets 1 ms so the event loop and GIL-releasing searches get in five times as often.
SWITCH_INTERVAL_S = 0.001


@dataclass(frozen=True)
class Limits:
    """The bounds of one request (see the module table)."""

    rows: int = MAX_ROWS
    expansions: int = MAX_EXPANSIONS
    response_bytes: int = MAX_RESPONSE_BYTES
    wall_ms: float = WALL_MS


DEFAULT_LIMITS = Limits()


class Budget:
    """What one request has used so far; every charge raises :class:`TooCostlyError` past a
    bound. Thread-safe: GraphQL resolvers of one request run side by side."""

    def __init__(self, limits: Limits = DEFAULT_LIMITS) -> None:
        self.limits = limits
        self.started = time.monotonic()
        self.deadline = self.started + limits.wall_ms / 1000.0
        self.expansions = 0
        self.bytes = 0
        self._lock = threading.Lock()

    def remaining_s(self) -> float:
        """Seconds left before the deadline (never negative)."""
        return max(0.0, self.deadline - time.monotonic())

    def check_time(self) -> None:
        """Raise once the request is past its deadline."""
        if time.monotonic() > self.deadline:
            raise self.timeout()

    def timeout(self) -> TooCostlyError:
        """The error of a request past its wall-time bound."""
        ms = self.limits.wall_ms
        return TooCostlyError(
            "wall_ms", ms, f"the request ran past its {ms:g} ms wall-time bound and was stopped"
        )

    def check_rows(self, n: int, what: str) -> None:
        """One answer's rows against the row bound."""
        if n > self.limits.rows:
            raise TooCostlyError(
                "rows",
                self.limits.rows,
                f"{what} asks for {n} rows; the bound is {self.limits.rows}",
            )

    def charge(self, n: int, what: str) -> None:
        """Add ``n`` fetched rows to the request's expansions; past the bound, stop."""
        with self._lock:
            self.expansions += max(0, n)
            used = self.expansions
        if used > self.limits.expansions:
            raise TooCostlyError(
                "expansions",
                self.limits.expansions,
                f"{what} brings the request to {used} fetched rows across its fields; the bound "
                f"is {self.limits.expansions} (nested lists multiply: lower the inner limits)",
            )
        self.check_time()

    def charge_bytes(self, n: int) -> None:
        """Add ``n`` bytes to what the request will answer; past the bound, stop."""
        with self._lock:
            self.bytes += max(0, n)
            used = self.bytes
        if used > self.limits.response_bytes:
            raise self.too_large()

    def encode(self, body: Any) -> bytes:
        """``body`` as compact JSON bytes, refused before encoding when it would pass the
        response-bytes bound (the walk stops as soon as it is over)."""
        cap = self.limits.response_bytes
        if json_size(body, cap) > cap:
            raise self.too_large()
        data = json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode()
        if len(data) > cap:  # the estimate counts characters; UTF-8 may need more bytes
            raise self.too_large()
        return data

    def check_text(self, text: str) -> None:
        """A text answer (Markdown) against the response-bytes bound."""
        if len(text) > self.limits.response_bytes:
            raise self.too_large()

    def too_large(self) -> TooCostlyError:
        cap = self.limits.response_bytes
        return TooCostlyError(
            "response_bytes",
            cap,
            f"the answer would be larger than {cap} bytes; ask for fewer rows or columns, or "
            "smaller values",
        )


_current: contextvars.ContextVar[Budget | None] = contextvars.ContextVar("budget", default=None)


def current() -> Budget:
    """The budget of the request being served (a fresh default one outside a request)."""
    b = _current.get()
    return b if b is not None else Budget()


def _consume(fut: asyncio.Future[Any]) -> None:
    """Read an abandoned future's outcome so its exception is not reported as unretrieved."""
    if not fut.cancelled():
        fut.exception()


def json_size(value: Any, cap: int) -> int:
    """The length of ``value`` as compact JSON (characters), counted until it passes ``cap``.

    Shared references count every time they are written out, as the encoder would write them:
    ``[$p, $p, ...]`` costs its full expanded size."""
    total = 0
    stack: list[Any] = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, str):
            total += len(v) + 2
        elif v is None or isinstance(v, bool):
            total += 5
        elif isinstance(v, int):
            total += len(str(v))
        elif isinstance(v, float):
            total += 24 if math.isfinite(v) else 9
        elif isinstance(v, Mapping):
            total += 2 + len(v)
            for k, x in v.items():
                total += len(str(k)) + 3
                stack.append(x)
        elif isinstance(v, list | tuple):
            total += 2 + len(v)
            if total <= cap:  # a long list is over before its items are looked at
                stack.extend(v)
        else:
            total += len(str(v)) + 2
        if total > cap:
            return total
    return total


class WorkerPool:
    """Worker threads with a bounded queue; every call carries the request's budget and is
    answered at its deadline.

    Two lanes: ``heavy`` work (graph walks, ``query_graph``, GraphQL documents: pure Python
    that holds the GIL) gets ``heavy_workers`` threads of its own, so it can never occupy every
    worker; searches (whose legs release the GIL in tantivy, usearch and onnxruntime) and
    content reads use the other ``workers``. Work still queued at its deadline is skipped."""

    def __init__(self, workers: int = WORKERS, queue: int = QUEUE, heavy_workers: int = 1) -> None:
        self.workers = workers
        self.queue = queue
        self._ex = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="cogitave-work")
        self._heavy = ThreadPoolExecutor(
            max_workers=max(1, heavy_workers), thread_name_prefix="cogitave-heavy"
        )
        self._admitted = 0
        self._lock = threading.Lock()

    async def run(self, budget: Budget, fn: Callable[..., T], *args: Any, heavy: bool = False) -> T:
        """``fn(*args)`` on a worker (of the heavy lane with ``heavy``) with ``budget`` as the
        current budget."""
        with self._lock:
            if self._admitted >= self.workers + self.queue:
                raise UnavailableError(
                    f"the server is busy ({self._admitted} requests running or queued); retry"
                )
            self._admitted += 1
        ctx = contextvars.copy_context()
        ctx.run(_current.set, budget)

        def job() -> T:
            budget.check_time()  # waited in the queue past its deadline: do nothing
            return fn(*args)

        try:
            ex = self._heavy if heavy else self._ex
            fut = asyncio.get_running_loop().run_in_executor(ex, ctx.run, job)
        except BaseException:
            self._release(None)
            raise
        # A slot is free when the work ends, not when the caller stops waiting for it.
        fut.add_done_callback(self._release)
        try:
            return await asyncio.wait_for(asyncio.shield(fut), budget.remaining_s())
        except TimeoutError:
            # The worker stops at its next deadline check; the caller is answered now.
            fut.add_done_callback(_consume)
            raise budget.timeout() from None

    def _release(self, _: object) -> None:
        with self._lock:
            self._admitted -= 1

    def shutdown(self) -> None:
        """Stop the threads once their current work is done."""
        self._ex.shutdown(wait=False, cancel_futures=True)
        self._heavy.shutdown(wait=False, cancel_futures=True)
