"""Vector segments: survive reopen and merges, the tiered merge policy and compaction, deleted
nodes never come back, one encoder."""

from __future__ import annotations

import numpy as np
import pytest

from cogitave import Collection, Node, SearchRequest
from cogitave.errors import EncoderError
from cogitave.store import vectors
from cogitave.store.roots import RootStore
from cogitave.store.verify import verify_collection
from tests.conftest import SCHEMA, make_nodes


def _unit(x: np.ndarray) -> np.ndarray:
    return (x / np.linalg.norm(x, axis=1, keepdims=True)).astype(np.float32)


def _graph_segment(tmp_path, monkeypatch, n: int, d: int, *, seed: int):  # type: ignore[no-untyped-def]
    """A store and one segment of ``n`` random unit rows, written with an HNSW graph (the
    exact-search bound lowered to 100 rows while it is built), and the generator to draw
    queries from."""
    store = RootStore(tmp_path / "c")
    store.init()
    rng = np.random.default_rng(seed)
    vecs = _unit(rng.standard_normal((n, d)).astype(np.float32))
    monkeypatch.setattr(vectors, "EXACT_BELOW", 100)
    entry = vectors.build_segment(store, np.arange(n, dtype=np.uint64), vecs)
    return store, vecs, entry, rng


def _keys(col: Collection, entry: dict) -> np.ndarray:
    return np.load(col.store.object_path(entry["keys_obj"]))


def _hnsw_objs(col: Collection) -> dict[str, list[str]]:
    return {
        d: [e["hnsw_obj"] for e in v if e.get("hnsw_obj")]
        for d, v in col.snapshot.manifest.vectors.items()
    }


def _check_layout(col: Collection) -> None:
    """At most MAX_SMALL exact and MAX_LARGE HNSW segments per dimension, every live node's
    vector exactly once, no row twice."""
    alive = col.snapshot.nodes.alive
    live = set(np.flatnonzero(alive).tolist())
    for dim, entries in col.snapshot.manifest.vectors.items():
        small = [e for e in entries if not e.get("hnsw_obj")]
        assert len(small) <= vectors.MAX_SMALL, dim
        assert len(entries) - len(small) <= vectors.MAX_LARGE, dim
        keys = np.concatenate([_keys(col, e) for e in entries]).astype(np.int64)
        assert len(set(keys.tolist())) == len(keys), dim
        assert set(keys[alive[keys]].tolist()) == live, dim


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


def test_hnsw_candidates_are_rescored_exactly(tmp_path, monkeypatch):
    """The graph's half-precision distances never reach a caller: every similarity is the
    float32 product an exact segment computes (to the last bits BLAS may order differently),
    over OVERSAMPLE times as many candidates from the graph as results asked."""
    store, vecs, entry, rng = _graph_segment(tmp_path, monkeypatch, 3000, 48, seed=1)
    dim = vectors.DimVectors(store, [entry], np.ones(3000, bool))
    seg = dim.segs[0]
    asked: list[int] = []
    real = seg.hnsw.search

    class Spy:
        def search(self, q, count):  # type: ignore[no-untyped-def]
            asked.append(count)
            return real(q, count)

    seg.hnsw = Spy()
    for q in _unit(rng.standard_normal((20, 48)).astype(np.float32)):
        got, sims = dim.search(q, 10)
        assert np.allclose(sims, vecs[got.astype(np.int64)] @ q, rtol=0, atol=1e-6)
        f16 = vecs.astype(np.float16).astype(np.float32)[got.astype(np.int64)] @ q
        assert not np.array_equal(sims, f16)  # what the graph alone would have said
        assert list(sims) == sorted(sims, reverse=True)
    assert set(asked) == {vectors.OVERSAMPLE * 10}


def test_segments_survive_reopen_and_merge(tmp_path, monkeypatch):
    monkeypatch.setattr(vectors, "EXACT_BELOW", 8)
    monkeypatch.setattr(vectors, "MAX_LARGE", 1)
    col = Collection.create(tmp_path / "c", SCHEMA)
    nodes = make_nodes(40)
    for i in range(4):  # from the 2nd publish on, the new HNSW rows go into the first one
        col.add(nodes[i * 10 : (i + 1) * 10])
        col.publish()
    manifest = col.snapshot.manifest
    assert all(
        len(v) == 1 and v[0]["count"] == 40 and v[0].get("hnsw_obj")
        for v in manifest.vectors.values()
    )
    fresh = Collection.open(tmp_path / "c")
    q = SearchRequest(query=nodes[7].text("title"), mode="dense", limit=40)
    assert fresh.search(q).uids == col.search(q).uids
    # every row is in the one graph; HNSW is approximate (a 40-row graph built by parallel
    # inserts can leave a row unreachable), so nearly all come back
    assert len(fresh.search(q).uids) >= 36
    assert verify_collection(tmp_path / "c").ok


