"""The BM25 anchor scores a question's function words at a fraction of their weight.

A function word's df says how rare it is in the corpus, not whether a document is about it:
in a collection of abstracts "what" and "must" are rare, so at full weight a question's
function words pull the few abstracts that hold them above the ones about its subject.
"""

from __future__ import annotations

import numpy as np
import pytest

from cogitave import Collection, Node, SearchRequest
from cogitave.config import Anchor, Settings
from cogitave.errors import SchemaError
from cogitave.expand import analysis
from cogitave.query.prism import anchor_weights
from cogitave.schema import WHOLE, Dimension, Schema

SCHEMA = Schema((Dimension("title", "semantic"), Dimension("text", "semantic")))
ABSTRACTS = {
    "cone": ("Drag of a cone", "drag of a slender cone in supersonic flow"),
    "wing": ("Wing loads", "what must be known of the loads when a wing flutters"),
    "plate": ("Flat plates", "skin friction drag of a flat plate"),
    "shell": ("Thin shells", "buckling of cylinders under axial load"),
    "jet": ("Jet noise", "noise of a jet at high speed"),
}
QUERY = "what must be known of the drag of a cone"


@pytest.fixture(scope="module")
def col(tmp_path_factory):
    c = Collection.create(
        tmp_path_factory.mktemp("anchor") / "c",
        SCHEMA,
        encoder=None,
        settings=Settings(lexicon="none"),
    )
    c.add(Node(uid, dims={"title": t, "text": x}) for uid, (t, x) in ABSTRACTS.items())
    c.publish()
    return c


def engine(col, weight: float):
    sets = [f"anchor.function_word_weight={weight}"]
    return col.engine().__class__(col.snapshot, Settings(lexicon="none").with_sets(sets))


def test_function_words_of_a_question_are_down_weighted() -> None:
    toks = analysis.surface("what are the loads on a wing")
    got = anchor_weights(toks, 0.25)
    assert got == {analysis.stem(t): 0.25 for t in ("what", "are", "the", "on", "a")}


def test_a_query_of_function_words_alone_keeps_full_weights() -> None:
    assert anchor_weights(analysis.surface("what is it"), 0.25) == {}
    assert anchor_weights(analysis.surface("what wing"), 1.0) == {}


def test_a_content_word_sharing_the_stem_keeps_it_whole() -> None:
    # "wills" is no function word, and stems as "will" does
    assert analysis.stem("wills") == analysis.stem("will")
    assert analysis.stem("will") not in anchor_weights(["will", "wills", "what"], 0.25)


def test_a_function_word_the_user_marks_keeps_its_weight(col) -> None:
    in_ = analysis.stem("in")

    def weights(query: str) -> dict[str, float]:
        return col.search(SearchRequest(query=query, limit=3)).diagnostics["plan"]["anchors"][
            "weights"
        ]

    assert in_ in weights("cone in flow")
    for q in ("cone +in flow", 'cone "in" flow'):
        assert in_ not in weights(q), q
    # a repeated word is emphatic, but repeating "of" in a long question marks nothing
    assert analysis.stem("of") in weights("drag of a cone of revolution")


def test_a_weighted_stem_scores_that_share_of_its_bm25(col) -> None:
    snap = col.snapshot
    full = snap.bm25(WHOLE, ["what"], 10)
    part = snap.bm25(WHOLE, ["what"], 10, weights={"what": 0.25})
    assert full[0].tolist() == part[0].tolist()
    np.testing.assert_allclose(part[1], 0.25 * full[1], rtol=1e-5)


def test_the_question_finds_its_subject_not_its_function_words(col) -> None:
    at_full = engine(col, 1.0).search(SearchRequest(query=QUERY, limit=3))
    assert at_full.uids[0] == "wing", "the premise: full weights rank the function words"
    res = col.search(SearchRequest(query=QUERY, limit=3))
    assert res.uids[0] == "cone"
    weights = res.diagnostics["plan"]["anchors"]["weights"]
    assert weights[analysis.stem("what")] == 0.25 and analysis.stem("drag") not in weights


def test_weight_zero_leaves_the_function_words_out(col) -> None:
    res = engine(col, 0.0).search(SearchRequest(query="what wing", limit=5))
    assert res.diagnostics["plan"]["anchors"]["weights"] == {}
    assert res.uids == ["wing"]
    plain = col.search(SearchRequest(query=QUERY, limit=3, mode="bm25"))
    assert plain.uids[0] == "wing", "the plain systems keep plain BM25"


def test_the_weight_is_a_share() -> None:
    with pytest.raises(SchemaError, match=r"\[anchor\]"):
        Anchor(function_word_weight=1.5)
