"""Crawled sites against the same docs indexed from their sources.

    COGITAVE_DATA=../shared/data .venv/bin/python bench/crawl.py
        [--data DIR] [--only python,fastapi,cogitave] [--concurrency 8] [--write]

Each site is built HTML served on 127.0.0.1 from this process (``http.server``, which answers
``If-Modified-Since`` with 304), crawled with ``crawl_site`` and ``--base-url`` set to the
public site, and compared with the collection ``read_docs`` makes from the sources:

- python: Debian's ``python3.11-doc`` (Sphinx HTML with ``objects.inv`` and the
  ``_sources/*.rst.txt`` the source reader reads): ``/usr/share/doc/python3.11/html`` when
  the package is installed, else fetched with ``apt-get download`` into
  ``bench/.cache/crawl`` and unpacked with ``dpkg-deb -x``;
- fastapi: FastAPI's docs (``$COGITAVE_DATA/docs_fastapi``) built with MkDocs and Material;
  FastAPI's own Markdown extensions do not install here, so its include syntax
  (``{* ../../docs_src/x.py *}``) is expanded by a small MkDocs hook this script writes;
- cogitave: this project's ``docs/`` built with MkDocs and Material.

Measured: pages found (the share of the source's page URLs the crawl indexed), ``api`` nodes
(dotted names in both), URL-graded question sets (``bench/questions/<name>.jsonl``; BM25 with
one hit per page, as ``docs_search``: the encoder is too slow here to embed both collections
of every site), the crawl's rate, and a re-sync of the unchanged site (conditional requests,
then a sync that must publish nothing). Takes about 10 minutes on 2 cores, most of it the
Python docs. Nothing here touches a network but Debian's mirror, once, for the package when
it is not installed.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import yaml
from _machine import machine_line, write_section

from cogitave import Collection
from cogitave.eval.docs import collection_search, evaluate_questions, read_url_questions
from cogitave.ingest.docs import read_docs
from cogitave.ingest.web.build import read_crawl
from cogitave.ingest.web.crawl import Crawl, crawl_site
from cogitave.ingest.web.options import CrawlOptions, Manners
from cogitave.nodes import Node

HERE = Path(__file__).resolve().parent
CACHE = HERE / ".cache" / "crawl"
QUESTIONS = HERE / "questions"
PY_DEB = "python3.11-doc"
PYTHON_DOCS = Path("/usr/share/doc/python3.11/html")  # where python3.11-doc installs
HOOK = '''"""Expand FastAPI's include syntax into code blocks (its extensions do not install)."""
import re
from pathlib import Path

INCLUDE = re.compile(r"^\\s*\\{([*!])>?\\s*(\\S+?)(?:\\s+[^*!]*?)?\\s*\\1\\}\\s*$", re.M)


def on_page_markdown(markdown, page, config, files):
    here = Path(page.file.abs_src_path).parent
    bases = [here, Path(config["config_file_path"]).parent, Path(config["docs_dir"])]

    def one(m):
        for base in bases:
            p = (base / m.group(2)).resolve()
            if p.is_file():
                lang = {".py": "python", ".md": ""}.get(p.suffix, p.suffix.lstrip("."))
                text = p.read_text(encoding="utf-8")
                return text if lang == "" else f"```{lang}\\n{text.rstrip()}\\n```"
        return m.group(0)

    return INCLUDE.sub(one, markdown)
