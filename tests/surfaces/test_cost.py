"""The cost model on every surface: one regression test per finding of the security pass.

1. wrong-typed ``dimensions`` answered 500;  2. nested GraphQL multiplied work and stalled
``/health``;  3. ``query_graph`` output had no size bound;  4. MCP HTTP sessions piled up;
5. transport errors answered plain text;  6. (the graph side: tests/graph/test_query_bypass.py)
chained variable-length hops;  7. an empty API key turned authentication off.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from typing import Any

import anyio
import httpx
import pytest
from fastapi.testclient import TestClient

from cogitave.collection import Collection
from cogitave.errors import InputError, TooCostlyError, UnavailableError
from cogitave.service import ops
from cogitave.surfaces.cost import Budget, Limits, WorkerPool, json_size
from cogitave.surfaces.graphql_cost import estimate_cost
from cogitave.surfaces.http import McpSessions, create_app
from tests.helpers import (
    BASE_URL,
    docs_collection,
    free_port,
    http_error,
    mcp_call,
    mcp_text,
    run_cli,
)

NESTED = """{
  related(uid: "tutorial/query", depth: 4, limit: 1000) { items { node {
    related(depth: 4, limit: 1000) { items { uid } } } } }
  search(query: "index", limit: 1000) { results { node {
    related(depth: 4, limit: 1000) { items { node { related(depth: 4, limit: 1000) {
      items { uid } } } } } } } }
}"""


@pytest.fixture(scope="module")
def col(tmp_path_factory: pytest.TempPathFactory) -> Collection:
    return docs_collection(tmp_path_factory)


@pytest.fixture(scope="module")
def client(col: Collection) -> Iterator[TestClient]:
    with TestClient(create_app(col), base_url=BASE_URL) as c:
        yield c


# -- 1. wrong types are 400, never 500 ------------------------------------------------------
@pytest.mark.parametrize("value", [5, True, 1.5, {"a": 1}, "title"])
def test_search_dimensions_of_the_wrong_type_are_400(client: TestClient, value: Any) -> None:
    err = http_error(
        client.post("/search", json={"query": "pip", "dimensions": value}), 400, "query"
    )
    assert "dimensions" in err["message"]
    # the connection survives: the next request on the same client is answered
    assert client.get("/health").json()["status"] == "ok"


@pytest.mark.parametrize(
    ("tool", "args"),
    [
        ("docs_search", {"query": "pip", "limit": "10"}),
        ("docs_search", {"query": "pip", "limit": True}),
        ("docs_search", {"query": "pip", "explain": "true"}),
        ("docs_search", {"query": "pip", "max_tokens": 2000.5}),
        ("get_related", {"uid": "tutorial/install", "depth": "2"}),
        ("resolve_xref", {"ref": "install", "limit": False}),
        ("docs_fetch", {"ref": "tutorial/install", "offset": "1"}),
    ],
)
def test_mcp_arguments_are_strictly_typed(col: Collection, tool: str, args: dict) -> None:
    res = mcp_call(col, tool, args)
    assert res.is_error, mcp_text(res)


# -- 2. nested GraphQL: the product is bounded, before and while it runs ----------------------
def test_graphql_cost_is_the_product_of_nested_limits() -> None:
    from graphql import parse

    doc = parse(
        '{ search(query: "x", limit: 100) { results { node { related(limit: 50) '
        "{ items { uid } } } } } }"
    )
    assert estimate_cost(doc, {}) == 100 + 100 + 100 * 50
    doc = parse('query($n: Int) { related(uid: "u", limit: $n) { items { node { uid } } } }')
    assert estimate_cost(doc, {"n": 7}) == 7 + 7
    frag = parse(
        '{ search(query: "x") { ...F } } fragment F on SearchResult '
        "{ results { node { related { items { uid } } } } }"
    )
    assert estimate_cost(frag, {}) == 10 + 10 + 10 * 50


def counting_ops(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every service operation the surfaces call, counted (the work a request did)."""
    called: list[str] = []
    for name in ("search", "docs_search", "related", "node", "fetch", "resolve_xref"):
        real = getattr(ops, name)

        def counted(*a: Any, _real: Any = real, _name: str = name, **kw: Any) -> Any:
            called.append(_name)
            return _real(*a, **kw)

        monkeypatch.setattr(ops, name, counted)
    return called


