"""The cost model every surface applies: one budget per request, checked before work starts
and enforced while it runs, and the bounded worker pool that runs the work.

=================  ====================================================  ====================
bound              checked before / while it runs                        error
=================  ====================================================  ====================
rows               each operation's ``limit`` (<= 1000), checked with    ``query`` / ``limit``
                   its arguments (``service/args.py``)                   (bad input, 400)
expansions         rows fetched across one request (GraphQL nests        ``too_costly``
                   ``related`` in ``search`` in ``related``: the sum of   (``expansions``)
                   products of the limits along every nested field, not
                   each factor), charged by each field
response bytes     the bytes on the wire: the answer as UTF-8 JSON, its   ``too_costly``
                   escapes counted (strings and lists from parameters    (``response_bytes``)
                   count each time), estimated before it is encoded and
                   measured once encoded
wall time          one deadline per request, from its arrival: time      ``too_costly``
                   queued for a worker counts; the caller is answered    (``wall_ms``)
                   at the deadline, and the work checks it where it
                   loops
=================  ====================================================  ====================

CPU-heavy work never runs on the event loop: surfaces hand it to :class:`WorkerPool`, a fixed
number of threads with a bounded queue (a full queue is ``unavailable``, 503 with
``Retry-After``), so a burst of heavy requests waits its turn while ``/health`` and light
requests keep answering.
"""

from __future__ import annotations

import asyncio
import contextvars
import json
import math
import re
import threading
import time
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, TypeVar

import orjson

from cogitave.errors import TooCostlyError, UnavailableError

T = TypeVar("T")

MAX_EXPANSIONS = 5000
MAX_RESPONSE_BYTES = 2_000_000
WALL_MS = 5000
WORKERS = 4
QUEUE = 32
# Pure-Python work holds the GIL for slices of sys.getswitchinterval() (5 ms by default); a
# server sets 1 ms so the event loop and GIL-releasing searches get in five times as often.
SWITCH_INTERVAL_S = 0.001
RETRY_AFTER_S = 1
"""What a busy server's 503 asks the caller to wait (``Retry-After``), in seconds."""


