"""What the command line prints: progress bars with rates and ETAs, hits for a person, one
line per sync, tables.

Standard output carries answers (hits, JSON, Markdown, tables); standard error carries
progress, reports and errors, so a pipe gets the answer alone.
"""

from __future__ import annotations

import json
import signal
import sys
import textwrap
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.markup import escape
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
from cogitave.printable import printable

if TYPE_CHECKING:
    from pathlib import Path

    from cogitave.eval.docs import UrlScore
    from cogitave.eval.run import SystemScore
    from cogitave.indexing import IndexResult, SourceSpec
    from cogitave.query.types import Hit, SearchResponse
    from cogitave.reader import Reader
    from cogitave.service.args import SearchArgs
    from cogitave.store.roots import RootInfo

PIPED_WIDTH = 4096
"""Line width when the output is not a terminal: nothing is wrapped or cut (a URL split over
two lines is a broken URL for a program that reads it)."""


def _console(stderr: bool = False) -> Console:
    stream = sys.stderr if stderr else sys.stdout
    if stream.isatty():
        return Console(stderr=stderr)
    return Console(stderr=stderr, soft_wrap=True, width=PIPED_WIDTH)


out = _console()
err = _console(stderr=True)


def set_width(width: int | None) -> None:
    """Lay output out at ``width`` columns (``--width``), on a terminal or in a pipe; None:
    the terminal's width, or unwrapped when the stream is not a terminal."""
    for console, stream in ((out, sys.stdout), (err, sys.stderr)):
        if width is None and stream.isatty():
            continue  # the terminal's own width, as rich reads it
        console.width = width or PIPED_WIDTH
        console.soft_wrap = console.width >= PIPED_WIDTH


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
    rate, elapsed time and the time left per stage. It shows from the first callback, so a
    command that fails before any work prints its error alone."""
    if not enabled:
        yield lambda stage, done, total: None
        return
    bar: Progress | None = None
    tasks: dict[str, Any] = {}

    def update(stage: str, done: int, total: int) -> None:
        nonlocal bar
        if bar is None:
            bar = Progress(
                TextColumn("{task.description:>10}"),
                BarColumn(),
                MofNCompleteColumn(),
                RateColumn(),
                TimeElapsedColumn(),
                TextColumn("eta"),
                TimeRemainingColumn(),
                console=err,
                transient=False,
            )
            bar.start()
        if stage not in tasks:
            tasks[stage] = bar.add_task(stage, total=max(total, 1))
        bar.update(tasks[stage], completed=done, total=max(total, 1))

    try:
        yield update
    finally:
        if bar is not None:
            bar.stop()


def sync_line(res: IndexResult) -> str:
    """One line for one sync: what was read, what changed, what was embedded, the root."""
    pub = res.published
    if pub is None and res.shards is None:  # an index pack
        return (
            f"imported {printable(res.library)} from {printable(res.source)}: {res.live} nodes, "
            "nothing embedded; "
            f"root {res.root[:12]}"
        )
    head = f"indexed {res.read} nodes ({len(res.skipped)} skipped) from {res.source}: "
    if res.shards is not None:
        return head + f"{res.shards} shards"
    assert pub is not None
    if pub.root is None:
        return head + f"nothing changed; root stays {res.root[:12]}, {res.live} live nodes"
    return head + (
        f"{len(pub.added)} added, {len(pub.changed)} changed, "
        f"{len(pub.deleted)} deleted, {pub.unchanged} unchanged; "
        f"{pub.encoded} texts embedded, {pub.reused} reused; "
        f"root {pub.root[:12]}, {res.live} live nodes"
    )


def search(reader: Reader, args: SearchArgs, fmt: str) -> None:
    """``cogitave search``: the answer as ``fmt`` (markdown: docs_search's text; json; text:
    hits for a person)."""
    from cogitave.service import ops

    if fmt == "markdown":
        sys.stdout.write(ops.docs_search(reader, args).markdown + "\n")
        return
    if fmt == "json":
        body = ops.search_answer(reader, args).to_dict()
        sys.stdout.write(json.dumps(body, ensure_ascii=False) + "\n")
        return
    res = ops.search(reader, args)
    asked = args.request.libraries
    refs = [h.library for h in res.results if h.library]
    print_results(
        res, provenance={p.library: p.describe() for p in ops.provenance_of(reader, refs, asked)}
    )


def print_results(
    res: SearchResponse,
    hits: Sequence[Hit] | None = None,
    provenance: Mapping[str, str] | None = None,
) -> None:
    """Hits for a person: rank, breadcrumb (or title), where it lives, its library version
    and how it was chosen (``provenance``: library version -> that line), a readable
    snippet."""
    from cogitave.service.render import crumbs

    if not res.results:
        out.print("[dim]no results[/dim]")
    for h in res.results if hits is None else hits:
        title = escape(crumbs(h.breadcrumb, h.title, h.uid))
        out.print(
            f"[bold]{h.rank:>3}. {title}[/bold]  [dim]{escape(h.kind)} · {h.score:.4f}[/dim]",
            highlight=False,
        )
        out.print(f"     {h.url or h.path or h.uid}", markup=False, highlight=False)
        if h.library:
            line = (provenance or {}).get(h.library) or h.library
            out.print(f"     {line}", markup=False, highlight=False)
        if h.snippet:
            snippet = " ".join(h.snippet.split())
            for line in textwrap.wrap(snippet, width=96, max_lines=3, placeholder=" …"):
                out.print(f"     {line}", markup=False, highlight=False, style="dim")
    ms = res.diagnostics.get("total_ms", 0)
    out.print(f"[dim]{len(res.results)} results · {ms:.1f} ms · root {res.root[:12]}[/dim]")


def roots_table(roots: Sequence[RootInfo]) -> Table:
    """The retained roots, newest first, with full ids."""
    t = Table("root", "created", "nodes", "segments", "parent", "")
    for r in roots:
        t.add_row(
            r.id,
            r.created,
            str(r.nodes),
            str(r.segments),
            (r.parent or "-")[:12],
            " ".join(x for x, on in (("HEAD", r.head), ("held by a reader", r.held)) if on),
        )
    return t


def settings_lines(settings: dict[str, Any]) -> list[str]:
    """``section.key = value`` per setting (values as JSON)."""
    out_lines: list[str] = []
    for section, value in settings.items():
        items = value.items() if isinstance(value, dict) else [(None, value)]
        for k, v in items:
            key = section if k is None else f"{section}.{k}"
            out_lines.append(f"{key} = {json.dumps(v)}")
    return out_lines


def print_scores(scores: Sequence[SystemScore] | Sequence[UrlScore]) -> None:
    """One row per system: judged metrics and latency, or the URL-graded questions'."""

    from cogitave.eval.docs import UrlScore
    from cogitave.eval.run import SystemScore

    if scores and isinstance(scores[0], UrlScore):
        head = ("system", "MRR", "Hit@1", "Hit@3", "Hit@5", "nDCG@5", "answer tokens")
        t = Table(*head, "must-contain", "hits shown", "tokens read", "queries")
        for u in scores:
            assert isinstance(u, UrlScore)
            metrics = (f"{u.metrics[k]:.4f}" for k in ("mrr", "hit@1", "hit@3", "hit@5", "ndcg@5"))
            t.add_row(u.system, *metrics, f"{u.tokens:.0f}", *read_cells(u), str(len(u.outcomes)))
        out.print(t)
        out.print("answer tokens: characters / 4 of the top 5 hits as compact JSON (an estimate)")
        out.print(
            "must-contain: share of questions whose docs_search Markdown answer holds every "
            "must_contain string; hits shown (median) and tokens read (mean) of that answer"
        )
        return
    t = Table("system", "nDCG@10", "recall@100", "MRR@10", "queries", "p50 ms", "p99 ms")
    for s in scores:
        assert isinstance(s, SystemScore)
        m = s.metrics
        t.add_row(
            s.system,
            *(f"{m[k]:.4f}" for k in ("ndcg@10", "recall@100", "mrr@10")),
            str(s.queries),
            f"{s.p50_ms:.2f}",
            f"{s.p99_ms:.2f}",
        )
    out.print(t)


