"""The query syntax: operators, and text that only looks like one."""

from __future__ import annotations

import pytest

from cogitave import Collection, Node, SearchRequest
from cogitave.config import Settings
from cogitave.query.syntax import parse, phrases
from cogitave.schema import Dimension, Schema

DIMS = {"title", "colour"}


def test_signed_numbers_are_numbers_not_operators() -> None:
    p = parse("E2F-1, -2, -3 TKO cells and +5 more", DIMS)
    assert p.excluded == ()
    assert {"2", "3", "5"} <= {t.text for t in p.positive}
    assert not any(t.emphatic for t in p.terms if t.text == "5")


def test_operators() -> None:
    p = parse('boots -cotton +red colour:blue "steel toe" title:x note:y', DIMS)
    assert p.excluded == ("cotton",)
    by = {t.text: t for t in p.terms}
    assert by["red"].emphatic and by["blue"].dim == "colour" and by["blue"].emphatic
    assert by["steel"].emphatic and by["toe"].emphatic
    assert by["note"].dim is None  # not a dimension: plain text
    assert not by["boots"].emphatic


def test_negation_and_repetition() -> None:
    p = parse("patients without diabetes boots boots", DIMS)
    assert p.negation_markers == ("without",)
    assert [t.text for t in p.positive] == ["patients", "diabetes", "boots"]
    assert [t.emphatic for t in p.positive] == [False, False, True]
    assert [t.negated for t in p.positive] == [False, True, False]


def test_command_line_flags_are_text_not_exclusions() -> None:
    for query, flag in (
        ("hugo server --port 1314", "port"),
        ("uvicorn main:app --reload", "reload"),
        ("what does hugo server -D do", "d"),
        ("docker run -p 8080:80 nginx", "p"),
    ):
        p = parse(query, DIMS)
        assert p.excluded == (), query
        assert flag in {t.text for t in p.positive}, query
    assert parse("jaguar -car -animal", DIMS).excluded == ("car", "animal")


def test_negation_words_keep_the_next_word_as_a_term() -> None:
    for query, word, marker in (
        ("TypeError: 'NoneType' object is not subscriptable", "subscriptable", "not"),
        ("ModuleNotFoundError: No module named 'x'", "module", "no"),
        ("non blocking io", "blocking", "non"),
        ("patients without diabetes", "diabetes", "without"),
    ):
        p = parse(query, DIMS)
        assert word in {t.text for t in p.positive}, query
        assert p.negation_markers == (marker,), query  # still disables the residual boost
        assert p.excluded == (), query
        assert marker not in {t.text for t in p.terms}, query
        assert word in p.plain.lower(), query


def test_exception_names_are_whole_words_not_dimension_prefixes() -> None:
    p = parse("ModuleNotFoundError: No module named 'x'", {"modulenotfounderror", *DIMS})
    assert p.terms[0].text == "modulenotfounderror" and p.terms[0].dim is None
    p = parse("TypeError: 'NoneType' object", DIMS)
    assert [t.text for t in p.terms] == ["typeerror", "nonetype", "object"]


def test_single_quoted_messages_are_phrases_apostrophes_are_not() -> None:
    assert phrases("KeyError: 'no such key' raised") == (("no", "such", "key"),)
    assert phrases("don't read the users' guide") == ()
    assert phrases("-'a b' c") == ()  # excluded, as a double-quoted one would be
    assert phrases('"read one row" by id') == (("read", "one", "row"),)  # unchanged
    p = parse("KeyError: 'no such key' raised", DIMS)  # a quoted word is text, not a marker
    assert p.negation_markers == () and not any(t.emphatic for t in p.terms)
    assert [t.text for t in p.positive] == ["keyerror", "no", "such", "key", "raised"]


ERRORS = {
    "subscript": (
        "Indexing None",
        "TypeError: 'NoneType' object is not subscriptable: the value is None, so it has no "
        "items to index.",
    ),
    "call": (
        "Calling None",
        "TypeError: 'NoneType' object is not callable. A NoneType object, an object of type "
        "NoneType, is not a function; the TypeError names the object.",
    ),
    "iterate": (
        "Looping over None",
        "TypeError: 'NoneType' object is not iterable. The NoneType object is the object "
        "returned by a function without a return; a TypeError follows.",
    ),
    "modules": (
        "Importing",
        "ModuleNotFoundError: No module named 'x' means the module is not installed.",
    ),
    "finder": (
        "Import errors",
        "ModuleNotFoundError is raised by the import system; ModuleNotFoundError names 'x'.",
    ),
}


@pytest.fixture(scope="module")
def errors(tmp_path_factory: pytest.TempPathFactory) -> Collection:
    schema = Schema((Dimension("title", "semantic"), Dimension("text", "semantic")))
    col = Collection.create(
        tmp_path_factory.mktemp("errors") / "c", schema, encoder=None,
        settings=Settings(lexicon="none"),
    )  # fmt: skip
    col.add(Node(uid, dims={"title": t, "text": x}) for uid, (t, x) in ERRORS.items())
    col.publish()
    return col


@pytest.mark.parametrize(
    "query, want",
    [
        ("TypeError: 'NoneType' object is not subscriptable", "subscript"),
        ("ModuleNotFoundError: No module named 'x'", "modules"),
    ],
)
def test_a_pasted_error_message_finds_the_page_that_says_it(errors, query, want) -> None:
    res = errors.search(SearchRequest(query=query, limit=3, explain=True))
    assert res.uids[0] == want
    assert res.diagnostics["boost"]["applied"] is False  # the negation still disables it
