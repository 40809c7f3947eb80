"""The query syntax: operators, and text that only looks like one."""

from __future__ import annotations

from cogitave.query.syntax import parse

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
    assert [t.text for t in p.positive] == ["patients", "boots"]
    assert [t.emphatic for t in p.positive] == [False, True]


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