def read_cells(u: UrlScore) -> tuple[str, str, str]:
    """The must-contain rate, median hits shown and tokens read of a URL score ("-": none)."""
    r = u.read
    if r is None:
        return ("-", "-", "-")
    rate = "-" if r.contains is None else f"{r.contains:.3f} ({r.judged})"
    return (rate, f"{r.shown:g}", f"{r.tokens:.0f}")


def heading(text: str) -> None:
    """A section heading: a rule on a terminal, a plain line in a pipe."""
    if out.width < PIPED_WIDTH:
        out.rule(f"[bold]{escape(text)}")
    else:
        out.print(f"== {text}", markup=False, highlight=False)


def libraries_table(libraries: Sequence[Any]) -> Table:
    """Per library version: pages, nodes, where it came from, when, and whether reads
    without a version cover it (``*``; a project's pin that is not exact says so)."""
    from cogitave.service.ops import choice_text

    t = Table("library", "version", "pages", "nodes", "source", "commit", "indexed at", "")
    for lib in libraries:
        for v in lib.versions:
            note = "*" if v.default else ""
            if v.version_match:
                note += " " + choice_text(v.version_match, v.wanted)
            # what a pack or a crawl recorded: escaped, bounded, and never read as markup
            cells = (lib.name, v.version, str(v.pages), str(v.nodes), v.source,
                     (v.commit or "-")[:12], v.indexed_at, note.strip())  # fmt: skip
            t.add_row(*(Text(printable(c, 200)) for c in cells))
        if lib.project and lib.project.startswith("none"):
            cells = (lib.name, "-", "", "", "", "", "", f"not read: {lib.project}")
            t.add_row(*(Text(printable(c, 200)) for c in cells))
    return t


