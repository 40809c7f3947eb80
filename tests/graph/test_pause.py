"""The collector pause around graph calls: off inside, restored after, nested and threaded."""

from __future__ import annotations

import gc
import threading

import pytest

from cogitave.errors import QueryGraphError
from cogitave.graph.pause import collector_paused
from cogitave.graph.query import query_graph
from cogitave.graph.traverse import traverse


def test_paused_inside_restored_after():
    assert gc.isenabled()
    with collector_paused():
        assert not gc.isenabled()
        with collector_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()  # the outer call still runs
    assert gc.isenabled()


def test_restored_after_an_error(dense):
    with pytest.raises(QueryGraphError):
        query_graph(dense, "MATCH (a)-[*1..4]-(b) RETURN count(*)", timeout_ms=20)
    assert gc.isenabled()


def test_left_disabled_when_it_was_disabled():
    gc.disable()
    try:
        with collector_paused():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_overlapping_threads_reenable_once_the_last_leaves():
    inside, leave = threading.Barrier(2), threading.Event()

    def long_call() -> None:
        with collector_paused():
            inside.wait()
            leave.wait()

    t = threading.Thread(target=long_call)
    t.start()
    with collector_paused():
        inside.wait()
    assert not gc.isenabled()  # the other call is still inside
    leave.set()
    t.join()
    assert gc.isenabled()


def test_a_work_bounded_walk_leaves_the_collector_running(dense):
    seen: list[bool] = []

    def note(node: int) -> bool:
        seen.append(gc.isenabled())
        return True

    traverse(dense, range(5), max_depth=2, max_expansions=500, node_filter=note)
    assert seen and all(seen)
    seen.clear()
    traverse(dense, range(5), max_depth=2, node_filter=note)  # a tool's walk, on a deadline
    assert seen and not any(seen)
