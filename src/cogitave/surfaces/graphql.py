"""The GraphQL surface (Strawberry): the service operations as one typed, depth-limited schema.

``search`` (the ranking: hits with lens ranks, diagnostics as a JSON scalar), ``searchMarkdown``
and ``fetch`` (the Markdown answers of the MCP tools), ``node``, ``related``, ``learningPath``,
``resolveXref``, ``queryGraph`` and ``roots``: each field is one service operation
(:mod:`cogitave.service.ops`) with the same arguments and defaults, and each GraphQL type is
made from the domain type the operation returns (:mod:`cogitave.surfaces.graphql_types`), so
the schema cannot drift from the answers. ``Hit.node`` and ``Node.related`` let a query
follow the graph, within the depth, alias and token limits below and the request's cost budget
(:mod:`cogitave.surfaces.cost`): a document whose nested limits multiply past the expansion
bound is refused before it runs (:mod:`cogitave.surfaces.graphql_cost`), and every field
charges the rows and bytes it fetched while it runs. An engine error is a GraphQL error whose
``extensions`` carry ``code`` and ``status`` (the HTTP status REST would use); transport errors
answer ``{"error": {"code", "message"}}``.

A document is checked for size (:data:`MAX_DOCUMENT_CHARS`) before it is parsed, and for its
number of fields and repeated names before it is validated; then parsing, validation and
execution run on a worker thread (the pool's documents lane) under the request's wall-time
bound, never on the event loop. The answer is measured as the bytes it will be sent as
(UTF-8 JSON) against the request's response-bytes bound.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any, TypeVar

import strawberry
from cross_web import HTTPException as TransportError
from graphql import ExecutionResult as GraphQLExecutionResult
from graphql import GraphQLError
from strawberry.extensions import (
    MaskErrors,
    MaxAliasesLimiter,
    MaxTokensLimiter,
    QueryDepthLimiter,
    SchemaExtension,
)
from strawberry.fastapi import GraphQLRouter
from strawberry.scalars import JSON
from strawberry.types import ExecutionContext, ExecutionResult, Info

from cogitave.errors import CogitaveError, HTTPError, TooCostlyError
from cogitave.graph.query import GraphQueryResult
from cogitave.graph.tools import LearningPath, Related, RelatedResult, XrefResult
from cogitave.nodes import Node as DomainNode
from cogitave.query.types import Hit, SearchResponse
from cogitave.reader import Reader
from cogitave.service import ops
from cogitave.service.args import (
    CodeSearchArgs,
    FetchArgs,
    GraphQueryArgs,
    LearningPathArgs,
    LibraryArgs,
    RelatedArgs,
    SearchArgs,
    XrefArgs,
)
from cogitave.surfaces.cost import (
    DEFAULT_LIMITS,
    Budget,
    Limits,
    WorkerPool,
    encode_json,
    json_size,
)
from cogitave.surfaces.graphql_cost import estimate_cost, shape_error
from cogitave.surfaces.graphql_types import object_type, rows_of

MAX_DEPTH = 8
MAX_ALIASES = 20
MAX_TOKENS = 2000
MAX_DOCUMENT_CHARS = 50_000
"""A document's text, checked before it is parsed (2000 tokens of long names fit)."""
T = TypeVar("T")


def coded(e: CogitaveError) -> GraphQLError:
    """An engine error as a GraphQL error whose extensions carry its code and HTTP status."""
    ext: dict[str, Any] = {"code": e.code, "status": e.http_status}
    if e.details:
        ext["details"] = e.details
    return GraphQLError(" ".join(e.message.split()), extensions=ext)


async def run(info: Info, operation: Callable[[Reader], T]) -> T:
    """Run a service operation on the worker pool under the request's budget: its rows
    count as expansions and its size as response bytes. Engine errors become coded GraphQL
    errors."""
    ctx = info.context
    reader: Reader = ctx["reader"]
    budget: Budget = ctx["budget"]

    def job() -> T:
        out = operation(reader)
        budget.charge(rows_of(out), f"field {info.field_name}")
        budget.charge_bytes(json_size(ops.to_json(out), budget.limits.response_bytes))
        return out

    try:
        async with ctx["gate"]:  # one request's resolvers take turns: no pool flooding
            return await ctx["pool"].run(budget, job, heavy=True)
    except CogitaveError as e:
        raise coded(e) from None