# -- indexing, as the command line runs it -------------------------------------------------
def index(
    spec: SourceSpec,
    quiet: bool,
    *,
    shards: int | None = None,
    ray: str | None = None,
    embed_actors: int = 1,
) -> IndexResult:
    """Sync one source and print what changed; the ingest report and skipped records go to
    stderr before the long embedding step, so a mistake in the source shows at once."""

    def read(batch: Any) -> None:
        for p in batch.problems:
            sys.stderr.write(f"skipped {p}\n")
        report = getattr(batch, "report", None)
        if report and not quiet:
            err.print(report, markup=False)

    from cogitave import indexing

    try:
        with progress_bar(not quiet) as bar:
            res = indexing.index(
                spec, progress=bar, on_read=read, shards=shards, ray=ray, embed_actors=embed_actors
            )
    except CogitaveError as e:
        report = e.details.get("report")  # a failed crawl: what it did, before the error line
        if isinstance(report, str):
            err.print(report, markup=False)
        raise
    for one in (res, *res.others):
        out.print(sync_line(one), markup=False, soft_wrap=True)
    return res


def import_from_registry(
    collection: Path,
    source: str | None,
    library: str | None,
    version: str | None,
    registry: str | None,
    replace: bool,
    quiet: bool,
) -> Any:
    """``index --library NAME@VERSION [--registry R]`` without a SOURCE: import a library
    version from a registry of packs and say what arrived."""
    from cogitave import indexing
    from cogitave.errors import InputError

    if source is not None:
        raise InputError("--registry imports a pack: give it without a SOURCE")
    if library is None:
        raise InputError(
            "give a SOURCE to index, --library NAME@VERSION to import, or --project DIR for "
            "the docs of a project's dependencies"
        )

    with progress_bar(not quiet) as bar:
        res = indexing.import_from_registry(
            collection, library, version, registry, replace=replace, progress=bar
        )
    e = res.library
    out.print(
        f"imported {e.ref} from registry {res.registry}: {e.nodes} nodes, {res.bytes:,} bytes, "
        f"root {e.root[:12]} (nothing embedded)",
        markup=False,
        soft_wrap=True,
    )
    return res


