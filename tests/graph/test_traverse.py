"""The one bounded traversal: depth, rows, deadline, labels, both walk orders."""

from __future__ import annotations

import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cogitave.errors import QueryGraphError
from cogitave.graph import traverse as traverse_module
from cogitave.graph.traverse import CLOCK_EVERY, MAX_DEPTH, MAX_ROWS, path_edges, traverse
from cogitave.nodes import Edge, Node
from cogitave.store.graph import GraphSegment
from tests.clock import StepClock


def _chain(n: int) -> GraphSegment:
    return GraphSegment.build(
        [Node(f"c{i}", edges=(Edge("dependsOn", f"c{i + 1}"),)) for i in range(n)] + [Node(f"c{n}")]
    )


def _ids(g: GraphSegment, uids: list[str]) -> list[int]:
    return [g.id_of(u) for u in uids]  # type: ignore[misc]


def test_depth_range_and_directions():
    g = _chain(6)
    c0, c2 = _ids(g, ["c0", "c2"])
    tr = traverse(g, [c0], max_depth=3)
    assert [(g.uid(r.node), r.depth) for r in tr.rows] == [("c1", 1), ("c2", 2), ("c3", 3)]
    tr = traverse(g, [c0], min_depth=2, max_depth=3)
    assert [g.uid(r.node) for r in tr.rows] == ["c2", "c3"]
    tr = traverse(g, [c2], direction="in", max_depth=4)
    assert [g.uid(r.node) for r in tr.rows] == ["c1", "c0"]
    tr = traverse(g, [c2], direction="both", max_depth=1)
    assert sorted(g.uid(r.node) for r in tr.rows) == ["c1", "c3"]
    tr = traverse(g, [c2], min_depth=0, max_depth=0)
    assert [(r.node, r.depth, r.path) for r in tr.rows] == [(c2, 0, ())]


def test_path_explains_each_hop():
    g = _chain(3)
    c0, c1, c2 = _ids(g, ["c0", "c1", "c2"])
    row = traverse(g, [c0], max_depth=2).rows[-1]
    assert row.node == c2
    assert [(h.label, h.direction, h.node) for h in row.path] == [
        ("dependsOn", "out", c1),
        ("dependsOn", "out", c2),
    ]
    assert path_edges(c0, row.path) == [(c0, "dependsOn", c1), (c1, "dependsOn", c2)]
    back = traverse(g, [c2], direction="in", max_depth=2).rows[-1]
    assert path_edges(c2, back.path) == [(c1, "dependsOn", c2), (c0, "dependsOn", c1)]


def test_labels_filter_and_unknown_label():
    nodes = [Node("a", edges=(Edge("xref", "b"), Edge("partOf", "c"))), Node("b"), Node("c")]
    g = GraphSegment.build(nodes)
    a = g.id_of("a")
    assert [g.uid(r.node) for r in traverse(g, [a], labels=["xref"]).rows] == ["b"]
    assert len(traverse(g, [a]).rows) == 2
    with pytest.raises(QueryGraphError) as e:
        traverse(g, [a], labels=["KNOWS"])
    assert e.value.code == "label" and "partOf" in e.value.message


@pytest.mark.parametrize("depth", [MAX_DEPTH + 1, 10, 100])
def test_depth_cap(depth):
    g = _chain(3)
    with pytest.raises(QueryGraphError) as e:
        traverse(g, [0], max_depth=depth)
    assert e.value.code == "depth"


@pytest.mark.parametrize(("lo", "hi"), [(-1, 2), (3, 2)])
def test_bad_depth_range(lo, hi):
    with pytest.raises(QueryGraphError) as e:
        traverse(_chain(3), [0], min_depth=lo, max_depth=hi)
    assert e.value.code == "depth"


def test_row_cap_truncates(dense):
    tr = traverse(dense, range(dense.n_nodes), max_depth=2, max_rows=10**9)
    assert len(tr.rows) == MAX_ROWS and tr.truncated
    tr = traverse(dense, [0], max_depth=1, max_rows=5)
    assert len(tr.rows) == 5 and tr.truncated
    tr = traverse(_chain(2), [0], max_depth=2, max_rows=2)
    assert len(tr.rows) == 2 and not tr.truncated  # exactly at the cap is not truncation


def test_bad_max_rows():
    with pytest.raises(QueryGraphError) as e:
        traverse(_chain(2), [0], max_rows=0)
    assert e.value.code == "limit"


