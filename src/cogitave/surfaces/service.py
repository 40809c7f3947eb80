"""Request shaping shared by the MCP, REST and GraphQL surfaces: plain values in, JSON out.

Each surface parses its transport's input, calls one of these helpers and renders the dict it
returns. The helpers only validate arguments and reshape the facade's answers; ranking,
filtering and graph walks all happen behind :class:`~cogitave.collection.Collection`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, replace
from typing import Any
from urllib.parse import quote

from cogitave.collection import Collection
from cogitave.errors import CogitaveError, InputError, NotFoundError, QueryError, QueryGraphError
from cogitave.graph.traverse import MAX_DEPTH, MAX_ROWS
from cogitave.nodes import Node
from cogitave.query.types import Hit, SearchRequest, SearchResponse
from cogitave.schema import EDGE_LABELS
from cogitave.surfaces import render
from cogitave.surfaces.render import DEFAULT_FETCH_TOKENS, DEFAULT_TOKENS, MAX_TOKENS, MIN_TOKENS

TOOL_MAX_LIMIT = 50  # result cap of the agent-facing search tools: short, readable answers
RELATED_MAX_LIMIT = MAX_ROWS
RELATED_DEFAULT_LIMIT = 50
XREF_MAX_LIMIT = 50
DIRECTIONS = ("out", "in", "both")
GRAPH_QUERY_FIELDS = ("query", "params")
NODES_PATH = "/nodes/"
MAX_FETCH_OFFSET = 100_000

__all__ = [
    "DIRECTIONS",
    "EDGE_LABELS",
    "MAX_DEPTH",
    "RELATED_MAX_LIMIT",
    "TOOL_MAX_LIMIT",
    "XREF_MAX_LIMIT",
    "code_search",
    "content_link",
    "error_body",
    "fetch",
    "graph_query",
    "learning_path",
    "node_record",
    "parse_labels",
    "related",
    "resolve_xref",
    "roots",
    "search",
    "search_compact",
    "search_request",
]


def error_body(err: CogitaveError) -> dict[str, Any]:
    """The error shape of every HTTP answer: ``{"error": {"code", "message", "details"?}}``."""
    return {"error": err.to_dict()}


def content_link(uid: str) -> str:
    """The content-API path of a node; ``#``, ``?`` and ``%`` in the uid are escaped."""
    return NODES_PATH + quote(uid, safe="/:@!$&'()*+,;=-._~")


