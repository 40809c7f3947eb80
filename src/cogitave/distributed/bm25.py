"""Exact BM25 over shards with global statistics (distributed frequency search).

A shard's tantivy scores a term with its own document count, document frequency and average
field length, so shards of one corpus disagree with the unsharded index. Elasticsearch's DFS
query-then-fetch fixes this by collecting the statistics first; tantivy-py cannot take
statistics from outside, so here the statistics are gathered from every shard and each shard
re-scores its candidates with them, using tantivy's own arithmetic (its ``Bm25Weight``):

    N     = sum of every shard's ``max_doc`` (deleted but unmerged documents count, as in
            tantivy)
    avgdl = f32(total tokens of the field) / f32(N)
    idf   = ln(1 + (N - n + 0.5) / (n + 0.5))               n = summed document frequency
    score = sum over terms of  idf * (1 + k1) * tf / (tf + k1 * (1 - b + b * dl / avgdl))

where ``tf`` and the quantised field length ``dl`` of a candidate come from tantivy's
``explain`` of that document (the same one-byte field norm the index stores, so nothing is
re-tokenised). All in float32, as tantivy computes it.

Candidates: a shard searches with each term boosted by ``global idf / local idf``, so its own
ranking already uses the global idf and differs from the global one only through the average
length. For one term, ``tf / (tf + K(dl))`` changes by a factor between 1 and
``avgdl_global / avgdl_local`` when the average changes (``K`` is affine in ``1/avgdl``), so no
document outside the shard's top ``K`` can score above ``R`` times the ``K``-th local score,
``R = max(1, avgdl_global / avgdl_local)``. A shard deepens its candidate list until its
``depth``-th exact score is above that bound; its top ``depth`` is then exact, and the merge of
every shard's top ``depth`` is the global top ``depth``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

K1 = np.float32(1.2)
B = np.float32(0.75)

_EVIDENCE = re.compile(
    r'"value": ([0-9.eE+-]+),\s*"description": "(freq|dl), '
    r'|Term=Term\(field=\d+, type=Str, \\"([^"\\]*)\\"\)'
)


@dataclass(frozen=True)
class FieldStats:
    """One field's BM25 statistics: documents (``max_doc``) and indexed tokens."""

    docs: int
    tokens: int

    def __add__(self, other: FieldStats) -> FieldStats:
        return FieldStats(self.docs + other.docs, self.tokens + other.tokens)

    @property
    def avgdl(self) -> np.float32:
        if not self.docs:
            return np.float32(0.0)
        return np.float32(self.tokens) / np.float32(self.docs)


@dataclass(frozen=True)
class GlobalTerms:
    """What a shard needs to score a query like the whole corpus: the field's summed
    statistics and each term's summed document frequency."""

    field: FieldStats
    df: Mapping[str, int]

    def idf(self, term: str) -> np.float32:
        return idf(self.df.get(term, 0), self.field.docs)


def idf(n: int, docs: int) -> np.float32:
    """tantivy's idf in float32."""
    x = (np.float32(docs - n) + np.float32(0.5)) / (np.float32(n) + np.float32(0.5))
    return np.float32(np.log(np.float32(1.0) + x, dtype=np.float32))


def term_score(idf_: np.float32, tf: np.ndarray, dl: np.ndarray, avgdl: np.float32) -> np.ndarray:
    """tantivy's per-term BM25 in float32 for arrays of term frequencies and field lengths."""
    weight = np.float32(idf_ * (np.float32(1.0) + K1))
    tf = tf.astype(np.float32)
    norm = K1 * (np.float32(1.0) - B + B * dl.astype(np.float32) / avgdl)
    return (weight * tf / (tf + norm)).astype(np.float32)


def field_stats_from_explain(doc: Mapping) -> tuple[int, float] | None:
    """(N, avgdl) from the explanation of a one-term match, or None if absent."""
    found: dict[str, float] = {}
    for node in _walk(doc):
        desc = node.get("description", "")
        if desc.startswith("N, total number of docs"):
            found["N"] = float(node["value"])
        elif desc.startswith("avgdl"):
            found["avgdl"] = float(node["value"])
    if "N" in found and "avgdl" in found:
        return int(found["N"]), found["avgdl"]
    return None


def tokens_from(docs: int, avgdl: float) -> int:
    """A field's token total from tantivy's float32 average: exact while ``docs`` times the
    float32 spacing of ``avgdl`` is under 1/2 (fields under about 2**24 tokens per shard)."""
    return round(float(np.float32(avgdl)) * docs)


def term_evidence(explanation: str, terms: Sequence[str]) -> tuple[dict[str, int], int]:
    """Per query term its frequency in the document, and the document's quantised field
    length, read from tantivy's explanation (JSON text) of the document for a query over
    ``terms``. In each term's block the frequency and length come before the term itself, so
    one scan of the text pairs them (a JSON parse and tree walk cost ten times more)."""
    tf: dict[str, int] = {}
    dl = 0
    wanted = set(terms)
    freq = 0
    for m in _EVIDENCE.finditer(explanation):
        value, kind, term = m.group(1), m.group(2), m.group(3)
        if term is not None:
            if term in wanted and freq:
                tf[term] = freq
            freq = 0
        elif kind == "freq":
            freq = int(float(value))
        else:
            dl = int(float(value))
    return tf, dl


def freq_and_length(explanation: str) -> tuple[int, int]:
    """The frequency and quantised field length a one-clause explanation reports (a phrase's,
    whose block names no term: :func:`term_evidence` reads per-term blocks)."""
    freq = dl = 0
    for m in _EVIDENCE.finditer(explanation):
        if m.group(2) == "freq":
            freq = int(float(m.group(1)))
        elif m.group(2) == "dl":
            dl = int(float(m.group(1)))
    return freq, dl


def _walk(node: Mapping):
    yield node
    for child in node.get("details", ()) or ():
        yield from _walk(child)