def test_deadline_in_the_past_times_out():
    with pytest.raises(QueryGraphError) as e:
        traverse(_chain(2), [0], deadline=time.monotonic() - 1)
    assert e.value.code == "timeout"


def test_deadline_stops_a_long_walk(dense, monkeypatch):
    # Paths to depth 4 from every node: millions of expansions; the clock stops it. Each read
    # of the clock moves it 10 ms, so a 30 ms deadline passes at the third look: after
    # 3 x CLOCK_EVERY expansions, on any machine.
    c = StepClock(0.01).install(monkeypatch, traverse_module)
    with pytest.raises(QueryGraphError) as e:
        traverse(
            dense,
            range(dense.n_nodes),
            direction="both",
            max_depth=4,
            unique="edge",
            deadline=c.now + 0.03,
            node_filter=lambda v: False,  # no rows: the row cap never ends the walk
        )
    assert e.value.code == "timeout"
    assert e.value.details["expansions"] == 3 * CLOCK_EVERY  # entry read, then every 256


def test_node_filter_walks_through(dense):
    # Rows only for one kind, but the walk passes through every node.
    kind = dense.kind(0)
    tr = traverse(dense, [0], max_depth=2, node_filter=lambda v: dense.kind(v) == kind)
    assert tr.rows and all(dense.kind(r.node) == kind for r in tr.rows)
    assert any(r.depth == 2 for r in tr.rows)


def test_node_mode_reports_each_node_once_with_shortest_path(dense):
    tr = traverse(dense, [0], max_depth=3, direction="both")
    nodes = [r.node for r in tr.rows]
    assert len(nodes) == len(set(nodes))
    depths = [r.depth for r in tr.rows]
    assert depths == sorted(depths)  # breadth first


def test_edge_mode_enumerates_paths_without_repeating_relationships():
    # a <-> b (two xref edges); paths a-b-a exist but never reuse one relationship.
    g = GraphSegment.build(
        [Node("a", edges=(Edge("xref", "b"),)), Node("b", edges=(Edge("xref", "a"),))]
    )
    a = g.id_of("a")
    tr = traverse(g, [a], direction="both", max_depth=4, unique="edge")
    for r in tr.rows:
        edges = path_edges(a, r.path)
        assert len(edges) == len(set(edges))
    assert max(r.depth for r in tr.rows) == 2  # only two relationships exist
    # node mode: b once
    assert [g.uid(r.node) for r in traverse(g, [a], direction="both", max_depth=4).rows] == ["b"]


def test_self_loop_walked_both_ways_counts_once():
    g = GraphSegment.build([Node("a", edges=(Edge("xref", "a"),))])
    tr = traverse(g, [0], direction="both", unique="edge")
    assert len(tr.rows) == 1


def test_unknown_seeds_are_ignored():
    g = _chain(2)
    assert traverse(g, [-1, 99]).rows == []


def test_work_on_100k_edges_is_bounded_by_the_row_cap(big):
    """Every call on a 100k-edge graph stops at the row cap: its expansions stay within what
    1000 rows can cost (each row one new node, found among its predecessors' edges)."""
    for seed in range(0, 10_000, 500):
        tr = traverse(big, [seed], direction="both", max_depth=4)
        assert len(tr.rows) <= MAX_ROWS
        assert tr.expansions <= 40 * MAX_ROWS, (seed, tr.expansions)


# -- against a brute-force reference --------------------------------------------------------
_edges = st.lists(
    st.tuples(st.integers(0, 7), st.sampled_from(["xref", "partOf"]), st.integers(0, 7)),
    max_size=20,
)


def _reference_paths(
    edges: set[tuple[int, str, int]], seed: int, direction: str, lo: int, hi: int
) -> list[tuple[int, int]]:
    """(end node, depth) of every path from ``seed`` with no edge repeated."""
    out: list[tuple[int, int]] = []

    def steps(u: int) -> list[tuple[tuple[int, str, int], int]]:
        res = []
        for e in sorted(edges):
            s, _, d = e
            if direction in ("out", "both") and s == u:
                res.append((e, d))
            if direction in ("in", "both") and d == u and not (direction == "both" and s == d):
                res.append((e, s))
        return res

    def walk(u: int, depth: int, used: frozenset[tuple[int, str, int]]) -> None:
        if lo <= depth:
            out.append((u, depth))
        if depth == hi:
            return
        for e, v in steps(u):
            if e not in used:
                walk(v, depth + 1, used | {e})

    walk(seed, 0, frozenset())
    return [r for r in out if r[1] >= max(lo, 0)]


