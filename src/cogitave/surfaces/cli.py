"""The command line: ``cogitave index | watch | delete | search | roots | eval | verify |
compact | demo | serve | mcp``.

A thin surface over :class:`cogitave.collection.Collection`. Errors of the engine print one
line (``error[code]: message``) on stderr and exit 2 for bad input, 1 otherwise; never a
traceback.
"""

from __future__ import annotations

import json
import os
import sys
import textwrap
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

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

if TYPE_CHECKING:
    from cogitave.store.manifest import Manifest

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
RayOpt = Annotated[
    str | None,
    typer.Option(
        "--ray", help="Sharded collections: a Ray address, or 'local' to start Ray for the command."
    ),
]


def _open_any(collection: Path, ray: str | None, *, partial: bool = False) -> Any:
    """The collection at ``collection``: sharded (shards in process, or actors with ``ray``)
    or ordinary (``--ray`` then needs a sharded collection)."""
    from cogitave.distributed.layout import is_sharded

    if is_sharded(collection):
        from cogitave.distributed.facade import ShardedCollection

        return ShardedCollection.open(collection, ray, allow_partial=partial)
    if ray is not None:
        raise InputError(f"--ray needs a sharded collection; {collection} is not one")
    from cogitave.collection import Collection

    return Collection.open(collection)


FORMATS = ("auto", "jsonl", "beir", "cranfield", "smart", "docs", "markdown")
SEARCH_FORMATS = ("text", "json", "markdown")


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


def _read_source(
    fmt: str, source: Path, schema_file: Path | None, base_url: str | None = None
) -> Any:
    from cogitave.ingest.detect import check_format, detect_format
    from cogitave.schema import Schema

    schema = Schema.load(schema_file) if schema_file else None
    fmt = detect_format(source) if fmt == "auto" else fmt
    check_format(source, fmt)
    if fmt == "jsonl":
        from cogitave.ingest.jsonl import read_jsonl

        return read_jsonl(source, schema)
    if fmt == "beir":
        from cogitave.ingest.beir import read_beir

        return read_beir(source, schema)
    if fmt == "cranfield":
        from cogitave.eval.cranfield import read_corpus

        return read_corpus(source)
    if fmt == "smart":
        from cogitave.ingest import smart

        return smart.read_corpus(source)
    if fmt in ("docs", "markdown"):
        try:
            from cogitave.ingest.markdown import read_markdown
        except ImportError as e:  # pragma: no cover - depends on the install
            raise InputError("docs ingestion is not available in this build") from e
        return read_markdown(source, schema, base_url=base_url)
    raise InputError(f"unknown format {fmt!r}; use one of {', '.join(FORMATS)}")


SourceOpt = Annotated[
    str | None,
    typer.Option("--source", help="Name of the source (default: its resolved path)."),
]
FormatOpt = Annotated[
    str,
    typer.Option(
        "--format",
        "-f",
        help="auto | jsonl | beir | cranfield | smart (CISI, CACM, ...) | docs (MkDocs, Hugo, "
        "Docusaurus, VitePress, "
        "Sphinx, Markdown/MDX/RST folder; markdown is the same)",
    ),
]
BaseUrlOpt = Annotated[
    str | None,
    typer.Option("--base-url", help="Site URL that makes page URLs absolute (over config)."),
]
SchemaOpt = Annotated[Path | None, typer.Option(help="Schema file (TOML).")]
SkipBadOpt = Annotated[bool, typer.Option("--skip-bad", help="Write good records, list bad ones.")]
AddOnlyOpt = Annotated[
    bool,
    typer.Option("--add-only", help="Add and replace, never delete (a stream of JSONL records)."),
]
QuietOpt = Annotated[bool, typer.Option("--quiet", "-q")]
DebounceOpt = Annotated[
    int,
    typer.Option("--debounce", min=10, help="Milliseconds without a change that end a burst."),
]


@dataclass(frozen=True)
class SourceSpec:
    """What one source is and how to read it: the arguments ``index`` and ``watch`` share."""

    source: Path
    collection: Path
    fmt: str = "auto"
    schema: Path | None = None
    skip_bad: bool = False
    name: str | None = None
    add_only: bool = False
    base_url: str | None = None


