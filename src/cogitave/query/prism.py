"""The Prism: the query plan, as pure data, and the planner that writes it.

``plan(request, snapshot, lexicon, embed) -> Prism``: parse the syntax, repair zero-hit terms
(:mod:`~cogitave.query.rewrite`), route each term (:mod:`~cogitave.query.route`), group the
routed terms per dimension with their prefetch depths, decide the extra channels and the
residual phrase. The engine executes exactly what the Prism says and nothing else; printed as
JSON it is the plan part of the diagnostics.

Lenses of a planned query:

- per routed semantic dimension ``d``: BM25 over ``d`` with only ``d``'s terms, and dense over
  ``d``'s vectors with the embedding of ``d``'s terms alone;
- per routed exact dimension: a binary match of its terms against the dimension's enum tails;
- anchors: whole-query BM25 (all semantic text, every routed term) and whole-query dense
  (the ``_all`` vectors). They keep the plan's recall when routing splits a query across
  dimensions that describe one topic (title and abstract), and cost two lenses. In the BM25
  anchor a function word scores ``anchor.function_word_weight`` of its BM25 when the query
  has a content word (:func:`anchor_weights`);
- extra whole-query dense channels, one per touched semantic dimension, each with RRF weight
  equal to the query's noise fraction (zero noise, zero channels: the spec's rule).

Prefetch depths (constants named below, formulas here only):

- BM25: ``max(need, BM25_BASE * (1 + BM25_SPREAD * (1 - idf_norm)))`` where ``idf_norm`` is
  the mean idf of the dimension's routed terms over the idf of a df-1 term: a rare term needs
  few candidates, a common one up to three times more;
- dense: ``max(need, DENSE_BASE * (DENSE_FLOOR + coverage))`` where ``coverage`` is the share
  of the query's routed terms that went to the dimension.

Embedding fallback (zero-IDF queries, where no term routed): the whole query is compared with
every semantic dimension's vectors; it routes to the dimension with the highest top-1 cosine if
that cosine is at least ``routing.fallback_min_sim``, else to none (only the anchors run).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from cogitave.config import Settings
from cogitave.expand import analysis
from cogitave.expand.lexicon import FUNCTION_WORDS, Lexicon
from cogitave.query.rewrite import Rewritten, rewrite
from cogitave.query.route import TermRoute, idf, route_term
from cogitave.query.syntax import ParsedQuery, parse, phrases
from cogitave.query.types import SearchRequest
from cogitave.schema import WHOLE, Schema
from cogitave.store.port import ReadPort

BM25_BASE = 100
BM25_SPREAD = 2.0
DENSE_BASE = 100
DENSE_FLOOR = 0.5


def bm25_depth(idf_norm: float, need: int) -> int:
    """BM25 prefetch depth from the normalised idf of the routed terms (IDF-weighted)."""
    return max(need, round(BM25_BASE * (1 + BM25_SPREAD * (1 - min(max(idf_norm, 0.0), 1.0)))))


def dense_depth(coverage: float, need: int) -> int:
    """Dense prefetch depth from the share of the query routed to the dimension."""
    return max(need, round(DENSE_BASE * (DENSE_FLOOR + min(max(coverage, 0.0), 1.0))))


@dataclass(frozen=True)
class DimPlan:
    """One touched dimension: its routed terms, whether emphatic, and its lens depths."""

    dim: str
    type: str
    terms: tuple[str, ...]
    stems: tuple[str, ...]
    emphatic: bool
    bm25_depth: int
    dense_depth: int
    via: str = "idf"  # idf | explicit | fallback

    @property
    def text(self) -> str:
        """What the dimension's dense leg embeds: its routed terms alone."""
        return " ".join(self.terms)

    def to_dict(self) -> dict[str, Any]:
        return {
            "dim": self.dim,
            "type": self.type,
            "terms": list(self.terms),
            "emphatic": self.emphatic,
            "bm25_depth": self.bm25_depth,
            "dense_depth": self.dense_depth if self.type == "semantic" else 0,
            "via": self.via,
        }


@dataclass(frozen=True)
class Channel:
    """An extra whole-query dense channel."""

    dim: str
    weight: float

    def to_dict(self) -> dict[str, Any]:
        return {"dim": self.dim, "weight": round(self.weight, 4)}


