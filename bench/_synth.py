"""Seeded synthetic corpus and queries for ``bench/latency.py`` (no word lists: every word is
made from syllables).

- A vocabulary of pseudo-words built from syllables, seeded; frequent ranks get short words
  (Zipf's law of abbreviation). Token draws are Zipf-Mandelbrot over ranks.
- Topics: each node has a topic; a share of its words come from the topic's word set, so BM25
  co-occurrence and the dense legs see some structure.
- Node ``i`` is a pure function of (parameters, i): a prefix of the corpus never changes, which
  is what lets an interrupted build resume and lets a large build retain the roots of smaller
  sizes.
- Dimensions: ``title`` (~8 words), ``body`` (~120 words), ``tags`` (~5 words from a separate
  tag vocabulary), ``year`` (exact, numeric, tails ``recent``/``vintage``), ``category``
  (exact, ``equals`` tails to a category word).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass
from functools import cached_property

import numpy as np

from cogitave.nodes import Node
from cogitave.schema import Dimension, Schema, TailRule

ONSETS = [
    *["b", "c", "d", "f", "g", "h", "k", "l", "m", "n", "p", "r", "s", "t", "v", "w", "z"],
    *("st", "ch", "sh", "th", "br", "tr", "pl"),
]
VOWELS = ["a", "e", "i", "o", "u", "a", "e", "i", "o", "ea", "ou", "ai"]
CODAS = ["", "", "", "n", "r", "s", "l", "m", "t", "nd", "st", "ng", "ck"]

# Filler a user types that carries no signal (a handful written here, not a list shipped).
FILLER = ("the", "for", "with", "about", "best", "some", "show", "me", "new", "good")


@dataclass(frozen=True)
class SynthParams:
    seed: int = 7
    vocab: int = 30_000  # distinct body/title words
    tag_vocab: int = 3_000  # distinct tag words
    topics: int = 500
    topic_words: int = 40
    topic_tags: int = 6
    zipf_s: float = 1.05
    zipf_q: float = 2.7
    title_len: int = 8
    body_len: int = 120
    tags_len: int = 5
    topic_share_body: float = 0.25
    topic_share_title: float = 0.5
    topic_share_tags: float = 0.6
    categories: int = 12
    year_lo: int = 1980
    year_hi: int = 2025
    version: int = 1

    def key(self) -> str:
        blob = json.dumps(asdict(self), sort_keys=True).encode()
        return hashlib.sha256(blob).hexdigest()[:12]


def _zipf_cdf(n: int, s: float, q: float) -> np.ndarray:
    w = 1.0 / (np.arange(n) + 1 + q) ** s
    c = np.cumsum(w)
    return c / c[-1]


class Synth:
    """The corpus generator (deterministic in its parameters)."""

    def __init__(self, params: SynthParams | None = None) -> None:
        self.p = params or SynthParams()
        rng = np.random.default_rng([self.p.seed, 0])
        words = self._words(rng, self.p.vocab + self.p.tag_vocab + self.p.categories + 2000)
        self.vocab = words[: self.p.vocab]
        self.tag_vocab = words[self.p.vocab : self.p.vocab + self.p.tag_vocab]
        rest = words[self.p.vocab + self.p.tag_vocab :]
        self.category_words = rest[: self.p.categories]
        self.unused = rest[self.p.categories :]  # never in the corpus: noise words for queries
        self.cdf = _zipf_cdf(self.p.vocab, self.p.zipf_s, self.p.zipf_q)
        self.tag_cdf = _zipf_cdf(self.p.tag_vocab, self.p.zipf_s, self.p.zipf_q)
        # topic words from mid-frequency ranks; topic tags from the tag vocabulary
        self.topic_words = rng.integers(
            100, min(self.p.vocab, 20_000), (self.p.topics, self.p.topic_words)
        )
        self.topic_tags = rng.integers(0, self.p.tag_vocab, (self.p.topics, self.p.topic_tags))
        self.topic_cdf = _zipf_cdf(self.p.topics, 0.8, 5.0)

    @staticmethod
    def _words(rng: np.random.Generator, n: int) -> list[str]:
        """``n`` distinct pseudo-words; word ``r`` (rank) is shorter when ``r`` is small."""
        out: list[str] = []
        seen: set[str] = set()
        while len(out) < n:
            r = len(out)
            # ~1 syllable at the top ranks, ~2.3 on average in the tail
            k = int(np.clip(rng.poisson(0.05 + 0.3 * np.log10(r + 1)) + 1, 1, 4))
            w = "".join(
                ONSETS[rng.integers(len(ONSETS))] * (rng.random() < 0.8)
                + VOWELS[rng.integers(len(VOWELS))]
                + (CODAS[rng.integers(len(CODAS))] if j == k - 1 or rng.random() < 0.15 else "")
                for j in range(k)
            )
            if len(w) < 2 or w in seen:
                continue
            seen.add(w)
            out.append(w)
        return out

    def schema(self) -> Schema:
        year_tails = (
            TailRule(words=("recent",), gte=2020.0),
            TailRule(words=("vintage",), lt=2000.0),
        )
        cat_tails = tuple(
            TailRule(words=(w,), equals=f"c{i:02d}") for i, w in enumerate(self.category_words)
        )
        return Schema(
            (
                Dimension("title", "semantic"),
                Dimension("body", "semantic"),
                Dimension("tags", "semantic"),
                Dimension("year", "exact", year_tails),
                Dimension("category", "exact", cat_tails),
            )
        )

    # -- nodes --------------------------------------------------------------------------------
    def _draw(self, rng: np.random.Generator, n: int, topic: int, share: float) -> list[str]:
        ranks = np.searchsorted(self.cdf, rng.random(n))
        from_topic = rng.random(n) < share
        tw = self.topic_words[topic]
        ranks[from_topic] = tw[rng.integers(0, len(tw), int(from_topic.sum()))]
        return [self.vocab[r] for r in ranks.tolist()]

    def node(self, i: int) -> Node:
        p = self.p
        rng = np.random.default_rng([p.seed, 1, i])
        topic = int(np.searchsorted(self.topic_cdf, rng.random()))
        tl = max(3, int(rng.normal(p.title_len, 2)))
        bl = max(30, int(rng.normal(p.body_len, 30)))
        gl = max(2, int(rng.normal(p.tags_len, 1)))
        title = self._draw(rng, tl, topic, p.topic_share_title)
        body = self._draw(rng, bl, topic, p.topic_share_body)
        tag_ranks = np.searchsorted(self.tag_cdf, rng.random(gl))
        from_topic = rng.random(gl) < p.topic_share_tags
        tt = self.topic_tags[topic]
        tag_ranks[from_topic] = tt[rng.integers(0, len(tt), int(from_topic.sum()))]
        tags = list(dict.fromkeys(self.tag_vocab[r] for r in tag_ranks.tolist()))
        # sentences of 8-20 words for the body
        sents, j = [], 0
        while j < len(body):
            k = int(rng.integers(8, 21))
            s = body[j : j + k]
            sents.append(s[0].capitalize() + " " + " ".join(s[1:]) + ".")
            j += k
        year = int(rng.integers(p.year_lo, p.year_hi + 1))
        cat = int(np.searchsorted(_zipf_cdf(p.categories, 1.0, 1.0), rng.random()))
        return Node(
            uid=f"n{i:07d}",
            dims={
                "title": " ".join(title).capitalize(),
                "body": " ".join(sents),
                "tags": " ".join(tags),
                "year": year,
                "category": f"c{cat:02d}",
            },
        )

    def nodes(self, start: int, stop: int) -> list[Node]:
        return [self.node(i) for i in range(start, stop)]

    # -- queries ------------------------------------------------------------------------------
    @cached_property
    def _noise_pool(self) -> list[str]:
        return self.unused

    def misspell(self, rng: np.random.Generator, w: str) -> str:
        """One edit (not the first letter): deletion, insertion, substitution, transposition."""
        if len(w) < 4:
            return w
        i = int(rng.integers(1, len(w)))
        op = int(rng.integers(4))
        letters = "abcdefghijklmnopqrstuvwxyz"
        if op == 0:
            out = w[:i] + w[i + 1 :]
        elif op == 1:
            out = w[:i] + letters[rng.integers(26)] + w[i:]
        elif op == 2:
            out = w[:i] + letters[rng.integers(26)] + w[i + 1 :]
        else:
            i = min(i, len(w) - 2)
            out = w[:i] + w[i + 1] + w[i] + w[i + 2 :] if i >= 1 else w
        return out if out != w else w[:-1]

    def queries(self, n: int, n_nodes: int, seed: int) -> list[tuple[str, str]]:
        """``n`` (shape, query) pairs drawn from the first ``n_nodes`` nodes' text.

        Shapes: ``1term`` (a title or body word), ``2-3terms`` and ``4-6terms`` (words of one
        node's title/body), ``multidim`` (title word + tag word + a tail word: ``recent``,
        ``vintage`` or a category word), ``noise`` (2-4 node words + filler or a pseudo-word
        the corpus lacks). ~15% of all queries get one misspelled term."""
        rng = np.random.default_rng([self.p.seed, 2, seed])
        shapes = ["1term", "2-3terms", "4-6terms", "multidim", "noise"]
        weights = np.array([0.15, 0.3, 0.2, 0.2, 0.15])
        out: list[tuple[str, str]] = []
        for _ in range(n):
            shape = shapes[int(rng.choice(len(shapes), p=weights))]
            node = self.node(int(rng.integers(n_nodes)))
            title = node.text("title").lower().split()
            body = [w.strip(".").lower() for w in node.text("body").split()]
            tags = node.text("tags").split()
            words = title + body
            if shape == "1term":
                terms = [words[int(rng.integers(len(words)))]]
            elif shape in ("2-3terms", "4-6terms"):
                k = int(rng.integers(2, 4)) if shape == "2-3terms" else int(rng.integers(4, 7))
                src = title if rng.random() < 0.5 and len(title) >= k else body
                j = int(rng.integers(0, max(1, len(src) - k)))
                terms = (
                    src[j : j + k]
                    if rng.random() < 0.5
                    else list(rng.choice(src, min(k, len(set(src))), replace=False))
                )
            elif shape == "multidim":
                y = int(node.dims["year"])  # type: ignore[arg-type]
                cat = int(str(node.dims["category"])[1:])
                tail = (
                    "recent" if y >= 2020 else "vintage" if y < 2000 else self.category_words[cat]
                )
                terms = [
                    title[int(rng.integers(len(title)))],
                    tags[int(rng.integers(len(tags)))],
                    tail,
                ]
                rng.shuffle(terms)
            else:
                k = int(rng.integers(2, 5))
                terms = list(rng.choice(sorted(set(words)), k, replace=False))
                noise = (
                    [FILLER[int(rng.integers(len(FILLER)))] for _ in range(int(rng.integers(1, 3)))]
                    if rng.random() < 0.5
                    else [self._noise_pool[int(rng.integers(len(self._noise_pool)))]]
                )
                for w in noise:
                    terms.insert(int(rng.integers(len(terms) + 1)), w)
            terms = [str(t) for t in terms]
            if rng.random() < 0.15:
                cands = [i for i, t in enumerate(terms) if len(t) >= 5 and t not in FILLER]
                if cands:
                    i = cands[int(rng.integers(len(cands)))]
                    terms[i] = self.misspell(rng, terms[i])
                    shape += "+typo"
            out.append((shape, " ".join(terms)))
        return out
