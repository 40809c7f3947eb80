"""The command line: ``cogitave index | watch | delete | search | roots | settings | encoders |
verify | eval | compact | demo | serve | mcp``.

Options in, one call of the indexing layer (:mod:`cogitave.indexing`) or of a service
operation (:mod:`cogitave.service.ops`), printing out (:mod:`cogitave.surfaces.terminal`).
Errors of the engine print one line (``error[code]: message``) on stderr and exit 2 for bad
input, 1 otherwise; never a traceback.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from cogitave import indexing
from cogitave.errors import CogitaveError, InputError
from cogitave.indexing import SourceSpec
from cogitave.printable import printable
from cogitave.surfaces import cli_options as site
from cogitave.surfaces import terminal
from cogitave.surfaces.terminal import err, out, print_results, progress_bar

if TYPE_CHECKING:
    from cogitave.reader import Reader

app = typer.Typer(
    name="cogitave",
    help="Cogitave Query: hybrid retrieval over documentation and knowledge graphs.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

SEARCH_FORMATS = ("text", "json", "markdown")


def _version(show: bool) -> None:
    if show:
        from cogitave import __version__

        sys.stdout.write(f"cogitave {__version__}\n")
        raise typer.Exit()


@app.callback()
def _main(
    version: Annotated[
        bool,
        typer.Option("--version", callback=_version, is_eager=True, help="Print the version."),
    ] = False,
    width: Annotated[
        int | None,
        typer.Option(
            min=20,
            max=terminal.PIPED_WIDTH,
            help="Columns to lay output out in (default: the terminal's; unwrapped in a pipe).",
        ),
    ] = None,
) -> None:
    """Cogitave Query: hybrid retrieval over documentation and knowledge graphs."""
    terminal.set_width(width)


def _reader(collection: Path, project: Path | None, sync: bool = False, **kw: Any) -> Reader:
    """The collection to read, pinned to a project's versions (reported on stderr); ``sync``:
    fetching the project's pins in the background (:mod:`cogitave.libraries.autosync`)."""
    reader = indexing.open_reader(collection, **kw)
    if project is not None:
        terminal.project_report(indexing.use_project(reader, project))
    if sync:
        from cogitave.libraries import autosync

        autosync.start(reader, project)
    return reader


@app.command()
def index(
    collection: site.CollectionOpt,
    source: site.IndexSourceArg = None,
    registry: site.RegistryOpt = None,
    fmt: site.FormatOpt = "auto",
    library: site.LibraryOpt = None,
    version: site.VersionOpt = None,
    replace: site.ReplaceOpt = False,
    base_url: site.BaseUrlOpt = None,
    allow_outside: site.AllowOutsideOpt = None,
    schema: site.SchemaOpt = None,
    skip_bad: site.SkipBadOpt = False,
    name: site.SourceOpt = None,
    add_only: site.AddOnlyOpt = False,
    watch_: site.WatchOpt = False,
    debounce: site.DebounceOpt = 300,
    quiet: site.QuietOpt = False,
    shards: site.ShardsOpt = None,
    ray: site.RayOpt = None,
    embed_actors: site.EmbedActorsOpt = 1,
    encoder: site.EncoderOpt = None,
    scope: site.ScopeOpt = None,
    include: site.IncludeOpt = None,
    exclude: site.ExcludeOpt = None,
    max_pages: site.MaxPagesOpt = 10_000,
    max_failures: site.MaxFailuresOpt = "10%",
    render: site.RenderOpt = "auto",
    concurrency: site.ConcurrencyOpt = 4,
    rate: site.RateOpt = 10.0,
    all_languages: site.LanguagesOpt = False,
    max_time: site.MaxTimeOpt = 3600.0,
    project: site.IndexProjectOpt = None,
    dev: site.DevOpt = False,
    only: site.OnlyOpt = None,
    dry_run: site.DryRunOpt = False,
    prune: site.PruneOpt = False,
    set_: site.SettingsSetOpt = None,
) -> None:
    """Sync SOURCE into the collection (created if absent): its new nodes are added, changed
    ones replaced, vanished ones deleted; nothing changed, no new root. A site is crawled
    (robots.txt, sitemaps, llms.txt, links; conditional requests on a re-sync), a git
    repository cloned shallow into the cache. Without SOURCE: --library NAME@VERSION imported
    from a registry of packs (--registry, else the libraries.registries setting). With
    --project DIR instead of SOURCE: the docs of every dependency of the project, each at the
    version it uses (a registry's pack, the installed package, its repository at the
    version's tag, or its docs site; --dry-run shows the plan)."""
    if project is not None:
        given = {"SOURCE": source, "--library": library, "--version": version,
                 "--watch": watch_ or None, "--shards": shards, "--ray": ray,
                 "--source": name, "--registry": registry}  # fmt: skip
        extra = [k for k, v in given.items() if v is not None]
        if extra:
            drop = ", ".join(extra)
            raise InputError(f"--project indexes the project's dependencies: drop {drop}")
        names = [n.strip() for n in (only or "").split(",") if n.strip()]
        terminal.index_project(collection, project, dev=dev, only=names, dry_run=dry_run,
                               prune=prune, max_failures=max_failures, sets=list(set_ or ()),
                               encoder=encoder, quiet=quiet)  # fmt: skip
        return
    if dev or only or dry_run or prune or set_:
        raise InputError("--dev, --only, --dry-run, --prune and --set go with --project DIR")
    if source is None or registry is not None:
        terminal.import_from_registry(collection, source, library, version, registry, replace,
                                      quiet)  # fmt: skip
        return
    crawl = {"scope": scope, "include": include, "exclude": exclude, "max_pages": max_pages,
             "max_failures": max_failures, "render": render, "concurrency": concurrency,
             "rate": rate, "all_languages": all_languages, "max_time": max_time}  # fmt: skip
    where = indexing.locate_source(source, crawl, base_url)
    spec = SourceSpec(where, collection, fmt, schema, skip_bad, name, add_only, base_url,
                      tuple(allow_outside or ()), library, version, replace,
                      encoder)  # fmt: skip
    terminal.index(spec, quiet, shards=shards, ray=ray, embed_actors=embed_actors)
    if watch_:
        terminal.watch(spec, debounce)