async def guarded(build: Callable[[], T]) -> T:
    """Typed arguments built from a field's, their errors coded."""
    try:
        return build()
    except CogitaveError as e:
        raise coded(e) from None


def given(**kw: Any) -> dict[str, Any]:
    """The arguments a query gave (the operation's argument type holds the defaults)."""
    return {k: v for k, v in kw.items() if v is not None}


# -- types: each made from the domain type an operation returns ----------------------------
async def _related(
    info: Info,
    uid: str,
    labels: list[str] | None,
    direction: str | None,
    depth: int | None,
    limit: int | None,
    library: str | None = None,
    version: str | None = None,
) -> RelatedResult:
    args = await guarded(
        lambda: RelatedArgs(
            uid,
            **given(
                labels=tuple(labels) if labels is not None else None,
                direction=direction,
                depth=depth,
                limit=limit,
                library=library,
                version=version,
            ),
        )
    )
    return await run(info, lambda r: ops.related(r, args))


async def _node(info: Info, uid: str) -> DomainNode:
    return await run(info, lambda r: ops.node(r, uid))


@strawberry.field(description="Neighbours within `depth` hops (1-4).")
async def _node_related(
    self: Any,
    info: Info,
    labels: list[str] | None = None,
    direction: str | None = None,
    depth: int | None = None,
    limit: int | None = None,
) -> RelatedResultType:  # type: ignore[valid-type]
    return await _related(info, self.uid, labels, direction, depth, limit)


@strawberry.field(description="The code of a code sample (its ``code`` dimension).")
def _node_code(self: Any) -> str | None:
    code = self.dims.get("code")
    return code if isinstance(code, str) else None


@strawberry.field(description="The content-API path of this node.")
def _node_link(self: Any) -> str:
    return ops.content_link(self.uid)


@strawberry.field(description="The full node (content API).")
async def _full_node(self: Any, info: Info) -> NodeType:  # type: ignore[valid-type]
    return await _node(info, self.uid)


NodeType = object_type(
    DomainNode, "Node", extra={"code": _node_code, "link": _node_link, "related": _node_related}
)
HitType = object_type(Hit, extra={"node": _full_node})
RelatedType = object_type(Related, extra={"node": _full_node})
RelatedResultType = object_type(RelatedResult)
SearchResultType = object_type(SearchResponse, "SearchResult", exclude=("nodes",))
DocsAnswerType = object_type(ops.DocsAnswer, "DocsAnswer")
FetchAnswerType = object_type(ops.FetchAnswer, "FetchAnswer")
LearningPathType = object_type(LearningPath)
XrefResultType = object_type(XrefResult)
GraphQueryResultType = object_type(GraphQueryResult)
RootsType = object_type(ops.RootsAnswer, "Roots")
LibrariesType = object_type(ops.LibrariesAnswer, "Libraries")
ResolvedLibraryType = object_type(ops.ResolvedLibrary, "ResolvedLibrary")


