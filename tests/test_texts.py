"""A node's texts: one pass over the node's text, one text per facet; the schema check."""

from __future__ import annotations

import pytest

from cogitave import Node
from cogitave.schema import WHOLE, Dimension, Schema
from cogitave.texts import (
    CONTEXT,
    DEFAULT_TEXTS,
    PLAIN,
    check_node,
    embed_texts,
    texts_recipe,
    vector_dims,
    whole_text,
)

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


# -- the text recipe: a node embedded with its place ----------------------------------------
def _section() -> Node:
    return Node(
        uid="tutorial/first#assemble",
        kind="section",
        dims={"title": "Assemble the parts", "body": "Put three parts together."},
        meta={"breadcrumb": ["Tutorial", "Your first gadget", "Assemble the parts"]},
    )


def test_the_context_recipe_puts_the_breadcrumb_before_the_nodes_own_text():
    node = _section()
    schema = Schema((Dimension("title", "semantic"), Dimension("body", "semantic")))
    plain = embed_texts(node, schema)[WHOLE]
    placed = embed_texts(node, schema, CONTEXT)[WHOLE]
    assert placed == f"Tutorial › Your first gadget\n{plain}"  # its own title not repeated
    bare = Node(uid="x", kind="page", dims={"title": "X", "body": "text"})
    assert embed_texts(bare, schema, CONTEXT) == embed_texts(bare, schema)


def test_a_root_records_its_recipe_and_old_roots_keep_theirs(tmp_path):
    from cogitave import Collection
    from cogitave.distributed import hashed
    from cogitave.errors import EncoderError

    schema = Schema((Dimension("title", "semantic"), Dimension("body", "semantic")))
    col = Collection.create(tmp_path / "c", schema, encoder=hashed.register())
    assert col.snapshot.manifest.encoder["texts"] == DEFAULT_TEXTS == CONTEXT
    assert texts_recipe({"name": "x"}) == PLAIN  # a root made before recipes: plain texts
    with pytest.raises(EncoderError, match="recipe 'context-v9'"):
        texts_recipe({"name": "x", "texts": "context-v9"})