@app.command()
def watch(
    source: Annotated[str, typer.Argument(help="File or folder to keep in sync.")],
    collection: site.CollectionOpt,
    fmt: site.FormatOpt = "auto",
    library: site.LibraryOpt = None,
    version: site.VersionOpt = None,
    base_url: site.BaseUrlOpt = None,
    allow_outside: site.AllowOutsideOpt = None,
    schema: site.SchemaOpt = None,
    skip_bad: site.SkipBadOpt = False,
    name: site.SourceOpt = None,
    add_only: site.AddOnlyOpt = False,
    debounce: site.DebounceOpt = 300,
) -> None:
    """Sync SOURCE now, then again after every burst of file changes (Ctrl-C stops)."""
    where = indexing.locate_source(source)
    spec = SourceSpec(where, collection, fmt, schema, skip_bad, name, add_only, base_url,
                      tuple(allow_outside or ()), library, version)  # fmt: skip
    terminal.index(spec, quiet=True)
    terminal.watch(spec, debounce)


@app.command()
def delete(
    collection: site.CollectionOpt,
    uid: site.DeleteUidOpt = None,
    name: site.DeleteSourceOpt = None,
    library: site.DeleteLibraryOpt = None,
) -> None:
    """Delete nodes by uid, a whole source, or a library version, and publish a new root."""
    if sum(map(bool, (uid, name, library))) != 1:
        raise InputError("give --uid UID (repeatable), --source NAME or --library NAME[@VERSION]")
    terminal.delete(collection, uid or [], name, library)


@app.command()
def compact(collection: site.CollectionOpt, quiet: site.QuietOpt = False) -> None:
    """Merge each dimension's vector segments into one, then publish a new root."""
    col = indexing.open_collection(collection)
    before = col.snapshot.manifest.vector_segments
    with progress_bar(not quiet) as bar:
        rid = col.compact(progress=bar)
    after = col.snapshot.manifest.vector_segments
    out.print(
        f"compacted {collection}: {before} vector segments -> {after}; root {rid[:12]}, "
        f"{len(col)} live nodes",
        markup=False,
    )


@app.command()
def search(
    query: Annotated[str, typer.Argument(help="Query text.")],
    collection: site.CollectionOpt,
    limit: Annotated[int | None, typer.Option("--limit", "-n")] = None,
    offset: int | None = None,
    mode: Annotated[str | None, typer.Option(help="planned | hybrid | bm25 | dense")] = None,
    fmt: site.SearchFormatOpt = "text",
    as_json: Annotated[bool, typer.Option("--json", help="Same as --format json.")] = False,
    max_tokens: site.MaxTokensOpt = None,
    path_prefix: site.PathPrefixOpt = None,
    kind: site.KindOpt = None,
    group_by_page: site.GroupByPageOpt = None,
    library: site.LibrariesOpt = None,
    project: site.ProjectOpt = None,
    root: Annotated[str | None, typer.Option(help="A retained root id to read.")] = None,
    ray: site.RayOpt = None,
    partial: site.PartialOpt = False,
) -> None:
    """Search the collection."""
    from cogitave.service.args import SearchArgs

    fmt = "json" if as_json else fmt
    if fmt not in SEARCH_FORMATS:
        raise InputError(f"--format must be one of {', '.join(SEARCH_FORMATS)}, not {fmt!r}")
    given = {"limit": limit, "offset": offset, "mode": mode, "kind": kind or None,
             "path_prefix": path_prefix, "group_by_page": group_by_page, "root": root,
             "max_tokens": max_tokens, "library": library or None}  # fmt: skip
    args = SearchArgs(query, **{k: v for k, v in given.items() if v is not None})
    terminal.search(_reader(collection, project, ray=ray, partial=partial, root=root), args, fmt)


