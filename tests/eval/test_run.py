"""Running judged queries: a query past the request's bounds is cut as a user would cut it."""

from __future__ import annotations

from cogitave.eval.run import fit_query
from cogitave.query.types import MAX_QUERY_CHARS, MAX_QUERY_TERMS, SearchRequest


def test_a_long_query_keeps_its_first_words_and_is_accepted() -> None:
    text = " ".join(f"w{i}," for i in range(MAX_QUERY_TERMS + 40))
    fitted = fit_query(text)
    assert fitted.split()[-1] == f"w{MAX_QUERY_TERMS - 1}"
    assert text.startswith(fitted)
    SearchRequest(query=fitted)  # within every bound: not refused


def test_a_short_query_is_unchanged_and_characters_are_bounded() -> None:
    assert fit_query("vitamin d and bone density") == "vitamin d and bone density"
    assert len(fit_query("x" * (MAX_QUERY_CHARS + 10))) == MAX_QUERY_CHARS
