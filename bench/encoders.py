"""The shipped encoders side by side: quality on every judged set, and encoding speed.

    COGITAVE_DATA=../shared/data .venv/bin/python bench/encoders.py [--quality] [--speed]
        [--graphs] [--sets scifact,cranfield,fastapi,hugo,cogitave] [--write]

Quality reads the collections the other benches cache, one per encoder: SciFact and Cranfield
from ``bench/.cache/q2`` (MiniLM, ``bench/quality.py``) and ``bench/.cache/q2-bge``
(``bench/quality.py --encoder bge --cache bench/.cache/q2-bge``); the docs sets from
``bench/.cache/docs_quality`` and ``docs_quality-bge-small-en-v1.5`` (``bench/docs_quality.py
[--encoder bge] --build-only``). A set missing for either encoder is skipped with a note. Every
system runs with each encoder over the same queries: nDCG@10 (judged sets) or nDCG@5 / MRR over
page URLs (docs questions, grouped by page as docs_search returns them), and per query, bge's
wins and losses against MiniLM (nDCG, ties within 1e-9). The default rule: the stronger model
becomes the default only if ``planned`` gains on the mean over the sets and loses on none by
more than 0.005, and its speed passes too.

Speed measures, in one process and interleaved call by call: query encoding (SciFact claims
and docs questions of 5 to 15 words, one at a time) and document encoding (SciFact abstracts,
batches of 8 as a publish sends them), for today's MiniLM graph (``shipped``), the derived
MiniLM graph (the default) and bge-small. Wall time on the encoder's default threads, and CPU
time of one thread (``intra_op_num_threads=1``; steadier on a loaded box). The load
average is printed beside each table. ``--graphs`` derives MiniLM graphs that keep fewer
products float, with fixed or dynamic activation ranges, and gives each one's parity (the CI
bar, on the tests' stored fp32 vectors), how far a text moves with its batch, and
speed against the shipped graph, in one run. ``--write`` puts the tables in their section of
bench/RESULTS.md.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Mapping
from pathlib import Path

import numpy as np
from _defaults import with_default_settings
from _machine import machine_line, write_section
from docs_quality import CACHE as DOCS_CACHE
from docs_quality import QUESTIONS, cache_of
from quality import SYSTEMS, per_query_ndcg, queries, runs

from cogitave import Collection
from cogitave.eval.docs import collection_search, evaluate_questions, read_url_questions
from cogitave.expand.embed import OnnxBgeSmallEncoder, OnnxEncoder, OnnxMiniLMEncoder
from cogitave.expand.models import BGE_SMALL, MINILM

HERE = Path(__file__).resolve().parent
IR_SETS = ("scifact", "cranfield")
DOCS_SETS = ("fastapi", "hugo", "cogitave")
ENCODERS = {"MiniLM": MINILM.name, "bge-small": BGE_SMALL.name}


def load() -> str:
    return "load {:.1f} {:.1f} {:.1f}".format(*os.getloadavg())


def ir_collection(name: str, encoder: str) -> Path:
    return HERE / ".cache" / ("q2" if encoder == MINILM.name else "q2-bge") / name


def docs_collection(name: str, encoder: str) -> Path:
    return (DOCS_CACHE if encoder == MINILM.name else cache_of(encoder)) / name


def wins_losses(a: dict[str, float], b: dict[str, float]) -> tuple[int, int, int]:
    wins = sum(a[q] > b[q] + 1e-9 for q in a)
    losses = sum(a[q] < b[q] - 1e-9 for q in a)
    return wins, losses, len(a) - wins - losses


def quality(
    sets: list[str], data: Path, fresh: bool = False
) -> tuple[list[str], dict[str, dict[str, float]]]:
    """Table lines, and per set each system's delta (bge - MiniLM); a set measured before is
    read from ``bench/.cache/encoders-<set>.json`` unless ``fresh``."""
    lines = [
        "| set | metric | system | MiniLM | bge-small | delta | bge wins | losses | ties |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    scores: dict[str, dict[str, float]] = {}
    for name in sets:
        if name in IR_SETS:
            paths = {k: ir_collection(name, v) for k, v in ENCODERS.items()}
        else:
            paths = {k: docs_collection(name, v) for k, v in ENCODERS.items()}
        done = HERE / ".cache" / f"encoders-{name}.json"
        if done.is_file() and not fresh:  # measured before (delete the file to measure again)
            saved = json.loads(done.read_text())
            lines += saved["lines"]
            scores[name] = saved["scores"]
            continue
        mark = len(lines)
        missing = [str(p) for p in paths.values() if not Collection.exists(p)]
        if missing:
            lines.append(f"| {name} | skipped: no {', '.join(missing)} |||||||| ")
            continue
        # Measured under today's default settings, as every other bench is.
        cols = {
            k: with_default_settings(Collection.open(p, encoder=ENCODERS[k]))
            for k, p in paths.items()
        }
        t0 = time.perf_counter()
        if name in IR_SETS:
            qs, rels = queries(name, data / name)
            for system in SYSTEMS:
                per = {k: per_query_ndcg(runs(c, system, qs, rels), rels) for k, c in cols.items()}
                means = {k: statistics.fmean(v.values()) for k, v in per.items()}
                w, lo, ti = wins_losses(per["bge-small"], per["MiniLM"])
                scores.setdefault(name, {})[system] = means["bge-small"] - means["MiniLM"]
                lines.append(
                    f"| {name} | nDCG@10 | {system} | {means['MiniLM']:.4f} | "
                    f"{means['bge-small']:.4f} | {means['bge-small'] - means['MiniLM']:+.4f} | "
                    f"{w} | {lo} | {ti} |"
                )
                print(lines[-1], flush=True)
        else:
            qs_docs = read_url_questions(QUESTIONS / f"{name}.jsonl")
            for system in SYSTEMS:
                got = {
                    k: evaluate_questions(
                        system, qs_docs, collection_search(c, system, group_by_page=True)
                    )
                    for k, c in cols.items()
                }
                per = {k: {o.qid: o.metrics["ndcg@5"] for o in g.outcomes} for k, g in got.items()}
                w, lo, ti = wins_losses(per["bge-small"], per["MiniLM"])
                a, b = got["MiniLM"].metrics, got["bge-small"].metrics
                scores.setdefault(name, {})[system] = b["ndcg@5"] - a["ndcg@5"]
                lines.append(
                    f"| {name} | nDCG@5 (MRR) | {system} | {a['ndcg@5']:.3f} ({a['mrr']:.3f}) | "
                    f"{b['ndcg@5']:.3f} ({b['mrr']:.3f}) | {b['ndcg@5'] - a['ndcg@5']:+.3f} | "
                    f"{w} | {lo} | {ti} |"
                )
                print(lines[-1], flush=True)
        print(f"{name}: {time.perf_counter() - t0:.0f} s, {load()}", flush=True)
        done.write_text(json.dumps({"lines": lines[mark:], "scores": scores[name]}))
    return lines, scores


def rule(scores: dict[str, dict[str, float]]) -> list[str]:
    """The default rule over the planned deltas (bge - MiniLM)."""
    planned = {s: d["planned"] for s, d in scores.items() if "planned" in d}
    if not planned:
        return []
    mean = statistics.fmean(planned.values())
    worst = min(planned, key=lambda s: planned[s])
    ok = mean > 0 and planned[worst] >= -0.005
    return [
        f"Planned, bge-small minus MiniLM: mean {mean:+.4f} over {len(planned)} sets; worst "
        f"{worst} {planned[worst]:+.4f}. Quality rule (gain on the mean, no set below "
        f"-0.005): {'passed' if ok else 'not passed'}."
    ]


# -- speed ------------------------------------------------------------------------------------
def short_queries(data: Path, n: int = 120) -> list[str]:
    """Claims and docs questions of 5 to 15 words."""
    lines = (data / "scifact" / "queries.jsonl").read_text().splitlines()
    texts = [json.loads(line)["text"] for line in lines if line.strip()]
    for name in DOCS_SETS:
        f = QUESTIONS / f"{name}.jsonl"
        if f.is_file():
            lines = f.read_text().splitlines()
            texts += [json.loads(line)["query"] for line in lines if line.strip()]
    picked = [t for t in texts if 5 <= len(t.split()) <= 15]
    rng = np.random.default_rng(5)
    return [picked[i] for i in rng.permutation(len(picked))[:n]]


def abstracts(data: Path, n: int = 96) -> list[str]:
    out = []
    with (data / "scifact" / "corpus.jsonl").open() as f:
        for line in f:
            d = json.loads(line)
            out.append(f"{d.get('title', '')} {d['text']}".strip())
            if len(out) >= n:
                break
    return out


def interleaved(
    encs: Mapping[str, OnnxEncoder],
    qs: list[str],
    docs: list[str],
    clock: Callable[[], float],
) -> tuple[dict[str, list[float]], dict[str, float]]:
    """Two rounds, each encoder in turn per call: ms per query (one at a time), and seconds
    spent on the documents (batches of 8, as a publish sends them)."""
    q_ms: dict[str, list[float]] = {k: [] for k in encs}
    d_s: dict[str, float] = dict.fromkeys(encs, 0.0)
    for _ in range(2):
        for q in qs:
            for k, e in encs.items():
                t = clock()
                e.encode_queries([q])
                q_ms[k].append((clock() - t) * 1000)
        for i in range(0, len(docs), 8):
            for k, e in encs.items():
                t = clock()
                e.encode(docs[i : i + 8])
                d_s[k] += clock() - t
    return q_ms, d_s


def speed(data: Path, threads: int | None) -> list[str]:
    """One table: query and document encoding of each graph, interleaved call by call."""
    encs: dict[str, OnnxEncoder] = {
        "MiniLM, shipped graph (today's)": OnnxMiniLMEncoder(
            graph="shipped", intra_op_num_threads=threads
        ),
        f"MiniLM, {MINILM.fast_graph.name if MINILM.fast_graph else 'shipped'} graph "
        "(the default)": OnnxMiniLMEncoder(graph="fast", intra_op_num_threads=threads),
        "bge-small (shipped int8 graph)": OnnxBgeSmallEncoder(intra_op_num_threads=threads),
    }
    for e in encs.values():
        e.warm()
    # one thread: the process's CPU time (onnxruntime runs a call's batches off the caller's
    # thread when there are several)
    clock: Callable[[], float] = time.process_time if threads == 1 else time.perf_counter
    qs, docs = short_queries(data), abstracts(data)
    before = load()
    q_ms, d_s = interleaved(encs, qs, docs, clock)
    base = next(iter(encs))
    how = "CPU time, one thread" if threads == 1 else "wall time, default threads"
    lines = [
        f"{how}; {len(qs)} queries x 2, {len(docs)} abstracts x 2; {before} -> {load()}",
        "",
        "| encoder, graph | query p50 ms | p95 ms | queries vs today | abstracts/s | vs today |",
        "|---|---|---|---|---|---|",
    ]
    for k in encs:
        p50, base50 = float(np.median(q_ms[k])), float(np.median(q_ms[base]))
        rate, base_rate = 2 * len(docs) / d_s[k], 2 * len(docs) / d_s[base]
        lines.append(
            f"| {k} | {p50:.2f} | {np.percentile(q_ms[k], 95):.2f} | {base50 / p50:.2f}x | "
            f"{rate:.2f} | {rate / base_rate:.2f}x |"
        )
        print(lines[-1], flush=True)
    return lines


# -- MiniLM graphs: which products stay float -------------------------------------------------
RECIPES = {
    "feed-forward outputs float, fixed ranges (int8-static-v2)": (None, True),
    "feed-forward outputs float, dynamic ranges (int8-per-channel-v1)": (None, False),
    "first 3 feed-forward outputs float, dynamic ranges": (3, False),
    "every MatMul int8, dynamic ranges": (0, False),
}


def graphs_table(data: Path) -> list[str]:
    """Parity and speed of MiniLM graphs that keep fewer products float, in one run: cosine to
    the stored fp32 vectors of the tests' fixed texts (the CI bar: >= 0.99 on every text with
    a word, alone and batched), cosine to the shipped graph on SciFact claims, and one-thread
    CPU time against the shipped graph, interleaved call by call."""
    sys.path.insert(0, str(HERE.parent))
    from tests.expand.helpers import REFERENCE_FILE, fixed_texts, text_key

    from cogitave.expand import graphs
    from cogitave.expand.models import GraphRecipe

    shipped = OnnxMiniLMEncoder(graph="shipped", intra_op_num_threads=1)
    shipped.warm()
    encs: dict[str, OnnxMiniLMEncoder] = {"shipped graph (today's)": shipped}
    tmp = Path(tempfile.mkdtemp(prefix="cogitave-recipes-"))
    tokenizer = shipped._load()[1]
    for label, (keep, static) in RECIPES.items():
        path = tmp / f"{keep}-{static}.onnx"
        recipe = GraphRecipe("bench", keep, static_activations=static)
        path.write_bytes(
            graphs.derive(shipped.model_path, recipe, lambda t: tokenizer.encode(t).ids)
        )
        encs[label] = OnnxMiniLMEncoder(graph="shipped", intra_op_num_threads=1, model_path=path)
    docs = [t for t in fixed_texts() if any(c.isalnum() for c in t)]
    with np.load(REFERENCE_FILE) as stored:
        ref = np.stack([stored[text_key(t)] for t in docs])
    lines_of = (data / "scifact" / "queries.jsonl").read_text().splitlines()
    claims = [json.loads(x)["text"] for x in lines_of if x.strip()][:300]
    claims_ref = shipped.encode(claims, batch_size=1)
    qs, abs_ = short_queries(data), abstracts(data, 48)
    before = load()
    q_ms, d_s = interleaved(encs, qs, abs_, time.process_time)
    lines = [
        f"CPU time, one thread; {len(qs)} queries x 2, {len(abs_)} abstracts x 2; "
        f"{before} -> {load()}. Parity: the tests' {len(docs)} fixed texts with a word, alone "
        f"and batched, against the stored fp32 vectors; {len(claims)} SciFact claims against "
        "the shipped graph.",
        "",
        "| MiniLM graph | fixed texts min | mean | claims min | mean | alone vs batched min "
        "| query p50 ms | queries vs today | abstracts/s | vs today |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    base = "shipped graph (today's)"
    for k, e in encs.items():
        batched, alone = e.encode(docs), np.concatenate([e.encode([t]) for t in docs])
        fixed = (np.concatenate([batched, alone]) * np.concatenate([ref, ref])).sum(1)
        moved = float((batched * alone).sum(1).min())
        cl = (e.encode(claims, batch_size=1) * claims_ref).sum(1)
        p50, base50 = float(np.median(q_ms[k])), float(np.median(q_ms[base]))
        rate, base_rate = 2 * len(abs_) / d_s[k], 2 * len(abs_) / d_s[base]
        lines.append(
            f"| {k} | {fixed.min():.4f} | {fixed.mean():.4f} | {cl.min():.4f} | {cl.mean():.4f} "
            f"| {moved:.4f} | {p50:.2f} | {base50 / p50:.2f}x | {rate:.2f} "
            f"| {rate / base_rate:.2f}x |"
        )
        print(lines[-1], flush=True)
    return lines


def main() -> None:
    ap = argparse.ArgumentParser()
    data = os.environ.get("COGITAVE_DATA") or HERE.parent.parent / "shared" / "data"
    ap.add_argument("--data", type=Path, default=Path(data))
    ap.add_argument("--sets", default=",".join([*IR_SETS, *DOCS_SETS]))
    ap.add_argument("--quality", action="store_true")
    ap.add_argument("--speed", action="store_true")
    ap.add_argument(
        "--graphs", action="store_true", help="MiniLM graphs keeping fewer products float"
    )
    ap.add_argument("--fresh", action="store_true", help="measure sets measured before again")
    ap.add_argument(
        "--append", type=Path, default=None, help="a markdown file added to the section's end"
    )
    ap.add_argument("--write", action="store_true")
    args = ap.parse_args()
    do_quality = args.quality or not (args.speed or args.graphs)
    do_speed = args.speed or not (args.quality or args.graphs)
    do_graphs = args.graphs or not (args.quality or args.speed)
    out = [f"\n## Encoders: MiniLM against bge-small ({time.strftime('%Y-%m-%d')})\n"]
    out += [machine_line(), "", "`.venv/bin/python bench/encoders.py --write`.", ""]
    if do_quality:
        start = load()
        sets = [s for s in args.sets.split(",") if s]
        lines, scores = quality(sets, args.data, args.fresh)
        out += [f"### Quality ({start} at the start, {load()} at the end)", "", *lines, ""]
        out += [*rule(scores), ""]
    if do_speed:
        out += ["### Encoding speed", "", *speed(args.data, 1), "", *speed(args.data, None), ""]
    if do_graphs:
        out += ["### MiniLM graphs: which products stay float", "", *graphs_table(args.data), ""]
    if args.append is not None:
        out += [args.append.read_text().strip("\n"), ""]
    text = "\n".join(out) + "\n"
    print(text)
    if args.write:
        write_section("encoders", text)


if __name__ == "__main__":
    main()