def test_deleted_node_never_appears_in_any_lens(tmp_path, monkeypatch):
    monkeypatch.setattr(vectors, "EXACT_BELOW", 8)
    monkeypatch.setattr(vectors, "MAX_SMALL", 1)
    monkeypatch.setattr(vectors, "MAX_DEAD", 0.01)  # one dead row of 30 rewrites the segment
    col = Collection.create(tmp_path / "c", SCHEMA)
    nodes = make_nodes(30)
    col.add(nodes)
    col.publish()
    target = nodes[3]
    col.delete([target.uid])
    col.add([Node(uid="other", dims={"title": "x", "body": "y"})])
    col.publish()
    col.add([Node(uid="more", dims={"title": "z", "body": "w"})])
    col.publish()  # merges the two small segments: the dead row must not be carried over
    for mode in ("bm25", "dense", "hybrid", "planned"):
        res = col.search(SearchRequest(query=target.text("title"), mode=mode, limit=50))
        assert target.uid not in res.uids, mode
        for lens in res.diagnostics["lenses"]:
            assert lens["hits"] <= 31
    entries = col.snapshot.manifest.vectors["_all"]  # the text unit's vectors
    assert [e["count"] for e in entries] == [29, 2]
    alive = col.snapshot.nodes.alive
    assert all(alive[k] for e in entries for k in _keys(col, e).tolist())  # no dead row kept


def test_policy_bounds_segments_over_many_publishes(tmp_path, monkeypatch):
    monkeypatch.setattr(vectors, "EXACT_BELOW", 6)
    monkeypatch.setattr(vectors, "MAX_SMALL", 2)
    monkeypatch.setattr(vectors, "MAX_LARGE", 2)
    col = Collection.create(tmp_path / "c", SCHEMA)
    nodes = make_nodes(48)
    gone: list[str] = []
    at = 0
    for i, size in enumerate([7, 1, 2, 1, 6, 1, 1, 9, 2, 1, 8, 3, 1, 5]):
        col.add(nodes[at : at + size])
        at += size
        if i % 4 == 3:  # replace one older node, delete another
            old = nodes[at - 6]
            col.add([Node(uid=old.uid, kind="doc", dims={"title": f"new {i}", "body": "fresh"})])
            col.delete([nodes[at - 5].uid])
            gone.append(nodes[at - 5].uid)
        col.publish()
        _check_layout(col)
    assert len(col) == 48 - len(gone)
    for uid in gone:
        title = next(n for n in nodes if n.uid == uid).text("title")
        for mode in ("dense", "planned"):
            res = col.search(SearchRequest(query=title, mode=mode, limit=60))
            assert uid not in res.uids, mode
    # Each dimension's search agrees with an exact ranking of the live vectors.
    live = np.flatnonzero(col.snapshot.nodes.alive)
    for dim, dv in col.snapshot.vectors.items():
        mat, has = dv.vectors_of(live.tolist())
        assert has.all(), dim
        for q in mat[:5]:
            nids, _ = dv.search(q, 10)
            exact = live[np.argsort(-(mat @ q), kind="stable")[:10]]
            assert len(set(nids.tolist()) & set(exact.tolist())) >= 9, dim
    assert verify_collection(tmp_path / "c").ok


