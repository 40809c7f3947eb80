"""Sources and sync: add / change / delete / rename / unchanged on small trees and JSONL, two
sources in one collection, and vectors reused by (encoder, text)."""

from __future__ import annotations

import hashlib
import json
import uuid
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import pytest

from cogitave import Collection, Node
from cogitave.expand.embed import register_encoder
from cogitave.ingest.docs import read_docs as read_markdown
from cogitave.ingest.jsonl import read_jsonl
from cogitave.store.roots import referenced_objects
from cogitave.store.textvecs import MAX_SEGMENTS
from cogitave.store.verify import verify_collection
from cogitave.sync import SourceUpdate, node_hash, plan
from cogitave.texts import embed_texts
from tests.conftest import SCHEMA, make_nodes


class CountingEncoder:
    """Deterministic vectors from the text's hash; counts every text it is sent."""

    dim = 16

    def __init__(self, name: str) -> None:
        self.name = name
        self.texts: list[str] = []

    def encode(
        self,
        texts: Sequence[str],
        *,
        batch_size: int = 8,
        progress: Callable[[int], None] | None = None,
    ) -> np.ndarray:
        self.texts.extend(texts)
        rows = [np.frombuffer(hashlib.sha256(t.encode()).digest()[:16], np.uint8) for t in texts]
        out = np.asarray(rows, np.float32).reshape(len(texts), self.dim) + 1.0
        if progress is not None:
            progress(len(texts))
        return out / np.linalg.norm(out, axis=1, keepdims=True)


@pytest.fixture
def counting() -> CountingEncoder:
    """A counting encoder registered under a fresh name (no state shared between tests)."""
    enc = CountingEncoder(f"test/counting-{uuid.uuid4().hex[:8]}")
    register_encoder(enc.name, lambda: enc)
    return enc


def texts_of(nodes: Sequence[Node], schema: object = SCHEMA) -> set[str]:
    """Every distinct text the write path embeds for ``nodes``."""
    out: set[str] = set()
    for n in nodes:
        out |= set(embed_texts(n, schema).values())  # type: ignore[arg-type]
    return out


def write_tree(root: Path, pages: dict[str, str]) -> None:
    for rel, text in pages.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)


PAGES = {
    "index.md": "# Home\n\nWelcome to the river guide. See [rafts](rafts.md).\n",
    "rafts.md": "# Rafts\n\nHow to build a raft from logs.\n\n## Knots\n\nTie the logs together.\n",
    "tents.md": "# Tents\n\nPitching a tent by the forest edge.\n",
}


def md_sync(col: Collection | None, tree: Path, path: Path, name: str = "docs") -> tuple:
    batch = read_markdown(tree, None)
    if col is None:
        col = Collection.create(path, batch.schema, encoder=None)
    return col, col.sync(name, batch.nodes), batch


def live_uids(col: Collection) -> set[str]:
    nodes = col.snapshot.nodes
    return {u for u in nodes.nid_of}