@settings(max_examples=150, deadline=None, database=None)
@given(
    edges=_edges,
    seed=st.integers(0, 7),
    direction=st.sampled_from(["out", "in", "both"]),
    lo=st.integers(0, 2),
    hi=st.integers(0, 3),
)
def test_traverse_matches_reference(edges, seed, direction, lo, hi):
    if lo > hi:
        lo, hi = hi, lo
    nodes = [
        Node(f"{i}", edges=tuple(Edge(lab, f"{d}") for s, lab, d in edges if s == i))
        for i in range(8)
    ]
    g = GraphSegment.build(nodes)  # uids "0".."7" sort as their ids
    unique_edges = set(edges)
    ref = _reference_paths(unique_edges, seed, direction, lo, hi)
    got = traverse(g, [seed], direction=direction, min_depth=lo, max_depth=hi, unique="edge")
    assert sorted((r.node, r.depth) for r in got.rows) == sorted(ref)
    # node mode: each reachable node once, at its shortest distance
    best: dict[int, int] = {}
    for node, depth in _reference_paths(unique_edges, seed, direction, 0, hi):
        best[node] = min(best.get(node, 99), depth)
    want = sorted((n, d) for n, d in best.items() if d >= lo and (n != seed or d == 0))
    got_nodes = traverse(g, [seed], direction=direction, min_depth=lo, max_depth=hi)
    assert sorted((r.node, r.depth) for r in got_nodes.rows) == want


def test_a_work_cap_stops_the_walk_in_the_same_place_and_reads_no_clock(monkeypatch):
    g = _chain(10)
    c0, c5 = _ids(g, ["c0", "c5"])
    full = traverse(g, [c0], max_depth=4, max_expansions=100)
    assert [g.uid(r.node) for r in full.rows] == ["c1", "c2", "c3", "c4"]
    assert full.expansions == 4 and not full.truncated and not full.spent

    def no_clock() -> float:
        raise AssertionError("a work-bounded walk read the clock")

    monkeypatch.setattr(time, "monotonic", no_clock)
    for _ in range(3):
        cut = traverse(g, [c0, c5], max_depth=4, max_expansions=6)
        got = [(g.uid(r.seed), g.uid(r.node)) for r in cut.rows]
        # c0's walk takes four expansions, c5's the two left
        want = [("c0", "c1"), ("c0", "c2"), ("c0", "c3"), ("c0", "c4"), ("c5", "c6"), ("c5", "c7")]
        assert got == want
        assert cut.truncated and cut.spent and cut.expansions == 6
    with pytest.raises(QueryGraphError, match="max_expansions"):
        traverse(g, [c0], max_expansions=-1)


def test_a_hub_is_walked_edge_by_edge_under_the_work_cap():
    hub = GraphSegment.build(
        [Node("hub")] + [Node(f"l{i}", edges=(Edge("xref", "hub"),)) for i in range(5000)]
    )
    tr = traverse(hub, _ids(hub, ["hub"]), direction="in", max_expansions=10)
    assert len(tr.rows) == 10 and tr.expansions == 10 and tr.spent


def test_many_seeds_walk_as_each_seed_alone():
    """Seeds' edge offsets are read a block at a time: past a block, with seeds that have no
    edges of the labels among them, the rows are each seed's own walk, in seed order."""
    n = traverse_module.SEED_BLOCK * 2 + 7
    nodes = [
        Node(
            f"n{i:04d}",
            edges=(Edge("xref", f"n{(i * 7) % n:04d}"),) if i % 3 else (Edge("partOf", "n0000"),),
        )
        for i in range(n)
    ]
    g = GraphSegment.build(nodes)
    seeds = list(range(n - 1, -1, -1))
    together = traverse(g, seeds, labels=("xref",), direction="both", max_depth=2)
    alone = [
        r
        for s in seeds
        for r in traverse(g, [s], labels=("xref",), direction="both", max_depth=2).rows
    ]
    assert together.rows == alone[:MAX_ROWS]
    assert together.truncated == (len(alone) > MAX_ROWS)


def test_no_edge_of_the_labels_walks_nothing():
    g = _chain(3)
    tr = traverse(g, [0, 1, 2], labels=("supersededBy",), direction="both", max_depth=4)
    assert tr.rows == [] and tr.expansions == 0 and not tr.truncated
    seeds_too = traverse(g, [0, 1], labels=("supersededBy",), min_depth=0, max_depth=2)
    assert [(r.seed, r.node, r.depth) for r in seeds_too.rows] == [(0, 0, 0), (1, 1, 0)]
