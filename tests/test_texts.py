"""A node's texts: one pass over the node's text, one text per facet; the schema check."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from cogitave import Node
from cogitave.schema import WHOLE, Dimension, Schema
from cogitave.texts import (
    CLIP_CHARS,
    CONTEXT,
    CONTEXT_WEIGHT,
    DEFAULT_TEXTS,
    HISTORY,
    LEAN,
    PLAIN,
    UNEMBEDDED_KINDS,
    check_node,
    clip,
    embed_texts,
    mixed_context,
    texts_recipe,
    vector_dims,
    whole_text,
)
from cogitave.texts import MIXED as MIXED_RECIPE

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
    assert col.snapshot.manifest.encoder["texts"] == DEFAULT_TEXTS == MIXED_RECIPE
    assert texts_recipe({"name": "x"}) == PLAIN  # a root made before recipes: plain texts
    with pytest.raises(EncoderError, match="recipe 'context-v9'"):
        texts_recipe({"name": "x", "texts": "context-v9"})


# -- the lean recipe: what ranking does not use is not embedded -------------------------------
DOCS = Schema((Dimension("title", "semantic"), Dimension("body", "semantic")))


def _long_section(words: int) -> Node:
    body = " ".join(f"word{i}" for i in range(words))
    return replace(_section(), dims={"title": "Assemble the parts", "body": body})


@pytest.mark.parametrize("kind", sorted(CLIP_CHARS))
def test_the_lean_recipe_reads_the_start_of_a_long_documentation_node(kind: str) -> None:
    node = replace(_long_section(2000), kind=kind)
    context = embed_texts(node, DOCS, CONTEXT)[WHOLE]
    lean = embed_texts(node, DOCS, LEAN)[WHOLE]
    ctx, _, own = lean.partition("\n")
    assert ctx == "Tutorial › Your first gadget"
    full = whole_text(node, DOCS)
    assert len(own) <= CLIP_CHARS[kind] < len(full)
    assert full.startswith(own) and full[len(own)] == " "  # cut at a word's end
    assert own.startswith("Assemble the parts\n")  # the title is read first, never cut
    assert len(lean) < len(context)


def test_the_lean_recipe_leaves_short_nodes_and_other_kinds_as_context_does() -> None:
    short = _section()
    assert embed_texts(short, DOCS, LEAN) == embed_texts(short, DOCS, CONTEXT)
    abstract = replace(_long_section(2000), kind="node")  # a record, not a docs node
    assert embed_texts(abstract, DOCS, LEAN) == embed_texts(abstract, DOCS, CONTEXT)


@pytest.mark.parametrize("kind", sorted(UNEMBEDDED_KINDS))
def test_the_lean_recipe_gives_hidden_kinds_no_vector(kind: str) -> None:
    node = replace(_section(), kind=kind)
    assert embed_texts(node, DOCS, LEAN) == {}
    assert embed_texts(node, DOCS, CONTEXT)


def test_clip_cuts_at_the_last_space_in_the_second_half_else_at_the_limit() -> None:
    assert clip("short", 10) == "short"
    assert clip("aaaa bbbb cccc", 11) == "aaaa bbbb"
    assert clip("a " + "b" * 20, 10) == "a " + "b" * 8  # the only space is too early
    assert clip("x" * 30, 10) == "x" * 10


def test_a_lean_root_embeds_fewer_and_shorter_texts_and_still_finds_them(tmp_path) -> None:
    from cogitave import Collection
    from cogitave.distributed import hashed
    from cogitave.query.types import SearchRequest

    col = Collection.create(tmp_path / "c", DOCS, encoder=hashed.register())
    assert col.snapshot.manifest.encoder["texts"] == DEFAULT_TEXTS == MIXED_RECIPE
    hidden = replace(_section(), uid="src/app.py", kind=sorted(UNEMBEDDED_KINDS)[0])
    col.add([_long_section(400), hidden])
    col.publish()
    port = col.port()
    assert port.vector_count(WHOLE) == 1  # the hidden kind has no vector
    got = col.search(SearchRequest(query="word350", mode="bm25", include_kinds=(hidden.kind,)))
    assert got.uids[0] == "tutorial/first#assemble"  # BM25 reads the whole text


def test_a_root_made_with_an_older_recipe_embeds_new_nodes_by_it(tmp_path, monkeypatch) -> None:
    from cogitave import Collection
    from cogitave.distributed import hashed

    name = hashed.register()
    monkeypatch.setattr("cogitave.publish.DEFAULT_TEXTS", CONTEXT)
    col = Collection.create(tmp_path / "c", DOCS, encoder=name)
    monkeypatch.undo()
    node = _long_section(400)
    col.add([node])
    col.publish()
    assert col.snapshot.manifest.encoder["texts"] == CONTEXT
    port = col.port()
    stored, _ = port.vectors_of(WHOLE, np.arange(1, dtype=np.int64))
    want = hashed.HashedBowEncoder().encode([embed_texts(node, DOCS, CONTEXT)[WHOLE]])
    np.testing.assert_allclose(stored[0], want[0], atol=1e-6)
    lean = hashed.HashedBowEncoder().encode([embed_texts(node, DOCS, LEAN)[WHOLE]])
    assert not np.allclose(stored[0], lean[0], atol=1e-3)


# -- the history recipe: a site's history embedded as pages alone ----------------------------
def _history(kind: str, **meta: object) -> Node:
    return Node(
        uid=f"release-notes#{kind}",
        kind=kind,
        dims={"title": "0.100.0", "body": "Fixes: a crash when the body is empty."},
        meta={"path": "docs/release-notes.md", "breadcrumb": ["Release Notes", "0.100.0"], **meta},
    )


@pytest.mark.parametrize("kind", ["section", "code_sample", "api_entry"])
def test_the_history_recipe_gives_a_history_pages_parts_no_vector(kind: str) -> None:
    node = _history(kind)
    assert embed_texts(node, DOCS, HISTORY) == {}
    assert embed_texts(node, DOCS, LEAN)  # context-v2 embeds them
    dated = replace(_section(), uid="blog/2022/03/08/upgrade#steps", meta={"breadcrumb": ["Blog"]})
    assert embed_texts(dated, DOCS, HISTORY) == {}  # a dated path: a blog post


def test_the_history_recipe_keeps_the_history_pages_own_vector_and_the_rest() -> None:
    page = replace(
        _history("page"),
        uid="release-notes",
        dims={"title": "Release Notes", "body": "All changes."},
    )
    assert embed_texts(page, DOCS, HISTORY) == embed_texts(page, DOCS, LEAN)
    titled = Node(uid="whats", kind="page", dims={"title": "What's new in 2.0", "body": "x"})
    assert embed_texts(titled, DOCS, HISTORY)  # a page is embedded whatever its title
    guide = _section()
    assert embed_texts(guide, DOCS, HISTORY) == embed_texts(guide, DOCS, LEAN)


def test_a_history_root_finds_a_history_section_by_its_words(tmp_path) -> None:
    from cogitave import Collection
    from cogitave.distributed import hashed
    from cogitave.query.types import SearchRequest

    col = Collection.create(tmp_path / "c", DOCS, encoder=hashed.register())
    col.add([_history("section"), _section()])
    col.publish()
    assert col.port().vector_count(WHOLE) == 1  # the guide section alone
    got = col.search(SearchRequest(query="crash empty body changelog"))
    assert "release-notes#section" in got.uids


def test_a_context_v2_root_keeps_embedding_history_sections(tmp_path, monkeypatch) -> None:
    from cogitave import Collection
    from cogitave.distributed import hashed

    monkeypatch.setattr("cogitave.publish.DEFAULT_TEXTS", LEAN)
    col = Collection.create(tmp_path / "c", DOCS, encoder=hashed.register())
    monkeypatch.undo()
    col.add([_history("section")])
    col.publish()
    assert col.snapshot.manifest.encoder["texts"] == LEAN
    assert col.port().vector_count(WHOLE) == 1


# -- the mixed recipe: a node's place embedded apart and mixed into its vector ----------------
def test_the_mixed_recipe_sends_the_own_text_and_the_place_apart() -> None:
    node = _long_section(2000)
    own = embed_texts(node, DOCS, MIXED_RECIPE)[WHOLE]
    assert f"Tutorial › Your first gadget\n{own}" == embed_texts(node, DOCS, HISTORY)[WHOLE]
    assert mixed_context(node, MIXED_RECIPE) == "Tutorial › Your first gadget"
    assert mixed_context(node, HISTORY) == ""  # the other recipes read it in the text
    bare = Node(uid="x", kind="page", dims={"title": "X", "body": "text"})
    assert mixed_context(bare, MIXED_RECIPE) == ""
    for hidden in (replace(node, kind=sorted(UNEMBEDDED_KINDS)[0]), _history("section")):
        assert embed_texts(hidden, DOCS, MIXED_RECIPE) == {}  # as context-v3: no vector


def test_a_mixed_root_stores_the_own_vector_plus_its_place(tmp_path) -> None:
    from cogitave import Collection
    from cogitave.distributed import hashed
    from cogitave.expand.embed import l2_normalize, register_encoder

    sent: list[str] = []

    class Counting(hashed.HashedBowEncoder):
        name = "counting-bow-64"

        def encode(self, texts, **kw):  # type: ignore[no-untyped-def]
            sent.extend(texts)
            return super().encode(texts, **kw)

    register_encoder(Counting.name, Counting)
    col = Collection.create(tmp_path / "c", DOCS, encoder=Counting.name)
    assert col.snapshot.manifest.encoder["texts"] == MIXED_RECIPE
    first, second = _section(), replace(_long_section(50), uid="tutorial/first#test")
    bare = Node(uid="x", kind="page", dims={"title": "X", "body": "text"})
    col.add([first, second, bare])
    col.publish()
    place = "Tutorial › Your first gadget"
    assert sent.count(place) == 1  # a page's sections share one encoding of their place
    assert not any(t.startswith(place + "\n") for t in sent)  # never read in the text
    enc = hashed.HashedBowEncoder()
    port = col.port()
    for node in (first, second, bare):
        nid = port.id_of(node.uid)
        stored, _ = port.vectors_of(WHOLE, np.asarray([nid], np.int64))
        own = enc.encode([embed_texts(node, DOCS, MIXED_RECIPE)[WHOLE]])
        mixed = l2_normalize(own + CONTEXT_WEIGHT * enc.encode([place]))
        want = mixed if node is not bare else own
        np.testing.assert_allclose(stored[0], want[0], atol=1e-6)
