"""Documentation trees as knowledge graphs: FastAPI (MkDocs) and Hugo docs.

    .venv/bin/python bench/docs_graph.py [--data ../shared/data] [--write]

For each tree: read time, publish time (BM25 + graph; no encoder, so the numbers show the
ingest and store work, not the encoder's), node counts by kind, edge counts by label, the
share of internal links resolved and the unresolved ones. Then, on the FastAPI graph, real
questions with and without the graph rerank: where the answering page ranks, and the
rerank's moves.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

from _machine import machine_line

from cogitave import Collection, SearchRequest
from cogitave.config import Rerank, Settings
from cogitave.ingest.markdown import read_markdown

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
from tests.ingest.test_docs_smoke import QUESTIONS  # noqa: E402

MORE_QUESTIONS = {
    "return a custom status code": "advanced/response-change-status-code",
    "how do I test my app": "tutorial/testing",
    "serve static files": "tutorial/static-files",
    "read settings from environment variables": "advanced/settings",
}


def build(tree: Path, tmp: Path, rerank: bool = True) -> tuple[Collection, dict]:
    t0 = time.perf_counter()
    batch = read_markdown(tree)
    read_s = time.perf_counter() - t0
    t1 = time.perf_counter()
    col = Collection.create(
        tmp, batch.schema, encoder=None, settings=Settings(rerank=Rerank(enabled=rerank))
    )
    col.add(batch.nodes)
    col.publish()
    info = {
        "read_s": read_s,
        "publish_s": time.perf_counter() - t1,
        "stats": batch.stats,
        "report": batch.report,
        "nodes": len(batch.nodes),
    }
    return col, info


def rank_of(col: Collection, q: str, page: str) -> tuple[int | None, list[dict]]:
    res = col.search(SearchRequest(query=q, limit=20))
    pages = [u.split("#")[0] for u in res.uids]
    moves = res.diagnostics.get("rerank", {}).get("moves", [])
    return (pages.index(page) + 1 if page in pages else None), moves


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", type=Path, default=HERE.parent.parent / "shared" / "data")
    ap.add_argument("--write", action="store_true")
    args = ap.parse_args()
    out = [
        f"\n## Documentation graphs ({time.strftime('%Y-%m-%d')})\n",
        machine_line(),
        "",
        "`.venv/bin/python bench/docs_graph.py --write` (no encoder: ingest + BM25 + graph).",
        "",
    ]
    with tempfile.TemporaryDirectory() as tmp:
        cols = {}
        for name in ("docs_fastapi", "docs_hugo"):
            col, info = build(args.data / name, Path(tmp) / name)
            cols[name] = col
            out.append(
                f"### {name}: {info['nodes']} nodes, read {info['read_s']:.1f} s, "
                f"publish {info['publish_s']:.1f} s\n"
            )
            lines = info["report"].strip().splitlines()
            more = [f"... ({len(lines) - 14} more lines)"] if len(lines) > 14 else []
            shown = lines[:14] + more
            out.append("```text\n" + "\n".join(shown) + "\n```\n")
        plain, _ = build(args.data / "docs_fastapi", Path(tmp) / "plain", rerank=False)
        out.append("### Graph rerank on the FastAPI docs (rank of the answering page)\n")
        out.append("| question | page | without rerank | with rerank | rerank moves |")
        out.append("|---|---|---|---|---|")
        for q, page in {**QUESTIONS, **MORE_QUESTIONS}.items():
            r0, _ = rank_of(plain, q, page)
            r1, moves = rank_of(cols["docs_fastapi"], q, page)
            out.append(f"| {q} | `{page}` | {r0 or '-'} | {r1 or '-'} | {len(moves)} |")
    text = "\n".join(out) + "\n"
    print(text)
    if args.write:
        with (HERE / "RESULTS.md").open("a") as f:
            f.write(text)


if __name__ == "__main__":
    main()
