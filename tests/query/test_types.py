"""The JSON of a hit and of a response: every field, nothing shared with the hit."""

from __future__ import annotations

from dataclasses import fields

from cogitave.query.types import Hit, SearchResponse


def _hit(**kw: object) -> Hit:
    base: dict[str, object] = {
        "uid": "docs:a",
        "rank": 1,
        "score": 0.5,
        "kind": "section",
        "title": "A",
        "snippet": "about a",
        "lenses": {"bm25": 1, "dense": 3},
        "url": "https://x.test/a",
        "path": "a.md",
        "breadcrumb": ("Guide", "A"),
    }
    return Hit(**{**base, **kw})  # type: ignore[arg-type]


def test_hit_json_names_every_field() -> None:
    d = _hit(group=("docs:b",), library="lib@1.0").to_dict()
    assert set(d) == {f.name for f in fields(Hit)}
    assert d["breadcrumb"] == ["Guide", "A"] and d["group"] == ["docs:b"]
    assert d["library"] == "lib@1.0" and d["lenses"] == {"bm25": 1, "dense": 3}


def test_hit_json_leaves_out_an_empty_group_and_library() -> None:
    d = _hit().to_dict()
    assert "group" not in d and "library" not in d
    assert set(d) == {f.name for f in fields(Hit)} - {"group", "library"}


def test_hit_json_is_a_copy() -> None:
    lenses = {"bm25": 1}
    d = _hit(lenses=lenses).to_dict()
    d["lenses"]["bm25"] = 9
    assert lenses == {"bm25": 1}


def test_response_json_takes_the_hits_given() -> None:
    res = SearchResponse((_hit(),), "root1", {"total_ms": 1.0})
    assert res.to_dict()["results"] == [_hit().to_dict()]
    made = [{"uid": "docs:a", "provenance": {}}]
    assert res.to_dict(made)["results"] is made