@app.command()
def index(
    source: Annotated[Path, typer.Argument(help="File or folder to index.")],
    collection: CollectionOpt,
    fmt: FormatOpt = "auto",
    base_url: BaseUrlOpt = None,
    schema: SchemaOpt = None,
    skip_bad: SkipBadOpt = False,
    name: SourceOpt = None,
    add_only: AddOnlyOpt = False,
    watch_: Annotated[
        bool, typer.Option("--watch", help="Then keep the source in sync as files change.")
    ] = False,
    debounce: DebounceOpt = 300,
    quiet: QuietOpt = False,
    shards: Annotated[
        int | None, typer.Option("--shards", help="Create a sharded collection of N shards.")
    ] = None,
    ray: RayOpt = None,
    embed_actors: Annotated[
        int, typer.Option("--embed-actors", help="Encoder actors of a --ray build.")
    ] = 1,
) -> None:
    """Sync SOURCE into the collection (created if absent): its new nodes are added, changed
    ones replaced, vanished ones deleted; nothing changed, no new root."""
    spec = SourceSpec(source, collection, fmt, schema, skip_bad, name, add_only, base_url)
    sync_source(spec, quiet, shards=shards, ray=ray, embed_actors=embed_actors)
    if watch_:
        watch_source(spec, debounce=debounce)


@app.command()
def watch(
    source: Annotated[Path, typer.Argument(help="File or folder to keep in sync.")],
    collection: CollectionOpt,
    fmt: FormatOpt = "auto",
    base_url: BaseUrlOpt = None,
    schema: SchemaOpt = None,
    skip_bad: SkipBadOpt = False,
    name: SourceOpt = None,
    add_only: AddOnlyOpt = False,
    debounce: DebounceOpt = 300,
) -> None:
    """Sync SOURCE now, then again after every burst of file changes (Ctrl-C stops)."""
    spec = SourceSpec(source, collection, fmt, schema, skip_bad, name, add_only, base_url)
    sync_source(spec, quiet=True)
    watch_source(spec, debounce=debounce)


@app.command()
def delete(
    collection: CollectionOpt,
    uid: Annotated[list[str] | None, typer.Option("--uid", help="A node uid (repeatable).")] = None,
    name: Annotated[
        str | None, typer.Option("--source", help="Delete every node of this source.")
    ] = None,
) -> None:
    """Delete nodes by uid, or a whole source, and publish a new root."""
    if bool(uid) == bool(name):
        raise InputError("give --uid UID (repeatable) or --source NAME")
    col = _open_existing(collection)
    if name is not None:
        res = col.delete_source(name)
        out.print(
            f"deleted source {name}: {len(res.deleted)} nodes; root {_short(res.root)}, "
            f"{len(col)} live nodes",
            markup=False,
        )
        return
    assert uid is not None
    live = [u for u in dict.fromkeys(uid) if u in col.snapshot.nodes.nid_of]
    if not live:
        out.print(f"no such nodes in {collection}; nothing changed (root {col.root[:12]})")
        return
    col.delete(live)
    rid = col.publish()
    missing = len(set(uid)) - len(live)
    out.print(
        f"deleted {len(live)} nodes"
        + (f" ({missing} unknown uids ignored)" if missing else "")
        + f"; root {rid[:12]}, {len(col)} live nodes",
        markup=False,
    )


def _short(rid: str | None) -> str:
    return rid[:12] if rid else "-"


def _check_collection(collection: Path) -> None:
    """A collection path must be a collection or a folder to create one in."""
    if collection.exists() and not collection.is_dir():
        raise InputError(f"--collection {collection} is a file, not a collection folder")
    from cogitave.distributed.layout import is_sharded

    if not collection.is_dir() or (collection / "HEAD").is_file() or is_sharded(collection):
        return
    try:
        names = {p.name for p in collection.iterdir()}
    except PermissionError as e:
        raise InputError(f"cannot read --collection {collection}: permission denied") from e
    if names - _LAYOUT:  # never write a collection into a folder of other files
        raise InputError(
            f"--collection {collection} is a folder that holds other files, not a collection"
        )


_LAYOUT = {"HEAD", "LOCK", "objects", "roots", "snapshots", "tmp", "objects.verified"}


def _open_existing(collection: Path) -> Any:
    from cogitave.collection import Collection
    from cogitave.errors import NotFoundError

    _check_collection(collection)
    if not Collection.exists(collection):
        raise NotFoundError(f"no collection at {collection}")
    return Collection.open(collection)


