"""The MCP surface: seven read-only tools over one :class:`~cogitave.reader.Reader`.

``docs_search``, ``code_sample_search``, ``docs_fetch``, ``get_related``,
``get_learning_path``, ``resolve_xref`` and ``query_graph``, each one service operation
(:mod:`cogitave.service.ops`) with its typed arguments: a tool passes what the model gave and
the operation's argument type holds every default. The search tools and ``docs_fetch`` answer
Markdown text within a token budget (:mod:`cogitave.service.render`);
the others compact JSON; every answer also carries structured content. Each call runs on a
worker thread under a cost budget (:mod:`cogitave.surfaces.cost`); arguments are strict
(``"10"`` is not an integer). Every bad argument or bound violation comes back as a tool
execution error (``isError: true``) whose text names the error code and the reason, so a model
can correct the call; unknown arguments are rejected, not dropped. Transports: stdio
(``cogitave mcp``) and streamable HTTP (mounted at ``/mcp`` by :mod:`cogitave.surfaces.http`).
"""

# No ``from __future__ import annotations``: the tool signatures quote this collection's
# kinds and dimensions, so their annotations must be evaluated where the tools are defined.
from collections.abc import Callable
from typing import Annotated, Any, Literal

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.tools import Tool
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import ConfigDict, Field, ValidationError

from cogitave import __version__
from cogitave.errors import CogitaveError
from cogitave.graph.query import DEFAULT_LIMIT, MAX_LIMIT
from cogitave.graph.traverse import MAX_DEPTH
from cogitave.query.types import MAX_PREFIX_CHARS, MAX_QUERY_CHARS
from cogitave.reader import Reader
from cogitave.schema import EDGE_LABELS
from cogitave.service import ops
from cogitave.service.args import (
    DEFAULT_LIMIT as SEARCH_LIMIT,
)
from cogitave.service.args import (
    MAX_REF_CHARS,
    RELATED_DEFAULT_LIMIT,
    RELATED_MAX_LIMIT,
    TOOL_MAX_LIMIT,
    XREF_DEFAULT_LIMIT,
    XREF_MAX_LIMIT,
    CodeSearchArgs,
    FetchArgs,
    GraphQueryArgs,
    LearningPathArgs,
    LibraryArgs,
    RelatedArgs,
    SearchArgs,
    XrefArgs,
)
from cogitave.service.render import (
    DEFAULT_FETCH_TOKENS,
    DEFAULT_TOKENS,
    MAX_TOKENS,
    MIN_TOKENS,
)
from cogitave.surfaces.cost import DEFAULT_LIMITS, Budget, Limits, WorkerPool, json_size

SERVER_NAME = "cogitave"
READ_ONLY = ToolAnnotations(read_only_hint=True, idempotent_hint=True, open_world_hint=False)
Label = Literal[EDGE_LABELS]  # type: ignore[valid-type]  # the closed edge vocabulary

LogLevel = Literal["DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"]
Query = Annotated[
    str,
    Field(
        min_length=1,
        max_length=MAX_QUERY_CHARS,
        description="What to look for, in plain words (a question, a task, an error message).",
    ),
]
Limit = Annotated[
    int,
    Field(
        ge=1,
        le=TOOL_MAX_LIMIT,
        description=f"How many results (1-{TOOL_MAX_LIMIT}, default {SEARCH_LIMIT}).",
    ),
]
MaxTokens = Annotated[
    int,
    Field(
        ge=MIN_TOKENS,
        le=MAX_TOKENS,
        description=f"Token budget of the Markdown answer ({MIN_TOKENS}-{MAX_TOKENS}, default "
        f"{DEFAULT_TOKENS}; a token is about 4 characters).",
    ),
]
Uid = Annotated[str, Field(min_length=1, description="A node uid, as a search result gives it.")]
Version = Annotated[
    str | None,
    Field(
        max_length=100,
        description="The version of `library` to read (default: the version the project "
        "uses, else the newest held).",
    ),
]


ENVELOPE_BYTES = 256
"""The JSON-RPC envelope around a tool answer (ids, type names), at most."""


