"""Re-indexing a docs tree: first index, no-op, one page edited, deleted, added.

Each corpus (a copy of the tree in a temporary folder) goes through the steps of the CLI's
``cogitave index DIR --format markdown`` (read the tree, sync it as one source) with the
collection's real encoder:

1. first index of the whole tree;
2. the same tree again (no-op: nothing changed, no new root);
3. one page edited (a sentence appended to one paragraph);
4. one page deleted (its nodes go, and links to it change the pages that had them);
5. one page added (new text, never embedded before).

For each step: wall time (reading the tree included), texts sent to the encoder, texts whose
vector was reused, nodes added/changed/deleted, and the time as a share of the first index.
After every step the live nodes are checked against the tree: the source's uids are exactly
the tree's, and every stored record equals the one read from the tree.

    .venv/bin/python bench/sync.py [--corpus fastapi,hugo] [--encoder NAME] [--write]

Prints a markdown table; ``--write`` puts it in its section of bench/RESULTS.md with the machine.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from _machine import machine_line, write_section  # noqa: E402

from cogitave import Collection  # noqa: E402
from cogitave.expand.embed import DEFAULT_ENCODER  # noqa: E402
from cogitave.ingest.docs import read_docs as read_markdown  # noqa: E402
from cogitave.sync import node_hash  # noqa: E402

DATA = Path(os.environ.get("COGITAVE_DATA", HERE.parents[1] / "shared" / "data"))
CORPORA = {"fastapi": "docs_fastapi", "hugo": "docs_hugo"}
SOURCE = "docs"


def pages(tree: Path) -> list[Path]:
    """Markdown pages of the tree, sorted (the bench picks among them by a seeded draw)."""
    return sorted(p for p in tree.rglob("*.md") if p.is_file())


def edit(page: Path) -> None:
    """Append a sentence to the page's longest paragraph (one section's text changes)."""
    text = page.read_text()
    paras = text.split("\n\n")
    i = max(
        range(len(paras)),
        key=lambda k: len(paras[k]) if not paras[k].startswith(("```", "#", "---")) else 0,
    )
    paras[i] = paras[i].rstrip() + " This sentence was added to measure an incremental sync."
    page.write_text("\n\n".join(paras))


def new_page(beside: Path, rng: random.Random) -> Path:
    """A page of new text beside ``beside``: a title and three sections of words drawn from
    that page's vocabulary in a new order (no sentence of it was embedded before)."""
    words = sorted({w for w in beside.read_text().split() if w.isalpha()}) or ["word"]
    page = beside.parent / "sync-bench-added.md"
    parts = ["# A page added by the sync bench\n"]
    for k in range(3):
        parts.append(f"## Section {k + 1}\n\n" + " ".join(rng.choices(words, k=80)) + ".\n")
    page.write_text("\n".join(parts))
    return page


def check(col: Collection, tree: Path) -> int:
    """The source's nodes equal the tree's, record by record; returns the node count."""
    batch = read_markdown(tree, None)
    want = {n.uid: node_hash(n) for n in batch.nodes}
    have = set(col.source_uids(SOURCE))
    if have != set(want):
        raise SystemExit(
            f"uids differ: {len(have - set(want))} extra, {len(set(want) - have)} missing"
        )
    snap = col.snapshot
    for uid, h in want.items():
        if node_hash(snap.nodes.node(snap.nodes.nid_of[uid])) != h:
            raise SystemExit(f"stored node {uid} differs from the tree")
    if len(col) != len(want):
        raise SystemExit(f"{len(col)} live nodes, the tree has {len(want)}")
    return len(want)


