"""The GraphQL surface (Strawberry): the REST operations as one typed, depth-limited schema.

``search`` (results + diagnostics as a JSON scalar), ``searchMarkdown`` and ``fetch`` (the
Markdown answers of the MCP tools), ``node``, ``related``, ``learningPath``, ``resolveXref``,
``queryGraph`` and ``roots``; ``Hit.node`` and ``Node.related`` let a query
follow the graph, within the depth, alias and token limits below and the request's cost budget
(:mod:`cogitave.surfaces.cost`): a document whose nested limits multiply past the expansion
bound is refused before it runs (:mod:`cogitave.surfaces.graphql_cost`), and every field
charges the rows and bytes it fetched while it runs. An engine error is a GraphQL error whose
``extensions`` carry ``code`` and ``status`` (the HTTP status REST would use); transport errors
answer ``{"error": {"code", "message"}}``.
"""

from __future__ import annotations

import asyncio
import dataclasses
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
from strawberry.types import ExecutionContext, Info

from cogitave.collection import Collection
from cogitave.errors import CogitaveError, HTTPError, TooCostlyError
from cogitave.query.types import SearchResponse
from cogitave.surfaces import service
from cogitave.surfaces.cost import DEFAULT_LIMITS, Budget, Limits, WorkerPool, json_size
from cogitave.surfaces.graphql_cost import estimate_cost
from cogitave.surfaces.render import DEFAULT_FETCH_TOKENS, DEFAULT_TOKENS

MAX_DEPTH = 8
MAX_ALIASES = 20
MAX_TOKENS = 2000
T = TypeVar("T")


def _rows(value: Any) -> int:
    """How many rows a helper's answer holds (what a nested field multiplies)."""
    if isinstance(value, SearchResponse):
        return len(value.results)
    if isinstance(value, dict):
        for key in ("results", "items", "rows", "candidates", "steps", "roots"):
            if isinstance(value.get(key), list):
                return len(value[key])
    return 1


def coded(e: CogitaveError) -> GraphQLError:
    """An engine error as a GraphQL error whose extensions carry its code and HTTP status."""
    ext: dict[str, Any] = {"code": e.code, "status": e.http_status}
    if e.details:
        ext["details"] = e.details
    return GraphQLError(" ".join(e.message.split()), extensions=ext)


async def _run(info: Info, fn: Callable[..., T], *args: Any) -> T:
    """Call a facade helper on the worker pool under the request's budget: its rows count as
    expansions and its size as response bytes. Engine errors become coded GraphQL errors."""
    ctx = info.context
    col: Collection = ctx["collection"]
    budget: Budget = ctx["budget"]

    def job() -> T:
        out = fn(col, *args)
        body = out.to_dict() if isinstance(out, SearchResponse) else out
        budget.charge(_rows(out), f"field {info.field_name}")
        budget.charge_bytes(json_size(body, budget.limits.response_bytes))
        return out

    try:
        async with ctx["gate"]:  # one request's resolvers take turns: no pool flooding
            return await ctx["pool"].run(budget, job, heavy=True)
    except CogitaveError as e:
        raise coded(e) from None


