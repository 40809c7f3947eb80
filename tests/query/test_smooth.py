"""Neighbour smoothing: a BM25 hit's score plus the mean score of its nearest candidates."""

from __future__ import annotations

import numpy as np
import pytest

from cogitave import SearchRequest
from cogitave.config import Settings, Smoothing
from cogitave.errors import SchemaError
from cogitave.query.lens import LensResult
from cogitave.query.smooth import nearest, smooth
from cogitave.schema import WHOLE
from tests.query import catalogue


class Rows:
    """The two reads smoothing makes of a port: stored vectors and the uid tie-break."""

    def __init__(self, vectors: dict[int, list[float] | None]) -> None:
        self.vectors = vectors

    def vectors_of(self, dim: str, ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        assert dim == WHOLE
        rows = [self.vectors[int(i)] for i in ids]
        has = np.array([r is not None for r in rows])
        mat = np.array([r if r is not None else [0.0, 0.0, 0.0] for r in rows], np.float32)
        norms = np.linalg.norm(mat, axis=1, keepdims=True)
        return mat / np.where(norms > 0, norms, 1.0), has

    def uid_rank(self, ids: np.ndarray) -> np.ndarray:
        return np.asarray(ids, np.int64)


def lens(scores: list[float]) -> LensResult:
    ids = np.arange(len(scores), dtype=np.uint64)
    return LensResult("bm25", "bm25", ids, np.asarray(scores, np.float32), depth=len(scores))


# 0: a strong match alone among weak ones; 1: a slightly weaker match among strong ones.
X, Y = [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]
NEAR_Y, NEAR_X = [0.1, 1.0, 0.0], [1.0, 0.2, 0.0]
SCORES = [3.0, 2.8, 2.0, 2.0, 0.1, 0.1]
VECTORS = {0: X, 1: Y, 2: NEAR_Y, 3: NEAR_Y, 4: NEAR_X, 5: NEAR_X}


def test_each_score_adds_weight_times_the_mean_of_its_nearest_candidates() -> None:
    got, info = smooth(Rows(VECTORS), lens(SCORES), Smoothing(neighbours=2, weight=1.0), 6)
    assert info["applied"] is True and info["neighbours"] == 2
    want = {0: 3.0 + 0.1, 1: 2.8 + 2.0, 2: 2.0 + (2.0 + 2.8) / 2, 3: 2.0 + (2.0 + 2.8) / 2}
    by_id = dict(zip(got.nids.tolist(), got.scores.tolist(), strict=True))
    for i, s in want.items():
        assert by_id[i] == pytest.approx(s, rel=1e-6)
    assert got.nids.tolist()[:2] == [1, 2], "the match among like hits passes the lone one"
    assert info["top10_replaced"] == 0  # same six ids, another order


def test_weight_zero_and_one_neighbour_are_the_formula_too() -> None:
    got, _ = smooth(Rows(VECTORS), lens(SCORES), Smoothing(neighbours=1, weight=0.0), 6)
    assert got.nids.tolist() == [0, 1, 2, 3, 4, 5] and got.scores.tolist() == pytest.approx(SCORES)


def test_hits_past_the_candidates_keep_their_scores_behind_the_smoothed_ones() -> None:
    scores = [*SCORES, 0.05, 0.01]
    vectors = {**VECTORS, 6: Y, 7: Y}
    got, info = smooth(
        Rows(vectors), lens(scores), Smoothing(neighbours=2, weight=1.0, candidates=6), 8
    )
    assert info["candidates"] == 6
    assert got.nids.tolist()[-2:] == [6, 7] and got.scores.tolist()[-2:] == pytest.approx(
        [0.05, 0.01]
    )
    cut, _ = smooth(
        Rows(vectors), lens(scores), Smoothing(neighbours=2, weight=1.0, candidates=6), 3
    )
    assert len(cut) == 3 and cut.depth == 3


def test_a_hit_without_a_vector_keeps_its_score_and_is_nobody_s_neighbour() -> None:
    vectors = {**VECTORS, 2: None}
    got, _ = smooth(Rows(vectors), lens(SCORES), Smoothing(neighbours=2, weight=1.0), 6)
    by_id = dict(zip(got.nids.tolist(), got.scores.tolist(), strict=True))
    assert by_id[2] == pytest.approx(2.0)
    assert by_id[1] == pytest.approx(2.8 + (2.0 + 0.1) / 2)  # 3, then a NEAR_X row


def test_too_few_candidates_are_left_alone_and_say_why() -> None:
    got, info = smooth(Rows(VECTORS), lens(SCORES[:3]), Smoothing(neighbours=5), 2)
    assert info == {"applied": False, "reason": "3 candidates", "neighbours": 5, "weight": 0.35,
                    "candidates": 3}  # fmt: skip
    assert got.nids.tolist() == [0, 1]


def test_nearest_are_the_most_alike_others_and_ties_go_to_the_earlier_row() -> None:
    rng = np.random.default_rng(3)
    vecs = rng.standard_normal((60, 8)).astype(np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    got = nearest(vecs, 5)
    sims = vecs @ vecs.T
    for i in range(60):
        others = [j for j in np.argsort(-sims[i], kind="stable").tolist() if j != i]
        assert got[i].tolist() == others[:5]
    # rows 1, 2 and 3 are the same vector: row 0 is as near to each, the earlier ones win
    dup = np.array([[1, 0], [0.6, 0.8], [0.6, 0.8], [0.6, 0.8], [0, 1]], np.float32)
    assert nearest(dup, 2)[0].tolist() == [1, 2]
    assert nearest(dup, 2)[3].tolist() == [1, 2]  # never itself


@pytest.mark.parametrize(
    "bad", [{"neighbours": 0}, {"neighbours": 51}, {"weight": -1}, {"candidates": 1}]
)
def test_bad_settings_are_refused(bad: dict) -> None:
    with pytest.raises(SchemaError, match=r"\[smoothing\]"):
        Smoothing(**bad)


@pytest.fixture(scope="module")
def cat(tmp_path_factory):
    return catalogue.build(
        tmp_path_factory.mktemp("sm") / "c", encoder="default", settings=Settings(lexicon="none")
    )


def test_planned_smooths_its_bm25_anchor_over_the_stored_vectors(cat) -> None:
    snap = cat.snapshot
    stems = ["red", "leather", "boot"]
    nids, scores = snap.bm25(WHOLE, stems, 200)
    raw = LensResult("bm25", "bm25", nids, scores, depth=200)
    got, info = smooth(snap, raw, Smoothing(neighbours=3, weight=0.5), 100)
    mat, has = snap.vectors_of(WHOLE, nids)
    assert has.all() and info["applied"] is True
    sims = mat @ mat.T
    np.fill_diagonal(sims, -np.inf)
    for i, nid in enumerate(nids.tolist()):
        near = np.argsort(-sims[i], kind="stable")[:3]
        want = scores[i] + 0.5 * scores[near].mean()
        assert got.scores[got.nids.tolist().index(nid)] == pytest.approx(want, rel=1e-5)


def test_search_reports_smoothing_and_the_setting_turns_it_off(cat) -> None:
    res = cat.search(SearchRequest(query="red leather boots", limit=10))
    sm = res.diagnostics["smoothing"]
    assert sm["applied"] is True and sm["neighbours"] == 5 and sm["weight"] == 0.35
    off = cat.engine().__class__(cat.snapshot, Settings(lexicon="none").with_sets(
        ["smoothing.enabled=false"]))  # fmt: skip
    res = off.search(SearchRequest(query="red leather boots", limit=10))
    assert res.diagnostics["smoothing"] == {"applied": False, "reason": "off"}
    plain = cat.search(SearchRequest(query="red leather boots", limit=10, mode="hybrid"))
    assert "smoothing" not in plain.diagnostics, "hybrid stays plain RRF"


def test_a_collection_without_vectors_is_not_smoothed(tmp_path) -> None:
    col = catalogue.build(tmp_path / "bm25-only")
    res = col.search(SearchRequest(query="red leather boots", limit=10))
    assert res.diagnostics["smoothing"] == {"applied": False, "reason": "no vectors"}
    assert res.results, "BM25 alone still answers"
