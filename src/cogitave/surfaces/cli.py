"""The command line: ``cogitave index | search | roots | eval | verify | compact | demo |
serve | mcp``.

A thin surface over :class:`cogitave.collection.Collection`. Errors of the engine print one
line (``error[code]: message``) on stderr and exit 2 for bad input, 1 otherwise; never a
traceback.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    Task,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Table
from rich.text import Text

from cogitave.errors import CogitaveError, InputError

app = typer.Typer(
    name="cogitave",
    help="Cogitave Query: hybrid retrieval over documentation and knowledge graphs.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
out = Console()
err = Console(stderr=True)

CollectionOpt = Annotated[Path, typer.Option("--collection", "-c", help="Collection directory.")]
FORMATS = ("jsonl", "beir", "cranfield", "markdown")


class RateColumn(ProgressColumn):
    """Items per second: rich's recent window, else the average so far ("-" before any)."""

    def render(self, task: Task) -> Text:
        """The rate as ``12.3/s``."""
        speed = task.finished_speed or task.speed
        elapsed = task.finished_time or task.elapsed
        if speed is None and task.completed and elapsed:
            speed = task.completed / elapsed  # one big step: the window has a single sample
        return Text("-/s" if speed is None else f"{speed:,.1f}/s", style="progress.data.speed")


@contextmanager
def progress_bar(enabled: bool = True) -> Iterator[Callable[[str, int, int], None]]:
    """A rich progress bar driven by ``progress(stage, done, total)`` callbacks: done/total,
    rate, elapsed time and the time left per stage."""
    if not enabled:
        yield lambda stage, done, total: None
        return
    with Progress(
        TextColumn("{task.description:>10}"),
        BarColumn(),
        MofNCompleteColumn(),
        RateColumn(),
        TimeElapsedColumn(),
        TextColumn("eta"),
        TimeRemainingColumn(),
        console=err,
        transient=False,
    ) as bar:
        tasks: dict[str, Any] = {}

        def update(stage: str, done: int, total: int) -> None:
            if stage not in tasks:
                tasks[stage] = bar.add_task(stage, total=max(total, 1))
            bar.update(tasks[stage], completed=done, total=max(total, 1))

        yield update


def _read_source(fmt: str, source: Path, schema_file: Path | None) -> Any:
    from cogitave.schema import Schema

    schema = Schema.load(schema_file) if schema_file else None
    if fmt == "jsonl":
        from cogitave.ingest.jsonl import read_jsonl

        return read_jsonl(source, schema)
    if fmt == "beir":
        from cogitave.ingest.beir import read_beir

        return read_beir(source, schema)
    if fmt == "cranfield":
        from cogitave.eval.cranfield import read_corpus

        return read_corpus(source)
    if fmt == "markdown":
        try:
            from cogitave.ingest.markdown import read_markdown
        except ImportError as e:  # pragma: no cover - depends on the install
            raise InputError("markdown ingestion is not available in this build") from e
        return read_markdown(source, schema)
    raise InputError(f"unknown format {fmt!r}; use one of {', '.join(FORMATS)}")


@app.command()
def index(
    source: Annotated[Path, typer.Argument(help="File or folder to index.")],
    collection: CollectionOpt,
    fmt: Annotated[
        str, typer.Option("--format", "-f", help="jsonl | beir | cranfield | markdown")
    ] = "jsonl",
    schema: Annotated[Path | None, typer.Option(help="Schema file (TOML).")] = None,
    skip_bad: Annotated[
        bool, typer.Option("--skip-bad", help="Write good records, list bad ones.")
    ] = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q")] = False,
) -> None:
    """Index SOURCE into the collection (created if absent), then publish a new root."""
    from cogitave.collection import Collection

    batch = _read_source(fmt, source, schema)
    if batch.problems and not skip_bad:
        batch.raise_if_bad()
    for p in batch.problems:
        sys.stderr.write(f"skipped {p}\n")
    if Collection.exists(collection):
        col = Collection.open(collection)
    else:
        col = Collection.create(collection, batch.schema)
    # The ingest report (links, problems) comes before the long embedding step, so that a
    # mistake in the source shows at once.
    report = getattr(batch, "report", None)
    if report:
        err.print(report, markup=False)
    col.add(batch.nodes)
    with progress_bar(not quiet) as bar:
        rid = col.publish(progress=bar)
    out.print(
        f"indexed {len(batch.nodes)} nodes ({len(batch.problems)} skipped) into {collection}; "
        f"root {rid[:12]}, {len(col)} live nodes",
        markup=False,
    )


