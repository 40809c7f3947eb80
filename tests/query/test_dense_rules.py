"""Planner rules that need the dense legs: top-15% evidence, the residual boost, noise
channels, the embedding fallback. Run on the catalogue with the real encoder."""

from __future__ import annotations

import sys

import numpy as np
import pytest

from cogitave import SearchRequest
from cogitave.config import Routing, Settings
from cogitave.query.boost import residual_boost
from cogitave.query.coherence import dense_evidence
from cogitave.query.ranked import Ranked
from tests.query import catalogue


@pytest.fixture(scope="module")
def cat(tmp_path_factory):
    return catalogue.build(
        tmp_path_factory.mktemp("dense") / "c",
        encoder="default",
        settings=Settings(lexicon="default"),
    )


def search(col, q, **kw):
    return col.search(SearchRequest(query=q, limit=kw.pop("limit", 20), **kw))


def test_dense_top_share_threshold_is_the_sample_quantile(cat):
    snap = cat.snapshot
    q = cat.engine().embed(["scarlet"])[0]
    cands = snap.nodes.live_nids()
    mask, thr = dense_evidence(snap, "colour", q, cands, 0.15)
    sims = snap.vectors["colour"].sample() @ q
    assert thr == pytest.approx(float(np.quantile(sims, 0.85)))
    mat, _ = snap.vectors["colour"].vectors_of(cands.tolist())
    assert (mask == (mat @ q >= thr)).all()
    sims_c = mat @ q
    # the passing set is a top set (ties at the threshold pass together: five "red"s here)
    assert mask.sum() >= np.ceil(0.15 * len(cands))
    assert sims_c[mask].min() > sims_c[~mask].max()


def test_noise_adds_weighted_whole_query_channels(cat):
    clean = search(cat, "red boots")
    assert clean.diagnostics["plan"]["channels"] == []
    noisy = search(cat, "red boots qzxwv")
    chans = noisy.diagnostics["plan"]["channels"]
    assert chans and all(c["weight"] == pytest.approx(1 / 3, abs=1e-3) for c in chans)
    assert any(lens["kind"] == "channel" for lens in noisy.diagnostics["lenses"])


def test_zero_idf_query_routes_by_dense_similarity(cat):
    res = search(cat, "footwear")  # a real word with no hit anywhere: nothing routes by idf
    fb = res.diagnostics["plan"]["fallback"]
    assert fb is not None and fb["top1"]
    best = max(fb["top1"], key=fb["top1"].get)
    assert fb["dim"] == (best if fb["top1"][best] >= fb["threshold"] else None)


def test_fallback_is_gated_on_the_top_score(tmp_path):
    strict = catalogue.build(
        tmp_path / "c",
        encoder="default",
        settings=Settings(lexicon="default", routing=Routing(fallback_min_sim=0.99)),
    )
    fb = search(strict, "footwear").diagnostics["plan"]["fallback"]
    assert fb["dim"] is None and fb["threshold"] == 0.99


def test_residual_boost_needs_two_known_zero_hit_words_and_no_negation(cat):
    res = search(cat, "boots for rainy weather")
    assert res.diagnostics["plan"]["residual"] == "rainy weather"
    assert res.diagnostics["boost"]["applied"] is True
    one = search(cat, "boots for rainy")
    assert one.diagnostics["boost"]["applied"] is False
    scattered = search(cat, "rainy boots for weather")
    assert scattered.diagnostics["plan"]["residual"] is None
    assert scattered.diagnostics["boost"]["applied"] is False
    assert "scattered" in scattered.diagnostics["boost"]["reason"]
    neg = search(cat, "boots not for rainy weather")
    assert neg.diagnostics["boost"]["applied"] is False
    assert "negation" in neg.diagnostics["boost"]["reason"]


def test_residual_boost_formula(cat):
    snap = cat.snapshot
    nids = snap.nodes.live_nids()[:5]
    scores = np.array([0.05, 0.04, 0.03, 0.02, 0.01])
    phrase = cat.engine().embed(["wool"])[0]
    out, info = residual_boost(snap, Ranked(nids, scores), phrase, ["material", "title"], 4.0)
    assert info["applied"] is True
    best = np.max(
        [
            np.where(h, m @ phrase, -1)
            for m, h in (snap.vectors[d].vectors_of(nids.tolist()) for d in ("material", "title"))
        ],
        axis=0,
    )
    norm = (best - best.min()) / (best.max() - best.min())
    expect = scores * (1 + 4 * norm)
    assert np.allclose(np.sort(out.scores)[::-1], np.sort(expect)[::-1])
    assert out.nids[0] == nids[int(np.argmax(expect))]


