"""Node segments: records by nid, and the facts lines kept beside them (kind, path, URL,
title) that ranking reads instead of parsing a record."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from cogitave import Collection, Node, SearchRequest
from cogitave.nodes import NodeFacts
from cogitave.schema import Dimension, Schema
from cogitave.store.nodes import NodeTable
from cogitave.store.snapshot import Snapshot
from cogitave.store.verify import verify_collection
from tests.helpers import docs_collection, sharded, sharded_docs_collection

SCHEMA = Schema((Dimension("title", "semantic"), Dimension("body", "semantic")))
ODD = [
    Node("a", "page", {"title": "Plain", "body": "x"}, meta={"path": "docs/a.md", "url": "/a/"}),
    Node("b#s", "section", {"title": "Two\nlines «ü»", "body": "y"}, meta={"path": "docs/b.md"}),
    Node("c", "page", {"title": ("not", "a", "string"), "body": "z"}, meta={"url": 7}),
    Node("d", "node", {"body": "no title, no meta"}),
    Node("e\u2028f", "page", {"title": 'quote " and \\ slash', "body": "w"}, meta={"path": ""}),
]


def _collection(tmp_path: Path) -> Collection:
    col = Collection.create(tmp_path / "col", SCHEMA)
    col.add(ODD)
    col.publish()
    return col


def test_facts_lines_equal_the_records_facts(tmp_path: Path) -> None:
    snap = _collection(tmp_path).snapshot
    table = snap.nodes
    assert all(seg.facts is not None for seg in table.segments)
    nids = list(table.nid_of.values())
    assert table.facts_of(nids) == [NodeFacts.of_record(table.record(n)) for n in nids]
    got = {f.uid: f for f in snap.node_facts(list(table.nid_of.values()))}
    assert got["b#s"] == NodeFacts("b#s", "section", "docs/b.md", "", "Two\nlines «ü»")
    assert got["c"] == NodeFacts("c", "page", "", "", "")  # a tuple title, a number URL: ''
    assert got["d"] == NodeFacts("d", "node")


def test_facts_do_not_parse_records(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    snap = _collection(tmp_path).snapshot

    def refuse(self: NodeTable, nid: int) -> dict[str, Any]:
        raise AssertionError("a record was parsed")

    monkeypatch.setattr(NodeTable, "record", refuse)
    assert [f.uid for f in snap.node_facts([snap.id_of("a")])] == ["a"]
    assert snap.prefix_nids("docs/b").tolist() == [snap.id_of("b#s")]


def test_a_segment_without_facts_reads_its_records(tmp_path: Path) -> None:
    """Roots written before the facts lines: the same facts, from the records."""
    col = _collection(tmp_path)
    store = col.store
    m = store.read_root(col.root)
    old = [{k: v for k, v in seg.items() if not k.startswith("facts")} for seg in m.segments]
    table = NodeTable(store, old, m.next_nid)
    assert all(seg.facts is None for seg in table.segments)
    new = Snapshot.open(store, col.root).nodes
    nids = list(new.nid_of.values())
    assert table.facts_of(nids) == new.facts_of(nids)


def test_a_replaced_node_has_its_new_facts(tmp_path: Path) -> None:
    col = _collection(tmp_path)
    col.add([Node("a", "page", {"title": "Moved", "body": "x"}, meta={"path": "docs/z.md"})])
    col.publish()
    snap = col.snapshot
    assert snap.node_facts([snap.id_of("a")]) == [NodeFacts("a", "page", "docs/z.md", "", "Moved")]


def test_sharded_view_answers_the_same_facts(tmp_path_factory: pytest.TempPathFactory) -> None:
    one = docs_collection(tmp_path_factory).snapshot
    port = sharded(sharded_docs_collection(tmp_path_factory)).port()
    uids = sorted(one.nodes.nid_of)[:40]
    ids = [port.id_of(u) for u in uids]
    assert None not in ids
    assert port.node_facts(ids) == one.nodes.facts_of([one.id_of(u) for u in uids])


def test_compact_writes_the_facts_an_older_root_lacks(tmp_path: Path) -> None:
    """A HEAD written before facts lines: search and verify work from the records, and
    ``compact`` writes the same lines a fresh publish writes."""
    col = _collection(tmp_path)
    fresh = [dict(seg) for seg in col.snapshot.manifest.segments]
    m = col.snapshot.manifest
    old = m.with_(segments=tuple({k: v for k, v in s.items() if "facts" not in k} for s in fresh))
    col.store.set_head(col.store.write_root(old))
    col = Collection.open(col.store.path)
    assert all("facts_obj" not in s for s in col.snapshot.manifest.segments)
    assert col.search(SearchRequest(query="plain", mode="bm25")).uids == ["a"]
    assert verify_collection(col.store.path).ok
    col.add([Node("g", "page", {"title": "New", "body": "v"}, meta={"path": "docs/g.md"})])
    col.publish()  # one segment with lines after the old ones: a batch reads both ways
    table = col.snapshot.nodes
    assert [seg.facts is not None for seg in table.segments] == [False, True]
    nids = list(table.nid_of.values())
    assert table.facts_of(nids) == [NodeFacts.of_record(table.record(n)) for n in nids]
    col.compact()
    segs = col.snapshot.manifest.segments
    assert segs[0]["facts_obj"] == fresh[0]["facts_obj"]
    assert all(seg.facts is not None for seg in col.snapshot.nodes.segments)
    assert verify_collection(col.store.path).ok
