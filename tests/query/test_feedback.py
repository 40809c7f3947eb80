"""The feedback lens: the dense anchor asked again with the query moved toward the fused top."""

from __future__ import annotations

import numpy as np
import pytest

from cogitave import SearchRequest
from cogitave.config import Feedback, Settings
from cogitave.query.candidates import CandidateVectors
from cogitave.query.feedback import feedback_query
from cogitave.query.ranked import Ranked
from cogitave.schema import WHOLE
from tests.query import catalogue


@pytest.fixture(scope="module")
def cat(tmp_path_factory):
    return catalogue.build(
        tmp_path_factory.mktemp("fb") / "c",
        encoder="default",
        settings=Settings(lexicon="none", feedback=Feedback(enabled=True)),
    )


def test_feedback_query_is_the_normalised_sum_with_the_top_centroid(cat):
    snap = cat.snapshot
    ids = snap.nodes.live_nids()[:8]
    ranked = Ranked(ids, np.linspace(1, 0, len(ids)))
    q = cat.engine().embed(["warm wool"])[0]
    got, info = feedback_query(q, ranked, CandidateVectors(snap, ids), 5, 0.5)
    mat, _ = snap.vectors_of(WHOLE, ids[:5])
    want = q + 0.5 * mat.mean(axis=0)
    assert info["applied"] is True
    assert np.allclose(got, want / np.linalg.norm(want), atol=1e-6)


def test_too_few_candidates_leave_the_query_alone(cat):
    snap = cat.snapshot
    ids = snap.nodes.live_nids()[:3]
    q = cat.engine().embed(["warm wool"])[0]
    got, info = feedback_query(q, Ranked(ids, np.ones(3)), CandidateVectors(snap, ids), 5, 0.5)
    assert got is None and info["applied"] is False


def test_planned_search_replaces_the_dense_anchor_and_says_so(cat):
    res = cat.search(SearchRequest(query="warm wool scarf", limit=10))
    fb = res.diagnostics["feedback"]
    assert fb["applied"] is True and fb["top"] == 5
    assert [x["name"] for x in res.diagnostics["lenses"]].count("dense") == 1
    assert "feedback" in res.diagnostics["timings_ms"]


def test_feedback_is_opt_in(tmp_path):
    assert Settings().feedback.enabled is False
    off = catalogue.build(tmp_path / "c", encoder="default", settings=Settings(lexicon="none"))
    res = off.search(SearchRequest(query="warm wool scarf", limit=10))
    assert res.diagnostics["feedback"] == {"applied": False, "reason": "off"}
    assert [x["name"] for x in res.diagnostics["lenses"]].count("dense") == 1


def test_plain_systems_have_no_feedback(cat):
    res = cat.search(SearchRequest(query="warm wool scarf", limit=10, mode="hybrid"))
    assert "feedback" not in res.diagnostics


def test_only_the_planner_fuses_with_score_evidence(cat):
    eng = cat.engine()
    for mode, want in (("planned", 0.5), ("hybrid", 0.0), ("bm25", 0.0)):
        res = eng.search(SearchRequest(query="warm wool socks", mode=mode))
        assert res.diagnostics["fusion"]["score_weight"] == want, mode