def test_nested_graphql_is_refused_before_it_runs(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    called = counting_ops(monkeypatch)
    resp = client.post("/graphql", json={"query": NESTED})
    assert resp.status_code == 200 and len(resp.content) < 2000
    err = resp.json()["errors"][0]
    assert err["extensions"]["code"] == "too_costly"
    assert err["extensions"]["details"]["bound"] == "expansions"
    assert resp.json()["data"] is None
    assert called == []  # refused before any field ran
    ok = client.post("/graphql", json={"query": '{ search(query: "index") { root } }'})
    assert "errors" not in ok.json() and called == ["search"]  # the counter counts


def test_aliases_of_a_costly_field_add_up(client: TestClient) -> None:
    one = 'a{i}: related(uid: "tutorial/query", limit: 1000) {{ items {{ uid }} }}'
    ok = client.post("/graphql", json={"query": "{" + one.format(i=0) + "}"}).json()
    assert "errors" not in ok
    many = "{" + " ".join(one.format(i=i) for i in range(6)) + "}"
    err = client.post("/graphql", json={"query": many}).json()["errors"][0]
    assert err["extensions"]["code"] == "too_costly"


def test_the_budget_is_enforced_while_a_document_runs(col: Collection) -> None:
    # The static estimate allows it; the runtime charge (rows actually fetched) stops it.
    app = create_app(col, limits=Limits(expansions=3))
    with TestClient(app, base_url=BASE_URL) as c:
        q = '{ a: resolveXref(ref: "install", limit: 5) { candidates { uid } } }'
        body = c.post("/graphql", json={"query": q}).json()
    assert body["errors"][0]["extensions"]["code"] == "too_costly"


def test_budget_charges_and_encodes() -> None:
    b = Budget(Limits(expansions=10, response_bytes=100))
    b.charge(10, "x")
    with pytest.raises(TooCostlyError) as e:
        b.charge(1, "field related")
    assert e.value.details == {"bound": "expansions", "max": 10}
    assert b.encode({"a": "b"}) == b'{"a":"b"}'
    with pytest.raises(TooCostlyError) as e:
        b.encode({"a": ["x" * 10] * 20})
    assert e.value.details["bound"] == "response_bytes"
    # Between the bounds the exact size decides: "\n" is written in two bytes, "\x01" in six.
    assert b.encode(["\n" * 30]) == ('["' + "\\n" * 30 + '"]').encode()
    with pytest.raises(TooCostlyError):
        b.encode(["\x01" * 30])
    shared = "z" * 1000
    assert json_size([shared] * 1000, 10**9) > 1_000_000  # repeats count in full
    looked: list[int] = []

    class Counted(list):  # type: ignore[type-arg]
        def __iter__(self) -> Iterator[Any]:
            for x in super().__iter__():
                looked.append(1)
                yield x

    inner = Counted([shared] * 1000)
    assert json_size(Counted([inner] * 3), 10**9) > 3_000_000 and len(looked) == 3 + 3 * 1000
    looked.clear()
    # 10**12 strings: counting stops past the cap without looking at one of them
    assert json_size(Counted([Counted([shared] * 10**6)] * 10**6), 5000) > 5000
    assert looked == []


def test_a_request_past_its_wall_time_is_answered_at_the_deadline() -> None:
    """The caller is answered at the deadline while the work is still running: the work
    waits on an event that is set only after the answer."""
    pool = WorkerPool(workers=1, queue=0)
    budget = Budget(Limits(wall_ms=100))
    started, finish = threading.Event(), threading.Event()

    def work() -> None:
        started.set()
        finish.wait(60)

    async def run() -> None:
        await pool.run(budget, work)

    try:
        with pytest.raises(TooCostlyError) as e:
            anyio.run(run)
        assert e.value.details["bound"] == "wall_ms"
        assert started.is_set() and not finish.is_set()  # answered, the work still running

        async def busy() -> None:  # the running work still holds the only slot
            await pool.run(Budget(), lambda: None)

        with pytest.raises(UnavailableError):
            anyio.run(busy)
    finally:
        finish.set()
        pool.shutdown()


def test_health_answers_while_heavy_requests_run(
    col: Collection, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every worker of both lanes held by a request that cannot finish (searches and graph
    walks waiting on an event), and more queued: ``/health`` still answers, and then the held
    requests finish."""
    workers = 4
    app = create_app(col, workers=workers)
    held, release = threading.Semaphore(0), threading.Event()
    real_search, real_related = ops.search, ops.related

    def holding(real: Any) -> Any:
        def run(*a: Any, **kw: Any) -> Any:
            held.release()
            release.wait(60)
            return real(*a, **kw)

        return run

    monkeypatch.setattr(ops, "search", holding(real_search))
    monkeypatch.setattr(ops, "related", holding(real_related))
    search = {"query": "index documents", "limit": 5}
    related = {"depth": 2}

    def all_held() -> bool:  # every worker (4 plain, 1 heavy) inside a request
        return all(held.acquire(timeout=60) for _ in range(workers + 1))

    async def run() -> tuple[int, list[int]]:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url=BASE_URL) as c:
            tasks = [asyncio.create_task(c.post("/search", json=search)) for _ in range(6)]
            tasks += [
                asyncio.create_task(c.get("/nodes/tutorial/query/related", params=related))
                for _ in range(2)
            ]
            try:
                assert await asyncio.to_thread(all_held)
                health = (await c.get("/health")).status_code
                assert not any(t.done() for t in tasks)  # answered while every one is held
            finally:
                release.set()
            return health, [r.status_code for r in await asyncio.gather(*tasks)]

    health, codes = asyncio.run(run())
    assert health == 200
    assert codes == [200] * 8


# -- 3. query_graph output is bounded on every surface ---------------------------------------
BIG = {
    "query": "MATCH (a),(b) RETURN [" + ", ".join(["$p"] * 300) + "] AS x LIMIT 1000",
    "params": {"p": "x" * 4000},
}


def test_query_graph_output_is_bounded_over_rest(client: TestClient) -> None:
    err = http_error(client.post("/graph/query", json=BIG), 400, "limit")
    assert err["details"]["bound"] == "response_bytes"


def test_query_graph_output_is_bounded_over_mcp(col: Collection) -> None:
    res = mcp_call(col, "query_graph", BIG)
    assert res.is_error and "bytes" in mcp_text(res)
    assert len(mcp_text(res)) < 1000


def test_every_answer_is_bounded_in_bytes(col: Collection) -> None:
    app = create_app(col, limits=Limits(response_bytes=300))
    with TestClient(app, base_url=BASE_URL) as c:
        err = http_error(
            c.post("/search", json={"query": "install", "limit": 10}), 400, "too_costly"
        )
    assert err["details"] == {"bound": "response_bytes", "max": 300}


# -- 4. MCP over HTTP keeps no unbounded session table --------------------------------------
INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"},
    },
}
MCP_HEADERS = {"accept": "application/json, text/event-stream"}


def _initialize_many(c: TestClient, n: int) -> list[int]:
    return [c.post("/mcp", json=INIT, headers=MCP_HEADERS).status_code for _ in range(n)]


def test_mcp_http_is_stateless_by_default(col: Collection) -> None:
    app = create_app(col)
    with TestClient(app, base_url=BASE_URL) as c:
        assert set(_initialize_many(c, 200)) == {200}
        manager = app.state.mcp.server.session_manager
        assert manager.stateless and not manager._server_instances
        # no event stream is held open per connection either
        get = c.get("/mcp", headers={"accept": "text/event-stream"})
        assert get.status_code == 405 and get.json()["error"]["code"] == "method_not_allowed"


def test_mcp_http_sessions_are_capped(col: Collection) -> None:
    # an idle timeout far longer than the test: a slow machine expires nothing by accident
    sessions = McpSessions(stateless=False, max_sessions=3, idle_timeout_s=600)
    app = create_app(col, mcp_sessions=sessions)
    with TestClient(app, base_url=BASE_URL) as c:
        codes = _initialize_many(c, 5)
        assert codes[:3] == [200] * 3 and codes[3:] == [503, 503]
        manager = app.state.mcp.server.session_manager
        assert manager.max_sessions == 3 and manager.session_idle_timeout == 600


def test_mcp_http_idle_sessions_expire(col: Collection) -> None:
    sessions = McpSessions(stateless=False, max_sessions=1, idle_timeout_s=0.3)
    app = create_app(col, mcp_sessions=sessions)
    with TestClient(app, base_url=BASE_URL) as c:
        manager = app.state.mcp.server.session_manager
        discard, closed = manager._discard_session, threading.Event()

        async def discarded(*a: Any, **kw: Any) -> Any:
            try:
                return await discard(*a, **kw)
            finally:
                closed.set()

        manager._discard_session = discarded
        assert _initialize_many(c, 1) == [200]
        assert _initialize_many(c, 1) == [503]  # the one session is open
        assert closed.wait(60)  # closed by its idle timeout: room for a new one
        assert _initialize_many(c, 1) == [200]


# -- 5. every error the server emits has the JSON shape --------------------------------------
@pytest.mark.parametrize(
    ("kw", "status"),
    [
        ({"json": [{"query": "{ roots { current } }"}]}, 400),  # batching
        ({"json": {"variables": {}}}, 400),  # no query
        ({"content": b"{not json", "headers": {"content-type": "application/json"}}, 400),
        ({"content": b"query=x", "headers": {"content-type": "text/csv"}}, 415),
    ],
)
def test_graphql_transport_errors_are_json(client: TestClient, kw: dict, status: int) -> None:
    resp = client.post("/graphql", **kw)
    assert resp.headers["content-type"].startswith("application/json"), resp.text
    assert resp.status_code in (status, 400)
    assert set(resp.json()) == {"error"}
    assert resp.json()["error"]["message"]


def test_server_errors_are_json(client: TestClient) -> None:
    for resp in (
        client.get("/no/such/path"),
        client.put("/search"),
        client.post("/graphql", content=b"\xff\xfe", headers={"content-type": "application/json"}),
        client.get("/nodes/x/related", params={"depth": "deep"}),
        client.get("/fetch", params={"ref": "tutorial/install", "max_tokens": "many"}),
    ):
        assert resp.status_code >= 400
        assert resp.headers["content-type"].startswith("application/json"), resp.text
        assert set(resp.json()) == {"error"}


# -- 7. an empty API key is refused at start-up ----------------------------------------------
@pytest.mark.parametrize("key", ["", "   "])
def test_empty_api_key_is_refused(col: Collection, key: str) -> None:
    with pytest.raises(InputError, match="API key is empty"):
        create_app(col, api_key=key)


def test_serve_refuses_an_empty_api_key(col: Collection, monkeypatch: pytest.MonkeyPatch) -> None:
    """``cogitave serve`` in this process: it must refuse before it listens (were it to
    listen, the test fails at once rather than serving)."""
    from cogitave.surfaces import http

    def listen(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("serve listened with an empty API key")

    monkeypatch.setattr(http, "serve", listen)
    monkeypatch.setenv("COGITAVE_API_KEY", "")
    proc = run_cli(
        "serve", "--collection", str(col.store.path), "--port", str(free_port()), ok=False
    )
    assert proc.returncode == 2
    assert "API key is empty" in proc.stderr and "Traceback" not in proc.stderr


def test_serve_on_a_busy_port_says_so_before_serving(
    col: Collection, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A port another process listens on is one error line; nothing claims to serve."""
    import socket

    from cogitave.surfaces import http

    def listen(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("serve ran on a busy port")

    monkeypatch.setattr(http, "serve", listen)
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
        proc = run_cli("serve", "--collection", str(col.store.path), "--port", str(port), ok=False)
    assert proc.returncode == 2
    assert f"error[conflict]: port {port} on 127.0.0.1 is in use" in proc.stderr
    assert "serving" not in proc.stderr and "Traceback" not in proc.stderr
    bad = run_cli("serve", "--collection", str(col.store.path), "--port", "70000", ok=False)
    assert "error[bad_input]: --port 70000" in bad.stderr