@strawberry.type
class Query:
    @strawberry.field(description="Ranked search; the same ranking as POST /search.")
    async def search(
        self,
        info: Info,
        query: str,
        limit: int | None = None,
        offset: int | None = None,
        mode: str | None = None,
        kind: list[str] | None = None,
        dimensions: list[str] | None = None,
        filters: JSON | None = None,
        path_prefix: str | None = None,
        group_by_page: bool | None = None,
        include_kinds: list[str] | None = None,
        demote: bool | None = None,
        backfill: bool | None = None,
        explain: bool | None = None,
        root: str | None = None,
        library: list[str] | None = None,
        version: str | None = None,
    ) -> SearchResultType:  # type: ignore[valid-type]
        args = await guarded(
            lambda: SearchArgs(
                query,
                **given(
                    limit=limit,
                    offset=offset,
                    mode=mode,
                    kind=kind,
                    dimensions=dimensions,
                    filters=filters,
                    path_prefix=path_prefix,
                    group_by_page=group_by_page,
                    include_kinds=include_kinds,
                    demote=demote,
                    backfill=backfill,
                    explain=explain,
                    root=root,
                    library=library,
                    version=version,
                ),
            )
        )
        return await run(info, lambda r: ops.search(r, args))

    @strawberry.field(
        description="Ranked search as one Markdown answer within `maxTokens` (the MCP "
        "docs_search answer): per hit its breadcrumb, URL, text and fenced code; the "
        "compact hits, the root and how the answer was cut."
    )
    async def search_markdown(
        self,
        info: Info,
        query: str,
        limit: int | None = None,
        offset: int | None = None,
        mode: str | None = None,
        kind: list[str] | None = None,
        dimensions: list[str] | None = None,
        filters: JSON | None = None,
        path_prefix: str | None = None,
        group_by_page: bool | None = None,
        explain: bool | None = None,
        root: str | None = None,
        max_tokens: int | None = None,
        library: list[str] | None = None,
        version: str | None = None,
    ) -> DocsAnswerType:  # type: ignore[valid-type]
        args = await guarded(
            lambda: SearchArgs(
                query,
                **given(
                    limit=limit,
                    offset=offset,
                    mode=mode,
                    kind=kind,
                    dimensions=dimensions,
                    filters=filters,
                    path_prefix=path_prefix,
                    group_by_page=group_by_page,
                    explain=explain,
                    root=root,
                    max_tokens=max_tokens,
                    library=library,
                    version=version,
                ),
            )
        )
        return await run(info, lambda r: ops.docs_search(r, args))

    @strawberry.field(
        description="Code samples for a task as one Markdown answer (the MCP "
        "code_sample_search answer); each hit with its code and language."
    )
    async def code_samples(
        self,
        info: Info,
        query: str,
        language: str | None = None,
        limit: int | None = None,
        max_tokens: int | None = None,
        library: list[str] | None = None,
        version: str | None = None,
    ) -> DocsAnswerType:  # type: ignore[valid-type]
        args = CodeSearchArgs(
            query,
            **given(
                language=language,
                limit=limit,
                max_tokens=max_tokens,
                library=tuple(library) if library else None,
                version=version,
            ),
        )
        return await run(info, lambda r: ops.code_sample_search(r, args))

    @strawberry.field(
        description="A page or one section (URL, path, uid, page#anchor) as Markdown within "
        "`maxTokens`; `nextOffset` continues a long page."
    )
    async def fetch(
        self,
        info: Info,
        ref: str,
        max_tokens: int | None = None,
        offset: int | None = None,
        library: str | None = None,
        version: str | None = None,
    ) -> FetchAnswerType:  # type: ignore[valid-type]
        args = await guarded(
            lambda: FetchArgs(
                ref,
                **given(max_tokens=max_tokens, offset=offset, library=library, version=version),
            )
        )
        return await run(info, lambda r: ops.fetch(r, args))

    @strawberry.field(description="One node by uid (the content API).")
    async def node(self, info: Info, uid: str) -> NodeType:  # type: ignore[valid-type]
        return await run(info, lambda r: ops.node(r, uid))

    @strawberry.field(description="Neighbours of a node within `depth` hops (1-4).")
    async def related(
        self,
        info: Info,
        uid: str,
        labels: list[str] | None = None,
        direction: str | None = None,
        depth: int | None = None,
        limit: int | None = None,
        library: str | None = None,
        version: str | None = None,
    ) -> RelatedResultType:  # type: ignore[valid-type]
        return await _related(info, uid, labels, direction, depth, limit, library, version)

    @strawberry.field(description="What to read before `target`, prerequisites first.")
    async def learning_path(
        self, info: Info, target: str, library: str | None = None, version: str | None = None
    ) -> LearningPathType:  # type: ignore[valid-type]
        args = await guarded(lambda: LearningPathArgs(target, library, version))
        return await run(info, lambda r: ops.learning_path(r, args))

    @strawberry.field(description="Node candidates for a uid, path, URL, anchor or title.")
    async def resolve_xref(
        self,
        info: Info,
        ref: str,
        base: str | None = None,
        limit: int | None = None,
        library: str | None = None,
        version: str | None = None,
    ) -> XrefResultType:  # type: ignore[valid-type]
        args = await guarded(
            lambda: XrefArgs(ref, **given(base=base, limit=limit, library=library, version=version))
        )
        return await run(info, lambda r: ops.resolve_xref(r, args))

    @strawberry.field(description="Bounded read-only MATCH ... RETURN over the graph.")
    async def query_graph(
        self, info: Info, query: str, params: JSON | None = None
    ) -> GraphQueryResultType:  # type: ignore[valid-type]
        args = await guarded(lambda: GraphQueryArgs(query, params))
        return await run(info, lambda r: ops.query_graph(r, args))

    @strawberry.field(description="The libraries held, their versions newest first.")
    async def libraries(self, info: Info) -> LibrariesType:  # type: ignore[valid-type]
        return await run(info, ops.list_libraries)

    @strawberry.field(description="Which held library a name means, best first.")
    async def resolve_library(
        self, info: Info, name: str, limit: int | None = None
    ) -> ResolvedLibraryType:  # type: ignore[valid-type]
        args = await guarded(lambda: LibraryArgs(name, **given(limit=limit)))
        return await run(info, lambda r: ops.resolve_library(r, args))

    @strawberry.field(description="The root this server reads and the retained roots.")
    async def roots(self, info: Info) -> RootsType:  # type: ignore[valid-type]
        return await run(info, ops.roots)