def _read_checked(
    fmt: str, source: Path, schema_file: Path | None, base_url: str | None = None
) -> Any:
    """The source's batch, or one InputError: missing, unreadable, or no documents."""
    from cogitave.errors import IngestError

    if not source.exists():
        raise IngestError(f"source not found: {source} (to remove its nodes: cogitave delete)")
    try:
        batch = _read_source(fmt, source, schema_file, base_url)
    except IngestError as e:
        hint = "" if e.details.get("errors") else _format_hint(source, fmt)
        if not hint:  # bad records, or nothing else fits: the reader's own words
            raise
        raise IngestError(e.message + hint, details=e.details) from e
    except PermissionError as e:
        raise InputError(f"cannot read {e.filename or source}: permission denied") from e
    except (UnicodeDecodeError, IsADirectoryError, NotADirectoryError) as e:
        raise InputError(f"cannot read {source}: {e}") from e
    if not batch.nodes and not batch.problems:
        raise InputError(f"no {fmt} documents in {source}{_format_hint(source, fmt)}")
    return batch


_EXTENSIONS = {".md": "markdown", ".markdown": "markdown", ".jsonl": "jsonl"}


def _format_hint(source: Path, fmt: str) -> str:
    """'; found 12 .md files: try --format markdown' when another format fits."""
    if not source.is_dir():
        return ""
    seen: dict[str, int] = {}
    for i, p in enumerate(source.rglob("*")):
        if i > 20_000:
            break
        if (f := _EXTENSIONS.get(p.suffix.lower())) and f != fmt:
            seen[f] = seen.get(f, 0) + 1
    if not seen:
        return ""
    f, n = max(seen.items(), key=lambda kv: kv[1])
    return f"; found {n} {f} files: try --format {f}"


def sync_source(
    spec: SourceSpec,
    quiet: bool,
    *,
    shards: int | None = None,
    ray: str | None = None,
    embed_actors: int = 1,
) -> Any:
    """Read the source, sync it into the collection and print what changed; every check runs
    before the collection is touched."""
    from cogitave.collection import Collection
    from cogitave.distributed.layout import is_sharded

    source, collection = spec.source, spec.collection
    _check_collection(collection)
    source_id = spec.name or str(source.resolve())
    batch = _read_checked(spec.fmt, source, spec.schema, spec.base_url)
    if batch.problems and not spec.skip_bad:
        batch.raise_if_bad()
    for p in batch.problems:
        sys.stderr.write(f"skipped {p}\n")
    if shards is not None or is_sharded(collection) or ray is not None:
        _index_sharded(batch, collection, shards, ray, embed_actors, quiet)
        return
    if Collection.exists(collection):
        col = Collection.open(collection)
    else:
        col = Collection.create(collection, batch.schema)
    # The ingest report (links, problems) comes before the long embedding step, so that a
    # mistake in the source shows at once.
    report = getattr(batch, "report", None)
    if report and not quiet:
        err.print(report, markup=False)
    with progress_bar(not quiet) as bar:
        res = col.sync(source_id, batch.nodes, add_only=spec.add_only, progress=bar)
    out.print(
        sync_line(source_id, res, len(batch.nodes), len(batch.problems), len(col), col.root),
        markup=False,
        soft_wrap=True,
    )
    return res


def sync_line(source: str, res: Any, read: int, skipped: int, live: int, root: str) -> str:
    """One line for one sync: what was read, what changed, what was embedded, the root."""
    head = f"indexed {read} nodes ({skipped} skipped) from {source}: "
    if res.root is None:
        return head + f"nothing changed; root stays {root[:12]}, {live} live nodes"
    return head + (
        f"{len(res.added)} added, {len(res.changed)} changed, "
        f"{len(res.deleted)} deleted, {res.unchanged} unchanged; "
        f"{res.encoded} texts embedded, {res.reused} reused; "
        f"root {res.root[:12]}, {live} live nodes"
    )


WATCH_LOCK_TRIES = 20
"""Attempts (0.5 s apart) of a watch's sync while another writer holds the lock."""


