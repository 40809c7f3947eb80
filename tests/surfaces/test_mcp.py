"""The MCP tools: schemas a model can read, compact answers, and isError for every bad call."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from mcp import Client, StdioServerParameters

from cogitave.collection import Collection
from cogitave.query.types import SearchRequest
from cogitave.surfaces.mcp import build_mcp
from tests.helpers import CLI, docs_collection, free_port, mcp_call, mcp_calls, mcp_text

TOOLS = {
    "list_libraries",
    "resolve_library",
    "docs_search",
    "docs_fetch",
    "code_sample_search",
    "get_related",
    "get_learning_path",
    "resolve_xref",
    "query_graph",
}


@pytest.fixture(scope="module")
def col(tmp_path_factory: pytest.TempPathFactory) -> Collection:
    return docs_collection(tmp_path_factory)


def test_tools_are_listed_with_schemas_and_descriptions(col: Collection) -> None:
    async def run() -> Any:
        async with Client(build_mcp(col)) as client:
            return (await client.list_tools()).tools

    tools = {t.name: t for t in anyio.run(run)}
    assert set(tools) == TOOLS
    for t in tools.values():
        assert len(t.description or "") > 100
        assert t.input_schema["additionalProperties"] is False
        assert t.annotations is not None and t.annotations.read_only_hint
    limit = tools["docs_search"].input_schema["properties"]["limit"]
    assert (limit["minimum"], limit["maximum"]) == (1, 50)
    depth = tools["get_related"].input_schema["properties"]["depth"]
    assert (depth["minimum"], depth["maximum"]) == (1, 4)
    qg = tools["query_graph"].description or ""
    for bound in ("Read-only", "dependsOn", "derivedFrom", "4 hops", "1000", "250 ms"):
        assert bound in qg
    assert "code_sample" in tools["docs_search"].input_schema["properties"]["kind"]["description"]


def test_docs_search_is_compact_and_matches_the_api(col: Collection) -> None:
    res = mcp_call(col, "docs_search", {"query": "install with pip", "limit": 5})
    assert not res.is_error
    body = res.structured_content
    assert [r["uid"] for r in body["results"]] == col.search(
        SearchRequest(query="install with pip", limit=5, group_by_page=True)
    ).uids
    pages = [r.get("path", r["uid"]) for r in body["results"]]
    assert len(pages) == len(set(pages)), "one hit per page"
    top = body["results"][0]
    assert {"uid", "kind", "title", "snippet", "score", "rank"} <= set(top)
    assert top["rank"] == 1
    # compact: the root and the content-API path are given once, not per hit
    assert body["root"] == col.root and body["content"] == "/nodes/{uid}"
    assert not any("content" in r or col.root in str(r) for r in body["results"])
    page = next(r for r in body["results"] if r["kind"] == "page")
    assert page["url"].startswith("/") and page["path"].endswith(".md")
    assert set(body["diagnostics"]) == {"total_ms", "lenses"}
    assert "markdown" not in body  # the Markdown is the text content, not repeated
    # the page's other matching nodes are listed under its best one
    grouped = col.search(SearchRequest(query="install with pip", limit=5, group_by_page=True))
    assert top["group"] and top["group"] == list(grouped.results[0].group)


def test_docs_search_explain_and_filters(col: Collection) -> None:
    full, kinds = mcp_calls(
        col,
        ("docs_search", {"query": "ranking", "explain": True}),
        ("docs_search", {"query": "ranking", "kind": ["section"], "dimensions": ["title"]}),
    )
    assert isinstance(full.structured_content["diagnostics"]["lenses"], list)
    assert "total_ms" in full.structured_content["diagnostics"]
    assert not kinds.is_error
    assert {r["kind"] for r in kinds.structured_content["results"]} <= {"section"}


def test_docs_search_path_prefix_keeps_one_part_of_the_site(col: Collection) -> None:
    every, tutorial, long = mcp_calls(
        col,
        ("docs_search", {"query": "index search", "limit": 10}),
        ("docs_search", {"query": "index search", "limit": 10, "path_prefix": "/tutorial/"}),
        ("docs_search", {"query": "x", "path_prefix": "/" * 2000}),
    )
    outside = [r for r in every.structured_content["results"] if "tutorial" not in str(r)]
    assert outside, "the query must match pages outside the prefix for the test to mean much"
    hits = tutorial.structured_content["results"]
    assert hits and all(
        r.get("url", "").startswith("/tutorial/") or r.get("path", "").startswith("docs/tutorial/")
        for r in hits
    )
    assert [r["uid"] for r in hits] == col.search(
        SearchRequest(query="index search", limit=10, group_by_page=True, path_prefix="/tutorial/")
    ).uids
    assert long.is_error and "path_prefix" in mcp_text(long)


def test_code_sample_search_returns_code(col: Collection) -> None:
    res = mcp_call(
        col, "code_sample_search", {"query": "search results score", "language": "Python"}
    )
    assert not res.is_error, mcp_text(res)
    hits = res.structured_content["results"]
    assert hits
    for h in hits:
        assert h["kind"] == "code_sample" and h["language"] == "python"
        assert isinstance(h["code"], str) and h["code"].strip()
    assert "idx.search" in hits[0]["code"]


def test_graph_tools(col: Collection) -> None:
    related, path, xref, graph = mcp_calls(
        col,
        ("get_related", {"uid": "tutorial/query", "labels": ["partOf"], "direction": "in"}),
        ("get_learning_path", {"target": "tutorial/query"}),
        ("resolve_xref", {"ref": "install.md#using-pip"}),
        (
            "query_graph",
            {
                "query": "MATCH (s:section)-[:partOf]->(p {uid: $uid}) RETURN s.uid ORDER BY s.uid",
                "params": {"uid": "tutorial/install"},
            },
        ),
    )
    items = related.structured_content["items"]
    assert [i["uid"] for i in items] == ["tutorial/query#ranking"]
    assert items[0]["path"][0]["label"] == "partOf"
    steps = [s["uid"] for s in path.structured_content["steps"]]
    assert steps == ["tutorial/install", "tutorial/first-steps", "tutorial/query"]
    assert "tutorial/install#using-pip" in [c["uid"] for c in xref.structured_content["candidates"]]
    assert graph.structured_content["rows"] == [
        ["tutorial/install#from-source"],
        ["tutorial/install#using-pip"],
    ]


BAD_CALLS = [
    ("docs_search", {"query": "x", "limit": 0}, "limit"),
    ("docs_search", {"query": "x", "limit": -1}, "limit"),
    ("docs_search", {"query": "x", "limit": 10**9}, "limit"),
    ("docs_search", {"query": "x", "limit": "many"}, "limit"),
    ("docs_search", {"query": 5}, "query"),
    ("docs_search", {"query": ""}, "query"),
    ("docs_search", {"query": "   "}, "error[query]"),
    ("docs_search", {"query": "x", "colour": "red"}, "colour"),
    ("docs_search", {"query": "x", "dimensions": ["nope"]}, "nope"),
    ("docs_search", {"query": "x", "filters": {"title": "x"}}, "exact"),
    ("code_sample_search", {"query": "x", "limit": 51}, "limit"),
    ("get_related", {"uid": "no/such#node"}, "error[not_found]"),
    ("get_related", {"uid": "tutorial/query", "depth": 5}, "depth"),
    ("get_related", {"uid": "tutorial/query", "labels": ["likes"]}, "labels"),
    ("get_related", {"uid": "tutorial/query", "direction": "up"}, "direction"),
    ("get_learning_path", {"target": "nothing-like-this"}, "error[not_found]"),
    ("resolve_xref", {"ref": "  "}, "error["),
    ("query_graph", {"query": "MATCH (n) DETACH DELETE n"}, "error[read_only]"),
    ("query_graph", {"query": "CREATE (n {uid: 'x'}) RETURN n"}, "error[read_only]"),
    ("query_graph", {"query": "MATCH (a)-[:likes]->(b) RETURN b"}, "error[label]"),
    ("query_graph", {"query": "MATCH (a)-[*]->(b) RETURN b"}, "error[unbounded]"),
    ("query_graph", {"query": "MATCH (a)-[*1..9]->(b) RETURN b"}, "error[depth]"),
    ("query_graph", {"query": "MATCH (a {uid: $u}) RETURN a"}, "error[param]"),
    ("query_graph", {"query": "MATCH (a) RETURN a", "params": [1]}, "params"),
]


def test_every_bad_call_is_a_tool_error_with_the_reason(col: Collection) -> None:
    results = mcp_calls(col, *((name, args) for name, args, _ in BAD_CALLS))
    for (name, args, reason), res in zip(BAD_CALLS, results, strict=True):
        assert res.is_error, (name, args)
        assert reason in mcp_text(res), (name, args, mcp_text(res))
        assert name in mcp_text(res)


def test_tool_errors_over_json_rpc_framing(col: Collection) -> None:
    """The legacy (initialize handshake, JSON-RPC) path reports isError the same way."""
    bad, good = mcp_calls(
        col,
        ("query_graph", {"query": "MATCH (n) SET n.x = 1 RETURN n"}),
        ("docs_search", {"query": "install"}),
        mode="legacy",
    )
    assert bad.is_error and "error[read_only]" in mcp_text(bad)
    assert not good.is_error


def test_stdio_transport(col: Collection) -> None:
    params = StdioServerParameters(
        command=sys.executable,
        args=[*CLI[1:], "mcp", "--collection", str(col.store.path)],
        env=dict(os.environ),
    )

    async def run() -> Any:
        async with Client(params) as client:
            names = {t.name for t in (await client.list_tools()).tools}
            res = await client.call_tool("docs_search", {"query": "install with pip", "limit": 3})
            bad = await client.call_tool("get_related", {"uid": "nope"})
            return names, res, bad

    names, res, bad = anyio.run(run)
    assert names == TOOLS
    assert [r["uid"] for r in res.structured_content["results"]] == col.search(
        SearchRequest(query="install with pip", limit=3, group_by_page=True)
    ).uids
    assert bad.is_error and "not_found" in mcp_text(bad)


def test_serve_mounts_streamable_http(col: Collection, tmp_path: Path) -> None:
    """`cogitave serve` answers REST and MCP (streamable HTTP at /mcp) on one port."""
    port = free_port()
    log = (tmp_path / "serve.log").open("w")
    proc = subprocess.Popen(
        [*CLI, "serve", "--collection", str(col.store.path), "--port", str(port)],
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        base = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 30
        while True:
            try:
                if httpx.get(f"{base}/health").status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert proc.poll() is None, (tmp_path / "serve.log").read_text()
            assert time.monotonic() < deadline, "server did not start"
            time.sleep(0.1)

        async def run() -> Any:
            async with Client(f"{base}/mcp") as client:
                ok = await client.call_tool("docs_search", {"query": "install with pip"})
                bad = await client.call_tool("docs_search", {"query": "x", "limit": 0})
                short = await client.call_tool(
                    "docs_search", {"query": "install with pip", "max_tokens": 100}
                )
                page = await client.call_tool("docs_fetch", {"ref": "/tutorial/install/"})
                typed = await client.call_tool("docs_search", {"query": "x", "limit": "3"})
                return ok, bad, short, page, typed

        ok, bad, short, page, typed = anyio.run(run)
        assert [r["uid"] for r in ok.structured_content["results"]] == col.search(
            SearchRequest(query="install with pip", group_by_page=True)
        ).uids
        assert bad.is_error and "limit" in mcp_text(bad)
        answer = mcp_text(ok)
        assert "Installation\n" in answer and "```bash\npip install demo-package\n```" in answer
        assert len(mcp_text(short)) <= 400 and "max_tokens=100" in mcp_text(short)
        assert mcp_text(page).startswith("# Tutorial › Installation\n/tutorial/install/")
        assert page.structured_content["next_offset"] is None
        assert typed.is_error
    finally:
        proc.terminate()
        proc.wait(timeout=30)
        log.close()