def _unexpected(error: GraphQLError) -> bool:
    """Mask crashes (their text may be internal); keep coded and validation errors."""
    original = error.original_error
    return original is not None and not isinstance(original, GraphQLError)


def refused(err: CogitaveError) -> ExecutionResult:
    """A document refused as a whole: no data, one coded error."""
    return ExecutionResult(data=None, errors=[coded(err)])


class _Schema(strawberry.Schema):
    def process_errors(
        self, errors: list[GraphQLError], execution_context: ExecutionContext | None = None
    ) -> None:
        # Only crashes are worth a log line; bad queries are the caller's to read.
        super().process_errors([e for e in errors if _unexpected(e)], execution_context)

    async def execute(  # type: ignore[override]
        self, query: str | None, *args: Any, **kwargs: Any
    ) -> ExecutionResult:
        """Run a document on the pool's documents lane (its own event loop there) when the
        context has a pool and a budget (the HTTP router's); its size is checked first."""
        context = kwargs.get("context_value")
        if not (isinstance(context, dict) and "pool" in context and "budget" in context):
            return await super().execute(query, *args, **kwargs)
        if query is not None and len(query) > MAX_DOCUMENT_CHARS:
            return refused(
                TooCostlyError(
                    "document_chars",
                    MAX_DOCUMENT_CHARS,
                    f"the document is {len(query)} characters long; the bound is "
                    f"{MAX_DOCUMENT_CHARS}",
                )
            )
        budget: Budget = context["budget"]
        pool: WorkerPool = context["pool"]
        base = super().execute

        def document() -> ExecutionResult:
            result = asyncio.run(base(query, *args, **kwargs))
            return bounded(result, budget)

        try:
            return await pool.run_document(budget, document)
        except TooCostlyError as e:
            return refused(e)


def bounded(result: ExecutionResult, budget: Budget) -> ExecutionResult:
    """``result``, or the response-bytes error when its data and errors would pass the
    request's bound once encoded."""
    cap = budget.limits.response_bytes
    size = json_size(result.data, cap)
    if size <= cap and result.errors:
        size += json_size([e.formatted for e in result.errors], cap)
    return refused(budget.too_large()) if size > cap else result


