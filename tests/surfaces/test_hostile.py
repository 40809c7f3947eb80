"""Hostile requests on the serving side, one test per way found around a bound: GraphQL
documents that stall validation, answers that grow on the wire, lone surrogates, variable
defaults that hid a limit, wall time under a crowd, and plain-text transport errors."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient
from graphql import parse
from hypothesis import given, settings
from hypothesis import strategies as st

from cogitave.collection import Collection
from cogitave.errors import UnavailableError
from cogitave.service import ops
from cogitave.surfaces.cost import Budget, Limits, encode_json, json_bounds, json_size
from cogitave.surfaces.graphql_cost import MAX_FIELDS, estimate_cost, shape_error
from cogitave.surfaces.http import _error_response, create_app
from tests.helpers import BASE_URL, docs_collection, http_error
from tests.helpers import mcp_call as call
from tests.helpers import mcp_text as text

CAP = 2_000_000
MCP_HEADERS = {"accept": "application/json, text/event-stream"}


@pytest.fixture(scope="module")
def col(tmp_path_factory: pytest.TempPathFactory) -> Collection:
    return docs_collection(tmp_path_factory)


@pytest.fixture(scope="module")
def client(col: Collection) -> Iterator[TestClient]:
    with TestClient(create_app(col), base_url=BASE_URL) as c:
        yield c


def gql_error(resp: httpx.Response) -> dict[str, Any]:
    assert resp.status_code == 200, resp.text[:300]
    body = resp.json()
    assert body["data"] is None, str(body)[:300]
    return body["errors"][0]


class Held:
    """Calls of a patched function that cannot finish until :meth:`release`: each one counts
    itself in (``wait_in``) and waits."""

    def __init__(self) -> None:
        self.entered = threading.Semaphore(0)
        self.released = threading.Event()

    def around(self, real: Any) -> Any:
        def held(*a: Any, **kw: Any) -> Any:
            self.entered.release()
            self.released.wait(60)
            return real(*a, **kw)

        return held

    def wait_in(self, n: int) -> bool:
        return all(self.entered.acquire(timeout=60) for _ in range(n))

    def release(self) -> None:
        self.released.set()


async def _health_while(
    app: Any, hostile: list[tuple[str, dict[str, Any]]], held: Held, inside: int
) -> tuple[list[httpx.Response], int]:
    """Send ``hostile`` requests at once; once ``inside`` of them are held in their work,
    ask /health, then let them finish: their answers and the health status. /health must
    answer while they are all still running."""
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url=BASE_URL, timeout=60) as c:
        tasks = [asyncio.create_task(c.request(m, "/graphql", **kw)) for m, kw in hostile]
        try:
            assert await asyncio.to_thread(held.wait_in, inside)
            health = (await c.get("/health")).status_code
            assert not any(t.done() for t in tasks)  # answered while every one is held
        finally:
            held.release()
        return await asyncio.gather(*tasks), health


# -- 6. validating a document never stalls the event loop ------------------------------------
REPEATED = "{ " + " ".join(["roots { current }"] * 499) + " }"


def test_documents_costly_to_validate_leave_health_answering(
    col: Collection, monkeypatch: pytest.MonkeyPatch
) -> None:
    from cogitave.surfaces import graphql as gql

    app = create_app(col)
    held = Held()
    monkeypatch.setattr(gql, "shape_error", held.around(gql.shape_error))
    hostile = [("POST", {"json": {"query": REPEATED}})] * 2
    hostile += [("GET", {"params": {"query": REPEATED}})] * 2
    answers, health = asyncio.run(_health_while(app, hostile, held, inside=1))
    assert health == 200
    for resp in answers:
        err = gql_error(resp)
        assert err["extensions"]["code"] == "too_costly", err
        assert err["extensions"]["details"]["bound"] == "fields"


def test_document_shape_is_bounded_before_validation() -> None:
    assert shape_error(parse(REPEATED)) is not None
    many = "{ " + " ".join(f"a{i}: roots {{ current }}" for i in range(MAX_FIELDS)) + " }"
    assert shape_error(parse(many)).details["bound"] == "fields"  # type: ignore[union-attr]
    inline = "{ " + " ".join(["... on Query { roots { current } }"] * 9) + " }"
    assert shape_error(parse(inline)) is not None  # inline fragments merge into one set
    spreads = (
        "{ "
        + " ".join(f"...F{i}" for i in range(9))
        + " } "
        + " ".join(f"fragment F{i} on Query {{ roots {{ current }} }}" for i in range(9))
    )
    assert shape_error(parse(spreads)) is not None
    ok = '{ search(query: "x") { results { uid title node { uid title } } } roots { current } }'
    assert shape_error(parse(ok)) is None
    assert (
        shape_error(parse("{ ...F ...F ...F } fragment F on Query { roots { current } }")) is None
    )


def counted(monkeypatch: pytest.MonkeyPatch, owner: Any, name: str) -> list[int]:
    """Calls of ``owner.name`` from now on, counted."""
    calls: list[int] = []
    real = getattr(owner, name)

    def counting(*a: Any, **kw: Any) -> Any:
        calls.append(1)
        return real(*a, **kw)

    monkeypatch.setattr(owner, name, counting)
    return calls


def test_an_oversized_document_is_refused_before_parsing(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    from graphql.language.parser import Parser

    parsed = counted(monkeypatch, Parser, "parse_document")
    doc = "# " + "x" * 60_000 + "\n{ roots { current } }"
    err = gql_error(client.post("/graphql", json={"query": doc}))
    assert err["extensions"]["details"]["bound"] == "document_chars"
    assert parsed == []
    assert "errors" not in client.post("/graphql", json={"query": "{ roots { current } }"}).json()
    assert parsed  # the counter counts


def test_a_document_runs_off_the_event_loop(client: TestClient) -> None:
    """Parsing, validation and execution happen on the pool's documents lane."""
    import threading

    from cogitave.surfaces import graphql as gql

    seen: list[str] = []
    real = gql.shape_error

    def spy(doc: Any) -> Any:
        seen.append(threading.current_thread().name)
        return real(doc)

    gql.shape_error = spy  # type: ignore[assignment]
    try:
        assert client.post("/graphql", json={"query": "{ roots { current } }"}).json()["data"]
    finally:
        gql.shape_error = real  # type: ignore[assignment]
    assert seen and all(name.startswith("cogitave-document") for name in seen), seen