def _answer(budget: Budget, answer: Any) -> CallToolResult:
    """A tool answer: Markdown text when the answer has it (search, fetch), else compact
    JSON; the structured content beside it. Together, as the bytes the transport sends
    (the text content JSON-escaped once more), within the response-bytes bound."""
    public = ops.to_json(answer)
    text = public.pop("markdown", None)  # the text content; not repeated in the structure
    data = budget.encode(public)
    if not isinstance(text, str):
        text = data.decode()
    cap = budget.limits.response_bytes
    wire = ENVELOPE_BYTES + len(data) + json_size(text, cap)
    if wire > cap:
        raise budget.too_large()
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=public)


def _strict(tool: Tool) -> Tool:
    """Reject unknown arguments (the SDK's argument model ignores them by default) and values
    of the wrong type (``"10"`` or ``true`` for an integer), as REST does."""
    base = tool.fn_metadata.arg_model
    model = type(
        base.__name__,
        (base,),
        {
            "__module__": base.__module__,
            "model_config": ConfigDict(extra="forbid", strict=True, arbitrary_types_allowed=True),
        },
    )
    tool.fn_metadata.arg_model = model
    tool.parameters = model.model_json_schema(by_alias=True)
    run = tool.run

    async def checked(*args: Any, **kw: Any) -> Any:
        """The SDK's run, with an argument error told as one line per argument (not
        pydantic's text with its links)."""
        try:
            return await run(*args, **kw)
        except ToolError as e:
            if not isinstance(e.__cause__, ValidationError):
                raise
            why = argument_errors(e.__cause__)
            raise ToolError(f"error[bad_input]: {tool.name}: {why}") from None

    object.__setattr__(tool, "run", checked)
    return tool


def argument_errors(e: ValidationError) -> str:
    """``limit: must be at most 50; query: required`` from pydantic's errors."""
    parts = []
    for err in e.errors(include_url=False):
        where = ".".join(str(x) for x in err.get("loc", ())) or "arguments"
        msg = str(err.get("msg", "invalid")).replace("Input should be", "must be")
        msg = msg.replace("Extra inputs are not permitted", "is not an argument of this tool")
        parts.append(f"{where}: {msg}")
    return "; ".join(parts)


def _describe(reader: Reader) -> dict[str, str]:
    """Facts about this collection that the tool descriptions quote."""
    d = reader.describe()
    return {
        "kinds": ", ".join(d.kinds) or "none yet",
        "semantic": ", ".join(d.semantic),
        "exact": ", ".join(d.exact) or "none",
        "labels": ", ".join(d.labels),
        "libraries": "; ".join(d.libraries),
    }


