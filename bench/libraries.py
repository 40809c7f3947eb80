"""Libraries and versions: one collection of many libraries against each library alone, mixing
across libraries, the cost of scoping a search, a real project's lockfile, and packs.

    COGITAVE_DATA=../shared/data .venv/bin/python bench/libraries.py \\
        [--sources bench/.cache/sources] [--write]

The collection (cached in ``bench/.cache/libraries/``) holds, each at the version its own
sources state: FastAPI (``$COGITAVE_DATA/docs_fastapi``; its version: the newest in its
release notes), Hugo (``docs_hugo``; ``latest``), this project's docs (the version in
``pyproject.toml``), and from ``--sources`` (trees you check out yourself; nothing of them is
committed): httpx (``httpx/``: github.com/encode/httpx, version from ``__version__.py``), Vite
(``vite/docs``: github.com/vitejs/vite, version from ``packages/vite/package.json``) and two
versions of graphql-kotlin (``graphql-kotlin/website``: github.com/ExpediaGroup/graphql-kotlin,
a versioned Docusaurus site). A library whose tree is missing is skipped with a note.

Measured:

1. **Alone vs shared**: per library with a question set (``bench/questions/<name>.jsonl``),
   MRR and nDCG@5 (pages, grouped as ``docs_search``) of planned and hybrid searched with
   ``library=`` on the shared collection, against the library's own collection
   (``bench/docs_quality.py``'s cache; built there when missing).
2. **Across libraries**: the same questions without ``library=``: the scores, and the share
   of top hits that come from another library than the question's.
3. **Latency** of a search scoped to one library against the same search over every library
   (p50 / p99, planned, the questions of every set, one at a time, back to back).
4. **A project's lockfile**: ``--project`` on full-stack-fastapi-template
   (``full-stack-fastapi-template/``: github.com/fastapi/full-stack-fastapi-template, its
   ``uv.lock`` and ``frontend/package.json``): which of its dependencies resolve, and how.
5. **Packs**: writing and importing FastAPI's pack against indexing its docs.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import sys
import time
import tomllib
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

import docs_quality
from _machine import machine_line, write_section

from cogitave.eval.docs import collection_search, evaluate_questions, read_url_questions
from cogitave.ingest import sources
from cogitave.libraries.collection import LibraryCollection
from cogitave.libraries.layout import is_library_collection
from cogitave.query.types import SearchRequest

HERE = Path(__file__).resolve().parent
CACHE = HERE / ".cache" / "libraries"
QUESTIONS = HERE / "questions"
SYSTEMS = ("planned", "hybrid")


def fastapi_version(tree: Path) -> str:
    notes = tree / "docs" / "en" / "docs" / "release-notes.md"
    m = re.search(r"^## (\d+\.\d+\.\d+)", notes.read_text(encoding="utf-8"), flags=re.M)
    return m.group(1) if m else "latest"


def libraries(data: Path, src: Path) -> list[tuple[str, str, Path, str | None]]:
    """(library, version, source, docs version to read or None) for every tree found."""
    out: list[tuple[str, str, Path, str | None]] = []
    if (data / "docs_fastapi").is_dir():
        out.append(("fastapi", fastapi_version(data / "docs_fastapi"), data / "docs_fastapi", None))
    if (data / "docs_hugo").is_dir():
        out.append(("hugo", "latest", data / "docs_hugo", None))
    proj = tomllib.loads((HERE.parent / "pyproject.toml").read_text())["project"]["version"]
    out.append(("cogitave", proj, HERE.parent / "mkdocs.yml", None))
    if (src / "httpx" / "mkdocs.yml").is_file():
        v = re.search(r'__version__ = "([^"]+)"', (src / "httpx/httpx/__version__.py").read_text())
        out.append(("httpx", v.group(1) if v else "latest", src / "httpx" / "mkdocs.yml", None))
    if (src / "vite" / "docs").is_dir():
        pkg = json.loads((src / "vite/packages/vite/package.json").read_text())
        out.append(("vite", pkg["version"], src / "vite" / "docs", None))
    site = src / "graphql-kotlin" / "website"
    if site.is_dir() and hasattr(sources, "doc_versions"):
        for v in [d.version for d in sources.doc_versions(site) if not d.current][:2]:
            out.append(("graphql-kotlin", v, site, v))
    return out


def build(data: Path, src: Path) -> tuple[LibraryCollection, dict[str, float]]:
    """The shared collection (synced: an unchanged library costs a read, not an embedding)
    and each library version's index time of its first build."""
    lib = LibraryCollection.open(CACHE) if is_library_collection(CACHE) else None
    lib = lib or LibraryCollection.create(CACHE)
    times_file = CACHE / "index_times.json"
    times: dict[str, float] = json.loads(times_file.read_text()) if times_file.is_file() else {}
    for name, version, tree, docs_version in libraries(data, src):
        t0 = time.perf_counter()
        kw: dict[str, Any] = {"version": docs_version} if docs_version else {}
        batch = sources.read_source(tree, "docs", **kw)
        res = lib.sync_library(
            name, version, batch.nodes, schema=batch.schema, source=str(tree.resolve())
        )
        if res.root is not None:
            times[f"{name}@{version}"] = round(time.perf_counter() - t0, 1)
            times_file.write_text(json.dumps(times, indent=1))
        print(f"{name}@{version}: {len(batch.nodes)} nodes", flush=True)
    return lib, times