def _int(name: str, value: Any, lo: int, hi: int, code: str | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        msg = f"{name} must be an integer, not {value!r}"
    elif not lo <= value <= hi:
        msg = f"{name} must be between {lo} and {hi}, not {value}"
    else:
        return value
    raise QueryGraphError(code, msg) if code else QueryError(msg)


def _text(name: str, value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        raise InputError(f"{name} must be a non-empty string")
    return value.strip()


# -- search -----------------------------------------------------------------------------------
def search_request(body: Any) -> SearchRequest:
    """A JSON body -> a validated :class:`SearchRequest` (unknown fields are an error)."""
    return SearchRequest.from_dict(body)


def search(col: Collection, request: SearchRequest) -> SearchResponse:
    """One search through the facade: the one ranking every surface returns."""
    return col.search(request)


def node_record(node: Node) -> dict[str, Any]:
    """The content API's view of a node: its stored record, its code if any, and links."""
    rec = node.to_record()
    code = node.dims.get("code")
    if isinstance(code, str):
        rec["code"] = code
    link = content_link(node.uid)
    rec["links"] = {"self": link, "related": link + "/related"}
    return rec


def hit_summary(hit: Hit) -> dict[str, Any]:
    """A compact hit for an agent: identity, where it lives, a snippet and its rank (the root
    and the content API are given once per answer, not per hit)."""
    out: dict[str, Any] = {"uid": hit.uid, "kind": hit.kind, "title": hit.title}
    for key in ("url", "path"):
        if getattr(hit, key):
            out[key] = getattr(hit, key)
    if hit.breadcrumb:
        out["breadcrumb"] = list(hit.breadcrumb)
    if hit.group:  # the page's other matching sections, when grouped by page
        out["group"] = list(hit.group)
    out |= {"snippet": hit.snippet, "score": round(hit.score, 6), "rank": hit.rank}
    return out


def diagnostics_summary(diagnostics: Mapping[str, Any]) -> dict[str, Any]:
    """Total time and number of lenses: enough to spot a slow answer."""
    lenses = diagnostics.get("lenses") or ()
    return {
        "total_ms": diagnostics.get("total_ms"),
        "lenses": len(lenses) if isinstance(lenses, Sequence | Mapping) else 0,
    }


def located(col: Collection, hit: Hit, node: Node, root: str) -> Hit:
    """A hit without a URL of its own (a code sample) takes the URL and breadcrumb of the
    section it is part of, so every Markdown hit says where to read it."""
    if hit.url:
        return hit
    parent = next((e.dst for e in node.edges if e.label == "partOf"), None)
    if parent is None:
        return hit
    try:
        meta = col.get(parent, root=root).meta
    except CogitaveError:
        return hit
    url = meta.get("url")
    crumb = meta.get("breadcrumb")
    return replace(
        hit,
        url=url if isinstance(url, str) else "",
        breadcrumb=hit.breadcrumb or (tuple(map(str, crumb)) if isinstance(crumb, list) else ()),
    )


def tokens_arg(max_tokens: Any) -> int:
    """A ``max_tokens`` argument, strictly an integer within the documented range."""
    return _int("max_tokens", max_tokens, MIN_TOKENS, MAX_TOKENS)


def search_compact(
    col: Collection, request: SearchRequest, max_tokens: int = DEFAULT_TOKENS
) -> dict[str, Any]:
    """A search shaped for an agent: ``markdown`` (the hits as Markdown within
    ``max_tokens``), compact hits, the root once, full diagnostics only with ``explain``."""
    max_tokens = tokens_arg(max_tokens)
    res = search(col, request)
    nodes = [col.get(h.uid, root=res.root) for h in res.results]  # the root searched
    hits = [located(col, h, n, res.root) for h, n in zip(res.results, nodes, strict=True)]
    text, cut = render.search_markdown(
        request.query, list(zip(hits, nodes, strict=True)), max_tokens
    )
    diag = dict(res.diagnostics) if request.explain else diagnostics_summary(res.diagnostics)
    return {
        "markdown": text,
        "results": [hit_summary(h) for h in hits],
        "root": res.root,
        "content": NODES_PATH + "{uid}",
        "budget": cut,
        "diagnostics": diag,
        "_nodes": nodes,
    }


def code_search(
    col: Collection,
    query: str,
    language: str | None = None,
    limit: int = 10,
    max_tokens: int = DEFAULT_TOKENS,
) -> dict[str, Any]:
    """Code samples for ``query`` (optionally of one ``language``), each with its code."""
    filters: dict[str, str] = {"kind": "code_sample"}
    if language is not None:
        filters["language"] = _text("language", language).casefold()
    out = search_compact(col, SearchRequest(query=query, limit=limit, filters=filters), max_tokens)
    for item, node in zip(out["results"], out["_nodes"], strict=True):
        item["language"] = node.dims.get("language")
        item["code"] = node.dims.get("code")
    return out


def public(answer: dict[str, Any]) -> dict[str, Any]:
    """An answer without its private ``_`` keys (the nodes a renderer used)."""
    return {k: v for k, v in answer.items() if not k.startswith("_")}


def fetch(
    col: Collection, ref: str, max_tokens: int = DEFAULT_FETCH_TOKENS, offset: int = 0
) -> dict[str, Any]:
    """A page or one section (a URL, path, uid, ``page#anchor``) as Markdown within
    ``max_tokens``, from block ``offset``; ``next_offset`` continues it (``None`` at the end).
    The reference is resolved with the xref resolver; only an exact match is fetched."""
    max_tokens = tokens_arg(max_tokens)
    offset = _int("offset", offset, 0, MAX_FETCH_OFFSET)
    res = col.resolve_xref(_text("ref", ref), limit=5)
    if not res.exact or not res.candidates:
        near = ", ".join(c.uid for c in res.candidates) or "none"
        raise NotFoundError(
            f"no page or section matches {ref!r}; closest: {near}",
            details={"candidates": [c.uid for c in res.candidates]},
        )
    node = col.get(res.candidates[0].uid)
    url = str(node.meta.get("url") or node.meta.get("path") or "")
    crumb = node.meta.get("breadcrumb")
    crumb = [str(x) for x in crumb] if isinstance(crumb, list | tuple) else []
    text, taken, nxt, total = render.page_markdown(node, url, crumb, max_tokens, offset)
    if offset and offset >= total:
        raise QueryError(f"offset {offset} is past the end ({total} blocks)")
    return {
        "uid": node.uid,
        "kind": node.kind,
        "title": node.dims.get("title") if isinstance(node.dims.get("title"), str) else "",
        "url": url,
        "markdown": text,
        "offset": offset,
        "blocks": taken,
        "total_blocks": total,
        "next_offset": nxt,
        "tokens": render.estimate_tokens(text),
        "max_tokens": max_tokens,
    }


# -- graph ------------------------------------------------------------------------------------
def parse_labels(labels: str | Sequence[str] | None) -> tuple[str, ...] | None:
    """``"a,b"`` or ``["a", "b"]`` -> ``("a", "b")``; empty or ``None`` means every label."""
    if labels is None:
        return None
    items = labels.split(",") if isinstance(labels, str) else list(labels)
    if not all(isinstance(x, str) for x in items):
        raise QueryGraphError("label", "labels must be relationship type names")
    out = tuple(x.strip() for x in items if x.strip())
    return out or None


def related(
    col: Collection,
    uid: str,
    labels: str | Sequence[str] | None = None,
    direction: str = "both",
    depth: int = 1,
    limit: int = RELATED_DEFAULT_LIMIT,
) -> dict[str, Any]:
    """Neighbours of ``uid`` within ``depth`` hops, each with the path that reached it."""
    if direction not in DIRECTIONS:
        raise QueryGraphError("syntax", f"direction must be out, in or both, not {direction!r}")
    depth = _int("depth", depth, 1, MAX_DEPTH, "depth")
    limit = _int("limit", limit, 1, RELATED_MAX_LIMIT, "limit")
    res = col.related(_text("uid", uid), parse_labels(labels), direction, depth, limit)  # type: ignore[arg-type]
    out = asdict(res)
    for item in out["items"]:
        item["content"] = content_link(item["uid"])
    return out


def learning_path(col: Collection, target: str) -> dict[str, Any]:
    """Steps to read before ``target`` (prerequisites first, the target last)."""
    return asdict(col.learning_path(_text("target", target)))


FACET_MAX_UIDS = 200


def facets(
    col: Collection,
    uids: str | Sequence[str],
    labels: str | Sequence[str] | None = None,
    depth: int = 1,
) -> dict[str, Any]:
    """Kinds, edge labels and exact values around a set of nodes (comma list or sequence)."""
    items = [u for u in (uids.split(",") if isinstance(uids, str) else uids) if u]
    if not items or len(items) > FACET_MAX_UIDS:
        raise InputError(f"give between 1 and {FACET_MAX_UIDS} uids")
    depth = _int("depth", depth, 1, MAX_DEPTH, "depth")
    return asdict(col.facets([_text("uid", u) for u in items], parse_labels(labels), depth))


def resolve_xref(
    col: Collection, ref: str, base: str | None = None, limit: int = 5
) -> dict[str, Any]:
    """Candidates for a reference (uid, path, URL, ``page#anchor``, alias, title), best first."""
    limit = _int("limit", limit, 1, XREF_MAX_LIMIT)
    return asdict(col.resolve_xref(_text("ref", ref), base=base, limit=limit))


def graph_query(col: Collection, query: Any, params: Any = None) -> dict[str, Any]:
    """Run one bounded read-only ``MATCH ... RETURN`` with named parameters."""
    if not isinstance(query, str):
        raise QueryGraphError("syntax", "query must be a string: MATCH ... RETURN ...")
    if params is not None and not isinstance(params, Mapping):
        raise QueryGraphError("param", "params must be an object mapping names to values")
    return col.query_graph(query, params).to_dict()


def graph_query_body(col: Collection, body: Any) -> dict[str, Any]:
    """``{"query": ..., "params": {...}}`` -> :func:`graph_query` (unknown fields are an error)."""
    if not isinstance(body, Mapping):
        raise InputError("the request body must be a JSON object")
    unknown = sorted(set(body) - set(GRAPH_QUERY_FIELDS))
    if unknown:
        raise InputError(
            f"unknown field(s) {unknown}; allowed: {list(GRAPH_QUERY_FIELDS)}",
            details={"unknown": unknown},
        )
    if "query" not in body:
        raise InputError("'query' is required")
    return graph_query(col, body["query"], body.get("params"))


def roots(col: Collection) -> dict[str, Any]:
    """The root this server reads and the retained roots, newest first."""
    return {"current": col.root, "roots": [asdict(r) for r in col.roots()]}