@app.command()
def compact(
    collection: CollectionOpt,
    quiet: Annotated[bool, typer.Option("--quiet", "-q")] = False,
) -> None:
    """Merge each dimension's vector segments into one, then publish a new root."""
    from cogitave.collection import Collection

    col = Collection.open(collection)
    before = _vector_segments(col.snapshot.manifest)
    with progress_bar(not quiet) as bar:
        rid = col.compact(progress=bar)
    out.print(
        f"compacted {collection}: {before} vector segments -> "
        f"{_vector_segments(col.snapshot.manifest)}; root {rid[:12]}, {len(col)} live nodes",
        markup=False,
    )


def _vector_segments(manifest: dict[str, Any]) -> int:
    return sum(len(v) for v in (manifest.get("vectors") or {}).values())


@app.command()
def search(
    query: Annotated[str, typer.Argument(help="Query text.")],
    collection: CollectionOpt,
    limit: Annotated[int, typer.Option("--limit", "-n")] = 10,
    offset: int = 0,
    mode: Annotated[str, typer.Option(help="planned | hybrid | bm25 | dense")] = "planned",
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
    root: Annotated[str | None, typer.Option(help="A retained root id to read.")] = None,
) -> None:
    """Search the collection."""
    from cogitave.collection import Collection
    from cogitave.query.types import SearchRequest

    req = SearchRequest(query=query, limit=limit, offset=offset, mode=mode, root=root)  # type: ignore[arg-type]
    res = Collection.open(collection, root).search(req)
    if as_json:
        sys.stdout.write(json.dumps(res.to_dict(), ensure_ascii=False) + "\n")
        return
    print_results(res)


def print_results(res: Any) -> None:
    if not res.results:
        out.print("[dim]no results[/dim]")
    for h in res.results:
        out.print(
            f"[bold]{h.rank:>3}.[/bold] {h.title}  [dim]{h.uid} · {h.kind} · {h.score:.4f}[/dim]",
            highlight=False,
        )
        if h.snippet:
            out.print(f"     {h.snippet[:200]}", markup=False, highlight=False)
    d = res.diagnostics
    ms = d.get("total_ms", 0)
    out.print(f"[dim]{len(res.results)} results · {ms:.1f} ms · root {res.root[:12]}[/dim]")


@app.command()
def roots(collection: CollectionOpt) -> None:
    """List the retained roots, newest first."""
    from cogitave.store.roots import RootStore

    store = RootStore(collection)
    if not store.exists():
        from cogitave.errors import NotFoundError

        raise NotFoundError(f"no collection at {collection}")
    t = Table("root", "created", "nodes", "segments", "parent", "")
    for r in store.list_roots():
        t.add_row(
            r.id,
            r.created,
            str(r.nodes),
            str(r.segments),
            (r.parent or "-")[:12],
            "HEAD" if r.head else "",
        )
    out.print(t)


