"""The default MiniLM graph against another of its graphs: CPU per token, parity, and ranking on
every judged set, in one run.

    COGITAVE_DATA=../shared/data .venv/bin/python bench/encoder_graphs.py \
        [--other int8-static-v2] [--rounds 3] [--only fastapi,hugo] [--write]

Speed: the paragraphs of this project's docs (clipped at 700 characters, as the ``context``
text recipes clip a section) and 400 SciFact abstracts, encoded in length-sorted batches of 8 on
one thread by each graph's own encoder (the sessions its recipe makes), graphs taking turns
round by round; CPU time of the process, the best round per graph. Parity: cosine to the
stored fp32 vectors of the tests' fixed texts with a word (the CI bar is 0.99), and between
the two graphs' vectors of the paragraphs.

Ranking: each docs tree of ``bench/docs_quality.py`` built by both graphs (the caches of
``docs_quality.py`` and ``docs_quality.py --graph OTHER``, built here when missing) and each of
its question sets scored ``planned``, grouped by page (``docs_search``); SciFact and Cranfield
built by both (``bench/.cache/q-GRAPH``, as ``bench/quality.py`` builds them) and scored
``planned`` (nDCG@10). Per set: both scores, the difference and the questions that moved.
``--write`` puts the tables in section ``encoder_graphs`` of bench/RESULTS.md with the machine
noted.
"""

from __future__ import annotations

import argparse
import glob
import os
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

import docs_quality  # noqa: E402
import quality  # noqa: E402
from _machine import machine_line, write_section  # noqa: E402
from encoders import abstracts  # noqa: E402

from cogitave.eval.docs import (  # noqa: E402
    collection_search,
    evaluate_questions,
    read_url_questions,
)
from cogitave.expand.embed import OnnxMiniLMEncoder  # noqa: E402
from cogitave.expand.graphs import wanted_kind  # noqa: E402
from cogitave.expand.models import MINILM  # noqa: E402


def paragraphs(limit: int = 1200) -> list[str]:
    out: list[str] = []
    for f in sorted(glob.glob(str(HERE.parent / "docs" / "**" / "*.md"), recursive=True)):
        for para in Path(f).read_text().split("\n\n"):
            if len(para) > 40:
                out.append(para[:700])
    return out[:limit]


def speed(
    encs: dict[str, OnnxMiniLMEncoder], data: Path, rounds: int
) -> tuple[list[str], dict[str, np.ndarray]]:
    """CPU ms per token of each graph on one thread, best of ``rounds`` alternating rounds."""
    graphs = list(encs)
    tokenizer = encs[graphs[0]]._load()[1]
    corpora = {"docs paragraphs": paragraphs(), "SciFact abstracts": abstracts(data, 400)}
    best: dict[tuple[str, str], float] = {}
    vectors: dict[str, np.ndarray] = {}
    tokens = {k: sum(len(e.ids) for e in tokenizer.encode_batch(v)) for k, v in corpora.items()}
    for r in range(rounds):
        order = graphs[r % len(graphs) :] + graphs[: r % len(graphs)]
        for g in order:
            for name, texts in corpora.items():
                t = time.process_time()
                v = encs[g].encode(texts)
                spent = time.process_time() - t
                best[(g, name)] = min(best.get((g, name), spent), spent)
                if name == "docs paragraphs":
                    vectors[g] = v
    lines = [
        "| graph | " + " | ".join(f"{k}: ms CPU / token" for k in corpora) + " | vs "
        f"`{graphs[-1]}` |",
        "|---" * (len(corpora) + 2) + "|",
    ]
    for g in graphs:
        cells = [1000 * best[(g, k)] / tokens[k] for k in corpora]
        ratio = [best[(g, k)] / best[(graphs[-1], k)] for k in corpora]
        lines.append(
            f"| `{g}` | " + " | ".join(f"{c:.4f}" for c in cells) + " | "
            + " / ".join(f"{x:.2f}x" for x in ratio) + " |"
        )  # fmt: skip
    sizes = ", ".join(f"{k} {len(v)} texts, {tokens[k]:,} tokens" for k, v in corpora.items())
    return [f"One thread, best of {rounds} alternating rounds; {sizes}.", "", *lines], vectors


def parity(encs: dict[str, OnnxMiniLMEncoder], vectors: dict[str, np.ndarray]) -> list[str]:
    from tests.expand.helpers import REFERENCE_FILE, fixed_texts, text_key

    texts = [t for t in fixed_texts() if any(c.isalnum() for c in t)]
    with np.load(REFERENCE_FILE) as stored:
        ref = np.stack([stored[text_key(t)] for t in texts])
    lines = ["| graph | fixed texts: min cosine to fp32 | mean | worst text |", "|---|---|---|---|"]
    for g, enc in encs.items():
        cos = (np.concatenate([enc.encode([t]) for t in texts]) * ref).sum(1)
        worst = texts[int(np.argmin(cos))][:40].replace("|", "\\|").replace("\n", " ")
        lines.append(f"| `{g}` | {cos.min():.4f} | {cos.mean():.4f} | {worst!r} |")
    a, b = (vectors[g] for g in encs)
    between = (a * b).sum(1)
    lines += [
        "",
        f"Between the two graphs, {len(between)} docs paragraphs: min cosine "
        f"{between.min():.4f}, mean {between.mean():.4f}.",
    ]
    return lines


