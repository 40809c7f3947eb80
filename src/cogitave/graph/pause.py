"""The cyclic garbage collector paused while a bounded graph call runs.

A graph call's deadline is checked every few steps, but a full collection is one step: its
cost grows with every container alive in the process, the call's own frontiers and rows
included, and one pass measured 0.07-0.15 s inside a 250 ms ``query_graph`` on a test
process of ~100k objects and 0.25-0.6 s in a process holding the whole test suite, so calls
answered their timeout that much late. The walks allocate no reference cycles (their
frontiers, paths and rows are freed by reference counting), so nothing accumulates while the
collector is paused; it runs again, at the next allocation, when the last paused call ends.
Calls may overlap on threads: the collector is re-enabled only by the last one out, and only
if it was enabled when the first one came in.

The collector is one per process: while any call is paused, no thread's cycles are collected.
So only calls bounded by a deadline pause it (the graph tools); the rerank's walks, bounded by
a work cap and reading no clock (:func:`cogitave.graph.traverse.traverse` with
``max_expansions``), leave it running, and searches never hold it off.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

_lock = threading.Lock()
_active = 0
_restore = False


@contextmanager
def collector_paused() -> Iterator[None]:
    global _active, _restore
    with _lock:
        if _active == 0:
            _restore = gc.isenabled()
            gc.disable()
        _active += 1
    try:
        yield
    finally:
        with _lock:
            _active -= 1
            if _active == 0 and _restore:
                gc.enable()
