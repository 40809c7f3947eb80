"""The planner under other settings, on every judged set, against plain hybrid, in one run.

    .venv/bin/python bench/settings_sweep.py \\
        --variant "no feedback: feedback.enabled=false" \\
        --variant "weight 0: fusion.score_weight=0; feedback.enabled=false" [--write]

A variant is ``label: section.key=value; ...`` (values as ``cogitave settings --set`` reads
them). Uses the cached builds of ``bench/quality.py`` (``--cache``, default
``bench/.cache/q2``: SciFact, Cranfield, CISI, CACM, MED, ADI), ``bench/docs_quality.py``
(FastAPI, Hugo and this project's docs; ``--data`` or ``COGITAVE_DATA``) and
``bench/facets.py`` (the Debian facet set and its fields-only control); run those first, a
set without its build is skipped.
Per set: hybrid, planned with the default settings and planned with each variant, an engine
over the same snapshot with the settings changed (nothing re-indexed): nDCG@10 (nDCG@5 over
pages for the docs questions, grouped as ``docs_search`` returns them) and the per-query wins
and losses against hybrid; then the mean over the sets. A default is chosen on the mean over
every set, never on one. A second table gives the latency of the same runs (p50 / p95 ms per
search, variants back to back: a ratio within a row is what it costs).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import time
import types
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path

import numpy as np
from _machine import machine_line, write_section
from encoders import ir_collection

from cogitave import Collection, SearchRequest
from cogitave.config import Settings
from cogitave.errors import QueryError
from cogitave.eval.docs import evaluate_questions, read_url_questions
from cogitave.expand.embed import DEFAULT_ENCODER, canonical_name
from cogitave.query.engine import Engine

HERE = Path(__file__).resolve().parent
Search = Callable[[SearchRequest], object]
# One judged set: its name, and a function from a system's search to per-query scores.
Scorer = Callable[[Callable[[SearchRequest], object]], dict[str, float]]


def ir_sets(
    cache: Path, data: Path, classic: Path, encoder: str
) -> Iterator[tuple[str, Collection, Scorer]]:
    import quality as q

    for name in q.DATASETS:
        src = q.source(name, data, classic)
        if not src.is_dir() or not Collection.exists(cache / name):
            print(f"skipping {name}: build it with bench/quality.py", flush=True)
            continue
        col, _ = q.build(name, src, cache, encoder)
        qs, rels = q.queries(name, src)

        def score(search: Search, qs: Mapping = qs, rels: Mapping = rels) -> dict[str, float]:
            return q.per_query_ndcg(q.runs_of(search, qs, rels), rels)  # type: ignore[arg-type]

        yield name, col, score


def docs_sets(data: Path, encoder: str) -> Iterator[tuple[str, Collection, Scorer]]:
    import docs_quality as dq

    for name, tree in dq.trees(data).items():
        if not tree.exists() or not (dq.cache_of(encoder) / name / ".built").is_file():
            print(f"skipping {name}: build it with bench/docs_quality.py", flush=True)
            continue
        col = dq.build(name, tree, encoder=encoder)
        questions = read_url_questions(dq.QUESTIONS / f"{name}.jsonl")

        def score(search: Search, questions: list = questions) -> dict[str, float]:
            def one(text: str) -> list:
                try:
                    req = SearchRequest(query=text, limit=5, group_by_page=True)
                    return search(req).results  # type: ignore[attr-defined, no-any-return]
                except QueryError:
                    return []

            sc = evaluate_questions("planned", questions, one)
            return {o.qid: o.metrics["ndcg@5"] for o in sc.outcomes}

        yield name, col, score


def facet_sets() -> Iterator[tuple[str, Collection, Scorer]]:
    import facets as f

    try:
        pkgs = f.load_index(None)
    except (OSError, subprocess.CalledProcessError) as e:
        print(f"skipping the facet sets: no Debian package index ({e})", flush=True)
        return
    queries = f.read_queries(f.QUERIES)
    chosen = f.select(pkgs, queries, 6000, 15)
    qrels = f.judge(chosen, queries)
    texts = {x["qid"]: x["text"] for x in queries}
    for facets, name in ((True, "facets"), (False, "fields")):
        col, _ = f.build(chosen, facets, HERE / ".cache" / "facets")

        def score(search: Search) -> dict[str, float]:
            shim = types.SimpleNamespace(
                search=lambda r: search(SearchRequest(query=r.query, limit=r.limit))
            )
            return f.per_query_ndcg(shim, "planned", texts, qrels)  # type: ignore[no-any-return]

        yield name, col, score


def searcher(
    col: Collection, settings: Settings | None, mode: str, ms: list[float] | None = None
) -> Search:
    """A search in ``mode`` under ``settings``; each call's time is appended to ``ms``."""
    eng = Engine(col.snapshot, settings) if settings is not None else col.engine()

    def search(req: SearchRequest) -> object:
        t0 = time.perf_counter()
        res = eng.search(
            SearchRequest(
                query=req.query, limit=req.limit, mode=mode, group_by_page=req.group_by_page
            )
        )
        if ms is not None:
            ms.append((time.perf_counter() - t0) * 1000)
        return res

    return search