# -- small trees ---------------------------------------------------------------------------------
def test_tree_add_change_delete_rename_unchanged(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    write_tree(tree, PAGES)
    col, first, batch = md_sync(None, tree, tmp_path / "col")
    assert first.root and len(first.added) == len(batch.nodes) == len(col)
    assert set(col.source_uids("docs")) == {n.uid for n in batch.nodes}

    # unchanged: no new root
    head = col.store.head()
    _, res, _ = md_sync(col, tree, tmp_path / "col")
    assert res.root is None and res.unchanged == len(batch.nodes)
    assert col.store.head() == head and len(col.roots()) == 2

    # change one page: only its nodes are replaced
    tents_uids = {n.uid for n in batch.nodes if n.meta.get("path", "").endswith("tents.md")}
    (tree / "tents.md").write_text("# Tents\n\nPitching a tent by the lake shore.\n")
    _, res, batch = md_sync(col, tree, tmp_path / "col")
    assert set(res.changed) == tents_uids and not res.added and not res.deleted
    assert res.unchanged == len(batch.nodes) - len(tents_uids)
    hit = col.search("lake shore", limit=3).results
    assert hit and hit[0].uid in tents_uids

    # add a page
    (tree / "boats.md").write_text("# Boats\n\nCanoes and kayaks on the river.\n")
    _, res, batch = md_sync(col, tree, tmp_path / "col")
    assert res.added and all("boats" in u for u in res.added) and not res.deleted

    # delete a page: its nodes and their edges go; the page linking to it changes
    rafts = {n.uid for n in batch.nodes if n.meta.get("path", "").endswith("rafts.md")}
    assert rafts
    (tree / "rafts.md").unlink()
    _, res, batch = md_sync(col, tree, tmp_path / "col")
    assert set(res.deleted) == rafts
    assert not rafts & live_uids(col)
    assert not {h.uid for h in col.search("raft logs knots", mode="bm25").results} & rafts
    for n in batch.nodes:
        assert not {r.uid for r in col.related(n.uid, depth=2).items} & rafts

    # rename a page: old uids deleted, new added
    before = {n.uid for n in batch.nodes if n.meta.get("path", "").endswith("boats.md")}
    (tree / "boats.md").rename(tree / "vessels.md")
    _, res, batch = md_sync(col, tree, tmp_path / "col")
    assert set(res.deleted) == before
    assert res.added and all("vessels" in u for u in res.added)
    assert live_uids(col) == {n.uid for n in batch.nodes}
    assert verify_collection(col.store.path).ok


def test_a_page_turned_draft_leaves_the_index(tmp_path: Path) -> None:
    # A Hugo tree: a page its site stops building is deleted like a removed file.
    tree = tmp_path / "site"
    write_tree(
        tree,
        {
            "content/_index.md": "---\ntitle: Home\n---\nWelcome.\n",
            "content/tents.md": "---\ntitle: Tents\n---\nPitching a tent by the lake.\n",
        },
    )
    col, _, _ = md_sync(None, tree, tmp_path / "col")
    assert "tents" in live_uids(col)
    (tree / "content/tents.md").write_text("---\ntitle: Tents\ndraft: true\n---\nPitching.\n")
    _, res, batch = md_sync(col, tree, tmp_path / "col")
    assert "tents" in res.deleted and "tents" not in live_uids(col)
    assert batch.stats["unpublished"] == ["content/tents.md: draft"]


def test_vanished_source_is_not_an_empty_source(tmp_path: Path) -> None:
    """Deleting every node of a source takes an explicit delete_source, never a sync of
    nothing by accident (the CLI refuses a missing source before it gets here)."""
    tree = tmp_path / "tree"
    write_tree(tree, PAGES)
    col, _, batch = md_sync(None, tree, tmp_path / "col")
    res = col.delete_source("docs")
    assert set(res.deleted) == {n.uid for n in batch.nodes} and len(col) == 0
    assert col.sources() == {}
    with pytest.raises(Exception, match="no source 'docs'"):
        col.delete_source("docs")


# -- JSONL -----------------------------------------------------------------------------------
def jsonl(path: Path, records: list[dict]) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))


RECORDS = [
    {"uid": "a", "title": "alpha river", "body": "the river runs"},
    {"uid": "b", "title": "beta mountain", "body": "the mountain stands"},
    {"uid": "c", "title": "gamma forest", "body": "the forest grows"},
]


def test_jsonl_change_delete_and_add_only(tmp_path: Path) -> None:
    src = tmp_path / "r.jsonl"
    jsonl(src, RECORDS)
    batch = read_jsonl(src, None)
    col = Collection.create(tmp_path / "col", batch.schema, encoder=None)
    assert len(col.sync("r", batch.nodes).added) == 3

    jsonl(src, [RECORDS[0], {**RECORDS[1], "body": "the mountain fell"}])
    res = col.sync("r", read_jsonl(src, None).nodes)
    assert (res.added, res.changed, res.deleted, res.unchanged) == ([], ["b"], ["c"], 1)
    assert live_uids(col) == {"a", "b"}
    assert col.get("b").dims["body"] == "the mountain fell"

    # a stream of new records: add-only keeps what the file no longer holds
    jsonl(src, [{"uid": "d", "title": "delta", "body": "new record"}])
    res = col.sync("r", read_jsonl(src, None).nodes, add_only=True)
    assert res.added == ["d"] and not res.deleted
    assert live_uids(col) == {"a", "b", "d"}
    assert set(col.source_uids("r")) == {"a", "b", "d"}
    # and a full sync afterwards deletes them
    res = col.sync("r", read_jsonl(src, None).nodes)
    assert set(res.deleted) == {"a", "b"} and live_uids(col) == {"d"}


