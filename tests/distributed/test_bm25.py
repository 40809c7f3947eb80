from __future__ import annotations

import numpy as np
import tantivy

from cogitave.distributed.bm25 import FieldStats, idf, term_evidence, term_score, tokens_from


def test_idf_is_tantivys() -> None:
    assert float(idf(1, 2)) == np.float32(0.6931472)  # tantivy's own unit test value


def test_term_score_matches_the_formula() -> None:
    got = term_score(np.float32(2.0), np.array([3]), np.array([120]), np.float32(100.0))
    k = 1.2 * (1 - 0.75 + 0.75 * 120 / 100)
    assert abs(float(got[0]) - 2.0 * 2.2 * 3 / (3 + k)) < 1e-5


def test_field_stats_add_and_average() -> None:
    s = FieldStats(3, 30) + FieldStats(1, 2)
    assert s == FieldStats(4, 32) and float(s.avgdl) == 8.0
    assert FieldStats(0, 0).avgdl == 0
    assert tokens_from(5183, float(np.float32(1234567) / np.float32(5183))) == 1234567


def test_term_evidence_reads_tantivy_explanations(tmp_path) -> None:
    sb = tantivy.SchemaBuilder()
    sb.add_text_field("body", tokenizer_name="default")
    idx = tantivy.Index(sb.build(), path=str(tmp_path))
    w = idx.writer(heap_size=15_000_000, num_threads=1)
    w.add_document(tantivy.Document(body="apple apple pear plum"))
    w.add_document(tantivy.Document(body="pear"))
    w.commit()
    idx.reload()
    s = idx.searcher()
    q = tantivy.Query.boolean_query(
        [
            (tantivy.Occur.Should, tantivy.Query.term_query(idx.schema, "body", t))
            for t in ("apple", "pear", "kiwi")
        ]
    )
    (score, addr), *_ = s.search(q, 1).hits
    tf, dl = term_evidence(q.explain(s, addr).to_json(), ["apple", "pear", "kiwi"])
    assert tf == {"apple": 2, "pear": 1} and dl == 4
    # and the formula with the index's own statistics gives tantivy's score
    avg = np.float32(5) / np.float32(2)
    mine = term_score(idf(1, 2), np.array([2]), np.array([4]), avg) + term_score(
        idf(2, 2), np.array([1]), np.array([4]), avg
    )
    assert abs(float(mine[0]) - score) <= score * 1e-6
