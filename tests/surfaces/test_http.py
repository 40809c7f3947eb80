"""REST and the content API: each endpoint, the error shape, body limits and the API key."""

from __future__ import annotations

import asyncio
import socket
import sys
from collections.abc import Iterator
from typing import Any

import pytest
import uvicorn
from fastapi.testclient import TestClient
from starlette.websockets import WebSocketDisconnect

from cogitave.collection import Collection
from cogitave.service import ops
from cogitave.service.args import SearchArgs
from cogitave.surfaces.http import bind, create_app
from tests.helpers import BASE_URL, docs_collection, http_error


@pytest.fixture(scope="module")
def col(tmp_path_factory: pytest.TempPathFactory) -> Collection:
    return docs_collection(tmp_path_factory)


@pytest.fixture(scope="module")
def client(col: Collection) -> Iterator[TestClient]:
    with TestClient(create_app(col, max_body_bytes=10_000), base_url=BASE_URL) as c:
        yield c


def test_search_is_the_python_api_answer(client: TestClient, col: Collection) -> None:
    body = client.post("/search", json={"query": "reciprocal rank fusion", "limit": 4}).json()
    want = ops.search(col, SearchArgs("reciprocal rank fusion", limit=4)).to_dict()
    assert body["results"] == want["results"]
    assert body["root"] == col.root
    assert body["diagnostics"]["root"] == col.root


def test_search_accepts_every_request_field(client: TestClient) -> None:
    body = {
        "query": "python",
        "limit": 2,
        "offset": 1,
        "mode": "bm25",
        "dimensions": ["title", "code"],
        "filters": {"kind": "code_sample"},
        "backfill": False,
        "explain": True,
        "root": None,
    }
    resp = client.post("/search", json=body)
    assert resp.status_code == 200, resp.text
    assert [h["rank"] for h in resp.json()["results"]] == [2, 3][: len(resp.json()["results"])]
    assert {h["kind"] for h in resp.json()["results"]} <= {"code_sample"}


@pytest.mark.parametrize(
    "content, code",
    [
        (b'{"query": "x",', "bad_input"),  # malformed JSON
        (b"\xff\xfe", "bad_input"),  # not UTF-8
        (b"", "bad_input"),
        (b'["x"]', "query"),
        (b'"x"', "query"),
        (b'{"limit": 3}', "query"),
        (b'{"query": "x", "colour": "red"}', "query"),
        (b'{"query": "x", "limit": 0}', "query"),
        (b'{"query": "x", "limit": -1}', "query"),
        (b'{"query": "x", "limit": 1000000}', "query"),
        (b'{"query": "x", "limit": "10"}', "query"),
        (b'{"query": "x", "limit": 2.5}', "query"),
        (b'{"query": "x", "offset": -3}', "query"),
        (b'{"query": ""}', "query"),
        (b'{"query": "   "}', "query"),
        (b'{"query": 42}', "query"),
        (b'{"query": null}', "query"),
        (b'{"query": "x", "mode": "magic"}', "query"),
        (b'{"query": "x", "explain": "yes"}', "query"),
        (b'{"query": "x", "filters": "kind"}', "query"),
        (b'{"query": "x", "filters": {"kind": []}}', "query"),
        (b'{"query": "x", "dimensions": []}', "query"),
        (b'{"query": "x", "dimensions": ["nope"]}', None),
        (b'{"query": "x", "filters": {"title": "x"}}', "query"),
    ],
)
def test_search_rejects_bad_bodies_with_400(
    client: TestClient, content: bytes, code: str | None
) -> None:
    resp = client.post("/search", content=content, headers={"content-type": "application/json"})
    http_error(resp, 400, code)


def test_search_with_an_unknown_root_is_404(client: TestClient) -> None:
    http_error(client.post("/search", json={"query": "x", "root": "0" * 64}), 404, "not_found")


def test_body_over_the_limit_is_413(client: TestClient) -> None:
    big = b'{"query": "' + b"x" * 20_000 + b'"}'
    http_error(client.post("/search", content=big), 413, "too_large")

    def chunks() -> Iterator[bytes]:  # no Content-Length: counted while read
        yield b'{"query": "'
        for _ in range(30):
            yield b"y" * 1000
        yield b'"}'

    for path in ("/search", "/graph/query", "/graphql", "/mcp"):
        headers = {"content-type": "application/json", "accept": "application/json"}
        http_error(client.post(path, content=chunks(), headers=headers), 413, "too_large")


def test_node_content_api(client: TestClient) -> None:
    body = client.get("/nodes/tutorial/query%23code-1").json()
    assert body["uid"] == "tutorial/query#code-1"
    assert body["kind"] == "code_sample"
    assert "idx.search" in body["code"] and body["dims"]["language"] == "python"
    assert {"label": "partOf", "dst": "tutorial/query#ranking"} in body["edges"]
    assert body["meta"]["path"] == "docs/tutorial/query.md"
    assert body["links"]["self"] == "/nodes/tutorial/query%23code-1"
    page = client.get("/nodes/tutorial/install").json()
    assert page["content"].startswith("# Installation") and "code" not in page