def test_incremental_merge_matches_exact_search(tmp_path, monkeypatch):
    monkeypatch.setattr(vectors, "EXACT_BELOW", 100)
    monkeypatch.setattr(vectors, "MAX_LARGE", 1)
    store = RootStore(tmp_path / "c")
    store.init()
    rng = np.random.default_rng(1)
    vecs = _unit(rng.standard_normal((1200, 32)))
    keys = np.arange(1200, dtype=np.uint64)
    alive = np.ones(1200, bool)
    big = vectors.build_segment(store, keys[:800], vecs[:800])
    mid = vectors.build_segment(store, keys[800:1000], vecs[800:1000])
    alive[rng.choice(800, 60, replace=False)] = False  # 7.5% of the largest: stays in its graph
    alive[800:820] = False  # dead rows of a merged segment are not carried over
    out = vectors.tier(store, [big, mid], alive, (keys[1000:], vecs[1000:]))
    assert len(out) == 1 and out[0]["hnsw_obj"] != big["hnsw_obj"]
    got = np.load(store.object_path(out[0]["keys_obj"]))
    assert got.tolist() == list(range(800)) + list(range(820, 1200))  # old rows, then added
    dv = vectors.DimVectors(store, out, alive)
    seg = dv.segs[0]
    assert seg.dead == 60 and dv.count == 1200 - 80
    assert seg.hnsw is not None and len(seg.hnsw) == out[0]["count"] == 1180
    probe = np.asarray([5, 799, 900, 1199], np.uint64)
    # the graph holds the rows in half precision (HNSW_DTYPE), the .npy exactly
    assert np.allclose(seg.hnsw.get(probe), vecs[probe.astype(np.int64)], atol=1e-3)
    assert np.array_equal(dv.vectors_of(probe.tolist())[0], vecs[probe.astype(np.int64)])
    live = np.flatnonzero(alive)
    recalls = []
    for q in _unit(rng.standard_normal((50, 32))):
        nids, _ = dv.search(q, 10)
        assert len(nids) == 10 and alive[nids.astype(np.int64)].all()
        exact = live[np.argsort(-(vecs[live] @ q))[:10]]
        recalls.append(len(set(nids.tolist()) & set(exact.tolist())) / 10)
    assert np.mean(recalls) >= 0.9

    # Past MAX_DEAD of dead rows, the segment is rebuilt from its live rows.
    alive[:300] = False
    again = vectors.tier(store, out, alive)
    assert len(again) == 1 and again[0]["hnsw_obj"] != out[0]["hnsw_obj"]
    rebuilt = np.load(store.object_path(again[0]["keys_obj"]))
    assert rebuilt.tolist() == np.flatnonzero(alive).tolist()


def test_dead_neighbours_do_not_cost_result_slots(tmp_path, monkeypatch):
    monkeypatch.setattr(vectors, "EXACT_BELOW", 100)
    store = RootStore(tmp_path / "c")
    store.init()
    rng = np.random.default_rng(2)
    vecs = _unit(rng.standard_normal((800, 16)))
    seg = vectors.build_segment(store, np.arange(800, dtype=np.uint64), vecs)
    q = vecs[0]
    alive = np.ones(800, bool)
    alive[np.argsort(-(vecs @ q))[:150]] = False  # the query's whole neighbourhood is dead
    nids, sims = vectors.DimVectors(store, [seg], alive).search(q, 10)
    live = np.flatnonzero(alive)
    exact = live[np.argsort(-(vecs[live] @ q))[:10]]
    assert len(nids) == 10 and alive[nids.astype(np.int64)].all()
    assert len(set(nids.tolist()) & set(exact.tolist())) >= 9
    assert np.all(np.diff(sims) <= 1e-6)


def test_one_node_publish_does_not_rewrite_large_segments(tmp_path, monkeypatch):
    monkeypatch.setattr(vectors, "EXACT_BELOW", 8)
    col = Collection.create(tmp_path / "c", SCHEMA)
    nodes = make_nodes(33)
    col.add(nodes[:20])
    col.publish()
    col.add(nodes[20:30])
    col.publish()
    large = _hnsw_objs(col)
    assert all(len(v) == 2 for v in large.values())
    for node in nodes[30:]:
        col.add([node])
        col.publish()
        assert _hnsw_objs(col) == large
    for entries in col.snapshot.manifest.vectors.values():
        assert [e["count"] for e in entries] == [20, 10, 1, 1, 1]


def test_compact_leaves_one_segment_and_the_same_results(tmp_path, monkeypatch):
    monkeypatch.setattr(vectors, "EXACT_BELOW", 8)
    col = Collection.create(tmp_path / "c", SCHEMA)
    nodes = make_nodes(36)
    for chunk in (nodes[:20], nodes[20:30], nodes[30:33], nodes[33:]):
        col.add(chunk)
        col.publish()
    col.add([Node(uid=nodes[3].uid, kind="doc", dims={"title": "violet", "body": "new body"})])
    col.delete([nodes[5].uid])
    col.publish()  # the largest segment keeps the two dead rows inside its graph
    before_manifest = col.snapshot.manifest
    assert all(len(v) == 5 for v in before_manifest.vectors.values())
    queries = [nodes[5].text("title"), nodes[3].text("title"), nodes[12].text("title"), "violet"]
    modes = ("dense", "planned")

    def results(c: Collection) -> dict[tuple[str, str], list[str]]:
        return {
            (q, m): c.search(SearchRequest(query=q, mode=m, limit=20)).uids
            for q in queries
            for m in modes
        }

    before = results(col)
    assert not any(nodes[5].uid in uids for uids in before.values())
    first = col.root
    rid = col.compact()
    manifest = col.snapshot.manifest
    assert col.root == rid != first and manifest.parent == first
    alive = col.snapshot.nodes.alive
    for dim, entries in manifest.vectors.items():
        assert len(entries) == 1 and entries[0]["count"] == 35, dim
        assert alive[_keys(col, entries[0]).astype(np.int64)].all(), dim
    for key in ("lexical_files", "segments", "stats_obj", "graph"):
        assert getattr(manifest, key) == getattr(before_manifest, key), key
    assert manifest.node_count == 35
    assert results(col) == before
    assert results(Collection.open(tmp_path / "c")) == before
    again = col.compact()  # already one segment of live rows: nothing is rewritten
    assert col.snapshot.manifest.vectors == manifest.vectors and again != rid
    assert verify_collection(tmp_path / "c").ok