'''


@dataclass
class Site:
    name: str
    html: Path
    public: str
    source: Path
    source_base_url: str | None = None


# -- the sites --------------------------------------------------------------------------------
def python_site() -> Site | None:
    root = PYTHON_DOCS if PYTHON_DOCS.is_dir() else CACHE / "py" / PYTHON_DOCS.relative_to("/")
    if not root.is_dir():
        CACHE.mkdir(parents=True, exist_ok=True)
        got = subprocess.run(["apt-get", "download", PY_DEB], cwd=CACHE, capture_output=True)
        debs = sorted(CACHE.glob(f"{PY_DEB}_*.deb"))
        if got.returncode != 0 or not debs:
            print(f"skip python: apt-get download {PY_DEB} failed", file=sys.stderr)
            return None
        subprocess.run(["dpkg-deb", "-x", str(debs[-1]), str(CACHE / "py")], check=True)
    public = "https://docs.python.org/3.11/"
    return Site("python", root, public, root, public.rstrip("/"))


def fastapi_site(data: Path) -> Site | None:
    tree = data / "docs_fastapi"
    if not tree.is_dir():
        print(f"skip fastapi: {tree} not found", file=sys.stderr)
        return None
    out = CACHE / "fastapi" / "site"
    if not (out / "index.html").is_file():
        config = _fastapi_config(tree / "docs" / "en" / "mkdocs.yml", CACHE / "fastapi")
        _mkdocs(config, out)
    return Site("fastapi", out, "https://fastapi.tiangolo.com/", tree)


def cogitave_site() -> Site | None:
    out = CACHE / "cogitave" / "site"
    if not (out / "index.html").is_file():
        cfg = CACHE / "cogitave" / "mkdocs.yml"
        cfg.parent.mkdir(parents=True, exist_ok=True)
        base = yaml.safe_load((HERE.parent / "mkdocs.yml").read_text())
        base["docs_dir"] = str(HERE.parent / "docs")
        base["site_url"] = "https://cogitave.example/"
        base["theme"] = {"name": "material"}
        cfg.write_text(yaml.safe_dump(base, sort_keys=False))
        _mkdocs(cfg, out)
    return Site("cogitave", out, "https://cogitave.example/", HERE.parent / "mkdocs.yml",
                "https://cogitave.example")  # fmt: skip


class _Lenient(yaml.SafeLoader):
    """MkDocs configs name Python objects (``!!python/name:...``): read as None here."""


_Lenient.add_multi_constructor("tag:yaml.org,2002:python/", lambda loader, suffix, node: None)


def _fastapi_config(original: Path, where: Path) -> Path:
    """FastAPI's config with what installs here: Material, the standard and pymdownx
    extensions, no plugins, and the include hook."""
    cfg = yaml.load(original.read_text(encoding="utf-8"), Loader=_Lenient)
    where.mkdir(parents=True, exist_ok=True)
    (where / "hooks.py").write_text(HOOK)
    admonition = cfg["markdown_extensions"]["pymdownx.blocks.admonition"]
    kept = {
        "site_name": cfg["site_name"],
        "site_url": cfg["site_url"],
        "docs_dir": str(original.parent / "docs"),
        "theme": {
            "name": "material",
            "features": ["navigation.indexes", "navigation.path", "navigation.footer"],
        },
        "nav": cfg["nav"],
        "hooks": [str(where / "hooks.py")],
        "markdown_extensions": [
            "abbr", "attr_list", "footnotes", "md_in_html", "tables", {"toc": {"permalink": True}},
            "pymdownx.betterem", "pymdownx.caret", "pymdownx.highlight", "pymdownx.inlinehilite",
            "pymdownx.keys", "pymdownx.mark", "pymdownx.superfences", "pymdownx.tilde",
            {"pymdownx.blocks.admonition": admonition},
            "pymdownx.blocks.details", {"pymdownx.blocks.tab": {"alternate_style": True}},
        ],
    }  # fmt: skip
    path = where / "mkdocs.yml"
    path.write_text(yaml.safe_dump(kept, sort_keys=False, allow_unicode=True))
    return path


def _mkdocs(config: Path, out: Path) -> None:
    t0 = time.perf_counter()
    cmd = [sys.executable, "-m", "mkdocs", "build", "-q", "-f", str(config), "-d", str(out)]
    subprocess.run(cmd, check=True, cwd=config.parent)
    print(f"built {out} in {time.perf_counter() - t0:.0f} s", flush=True)


# -- measuring --------------------------------------------------------------------------------
class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        return None


def serve(folder: Path) -> tuple[ThreadingHTTPServer, str]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), partial(_Quiet, directory=str(folder)))
    httpd.daemon_threads = True
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return httpd, f"http://127.0.0.1:{httpd.server_address[1]}/"


def publish(path: Path, nodes: list[Node], schema: Any, source: str,
            state: bytes | None = None) -> Collection:  # fmt: skip
    if path.exists():
        shutil.rmtree(path)
    col = Collection.create(path, schema, encoder=None)
    col.sync(source, nodes, state=state)
    return col


def page_keys(nodes: list[Node]) -> set[str]:
    from cogitave.eval.docs import normalise

    return {normalise(str(n.meta.get("url", ""))) for n in nodes if n.kind == "page"}


def measure(site: Site, concurrency: int) -> dict[str, Any]:
    httpd, url = serve(site.html)
    try:
        options = CrawlOptions(base_url=site.public, manners=Manners(concurrency=concurrency,
                                                                     rate=0))  # fmt: skip
        t0 = time.perf_counter()
        crawl = crawl_site(url, options)
        crawl_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        batch = read_crawl(crawl)
        build_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        again: Crawl = crawl_site(url, options, crawl.state)
        resync_s = time.perf_counter() - t0
    finally:
        httpd.shutdown()
    t0 = time.perf_counter()
    source = read_docs(site.source, base_url=site.source_base_url)
    source_s = time.perf_counter() - t0
    root = CACHE / site.name
    crawled = publish(root / "crawled", batch.nodes, batch.schema, url, crawl.state.to_bytes())
    t0 = time.perf_counter()
    resync = crawled.sync(url, read_crawl(again).nodes, state=again.state.to_bytes())
    resync_sync_s = time.perf_counter() - t0
    built = publish(root / "source", source.nodes, source.schema, str(site.source))
    want, got = page_keys(source.nodes), page_keys(batch.nodes)
    api_want = {n.uid for n in source.nodes if n.kind == "api"}
    api_got = {n.uid for n in batch.nodes if n.kind == "api"}
    out: dict[str, Any] = {
        "site": site.name,
        "source_pages": len(want),
        "found": len(want & got),
        "extra": len(got - want),
        "missing": sorted(want - got)[:8],
        "api_source": len(api_want),
        "api_found": len(api_want & api_got),
        "nodes": (len(source.nodes), len(batch.nodes)),
        "crawl_s": crawl_s,
        "pages": crawl.report.pages,
        "fetched": crawl.report.fetched,
        "requests": crawl.report.requests,
        "build_s": build_s,
        "source_s": source_s,
        "resync_s": resync_s,
        "resync_sync_s": resync_sync_s,
        "resync_requests": again.report.requests,
        "resync_304": again.report.unchanged,
        "resync_fetched": again.report.fetched,
        "resync_root": resync.root,
        "report": crawl.report.format(),
    }
    questions = QUESTIONS / f"{site.name}.jsonl"
    if questions.is_file():
        qs = read_url_questions(questions)
        for label, col in (("source", built), ("crawled", crawled)):
            s = evaluate_questions("bm25", qs, collection_search(col, "bm25", group_by_page=True))
            out[f"q_{label}"] = s.metrics
        out["questions"] = len(qs)
    return out


def table(rows: list[dict[str, Any]], concurrency: int) -> str:
    lines = [
        f"\n## Crawled sites against their sources ({time.strftime('%Y-%m-%d')})\n",
        machine_line(),
        "",
        "`COGITAVE_DATA=../shared/data .venv/bin/python bench/crawl.py --write` (built HTML "
        f"served on 127.0.0.1 by `http.server`; `--concurrency {concurrency} --rate 0`; both "
        "collections without an encoder). Pages found: the source's page URLs the crawl "
        "indexed (extra: pages the crawl indexed that the source reader has no page for). "
        "Questions: URL-graded sets "
        "of `bench/questions/`, BM25 with one hit per page (the real encoder indexes a few "
        'nodes/s on this box, see "Indexing throughput": hours for both collections of every '
        "site), Δ = crawled - "
        "source. Crawl: wall time from the start URL to the last page, extraction included; "
        "build: the crawl's pages into nodes. Re-sync: the unchanged site crawled again with "
        "the first crawl's state (conditional requests: its seconds), then built and synced "
        "(the seconds after the +: the graph is built again from the kept pages).",
        "",
        "| site | pages found | api nodes | nodes (source / crawled) | crawl | pages/s | "
        "build s | source read s | re-sync | re-sync publishes |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        share = r["found"] / r["source_pages"] if r["source_pages"] else 0
        api = f"{r['api_found']}/{r['api_source']}" if r["api_source"] else "-"
        rate = (r["fetched"] / r["crawl_s"]) if r["crawl_s"] else 0
        resync = (f"{r['resync_s']:.1f} s + {r['resync_sync_s']:.1f} s, "
                  f"{r['resync_requests']} requests, {r['resync_304']} × 304, "
                  f"{r['resync_fetched']} fetched")  # fmt: skip
        lines.append(
            f"| {r['site']} | {r['found']}/{r['source_pages']} ({share:.1%}; extra "
            f"{r['extra']}) | {api} | {r['nodes'][0]} / {r['nodes'][1]} | "
            f"{r['crawl_s']:.1f} s, {r['requests']} requests | {rate:.1f} | "
            f"{r['build_s']:.1f} | {r['source_s']:.1f} | {resync} | "
            f"{'nothing' if r['resync_root'] is None else 'a root'} |"
        )
    scored = [r for r in rows if "q_source" in r]
    if scored:
        lines += ["", "| site | questions | collection | MRR | Hit@1 | Hit@5 | nDCG@5 |",
                  "|---|---|---|---|---|---|---|"]  # fmt: skip
        for r in scored:
            for label in ("source", "crawled"):
                m = r[f"q_{label}"]
                lines.append(
                    f"| {r['site']} | {r['questions']} | {label} | {m['mrr']:.4f} | "
                    f"{m['hit@1']:.4f} | {m['hit@5']:.4f} | {m['ndcg@5']:.4f} |"
                )
            d = {
                k: r["q_crawled"][k] - r["q_source"][k] for k in ("mrr", "hit@1", "hit@5", "ndcg@5")
            }
            lines.append(f"| {r['site']} | | Δ | {d['mrr']:+.4f} | {d['hit@1']:+.4f} | "
                         f"{d['hit@5']:+.4f} | {d['ndcg@5']:+.4f} |")  # fmt: skip
    for r in rows:
        if r["missing"]:
            lines += ["", f"{r['site']}: source pages the crawl did not index (first 8): "
                      + ", ".join(f"`{m}`" for m in r["missing"])]  # fmt: skip
    for r in rows:
        lines += ["", f"### {r['site']}: the crawl report", "", "```text",
                  *r["report"].split("\n")[:24], "```"]  # fmt: skip
    return "\n".join(lines) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser()
    data = os.environ.get("COGITAVE_DATA") or HERE.parent.parent / "shared" / "data"
    ap.add_argument("--data", type=Path, default=Path(data))
    ap.add_argument("--only", default="", help="comma-separated sites (default: all)")
    ap.add_argument("--concurrency", type=int, default=8)
    ap.add_argument("--write", action="store_true")
    args = ap.parse_args()
    wanted = {s for s in args.only.split(",") if s}
    makers = {"python": python_site, "fastapi": lambda: fastapi_site(args.data),
              "cogitave": cogitave_site}  # fmt: skip
    rows = []
    for name, make in makers.items():
        if wanted and name not in wanted:
            continue
        site = make()
        if site is None:
            continue
        print(f"measuring {name} ...", flush=True)
        rows.append(measure(site, args.concurrency))
    text = table(rows, args.concurrency)
    print(text)
    if args.write:
        write_section("crawl", text)


if __name__ == "__main__":
    main()
