"""Request shaping shared by the MCP, REST and GraphQL surfaces: plain values in, JSON out.

Each surface parses its transport's input, calls one of these helpers and renders the dict it
returns. The helpers only validate arguments and reshape the facade's answers; ranking,
filtering and graph walks all happen behind :class:`~cogitave.collection.Collection`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict
from typing import Any
from urllib.parse import quote

from cogitave.collection import Collection
from cogitave.errors import CogitaveError, InputError, QueryError, QueryGraphError
from cogitave.graph.traverse import MAX_DEPTH, MAX_ROWS
from cogitave.nodes import Node
from cogitave.query.types import Hit, SearchRequest, SearchResponse
from cogitave.schema import EDGE_LABELS

TOOL_MAX_LIMIT = 50  # result cap of the agent-facing search tools: short, readable answers
RELATED_MAX_LIMIT = MAX_ROWS
RELATED_DEFAULT_LIMIT = 50
XREF_MAX_LIMIT = 50
DIRECTIONS = ("out", "in", "both")
GRAPH_QUERY_FIELDS = ("query", "params")
NODES_PATH = "/nodes/"

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
    """A compact hit for an agent: identity, text, where it lives, and its rank."""
    out: dict[str, Any] = {
        "uid": hit.uid,
        "kind": hit.kind,
        "title": hit.title,
        "snippet": hit.snippet,
    }
    for key in ("url", "path"):
        if getattr(hit, key):
            out[key] = getattr(hit, key)
    if hit.breadcrumb:
        out["breadcrumb"] = list(hit.breadcrumb)
    if hit.group:  # the page's other matching sections, when grouped by page
        out["group"] = list(hit.group)
    out |= {"score": hit.score, "rank": hit.rank, "content": content_link(hit.uid)}
    return out


def diagnostics_summary(diagnostics: Mapping[str, Any]) -> dict[str, Any]:
    """Total time, root and number of lenses: enough to cite an answer and spot a slow one."""
    lenses = diagnostics.get("lenses") or ()
    return {
        "total_ms": diagnostics.get("total_ms"),
        "root": diagnostics.get("root"),
        "lenses": len(lenses) if isinstance(lenses, Sequence | Mapping) else 0,
    }


def search_compact(col: Collection, request: SearchRequest) -> dict[str, Any]:
    """A search shaped for an agent: compact hits, full diagnostics only with ``explain``."""
    res = search(col, request)
    diag = dict(res.diagnostics) if request.explain else diagnostics_summary(res.diagnostics)
    return {
        "results": [hit_summary(h) for h in res.results],
        "root": res.root,
        "diagnostics": diag,
    }


def code_search(
    col: Collection, query: str, language: str | None = None, limit: int = 10
) -> dict[str, Any]:
    """Code samples for ``query`` (optionally of one ``language``), each with its code."""
    filters: dict[str, str] = {"kind": "code_sample"}
    if language is not None:
        filters["language"] = _text("language", language).casefold()
    out = search_compact(col, SearchRequest(query=query, limit=limit, filters=filters))
    for item in out["results"]:
        node = col.get(item["uid"], root=out["root"])  # the root the search answered from
        item["language"] = node.dims.get("language")
        item["code"] = node.dims.get("code")
    return out


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