def build_mcp(
    col: Reader,
    *,
    log_level: LogLevel = "WARNING",
    pool: WorkerPool | None = None,
    limits: Limits = DEFAULT_LIMITS,
) -> MCPServer:
    """An MCP server whose tools answer from ``col`` (opened once by the caller).

    Each call gets a budget of ``limits`` and runs on ``pool`` (a worker thread, never the
    event loop); its answer is built and measured there too. ``log_level`` WARNING keeps
    routine tool errors (the model's bad calls) out of the log."""
    facts = _describe(col)
    workers = pool if pool is not None else WorkerPool()
    held = f" Libraries here: {facts['libraries']}." if facts["libraries"] else ""
    Library = Annotated[
        str | list[str] | None,
        Field(
            description="Only this library (a name, or name@version; a list for several). "
            f"Default: every library at its default version.{held}"
        ),
    ]
    OneLibrary = Annotated[
        str | None,
        Field(description=f"The library to read in (a name, or name@version).{held}"),
    ]

    async def _call(fn: Callable[[], Any], *, heavy: bool = False) -> CallToolResult:
        """Run a facade call on the pool (graph walks on its heavy lane); an engine error
        becomes a ToolError the model can read."""
        budget = Budget(limits)
        try:
            return await workers.run(budget, lambda: _answer(budget, fn()), heavy=heavy)
        except CogitaveError as e:
            raise ToolError(f"error[{e.code}]: {' '.join(e.message.split())}") from e

    async def docs_search(
        query: Query,
        limit: Limit = SEARCH_LIMIT,
        kind: Annotated[
            list[str] | None,
            Field(description=f"Keep only nodes of these kinds. Kinds here: {facts['kinds']}."),
        ] = None,
        dimensions: Annotated[
            list[str] | None,
            Field(description=f"Search only these text dimensions: {facts['semantic']}."),
        ] = None,
        filters: Annotated[
            dict[str, str | list[str]] | None,
            Field(
                description="Keep nodes whose exact dimension has one of the values, e.g. "
                f'{{"language": "python"}}. Exact dimensions here: {facts["exact"]}.'
            ),
        ] = None,
        path_prefix: Annotated[
            str | None,
            Field(
                max_length=MAX_PREFIX_CHARS,
                description="Keep only pages under this path or URL path, e.g. /tutorial/ "
                "or docs/guide/ (a section of the site).",
            ),
        ] = None,
        explain: Annotated[
            bool, Field(description="Return the full diagnostics (plan, lenses, timings).")
        ] = False,
        max_tokens: MaxTokens = DEFAULT_TOKENS,
        library: Library = None,
        version: Version = None,
    ) -> CallToolResult:
        def run() -> ops.DocsAnswer:
            args = SearchArgs(
                query=query,
                limit=limit,
                kind=kind,
                dimensions=dimensions,
                filters=filters,
                explain=explain,
                path_prefix=path_prefix,
                max_tokens=max_tokens,
                library=library,  # type: ignore[arg-type]
                version=version,
            )
            return ops.docs_search(col, args)

        return await _call(run)

    async def code_sample_search(
        query: Query,
        language: Annotated[
            str | None,
            Field(description="Only samples in this language (fence name: python, bash, ...)."),
        ] = None,
        limit: Limit = SEARCH_LIMIT,
        max_tokens: MaxTokens = DEFAULT_TOKENS,
        library: Library = None,
        version: Version = None,
    ) -> CallToolResult:
        libs = (library,) if isinstance(library, str) else library
        return await _call(
            lambda: ops.code_sample_search(
                col,
                CodeSearchArgs(query, language, limit, max_tokens, libs and tuple(libs), version),
            )
        )

    async def docs_fetch(
        ref: Annotated[
            str,
            Field(
                min_length=1,
                max_length=MAX_REF_CHARS,
                description="What to read: a URL (absolute or /path/), a source path, a uid, "
                "or page#anchor / a section uid for one section.",
            ),
        ],
        max_tokens: Annotated[
            int,
            Field(
                ge=MIN_TOKENS,
                le=MAX_TOKENS,
                description=f"Token budget of the answer ({MIN_TOKENS}-{MAX_TOKENS}, default "
                f"{DEFAULT_FETCH_TOKENS}; a token is about 4 characters).",
            ),
        ] = DEFAULT_FETCH_TOKENS,
        offset: Annotated[
            int,
            Field(ge=0, description="Block to start from: the next_offset of the last answer."),
        ] = 0,
        library: OneLibrary = None,
        version: Version = None,
    ) -> CallToolResult:
        return await _call(
            lambda: ops.fetch(col, FetchArgs(ref, max_tokens, offset, library, version))
        )

    async def get_related(
        uid: Uid,
        labels: Annotated[
            list[Label] | None,
            Field(description="Relationship types to follow (omit for all nine)."),
        ] = None,
        direction: Annotated[
            Literal["out", "in", "both"],
            Field(description="out: edges from uid; in: edges into uid; both."),
        ] = "both",
        depth: Annotated[int, Field(ge=1, le=MAX_DEPTH, description="Hops, 1-4.")] = 1,
        limit: Annotated[
            int, Field(ge=1, le=RELATED_MAX_LIMIT, description="Rows, 1-1000.")
        ] = RELATED_DEFAULT_LIMIT,
        library: OneLibrary = None,
        version: Version = None,
    ) -> CallToolResult:
        labels_ = tuple(labels) if labels else None
        return await _call(
            lambda: ops.related(
                col, RelatedArgs(uid, labels_, direction, depth, limit, library, version)
            ),
            heavy=True,
        )

    async def get_learning_path(
        target: Annotated[
            str,
            Field(
                min_length=1,
                description="A node uid, skill:<slug>, role:<slug>, or a skill or role name.",
            ),
        ],
        library: OneLibrary = None,
        version: Version = None,
    ) -> CallToolResult:
        return await _call(
            lambda: ops.learning_path(col, LearningPathArgs(target, library, version)),
            heavy=True,
        )

    async def resolve_xref(
        ref: Annotated[
            str,
            Field(
                min_length=1,
                description="A uid, alias, path (../x.md), URL path (/tutorial/x/), "
                "page#anchor, title or API symbol.",
            ),
        ],
        base: Annotated[
            str | None, Field(description="uid of the page the reference appears on.")
        ] = None,
        limit: Annotated[
            int, Field(ge=1, le=XREF_MAX_LIMIT, description="Candidates, 1-50.")
        ] = XREF_DEFAULT_LIMIT,
        library: OneLibrary = None,
        version: Version = None,
    ) -> CallToolResult:
        return await _call(
            lambda: ops.resolve_xref(col, XrefArgs(ref, base, limit, library, version))
        )

    async def query_graph(
        query: Annotated[
            str,
            Field(
                min_length=1,
                description="MATCH ... [WHERE ...] RETURN ... [ORDER BY] [SKIP] [LIMIT].",
            ),
        ],
        params: Annotated[
            dict[str, Any] | None,
            Field(description="Values for $name placeholders (scalars or lists of scalars)."),
        ] = None,
    ) -> CallToolResult:
        return await _call(lambda: ops.query_graph(col, GraphQueryArgs(query, params)), heavy=True)

    async def list_libraries() -> CallToolResult:
        return await _call(lambda: ops.list_libraries(col))

    async def resolve_library(
        name: Annotated[
            str,
            Field(
                min_length=1,
                max_length=200,
                description='A library or package name as you know it ("fast api", '
                '"@tanstack/react-query").',
            ),
        ],
    ) -> CallToolResult:
        return await _call(lambda: ops.resolve_library(col, LibraryArgs(name)))

    descriptions = {
        docs_search: (
            "Search the documentation collection: BM25 and dense retrieval fused with "
            "reciprocal rank fusion, the same ranking the REST, GraphQL and CLI surfaces "
            "return. Use it first to find pages, sections and code samples on a topic. "
            "The text answer is Markdown, best hit first: per hit a heading with its "
            "breadcrumb (Page › Section), its URL, the section's text and its code fenced "
            f"with the language, all within max_tokens (default {DEFAULT_TOKENS}, "
            f"{MIN_TOKENS}-{MAX_TOKENS}; a token is about 4 characters), cut between blocks "
            "with a note of what was left out. Read a whole page with docs_fetch and a hit's "
            "URL. The structured answer has `results` (uid, kind, title, url, path, "
            "breadcrumb, snippet, score, rank), the `root` once, and a `diagnostics` "
            f"summary; explain=true gives the full diagnostics. Limits: limit 1-"
            f"{TOOL_MAX_LIMIT}, query up to {MAX_QUERY_CHARS} characters. In a collection of "
            "libraries every hit names its `library` (name@version, also in its heading) and "
            "how that version was chosen (`version_match`: exact, nearest, range, latest, "
            "default = the newest held; `wanted`: what the project uses); `libraries` gives "
            "each one's source, commit and when it was indexed, `warnings` what the project "
            "could not pin; `library` and `version` choose what is searched (default: every "
            "library at the version the project uses, else the newest held; a library the "
            "project uses at a version older than every one held is never answered by "
            f"another: it is an error naming the versions held).{held}"
        ),
        code_sample_search: (
            "Find code samples (fenced code blocks of the docs) for a task. Searches with "
            "kind=code_sample (and the language, when given). The text answer is Markdown: "
            "per sample a heading with its breadcrumb, its URL and the code fenced with its "
            f"language, within max_tokens (default {DEFAULT_TOKENS}). The structured answer "
            "gives each hit's `code` and `language` with uid, title, path, score and rank. "
            "Use docs_search for prose. Limits: limit 1-50."
        ),
        docs_fetch: (
            "Read one page, or one section, as Markdown: give a URL (as docs_search returns "
            "it), a source path, a uid, or page#anchor. Includes are expanded as indexed. "
            f"The answer is cut at max_tokens (default {DEFAULT_FETCH_TOKENS}, "
            f"{MIN_TOKENS}-{MAX_TOKENS}) between blocks, never inside a code block; when the "
            "page is longer, the answer ends with the offset to continue from (structured: "
            "`next_offset`, null at the end)."
        ),
        get_related: (
            "Nodes near a node in the documentation graph: within `depth` hops (1-4) along "
            f"the given relationship types ({facts['labels']}), nearest first, each with the "
            "path (label, direction, uid per hop) that reached it. partOf links sections to "
            "pages, implementedBy links sections to their code samples, dependsOn links a "
            "page to its prerequisites, xref is a link. `truncated` is true when `limit` "
            "(1-1000) cut the answer. Budget 250 ms. An unknown uid is an error; find uids "
            "with docs_search or resolve_xref."
        ),
        get_learning_path: (
            "What to read before a target, in reading order: its dependsOn prerequisites "
            "(up to 4 hops), pages that teach a target skill or are written for a target "
            "role, the target last. Each step has uid, kind, title, `why`, and its containing "
            "pages. `cycles` lists dependsOn cycles; `truncated` is true when a bound "
            "(4 hops, 1000 rows, 250 ms) stopped the walk."
        ),
        resolve_xref: (
            "Turn a reference into node uids: a uid, an alias, a relative path (against "
            "`base`), a URL path, page#anchor, a title or an API symbol. Returns candidates "
            "best first with score and evidence; exact=false means nothing matched exactly "
            "and the candidates are only similar titles or paths."
        ),
        list_libraries: (
            "The libraries this collection holds: per library its versions, newest first, "
            "with pages, nodes, the source and commit they were indexed from and when, which "
            "version a search without a version reads (`default`), how a project's pin "
            "chose it (`version_match`: exact, nearest, range, latest; `wanted`: the version "
            "the project uses), per library what the project chose and why (`project`), and "
            f"`warnings` when the project gave nothing to pin.{held}"
        ),
        resolve_library: (
            "Which held library a name means: the libraries whose names are close to it, "
            "best first, with their versions (none: nothing close); `found` is true when the "
            "best has the same name (ignoring case and separators: 'fast api' is fastapi). "
            "Use the `key` it returns "
            "as the `library` argument of the other tools, with `version` to pick one."
        ),
        query_graph: (
            "Read-only openCypher-style query over the documentation graph. Only MATCH / "
            "OPTIONAL MATCH ... WHERE ... RETURN with ORDER BY, SKIP and LIMIT; CREATE, "
            "MERGE, SET, DELETE, REMOVE, CALL and schema operations are rejected. "
            f"Relationship types must be among the 9 labels: {facts['labels']}. "
            "Variable-length patterns must be bounded, at most 4 hops (*1..4); a bare * is "
            f"rejected. LIMIT defaults to {DEFAULT_LIMIT} and is capped at {MAX_LIMIT} "
            "(truncated: true when rows were cut). A query has a 250 ms budget and is "
            "aborted past it. Put values in `params` and refer to them as $name; they are "
            "never spliced into the text. A node label is its kind "
            f"({facts['kinds']}); node properties: uid, kind, title, {facts['exact']}. "
            "Returns columns, rows, truncated, elapsed_ms and stats. Example: "
            "MATCH (s:section)-[:partOf]->(p {uid: $uid}) RETURN s.uid, s.title LIMIT 20"
        ),
    }
    tools = [
        _strict(Tool.from_function(fn, description=text, annotations=READ_ONLY))
        for fn, text in descriptions.items()
    ]
    return MCPServer(
        SERVER_NAME,
        version=__version__,
        instructions=(
            "Cogitave Query over one documentation collection. Start with docs_search (or "
            "code_sample_search for code); read a hit's page whole with docs_fetch and its "
            "URL; follow a hit's uid with get_related or get_learning_path; resolve_xref "
            "turns paths, URLs and titles into uids; query_graph answers structural "
            "questions."
        ),
        tools=tools,
        log_level=log_level,
    )


def run_stdio(col: Reader) -> None:
    """Serve ``col`` over stdio until the client closes the stream (warmed first, then
    following the roots writers publish)."""
    col.warm()
    col.follow()
    build_mcp(col).run("stdio")