def test_two_sources_in_one_collection(tmp_path: Path) -> None:
    one, two = make_nodes(20, seed=1), make_nodes(20, seed=2)
    two = [Node(uid=f"t{n.uid}", kind=n.kind, dims=n.dims) for n in two]
    col = Collection.create(tmp_path / "col", SCHEMA, encoder=None)
    col.sync("one", one)
    col.sync("two", two)
    assert col.sources() == {"one": 20, "two": 20} and len(col) == 40

    res = col.sync("one", one[:5])  # source one shrinks: two is untouched
    assert len(res.deleted) == 15 and len(col) == 25
    assert set(col.source_uids("two")) == {n.uid for n in two}
    assert col.sync("two", two).root is None

    # a uid that moves from one source to another leaves the first
    moved = Node(uid=one[0].uid, kind="doc", dims={"title": "moved", "body": "now in two"})
    res = col.sync("two", [*two, moved])
    assert res.changed == [one[0].uid]
    assert one[0].uid not in col.source_uids("one")
    assert one[0].uid in col.source_uids("two")
    # deleting source one does not delete the node it lost
    col.delete_source("one")
    assert col.get(one[0].uid).dims["title"] == "moved" and len(col) == 21


def test_manual_writes_keep_the_source_map_true(tmp_path: Path) -> None:
    nodes = make_nodes(10)
    col = Collection.create(tmp_path / "col", SCHEMA, encoder=None)
    col.sync("s", nodes)
    col.delete([nodes[0].uid])
    col.publish()
    assert nodes[0].uid not in col.source_uids("s")
    # a node replaced by hand is put back by the next sync of its source
    col.add([Node(uid=nodes[1].uid, kind="doc", dims={"title": "by hand", "body": "x"})])
    col.publish()
    res = col.sync("s", nodes)
    assert sorted(res.added) == [nodes[0].uid] and res.changed == [nodes[1].uid]
    assert col.get(nodes[1].uid).dims == nodes[1].dims


def test_nodes_indexed_before_sources_are_adopted(
    counting: CountingEncoder, tmp_path: Path
) -> None:
    nodes = make_nodes(12)
    col = Collection.create(tmp_path / "col", SCHEMA, encoder=counting.name)
    col.add(nodes)
    col.publish()
    sent = len(counting.texts)
    res = col.sync("s", nodes)
    assert res.unchanged == 12 and not res.added and not res.changed
    assert res.root is not None  # the source map is new
    assert (
        len(counting.texts) == sent
        and col.snapshot.manifest.parent is not None
        and col.snapshot.manifest.segments
        == col.store.read_root(col.snapshot.manifest.parent).segments
    )
    assert col.sync("s", nodes).root is None


