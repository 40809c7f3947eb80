"""Documentation trees as knowledge graphs, one per format people publish.

    .venv/bin/python bench/docs_graph.py [--data ../shared/data] [--only NAME ...] [--write]

Trees (missing ones are skipped with the reason, never fetched from a network in tests):
- FastAPI (MkDocs) and Hugo (Hugo) from the shared data folder;
- the Python documentation (Sphinx, the ``_sources/*.rst.txt`` of a built tree): Debian's
  ``python3-doc`` package, downloaded here with ``apt-get download`` into ``bench/.cache``
  and unpacked with ``dpkg-deb -x``;
- React's docs (Next.js, MDX-flavoured Markdown), Vite's docs (VitePress) and Redux's docs
  (Docusaurus): put a snapshot of each repository's docs in ``bench/.cache/<name>`` first,
  e.g. ``git --git-dir=<clone> archive HEAD src/content next.config.js | tar -x -C
  bench/.cache/react``, ``... HEAD docs | tar -x -C bench/.cache/vite``, ``... HEAD docs
  website/docusaurus.config.ts | tar -x -C bench/.cache/redux``; VitePress's own docs
  (English in ``en/`` served at the root by ``rewrites``, seven other locales):
  ``git --git-dir=<vuejs/vitepress clone> archive HEAD docs | tar -x -C
  bench/.cache/vitepress``; graphql-kotlin's versioned Docusaurus site: ``git --git-dir=<clone>
  archive HEAD website/docs website/versioned_docs/version-10.x.x
  website/docusaurus.config.js website/versions.json | tar -x -C bench/.cache/gqlkotlin``;
  MyST-Parser's docs (a Sphinx source tree of MyST Markdown): ``git --git-dir=<clone> archive
  HEAD docs | tar -x -C bench/.cache/myst``; SWR's site (vercel/swr-site, Fumadocs,
  ``page.<lang>.mdx`` translations): ``git --git-dir=<clone> archive HEAD | tar -x -C
  bench/.cache/swr``; Starlight's own docs: ``git --git-dir=<withastro/starlight clone>
  archive HEAD docs | tar -x -C bench/.cache/starlight``.

For each tree: read time, publish time (BM25 + graph; no encoder, so the numbers show the
ingest and store work, not the encoder's), node counts by kind, edges by label, the share of
internal references resolved (links, ``:ref:``/``:doc:``/``:term:``; for Sphinx the
Python-domain roles are shown apart, since Sphinx itself leaves a role naming an undeclared
object as plain text). Then, on the FastAPI graph, real questions with and without the graph
rerank: where the answering page ranks, and the rerank's moves.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from _machine import machine_line, write_section

from cogitave import Collection, SearchRequest
from cogitave.config import Rerank, Settings
from cogitave.ingest.docs import read_docs as read_markdown

HERE = Path(__file__).resolve().parent
CACHE = HERE / ".cache"
sys.path.insert(0, str(HERE.parent))
from tests.ingest.test_docs_smoke import QUESTIONS  # noqa: E402

MORE_QUESTIONS = {
    "return a custom status code": "advanced/response-change-status-code",
    "how do I test my app": "tutorial/testing",
    "serve static files": "tutorial/static-files",
    "read settings from environment variables": "advanced/settings",
}


@dataclass(frozen=True)
class Tree:
    name: str
    fmt: str
    where: str  # "data" (shared data folder) or "cache" (bench/.cache)
    rel: str
    base_url: str | None = None


TREES = (
    Tree("fastapi", "MkDocs", "data", "docs_fastapi"),
    Tree("hugo", "Hugo", "data", "docs_hugo"),
    Tree("python", "Sphinx (built, .rst.txt)", "cache", "python"),
    Tree("react", "Next.js + MDX", "cache", "react", "https://react.dev"),
    Tree("vite", "VitePress", "cache", "vite"),
    Tree("vitepress", "VitePress (locales, rewrites)", "cache", "vitepress"),
    Tree("redux", "Docusaurus", "cache", "redux"),
    Tree("gqlkotlin", "Docusaurus (versioned)", "cache", "gqlkotlin"),
    Tree("myst", "Sphinx + MyST (sources)", "cache", "myst"),
    Tree("swr", "Next.js + Fumadocs (7 translations beside the pages)", "cache", "swr"),
    Tree("starlight", "Starlight (Astro; 16 other locales)", "cache", "starlight/docs"),
)


def python_docs() -> Path | None:
    """The built Python docs from Debian's python3-doc (downloaded once into bench/.cache)."""
    unpacked = CACHE / "py"
    found = sorted(unpacked.glob("usr/share/doc/python3*/html"))
    if found:
        return found[-1]
    CACHE.mkdir(exist_ok=True)
    try:
        subprocess.run(["apt-get", "download", "python3-doc"], cwd=CACHE, check=True,
                       capture_output=True)  # fmt: skip
        meta = next(CACHE.glob("python3-doc_*.deb"))
        depends = subprocess.run(["dpkg-deb", "-f", str(meta), "Depends"], check=True,
                                 capture_output=True, text=True).stdout  # fmt: skip
        # python3-doc is a metapackage: the docs are in the versioned package it depends on.
        pkg = next(d.split()[0] for d in depends.split(",") if d.strip().startswith("python3."))
        subprocess.run(["apt-get", "download", pkg], cwd=CACHE, check=True, capture_output=True)
        deb = next(CACHE.glob(f"{pkg}_*.deb"))
        subprocess.run(["dpkg-deb", "-x", str(deb), str(unpacked)], check=True)
    except (OSError, subprocess.CalledProcessError, StopIteration) as e:
        print(f"python docs unavailable: {e}", file=sys.stderr)
        return None
    found = sorted(unpacked.glob("usr/share/doc/python3*/html"))
    return found[-1] if found else None