@app.command()
def roots(collection: site.CollectionOpt, as_json: site.JsonOpt = False) -> None:
    """List the retained roots, newest first."""
    from cogitave.service import ops

    answer = ops.roots(indexing.open_reader(collection))
    if as_json:
        sys.stdout.write(json.dumps(ops.to_json(answer)) + "\n")
        return
    out.print(terminal.roots_table(answer.roots))


@app.command()
def libraries(
    collection: site.CollectionOpt, as_json: site.JsonOpt = False, project: site.ProjectOpt = None
) -> None:
    """List the libraries the collection holds: versions, pages, nodes, source, commit,
    indexed at; with --project, the version the project reads of each and how it was
    chosen."""
    from cogitave.service import ops

    answer = ops.list_libraries(_reader(collection, project))
    if as_json:
        sys.stdout.write(json.dumps(ops.to_json(answer)) + "\n")
        return
    out.print(terminal.libraries_table(answer.libraries))


@app.command()
def pack(
    collection: site.CollectionOpt,
    library: Annotated[str, typer.Option("--library", help="NAME@VERSION to pack.")],
    output: site.PackOutputOpt = None,
    registry: site.PackRegistryOpt = None,
) -> None:
    """Write one library version as a portable pack (cogitave index FILE imports it), to a
    file (-o), into a registry folder (--registry: named in its index.json), or both."""
    if registry is not None or output is None:
        terminal.publish_pack(collection, library, registry, output)
        return
    info = indexing.export_pack(collection, library, output)
    out.print(f"packed {info.library}: {info.objects} objects, {info.bytes:,} bytes -> {output}",
              markup=False)  # fmt: skip


@app.command()
def settings(
    collection: site.CollectionOpt,
    set_: site.SettingsSetOpt = None,
    file: Annotated[
        Path | None, typer.Option("--file", help="A settings TOML file: replaces them all.")
    ] = None,
    as_json: site.JsonOpt = False,
    quiet: site.QuietOpt = False,
) -> None:
    """Show the collection's settings; with --set or --file, publish them in a new root
    (nothing is re-indexed). --set encoder=NAME moves the collection to another encoder:
    every node is embedded again (a progress bar shows how long), in a new root."""
    sets = terminal.move_encoder(collection, list(set_ or ()), quiet=quiet, as_json=as_json)
    answer = terminal.settings_answer(collection, sets, file)
    if as_json:
        sys.stdout.write(json.dumps(answer.settings.to_dict()) + "\n")
        return
    if set_ or file is not None:
        what = f"published root {answer.root[:12]}" if answer.changed else "unchanged"
        out.print(f"settings of {collection}: {what}", markup=False)
    for line in terminal.settings_lines(answer.settings.to_dict()):
        out.print(line, markup=False, highlight=False)


@app.command()
def encoders(as_json: site.JsonOpt = False) -> None:
    """The sentence encoders this installation can use: name, width, pooling, length, prefix,
    graph, licence."""
    from cogitave.expand.embed import encoder_rows

    rows = encoder_rows()
    if as_json:
        sys.stdout.write(json.dumps(rows) + "\n")
        return
    terminal.print_encoders(rows)


@app.command()
def verify(collection: site.CollectionOpt, as_json: site.JsonOpt = False) -> None:
    """Check HEAD and every retained root (hashes, objects, indexes, counts); exit 1 if bad.
    A collection of libraries: LIBRARIES.json, every version's collection, the shared graph,
    and leftovers of killed writers, each problem with its repair."""
    from cogitave.libraries.layout import is_library_collection
    from cogitave.libraries.verify import verify_libraries
    from cogitave.store.verify import verify_collection

    report: Any = (
        verify_libraries(collection)
        if is_library_collection(collection)
        else verify_collection(collection)
    )
    if as_json:
        sys.stdout.write(json.dumps(report.to_dict()) + "\n")
    else:
        sys.stdout.write("".join(line + "\n" for line in report.lines()))
    if not report.ok:
        sys.exit(1)  # main() drops the return code of a typer.Exit