# -- vectors reused -------------------------------------------------------------------------
def test_no_text_is_embedded_twice(counting: CountingEncoder, tmp_path: Path) -> None:
    nodes = make_nodes(30)
    col = Collection.create(tmp_path / "col", SCHEMA, encoder=counting.name)
    res = col.sync("s", nodes)
    assert res.encoded == len(counting.texts) == len(texts_of(nodes, col.schema))
    assert len(set(counting.texts)) == len(counting.texts)

    counting.texts.clear()
    assert col.sync("s", nodes).root is None and counting.texts == []

    # one node's body changes: its whole text (the one text a fields-only node embeds) is new
    edited = Node(uid=nodes[3].uid, kind="doc", dims={**nodes[3].dims, "body": "brand new body"})
    res = col.sync("s", [*nodes[:3], edited, *nodes[4:]])
    assert sorted(counting.texts) == sorted(set(embed_texts(edited, col.schema).values()))
    assert (res.encoded, res.reused) == (1, 0)

    # a rename (new uid, same text) and a node copied from a deleted one: nothing encoded
    counting.texts.clear()
    renamed = [Node(uid=f"r-{n.uid}", kind=n.kind, dims=n.dims) for n in nodes[5:10]]
    now = [*nodes[:3], edited, nodes[4], *renamed, *nodes[10:]]
    res = col.sync("s", now)
    assert len(res.added) == 5 and len(res.deleted) == 5 and counting.texts == []
    assert res.encoded == 0 and res.reused == len(texts_of(renamed, col.schema))

    # the reused vectors are the ones a fresh collection computes
    fresh = Collection.create(tmp_path / "fresh", SCHEMA, encoder=counting.name)
    fresh.add(now)
    fresh.publish()
    q = "alpha river mountain"
    assert [h.uid for h in col.search(q, mode="dense").results] == [
        h.uid for h in fresh.search(q, mode="dense").results
    ]
    assert verify_collection(col.store.path).ok


def test_text_vectors_follow_retention(counting: CountingEncoder, tmp_path: Path) -> None:
    """Cache segments are objects like any other: merged past MAX_SEGMENTS, deleted when no
    retained root names them."""
    col = Collection.create(tmp_path / "col", SCHEMA, encoder=counting.name)
    nodes = make_nodes(4 * (MAX_SEGMENTS + 2))
    for i in range(MAX_SEGMENTS + 2):
        col.sync("s", nodes[: 4 * (i + 1)], retention=2)
    entry = col.snapshot.manifest.text_vectors
    assert entry is not None and entry["encoder"] == counting.name
    assert len(entry["segments"]) <= MAX_SEGMENTS
    assert sum(s["count"] for s in entry["segments"]) == len(texts_of(nodes, col.schema))
    named = set()
    for r in col.roots():
        named |= set(referenced_objects(col.store.read_root(r.id)))
    on_disk = {p.name for p in col.store.objects.iterdir()}
    assert on_disk == named  # nothing unreferenced is kept, nothing referenced is missing
    counting.texts.clear()
    col.sync("s", nodes[:3])  # every text still reusable after merges
    assert col.sync("s", nodes).encoded == 0 and counting.texts == []


def test_another_encoder_does_not_reuse(counting: CountingEncoder, tmp_path: Path) -> None:
    from cogitave.store.textvecs import TextVectors

    col = Collection.create(tmp_path / "col", SCHEMA, encoder=counting.name)
    col.sync("s", make_nodes(5))
    entry = col.snapshot.manifest.text_vectors
    other = TextVectors(col.store, entry, "another-encoder")
    got = other.encode(["alpha"], lambda t: np.ones((len(t), 16), np.float32), 16)
    assert other.encoded == 1 and float(got[0, 0]) == 1.0


# -- the plan on its own ------------------------------------------------------------------------
def test_plan_classifies_by_hash() -> None:
    a, b, c = (Node(uid=u, dims={"title": u}) for u in "abc")
    b2 = Node(uid="b", dims={"title": "b2"})
    sources = {"s": {"a": node_hash(a), "b": node_hash(b), "c": node_hash(c)}}
    p = plan(sources, SourceUpdate("s", [a, b2]), lambda u: "x")
    assert (p.added, p.changed, p.deleted, p.unchanged) == ([], ["b"], ["c"], 1)
    assert p.sources["s"] == {"a": node_hash(a), "b": node_hash(b2)}
    assert plan(sources, SourceUpdate("s", [a, b, c]), lambda u: None).empty
    p = plan(sources, SourceUpdate("s", [a], add_only=True), lambda u: None)
    assert p.empty and not p.deleted


def test_node_hash_survives_the_store(tmp_path: Path) -> None:
    n = Node(
        uid="x",
        kind="doc",
        dims={"title": "t", "body": "b"},
        content="c",
        meta={"path": "p", "aliases": ["/a"]},
    )
    col = Collection.create(tmp_path / "col", SCHEMA, encoder=None)
    col.add([n])
    col.publish()
    assert node_hash(col.get("x")) == node_hash(n)
