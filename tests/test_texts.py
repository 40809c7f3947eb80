"""A node's texts: one pass over the node's text, one text per facet; the schema check."""

from __future__ import annotations

import pytest

from cogitave import Node
from cogitave.schema import WHOLE, Dimension, Schema
from cogitave.texts import check_node, embed_texts, vector_dims, whole_text

FIELDS = Schema((Dimension("title", "semantic"), Dimension("body", "semantic")))
FIELDS_BY_NAME = Schema((Dimension("text", "semantic"), Dimension("title", "semantic")))
MIXED = Schema(
    (
        Dimension("title", "semantic"),
        Dimension("body", "semantic"),
        Dimension("colour", "semantic", facet=True),
        Dimension("size", "exact"),
    )
)


def test_fields_share_one_vector_of_the_whole_text():
    node = Node("a", dims={"title": "Sorting", "body": "external runs"})
    assert embed_texts(node, FIELDS) == {WHOLE: "Sorting\nexternal runs"}
    assert vector_dims(FIELDS) == [WHOLE]


def test_a_facet_keeps_its_own_vector_and_is_part_of_the_whole_text():
    node = Node("a", dims={"title": "Boots", "body": "for walking", "colour": "red", "size": 42})
    assert embed_texts(node, MIXED) == {"colour": "red", WHOLE: "red\nBoots\nfor walking"}
    assert vector_dims(MIXED) == ["colour", WHOLE]


def test_without_fields_the_text_unit_is_all_semantic_text():
    facets = Schema(
        (Dimension("title", "semantic", facet=True), Dimension("m", "semantic", facet=True))
    )
    node = Node("a", dims={"title": "Boots", "m": "leather"})
    assert whole_text(node, facets) == "Boots\nleather"


def test_short_texts_come_first_so_truncation_never_drops_a_title():
    body = " ".join(["word"] * 400)
    node = Node("a", dims={"text": body, "title": "External sorting"})
    assert whole_text(node, FIELDS_BY_NAME).startswith("External sorting\n")
    node = Node("b", dims={"text": "short", "title": "A much longer title than the body"})
    assert whole_text(node, FIELDS_BY_NAME).startswith("short\n")


def test_empty_texts_are_not_sent():
    node = Node("a", dims={"colour": "  "})
    assert embed_texts(node, MIXED) == {}


def test_a_node_is_checked_against_the_schema():
    check_node(Node("a", dims={"title": "ok", "colour": "red"}), MIXED)
    with pytest.raises(ValueError, match="'weight' is not in the collection's schema"):
        check_node(Node("a", dims={"weight": 3}), MIXED)
    with pytest.raises(ValueError, match="'title' is semantic"):
        check_node(Node("a", dims={"title": 3}), MIXED)