@dataclass(frozen=True)
class Prism:
    """The plan of one query."""

    query: str
    whole_text: str
    whole_stems: tuple[str, ...]
    anchor_depth: int
    anchor_weights: dict[str, float]  # stems the BM25 anchor scores below 1
    dims: tuple[DimPlan, ...]
    routes: tuple[TermRoute, ...]
    rewritten: Rewritten
    channels: tuple[Channel, ...]
    residual: tuple[str, ...]  # the dropped real-word phrase of the residual boost
    negations: tuple[str, ...]
    excluded_stems: tuple[str, ...]
    fallback: dict[str, Any] | None = None
    homes: dict[str, tuple[str, ...]] = field(default_factory=dict)
    phrases: dict[tuple[str, ...], float] = field(default_factory=dict)
    """Compounds and quoted phrases the BM25 anchor also matches whole, with their weight."""

    @property
    def touched(self) -> tuple[str, ...]:
        return tuple(d.dim for d in self.dims)

    @property
    def gated(self) -> tuple[DimPlan, ...]:
        """The routed dimensions the coherence gate holds a candidate to."""
        return self.dims

    @property
    def lensed(self) -> tuple[DimPlan, ...]:
        """The routed dimensions whose own ranked lenses join fusion: those the query routes
        to explicitly (``title:sorting``). (Every routed exact dimension still gets its
        binary lens, which ranks nothing.) A dimension the planner routed terms to (by IDF or
        the embedding fallback) is a constraint: the coherence gate holds every candidate
        to it, and the order among the candidates that pass comes from the whole-query
        anchors (and the feedback lens). A facet lens ranks a facet's matches by field
        length and term repeats, noise next to the anchors' topical order: on the Debian
        facet set planned nDCG@10 was 0.688 with facet lenses in the fusion and 0.732
        without (hybrid 0.703), the same on the collections without facets."""
        return tuple(p for p in self.dims if p.via == "explicit")

    @property
    def residual_phrase(self) -> str:
        return " ".join(self.residual)

    def to_dict(self) -> dict[str, Any]:
        return {
            "query": self.query,
            "dimensions": [d.to_dict() for d in self.dims],
            "routes": [r.to_dict() for r in self.routes],
            "rewrites": self.rewritten.to_dict(),
            "anchors": {
                "bm25": "all",
                "dense": WHOLE,
                "depth": self.anchor_depth,
                "weights": self.anchor_weights,
                "phrases": {" ".join(p): w for p, w in self.phrases.items()},
            },
            "channels": [c.to_dict() for c in self.channels],
            "residual": self.residual_phrase or None,
            "negations": list(self.negations),
            "excluded": list(self.excluded_stems),
            "fallback": self.fallback,
        }


Embed = Callable[[list[str]], np.ndarray]


def anchor_weights(
    tokens: Sequence[str], weight: float, marked: Collection[str] = ()
) -> dict[str, float]:
    """Stem -> weight in the whole-query BM25 anchor: the stems of the query's function words
    at ``weight``, unless the query has no content word (then every stem counts fully), a
    content word shares the stem, or the user ``marked`` the word (``+with``)."""
    content = {analysis.stem(t) for t in tokens if t not in FUNCTION_WORDS or t in marked}
    if weight == 1.0 or not content:
        return {}
    return {
        s: weight for t in tokens if t in FUNCTION_WORDS and (s := analysis.stem(t)) not in content
    }


def routing_units(schema: Schema) -> list[str]:
    """What terms route among when a request names no dimensions: the node's text (its
    fields together, :data:`~cogitave.schema.WHOLE`) when it has fields, then every facet."""
    return ([WHOLE] if schema.fields else []) + schema.facets


def unit_type(schema: Schema, dim: str) -> str:
    """``semantic`` or ``exact`` for a routing unit (the text unit is semantic)."""
    return "semantic" if dim == WHOLE else schema[dim].type


