"""The sharded view answers as the one collection: BM25 exactly, dense and hybrid top-10."""

from __future__ import annotations

import numpy as np
import pytest

from cogitave import Collection
from cogitave.distributed.facade import ShardedCollection
from cogitave.distributed.shard import ShardServer
from cogitave.distributed.view import ShardedView, ShardUnavailable, merge_samples
from cogitave.expand import analysis
from cogitave.query.types import SearchRequest
from cogitave.schema import WHOLE


@pytest.fixture(scope="module")
def views(built):
    out = {n: ShardedView.open_local(built[n]) for n in (0, 2, 4)}
    yield out
    for v in out.values():
        v.close()


@pytest.fixture(scope="module")
def one(built):
    return Collection.open(built[1])


@pytest.mark.parametrize("n", [2, 4])
def test_bm25_equals_one_collection(one, views, scifact_slice, n) -> None:
    snap, view = one.snapshot, views[n]
    for q in scifact_slice[1]:
        stems = analysis.stems(q)
        a_ids, a_sc = snap.bm25(WHOLE, stems, 100)
        b_ids, b_sc = view.bm25(WHOLE, stems, 100)
        assert len(a_ids) == len(b_ids)
        np.testing.assert_allclose(b_sc, a_sc, rtol=2e-6)
        a_uids = [snap.uid_of(int(i)) for i in a_ids]
        b_uids = [view.uid_of(int(i)) for i in b_ids]
        # the same node at every rank whose score is not tied with a neighbour's
        for i in range(min(10, len(a_sc))):
            near = np.abs(a_sc - a_sc[i]) <= a_sc[i] * 1e-5
            if near.sum() == 1:
                assert a_uids[i] == b_uids[i], (q, i)


@pytest.mark.parametrize("n", [2, 4])
def test_weighted_bm25_equals_one_collection(one, views, n) -> None:
    """The planner's anchor weights (function words at a share) score alike on shards."""
    snap, view = one.snapshot, views[n]
    stems = analysis.stems("what is the effect of vitamin d on the bones")
    weights = {s: 0.25 for s in analysis.stems("what is the of on")}
    a_ids, a_sc = snap.bm25(WHOLE, stems, 50, weights=weights)
    b_ids, b_sc = view.bm25(WHOLE, stems, 50, weights=weights)
    np.testing.assert_allclose(b_sc, a_sc, rtol=2e-6)
    assert not np.allclose(a_sc, snap.bm25(WHOLE, stems, 50)[1], rtol=1e-3)
    above = a_sc > a_sc[9] * (1 + 1e-5)
    assert {snap.uid_of(int(i)) for i in a_ids[above]} == {
        view.uid_of(int(i)) for i in b_ids[: int(above.sum())]
    }


@pytest.mark.parametrize("n", [2, 4])
def test_phrase_bm25_equals_one_collection(one, views, n) -> None:
    """The anchor's compounds and phrases (matched whole, idf summed over their words)
    score alike on shards, and change the scores."""
    snap, view = one.snapshot, views[n]
    stems = analysis.stems("t-cell response to vitamin d in blood cells")
    phrases = {("t", "cell"): 1.0, ("vitamin", "d"): 2.0, ("blood", "cell"): 0.5}
    a_ids, a_sc = snap.bm25(WHOLE, stems, 50, phrases=phrases)
    b_ids, b_sc = view.bm25(WHOLE, stems, 50, phrases=phrases)
    np.testing.assert_allclose(b_sc, a_sc, rtol=2e-6)
    assert not np.allclose(a_sc, snap.bm25(WHOLE, stems, 50)[1], rtol=1e-3)
    above = a_sc > a_sc[9] * (1 + 1e-5)
    assert {snap.uid_of(int(i)) for i in a_ids[above]} == {
        view.uid_of(int(i)) for i in b_ids[: int(above.sum())]
    }


def test_bm25_per_dimension(one, views) -> None:
    snap, view = one.snapshot, views[4]
    stems = analysis.stems("cancer cells")
    a = snap.bm25("title", stems, 50)
    b = view.bm25("title", stems, 50)
    np.testing.assert_allclose(b[1], a[1], rtol=2e-6)
    # short titles tie often: compare the nodes strictly above the 10th score
    above = a[1] > a[1][9] * (1 + 1e-5)
    assert above.any()
    assert {snap.uid_of(int(i)) for i in a[0][above]} == {
        view.uid_of(int(i)) for i in b[0][: int(above.sum())]
    }


def test_shard_rescoring_reproduces_tantivy(built) -> None:
    """With the shard's own statistics, the re-scoring gives tantivy's scores: the formula,
    the field length quantisation and the token total are tantivy's."""
    view = ShardedView.open_local(built[2])
    server = view.clients[0].server
    from cogitave.distributed.bm25 import GlobalTerms

    stems = analysis.stems("vitamin d deficiency and bone density in elderly women")
    local = server.field_stats(WHOLE)
    glob = GlobalTerms(local, dict(zip(stems, server.doc_freqs(WHOLE, stems), strict=True)))
    ids, scores = server.bm25(WHOLE, stems, 40, None, glob)
    t_ids, t_scores = server.bm25_local(WHOLE, stems, 40)
    np.testing.assert_allclose(scores, t_scores, rtol=2e-6)
    assert set(ids[:10].tolist()) == set(t_ids[:10].tolist())
    # a phrase's frequency read back from its score gives tantivy's phrase score
    phrases = {("vitamin", "d"): 1.0, ("bone", "densiti"): 1.5}
    ids, scores = server.bm25(WHOLE, stems, 40, None, glob, None, phrases)
    t_ids, t_scores = server.bm25_local(WHOLE, stems, 40, None, None, phrases)
    np.testing.assert_allclose(scores, t_scores, rtol=2e-6)
    assert not np.allclose(t_scores, server.bm25_local(WHOLE, stems, 40)[1], rtol=1e-3)


