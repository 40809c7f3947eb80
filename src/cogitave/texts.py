"""A node's texts: what each index and the encoder receive from one node, and the check that
its values fit the schema. One module, read by publish (the encoder's texts), the lexical
index and the forward term index (a dimension's text), the statistics (the same), and the
sharded build (the texts it embeds once for every shard).

- :func:`dim_texts`: per dimension, the text indexed: a semantic dimension's text, or an
  exact dimension's values followed by their derived enum tails;
- :func:`whole_text`: what the node's own vector embeds (all its semantic text, shortest
  first);
- :func:`embed_texts`: what one node sends to the encoder, by vector dimension, by the text
  recipe its root records (:func:`texts_recipe`: ``plain``; ``context-v1``: a node's place,
  its breadcrumb, before its own text; ``context-v2``: the same, without
  vectors for kinds searches hide and with a documentation node's own text clipped;
  ``context-v3``: a site's history embedded as pages alone; ``context-v4``: the breadcrumb
  embedded alone and mixed into the vector, :func:`mixed_context`);
- :func:`vector_dims`: the dimensions that have vectors;
- :func:`check_node`: a node's values against the schema (a ``ValueError`` naming what does
  not fit).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from cogitave.errors import EncoderError
from cogitave.history import is_history
from cogitave.nodes import Node, meta_str
from cogitave.schema import WHOLE, Schema

PLAIN = "plain"
"""The text recipe of roots that record none: a node's own text alone."""
CONTEXT = "context-v1"
"""A node's breadcrumb (its page and the sections above it) on a line before its own text:
a section, code sample or API entry is never judged alone. Chosen on the FastAPI, Hugo and
this project's question sets (planned, grouped by page; bench/RESULTS.md "Embedding texts"):
MRR 0.826 -> 0.841, 0.618 -> 0.660, 0.835 -> 0.846 against plain texts; context on short
nodes only (under 400 characters) gained less (0.840, 0.638, 0.833)."""
LEAN = "context-v2"
"""``context-v1`` without what ranking does not use: kinds hidden from searches by default
(:data:`UNEMBEDDED_KINDS`) get no vector, and a documentation node's own text is clipped
(:data:`CLIP_CHARS`) at a word boundary before the encoder sees it: MiniLM was trained on
128-token texts, and a section's vector read from its first ~130 tokens ranked as well or
better than from 256 (the BM25 index still holds every word). Chosen on the FastAPI, Hugo and
this project's question sets (planned, grouped by page; bench/RESULTS.md "Embedding texts"):
MRR 0.832 -> 0.839, 0.659 -> 0.684, 0.826 -> 0.828 against ``context-v1``, for 0.6x-0.8x the
encoder's work; clipping sections at 500 characters and code at 300 was cheaper still but lost
0.022 on this project's set."""
HISTORY = "context-v3"
"""``context-v2``, and a site's history (release notes, changelogs, blog posts, found as the
page-aware ranking finds them, :func:`cogitave.history.is_history`) embedded as pages
alone: its page node keeps a vector, its sections and code samples get none. The ranking
halves a history page's score unless the question asks for it, and one page vector still
brings it to a question about it; BM25 and the exact lenses hold every word of it. A release
history is long: FastAPI's release notes are 37% of the tokens its docs embed, Vite's blog
21%, React's 11%."""
MIXED = "context-v4"
"""``context-v3`` with the breadcrumb mixed into the vector instead of read in the text: the
encoder reads a node's own text alone, and its context line alone (once per distinct line: a
page's sections share it), and the node's vector is ``normalize(own + CONTEXT_WEIGHT x
context)``. Read in the text, a page title that is the site's own jargon ("Content roots")
pulled every section of the page toward it: this project's docs lost 0.078 dense MRR to
``plain`` texts. Mixed at :data:`CONTEXT_WEIGHT`, the place still separates look-alike
sections of different pages, and the own text keeps its voice. Chosen on the FastAPI, Hugo and
this project's question sets (planned, grouped by page; bench/RESULTS.md "Embedding texts"):
MRR 0.841 / 0.659 / 0.846 against ``context-v3``'s 0.841 / 0.662 / 0.802 and ``plain``'s
0.824 / 0.632 / 0.829 (this project's docs as they read when it was chosen). A build costs
0.89x-0.95x the CPU of one by ``context-v3``: every text loses its context line, and a site has
few distinct lines."""
CONTEXT_WEIGHT = 0.5
"""``context-v4``: how much of the context line's vector a node's vector holds. Chosen on the
tuning sets among 0.3, 0.5, 0.7 and 1.0: mean planned MRR 0.776 / 0.782 / 0.782 / 0.780,
nDCG@5 0.791 / 0.796 / 0.796 / 0.790. 0.7 leads 0.5 by 0.0003 on both, a tenth of one question
moving one place: a tie, and 0.5, measured first (the evaluation sets were scored with it
before 0.7 ran), was kept."""
TEXT_RECIPES = (PLAIN, CONTEXT, LEAN, HISTORY, MIXED)
DEFAULT_TEXTS = MIXED
"""The recipe new collections (and re-embedded ones) record."""
UNEMBEDDED_KINDS: frozenset[str] = frozenset({"nav_group", "source_file"})
"""Kinds ``context-v2`` does not embed: hidden from searches unless asked for by kind, where
BM25 and the exact lenses find them."""
CLIP_CHARS: dict[str, int] = {"code_sample": 400, "section": 700, "page": 700}
"""``context-v2``: the characters of a node's own text the encoder reads, by kind (other
kinds: the encoder's own limit). Cheaper texts were measured and not adopted (bench/RESULTS.md
"Cheaper texts against context-v2"): code at 300 or 200 characters, code without punctuation,
code as its heading only or unembedded, a one-crumb breadcrumb, sections at 600 characters each
cost a tuning set more than 0.005 MRR or nDCG@5 (Hugo's answers sit in its code)."""