def plan(
    req: SearchRequest,
    snap: ReadPort,
    settings: Settings,
    lexicon: Lexicon,
    embed: Embed | None,
) -> Prism:
    """Write the Prism of ``req`` against ``snap`` (``embed`` is None without dense legs)."""
    schema, stats = snap.schema, snap.stats
    concrete = list(req.dimensions or schema.names)
    dims = list(req.dimensions) if req.dimensions else routing_units(schema)
    parsed: ParsedQuery = parse(req.query, set(schema.names))
    positive = parsed.positive
    rw = rewrite([t.text for t in positive], stats, lexicon, dims=concrete)

    # Markers follow a token through its rewrite (by the original position).
    by_pos = {i: t for i, t in enumerate(positive)}
    by_text = {t.text: t for t in positive}
    origin: dict[str, int] = {}
    for r in rw.rewrites:
        for tok in r.replacement:
            origin.setdefault(tok, r.position)
    routes: list[TermRoute] = []
    for tok in dict.fromkeys(rw.tokens):
        qt = by_text.get(tok) or by_pos.get(origin.get(tok, -1))
        routes.append(
            route_term(
                tok,
                stats,
                schema,
                dims,
                settings.routing,
                explicit=qt.dim if qt else None,
                emphatic=bool(qt and qt.emphatic),
            )
        )

    need = req.offset + req.limit
    routed = [r for r in routes if r.dim is not None]
    fallback: dict[str, Any] | None = None
    dim_plans: list[DimPlan] = []
    if routed:
        # explicit ``dim:term`` routes may name a field outside the routing units
        for d in dict.fromkeys([*dims, *(r.dim for r in routed if r.dim is not None)]):
            mine = [r for r in routed if r.dim == d]
            if not mine:
                continue
            n = stats.dim(d).n_docs
            max_idf = idf(n, 1) if n else 1.0
            idf_norm = float(np.mean([r.idf.get(d, max_idf) for r in mine])) / max_idf
            dim_plans.append(
                DimPlan(
                    dim=d,
                    type=unit_type(schema, d),
                    terms=tuple(r.term for r in mine),
                    stems=tuple(r.stem for r in mine),
                    emphatic=any(r.emphatic for r in mine),
                    bm25_depth=bm25_depth(idf_norm, need),
                    dense_depth=dense_depth(len(mine) / len(routed), need),
                    via="explicit" if all(r.reason == "explicit" for r in mine) else "idf",
                )
            )
    elif embed is not None and parsed.plain.strip():
        fallback = _fallback(parsed.plain, snap, dims, settings, embed, need)
        if fallback.get("dim"):
            d = fallback["dim"]
            toks = analysis.surface(parsed.plain)
            dim_plans.append(
                DimPlan(
                    d,
                    "semantic",
                    tuple(toks),
                    tuple(analysis.stem(t) for t in toks),
                    False,
                    bm25_depth(0.0, need),
                    dense_depth(1.0, need),
                    via="fallback",
                )
            )

    noise = rw.noise_fraction
    semantic_touched = [p.dim for p in dim_plans if p.type == "semantic"]
    have = snap.vector_dims()
    channel_dims = semantic_touched or [d for d in dims if d in have]
    channels = (
        tuple(Channel(d, noise) for d in channel_dims if d in have)
        if noise > 0 and embed is not None
        else ()
    )
    residual: tuple[str, ...] = ()
    if (
        routed
        and len(rw.known_phrase) >= settings.boost.min_known_terms
        and not parsed.negation_markers
    ):
        residual = rw.known_phrase
    marked = {t.text for t in positive if t.marked}
    weights = anchor_weights(rw.tokens, settings.anchor.function_word_weight, marked)
    return Prism(
        query=req.query,
        whole_text=" ".join(rw.display) if rw.changed else parsed.plain,
        # a weight of 0 leaves the word out (a zero boost would still match on it alone)
        whole_stems=tuple(
            s for s in dict.fromkeys(analysis.stem(t) for t in rw.tokens) if weights.get(s) != 0
        ),
        anchor_depth=max(need, BM25_BASE),
        anchor_weights={s: w for s, w in weights.items() if w},
        dims=tuple(dim_plans),
        routes=tuple(routes),
        rewritten=rw,
        channels=channels,
        residual=residual,
        negations=parsed.negation_markers,
        excluded_stems=tuple(dict.fromkeys(analysis.stem(t) for t in parsed.excluded)),
        fallback=fallback,
        homes={r.term: r.homes for r in routed},
        phrases=dict.fromkeys(phrases(req.query), settings.anchor.phrase_weight)
        if settings.anchor.phrase_weight
        else {},
    )


def _fallback(
    text: str, snap: ReadPort, dims: Sequence[str], settings: Settings, embed: Embed, need: int
) -> dict[str, Any]:
    """Route a zero-IDF query to the dimension with the best top-1 dense similarity."""
    q = embed([text])[0]
    tops: dict[str, float] = {}
    for d in dims:
        if not snap.vector_count(d):
            continue
        _, sims = snap.dense(d, q, 1)
        if len(sims):
            tops[d] = round(float(sims[0]), 4)
    if not tops:
        return {"dim": None, "top1": {}, "threshold": settings.routing.fallback_min_sim}
    best = max(tops, key=lambda d: (tops[d], -list(dims).index(d)))
    ok = tops[best] >= settings.routing.fallback_min_sim
    return {
        "dim": best if ok else None,
        "top1": tops,
        "threshold": settings.routing.fallback_min_sim,
    }
