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
    assert fused.ranks[IDS["X"]] == {"A": 1, "B": 2}
    assert fused.ranks[IDS["W"]] == {"B": 3}


@pytest.mark.parametrize("lens_order", [("A", "B"), ("B", "A")])
def test_ties_break_by_uid_whatever_the_lens_order(lens_order):
    lenses = {"A": lens("A", "YX"), "B": lens("B", "XY")}  # X and Y tie exactly
    fused = rrf([lenses[n] for n in lens_order], lambda n: NAMES[n])
    assert [NAMES[n] for n in fused.nids.tolist()] == ["X", "Y"]


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