def _ms(took: list[float]) -> str:
    return f"{np.percentile(took, 50):.1f} / {np.percentile(took, 95):.1f}" if took else "-"


def parse_variant(text: str) -> tuple[str, list[str]]:
    label, sep, sets = text.partition(":")
    if not sep:
        raise SystemExit(f"--variant {text!r}: expected 'label: section.key=value; ...'")
    return label.strip(), [s.strip() for s in sets.split(";") if s.strip()]


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--variant", action="append", default=[])
    ap.add_argument(
        "--encoder",
        default=DEFAULT_ENCODER,
        help="the sets built with this encoder (another than the default: the IR and docs "
        "builds bench/encoders.py reads; no facet sets)",
    )
    ap.add_argument("--cache", type=Path, default=None, help="the IR builds (default: q2)")
    ap.add_argument(
        "--data",
        type=Path,
        default=Path(os.environ.get("COGITAVE_DATA", HERE.parent.parent / "shared" / "data")),
    )
    ap.add_argument("--classic", type=Path, default=HERE / ".cache" / "collections")
    ap.add_argument("--only", default="", help="comma-separated set names (default: every set)")
    ap.add_argument("--write", action="store_true")
    args = ap.parse_args()
    encoder = canonical_name(args.encoder)
    default = encoder == DEFAULT_ENCODER
    # the IR builds bench/encoders.py reads (q2, q2-bge), and a section per encoder
    cache = args.cache or ir_collection("-", encoder).parent
    short = cache.name.removeprefix("q2").removeprefix("-")
    only = {x.strip() for x in args.only.split(",") if x.strip()}
    variants = [parse_variant(v) for v in args.variant]
    for _, sets in variants:
        Settings().with_sets(sets)  # a bad key fails now, not after an hour
    labels = ["default", *(label for label, _ in variants)]
    head = "| set | hybrid | " + " | ".join(f"planned: {x}" for x in labels) + " |"
    lines = [head, "|---" * (2 + len(labels)) + "|"]
    ms_lines = [head.replace("| set | hybrid |", "| set | hybrid ms |"), lines[1]]
    means: dict[str, list[float]] = {x: [] for x in ["hybrid", *labels]}
    sets = [
        *ir_sets(cache, args.data, args.classic, encoder),
        *docs_sets(args.data, encoder),
        *(facet_sets() if default else ()),
    ]
    sets = [s for s in sets if not only or s[0] in only]
    for name, col, score in sets:
        for mode in ("planned", "hybrid"):  # warm: every text either embeds is cached
            score(searcher(col, None, mode))
        took: list[float] = []
        hyb = score(searcher(col, None, "hybrid", took))
        cells = [f"{np.mean(list(hyb.values())):.4f}"]
        ms_cells = [_ms(took)]
        means["hybrid"].append(float(np.mean(list(hyb.values()))))
        base = col.snapshot.settings
        for label, changes in [("default", []), *variants]:
            took = []
            per = score(searcher(col, base.with_sets(changes), "planned", took))
            ms_cells.append(_ms(took))
            m = float(np.mean(list(per.values())))
            wins = sum(per[k] > hyb[k] + 1e-9 for k in per)
            losses = sum(per[k] < hyb[k] - 1e-9 for k in per)
            cells.append(f"{m:.4f} ({wins}/{losses})")
            means[label].append(m)
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
        ms_lines.append(f"| {name} | " + " | ".join(ms_cells) + " |")
        print(lines[-1], flush=True)
    lines.append(
        f"| mean over {len(sets)} sets | "
        + " | ".join(f"{np.mean(v):.4f}" for v in means.values())
        + " |"
    )
    spec = "; ".join(f"**{label}**: `{'; '.join(s)}`" for label, s in variants) or "none"
    out = (
        f"\n## Planner settings on every judged set{'' if default else ', ' + encoder} "
        f"({time.strftime('%Y-%m-%d')})\n\n"
        f"{machine_line()}\n\n`.venv/bin/python bench/settings_sweep.py"
        f"{'' if default else ' --encoder ' + args.encoder}` with variants {spec}. "
        "nDCG@10 (docs questions: nDCG@5 over pages, grouped), in brackets the per-query "
        "wins/losses of planned against hybrid. Every variant is an engine over the same "
        f"snapshot with the settings changed.\n\n" + "\n".join(lines) + "\n\n"
        "Latency of the same runs, ms per search p50 / p95 (after one unmeasured pass of "
        "planned and hybrid, so every query embedding is cached; variants back to back, so "
        "compare within a row):\n\n" + "\n".join(ms_lines) + "\n"
    )
    print(out)
    if args.write:
        write_section("settings_sweep" if default else f"settings_sweep_{short}", out)


if __name__ == "__main__":
    main()