# -- 7. every answer is bounded by the bytes on the wire ------------------------------------
EMOJI = "\U0001f600" * 4000
WIDE = "MATCH (n) RETURN " + ", ".join(f"$p AS c{i}" for i in range(24)) + " LIMIT 10"


def test_graphql_answer_is_bounded_in_encoded_bytes(client: TestClient) -> None:
    doc = (
        "query($p: JSON) { a: queryGraph(query: $q, params: $p) { rows } "
        "b: queryGraph(query: $q, params: $p) { rows } }"
    ).replace("$q", json.dumps(WIDE))
    resp = client.post("/graphql", json={"query": doc, "variables": {"p": {"p": EMOJI}}})
    assert len(resp.content) <= CAP, len(resp.content)
    assert resp.status_code == 200


def test_rest_answer_is_bounded_in_encoded_bytes(client: TestClient) -> None:
    resp = client.post("/graph/query", json={"query": WIDE, "params": {"p": EMOJI}})
    assert len(resp.content) <= CAP, len(resp.content)


def test_mcp_answer_is_bounded_on_the_wire(col: Collection) -> None:
    """Control characters are six bytes in the structured content, and the text content
    (the same JSON) is escaped once more: the whole answer stays within the bound."""
    limits = Limits(response_bytes=200_000)
    app = create_app(col, limits=limits)
    args = {"query": WIDE.replace("LIMIT 10", "LIMIT 2"), "params": {"p": "\x01" * 520}}
    rpc = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "query_graph", "arguments": args},
    }
    with TestClient(app, base_url=BASE_URL) as c:
        resp = c.post("/mcp", json=rpc, headers=MCP_HEADERS)
    assert resp.status_code == 200
    assert len(resp.content) <= limits.response_bytes, len(resp.content)
    assert "too_costly" in resp.text or "response_bytes" in resp.text


def test_markdown_is_measured_in_bytes() -> None:
    b = Budget(Limits(response_bytes=1000))
    assert b.check_text("é" * 500) == ("é" * 500).encode()
    with pytest.raises(Exception, match="larger than 1000 bytes"):
        b.check_text("\U0001f600" * 300)  # 300 characters, 1200 bytes


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(), inner, max_size=5),
    max_leaves=20,
)


