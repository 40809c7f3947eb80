"""Presentation: snippet term offsets (the fast path equals the whole-word regex)."""

from __future__ import annotations

import random

import pytest

from cogitave import Node
from cogitave.query.present import snippet, term_positions, terms_pattern

WORDS = ["vitamin", "d", "in", "risk", "Risk", "elderly", "x_y", "c++", "naïve", "İstanbul", "ß"]
GLUE = [" ", "  ", ", ", ". ", "-", "(", ")", "_", "/", "\n"]


@pytest.mark.parametrize("seed", range(30))
def test_term_positions_equal_the_regex(seed: int) -> None:
    rng = random.Random(seed)
    text = "".join(rng.choice(WORDS) + rng.choice(GLUE) for _ in range(rng.randint(0, 60)))
    qterms = set(rng.sample(WORDS, rng.randint(1, 5)))
    pattern = terms_pattern(qterms)
    want = [m.start() for m in pattern.finditer(text)] if pattern else []
    assert term_positions(text, qterms) == want


def test_snippet_window_holds_the_most_terms() -> None:
    filler = "lorem ipsum dolor sit amet " * 30
    body = filler + "vitamin d deficiency raises the risk in elderly people " + filler
    node = Node(uid="a", dims={"title": "t", "body": body})
    got = snippet(node, ["title", "body"], {"vitamin", "risk", "elderly"})
    assert got.startswith("…") and got.endswith("…")
    assert "vitamin d deficiency raises the risk in elderly" in got
    assert len(got) <= 240 + 2
