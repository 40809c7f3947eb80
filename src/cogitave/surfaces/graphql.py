"""The GraphQL surface (Strawberry): the REST operations as one typed, depth-limited schema.

``search`` (results + diagnostics as a JSON scalar), ``node``, ``related``, ``learningPath``,
``resolveXref``, ``queryGraph`` and ``roots``; ``Hit.node`` and ``Node.related`` let a query
follow the graph, within the depth, alias and token limits below. An engine error is a GraphQL
error whose ``extensions`` carry ``code`` and ``status`` (the HTTP status REST would use).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from typing import Any, TypeVar

import strawberry
from graphql import GraphQLError
from starlette.concurrency import run_in_threadpool
from strawberry.extensions import MaskErrors, MaxAliasesLimiter, MaxTokensLimiter, QueryDepthLimiter
from strawberry.fastapi import GraphQLRouter
from strawberry.scalars import JSON
from strawberry.types import ExecutionContext, Info

from cogitave.collection import Collection
from cogitave.errors import CogitaveError
from cogitave.surfaces import service

MAX_DEPTH = 8
MAX_ALIASES = 20
MAX_TOKENS = 2000
T = TypeVar("T")


async def _run(info: Info, fn: Callable[..., T], *args: Any) -> T:
    """Call a facade helper off the event loop; engine errors become coded GraphQL errors."""
    col: Collection = info.context["collection"]
    try:
        return await run_in_threadpool(fn, col, *args)
    except CogitaveError as e:
        ext: dict[str, Any] = {"code": e.code, "status": e.http_status}
        if e.details:
            ext["details"] = e.details
        raise GraphQLError(" ".join(e.message.split()), extensions=ext) from None


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
        body = {
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


schema = _Schema(
    query=Query,
    extensions=[  # factories: a fresh extension per request
        lambda: QueryDepthLimiter(max_depth=MAX_DEPTH),
        lambda: MaxAliasesLimiter(max_alias_count=MAX_ALIASES),
        lambda: MaxTokensLimiter(max_token_count=MAX_TOKENS),
        lambda: MaskErrors(should_mask_error=_unexpected),
    ],
)


def graphql_router(col: Collection) -> GraphQLRouter:
    """A FastAPI router serving :data:`schema` over ``col`` (mount it at ``/graphql``)."""

    async def context() -> dict[str, Any]:
        return {"collection": col}

    # No subscriptions: the schema has none, and queries then only arrive over plain HTTP.
    return _Router(schema, context_getter=context, subscription_protocols=())


class _Router(GraphQLRouter):
    """Strawberry's router with hostile bodies answered 400: its ``decode_json`` lets
    non-UTF-8 bytes and deep nesting escape as a 500."""

    def decode_json(self, data: str | bytes) -> object:
        try:
            return super().decode_json(data)
        except (UnicodeDecodeError, RecursionError, ValueError) as e:
            if isinstance(e, json.JSONDecodeError):
                raise
            raise json.JSONDecodeError(f"unreadable JSON body: {type(e).__name__}", "", 0) from None
