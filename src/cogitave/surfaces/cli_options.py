"""The options the commands of :mod:`cogitave.surfaces.cli` share, as typer annotations."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from cogitave.indexing import FORMATS

EncoderOpt = Annotated[
    str | None,
    typer.Option(
        "--encoder",
        help="Sentence encoder of a new collection (cogitave encoders lists them); an "
        "existing one keeps its own.",
    ),
]
CollectionOpt = Annotated[Path, typer.Option("--collection", "-c", help="Collection directory.")]
RayOpt = Annotated[
    str | None,
    typer.Option(
        "--ray", help="Sharded collections: a Ray address, or 'local' to start Ray for the command."
    ),
]
SourceOpt = Annotated[
    str | None,
    typer.Option("--source", help="Name of the source (default: its resolved path)."),
]
FormatOpt = Annotated[
    str,
    typer.Option(
        "--format",
        "-f",
        help=" | ".join(FORMATS) + " (smart: CISI, CACM, ...; docs: MkDocs, Hugo, Docusaurus, "
        "VitePress, Sphinx, Markdown/MDX/RST folder; markdown is the same; pyapi: an installed "
        "Python package's API, a package folder or a site-packages with --library)",
    ),
]
BaseUrlOpt = Annotated[
    str | None,
    typer.Option(
        "--base-url",
        help="Site URL that makes page URLs absolute (over config); for a crawled site, the "
        "public URL of the crawled prefix (a mirror, a local server).",
    ),
]
AllowOutsideOpt = Annotated[
    list[Path] | None,
    typer.Option(
        "--allow-outside",
        help="A folder outside the docs tree that its includes or config may read (repeatable).",
    ),
]
SchemaOpt = Annotated[Path | None, typer.Option(help="Schema file (TOML).")]
LibraryOpt = Annotated[
    str | None,
    typer.Option(
        "--library",
        help="The library SOURCE documents (default: as its docs say); of a site-packages, "
        "the distribution to read.",
    ),
]
VersionOpt = Annotated[
    str | None, typer.Option("--version", help="Its version (default: as its docs say).")
]
ReplaceOpt = Annotated[
    bool, typer.Option("--replace", help="Replace a version indexed from another source.")
]
LibrariesOpt = Annotated[
    list[str] | None,
    typer.Option("--library", help="Only this library, NAME or NAME@VERSION (repeatable)."),
]
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
JsonOpt = Annotated[bool, typer.Option("--json", help="Print one JSON object.")]
ProjectOpt = Annotated[
    Path | None,
    typer.Option(
        "--project", help="A project folder: read each library at the version its lockfile says."
    ),
]
SyncOpt = Annotated[
    bool,
    typer.Option(
        "--sync",
        help="With --project: fetch the docs of each dependency at its pin, now and whenever "
        "the project's manifests or lockfiles change, in the background.",
    ),
]
McpSessionsOpt = Annotated[
    int, typer.Option(help="MCP over HTTP: 0 = stateless (no sessions kept), else the cap.")
]
McpIdleOpt = Annotated[
    float, typer.Option(help="MCP over HTTP: seconds before an idle session closes.")
]
ApiKeyOpt = Annotated[
    str | None,
    typer.Option(
        envvar="COGITAVE_API_KEY", help="Require 'Authorization: Bearer KEY' (not /health)."
    ),
]

SettingsSetOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--set",
        help="section.key=value, a TOML value (feedback.enabled=false, "
        'docs.demote=["blog/*"]); repeatable. encoder=NAME re-embeds every node with '
        "that encoder in a new root.",
    ),
]
IndexSourceArg = Annotated[
    str | None,
    typer.Argument(
        help="File or folder, a docs site URL (https://...), or a git repository "
        "(git+https://host/org/repo\\[@REF]\\[#SUBDIR], a bare repository's path). "
        "Omitted: --library NAME@VERSION from a registry of packs (--registry, else the "
        "libraries.registries setting), or --project DIR.",
        metavar="SOURCE",
    ),
]
PackOutputOpt = Annotated[
    Path | None, typer.Option("--output", "-o", help="The pack file to write.")
]
PackRegistryOpt = Annotated[
    Path | None,
    typer.Option(
        "--registry", help="A registry folder: the pack written there and named in its index."
    ),
]
RegistryOpt = Annotated[
    str | None,
    typer.Option(
        "--registry",
        help="A registry of packs (a folder, file:// or http(s) URL holding index.json): "
        "import --library NAME@VERSION from it instead of indexing a SOURCE.",
    ),
]
IndexProjectOpt = Annotated[
    Path | None,
    typer.Option(
        "--project",
        help="Index the docs of every dependency of the project in this folder, each at the "
        "version its lockfile pins (else the installed one, else the newest its range allows).",
    ),
]
DevOpt = Annotated[bool, typer.Option("--dev", help="--project: the dev dependencies too.")]
OnlyOpt = Annotated[
    str | None, typer.Option("--only", help="--project: only these dependencies (a,b,c).")
]
DryRunOpt = Annotated[
    bool,
    typer.Option(
        "--dry-run",
        help="--project: print the plan (version, where the docs come from, why); write nothing.",
    ),
]
PruneOpt = Annotated[
    bool, typer.Option("--prune", help="--project: delete the versions no dependency pins.")
]

# -- a crawled site (cogitave index URL; the CLI reads them as site.XOpt) ---------------------
ScopeOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--scope",
        help="Site: a URL prefix to crawl (repeatable; default: the start page's folder).",
    ),
]
IncludeOpt = Annotated[
    list[str] | None,
    typer.Option("--include", help="Site: only pages whose path below the prefix matches."),
]
ExcludeOpt = Annotated[
    list[str] | None,
    typer.Option("--exclude", help="Site: leave out pages whose path below the prefix matches."),
]
MaxPagesOpt = Annotated[
    int, typer.Option("--max-pages", min=1, help="Site: the most URLs fetched (said if reached).")
]
MaxFailuresOpt = Annotated[
    str,
    typer.Option(
        "--max-failures",
        help="Site: failed URLs allowed, N or P% of those fetched; past it, exit 1 and "
        "publish nothing. --project: failed dependencies allowed, N or P%; past it, exit 1.",
    ),
]
RenderOpt = Annotated[
    str,
    typer.Option(
        "--render",
        help="Site: auto (the system's Chromium renders empty JavaScript pages) | never | always.",
    ),
]
ConcurrencyOpt = Annotated[
    int, typer.Option("--concurrency", min=1, max=64, help="Site: requests in flight per host.")
]
RateOpt = Annotated[
    float,
    typer.Option("--rate", min=0, help="Site: requests started per second per host (0: no limit)."),
]
MaxTimeOpt = Annotated[
    float,
    typer.Option(
        "--max-time",
        min=1,
        help="Site: seconds the whole crawl may take; past them it stops and indexes what it "
        "read (said in the report).",
    ),
]
LanguagesOpt = Annotated[
    bool,
    typer.Option("--all-languages", help="Site: crawl other languages' pages too (/fr/)."),
]

# index, delete and search options
WatchOpt = Annotated[
    bool, typer.Option("--watch", help="Then keep the source in sync as files change.")
]
ShardsOpt = Annotated[
    int | None, typer.Option("--shards", help="Create a sharded collection of N shards.")
]
EmbedActorsOpt = Annotated[
    int, typer.Option("--embed-actors", help="Encoder actors of a --ray build.")
]
DeleteUidOpt = Annotated[list[str] | None, typer.Option("--uid", help="A node uid (repeatable).")]
DeleteSourceOpt = Annotated[
    str | None, typer.Option("--source", help="Delete every node of this source.")
]
DeleteLibraryOpt = Annotated[
    str | None, typer.Option("--library", help="Delete NAME@VERSION, or every version.")
]
SearchFormatOpt = Annotated[
    str,
    typer.Option(
        "--format", help="text (breadcrumb, URL, snippet) | json | markdown (the agents' answer)."
    ),
]
MaxTokensOpt = Annotated[
    int | None, typer.Option(help="Token budget of --format markdown (about 4 characters).")
]
PathPrefixOpt = Annotated[
    str | None,
    typer.Option(help="Only pages whose path or URL path starts with this (/tutorial/)."),
]
KindOpt = Annotated[
    list[str] | None, typer.Option("--kind", help="Only nodes of this kind (repeatable).")
]
GroupByPageOpt = Annotated[
    bool | None,
    typer.Option(
        "--group-by-page/--no-group-by-page",
        help="One hit per page (the default), or sections listed apart.",
    ),
]
PartialOpt = Annotated[
    bool, typer.Option("--partial", help="Sharded: answer without shards that fail.")
]
ProcessesOpt = Annotated[
    str,
    typer.Option(
        "--processes",
        help="Server processes on the one port (each loads the collection and its encoder); "
        "auto = the CPUs this process may use, at most 8.",
    ),
]