def test_dense_lenses_on_workers_give_the_same_answer_as_in_turn(cat, monkeypatch):
    """Dense lenses run on worker threads beside the BM25 ones: the lens order, every lens's
    hits and the ranking are those of running them one after another."""
    from cogitave.query import lens

    queries = [
        "title:vitamin deficiency elderly",
        "heart attack aspirin risk in older people",
        "kous vu lais zoust cot",
        "+python asyncio timeout cancel",
    ]
    assert lens.run_lenses.__name__ == "run_lenses"
    threaded = [search(cat, q, mode="planned") for q in queries]

    def in_order(slots, before_dense):
        before_dense()
        return [job() for job in slots]

    monkeypatch.setattr(lens, "run_lenses", in_order)
    in_turn = [search(cat, q, mode="planned") for q in queries]
    for a, b in zip(threaded, in_turn, strict=True):
        assert [r.uid for r in a.results] == [r.uid for r in b.results]
        assert [r.lenses for r in a.results] == [r.lenses for r in b.results]
        la, lb = a.diagnostics["lenses"], b.diagnostics["lenses"]
        assert [(x["name"], x["hits"]) for x in la] == [(x["name"], x["hits"]) for x in lb]
    assert any(
        sum(x["kind"] in ("dense", "channel") for x in r.diagnostics["lenses"]) >= 2
        for r in threaded
    )


def _search_in_child(col, query, conn):
    conn.send(search(col, query, mode="planned").uids)


@pytest.mark.skipif(sys.platform != "linux", reason="fork start method")
def test_a_forked_child_searches_after_its_parent_did(cat):
    """The per-query worker pools belong to a process: a child forked after the parent ran
    searches (and so started pool threads) gets its own pools instead of waiting forever on
    its parent's threads, which do not exist in the child."""
    import multiprocessing

    search(cat, "heart attack aspirin risk in older people", mode="planned")
    query = "aspirin and the risk of a heart attack"  # not in the copied embedding cache
    ctx = multiprocessing.get_context("fork")
    parent, child = ctx.Pipe()
    proc = ctx.Process(target=_search_in_child, args=(cat, query, child))
    proc.start()
    try:
        assert parent.poll(60), "the forked child never answered"
        assert parent.recv() == search(cat, query, mode="planned").uids
    finally:
        proc.join(10)
        if proc.is_alive():
            proc.kill()


def test_a_whole_node_channel_reuses_the_dense_anchor(tmp_path):
    from cogitave import Collection
    from cogitave.query import legs, stages
    from cogitave.query.ranked import Ranked
    from cogitave.schema import WHOLE
    from tests.conftest import SCHEMA, make_nodes

    col = Collection.create(tmp_path / "c", SCHEMA, settings=Settings(lexicon="default"))
    col.add(make_nodes(80))
    col.publish()
    assert col.snapshot.vector_dims() == {WHOLE}  # fields of one text: whole-node vectors only
    eng = col.engine()
    req = SearchRequest(query="alpha gamma qzxwv", limit=20)
    lenses = {x["name"]: x for x in eng.search(req).diagnostics["lenses"]}
    chan = lenses[f"channel:{WHOLE}"]
    assert chan["kind"] == "channel" and chan["ms"] == 0.0  # no second search
    assert chan["weight"] == pytest.approx(1 / 3, abs=1e-3)
    # its hits are the anchor's, which are what a search of its own would give
    ctx = eng.context(req)
    stages.plan(ctx, Ranked.empty())
    prism = ctx.prism
    assert prism is not None
    got = {x.name: x for x in legs.planned(ctx, prism)}
    anchor, channel = got["dense"], got[f"channel:{WHOLE}"]
    assert channel.nids is anchor.nids and channel.depth == anchor.depth
    own, _ = col.snapshot.dense(WHOLE, eng.embed([prism.whole_text])[0], anchor.depth)
    assert own.tolist() == anchor.nids.tolist()