def watch_source(spec: SourceSpec, stop: Any = None, *, debounce: int = 300) -> None:
    """Sync SOURCE after each burst of changes (one publish per burst) until ``stop`` is set
    or Ctrl-C; a failed sync prints its error and the watch goes on."""
    from cogitave.sync import watch as watch_changes

    err.print(f"watching {spec.source} (Ctrl-C stops)", markup=False)

    def burst(paths: set[Path]) -> None:
        from cogitave.errors import ConflictError

        for attempt in range(WATCH_LOCK_TRIES):
            try:
                sync_source(spec, quiet=True)
            except ConflictError as e:  # another writer: this burst must not be lost
                if attempt + 1 < WATCH_LOCK_TRIES:
                    time.sleep(0.5)
                    continue
                sys.stderr.write(f"error[{e.code}]: {' '.join(e.message.split())}\n")
            except CogitaveError as e:
                sys.stderr.write(f"error[{e.code}]: {' '.join(e.message.split())}\n")
            break
        sys.stdout.flush()

    import signal
    import threading

    def interrupt(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt

    if threading.current_thread() is threading.main_thread():
        # SIGTERM (a service manager, or a shell whose background jobs ignore SIGINT) stops
        # the watch as Ctrl-C does; a publish it interrupts leaves HEAD as any crash does
        signal.signal(signal.SIGTERM, interrupt)
    try:
        watch_changes(
            spec.source,
            burst,
            ignore=[spec.collection],
            stop=stop,
            quiet_ms=debounce,
            max_ms=10 * debounce,
        )
    except KeyboardInterrupt:
        err.print("stopped watching", markup=False)


def _index_sharded(
    batch: Any, collection: Path, shards: int | None, ray: str | None, actors: int, quiet: bool
) -> None:
    """Create or sync a sharded collection (on Ray with ``ray``)."""
    from cogitave.collection import Collection
    from cogitave.distributed.build import build_sharded
    from cogitave.distributed.layout import is_sharded
    from cogitave.expand.embed import DEFAULT_ENCODER

    if Collection.exists(collection) and not is_sharded(collection):
        raise InputError(f"{collection} is an ordinary collection; shard into a new directory")
    if ray is not None:
        from cogitave.distributed.actors import connect

        connect(ray)
    with progress_bar(not quiet) as bar:
        roots = build_sharded(
            collection,
            batch.nodes,
            batch.schema,
            shards=shards,
            encoder=DEFAULT_ENCODER,
            use_ray=ray is not None,
            embed_actors=actors,
            progress=bar,
        )
    out.print(
        f"indexed {len(batch.nodes)} nodes ({len(batch.problems)} skipped) into {collection}; "
        f"{len(roots)} shards",
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


def _vector_segments(manifest: Manifest) -> int:
    return sum(len(v) for v in manifest.vectors.values())


@app.command()
def search(
    query: Annotated[str, typer.Argument(help="Query text.")],
    collection: CollectionOpt,
    limit: Annotated[int, typer.Option("--limit", "-n")] = 10,
    offset: int = 0,
    mode: Annotated[str, typer.Option(help="planned | hybrid | bm25 | dense")] = "planned",
    fmt: Annotated[
        str,
        typer.Option(
            "--format",
            help="text (breadcrumb, URL, snippet) | json | markdown (the agents' answer).",
        ),
    ] = "text",
    as_json: Annotated[bool, typer.Option("--json", help="Same as --format json.")] = False,
    max_tokens: Annotated[
        int, typer.Option(help="Token budget of --format markdown (about 4 characters each).")
    ] = 2000,
    path_prefix: Annotated[
        str | None,
        typer.Option(help="Only pages whose path or URL path starts with this (/tutorial/)."),
    ] = None,
    group_by_page: Annotated[
        bool | None,
        typer.Option(
            "--group-by-page/--no-group-by-page",
            help="One hit per page (default: the collection's [docs] group_by_page).",
        ),
    ] = None,
    root: Annotated[str | None, typer.Option(help="A retained root id to read.")] = None,
    ray: RayOpt = None,
    partial: Annotated[
        bool, typer.Option("--partial", help="Sharded: answer without shards that fail.")
    ] = False,
) -> None:
    """Search the collection."""
    from cogitave.collection import Collection
    from cogitave.distributed.layout import is_sharded
    from cogitave.query.types import SearchRequest

    fmt = "json" if as_json else fmt
    if fmt not in SEARCH_FORMATS:
        raise InputError(f"--format must be one of {', '.join(SEARCH_FORMATS)}, not {fmt!r}")
    req = SearchRequest(
        query=query,
        limit=limit,
        offset=offset,
        mode=mode,  # type: ignore[arg-type]
        root=root,
        path_prefix=path_prefix,
        group_by_page=group_by_page,
    )
    if is_sharded(collection) or ray is not None:
        col = _open_any(collection, ray, partial=partial)
    else:
        col = Collection.open(collection, root)
    if fmt == "markdown":
        from cogitave.surfaces import service

        answer = service.search_compact(col, req, max_tokens)
        sys.stdout.write(answer["markdown"] + "\n")
        return
    res = col.search(req)
    if fmt == "json":
        sys.stdout.write(json.dumps(res.to_dict(), ensure_ascii=False) + "\n")
        return
    from cogitave.surfaces.service import located

    # a code sample shows the URL and breadcrumb of its section
    hits = [located(col, h, col.get(h.uid, root=res.root), res.root) for h in res.results]
    print_results(res, hits)


def print_results(res: Any, hits: Any = None) -> None:
    """Hits for a person: rank, breadcrumb (or title), where it lives, a readable snippet."""
    from rich.markup import escape

    from cogitave.surfaces.render import crumbs

    if not res.results:
        out.print("[dim]no results[/dim]")
    for h in res.results if hits is None else hits:
        title = escape(crumbs(h.breadcrumb, h.title, h.uid))
        out.print(
            f"[bold]{h.rank:>3}. {title}[/bold]  [dim]{escape(h.kind)} · {h.score:.4f}[/dim]",
            highlight=False,
        )
        out.print(f"     {h.url or h.path or h.uid}", markup=False, highlight=False)
        if h.snippet:
            snippet = " ".join(h.snippet.split())
            for line in textwrap.wrap(snippet, width=96, max_lines=3, placeholder=" …"):
                out.print(f"     {line}", markup=False, highlight=False, style="dim")
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
            " ".join(x for x, on in (("HEAD", r.head), ("held by a reader", r.held)) if on),
        )
    out.print(t)


@app.command()
def settings(
    collection: CollectionOpt,
    set_: Annotated[
        list[str] | None,
        typer.Option(
            "--set",
            help="section.key=value, a TOML value (feedback.enabled=false, "
            'docs.demote=["blog/*"]); repeatable.',
        ),
    ] = None,
    file: Annotated[
        Path | None, typer.Option("--file", help="A settings TOML file: replaces them all.")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """Show the collection's settings; with --set or --file, publish them in a new root
    (nothing is re-indexed)."""
    from cogitave.collection import Collection
    from cogitave.config import Settings

    col = Collection.open(collection)
    current = col.snapshot.settings
    if file is not None or set_:
        base = Settings.load(file) if file is not None else current
        new = base.with_sets(set_ or [])
        before = col.root
        rid = col.configure(new)
        current = new
        if not as_json:
            what = "unchanged" if rid == before else f"published root {rid[:12]}"
            out.print(f"settings of {collection}: {what}", markup=False)
    if as_json:
        sys.stdout.write(json.dumps(current.to_dict()) + "\n")
        return
    for section, value in current.to_dict().items():
        if isinstance(value, dict):
            for k, v in value.items():
                out.print(f"{section}.{k} = {json.dumps(v)}", markup=False, highlight=False)
        else:
            out.print(f"{section} = {json.dumps(value)}", markup=False, highlight=False)


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
    queries: Annotated[
        Path,
        typer.Option(
            help="Queries (BEIR queries.jsonl, cran.qry, a SMART .QRY, or URL-graded JSONL)."
        ),
    ],
    qrels: Annotated[
        Path | None,
        typer.Option(help="Judgments (BEIR qrels .tsv, cranqrel, or SMART .REL / qrels.text)."),
    ] = None,
    systems: Annotated[str, typer.Option(help="Comma-separated systems to run.")] = "",
    fmt: Annotated[
        str,
        typer.Option(
            "--format",
            help="beir | cranfield | smart (binary judgments, queries by .I) | urls (default: "
            "urls without --qrels)",
        ),
    ] = "",
    as_json: Annotated[bool, typer.Option("--json")] = False,
    group_by_page: Annotated[
        bool, typer.Option("--group-by-page", help="urls: one hit per page, as docs_search.")
    ] = False,
    ray: RayOpt = None,
) -> None:
    """nDCG@10, recall@100 and MRR@10 of each system; with URL-graded questions (``--format
    urls``) MRR, Hit@1/3/5 and nDCG@5 over the pages of the top 5 hits, and answer tokens."""
    from cogitave.eval.run import run_systems

    fmt = fmt or ("beir" if qrels is not None else "urls")
    if fmt == "urls":
        _eval_urls(collection, queries, systems, as_json, group_by_page)
        return
    if qrels is None:
        raise InputError(f"--format {fmt} needs --qrels")
    if fmt == "cranfield":
        from cogitave.eval import cranfield

        qs, rels = cranfield.read_queries(queries), cranfield.read_qrels(qrels)
    elif fmt == "smart":
        from cogitave.ingest import smart

        qs, rels = smart.read_queries(queries), smart.read_qrels(qrels)
    elif fmt == "beir":
        from cogitave.ingest import beir

        qs, rels = beir.read_queries(queries), beir.read_qrels(qrels)
    else:
        raise InputError("--format must be beir, cranfield, smart or urls")
    col = _open_any(collection, ray)
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


def _eval_urls(collection: Path, questions: Path, systems: str, as_json: bool, group: bool) -> None:
    """The URL-graded evaluation of ``eval`` (see ``cogitave.eval.docs``)."""
    from cogitave.collection import Collection
    from cogitave.eval.docs import collection_search, evaluate_questions, read_url_questions

    qs = read_url_questions(questions)
    col = Collection.open(collection)
    names = [s.strip() for s in systems.split(",") if s.strip()] or available_systems(col)
    opts = {"group_by_page": True} if group else {}
    scores = [evaluate_questions(n, qs, collection_search(col, n, **opts)) for n in names]
    if as_json:
        sys.stdout.write(json.dumps({"systems": {s.system: s.to_dict() for s in scores}}) + "\n")
        return
    t = Table("system", "MRR", "Hit@1", "Hit@3", "Hit@5", "nDCG@5", "answer tokens", "queries")
    for s in scores:
        m = s.metrics
        t.add_row(
            s.system,
            *(f"{m[k]:.4f}" for k in ("mrr", "hit@1", "hit@3", "hit@5", "ndcg@5")),
            f"{s.tokens:.0f}",
            str(len(s.outcomes)),
        )
    out.print(t)
    out.print("answer tokens: characters / 4 of the top 5 hits as compact JSON (an estimate)")


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
    workers: Annotated[int, typer.Option(help="Worker threads for request work.")] = 4,
    mcp_sessions: Annotated[
        int,
        typer.Option(help="MCP over HTTP: 0 = stateless (no sessions kept), else the cap."),
    ] = 0,
    mcp_idle: Annotated[
        float, typer.Option(help="MCP over HTTP: seconds before an idle session closes.")
    ] = 300.0,
    ray: RayOpt = None,
) -> None:
    """Serve REST, GraphQL (/graphql) and MCP (/mcp) over HTTP for one collection."""
    from cogitave.surfaces import http

    if api_key is None and "COGITAVE_API_KEY" in os.environ:
        api_key = os.environ["COGITAVE_API_KEY"]  # click reads an empty variable as unset
    api_key = http.check_api_key(api_key)  # an empty key is refused, never "no auth"
    if workers < 1 or mcp_sessions < 0 or mcp_idle <= 0:
        raise InputError("--workers must be >= 1, --mcp-sessions >= 0, --mcp-idle > 0")
    sessions = http.McpSessions(
        stateless=mcp_sessions == 0, max_sessions=max(1, mcp_sessions), idle_timeout_s=mcp_idle
    )
    col = _open_any(collection, ray)
    col.warm()  # the first request must not pay for loading the lexicon and the encoder
    col.follow()  # a root another process publishes is served within a second
    if host not in http.LOOPBACK and not api_key:
        err.print(f"warning: listening on {host} without an API key", markup=False)
    err.print(f"serving {collection} (root {col.root[:12]}) on http://{host}:{port}", markup=False)
    http.serve(col, host=host, port=port, api_key=api_key, workers=workers, mcp_sessions=sessions)


@app.command("mcp")
def mcp_(collection: CollectionOpt, ray: RayOpt = None) -> None:
    """Serve the MCP tools over stdio (for an MCP client to launch)."""
    from cogitave.surfaces.mcp import run_stdio

    col = _open_any(collection, ray)
    col.warm()
    col.follow()
    run_stdio(col)


def available_systems(col: Any) -> list[str]:
    """Systems the collection can run (dense ones need stored vectors)."""
    return list(col.systems())


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