def test_search_hit_links_resolve(client: TestClient) -> None:
    mcp_style = client.get("/nodes/tutorial/first-steps%23configuration")
    assert mcp_style.status_code == 200
    assert mcp_style.json()["dims"]["title"] == "Configuration"


def test_unknown_node_is_404(client: TestClient) -> None:
    http_error(client.get("/nodes/no/such/page"), 404, "not_found")
    http_error(client.get("/nodes/no/such/page/related"), 404, "not_found")


def test_related(client: TestClient) -> None:
    resp = client.get(
        "/nodes/tutorial/query/related",
        params={"labels": "partOf,implementedBy", "direction": "in", "depth": 2, "limit": 10},
    )
    body = resp.json()
    uids = [i["uid"] for i in body["items"]]
    assert uids[0] == "tutorial/query#ranking"
    assert {"tutorial/query#code-1", "tutorial/query#code-2"} <= set(uids)
    deep = next(i for i in body["items"] if i["uid"] == "tutorial/query#code-1")
    assert deep["depth"] == 2 and len(deep["path"]) == 2
    assert deep["content"] == "/nodes/tutorial/query%23code-1"
    assert body["truncated"] is False
    one = client.get("/nodes/tutorial/query/related", params={"limit": 1}).json()
    assert len(one["items"]) == 1 and one["truncated"] is True


@pytest.mark.parametrize(
    "params, code",
    [
        ({"depth": 0}, "depth"),
        ({"depth": 5}, "depth"),
        ({"depth": "deep"}, "bad_input"),
        ({"limit": 0}, "limit"),
        ({"limit": -1}, "limit"),
        ({"limit": 100_000}, "limit"),
        ({"labels": "partOf,likes"}, "label"),
        ({"direction": "up"}, "syntax"),
    ],
)
def test_related_rejects_bad_parameters(
    client: TestClient, params: dict[str, Any], code: str
) -> None:
    http_error(client.get("/nodes/tutorial/query/related", params=params), 400, code)


def test_learning_path(client: TestClient) -> None:
    body = client.get("/learning-path", params={"target": "tutorial/query"}).json()
    steps = [s["uid"] for s in body["steps"]]
    assert steps == ["tutorial/install", "tutorial/first-steps", "tutorial/query"]
    assert body["steps"][-1]["why"] == "the target"
    skill = client.get("/learning-path", params={"target": "skill:indexing"}).json()
    assert "tutorial/first-steps" in [s["uid"] for s in skill["steps"]]
    http_error(client.get("/learning-path"), 400, "bad_input")
    http_error(client.get("/learning-path", params={"target": " "}), 400, "bad_input")
    http_error(client.get("/learning-path", params={"target": "zzz-unknown"}), 404, "not_found")


def test_xref(client: TestClient) -> None:
    body = client.get("/xref", params={"ref": "install.md#using-pip"}).json()
    assert body["exact"] is True
    assert "tutorial/install#using-pip" in [c["uid"] for c in body["candidates"]]
    fuzzy = client.get("/xref", params={"ref": "Instalation"}).json()
    assert fuzzy["exact"] is False
    assert fuzzy["candidates"][0]["uid"] == "tutorial/install"
    http_error(client.get("/xref", params={"ref": ""}), 400)
    http_error(client.get("/xref", params={"ref": "x", "limit": 0}), 400, "query")


def test_graph_query(client: TestClient) -> None:
    body = client.post(
        "/graph/query",
        json={
            "query": "MATCH (c:code_sample)-[:partOf*1..2]->(p:page {uid: $page}) "
            "RETURN c.uid, c.language ORDER BY c.uid",
            "params": {"page": "tutorial/query"},
        },
    ).json()
    assert body["columns"] == ["c.uid", "c.language"]
    assert body["rows"] == [
        ["tutorial/query#code-1", "python"],
        ["tutorial/query#code-2", "javascript"],
    ]
    assert body["truncated"] is False


@pytest.mark.parametrize(
    "payload, code",
    [
        ({"query": "MATCH (n) DELETE n"}, "read_only"),
        ({"query": "CREATE (n:page {uid: 'x'})"}, "read_only"),
        ({"query": "MATCH (n) SET n.title = 'x' RETURN n"}, "read_only"),
        ({"query": "CALL db.labels()"}, "read_only"),
        ({"query": "MATCH (a)-[:follows]->(b) RETURN b"}, "label"),
        ({"query": "MATCH (a)-[*]->(b) RETURN b"}, "unbounded"),
        ({"query": "MATCH (a)-[*1..7]->(b) RETURN b"}, "depth"),
        ({"query": "MATCH (a {uid: $missing}) RETURN a"}, "param"),
        ({"query": "MATCH (a RETURN a"}, "syntax"),
        ({"query": 5}, "syntax"),
        ({"query": "MATCH (a) RETURN a", "params": [1, 2]}, "param"),
        ({"query": "MATCH (a) RETURN a", "timeout": 1}, "bad_input"),
        ({"params": {}}, "bad_input"),
        ([1], "bad_input"),
    ],
)
def test_graph_query_violations_are_400(client: TestClient, payload: Any, code: str) -> None:
    http_error(client.post("/graph/query", json=payload), 400, code)