def _make(cls: type[T], data: dict[str, Any]) -> T:
    """A GraphQL object from a service dict, taking the fields the type declares."""
    names = {f.name for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
    return cls(**{k: v for k, v in data.items() if k in names})


@strawberry.type
class Edge:
    label: str
    dst: str


@strawberry.type
class Node:
    uid: str
    kind: str
    dims: JSON
    content: str | None
    edges: list[Edge]
    meta: JSON
    code: str | None
    link: str = strawberry.field(description="The content-API path of this node.")

    @classmethod
    def from_record(cls, rec: dict[str, Any]) -> Node:
        return cls(
            uid=rec["uid"],
            kind=rec["kind"],
            dims=rec["dims"],
            content=rec.get("content"),
            edges=[Edge(label=e["label"], dst=e["dst"]) for e in rec.get("edges", ())],
            meta=rec.get("meta", {}),
            code=rec.get("code"),
            link=rec["links"]["self"],
        )

    @strawberry.field(description="Neighbours within `depth` hops (1-4).")
    async def related(
        self,
        info: Info,
        labels: list[str] | None = None,
        direction: str = "both",
        depth: int = 1,
        limit: int = service.RELATED_DEFAULT_LIMIT,
    ) -> RelatedResult:
        return await _related(info, self.uid, labels, direction, depth, limit)


async def _node(info: Info, uid: str) -> Node:
    rec = await _run(info, lambda col, u: service.node_record(col.get(u)), uid)
    return Node.from_record(rec)


@strawberry.type
class Hit:
    uid: str
    rank: int
    score: float
    kind: str
    title: str
    snippet: str
    lenses: JSON
    url: str
    path: str
    breadcrumb: list[str]

    @strawberry.field(description="The full node (content API).")
    async def node(self, info: Info) -> Node:
        return await _node(info, self.uid)


@strawberry.type
class SearchResult:
    results: list[Hit]
    root: str
    diagnostics: JSON


@strawberry.type
class MarkdownAnswer:
    markdown: str
    root: str
    hits: int
    shown: int
    tokens: int
    truncated: bool


@strawberry.type
class FetchResult:
    uid: str
    kind: str
    title: str
    url: str
    markdown: str
    offset: int
    blocks: int
    total_blocks: int
    next_offset: int | None
    tokens: int


@strawberry.type
class Related:
    uid: str
    kind: str
    title: str
    depth: int
    path: JSON

    @strawberry.field
    async def node(self, info: Info) -> Node:
        return await _node(info, self.uid)


@strawberry.type
class RelatedResult:
    uid: str
    items: list[Related]
    truncated: bool


async def _related(
    info: Info, uid: str, labels: list[str] | None, direction: str, depth: int, limit: int
) -> RelatedResult:
    d = await _run(info, service.related, uid, labels, direction, depth, limit)
    items = [
        Related(uid=i["uid"], kind=i["kind"], title=i["title"], depth=i["depth"], path=i["path"])
        for i in d["items"]
    ]
    return RelatedResult(uid=d["uid"], items=items, truncated=d["truncated"])


@strawberry.type
class LearningStep:
    uid: str
    kind: str
    title: str
    why: str
    context: JSON


@strawberry.type
class LearningPath:
    target: str
    steps: list[LearningStep]
    cycles: list[list[str]]
    truncated: bool
    notes: list[str]


@strawberry.type
class XrefCandidate:
    uid: str
    kind: str
    title: str
    score: float
    evidence: str


@strawberry.type
class XrefResult:
    ref: str
    exact: bool
    candidates: list[XrefCandidate]


@strawberry.type
class GraphQueryResult:
    columns: list[str]
    rows: JSON
    truncated: bool
    elapsed_ms: float
    stats: JSON


@strawberry.type
class Root:
    id: str
    parent: str | None
    created: str
    nodes: int
    edges: int
    segments: int
    head: bool
    held: bool = strawberry.field(
        default=False, description="An open reader holds it past the retention count."
    )


@strawberry.type
class Roots:
    current: str
    roots: list[Root]


@strawberry.type
class Query:
    @strawberry.field(description="Ranked search; the same ranking as POST /search.")
    async def search(
        self,
        info: Info,
        query: str,
        limit: int = 10,
        offset: int = 0,
        mode: str = "planned",
        dimensions: list[str] | None = None,
        filters: JSON | None = None,
        backfill: bool = False,
        explain: bool = False,
        root: str | None = None,
    ) -> SearchResult:
        body: dict[str, Any] = {
            "query": query,
            "limit": limit,
            "offset": offset,
            "mode": mode,
            "dimensions": dimensions,
            "filters": filters,
            "backfill": backfill,
            "explain": explain,
            "root": root,
        }
        res = await _run(info, lambda col, b: service.search(col, service.search_request(b)), body)
        hits = [
            Hit(
                uid=h.uid,
                rank=h.rank,
                score=h.score,
                kind=h.kind,
                title=h.title,
                snippet=h.snippet,
                lenses=dict(h.lenses),
                url=h.url,
                path=h.path,
                breadcrumb=list(h.breadcrumb),
            )
            for h in res.results
        ]
        return SearchResult(results=hits, root=res.root, diagnostics=dict(res.diagnostics))

    @strawberry.field(
        description="Ranked search as one Markdown answer within `maxTokens` (the MCP "
        "docs_search text): per hit its breadcrumb, URL, text and fenced code."
    )
    async def search_markdown(
        self,
        info: Info,
        query: str,
        limit: int = 10,
        kind: list[str] | None = None,
        max_tokens: int = DEFAULT_TOKENS,
    ) -> MarkdownAnswer:
        filters = {"kind": kind} if kind is not None else None
        body = {"query": query, "limit": limit, "filters": filters}

        def run(col: Collection, b: dict[str, Any], mt: int) -> dict[str, Any]:
            return service.public(service.search_compact(col, service.search_request(b), mt))

        d = await _run(info, run, body, max_tokens)
        cut = d["budget"]
        return MarkdownAnswer(
            markdown=d["markdown"],
            root=d["root"],
            hits=cut["hits"],
            shown=cut["shown"],
            tokens=cut["tokens"],
            truncated=cut["truncated"],
        )

    @strawberry.field(
        description="A page or one section (URL, path, uid, page#anchor) as Markdown within "
        "`maxTokens`; `nextOffset` continues a long page."
    )
    async def fetch(
        self, info: Info, ref: str, max_tokens: int = DEFAULT_FETCH_TOKENS, offset: int = 0
    ) -> FetchResult:
        d = await _run(info, service.fetch, ref, max_tokens, offset)
        return _make(FetchResult, d)

    @strawberry.field(description="One node by uid (the content API).")
    async def node(self, info: Info, uid: str) -> Node:
        return await _node(info, uid)

    @strawberry.field(description="Neighbours of a node within `depth` hops (1-4).")
    async def related(
        self,
        info: Info,
        uid: str,
        labels: list[str] | None = None,
        direction: str = "both",
        depth: int = 1,
        limit: int = service.RELATED_DEFAULT_LIMIT,
    ) -> RelatedResult:
        return await _related(info, uid, labels, direction, depth, limit)

    @strawberry.field(description="What to read before `target`, prerequisites first.")
    async def learning_path(self, info: Info, target: str) -> LearningPath:
        d = await _run(info, service.learning_path, target)
        steps = [_make(LearningStep, s) for s in d["steps"]]
        return LearningPath(
            target=d["target"],
            steps=steps,
            cycles=[list(c) for c in d["cycles"]],
            truncated=d["truncated"],
            notes=list(d["notes"]),
        )

    @strawberry.field(description="Node candidates for a uid, path, URL, anchor or title.")
    async def resolve_xref(
        self, info: Info, ref: str, base: str | None = None, limit: int = 5
    ) -> XrefResult:
        d = await _run(info, service.resolve_xref, ref, base, limit)
        cands = [_make(XrefCandidate, c) for c in d["candidates"]]
        return XrefResult(ref=d["ref"], exact=d["exact"], candidates=cands)

    @strawberry.field(description="Bounded read-only MATCH ... RETURN over the graph.")
    async def query_graph(
        self, info: Info, query: str, params: JSON | None = None
    ) -> GraphQueryResult:
        d = await _run(info, service.graph_query, query, params)
        return GraphQueryResult(
            columns=d["columns"],
            rows=d["rows"],
            truncated=d["truncated"],
            elapsed_ms=d["elapsed_ms"],
            stats=d["stats"],
        )

    @strawberry.field(description="The root this server reads and the retained roots.")
    async def roots(self, info: Info) -> Roots:
        d = await _run(info, service.roots)
        return Roots(current=d["current"], roots=[_make(Root, r) for r in d["roots"]])


def _unexpected(error: GraphQLError) -> bool:
    """Mask crashes (their text may be internal); keep coded and validation errors."""
    original = error.original_error
    return original is not None and not isinstance(original, GraphQLError)


class _Schema(strawberry.Schema):
    def process_errors(
        self, errors: list[GraphQLError], execution_context: ExecutionContext | None = None
    ) -> None:
        # Only crashes are worth a log line; bad queries are the caller's to read.
        super().process_errors([e for e in errors if _unexpected(e)], execution_context)


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
        CostLimiter,
        lambda: MaskErrors(should_mask_error=_unexpected),
    ],
)

RESOLVERS_PER_REQUEST = 2


def graphql_router(
    col: Collection, *, pool: WorkerPool | None = None, limits: Limits = DEFAULT_LIMITS
) -> GraphQLRouter:
    """A FastAPI router serving :data:`schema` over ``col`` (mount it at ``/graphql``); each
    request gets a budget of ``limits`` and its resolvers run on ``pool``."""
    workers = pool if pool is not None else WorkerPool()

    async def context() -> dict[str, Any]:
        return {
            "collection": col,
            "budget": Budget(limits),
            "pool": workers,
            "gate": asyncio.Semaphore(RESOLVERS_PER_REQUEST),
        }

    # No subscriptions: the schema has none, and queries then only arrive over plain HTTP.
    return _Router(schema, context_getter=context, subscription_protocols=())


class _Router(GraphQLRouter):
    """Strawberry's router with hostile bodies answered 400 (its ``decode_json`` lets
    non-UTF-8 bytes and deep nesting escape as a 500) and transport errors (no query, bad
    JSON, batching, content type) in the common JSON error shape, not plain text."""

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