@app.command()
def verify(
    collection: CollectionOpt,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """Check HEAD and every retained root (hashes, objects, indexes, counts); exit 1 if bad."""
    from cogitave.store.verify import verify_collection

    report = verify_collection(collection)
    if as_json:
        sys.stdout.write(json.dumps(report.to_dict()) + "\n")
    else:
        sys.stdout.write("".join(line + "\n" for line in report.lines()))
    if not report.ok:
        sys.exit(1)  # main() drops the return code of a typer.Exit


@app.command("eval")
def eval_(
    collection: CollectionOpt,
    queries: Annotated[Path, typer.Option(help="Queries (BEIR queries.jsonl, or cran.qry).")],
    qrels: Annotated[Path, typer.Option(help="Judgments (BEIR qrels .tsv, or cranqrel).")],
    systems: Annotated[str, typer.Option(help="Comma-separated systems to run.")] = "",
    fmt: Annotated[str, typer.Option("--format", help="beir | cranfield")] = "beir",
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """nDCG@10, recall@100 and MRR@10 of each system on the same collection and queries."""
    from cogitave.collection import Collection
    from cogitave.eval.run import run_systems

    if fmt == "cranfield":
        from cogitave.eval import cranfield

        qs, rels = cranfield.read_queries(queries), cranfield.read_qrels(qrels)
    elif fmt == "beir":
        from cogitave.ingest import beir

        qs, rels = beir.read_queries(queries), beir.read_qrels(qrels)
    else:
        raise InputError("--format must be beir or cranfield")
    col = Collection.open(collection)
    names = [s.strip() for s in systems.split(",") if s.strip()] or available_systems(col)
    scores = run_systems(col, names, qs, rels)
    if as_json:
        sys.stdout.write(json.dumps({"systems": {s.system: s.to_dict() for s in scores}}) + "\n")
        return
    t = Table("system", "nDCG@10", "recall@100", "MRR@10", "queries", "p50 ms", "p99 ms")
    for s in scores:
        m = s.metrics
        t.add_row(
            s.system,
            f"{m['ndcg@10']:.4f}",
            f"{m['recall@100']:.4f}",
            f"{m['mrr@10']:.4f}",
            str(s.queries),
            f"{s.p50_ms:.2f}",
            f"{s.p99_ms:.2f}",
        )
    out.print(t)


DEMO_QUERIES = (
    "how do I index a folder of markdown",
    "reciprocal rank fusion",
    "what happens to a misspeled query",
    "bounded graph query limits",
)


def project_docs() -> Path:
    """The project's own docs folder (the demo's embedded default corpus)."""
    import cogitave

    here = Path(cogitave.__file__).resolve()
    for parent in here.parents:
        if (parent / "docs" / "index.md").is_file() and (parent / "pyproject.toml").is_file():
            return parent / "docs"
    raise InputError("the project's docs/ folder was not found; pass --docs PATH")


@app.command()
def demo(
    docs: Annotated[
        Path | None, typer.Option(help="Docs folder (default: the project's docs/).")
    ] = None,
    collection: Annotated[Path | None, typer.Option("--collection", "-c")] = None,
    query: Annotated[
        list[str] | None, typer.Option("--query", "-q", help="Queries to run.")
    ] = None,
) -> None:
    """Index the project's own docs into a fresh collection and answer example queries."""
    import shutil

    from cogitave.collection import Collection
    from cogitave.query.types import SearchRequest

    docs = docs or project_docs()
    if (docs.parent / "mkdocs.yml").is_file() and docs.name == "docs":
        docs = docs.parent / "mkdocs.yml"  # the nav gives reading order and sections
    collection = collection or Path.cwd() / ".cogitave" / "demo"
    if Collection.exists(collection):
        shutil.rmtree(collection)
    batch = _read_source("markdown", docs, None)
    col = Collection.create(collection, batch.schema)
    col.add(batch.nodes)
    with progress_bar() as bar:
        col.publish(progress=bar)
    out.print(f"[bold]indexed {len(col)} nodes from {docs} into {collection}[/bold]")
    for q in query or DEMO_QUERIES:
        out.rule(f"[bold]{q}")
        print_results(col.search(SearchRequest(query=q, limit=3)))
    out.print(f'\nsearch it yourself:  cogitave search --collection {collection} "your words"')


@app.command()
def serve(
    collection: CollectionOpt,
    host: Annotated[str, typer.Option(help="Address to bind (loopback by default).")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port to listen on.")] = 8765,
    api_key: Annotated[
        str | None,
        typer.Option(
            envvar="COGITAVE_API_KEY", help="Require 'Authorization: Bearer KEY' (not /health)."
        ),
    ] = None,
) -> None:
    """Serve REST, GraphQL (/graphql) and MCP (/mcp) over HTTP for one collection."""
    from cogitave.collection import Collection
    from cogitave.surfaces import http

    col = Collection.open(collection)
    col.warm()  # the first request must not pay for loading the lexicon and the encoder
    if host not in http.LOOPBACK and not api_key:
        err.print(f"warning: listening on {host} without an API key", markup=False)
    err.print(f"serving {collection} (root {col.root[:12]}) on http://{host}:{port}", markup=False)
    http.serve(col, host=host, port=port, api_key=api_key)


@app.command("mcp")
def mcp_(collection: CollectionOpt) -> None:
    """Serve the MCP tools over stdio (for an MCP client to launch)."""
    from cogitave.collection import Collection
    from cogitave.surfaces.mcp import run_stdio

    col = Collection.open(collection)
    col.warm()
    run_stdio(col)


def available_systems(col: Any) -> list[str]:
    """Systems the collection can run (dense ones need stored vectors)."""
    return list(col.engine().systems())


def main() -> None:
    """Console entry point: engine errors become one line on stderr, never a traceback."""
    try:
        app(standalone_mode=False)
    except CogitaveError as e:
        sys.stderr.write(f"error[{e.code}]: {' '.join(e.message.split())}\n")
        sys.exit(2 if isinstance(e, InputError) or e.http_status < 500 else 1)
    except (typer.Abort, KeyboardInterrupt):
        err.print("aborted")
        sys.exit(130)
    except Exception as e:
        # Usage errors arrive here in non-standalone mode. typer may vendor its own click
        # (typer._click), so match on behaviour, not on click's classes.
        code = getattr(e, "exit_code", None)
        if not isinstance(code, int):
            raise
        if hasattr(e, "format_message"):
            msg = " ".join(str(e.format_message()).split())
            sys.stderr.write(f"error[usage]: {msg} (see --help)\n")
            sys.exit(2)
        sys.exit(code)


if __name__ == "__main__":
    main()
