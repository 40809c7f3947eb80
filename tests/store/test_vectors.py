"""Vector segments: survive reopen and merges, deleted nodes never come back, one encoder."""

from __future__ import annotations

import numpy as np
import pytest

from cogitave import Collection, Node, SearchRequest
from cogitave.errors import EncoderError
from cogitave.store import vectors
from tests.conftest import SCHEMA, make_nodes


def test_exact_and_hnsw_segments_agree(tmp_path, monkeypatch):
    from cogitave.store.roots import RootStore

    store = RootStore(tmp_path / "c")
    store.init()
    rng = np.random.default_rng(0)
    vecs = rng.standard_normal((600, 32)).astype(np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    keys = np.arange(600, dtype=np.uint64)
    exact = vectors.build_segment(store, keys, vecs)
    monkeypatch.setattr(vectors, "EXACT_BELOW", 100)
    hnsw = vectors.build_segment(store, keys, vecs)
    assert "hnsw_obj" not in exact and "hnsw_obj" in hnsw
    alive = np.ones(600, bool)
    alive[:50] = False  # dead rows never come back from either path
    q = vecs[10] * 0.5 + vecs[70] * 0.5
    q /= np.linalg.norm(q)
    a = vectors.DimVectors(store, [exact], alive).search(q, 10)
    b = vectors.DimVectors(store, [hnsw], alive).search(q, 10)
    assert a[0][0] == 70 and 10 not in a[0].tolist()
    assert len(set(a[0].tolist()) & set(b[0].tolist())) >= 8  # HNSW is approximate


def test_segments_survive_reopen_and_merge(tmp_path, monkeypatch):
    monkeypatch.setattr(vectors, "MAX_SEGMENTS", 3)
    col = Collection.create(tmp_path / "c", SCHEMA)
    nodes = make_nodes(40)
    for i in range(4):  # the 4th publish merges each dimension's segments into one
        col.add(nodes[i * 10 : (i + 1) * 10])
        col.publish()
    manifest = col.snapshot.manifest
    assert all(len(v) == 1 and v[0]["count"] == 40 for v in manifest["vectors"].values())
    fresh = Collection.open(tmp_path / "c")
    q = SearchRequest(query=nodes[7].text("title"), mode="dense", limit=40)
    assert fresh.search(q).uids == col.search(q).uids
    assert len(fresh.search(q).uids) == 40


def test_deleted_node_never_appears_in_any_lens(tmp_path, monkeypatch):
    monkeypatch.setattr(vectors, "MAX_SEGMENTS", 2)
    col = Collection.create(tmp_path / "c", SCHEMA)
    nodes = make_nodes(30)
    col.add(nodes)
    col.publish()
    target = nodes[3]
    col.delete([target.uid])
    col.add([Node(uid="other", dims={"title": "x", "body": "y"})])
    col.publish()
    col.add([Node(uid="more", dims={"title": "z", "body": "w"})])
    col.publish()  # merges: the dead row must not be carried over
    for mode in ("bm25", "dense", "hybrid", "planned"):
        res = col.search(SearchRequest(query=target.text("title"), mode=mode, limit=50))
        assert target.uid not in res.uids, mode
        for lens in res.diagnostics["lenses"]:
            assert lens["hits"] <= 31
    seg_keys = [
        np.load(col.store.object_path(e["keys_obj"])).tolist()
        for e in col.snapshot.manifest["vectors"]["title"]
    ]
    alive = col.snapshot.nodes.alive
    assert all(alive[k] for keys in seg_keys for k in keys)  # merged: no dead row kept


def test_encoder_is_recorded_and_must_match(tmp_path):
    col = Collection.create(tmp_path / "c", SCHEMA)
    spec = col.snapshot.manifest["encoder"]
    assert spec == {"name": "sentence-transformers/all-MiniLM-L6-v2", "dim": 384}
    Collection.open(tmp_path / "c", encoder=spec["name"])
    with pytest.raises(EncoderError, match="built with encoder"):
        Collection.open(tmp_path / "c", encoder="sentence-transformers:other-model")


def test_unknown_encoder_is_a_clear_error(tmp_path):
    with pytest.raises(EncoderError, match="unknown encoder"):
        Collection.create(tmp_path / "c", SCHEMA, encoder="no-such-encoder")