class ShapeLimiter(SchemaExtension):
    """Refuse a document whose fields would make validation costly (too many, or one name
    repeated too often in a selection), after it is parsed and before it is validated."""

    def on_validate(self):  # type: ignore[no-untyped-def]
        ctx = self.execution_context
        if ctx.graphql_document is not None and ctx.pre_execution_errors is None:
            err = shape_error(ctx.graphql_document)
            if err is not None:
                ctx.pre_execution_errors = [coded(err)]
        yield


class CostLimiter(SchemaExtension):
    """Refuse a document before it runs when the rows its nested fields would fetch (the
    product of the limits along each path, summed) pass the request's expansion bound."""

    def on_execute(self):  # type: ignore[no-untyped-def]
        ctx = self.execution_context
        doc = ctx.graphql_document
        context = ctx.context if isinstance(ctx.context, dict) else {}
        budget: Budget | None = context.get("budget")
        cap = budget.limits.expansions if budget is not None else DEFAULT_LIMITS.expansions
        if doc is not None:
            cost = estimate_cost(doc, ctx.variables or {}, ctx.operation_name, stop=cap)
            if cost > cap:
                err = TooCostlyError(
                    "expansions",
                    cap,
                    f"this document could fetch {cost if cost <= 10 * cap else f'over {10 * cap}'}"
                    f" rows across its nested fields; the bound is {cap} (nested lists multiply:"
                    " lower the inner limits or nest less)",
                )
                ctx.result = GraphQLExecutionResult(data=None, errors=[coded(err)])
        yield


schema = _Schema(
    query=Query,
    extensions=[  # factories: a fresh extension per request
        lambda: QueryDepthLimiter(max_depth=MAX_DEPTH),
        lambda: MaxAliasesLimiter(max_alias_count=MAX_ALIASES),
        lambda: MaxTokensLimiter(max_token_count=MAX_TOKENS),
        ShapeLimiter,
        CostLimiter,
        lambda: MaskErrors(should_mask_error=_unexpected),
    ],
)

RESOLVERS_PER_REQUEST = 2


def graphql_router(
    reader: Reader, *, pool: WorkerPool | None = None, limits: Limits = DEFAULT_LIMITS
) -> GraphQLRouter:
    """A FastAPI router serving :data:`schema` over ``reader`` (mount it at ``/graphql``);
    each request gets a budget of ``limits`` and its resolvers run on ``pool``."""
    workers = pool if pool is not None else WorkerPool()

    async def context() -> dict[str, Any]:
        return {
            "reader": reader,
            "budget": Budget(limits),
            "pool": workers,
            "gate": asyncio.Semaphore(RESOLVERS_PER_REQUEST),
        }

    # No subscriptions: the schema has none, and queries then only arrive over plain HTTP.
    return _Router(
        schema,
        context_getter=context,
        subscription_protocols=(),
        max_response_bytes=limits.response_bytes,
    )


class _Router(GraphQLRouter):
    """Strawberry's router with hostile bodies answered 400 (its ``decode_json`` lets
    non-UTF-8 bytes and deep nesting escape as a 500), transport errors (no query, bad
    JSON, batching, content type) in the common JSON error shape, not plain text, and
    answers encoded as UTF-8 JSON whose bytes are bounded."""

    def __init__(self, *args: Any, max_response_bytes: int, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.max_response_bytes = max_response_bytes

    def encode_json(self, data: object) -> bytes:
        body = encode_json(data)
        if len(body) > self.max_response_bytes:  # the last check, on the bytes themselves
            err = Budget(Limits(response_bytes=self.max_response_bytes)).too_large()
            body = encode_json({"data": None, "errors": [coded(err).formatted]})
        return body

    async def run(self, *args: Any, **kwargs: Any) -> Any:
        try:
            return await super().run(*args, **kwargs)
        except TransportError as e:
            raise HTTPError(e.status_code, f"GraphQL request: {e.reason}") from None

    def decode_json(self, data: str | bytes) -> object:
        try:
            return super().decode_json(data)
        except (UnicodeDecodeError, RecursionError, ValueError) as e:
            if isinstance(e, json.JSONDecodeError):
                raise
            raise json.JSONDecodeError(f"unreadable JSON body: {type(e).__name__}", "", 0) from None
