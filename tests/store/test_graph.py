"""Graph segments: index, CSR adjacency, round trips, mmap, updates and deletes."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cogitave.errors import CorruptionError
from cogitave.nodes import Edge, Node
from cogitave.schema import EDGE_LABELS
from cogitave.store.graph import GraphSegment, apply, write_graph_segment
from cogitave.store.roots import RootStore
from tests.graph._graphs import docs_nodes, random_nodes


def _edge_set(g: GraphSegment) -> set[tuple[str, str, str]]:
    return set(g.edges())


def test_index_and_adjacency():
    g = GraphSegment.build(docs_nodes())
    assert g.n_nodes == 14
    assert g.uids() == sorted(g.uids())  # ids are uid ranks
    i = g.id_of("docs/tutorial/dependencies.md")
    assert i is not None and g.uid(i) == "docs/tutorial/dependencies.md"
    assert g.kind(i) == "page" and g.title(i) == "Dependencies"
    assert g.id_of("nope") is None
    first = g.id_of("docs/tutorial/first-steps.md")
    assert g.out(i, "dependsOn").tolist() == [first]
    assert i in g.in_(first, "dependsOn").tolist()
    assert g.out(i, "appliesTo").tolist() == []
    assert g.count_by_kind() == {"api": 1, "page": 9, "role": 1, "section": 1, "skill": 2}
    assert g.count_by_label()["dependsOn"] == 7
    assert g.dangling == 1
    assert list(g.dangling_edges()) == [
        ("docs/tutorial/dependencies.md", "xref", "docs/missing.md")
    ]
    assert sorted(g.ids_of_kind("skill").tolist()) == [g.id_of("skill:basics"), g.id_of("skill:di")]
    assert g.ids_of_kind("nope").tolist() == []


def test_csr_arrays_are_int32_and_sorted():
    g = GraphSegment.build(random_nodes(300, 6, seed=1))
    for label in EDGE_LABELS:
        for d in ("out", "in"):
            ip, ix = g.csr(label, d)  # type: ignore[arg-type]
            assert ip.dtype == np.int32 and ix.dtype == np.int32
            for u in range(0, 300, 17):
                row = ix[ip[u] : ip[u + 1]]
                assert (np.diff(row) > 0).all()  # sorted and deduplicated


def test_edges_match_input_and_duplicates_collapse():
    nodes = [
        Node("a", edges=(Edge("xref", "b"), Edge("xref", "b"), Edge("partOf", "b"))),
        Node("b", edges=(Edge("xref", "b"),)),  # self-loop
    ]
    g = GraphSegment.build(nodes)
    assert _edge_set(g) == {("a", "xref", "b"), ("a", "partOf", "b"), ("b", "xref", "b")}
    assert g.n_edges == 3


def test_titles_from_mapping_and_callable():
    nodes = [Node("a"), Node("b")]
    assert GraphSegment.build(nodes, {"a": "A"}).titles() == ["A", ""]
    assert GraphSegment.build(nodes, lambda n: n.uid.upper()).titles() == ["A", "B"]


def test_round_trip_bytes_is_canonical():
    nodes = random_nodes(500, 5, seed=3)
    g = GraphSegment.build(nodes)
    data = g.to_bytes()
    g2 = GraphSegment.from_bytes(data)
    assert g2.to_bytes() == data
    assert _edge_set(g2) == _edge_set(g)
    assert g2.uids() == g.uids() and g2.titles() == g.titles()
    # Input order does not matter: same graph, same bytes, same object hash.
    assert GraphSegment.build(list(reversed(nodes))).to_bytes() == data


def test_unicode_titles_and_uids_survive():
    nodes = [Node("ü/ß", "page", {"title": "Grüße 日本"}), Node("x", edges=(Edge("xref", "ü/ß"),))]
    g = GraphSegment.from_bytes(GraphSegment.build(nodes).to_bytes())
    i = g.id_of("ü/ß")
    assert i is not None and g.title(i) == "Grüße 日本"


def test_empty_graph_round_trip():
    g = GraphSegment.build([])
    g2 = GraphSegment.from_bytes(g.to_bytes())
    assert g2.n_nodes == 0 and g2.n_edges == 0 and g2.id_of("x") is None


def test_store_write_and_mmap_open(tmp_path):
    store = RootStore(tmp_path)
    store.init()
    g = GraphSegment.build(random_nodes(200, 4, seed=5))
    entry = write_graph_segment(store, g)
    assert entry["edges"] == g.n_edges and entry["nodes"] == 200
    g2 = GraphSegment.open(store, entry["graph_obj"])
    assert isinstance(g2.csr("xref", "out")[1].base, np.ndarray | np.memmap)  # a view
    assert _edge_set(g2) == _edge_set(g)
    assert store.get_bytes(entry["graph_obj"]) == g.to_bytes()  # content-addressed


@pytest.mark.parametrize(
    "mutate",
    [
        lambda b: b[:10] + b"X" + b[11:],  # header length
        lambda b: b"NOTGRAPH" + b[8:],  # magic
        lambda b: b[: len(b) // 2],  # truncated
    ],
)
def test_corrupt_bytes_raise_corruption(mutate):
    data = GraphSegment.build(random_nodes(50, 3)).to_bytes()
    with pytest.raises(CorruptionError):
        GraphSegment.from_bytes(mutate(data))


def test_out_of_range_index_is_detected():
    g = GraphSegment.build(random_nodes(20, 3))
    arrays = dict(g._a)
    ix = arrays["out.xref.indices"].copy()
    ix[0] = 10_000
    arrays["out.xref.indices"] = ix
    with pytest.raises(CorruptionError, match="out of range"):
        GraphSegment(arrays, g.meta)


# -- updates and deletes --------------------------------------------------------------------
def test_update_replaces_out_edges():
    base = GraphSegment.build(docs_nodes())
    upd = Node(
        "docs/tutorial/dependencies.md",
        "page",
        {"title": "Dependencies v2"},
        edges=(Edge("xref", "docs/tutorial/security.md"),),
    )
    g = apply(base, [upd], [])
    i = g.id_of(upd.uid)
    assert i is not None and g.title(i) == "Dependencies v2"
    out = {(lab, d) for s, lab, d in g.edges() if s == upd.uid}
    assert out == {("xref", "docs/tutorial/security.md")}
    # Edges into the updated node stay.
    assert ("docs/tutorial/security.md", "dependsOn", upd.uid) in _edge_set(g)
    assert g.dangling == 0  # the dangling xref left with the old version


def test_delete_drops_node_and_edges_into_it():
    base = GraphSegment.build(docs_nodes())
    gone = "docs/tutorial/first-steps.md"
    g = apply(base, [], [gone])
    assert g.id_of(gone) is None and g.n_nodes == base.n_nodes - 1
    assert all(gone not in (s, d) for s, _, d in g.edges())
    # ...but the edges wait as dangling: publishing the node again brings them back.
    restored = apply(g, [n for n in docs_nodes() if n.uid == gone], [])
    assert restored.to_bytes() == base.to_bytes()


def test_dangling_edge_revives_when_destination_arrives():
    base = GraphSegment.build([Node("a", edges=(Edge("xref", "b"),))])
    assert base.n_edges == 0 and base.dangling == 1
    g = apply(base, [Node("b")], [])
    assert _edge_set(g) == {("a", "xref", "b")} and g.dangling == 0


def test_apply_on_none_is_build():
    nodes = docs_nodes()
    assert apply(None, nodes, []).to_bytes() == GraphSegment.build(nodes).to_bytes()


def test_a_small_publish_on_100k_edges_equals_a_rebuild():
    """At scale too: 100 nodes replaced and one removed on a 100k-edge graph give the bytes of
    a build from the live nodes. (Its speed is the segments bench's business, not a timed
    test's: a loaded machine slowed this 10x.)"""
    base_nodes = random_nodes(10_000, 10, seed=2)
    added = random_nodes(10_000, 10, seed=3)[:100]
    g = apply(GraphSegment.build(base_nodes), added, ["n000001"])
    assert g.id_of("n000001") is None
    live = {n.uid: n for n in base_nodes}
    live.update({n.uid: n for n in added})
    live.pop("n000001", None)
    assert g.to_bytes() == GraphSegment.build(live.values()).to_bytes()


_uids = st.sampled_from([f"u{i}" for i in range(12)])
_node = st.builds(
    lambda uid, kind, edges: Node(uid, kind, {"title": uid.upper()}, edges=tuple(edges)),
    _uids,
    st.sampled_from(["page", "section"]),
    st.lists(st.builds(Edge, st.sampled_from(EDGE_LABELS), _uids), max_size=4),
)


@settings(
    max_examples=60, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow]
)
@given(
    start=st.lists(_node, max_size=10),
    batches=st.lists(
        st.tuples(st.lists(_node, max_size=4), st.lists(_uids, max_size=3)), max_size=4
    ),
)
def test_apply_equals_rebuild_of_live_nodes(start, batches):
    """The invariant: a chain of publishes gives the bytes of a rebuild from the live nodes."""
    live: dict[str, Node] = {}
    for n in start:
        live.pop(n.uid, None)
        live[n.uid] = n
    g = GraphSegment.build(start)
    for added, removed in batches:
        g = apply(g, added, removed)
        for n in added:
            live.pop(n.uid, None)
            live[n.uid] = n
        for u in removed:
            live.pop(u, None)
        assert g.to_bytes() == GraphSegment.build(live.values()).to_bytes()
