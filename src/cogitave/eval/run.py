"""Evaluate systems of one collection on a query set: the same queries, the same snapshot."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from cogitave.collection import Collection
from cogitave.errors import QueryError
from cogitave.eval.metrics import Qrels, evaluate
from cogitave.query.types import MAX_QUERY_CHARS, MAX_QUERY_TERMS, WORDS, SearchRequest

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
    col: Collection,
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
    col: Collection,
    systems: Sequence[str],
    queries: Mapping[str, str],
    qrels: Qrels,
    *,
    on_query: Callable[[], None] | None = None,
) -> list[SystemScore]:
    return [run_system(col, s, queries, qrels, on_query=on_query) for s in systems]