def ranking(graphs: list[str], data: Path, only: set[str]) -> list[str]:
    new, old = graphs
    lines = [
        f"| set | `{old}` | `{new}` | difference | questions moved (better / worse) |",
        "|---|---|---|---|---|",
    ]
    moved_lines: list[str] = []
    for name, tree in docs_quality.trees(data).items():
        if (only and name not in only) or not tree.exists():
            continue
        cols = {g: docs_quality.build(name, tree, graph=None if g == new else g) for g in graphs}
        for label, path in docs_quality.question_sets(name):
            qs = read_url_questions(path)
            scores = {
                g: evaluate_questions(
                    "planned", qs, collection_search(cols[g], "planned", group_by_page=True)
                )
                for g in graphs
            }
            per = {g: {o.qid: o for o in scores[g].outcomes} for g in graphs}
            up = down = 0
            for qid, o in per[new].items():
                before = per[old][qid]
                d = o.metrics["mrr"] - before.metrics["mrr"]
                if abs(d) > 1e-9:
                    up, down = up + (d > 0), down + (d < 0)
                    moved_lines.append(
                        f"- {label} `{qid}`: reciprocal rank {before.metrics['mrr']:.2f} -> "
                        f"{o.metrics['mrr']:.2f} (top: `{before.pages[0] if before.pages else '-'}`"
                        f" -> `{o.pages[0] if o.pages else '-'}`)"
                    )
            m = {g: scores[g].metrics for g in graphs}
            lines.append(
                f"| {label} (MRR / Hit@1 / nDCG@5) | {m[old]['mrr']:.3f} / {m[old]['hit@1']:.3f}"
                f" / {m[old]['ndcg@5']:.3f} | {m[new]['mrr']:.3f} / {m[new]['hit@1']:.3f} / "
                f"{m[new]['ndcg@5']:.3f} | {m[new]['mrr'] - m[old]['mrr']:+.3f} / "
                f"{m[new]['hit@1'] - m[old]['hit@1']:+.3f} / "
                f"{m[new]['ndcg@5'] - m[old]['ndcg@5']:+.3f} | {up} / {down} |"
            )
            print(lines[-1], flush=True)
    for name in ("scifact", "cranfield"):
        if only and name not in only:
            continue
        src = data / name
        if not src.is_dir():
            continue
        qs, rels = quality.queries(name, src)
        per: dict[str, dict[str, float]] = {}
        for g in graphs:
            col, _ = quality.build(name, src, HERE / ".cache" / f"q-{g}", graph=g)
            per[g] = quality.per_query_ndcg(quality.runs(col, "planned", qs, rels), rels)
        a, b = np.mean(list(per[old].values())), np.mean(list(per[new].values()))
        up = sum(per[new][q] > per[old][q] + 1e-9 for q in per[new])
        down = sum(per[new][q] < per[old][q] - 1e-9 for q in per[new])
        lines.append(f"| {name} (nDCG@10) | {a:.4f} | {b:.4f} | {b - a:+.4f} | {up} / {down} |")
        print(lines[-1], flush=True)
    return [*lines, "", "Questions of the docs sets that moved:", "", *moved_lines]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    data = os.environ.get("COGITAVE_DATA") or HERE.parent.parent / "shared" / "data"
    ap.add_argument("--data", type=Path, default=Path(data))
    ap.add_argument("--other", default="int8-static-v2", help="the graph to compare against")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--only", default="", help="comma-separated sets (default: all)")
    ap.add_argument("--skip-ranking", action="store_true")
    ap.add_argument("--write", action="store_true")
    args = ap.parse_args()
    default = wanted_kind(MINILM)
    graphs = [default, args.other]
    encs = {g: OnnxMiniLMEncoder(graph=g, intra_op_num_threads=1) for g in graphs}
    for e in encs.values():
        e.warm()
    speed_lines, vectors = speed(encs, args.data, args.rounds)
    print("\n".join(speed_lines), flush=True)
    parity_lines = parity(encs, vectors)
    print("\n".join(parity_lines), flush=True)
    out = [
        f"## Encoder graphs: `{default}` (the default) against `{args.other}` "
        f"({time.strftime('%Y-%m-%d')})",
        "",
        machine_line(),
        "",
        f"`bench/encoder_graphs.py --other {args.other} --rounds {args.rounds}"
        + (f" --only {args.only}" if args.only else "")
        + "`",
        "",
        "### CPU per token",
        "",
        *speed_lines,
        "",
        "### Parity",
        "",
        *parity_lines,
        "",
    ]
    if not args.skip_ranking:
        only = {s for s in args.only.split(",") if s}
        out += ["### Ranking, planned", "", *ranking(graphs, args.data, only), ""]
    text = "\n".join(out) + "\n"
    print(text)
    if args.write:
        write_section("encoder_graphs", text)


if __name__ == "__main__":
    main()