def dim_texts(node: Node, schema: Schema) -> dict[str, str]:
    """The text each dimension indexes for a node: semantic text, or exact values plus tails."""
    out: dict[str, str] = {}
    for d in schema.dimensions:
        if d.name == "kind":
            values: tuple = (node.kind,)
        else:
            v = node.dims.get(d.name)
            if v is None or v == "" or v == ():
                continue
            values = v if isinstance(v, tuple) else (v,)
        if d.type == "semantic":
            out[d.name] = node.text(d.name)
        else:
            out[d.name] = " ".join([*(str(x) for x in values), *d.tail_words(values)])
    return out


def vector_dims(schema: Schema) -> list[str]:
    """Dimensions with stored vectors: each semantic facet, and the node's text unit."""
    return [d for d in schema.semantic if schema[d].facet] + [WHOLE]


def whole_text(node: Node, schema: Schema) -> str:
    """What the ``_all`` vector embeds: all the node's semantic text, shortest first, as the
    BM25 ``all`` field indexes it (facets included: measured on the Debian packages facet set,
    a fields-only ``_all`` hid "python" and "gtk" from the dense anchor, 0.451 vs 0.561).

    Shortest first because the encoder reads 256 tokens: a title, a description or keywords
    must not be cut off behind a long body. A stored schema lists its dimensions by name, so
    "body" or "text" came before "title", and on SciFact (71% of abstracts past 256 tokens)
    the title was dropped from 81% of the vectors: dense nDCG@10 0.6520 against 0.6605 with the
    title first, on the same encoder."""
    texts = [t for d in schema.semantic if (t := node.text(d).strip())]
    texts.sort(key=len)  # stable: equal lengths keep the schema's order
    return "\n".join(texts)