@dataclass(frozen=True)
class Limits:
    """The bounds of one request (see the module table)."""

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
        response-bytes bound (the walk stops as soon as it is over), and again when the
        encoded bytes do."""
        cap = self.limits.response_bytes
        low, high = json_bounds(body, cap)
        if low > cap or (high > cap and json_size(body, cap) > cap):
            raise self.too_large()
        data = encode_json(body)
        if len(data) > cap:
            raise self.too_large()
        return data

    def check_text(self, text: str) -> bytes:
        """A text answer (Markdown) against the response-bytes bound: its UTF-8 bytes."""
        if len(text) > self.limits.response_bytes:  # at least one byte a character
            raise self.too_large()
        data = text.encode("utf-8", "replace")
        if len(data) > self.limits.response_bytes:
            raise self.too_large()
        return data

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


def encode_json(body: Any) -> bytes:
    """``body`` as compact UTF-8 JSON: non-ASCII as itself (one to four bytes, not a
    twelve-byte ``\\uXXXX\\uXXXX`` pair). A string that UTF-8 cannot hold (a lone
    surrogate) makes the whole body ASCII-escaped instead, never an error.

    orjson writes it (a search answer in 14 us against 236 us for the standard library, the
    same bytes; a float that is not finite as ``null``: JSON has no such number); what orjson
    refuses (a lone surrogate, an integer past 64 bits) goes to the standard library."""
    try:
        return orjson.dumps(body, option=orjson.OPT_NON_STR_KEYS | orjson.OPT_PASSTHROUGH_DATACLASS)
    except (orjson.JSONEncodeError, TypeError):
        pass
    text = json.dumps(body, ensure_ascii=False, separators=(",", ":"))
    try:
        return text.encode()
    except UnicodeEncodeError:
        return json.dumps(body, separators=(",", ":")).encode()


_ESCAPED = re.compile(r'["\\\x00-\x1f]')
_SHORT_ESCAPES = frozenset('"\\\b\f\n\r\t')


def str_size(s: str) -> int:
    """Bytes of ``s`` as a JSON string encoded by :func:`encode_json` (or by any encoder
    that writes UTF-8 and escapes only what JSON requires): quotes, UTF-8, and escapes
    (``\\n`` two bytes, other control characters six)."""
    if s.isascii() and s.isprintable():  # no control character: only quotes and backslashes
        return 2 + len(s) + s.count('"') + s.count("\\")
    size = 2 + (len(s) if s.isascii() else len(s.encode("utf-8", "surrogatepass")))
    for m in _ESCAPED.finditer(s):
        size += 1 if m.group() in _SHORT_ESCAPES else 5
    return size


def json_bounds(value: Any, cap: int) -> tuple[int, int]:
    """Bounds on the length of ``value`` as compact JSON in bytes (:func:`encode_json`):
    (at least, at most), read from lengths alone (a character is one to six bytes written
    out), counted until the lower bound passes ``cap``. Shared references count every time,
    as in :func:`json_size`, which reads every string for its escapes and is three times
    slower."""
    low = high = 0
    stack: list[Any] = [value]
    while stack:
        v = stack.pop()
        t = type(v)
        if t is str:
            n = len(v)
            low += n + 2
            high += 6 * n + 2
        elif t is dict:
            low += 1 + max(len(v), 1)  # braces and commas
            high += 2 + len(v)
            for k, x in v.items():
                n = len(k) if type(k) is str else len(str(k))
                low += n + 3
                high += 6 * n + 3
                stack.append(x)
            if low > cap:
                return low, high
        elif t is list or t is tuple:
            low += 1 + max(len(v), 1)
            high += 2 + len(v)
            if low > cap:
                return low, high
            stack.extend(v)
        elif t is float:
            low += 3
            high += 24
        elif t is int:
            n = len(str(v))
            low += n
            high += n
        elif v is None or t is bool:  # null, true: 4; false: 5
            low += 4
            high += 5
        else:  # anything else: the exact walk says
            n = json_size(v, cap - low)
            low += n
            high += n
        if low > cap:
            return low, high
    return low, high


def json_size(value: Any, cap: int) -> int:
    """The length of ``value`` as compact JSON in bytes (:func:`encode_json`), counted until
    it passes ``cap``.

    Shared references count every time they are written out, as the encoder would write them:
    ``[$p, $p, ...]`` costs its full expanded size."""
    total = 0
    stack: list[Any] = [value]
    sizes: dict[int, int] = {}  # long strings met before (shared references): measured once
    while stack:
        v = stack.pop()
        if isinstance(v, str):
            if len(v) < 64:
                total += str_size(v)
            else:
                size = sizes.get(id(v))
                if size is None:
                    size = sizes[id(v)] = str_size(v)
                total += size
        elif v is None or isinstance(v, bool):
            total += 5
        elif isinstance(v, int):
            total += len(str(v))
        elif isinstance(v, float):
            total += 24 if math.isfinite(v) else 9
        elif isinstance(v, Mapping):
            total += 2 + len(v)
            for k, x in v.items():
                total += str_size(str(k)) + 1
                stack.append(x)
        elif isinstance(v, list | tuple):
            total += 2 + len(v)
            if total <= cap:  # a long list is over before its items are looked at
                stack.extend(v)
        else:
            total += str_size(str(v))
        if total > cap:
            return total
    return total


class WorkerPool:
    """Worker threads with a bounded queue; every call carries the request's budget and is
    answered at its deadline.

    Three lanes: ``heavy`` work (graph walks, ``query_graph``, GraphQL fields: pure Python
    that holds the GIL) gets ``heavy_workers`` threads of its own, so it can never occupy every
    worker; searches (whose legs release the GIL in tantivy, usearch and onnxruntime) and
    content reads use the other ``workers``; whole GraphQL documents (parse, validation,
    execution: :meth:`run_document`) run on ``workers`` threads of a lane of their own, whose
    fields come back to the other two. Work still queued at its deadline is skipped, and the
    time a request waits for a worker counts against its wall-time bound."""

    def __init__(self, workers: int = WORKERS, queue: int = QUEUE, heavy_workers: int = 1) -> None:
        self.workers = workers
        self.queue = queue
        self._ex = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="cogitave-work")
        self._heavy = ThreadPoolExecutor(
            max_workers=max(1, heavy_workers), thread_name_prefix="cogitave-heavy"
        )
        self._documents = ThreadPoolExecutor(
            max_workers=workers, thread_name_prefix="cogitave-document"
        )
        self._admitted = 0
        self._admitted_documents = 0
        self._lock = threading.Lock()

    async def run(self, budget: Budget, fn: Callable[..., T], *args: Any, heavy: bool = False) -> T:
        """``fn(*args)`` on a worker (of the heavy lane with ``heavy``) with ``budget`` as the
        current budget."""
        return await self._run(budget, self._heavy if heavy else self._ex, fn, *args)

    async def run_document(self, budget: Budget, fn: Callable[..., T], *args: Any) -> T:
        """``fn(*args)`` on the documents lane (a GraphQL document: it hands its fields to the
        other lanes, so it never waits for a thread of its own lane)."""
        return await self._run(budget, self._documents, fn, *args)

    def _admit(self, ex: ThreadPoolExecutor) -> None:
        with self._lock:
            documents = ex is self._documents
            admitted = self._admitted_documents if documents else self._admitted
            if admitted >= self.workers + self.queue:
                raise UnavailableError(
                    f"the server is busy ({admitted} requests running or queued); retry",
                    details={"retry_after_s": RETRY_AFTER_S},
                )
            if documents:
                self._admitted_documents += 1
            else:
                self._admitted += 1

    async def _run(
        self, budget: Budget, ex: ThreadPoolExecutor, fn: Callable[..., T], *args: Any
    ) -> T:
        budget.check_time()  # nothing starts past the deadline
        self._admit(ex)
        release = self._release_documents if ex is self._documents else self._release
        ctx = contextvars.copy_context()
        ctx.run(_current.set, budget)

        def job() -> T:
            budget.check_time()  # waited in the queue past its deadline: do nothing
            return fn(*args)

        try:
            work = ex.submit(ctx.run, job)
        except BaseException:
            release(None)
            raise
        # A slot is free when the work ends, not when the caller stops waiting for it (nor
        # when the caller's event loop is gone: a document's loop ends at its deadline).
        work.add_done_callback(release)
        fut = asyncio.wrap_future(work)
        try:
            return await asyncio.wait_for(asyncio.shield(fut), budget.remaining_s())
        except TimeoutError:
            # The worker stops at its next deadline check; the caller is answered now.
            fut.add_done_callback(_consume)
            raise budget.timeout() from None

    def _release(self, _: object) -> None:
        with self._lock:
            self._admitted -= 1

    def _release_documents(self, _: object) -> None:
        with self._lock:
            self._admitted_documents -= 1

    def shutdown(self) -> None:
        """Stop the threads once their current work is done."""
        for ex in (self._documents, self._ex, self._heavy):
            ex.shutdown(wait=False, cancel_futures=True)