def test_compact_without_encoder(tmp_path):
    col = Collection.create(tmp_path / "c", SCHEMA, encoder=None)
    col.add(make_nodes(10))
    first = col.publish()
    before = col.snapshot.manifest
    assert col.compact() != first
    after = col.snapshot.manifest
    assert after.vectors == {} and after.lexical_files == before.lexical_files
    assert after.segments == before.segments and len(col) == 10


def test_encoder_is_recorded_and_must_match(tmp_path):
    col = Collection.create(tmp_path / "c", SCHEMA)
    spec = col.snapshot.manifest.encoder
    assert spec is not None and spec["name"] == "sentence-transformers/all-MiniLM-L6-v2"
    assert spec["dim"] == 384 and spec["pooling"] == "mean" and spec["max_length"] == 256
    Collection.open(tmp_path / "c", encoder=spec["name"])
    with pytest.raises(EncoderError, match="built with encoder"):
        Collection.open(tmp_path / "c", encoder="sentence-transformers:other-model")


def test_unknown_encoder_is_a_clear_error(tmp_path):
    with pytest.raises(EncoderError, match="unknown encoder"):
        Collection.create(tmp_path / "c", SCHEMA, encoder="no-such-encoder")


def test_a_small_segment_with_a_graph_is_searched_exactly(tmp_path, monkeypatch):
    """Under EXACT_BELOW rows exact search is as fast as the graph, so a graph written under
    an earlier, lower bound is not used: results equal exact search's, the graph is not asked."""
    store, vecs, entry, rng = _graph_segment(tmp_path, monkeypatch, 500, 32, seed=2)
    assert "hnsw_obj" in entry
    monkeypatch.setattr(vectors, "EXACT_BELOW", 1000)
    dim = vectors.DimVectors(store, [entry], np.ones(500, bool))

    class Refuse:
        def search(self, q, count):  # type: ignore[no-untyped-def]
            raise AssertionError("the graph was asked")

    dim.segs[0].hnsw = Refuse()
    for q in _unit(rng.standard_normal((10, 32)).astype(np.float32)):
        got, _ = dim.search(q, 20)
        assert got.tolist() == np.argsort(-(vecs @ q), kind="stable")[:20].tolist()


@pytest.mark.parametrize("share", [0.002, 0.03, 0.3, 0.9])
def test_a_filtered_graph_search_finds_k_allowed_rows(tmp_path, monkeypatch, share):
    """Whatever share of the rows a filter allows, a filtered search returns ``k`` allowed
    rows (all of them when fewer are allowed), nearly the exact top ``k`` among them: a few
    allowed rows are scored exactly, many are found through the graph, deepened as needed."""
    monkeypatch.setattr(vectors, "FILTER_EXACT_ROWS", 50)  # the graph path from 50 rows up
    store, vecs, entry, rng = _graph_segment(tmp_path, monkeypatch, 4000, 32, seed=4)
    allowed = rng.random(4000) < share
    dim = vectors.DimVectors(store, [entry], np.ones(4000, bool))
    ok = np.flatnonzero(allowed)
    recall = []
    for q in _unit(rng.standard_normal((15, 32)).astype(np.float32)):
        got, sims = dim.search(q, 20, allowed)
        assert len(got) == min(20, len(ok))
        assert allowed[got.astype(np.int64)].all()
        assert np.allclose(sims, vecs[got.astype(np.int64)] @ q, atol=1e-6)
        exact = ok[np.argsort(-(vecs[ok] @ q))[:20]]
        recall.append(len(set(got.tolist()) & set(exact.tolist())) / len(exact))
    assert np.mean(recall) >= 0.95
