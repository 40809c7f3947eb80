"""RRF: the spec's worked example, attribution, weights, and deterministic ties."""

from __future__ import annotations

import numpy as np
import pytest

from cogitave.query.fuse import RRF_K, rrf
from cogitave.query.lens import LensResult

IDS = {"X": 1, "Y": 2, "Z": 3, "W": 4}
NAMES = {v: k for k, v in IDS.items()}


def lens(name: str, order: str, **kw) -> LensResult:
    nids = np.asarray([IDS[c] for c in order], np.uint64)
    return LensResult(name, "bm25", nids, np.zeros(len(nids), np.float32), **kw)


def test_spec_worked_example():
    fused = rrf([lens("A", "XYZ"), lens("B", "ZXW")], lambda n: NAMES[n])
    assert RRF_K == 60
    assert [NAMES[n] for n in fused.nids.tolist()] == ["X", "Z", "Y", "W"]
    assert fused.scores.round(5).tolist() == [0.03252, 0.03227, 0.01613, 0.01587]


def test_attribution_records_every_lens_rank():
    fused = rrf([lens("A", "XYZ"), lens("B", "ZXW")], lambda n: NAMES[n])
    page = np.asarray([IDS["X"], IDS["W"], 99], np.uint64)
    assert fused.ranks_for(page) == [{"A": 1, "B": 2}, {"B": 3}, {}]


@pytest.mark.parametrize(("lens_order", "want"), [(("A", "B"), "YX"), (("B", "A"), "XY")])
def test_ties_go_to_the_earlier_lens(lens_order, want):
    lenses = {"A": lens("A", "YX"), "B": lens("B", "XY")}  # X and Y tie exactly
    fused = rrf([lenses[n] for n in lens_order], lambda n: NAMES[n])
    assert "".join(NAMES[n] for n in fused.nids.tolist()) == want


def test_a_hit_of_the_first_lens_beats_one_of_the_second_at_the_same_rank():
    fused = rrf([lens("bm25", "ZX"), lens("dense", "YW")], lambda n: NAMES[n])
    assert "".join(NAMES[n] for n in fused.nids.tolist()) == "ZYXW"  # by uid alone: YZWX


def test_ties_inside_a_binary_lens_fall_to_the_uid():
    fused = rrf([lens("exact", "WZYX", info={"tied": True})], lambda n: NAMES[n])
    assert "".join(NAMES[n] for n in fused.nids.tolist()) == "WXYZ"


def test_weights_and_tied_binary_lens():
    fused = rrf(
        [lens("A", "XY"), lens("C", "YX", weight=0.5), lens("E", "WZ", info={"tied": True})],
        lambda n: NAMES[n],
    )
    s = dict(zip(fused.nids.tolist(), fused.scores.tolist(), strict=True))
    assert s[IDS["X"]] == pytest.approx(1 / 61 + 0.5 / 62)
    assert s[IDS["W"]] == s[IDS["Z"]] == pytest.approx(1 / 61)


def test_adding_a_lens_needs_no_recalibration():
    two = rrf([lens("A", "XYZ"), lens("B", "ZXW")], lambda n: NAMES[n])
    three = rrf([lens("A", "XYZ"), lens("B", "ZXW"), lens("C", "W")], lambda n: NAMES[n])
    s2 = dict(zip(two.nids.tolist(), two.scores.tolist(), strict=True))
    s3 = dict(zip(three.nids.tolist(), three.scores.tolist(), strict=True))
    assert s3[IDS["W"]] == pytest.approx(s2[IDS["W"]] + 1 / 61)
    assert s3[IDS["X"]] == s2[IDS["X"]]


def _reference_rrf(lenses, uid_of, k=RRF_K):
    """The formula written out with dicts (what the array version must equal)."""
    scores: dict[int, float] = {}
    first: dict[int, tuple[int, int]] = {}  # the earliest lens an id is in, its rank there
    for j, ls in enumerate(x for x in lenses if len(x)):
        for i, nid in enumerate(ls.nids.tolist(), 1):
            rank = 1 if ls.info.get("tied") else i
            scores[nid] = scores.get(nid, 0.0) + ls.weight / (k + rank)
            first.setdefault(nid, (j, rank))
    order = sorted(scores, key=lambda n: (-round(scores[n], 12), first[n], uid_of(n)))
    return order, [scores[n] for n in order]


@pytest.mark.parametrize("seed", range(20))
def test_array_fusion_equals_the_formula(seed):
    rng = np.random.default_rng(seed)
    pool = rng.choice(10_000, size=300, replace=False).astype(np.uint64)
    lenses = []
    for j in range(int(rng.integers(1, 7))):
        picked = rng.choice(pool, size=int(rng.integers(0, 120)), replace=False)
        lenses.append(
            LensResult(
                f"L{j}",
                "bm25",
                picked,
                np.zeros(len(picked), np.float32),
                weight=float(rng.choice([1.0, 0.5, 0.25])),
                info={"tied": True} if rng.random() < 0.2 else {},
            )
        )
    uid_of = lambda n: f"u{(n * 7919) % 10_007:05d}"  # noqa: E731  (uid order != nid order)
    fused = rrf(lenses, uid_of)
    order, scores = _reference_rrf(lenses, uid_of)
    assert fused.nids.tolist() == order
    # the per-root integer uid ranks give the very same order
    uid_rank = np.empty(10_000, np.int64)
    uid_rank[sorted(range(10_000), key=uid_of)] = np.arange(10_000)
    assert rrf(lenses, uid_of, uid_rank=uid_rank).nids.tolist() == order
    assert fused.scores.tolist() == pytest.approx(scores, rel=1e-12)
    page = []
    for nid in order[:10]:
        want = {}
        for ls in lenses:
            hits = ls.nids.tolist()
            if nid in hits:
                want[ls.name] = 1 if ls.info.get("tied") else hits.index(nid) + 1
        page.append(want)
    assert fused.ranks_for(np.asarray(order[:10], np.uint64)) == page


