"""Evaluate systems of one collection on a query set: the same queries, the same snapshot."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from cogitave.errors import InputError, QueryError
from cogitave.eval.metrics import Qrels, evaluate
from cogitave.query.types import MAX_QUERY_CHARS, MAX_QUERY_TERMS, WORDS, SearchRequest
from cogitave.reader import Reader

if TYPE_CHECKING:
    from cogitave.eval.docs import UrlScore

DEPTH = 100


@dataclass(frozen=True)
class SystemScore:
    system: str
    metrics: dict[str, float]
    queries: int
    p50_ms: float
    p99_ms: float

    def to_dict(self) -> dict[str, float]:
        return {
            **{k: round(v, 4) for k, v in self.metrics.items()},
            "queries": self.queries,
            "p50_ms": round(self.p50_ms, 3),
            "p99_ms": round(self.p99_ms, 3),
        }


def fit_query(text: str) -> str:
    """A judged query as a user would send it: within the request's bounds of characters and
    words (a longer one, such as CISI's paper abstracts, keeps its first words)."""
    text = text[:MAX_QUERY_CHARS]
    words = list(WORDS.finditer(text))
    return text[: words[MAX_QUERY_TERMS - 1].end()] if len(words) > MAX_QUERY_TERMS else text


def run_system(
    col: Reader,
    system: str,
    queries: Mapping[str, str],
    qrels: Qrels,
    *,
    depth: int = DEPTH,
    on_query: Callable[[], None] | None = None,
) -> SystemScore:
    """Search every judged query with ``mode=system`` and score the run."""
    run: dict[str, dict[str, float]] = {}
    times: list[float] = []
    for qid, text in queries.items():
        if qid not in qrels:
            continue
        t0 = time.perf_counter()
        try:
            res = col.search(
                SearchRequest(query=fit_query(text), limit=depth, mode=system)  # type: ignore[arg-type]
            )
            run[qid] = {h.uid: float(depth - h.rank + 1) for h in res.results}
        except QueryError:
            run[qid] = {}
        times.append((time.perf_counter() - t0) * 1e3)
        if on_query:
            on_query()
    arr = np.asarray(times or [0.0])
    return SystemScore(
        system,
        evaluate(run, qrels),
        len(times),
        float(np.percentile(arr, 50)),
        float(np.percentile(arr, 99)),
    )


def run_systems(
    col: Reader,
    systems: Sequence[str],
    queries: Mapping[str, str],
    qrels: Qrels,
    *,
    on_query: Callable[[], None] | None = None,
) -> list[SystemScore]:
    return [run_system(col, s, queries, qrels, on_query=on_query) for s in systems]


JUDGED_FORMATS = ("beir", "cranfield", "smart")


def read_judged(fmt: str, queries: Path, qrels: Path) -> tuple[dict[str, str], Qrels]:
    """Queries and judgments of a test collection in ``fmt``: ``beir`` (queries.jsonl and a
    qrels .tsv), ``cranfield`` (cran.qry and cranqrel: queries keyed by position, graded),
    ``smart`` (a SMART .QRY and .REL: binary, queries by ``.I``)."""
    if fmt == "cranfield":
        from cogitave.eval import cranfield

        return cranfield.read_queries(queries), cranfield.read_qrels(qrels)
    if fmt == "smart":
        from cogitave.ingest import smart

        return smart.read_queries(queries), smart.read_qrels(qrels)
    if fmt == "beir":
        from cogitave.ingest import beir

        return beir.read_queries(queries), beir.read_qrels(qrels)
    raise InputError(f"--format must be one of {', '.join(JUDGED_FORMATS)} or urls, not {fmt!r}")


def evaluate_systems(
    reader: Reader,
    fmt: str,
    queries: Path,
    qrels: Path | None,
    systems: Sequence[str],
    *,
    group_by_page: bool = False,
) -> list[SystemScore] | list[UrlScore]:
    """Every system of ``systems`` (all the reader runs: empty) on a query set: judged
    (``fmt`` beir, cranfield, smart: nDCG@10, recall@100, MRR@10) or graded by page URL
    (``urls``: MRR, Hit@k, nDCG@5 over pages, ``group_by_page`` as docs_search, and what the
    docs_search answer of each question holds)."""
    names = list(systems) or list(reader.systems())
    if fmt == "urls":
        from cogitave.eval.docs import evaluate_url_systems

        return evaluate_url_systems(reader, queries, names, group_by_page=group_by_page)
    if qrels is None:
        raise InputError(f"--format {fmt} needs --qrels")
    return run_systems(reader, names, *read_judged(fmt, queries, qrels))