@pytest.mark.parametrize("n", [2, 4])
@pytest.mark.parametrize("mode", ["bm25", "dense", "hybrid"])
def test_top10_agreement(views, scifact_slice, n, mode) -> None:
    """Against one shard, the same top 10 in the same order for every query."""
    queries = scifact_slice[1]
    for q in queries:
        a = ShardedCollection(views[0]).search(SearchRequest(query=q, mode=mode, limit=10)).uids
        b = ShardedCollection(views[n]).search(SearchRequest(query=q, mode=mode, limit=10)).uids
        assert a == b, (q, mode, n)


@pytest.mark.parametrize("mode", ["bm25", "dense", "hybrid"])
def test_top10_agreement_with_the_engine(one, views, scifact_slice, mode) -> None:
    """Against the engine on an ordinary collection: the same top 10 except where BM25 ties
    are ordered differently (tantivy orders equal scores by document address, a view by uid;
    in hybrid a reordered tie can move a hit across the RRF ranks)."""
    queries = scifact_slice[1]
    same = sum(
        one.search(SearchRequest(query=q, mode=mode, limit=10)).uids
        == ShardedCollection(views[4]).search(SearchRequest(query=q, mode=mode, limit=10)).uids
        for q in queries
    )
    assert same / len(queries) >= (0.99 if mode != "hybrid" else 0.97), (mode, same)


def test_stats_are_the_sum(one, views) -> None:
    a, b = one.snapshot.stats, views[4].stats
    assert a.n_nodes == b.n_nodes
    for d in ("title", "text"):
        assert a.dim(d).n_docs == b.dim(d).n_docs
        assert a.dim(d).stems == b.dim(d).stems
        assert a.dim(d).bigram("vitamin", "d") == b.dim(d).bigram("vitamin", "d")


def test_ids_nodes_masks_vectors(one, views) -> None:
    snap, view = one.snapshot, views[4]
    uids = sorted(snap.nodes.nid_of)[:50]
    ids = np.asarray([view.id_of(u) for u in uids], np.uint64)
    assert [view.uid_of(int(i)) for i in ids] == uids
    assert view.uid_rank(ids).tolist() == sorted(view.uid_rank(ids).tolist())  # uid order
    assert [n.uid for n in view.nodes_of(ids.tolist())] == uids
    assert view.id_of("no-such-uid") is None
    nids = np.asarray([snap.id_of(u) for u in uids], np.uint64)
    a_vec, a_has = snap.vectors_of(WHOLE, nids)
    b_vec, b_has = view.vectors_of(WHOLE, ids)
    np.testing.assert_array_equal(a_vec, b_vec)
    assert a_has.tolist() == b_has.tolist()
    toks = analysis.stems("cancer")
    assert (
        snap.match("text", "text", toks, nids).tolist()
        == view.match("text", "text", toks, ids).tolist()
    )
    assert view.vector_count(WHOLE) == snap.vector_count(WHOLE)
    assert view.vector_dims() == snap.vector_dims()


def test_dense_sample_is_proportional() -> None:
    big = np.zeros((2048, 2), np.float32)  # a full sample of a 30,000-row shard
    small = np.ones((500, 2), np.float32)  # every row of a 500-row shard
    merged = merge_samples([(big, 30000), (small, 500)])
    assert len(merged) == 2048
    assert int(merged[:, 0].sum()) == round(2048 * 500 / 30500)  # rows from the small shard
    assert len(merge_samples([(big[:100], 100), (small[:50], 50)])) == 150  # all of both


class _Dead:
    index = 1
    label = "shard 1 (shard-001)"

    def submit(self, method, *args):
        return None

    def result(self, handle):
        raise ShardUnavailable("actor died")


def test_dead_shard_names_it_or_flags_partial(built) -> None:
    base = ShardedView.open_local(built[2])
    live = base.clients[0]
    strict = ShardedView.__new__(ShardedView)
    strict.__dict__.update(base.__dict__)
    strict.clients = [live, _Dead()]
    with pytest.raises(ShardUnavailable, match=r"shard 1 \(shard-001\)"):
        strict.bm25(WHOLE, ["cancer"], 10)
    strict.allow_partial = True
    ids, _ = strict.bm25(WHOLE, ["cancer"], 10)
    assert strict.take_missing() == [1]
    assert len(ids) and all(int(i) & 0xFF == 0 for i in ids)
    res = ShardedCollection(strict).search(SearchRequest(query="cancer", mode="bm25"))
    assert res.diagnostics["partial"] is True
    assert res.diagnostics["missing_shards"] == ["shard 1 (shard-001)"]
    full = ShardedCollection(base).search(SearchRequest(query="cancer", mode="bm25"))
    assert full.diagnostics["partial"] is False
    assert isinstance(live.server, ShardServer)


def test_planned_runs_the_one_engine_on_shards(views, one, scifact_slice) -> None:
    """The engine's stages read the port, so a sharded view runs the whole planner: the same
    top 10 as the ordinary collection (every shard here is under the exact-search size)."""
    _, queries = scifact_slice
    texts = queries[:25]
    for n in (2, 4):
        same = 0
        for q in texts:
            req = SearchRequest(query=q, mode="planned", limit=10)
            got = ShardedCollection(views[n]).search(req)
            assert got.diagnostics["plan"] is not None and got.diagnostics["shards"] == n
            assert got.diagnostics["smoothing"]["applied"] is True  # vectors through the view
            same += got.uids == one.search(req).uids
        assert same >= 0.96 * len(texts), (n, same)