def test_no_lenses_fuse_to_nothing():
    fused = rrf([], lambda n: str(n))
    assert len(fused.nids) == 0 and len(fused.scores) == 0


def scored(name: str, order: str, scores: list[float], **kw) -> LensResult:
    nids = np.asarray([IDS[c] for c in order], np.uint64)
    return LensResult(name, "bm25", nids, np.asarray(scores, np.float32), **kw)


def test_score_evidence_adds_the_normalised_score_at_the_rank_one_scale():
    a = scored("A", "XYZ", [9.0, 5.0, 1.0])  # span 8: 1, 0.5, 0
    b = scored("B", "ZXW", [0.8, 0.7, 0.6], weight=0.5)  # span max(0.2, 0.8 / 2): 1, .75, .5
    fused = rrf([a, b], lambda n: NAMES[n], score_weight=2.0)
    s = {NAMES[n]: v for n, v in zip(fused.nids.tolist(), fused.scores.tolist(), strict=True)}
    assert s["X"] == pytest.approx(1 / 61 + 2 * 1 / 61 + 0.5 / 62 + 0.5 * 2 * 0.75 / 61)
    assert s["Y"] == pytest.approx(1 / 62 + 2 * 0.5 / 61)
    assert s["Z"] == pytest.approx(1 / 63 + 0.5 / 61 + 0.5 * 2 * 1 / 61)
    assert s["W"] == pytest.approx(0.5 / 63 + 0.5 * 2 * 0.5 / 61)


def test_score_evidence_keeps_a_runaway_winner_that_rank_fusion_flattens():
    # BM25's X is far ahead of the rest; dense has Y a hair ahead of X
    bm25 = scored("bm25", "XYZ", [30.0, 6.0, 5.0])
    dense = scored("dense", "YXZ", [0.71, 0.70, 0.40])
    plain = rrf([bm25, dense], lambda n: NAMES[n])
    with_scores = rrf([bm25, dense], lambda n: NAMES[n], score_weight=1.0)
    assert plain.scores[0] == plain.scores[1]  # X and Y tie on ranks alone (BM25 decides)
    assert [NAMES[n] for n in with_scores.nids.tolist()][:2] == ["X", "Y"]
    assert with_scores.scores[0] > with_scores.scores[1]


def test_flat_and_tied_lenses_add_no_score_evidence():
    flat = scored("F", "XY", [2.0, 2.0])
    tied = scored("T", "ZW", [0.0, 0.0], info={"tied": True})
    fused = rrf([flat, tied], lambda n: NAMES[n], score_weight=1.0)
    s = {NAMES[n]: v for n, v in zip(fused.nids.tolist(), fused.scores.tolist(), strict=True)}
    assert s["X"] == pytest.approx(1 / 61)
    assert s["Y"] == pytest.approx(1 / 62)
    assert s["Z"] == s["W"] == pytest.approx(1 / 61)


def test_a_nearly_flat_lens_is_not_stretched_into_noise():
    near = scored("N", "XYZ", [3.2, 3.1, 3.0])  # span max(0.2, 3.2 / 2) = 1.6
    fused = rrf([near], lambda n: NAMES[n], score_weight=1.0)
    s = {NAMES[n]: v for n, v in zip(fused.nids.tolist(), fused.scores.tolist(), strict=True)}
    assert s["Z"] == pytest.approx(1 / 63 + (1 - 0.2 / 1.6) / 61)
    assert s["Y"] == pytest.approx(1 / 62 + (1 - 0.1 / 1.6) / 61)  # min-max would say 0.5


def test_zero_score_weight_is_the_plain_formula():
    a = scored("A", "XYZ", [9.0, 5.0, 1.0])
    b = scored("B", "ZXW", [0.8, 0.7, 0.6])
    plain = rrf([a, b], lambda n: NAMES[n])
    zero = rrf([a, b], lambda n: NAMES[n], score_weight=0.0)
    assert plain.nids.tolist() == zero.nids.tolist()
    assert plain.scores.tolist() == zero.scores.tolist()


def test_fusion_settings_validate_and_round_trip():
    from cogitave.config import Fusion, Settings
    from cogitave.errors import SchemaError

    s = Settings.from_dict({"fusion": {"score_weight": 0.0}})
    assert s.fusion == Fusion(score_weight=0.0)
    assert Settings.from_dict(s.to_dict()) == s
    assert Settings.from_dict({}).fusion.score_weight == 0.5  # roots written before it
    with pytest.raises(SchemaError):
        Settings.from_dict({"fusion": {"score_weight": -1}})