def pct(xs: list[float], q: float) -> float:
    return float(statistics.quantiles(xs, n=100)[q - 1]) if len(xs) > 1 else xs[0]


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    data = os.environ.get("COGITAVE_DATA") or HERE.parent.parent / "shared" / "data"
    ap.add_argument("--data", type=Path, default=Path(data))
    ap.add_argument("--sources", type=Path, default=HERE / ".cache" / "sources")
    ap.add_argument("--write", action="store_true")
    args = ap.parse_args()
    lib, times = build(args.data, args.sources)
    held = sorted({e.ref for e in lib.libraries()})
    out = [
        f"## Libraries and versions ({time.strftime('%Y-%m-%d')})",
        "",
        machine_line(),
        "",
        "`COGITAVE_DATA=../shared/data .venv/bin/python bench/libraries.py --write`: one "
        f"collection of {len(held)} library versions ({', '.join(held)}; "
        f"{len(lib):,} nodes), default encoder.",
        "",
        "### Each library alone and in the shared collection",
        "",
        "| library | questions | system | MRR alone | with library= | nDCG@5 alone "
        "| with library= | nDCG@5 across libraries | top hits from another library |",
        "|---|---:|---|---:|---:|---:|---:|---:|---:|",
    ]
    trees = docs_quality.trees(args.data)
    scoped_ms: list[float] = []
    all_ms: list[float] = []
    for name in ("fastapi", "hugo", "cogitave", "vite"):
        qfile = QUESTIONS / f"{name}.jsonl"
        if not qfile.is_file() or name not in {e.key for e in lib.libraries()}:
            continue
        alone = docs_quality.build(name, trees[name])
        qs = read_url_questions(qfile)
        for system in SYSTEMS:
            a = evaluate_questions(system, qs, collection_search(alone, system, group_by_page=True))
            s = evaluate_questions(
                system,
                qs,
                collection_search(lib, system, group_by_page=True, libraries=(name,)),
            )
            x = evaluate_questions(system, qs, collection_search(lib, system, group_by_page=True))
            wrong = total = 0
            for q in qs:
                res = lib.search(SearchRequest(query=q.query[:4096], limit=5, mode=system))
                total += min(5, len(res.results))
                wrong += sum(1 for h in res.results[:5] if not h.library.startswith(name + "@"))
            out.append(
                f"| {name} | {len(qs)} | {system} | {a.metrics['mrr']:.4f} | "
                f"{s.metrics['mrr']:.4f} | {a.metrics['ndcg@5']:.4f} | "
                f"{s.metrics['ndcg@5']:.4f} | {x.metrics['ndcg@5']:.4f} | "
                f"{wrong / max(1, total):.1%} |"
            )
        for q in qs:
            t = time.perf_counter()
            lib.search(SearchRequest(query=q.query[:4096], libraries=(name,)))
            scoped_ms.append((time.perf_counter() - t) * 1e3)
            t = time.perf_counter()
            lib.search(SearchRequest(query=q.query[:4096]))
            all_ms.append((time.perf_counter() - t) * 1e3)
    out += [
        "",
        "### Latency: one library against every library (planned, ms)",
        "",
        "| search | p50 | p99 | queries |",
        "|---|---:|---:|---:|",
        f"| `library=` one library | {pct(scoped_ms, 50):.2f} | {pct(scoped_ms, 99):.2f} "
        f"| {len(scoped_ms)} |",
        f"| every library (default versions) | {pct(all_ms, 50):.2f} | {pct(all_ms, 99):.2f} "
        f"| {len(all_ms)} |",
        "",
    ]
    project = args.sources / "full-stack-fastapi-template"
    if project.is_dir():
        pins = lib.use_project(project)
        lib.pins.clear()
        lib.excluded.clear()
        found = [d for d in pins.dependencies if d.library is not None]
        out += [
            "### --project on full-stack-fastapi-template",
            "",
            f"{len(pins.dependencies)} dependencies read ({len(found)} have docs here); "
            f"warnings: {len(pins.warnings)}.",
            "",
            "| package | library | wanted | read | match | why |",
            "|---|---|---|---|---|---|",
            *(
                f"| {d.package} | {d.library} | {d.wanted} | {d.version} | {d.match} | {d.reason} |"
                for d in found
            ),
            "",
        ]
    fast = next((e for e in lib.libraries() if e.key == "fastapi"), None)
    if fast is not None:
        pack = CACHE.parent / "fastapi.cogpack"
        t = time.perf_counter()
        info = lib.export_pack(fast.ref, pack)
        t_pack = time.perf_counter() - t
        target = CACHE.parent / "libraries-import"
        shutil.rmtree(target, ignore_errors=True)
        t = time.perf_counter()
        LibraryCollection.create(target).import_pack(pack)
        t_import = time.perf_counter() - t
        out += [
            "### Packs: FastAPI",
            "",
            "| step | seconds |",
            "|---|---:|",
            f"| index the docs (read, embed, publish; first build) | "
            f"{times.get(fast.ref, float('nan')):.1f} |",
            f"| write the pack ({info.objects} objects, {info.bytes / 2**20:.1f} MiB) | "
            f"{t_pack:.1f} |",
            f"| import it (check every object, publish) | {t_import:.1f} |",
            "",
        ]
    text = "\n".join(out) + "\n"
    print(text)
    if args.write:
        write_section("libraries", text)


if __name__ == "__main__":
    main()