@settings(max_examples=200, deadline=None)
@given(value=JSON_VALUES)
def test_json_size_never_undercounts_the_encoded_bytes(value: Any) -> None:
    data = encode_json(value)
    assert json_size(value, 10**9) >= len(data)


@settings(max_examples=200, deadline=None)
@given(value=JSON_VALUES)
def test_json_bounds_hold_the_encoded_bytes(value: Any) -> None:
    low, high = json_bounds(value, 10**9)
    assert low <= len(encode_json(value)) <= high


@settings(max_examples=300, deadline=None)
@given(text=st.text(st.characters(exclude_categories=("Cs",))))
def test_a_string_is_measured_exactly(text: str) -> None:
    assert json_size(text, 10**9) == len(encode_json(text))


# -- 9. lone surrogates are bad input everywhere --------------------------------------------
S = "\ud800"


def _raw(client: TestClient, path: str, body: Any) -> httpx.Response:
    return client.post(path, content=json.dumps(body), headers={"content-type": "application/json"})


@pytest.mark.parametrize(
    "body",
    [
        {"query": "MATCH (n) RETURN $p AS x LIMIT 1", "params": {"p": S}},
        {"query": "MATCH (n) RETURN $p AS x LIMIT 1", "params": {"p": ["a", S]}},
        {"query": "MATCH (n) RETURN $p AS x LIMIT 1", "params": {S: 1}},
        {"query": f"MATCH (n) RETURN '{S}' AS x LIMIT 1"},
    ],
)
def test_graph_query_surrogates_are_400(client: TestClient, body: dict[str, Any]) -> None:
    err = http_error(_raw(client, "/graph/query", body), 400)
    assert err["code"] in ("param", "syntax")


@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("/search", {"query": "x", "path_prefix": S}),
        ("/search", {"query": "x", "filters": {"language": S}}),
        ("/search", {"query": "x", "root": S}),
        ("/search", {"query": S}),
    ],
)
def test_search_surrogates_are_400(client: TestClient, path: str, body: dict[str, Any]) -> None:
    http_error(_raw(client, path, body), 400)


@pytest.mark.parametrize(
    ("doc", "variables"),
    [
        ("query($p: JSON) { queryGraph(query: $q, params: $p) { rows } }", {"p": {"p": S}}),
        ("query($u: String!) { node(uid: $u) { uid } }", {"u": S}),
        ("query($u: String!) { fetch(ref: $u) { markdown } }", {"u": S}),
        ("query($u: String!) { related(uid: $u) { truncated } }", {"u": S}),
        ("query($u: String!) { resolveXref(ref: $u) { exact } }", {"u": S}),
        ("query($u: String!) { learningPath(target: $u) { target } }", {"u": S}),
        ("query($u: String!) { search(query: $u) { root } }", {"u": S}),
        ('query($u: JSON) { search(query: "x", filters: $u) { root } }', {"u": {"language": S}}),
        ('query($u: String!) { codeSamples(query: "x", language: $u) { markdown } }', {"u": S}),
    ],
)
def test_graphql_surrogates_are_coded_errors(
    client: TestClient, doc: str, variables: dict[str, Any]
) -> None:
    doc = doc.replace("$q", json.dumps("MATCH (n) RETURN $p AS x LIMIT 1"))
    resp = _raw(client, "/graphql", {"query": doc, "variables": variables})
    err = gql_error(resp)
    assert err["message"] != "Unexpected error.", err
    assert err["extensions"]["status"] in (400, 404), err


@pytest.mark.parametrize(
    ("tool", "args"),
    [
        ("query_graph", {"query": "MATCH (n) RETURN $p AS x LIMIT 1", "params": {"p": S}}),
        ("docs_search", {"query": "x", "path_prefix": S}),
        ("docs_fetch", {"ref": S}),
        ("get_related", {"uid": S}),
        ("resolve_xref", {"ref": "x", "base": S}),
        ("get_learning_path", {"target": S}),
    ],
)
def test_mcp_surrogates_are_tool_errors(col: Collection, tool: str, args: dict) -> None:
    res = call(col, tool, args)
    assert res.is_error, text(res)
    assert "internal" not in text(res).lower()