def context_line(node: Node) -> str:
    """Where a node sits, as its vector reads it: its breadcrumb without the node's own
    title (``Tutorial › Your first gadget`` for a section of that page); empty when it has
    none."""
    crumbs = node.meta.get("breadcrumb")
    if not isinstance(crumbs, list | tuple):
        return ""
    trail = [str(c).strip() for c in crumbs if str(c).strip()]
    title = node.text("title").strip() if "title" in node.dims else ""
    if trail and trail[-1] == title:
        trail = trail[:-1]
    return " › ".join(trail)


def texts_recipe(encoder_entry: Mapping[str, Any] | None) -> str:
    """The text recipe a root's encoder entry records (none: ``plain``, as roots made before
    recipes were recorded); one this installation does not know is an :class:`EncoderError`
    (its vectors came from texts this version cannot make)."""
    recipe = (encoder_entry or {}).get("texts", PLAIN)
    if recipe not in TEXT_RECIPES:
        raise EncoderError(
            f"the collection's vectors were embedded from texts made by recipe {recipe!r}, "
            f"which this installation does not make ({', '.join(TEXT_RECIPES)}): upgrade, or "
            "re-embed it: cogitave settings --set encoder=NAME"
        )
    return str(recipe)


def embed_texts(node: Node, schema: Schema, recipe: str = PLAIN) -> dict[str, str]:
    """What one node sends to the encoder, by vector dimension: its whole text once (one
    full-length pass), and each semantic facet's own (short) text. Fields get no vector of
    their own: they are searched together, through the text unit (Cranfield planned nDCG@10
    0.4096 -> 0.4132 with fields and no per-field vectors; the encoder is ~99% of build
    time)."""
    if recipe in (LEAN, HISTORY, MIXED) and node.kind in UNEMBEDDED_KINDS:
        return {}
    if recipe in (HISTORY, MIXED) and node.kind != "page" and on_history_page(node):
        return {}
    out = {d: t for d in schema.semantic if schema[d].facet and (t := node.text(d).strip())}
    if whole := whole_text(node, schema):
        if recipe in (LEAN, HISTORY, MIXED) and (limit := CLIP_CHARS.get(node.kind)):
            whole = clip(whole, limit)
        if recipe in (CONTEXT, LEAN, HISTORY) and (ctx := context_line(node)):
            whole = f"{ctx}\n{whole}"
        out[WHOLE] = whole
    return out


def mixed_context(node: Node, recipe: str) -> str:
    """The context line ``context-v4`` mixes into the node's text-unit (:data:`WHOLE`) vector
    (:data:`CONTEXT_WEIGHT`); empty for the other recipes and for a node with no breadcrumb."""
    return context_line(node) if recipe == MIXED else ""


def on_history_page(node: Node) -> bool:
    """Whether ``node`` sits on a page of the site's history, by the test the page-aware
    ranking demotes with (its path, URL or uid; a page's title)."""
    title = node.text("title").strip() if "title" in node.dims else ""
    return is_history(node.uid, node.kind, meta_str(node, "path"), meta_str(node, "url"), title)


def clip(text: str, limit: int) -> str:
    """``text`` cut to at most ``limit`` characters, at the last whitespace before the limit
    when there is one in its second half."""
    if len(text) <= limit:
        return text
    cut = text[:limit]
    space = max(cut.rfind(" "), cut.rfind("\n"))
    return cut[:space] if space > limit // 2 else cut


def check_node(node: Node, schema: Schema) -> None:
    """Raise ValueError when a node's values do not fit the schema."""
    for key, v in node.dims.items():
        d = schema.get(key)
        if d is None:
            raise ValueError(
                f"dimension {key!r} is not in the collection's schema ({', '.join(schema.names)})"
            )
        items = v if isinstance(v, tuple) else (v,)
        if d.type == "semantic" and not all(isinstance(x, str) for x in items):
            raise ValueError(f"dimension {key!r} is semantic: its value must be text")