def publish_pack(
    collection: Path, library: str, registry: Path | None, output: Path | None
) -> None:
    """``pack --registry DIR [-o FILE]``: publish a library version into a registry folder
    (and copy its pack to FILE)."""
    from cogitave import indexing
    from cogitave.errors import InputError

    if registry is None:
        raise InputError("give -o FILE, --registry FOLDER, or both")
    entry = indexing.publish_pack(collection, library, registry, output)
    where = f"{registry / entry.url}" + (f" and {output}" if output else "")
    out.print(f"published {entry.ref} ({entry.encoder or 'no encoder'}) -> {where}; "
              f"{registry / 'index.json'} updated", markup=False, soft_wrap=True)  # fmt: skip


def settings_answer(collection: Path, sets: list[str], file: Path | None) -> Any:
    """The settings of a collection: plain, sharded (shown only) or of libraries
    (``settings``)."""
    from cogitave import indexing
    from cogitave.libraries.collection import LibraryCollection
    from cogitave.libraries.layout import is_library_collection
    from cogitave.service import ops

    if is_library_collection(collection):
        return ops.library_settings(LibraryCollection.open(collection), sets, file)
    return ops.settings(indexing.open_reader(collection), sets, file)


def watch(spec: SourceSpec, debounce: int) -> None:
    """Sync after every burst of changes until Ctrl-C or SIGTERM; errors print and the
    watch goes on."""

    def result(res: IndexResult | CogitaveError) -> None:
        if isinstance(res, CogitaveError):
            sys.stderr.write(f"error[{res.code}]: {' '.join(res.message.split())}\n")
        else:
            out.print(sync_line(res), markup=False, soft_wrap=True)
        sys.stdout.flush()

    def interrupt(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt

    from cogitave import indexing

    if threading.current_thread() is threading.main_thread():
        # SIGTERM (a service manager, or a shell whose background jobs ignore SIGINT) stops
        # the watch as Ctrl-C does; a publish it interrupts leaves HEAD as any crash does
        signal.signal(signal.SIGTERM, interrupt)
    err.print(f"watching {spec.source} (Ctrl-C stops)", markup=False)
    try:
        indexing.watch(spec, result, debounce=debounce)
    except KeyboardInterrupt:
        err.print("stopped watching", markup=False)


def delete(collection: Path, uids: Sequence[str], name: str | None, library: str | None) -> None:
    """Delete a library version, a source or nodes by uid (one of them), and say what went."""
    from cogitave import indexing

    if library is not None:
        gone = indexing.delete_library(collection, library)
        out.print(f"deleted {', '.join(gone)} from {collection}", markup=False)
        return
    if name is not None:
        d = indexing.delete_source(collection, name)
        what = f"deleted source {name}: {len(d.deleted)} nodes"
    else:
        d = indexing.delete_nodes(collection, uids)
        if not d.deleted:
            out.print(f"no such nodes in {collection}; nothing changed (root {d.root[:12]})")
            return
        ignored = f" ({d.unknown} unknown uids ignored)" if d.unknown else ""
        what = f"deleted {len(d.deleted)} nodes{ignored}"
    out.print(f"{what}; root {d.root[:12]}, {d.live} live nodes", markup=False)


def project_report(pins: Any) -> None:
    """What ``--project`` chose, on stderr: per library used, the version read and how."""
    if pins is None:
        err.print("warning: this collection holds one library; --project pins nothing")
        return
    # a cloned project's files wrote these: escaped and bounded before a terminal shows them
    for w in pins.warnings:
        err.print(f"warning: {printable(w, 400)}", markup=False)
    for d in pins.dependencies:
        if d.library is not None:
            read = f"{d.library}@{d.version}" if d.version else "not read unless named"
            line = f"{d.package}: {read} ({d.match}: {d.reason})"
            err.print(printable(line, 400), markup=False, highlight=False)


def move_encoder(collection: Path, sets: list[str], *, quiet: bool, as_json: bool) -> list[str]:
    """``settings --set encoder=NAME``: re-embed the collection with NAME (a progress bar, a
    line saying where it went); returns the other settings to publish."""
    from cogitave import indexing

    def key(s: str) -> str:
        return s.split("=", 1)[0].strip()

    moves = {s.split("=", 1)[1].strip().strip("\"'") for s in sets if key(s) == "encoder"}
    if len(moves) > 1:
        raise InputError(f"--set encoder= given {len(moves)} different encoders")
    if moves:
        with progress_bar(not quiet and not as_json) as bar:
            rid, moved = indexing.reembed(collection, moves.pop(), bar)
        if not as_json:
            what = f"re-embedded in root {rid[:12]}" if moved else "unchanged"
            snap = indexing.open_collection(collection).snapshot
            graph = f", graph {snap.encoder_graph}" if snap.encoder_graph else ""
            out.print(f"encoder of {collection}: {snap.encoder_name}{graph} ({what})", markup=False)
    return [s for s in sets if key(s) != "encoder"]


def print_encoders(rows: Sequence[dict[str, Any]]) -> None:
    """``cogitave encoders``: each encoder and what it is."""
    from cogitave.expand.embed import DEFAULT_ENCODER

    for r in rows:
        mark = " (default)" if r["name"] == DEFAULT_ENCODER else ""
        out.print(f"{r['name']}{mark}", markup=False)
        for k in ("aliases", "dim", "pooling", "max_length", "query_prefix", "graph",
                  "installed", "licence", "credit"):  # fmt: skip
            out.print(f"  {k}: {r[k]}", markup=False, highlight=False)


def index_project(
    collection: Path,
    project: Path,
    *,
    dev: bool,
    only: Sequence[str],
    dry_run: bool,
    prune: bool,
    max_failures: str,
    sets: Sequence[str],
    encoder: str | None,
    quiet: bool,
) -> None:
    """``index --project``: the plan (on stdout with ``--dry-run``, then nothing is written;
    else on stderr), one progress bar over the dependencies with each fetch's own stages
    below it, then the report on stdout (a run past ``--max-failures``: the report on
    stderr, then the error)."""
    from cogitave import indexing
    from cogitave.ingest.web.crawl import failure_limit
    from cogitave.libraries import deps

    failure_limit(max_failures, 0)  # a bad value fails before any work
    indexing.check_folder(collection)
    from cogitave.collection import Collection

    if Collection.exists(collection):
        raise InputError(f"{collection} is a collection of one source: index a project's "
                         "dependencies into a new collection")  # fmt: skip
    ctx = deps.context(collection, project, encoder=encoder, sets=sets)
    chosen, warnings = deps.project_dependencies(project, dev=dev, only=only)
    if not quiet:
        err.print(f"planning {len(chosen)} dependencies of {printable(project, 200)}",
                  markup=False, highlight=False)  # fmt: skip
    plans = deps.plan(chosen, ctx)
    shown = out if dry_run else err
    if dry_run or not quiet:
        for w in warnings:
            shown.print(f"warning: {printable(w, 400)}", markup=False, highlight=False)
        for p in plans:
            shown.print(p.line, markup=False, highlight=False, soft_wrap=True)
    if dry_run:
        if prune:
            for ref in deps.prune(collection, plans, only, dry=True):
                out.print(f"would prune {printable(ref, 200)}", markup=False, highlight=False)
        todo = sum(1 for p in plans if not p.held)
        out.print(f"{len(plans)} dependencies: {len(plans) - todo} held already, {todo} to "
                  "fetch (dry run: nothing written)", markup=False, highlight=False)  # fmt: skip
        return
    todo = sum(1 for p in plans if not p.held)
    try:
        with progress_bar(not quiet and todo > 0) as bar:
            ctx.progress = bar
            bar("deps", 0, todo)

            def done(outcome: Any, n: int, total: int) -> None:
                bar("deps", n, total)

            report = deps.run(plans, ctx, max_failures=max_failures, on_done=done)
    except CogitaveError as e:
        text = e.details.get("report")
        if isinstance(text, str):
            err.print(text, markup=False, highlight=False)
        raise
    report.warnings = warnings
    if prune:
        report.pruned = deps.prune(collection, plans, only)
    for line in report.lines():
        out.print(line, markup=False, highlight=False, soft_wrap=True)