@app.command("eval")
def eval_(
    collection: site.CollectionOpt,
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
    as_json: site.JsonOpt = False,
    group_by_page: Annotated[
        bool, typer.Option("--group-by-page", help="urls: one hit per page, as docs_search.")
    ] = False,
    ray: site.RayOpt = None,
) -> None:
    """nDCG@10, recall@100 and MRR@10 of each system; with URL-graded questions (``--format
    urls``) MRR, Hit@1/3/5 and nDCG@5 over the pages of the top 5 hits, answer tokens, and of
    the docs_search answer: the share holding every must_contain, hits shown, tokens read."""
    from cogitave.eval.run import evaluate_systems

    reader = indexing.open_reader(collection, ray=ray)
    names = [s.strip() for s in systems.split(",") if s.strip()]
    fmt = fmt or ("beir" if qrels is not None else "urls")
    scores = evaluate_systems(reader, fmt, queries, qrels, names, group_by_page=group_by_page)
    if as_json:
        sys.stdout.write(json.dumps({"systems": {s.system: s.to_dict() for s in scores}}) + "\n")
        return
    terminal.print_scores(scores)


DEMO_QUERIES = ("how do I index a folder of markdown", "reciprocal rank fusion",
                "what happens to a misspeled query", "bounded graph query limits")  # fmt: skip


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
    docs = indexing.docs_source(docs or indexing.project_docs())
    collection = collection or Path.cwd() / ".cogitave" / "demo"
    indexing.remove_collection(collection)
    res = terminal.index(SourceSpec(docs, collection, "markdown", name="docs"), quiet=False)
    out.print(f"[bold]indexed {res.live} nodes from {docs} into {collection}[/bold]")
    reader = indexing.open_reader(collection)
    for q in query or DEMO_QUERIES:
        terminal.heading(q)
        print_results(reader.search(q, limit=3))
    out.print(f'\nsearch it yourself:  cogitave search --collection {collection} "your words"')


@app.command()
def serve(
    collection: site.CollectionOpt,
    host: Annotated[str, typer.Option(help="Address to bind (loopback by default).")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port to listen on.")] = 8765,
    api_key: site.ApiKeyOpt = None,
    workers: Annotated[int, typer.Option(help="Worker threads for request work.")] = 4,
    mcp_sessions: site.McpSessionsOpt = 0,
    mcp_idle: site.McpIdleOpt = 300.0,
    processes: site.ProcessesOpt = "1",
    ray: site.RayOpt = None,
    project: site.ProjectOpt = None,
    sync: site.SyncOpt = False,
) -> None:
    """Serve REST, GraphQL (/graphql) and MCP (/mcp) over HTTP for one collection."""
    from cogitave.surfaces import http
    from cogitave.surfaces import processes as procs

    if api_key is None and "COGITAVE_API_KEY" in os.environ:
        api_key = os.environ["COGITAVE_API_KEY"]  # click reads an empty variable as unset
    api_key = http.check_api_key(api_key)  # an empty key is refused, never "no auth"
    sessions = http.McpSessions.of(mcp_sessions, mcp_idle)
    procs.check(n := procs.count(processes), workers, mcp_sessions, ray, sync, project)
    sock = http.bind(host, port)  # a busy port is an error before anything is loaded
    if host not in http.LOOPBACK and not api_key:
        err.print(f"warning: listening on {host} without an API key", markup=False)
    url = f"http://{f'[{host}]' if ':' in host else host}:{sock.getsockname()[1]}"

    def start() -> None:  # in each server process: the reader is opened there
        reader = _reader(collection, project, sync, ray=ray)
        err.print(f"serving {collection} (root {reader.root[:12]}) on {url}", markup=False)
        http.serve(reader, sock, host=host, api_key=api_key, workers=workers,
                   mcp_sessions=sessions, shared=n > 1)  # fmt: skip

    sys.exit(procs.run(n, sock, start)) if n > 1 else start()


@app.command("mcp")
def mcp_(
    collection: site.CollectionOpt,
    ray: site.RayOpt = None,
    project: site.ProjectOpt = None,
    sync: site.SyncOpt = False,
) -> None:
    """Serve the MCP tools over stdio (for an MCP client to launch)."""
    from cogitave.surfaces.mcp import run_stdio

    run_stdio(_reader(collection, project, sync, ray=ray))


def main() -> None:
    """Console entry point: engine errors become one line on stderr, never a traceback."""
    try:
        app(standalone_mode=False)
    except CogitaveError as e:
        sys.stderr.write(f"error[{e.code}]: {' '.join(e.message.split())}\n")
        sys.exit(2 if isinstance(e, InputError) or e.http_status < 500 else 1)
    except (typer.Abort, KeyboardInterrupt) as e:
        # click turns an EOFError into Abort too: one that escaped is a fault, not Ctrl-C
        cause = e.__cause__ or e.__context__
        if isinstance(cause, EOFError):
            why = printable(f"{type(cause).__name__}: {cause}", 200)
            sys.stderr.write(f"error[internal]: unexpected end of data ({why})\n")
            sys.exit(1)
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
