"""The Cranfield collection: ``cran.all.1400`` records, ``cran.qry`` queries, ``cranqrel``.

A SMART-format collection (:mod:`cogitave.ingest.smart`): records are ``.I n`` followed by
``.T`` title, ``.A`` authors, ``.B`` bibliography and ``.W`` abstract; title and abstract are
the node's text, authors and bibliography its ``meta``.

The trap: ``cranqrel`` numbers queries by their *position* in ``cran.qry`` (1..225), not by
their ``.I`` numbers (001, 002, 004, ...). Queries are therefore keyed by position here.
Grade ``-1`` (no relevance) is dropped; the others (1..4, 1 most relevant) are mapped to gains
``5 - grade`` so that graded nDCG rewards the most relevant documents most.
"""

from __future__ import annotations

from pathlib import Path

from cogitave.ingest import smart


def read_queries(path: str | Path) -> dict[str, str]:
    """``{position: text}`` with positions 1..N as strings (what cranqrel uses)."""
    return smart.read_queries(path, by="position")


def read_qrels(path: str | Path) -> dict[str, dict[str, int]]:
    """``{query position: {doc id: gain}}``; gain = 5 - grade, grade -1 dropped."""
    return smart.read_qrels(path, graded=True)
