"""One shard's side of the sharded read port: a snapshot answering in its own node ids.

:class:`ShardServer` is what a Ray actor holds (one per shard) and what the in-process view
calls directly; every method takes and returns plain values (numpy arrays, dicts, strings), so
the same object works in both places. Ids here are the shard's own nids; the view packs them.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import tantivy

from cogitave.distributed.bm25 import (
    K1,
    B,
    FieldStats,
    GlobalTerms,
    field_stats_from_explain,
    freq_and_length,
    idf,
    term_evidence,
    term_score,
    tokens_from,
)
from cogitave.schema import WHOLE
from cogitave.store.lexical import ALL_FIELD, field_name, with_filters
from cogitave.store.port import MatchKind, Where
from cogitave.store.roots import RootStore
from cogitave.store.snapshot import Snapshot

# The first candidate list is this much deeper than asked; a shard deepens it (x4) only when
# the bound of the module docstring of bm25.py is not met.
_OVERFETCH = 1.25
_WHOLE_POSTINGS = 4096
"""A term in at most this many documents is scored over its whole posting list instead of a
search restricted to the candidates (the restriction costs about 1 ms to set up)."""
_SLACK = np.float32(1.0 + 1e-5)  # float32 rounding of scores and boosts

PUBLIC = frozenset(
    {
        "info",
        "field_stats",
        "doc_freqs",
        "bm25",
        "bm25_local",
        "match",
        "match_all",
        "dense",
        "vectors_of",
        "dense_sample",
        "records",
        "facts",
        "ping",
    }
)


class ShardServer:
    """Serves one shard's snapshot (a pinned root of an ordinary collection)."""

    def __init__(self, path: str, root: str, index: int = 0) -> None:
        self.path = str(path)
        self.index = index
        self.snap = Snapshot.open(RootStore(Path(path)), root)
        self._fields: dict[str, FieldStats] = {}
        self._lengths: dict[str, dict[int, int]] = {}  # field -> nid -> quantised length

    def call(self, method: str, *args: Any) -> Any:
        """Dispatch for actors: one remote method, the public ones only."""
        if method not in PUBLIC:
            raise AttributeError(f"shard has no method {method!r}")
        return getattr(self, method)(*args)

    def ping(self) -> int:
        return self.index

    def info(self) -> dict[str, Any]:
        """What the view needs once: schema, settings, encoder, statistics, live uids."""
        snap = self.snap
        nodes = snap.nodes
        nids = nodes.live_nids()
        return {
            "root": snap.root,
            "schema": snap.manifest.schema,
            "settings": snap.manifest.settings,
            "encoder": snap.encoder_name,
            "encoder_graph": snap.encoder_graph,
            "stats": snap.stats.to_bytes(),
            "nids": nids,
            "uids": [nodes.uid_of[int(n)] for n in nids.tolist()],
            "vectors": {d: snap.vector_count(d) for d in snap.vector_dims()},
        }

    # -- BM25 -------------------------------------------------------------------------------
    def _bm25_field(self, scope: str) -> str:
        return ALL_FIELD if scope == WHOLE else field_name(scope, self.snap.schema)

    def field_stats(self, scope: str) -> FieldStats:
        """``max_doc`` and token total of the BM25 field of ``scope`` in this shard, read from
        tantivy's own explanation of a match of the field's most frequent term."""
        field = self._bm25_field(scope)
        got = self._fields.get(field)
        if got is not None:
            return got
        dims = list(self.snap.schema.semantic) if scope == WHOLE else [scope]
        found = self._explained_stats(field, dims)
        if found is None:  # no token in the field here: the documents still count
            got = FieldStats(self._max_doc(), 0)
        else:
            got = FieldStats(found[0], tokens_from(*found))
        self._fields[field] = got
        return got

    def _explained_stats(self, field: str, dims: Sequence[str]) -> tuple[int, float] | None:
        """(max_doc, average length) of ``field`` from the explanation of one match of the
        most frequent stem among ``dims`` (None when the field has no token)."""
        stats = self.snap.stats
        best = max((_top_stem(stats.dim(d)) for d in dims), default=(0, ""))
        if not best[1]:
            return None
        lex = self.snap.lexical
        q = tantivy.Query.term_query(lex.tschema, field, best[1])
        hits = lex.searcher.search(q, 1, count=False).hits
        if not hits:
            return None
        return field_stats_from_explain(json.loads(q.explain(lex.searcher, hits[0][1]).to_json()))

    def _max_doc(self) -> int:
        """Documents tantivy counts (deleted ones until merged away), from any field."""
        schema = self.snap.schema
        for d in schema.names:
            found = self._explained_stats(self._bm25_field(d), [d])
            if found is not None:
                return found[0]
        return 0

    def doc_freqs(self, scope: str, terms: Sequence[str]) -> list[int]:
        """tantivy's document frequency of each term in the field (deleted documents count
        until merged away, as in tantivy's own scoring)."""
        lex = self.snap.lexical
        field = self._bm25_field(scope)
        return [int(lex.searcher.doc_freq(field, t)) for t in terms]

    def bm25_local(
        self,
        scope: str,
        stems: Sequence[str],
        depth: int,
        where: Where | None = None,
        weights: Mapping[str, float] | None = None,
        phrases: Mapping[tuple[str, ...], float] | None = None,
    ) -> tuple[np.ndarray, np.ndarray]:
        """The shard's own BM25 (its local statistics), as one collection would answer."""
        return self.snap.bm25(scope, stems, depth, where, weights, phrases)

    def bm25(
        self,
        scope: str,
        stems: Sequence[str],
        depth: int,
        where: Where | None,
        glob: GlobalTerms,
        weights: Mapping[str, float] | None = None,
        phrases: Mapping[tuple[str, ...], float] | None = None,
    ) -> tuple[np.ndarray, np.ndarray]:
        """This shard's exact top ``depth`` by BM25 with the corpus-wide statistics ``glob``
        (a stem in ``weights`` scoring that multiple of its BM25, a phrase of ``phrases``
        adding its weight times its BM25, the phrase's idf the sum of its words'): (nids,
        float32 scores), best first, ties by nid."""
        empty = np.zeros(0, np.uint64), np.zeros(0, np.float32)
        terms = list(dict.fromkeys(stems))
        weight = dict(weights or {})
        local = self.field_stats(scope)
        if depth <= 0 or not terms or not local.tokens:
            return empty
        lex = self.snap.lexical
        field = self._bm25_field(scope)
        wanted = [(tuple(p), float(w)) for p, w in (phrases or {}).items() if len(p) > 1 and w > 0]
        words = list(dict.fromkeys([*terms, *(t for p, _ in wanted for t in p)]))
        ldf = dict(zip(words, self.doc_freqs(scope, words), strict=True))
        clauses = []
        for t in terms:
            if not ldf[t]:
                continue
            boost = float(weight.get(t, 1.0) * glob.idf(t) / idf(ldf[t], local.docs))
            q = tantivy.Query.term_query(lex.tschema, field, t)
            clauses.append((tantivy.Occur.Should, tantivy.Query.boost_query(q, boost)))
        # a phrase whose every word this shard holds: (words, weight, local idf, global idf)
        held = [
            (p, w, _idf_sum(idf(ldf[t], local.docs) for t in p), _idf_sum(glob.idf(t) for t in p))
            for p, w in wanted
            if all(ldf[t] for t in p)
        ]
        for p, w, local_idf, glob_idf in held:
            q = tantivy.Query.phrase_query(lex.tschema, field, list(p))
            boost = float(w * glob_idf / local_idf)
            clauses.append((tantivy.Occur.Should, tantivy.Query.boost_query(q, boost)))
        nids = self.snap.prefix_nids(where.path_prefix) if where and where.path_prefix else None
        if not clauses or (nids is not None and not len(nids)):
            return empty
        query = with_filters(
            lex.tschema,
            tantivy.Query.boolean_query(clauses),
            where.values if where else None,
            None if nids is None else nids.tolist(),
        )
        gavg = glob.field.avgdl
        ratio = np.float32(max(1.0, float(gavg / local.avgdl)))
        idfs = {t: glob.idf(t) for t in terms}
        k = max(depth + 8, int(depth * _OVERFETCH))
        while True:
            hits = lex.searcher.search(query, k, count=False).hits
            nids = np.asarray(
                lex.searcher.fast_field_values("nid", [a for _, a in hits]), np.uint64
            ).reshape(-1)
            tf, dl = self._evidence(field, terms, ldf, local, hits, nids, query)
            scores = np.zeros(len(hits), np.float32)
            for i, t in enumerate(terms):
                has = tf[i] > 0
                scores[has] += weight.get(t, 1.0) * term_score(idfs[t], tf[i][has], dl[has], gavg)
            if held:
                pf = self._phrase_freqs(field, held, local, hits, nids, dl)
                for row, (_, w, _, glob_idf) in zip(pf, held, strict=True):
                    has = row > 0
                    scores[has] += np.float32(w) * term_score(glob_idf, row[has], dl[has], gavg)
            order = np.lexsort((nids, -scores))
            nids, scores = nids[order], scores[order]
            if len(hits) < k:  # every match is scored: exact
                break
            bound = ratio * np.float32(hits[-1][0]) * _SLACK
            if len(scores) >= depth and scores[depth - 1] > bound:
                break
            k *= 4
        return nids[:depth], scores[:depth]

    def _evidence(
        self,
        field: str,
        terms: list[str],
        ldf: dict[str, int],
        local: FieldStats,
        hits: list,
        nids: np.ndarray,
        query: tantivy.Query,
    ) -> tuple[np.ndarray, np.ndarray]:
        """Term frequencies (terms x hits) and quantised field lengths of the candidates.

        One search per term restricted to the candidates gives its local score; with the
        document's field length (cached per node, read once from a one-term explanation) the
        frequency follows from tantivy's formula, ``tf = s * K / (w - s)``. A frequency that
        does not give back the score exactly (very large ones lose float32 precision) is read
        from the document's full explanation instead."""
        lex = self.snap.lexical
        ts = lex.tschema
        pos = {(a.segment_ord, a.doc): j for j, (_, a) in enumerate(hits)}
        among = tantivy.Query.const_score_query(
            tantivy.Query.term_set_query(ts, "nid", nids.tolist()), 0.0
        )  # built lazily by tantivy: unused when every term is rare
        score = np.zeros((len(terms), len(hits)), np.float32)
        first: dict[int, str] = {}
        for i, t in enumerate(terms):
            if not ldf[t]:
                continue
            term_q = tantivy.Query.term_query(ts, field, t)
            if ldf[t] <= _WHOLE_POSTINGS:  # reading the whole posting list is cheaper
                q, limit = term_q, ldf[t]
            else:
                q = tantivy.Query.boolean_query(
                    [(tantivy.Occur.Must, among), (tantivy.Occur.Must, term_q)]
                )
                limit = len(hits)
            for sc, a in lex.searcher.search(q, limit, count=False).hits:
                j = pos.get((a.segment_ord, a.doc))
                if j is not None:
                    score[i, j] = sc
                    first.setdefault(j, t)
        lengths = self._lengths.setdefault(field, {})
        dl = np.zeros(len(hits), np.int64)
        for j, (_, a) in enumerate(hits):
            got = lengths.get(int(nids[j]))
            if got is None and j in first:
                q = tantivy.Query.term_query(ts, field, first[j])
                got = term_evidence(q.explain(lex.searcher, a).to_json(), [first[j]])[1]
                lengths[int(nids[j])] = got
            dl[j] = got or 0
        tf = np.zeros((len(terms), len(hits)), np.int64)
        avg = local.avgdl
        norm = K1 * (np.float32(1.0) - B + B * dl.astype(np.float32) / avg)
        for i, t in enumerate(terms):
            has = score[i] > 0
            if not has.any():
                continue
            w = np.float32(idf(ldf[t], local.docs) * (np.float32(1.0) + K1))
            s = score[i][has]
            est = np.rint(s * norm[has] / np.maximum(w - s, np.float32(1e-30)))
            tf[i, has] = np.maximum(est, 1).astype(np.int64)
        # check: the frequencies give back tantivy's local scores; re-read any that do not
        for i, t in enumerate(terms):
            has = score[i] > 0
            if not has.any():
                continue
            w = np.float32(idf(ldf[t], local.docs) * (np.float32(1.0) + K1))
            f = tf[i].astype(np.float32)
            back = w * f / (f + norm)
            bad = has & (np.abs(back - score[i]) > score[i] * np.float32(2e-6))
            for j in np.flatnonzero(bad).tolist():
                got, dl[j] = term_evidence(query.explain(lex.searcher, hits[j][1]).to_json(), terms)
                tf[:, j] = [got.get(x, 0) for x in terms]
        return tf, dl

    def _phrase_freqs(
        self,
        field: str,
        held: Sequence[tuple[tuple[str, ...], float, np.float32, np.float32]],
        local: FieldStats,
        hits: list,
        nids: np.ndarray,
        dl: np.ndarray,
    ) -> np.ndarray:
        """How often each phrase of ``held`` occurs in each candidate (phrases x hits), from
        its local phrase score as :meth:`_evidence` reads a term's; ``dl`` is completed for a
        candidate only a phrase matched. A frequency that does not give the score back is
        read from the explanation."""
        lex = self.snap.lexical
        ts = lex.tschema
        pos = {(a.segment_ord, a.doc): j for j, (_, a) in enumerate(hits)}
        among = tantivy.Query.const_score_query(
            tantivy.Query.term_set_query(ts, "nid", nids.tolist()), 0.0
        )
        lengths = self._lengths.setdefault(field, {})
        pf = np.zeros((len(held), len(hits)), np.int64)
        for k, (words, _, local_idf, _) in enumerate(held):
            phrase = tantivy.Query.phrase_query(ts, field, list(words))
            q = tantivy.Query.boolean_query(
                [(tantivy.Occur.Must, among), (tantivy.Occur.Must, phrase)]
            )
            score = np.zeros(len(hits), np.float32)
            for sc, a in lex.searcher.search(q, len(hits), count=False).hits:
                j = pos.get((a.segment_ord, a.doc))
                if j is not None:
                    score[j] = sc
            has = score > 0
            for j in np.flatnonzero(has & (dl == 0)).tolist():
                _, dl[j] = freq_and_length(phrase.explain(lex.searcher, hits[j][1]).to_json())
                lengths[int(nids[j])] = int(dl[j])
            norm = K1 * (np.float32(1.0) - B + B * dl.astype(np.float32) / local.avgdl)
            w = np.float32(local_idf * (np.float32(1.0) + K1))
            est = np.rint(score[has] * norm[has] / np.maximum(w - score[has], np.float32(1e-30)))
            pf[k, has] = np.maximum(est, 1).astype(np.int64)
            f = pf[k].astype(np.float32)
            back = w * f / (f + norm)
            bad = has & (np.abs(back - score) > score * np.float32(2e-6))
            for j in np.flatnonzero(bad).tolist():
                pf[k, j], _ = freq_and_length(phrase.explain(lex.searcher, hits[j][1]).to_json())
        return pf

    # -- the rest of the port, in local nids --------------------------------------------------
    def match(
        self, dim: str, kind: MatchKind, tokens: Sequence[str], among: np.ndarray
    ) -> np.ndarray:
        return self.snap.match(dim, kind, tokens, among)

    def match_all(
        self,
        dim: str,
        kind: MatchKind,
        tokens: Sequence[str],
        limit: int,
        where: Where | None = None,
    ) -> np.ndarray:
        return self.snap.match_all(dim, kind, tokens, limit, where)

    def dense(
        self, dim: str, q: np.ndarray, depth: int, where: Where | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        if dim not in self.snap.vector_dims():
            return np.zeros(0, np.uint64), np.zeros(0, np.float32)
        return self.snap.dense(dim, q, depth, where)

    def vectors_of(self, dim: str, ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return self.snap.vectors_of(dim, ids)

    def dense_sample(self, dim: str) -> tuple[np.ndarray, int]:
        """The shard's seeded sample of ``dim`` and its live row count."""
        if dim not in self.snap.vector_dims():
            return np.zeros((0, 0), np.float32), 0
        return np.asarray(self.snap.dense_sample(dim)), self.snap.vector_count(dim)

    def records(self, nids: Sequence[int]) -> list[dict[str, Any]]:
        """Stored node records of live nids (the content the driver presents)."""
        return [self.snap.nodes.record(int(n)) for n in nids]

    def facts(self, nids: Sequence[int]) -> list[tuple[str, ...]]:
        """Uid, kind, path, URL and title of live nids (what the driver ranks pages by)."""
        return [tuple(f) for f in self.snap.nodes.facts_of(nids)]


def _top_stem(d: Any) -> tuple[int, str]:
    if not d.stems:
        return 0, ""
    stem, n = max(d.stems.items(), key=lambda kv: (kv[1], kv[0]))
    return n, stem


def _idf_sum(idfs: Iterable[np.float32]) -> np.float32:
    """A phrase's idf as tantivy sums it: its words' idfs, in order, in float32."""
    total = np.float32(0.0)
    for x in idfs:
        total = np.float32(total + x)
    return total