def run(name: str, encoder: str, rng: random.Random) -> list[dict[str, object]]:
    src = DATA / CORPORA[name]
    if not src.is_dir():
        raise SystemExit(f"{src} not found (set COGITAVE_DATA)")
    rows: list[dict[str, object]] = []
    with tempfile.TemporaryDirectory(prefix="sync-bench-") as tmp:
        tree = Path(tmp) / "tree"
        shutil.copytree(src, tree)
        path = Path(tmp) / "col"
        all_pages = pages(tree)
        edited, deleted = rng.sample(all_pages, 2)
        col: Collection | None = None

        def step(label: str, change: str) -> None:
            nonlocal col
            t0 = time.perf_counter()
            batch = read_markdown(tree, None)
            if col is None:
                col = Collection.create(path, batch.schema, encoder=encoder)
            res = col.sync(SOURCE, batch.nodes)
            wall = time.perf_counter() - t0
            nodes = check(col, tree)
            rows.append(
                {
                    "corpus": name,
                    "step": label,
                    "change": change,
                    "wall": wall,
                    "encoded": res.encoded,
                    "reused": res.reused,
                    "diff": f"+{len(res.added)} ~{len(res.changed)} -{len(res.deleted)}",
                    "root": "new" if res.root else "none",
                    "nodes": nodes,
                }
            )
            print(rows[-1], flush=True)

        step("first index", f"{len(all_pages)} pages")
        step("no-op re-index", "nothing")
        edit(edited)
        step("one page edited", str(edited.relative_to(tree)))
        deleted.unlink()
        step("one page deleted", str(deleted.relative_to(tree)))
        added = new_page(edited, rng)
        step("one page added", str(added.relative_to(tree)))
    return rows


def table(rows: list[dict[str, object]]) -> str:
    out = [
        "| corpus | step | page | wall s | share of first | texts encoded | reused "
        "| +added ~changed -deleted | root | live nodes |",
        "|---|---|---|---:|---:|---:|---:|---|---|---:|",
    ]
    first: dict[object, float] = {}
    for r in rows:
        first.setdefault(r["corpus"], float(r["wall"]))  # type: ignore[arg-type]
        share = float(r["wall"]) / first[r["corpus"]]  # type: ignore[arg-type]
        out.append(
            f"| {r['corpus']} | {r['step']} | {r['change']} | {float(r['wall']):.2f} | "  # type: ignore[arg-type]
            f"{share:.2%} | {r['encoded']} | {r['reused']} | {r['diff']} | {r['root']} "
            f"| {r['nodes']} |"
        )
    return "\n".join(out) + "\n"


class HashedEncoder:
    """A stand-in encoder for trying the script quickly (``--encoder stub``): hashed words."""

    name = "bench/hashed-words-384"
    dim = 384

    def encode(self, texts, *, batch_size=64, progress=None):  # type: ignore[no-untyped-def]
        import numpy as np

        out = np.zeros((len(texts), self.dim), np.float32)
        for i, t in enumerate(texts):
            for w in t.lower().split():
                out[i, hash(w) % self.dim] += 1.0
        out /= np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-9)
        if progress:
            progress(len(texts))
        return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", default="fastapi,hugo", help="comma-separated: fastapi, hugo")
    ap.add_argument("--encoder", default=DEFAULT_ENCODER)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--write", action="store_true", help="replace its section of bench/RESULTS.md")
    args = ap.parse_args()
    if args.encoder == "stub":
        from cogitave.expand.embed import register_encoder

        register_encoder(HashedEncoder.name, HashedEncoder)
        args.encoder = HashedEncoder.name
    rows: list[dict[str, object]] = []
    for name in args.corpus.split(","):
        rows += run(name.strip(), args.encoder, random.Random(args.seed))
    body = table(rows)
    print(body)
    if args.write:
        cmd = "bench/sync.py " + " ".join(sys.argv[1:])
        head = f"## Sync: re-indexing a docs tree ({time.strftime('%Y-%m-%d')})\n\n"
        write_section(
            "sync", f"{head}{machine_line()}\n\n`{cmd}`, encoder {args.encoder}.\n\n{body}"
        )


if __name__ == "__main__":
    main()