def test_graph_query_malformed_json(client: TestClient) -> None:
    http_error(client.post("/graph/query", content=b"{nope"), 400, "bad_input")


def test_roots_health_openapi(client: TestClient, col: Collection) -> None:
    roots = client.get("/roots").json()
    assert roots["current"] == col.root
    assert any(r["head"] and r["id"] == col.root for r in roots["roots"])
    # the server reads its current root, so it holds it
    assert any(r["held"] and r["id"] == col.root for r in roots["roots"])
    assert client.get("/health").json()["status"] == "ok"
    spec = client.get("/openapi.json").json()
    assert {"/search", "/nodes/{uid}", "/nodes/{uid}/related", "/learning-path", "/xref"} <= set(
        spec["paths"]
    )
    assert {"/graph/query", "/roots", "/health"} <= set(spec["paths"])
    schema = spec["paths"]["/search"]["post"]["requestBody"]["content"]["application/json"]
    assert schema["schema"]["additionalProperties"] is False
    assert "query" in schema["schema"]["required"]


def test_unknown_routes_use_the_error_shape(client: TestClient) -> None:
    http_error(client.get("/nowhere"), 404, "not_found")
    http_error(client.delete("/search"), 405, "method_not_allowed")


def test_mcp_outside_the_lifespan_is_503(col: Collection) -> None:
    client = TestClient(create_app(col), base_url=BASE_URL)  # not entered: no lifespan
    http_error(client.post("/mcp", json={}), 503, "unavailable")


def test_api_key(col: Collection) -> None:
    with TestClient(create_app(col, api_key="s3cret"), base_url=BASE_URL) as c:
        assert c.get("/health").status_code == 200
        for path in ("/roots", "/openapi.json", "/nodes/index", "/graphql?query={roots{current}}"):
            err = http_error(c.get(path), 401, "unauthorized")
            assert "Bearer" in err["message"]
        http_error(c.get("/roots", headers={"Authorization": "Bearer wrong"}), 401)
        http_error(c.get("/roots", headers={"Authorization": "s3cret"}), 401)
        http_error(c.post("/mcp", json={}), 401)
        http_error(c.post("/search", json={"query": "x"}), 401)
        ok = {"Authorization": "Bearer s3cret"}
        assert c.get("/roots", headers=ok).status_code == 200
        assert c.post("/search", json={"query": "pip"}, headers=ok).status_code == 200
        assert c.get("/roots", headers=ok).headers["content-type"] == "application/json"
        assert c.get("/roots").headers["www-authenticate"] == "Bearer"
        with pytest.raises(WebSocketDisconnect), c.websocket_connect("/graphql") as ws:
            ws.receive_json()


def test_internal_faults_keep_the_error_shape(col: Collection) -> None:
    app = create_app(col)

    @app.get("/boom")
    def boom() -> None:
        raise RuntimeError("internal detail")

    with TestClient(app, base_url=BASE_URL, raise_server_exceptions=False) as c:
        err = http_error(c.get("/boom"), 500, "internal")
        assert "internal detail" not in err["message"]


async def _hello(scope: dict[str, Any], receive: Any, send: Any) -> None:
    await send({"type": "http.response.start", "status": 200, "headers": []})
    await send({"type": "http.response.body", "body": b"hello"})


def test_every_accepted_connection_sends_without_delay() -> None:
    """The listener ``cogitave serve`` hands to uvicorn: the server's side of each keep-alive
    connection has Nagle's algorithm off (``TCP_NODELAY``), read from the accepted socket."""

    async def served() -> list[int]:
        server = uvicorn.Server(uvicorn.Config(_hello, log_level="warning", lifespan="off"))
        with bind("127.0.0.1", 0) as sock:
            running = asyncio.create_task(server.serve(sockets=[sock]))
            try:
                # the kernel queues the connection until the server accepts it
                reader, writer = await asyncio.open_connection(*sock.getsockname()[:2])
                for _ in range(2):  # the same connection, kept alive
                    writer.write(b"GET / HTTP/1.1\r\nHost: localhost\r\n\r\n")
                    await reader.readuntil(b"hello")
                conns = server.server_state.connections
                accepted = [p.transport.get_extra_info("socket") for p in conns]
                got = [s.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) for s in accepted]
                writer.close()
                await writer.wait_closed()
            finally:
                server.should_exit = True
                await running
        return got

    assert asyncio.run(served()) == [1]


@pytest.mark.skipif(sys.platform != "linux", reason="accepted sockets inherit it on Linux")
def test_a_plainly_accepted_connection_inherits_no_delay() -> None:
    with bind("127.0.0.1", 0) as listener, socket.create_connection(listener.getsockname()):
        accepted, _ = listener.accept()
        with accepted:
            assert accepted.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) == 1