def locate(tree: Tree, data: Path) -> Path | None:
    if tree.where == "data":
        path = data / tree.rel
    elif tree.name == "python":
        return python_docs()
    else:
        path = CACHE / tree.rel
    return path if path.is_dir() else None


def build(tree: Path, tmp: Path, rerank: bool = True, base_url: str | None = None) -> tuple:
    t0 = time.perf_counter()
    batch = read_markdown(tree, base_url=base_url)
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


def row(tree: Tree, info: dict) -> str:
    st = info["stats"]
    links = st["links"]
    nodes = st["nodes"]
    api = st.get("api_refs")
    internal, resolved = links["internal"], links["resolved"]
    if api:
        # Without the Python-domain roles: links, :ref:, :doc:, :term:.
        internal -= api["resolved"] + api["undeclared"]
        resolved -= api["resolved"]
        api_cell = f"{api['resolved']} / {api['resolved'] + api['undeclared']}"
    else:
        api_cell = "-"
    share = resolved / internal if internal else 1.0
    kinds = ", ".join(f"{k} {v}" for k, v in nodes.items())
    return (
        f"| {tree.name} | {tree.fmt} | {st['files']} | {sum(nodes.values())} ({kinds}) | "
        f"{sum(st['edges'].values())} | {resolved}/{internal} ({share:.1%}) | {api_cell} | "
        f"{info['read_s']:.1f} | {info['publish_s']:.1f} |"
    )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", type=Path, default=HERE.parent.parent / "shared" / "data")
    ap.add_argument("--only", nargs="*", help="tree names to run (default: all)")
    ap.add_argument("--no-rerank", action="store_true", help="skip the FastAPI rerank table")
    ap.add_argument("--write", action="store_true")
    args = ap.parse_args()
    out = [
        f"\n## Documentation graphs in every format ({time.strftime('%Y-%m-%d')})\n",
        machine_line(),
        "",
        "`.venv/bin/python bench/docs_graph.py --write` (no encoder: ingest + BM25 + graph). "
        "Internal references: Markdown links, plus `:ref:`/`:doc:`/`:term:` for Sphinx; the "
        "Python-domain roles (`:func:`, `:class:`, ...) are counted apart (resolved / all): "
        "those that name an object the tree does not declare stay plain text in Sphinx too.",
        "",
        "| tree | format | files | nodes | edges | internal refs resolved | python roles | "
        "read s | publish s |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    reports: list[str] = []
    skipped: list[str] = []
    with tempfile.TemporaryDirectory() as tmp:
        cols = {}
        for tree in TREES:
            if args.only and tree.name not in args.only:
                continue
            path = locate(tree, args.data)
            if path is None:
                skipped.append(f"{tree.name}: not found (see the module doc for how to get it)")
                continue
            col, info = build(path, Path(tmp) / tree.name, base_url=tree.base_url)
            cols[tree.name] = col
            out.append(row(tree, info))
            lines = info["report"].strip().splitlines()
            more = [f"... ({len(lines) - 10} more lines)"] if len(lines) > 10 else []
            reports.append(f"### {tree.name}\n\n```text\n" + "\n".join(lines[:10] + more))
            reports[-1] += "\n```\n"
            print(out[-1], flush=True)
        out.append("")
        out.extend(f"Skipped: {s}" for s in skipped)
        out.extend(reports)
        if "fastapi" in cols and not args.no_rerank:
            plain, _ = build(locate(TREES[0], args.data), Path(tmp) / "plain", rerank=False)
            out.append("### Graph rerank on the FastAPI docs (rank of the answering page)\n")
            out.append("| question | page | without rerank | with rerank | rerank moves |")
            out.append("|---|---|---|---|---|")
            for q, page in {**QUESTIONS, **MORE_QUESTIONS}.items():
                r0, _ = rank_of(plain, q, page)
                r1, moves = rank_of(cols["fastapi"], q, page)
                out.append(f"| {q} | `{page}` | {r0 or '-'} | {r1 or '-'} | {len(moves)} |")
    text = "\n".join(out) + "\n"
    print(text)
    if args.write:
        write_section("docs_graph", text)


if __name__ == "__main__":
    main()
