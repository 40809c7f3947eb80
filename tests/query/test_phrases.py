"""Compounds (``one-to-many``, ``async/await``) and quoted phrases are matched whole as well
as by their parts: the BM25 anchor adds the phrase's score when the words stand together, so
a page that says one-to-many outranks pages that say many-to-many and "one" elsewhere."""

from __future__ import annotations

import pytest

from cogitave import Collection, Node, SearchRequest
from cogitave.config import Anchor, Settings
from cogitave.errors import SchemaError
from cogitave.query.syntax import phrases
from cogitave.schema import Dimension, Schema

SCHEMA = Schema((Dimension("title", "semantic"), Dimension("text", "semantic")))
PAGES = {
    "many-to-many": (
        "Many-to-many relationships",
        "Many-to-many: one relationship, many rows, many teams, one table.",
    ),
    "many-to-many-extra": (
        "Many-to-many link model",
        "Many-to-many relationship: one link row, many fields, one model.",
    ),
    "one-to-many": (
        "Relationship attributes",
        "Declare the attributes of a model that point to the rows of another table through "
        "a foreign key column, and read them back from either side; a team has heroes in a "
        "one-to-many relationship, each hero has one team.",
    ),
    "select": ("Read data", "Select rows with a where clause."),
}


@pytest.fixture(scope="module")
def col(tmp_path_factory):
    c = Collection.create(
        tmp_path_factory.mktemp("phrases") / "c",
        SCHEMA,
        encoder=None,
        settings=Settings(lexicon="none"),
    )
    c.add(Node(uid, dims={"title": t, "text": x}) for uid, (t, x) in PAGES.items())
    c.publish()
    return c


def search(col: Collection, query: str, weight: float) -> list[str]:
    settings = Settings(lexicon="none").with_sets([f"anchor.phrase_weight={weight}"])
    eng = col.engine().__class__(col.snapshot, settings)
    return eng.search(SearchRequest(query=query, limit=4)).uids


@pytest.mark.parametrize(
    "query, want",
    [
        ("one-to-many relationship", [("one", "to", "mani")]),
        ('"read one row" by id', [("read", "one", "row")]),
        ("async/await and os.path.join", [("async", "await"), ("os", "path", "join")]),
        ("std::fs::read group_by_page", [("std", "fs", "read"), ("group", "by", "page")]),
        ("COVID-19 vaccine", [("covid", "19")]),
        ("-many-to-many one", []),  # excluded, not a phrase to match
        ('-"link table" one', []),
        ("hugo server --port 1314", []),  # a one-word flag is not a compound
        # a flag is a word, never an exclusion, as parse() reads it: its words still match
        ("uvicorn --root-path /api/v1", [("root", "path"), ("api", "v1")]),
        ('"single"', []),
    ],
)
def test_compounds_and_quoted_phrases_of_a_query(query, want) -> None:
    assert list(phrases(query)) == want


def test_a_compound_prefers_the_page_that_says_it(col) -> None:
    assert search(col, "one-to-many relationship", 0.5)[0] == "one-to-many"
    # by its parts alone, the pages saying "many" and "one" most win
    assert search(col, "one-to-many relationship", 0.0)[0] != "one-to-many"


def test_the_plan_names_its_phrases(col) -> None:
    res = col.search(SearchRequest(query='one-to-many "link table"', explain=True))
    got = res.diagnostics["plan"]["anchors"]["phrases"]
    assert got == {"one to mani": 0.5, "link tabl": 0.5}  # the default weight


def test_phrase_weight_is_bounded() -> None:
    with pytest.raises(SchemaError, match="phrase_weight"):
        Anchor(phrase_weight=-1)
    assert Settings().anchor.phrase_weight == 0.5