def test_content_api_surrogates_are_not_500(client: TestClient) -> None:
    for resp in (
        client.get("/nodes/%ED%A0%80"),
        client.get("/nodes/%ED%A0%80/related"),
        client.get("/fetch", params={"ref": "%ED%A0%80"}),
        client.get("/facets?uids=%ED%A0%80"),
        client.get("/xref?ref=%ED%A0%80&base=%ED%A0%80"),
        client.get("/learning-path?target=%ED%A0%80"),
    ):
        assert resp.status_code < 500, resp.text


# -- 10. a limit's variable default counts --------------------------------------------------
DEFAULTED = (
    'query($a: Int = 1000, $b: Int = 1000) { search(query: "index", limit: $a) '
    "{ results { node { related(depth: 4, limit: $b) { items { uid } } } } } }"
)


def test_variable_defaults_count_in_the_estimate() -> None:
    doc = parse(DEFAULTED)
    assert estimate_cost(doc, {}) == 1000 + 1000 + 1000 * 1000
    assert estimate_cost(doc, {"a": 2, "b": 3}) == 2 + 2 + 2 * 3
    assert estimate_cost(doc, {"a": None}) == 1000 + 1000 + 1000 * 1000  # null: not smaller
    two = parse(
        'query A($n: Int = 500) { related(uid: "u", limit: $n) { truncated } } '
        'query B($n: Int = 5) { related(uid: "u", limit: $n) { truncated } }'
    )
    assert estimate_cost(two, {}, "B") == 5 and estimate_cost(two, {}, "A") == 500


def test_a_defaulted_limit_is_refused_before_it_runs(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    related = counted(monkeypatch, ops, "related")
    err = gql_error(client.post("/graphql", json={"query": DEFAULTED}))
    assert err["extensions"]["code"] == "too_costly"
    assert err["extensions"]["details"]["bound"] == "expansions"
    assert related == []  # no field ran


# -- wall time holds under a crowd ------------------------------------------------------------
HEAVY_GQL = {
    "query": 'query($n: Int = 50) { search(query: "index documents", limit: $n) { results { '
    "node { related(depth: 4, limit: 50) { items { uid node { uid } } } } } } }"
}
HEAVY_GRAPH = {"query": "MATCH (a),(b),(c),(d) RETURN a.uid ORDER BY d.title LIMIT 1"}


def test_every_answer_comes_by_its_deadline_or_is_refused(
    col: Collection, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Forty heavy requests at once on one worker, their work held until every answer is in:
    each is answered by its deadline (queueing included) with too_costly, or refused at once
    with 503 and Retry-After, none waiting for the work to end."""
    held = Held()
    for name in ("search", "related", "query_graph"):
        monkeypatch.setattr(ops, name, held.around(getattr(ops, name)))
    app = create_app(col, workers=1, limits=Limits(wall_ms=200))

    async def run() -> list[httpx.Response]:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url=BASE_URL, timeout=60) as c:

            async def one(i: int) -> httpx.Response:
                if i % 2:
                    return await c.post("/graph/query", json=HEAVY_GRAPH)
                return await c.post("/graphql", json=HEAVY_GQL)

            try:
                answers = await asyncio.gather(*(one(i) for i in range(40)))
                assert not held.released.is_set()  # every answer came with the work held
                return answers
            finally:
                held.release()

    results = asyncio.run(run())
    assert held.wait_in(1)  # some work did start and was held
    for r in results:
        if r.status_code == 503:
            assert r.headers["retry-after"] == "1"
        elif r.status_code == 400:
            assert r.json()["error"]["code"] in ("too_costly", "timeout"), r.text[:200]
        else:
            assert r.status_code == 200, r.text[:200]


def test_a_busy_answer_says_when_to_retry() -> None:
    resp = _error_response(UnavailableError("busy"))
    assert resp.status_code == 503 and resp.headers["retry-after"] == "1"


# -- 13. the MCP transport's own refusals have the common shape ------------------------------
@pytest.mark.parametrize(
    ("headers", "status"),
    [
        ({"content-type": "text/plain"}, 400),
        ({"host": "evil.example"}, 421),
        ({"origin": "http://evil.example"}, 403),
    ],
)
def test_mcp_transport_refusals_are_json(
    client: TestClient, headers: dict[str, str], status: int
) -> None:
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping"})
    kw = {**MCP_HEADERS, "content-type": "application/json", **headers}
    resp = client.post("/mcp", content=body, headers=kw)
    err = http_error(resp, status)
    assert resp.headers["content-type"].startswith("application/json")
    assert "header" in err["message"].lower()
