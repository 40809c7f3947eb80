"""The lens runner: dense lenses beside the others, results in slot order."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from cogitave.query.lens import DenseJob, LensResult, run_lenses

WAIT_S = 30.0
"""How long a slot waits for the other side before the test gives up (a deadlock guard: the
order is asserted by events, never by a time)."""


def _result(name: str) -> LensResult:
    return LensResult(name, "bm25", np.array([1], np.uint64), np.ones(1, np.float32))


def test_a_dense_lens_runs_while_this_thread_runs_bm25():
    """The dense search starts once the vectors exist, not after the BM25 lenses: the BM25
    slot here can only finish after a dense lens has started (an event it sets), so running
    the sides one after the other would never see it."""
    dense_started = threading.Event()
    seen: list[bool] = []

    def bm25() -> LensResult:
        seen.append(dense_started.wait(WAIT_S))
        return _result("bm25")

    def dense() -> LensResult:
        dense_started.set()
        return _result("dense")

    out = run_lenses([bm25, DenseJob(dense)], lambda: None)
    assert seen == [True]
    assert [r.name for r in out] == ["bm25", "dense"]


def test_vectors_come_first_on_the_dense_side_and_once():
    """Every dense lens reads the query vectors: ``vectors`` runs once, before any of them,
    and the results keep the slots' order whichever side ran them."""
    calls: list[str] = []
    lock = threading.Lock()

    def job(name: str, dense: bool):
        def run() -> LensResult:
            with lock:
                calls.append(name)
            return _result(name)

        return DenseJob(run) if dense else run

    def vectors() -> None:
        with lock:
            calls.append("vectors")

    slots = [
        job("dense", True),
        job("bm25", False),
        job("dense:a", True),
        job("bm25:a", False),
        job("dense:b", True),
    ]
    out = run_lenses(slots, vectors)
    assert [r.name for r in out] == ["dense", "bm25", "dense:a", "bm25:a", "dense:b"]
    assert calls.count("vectors") == 1
    dense_calls = [c for c in calls if c.startswith("dense")]
    assert sorted(dense_calls) == ["dense", "dense:a", "dense:b"]
    assert all(calls.index("vectors") < calls.index(c) for c in dense_calls)


def test_without_a_dense_lens_vectors_still_run_here():
    """A plan with no dense lens still gets its vectors (the residual boost reads them)."""
    calls: list[str] = []
    out = run_lenses([lambda: _result("bm25")], lambda: calls.append("vectors"))
    assert [r.name for r in out] == ["bm25"]
    assert calls == ["vectors"]


def test_an_encoder_failure_reaches_the_caller():
    def vectors() -> None:
        raise RuntimeError("encoder gone")

    with pytest.raises(RuntimeError, match="encoder gone"):
        run_lenses([lambda: _result("bm25"), DenseJob(lambda: _result("dense"))], vectors)
