"""GraphQL: the same operations as REST, coded errors, and depth / alias / token limits."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient

from cogitave.collection import Collection
from cogitave.service import ops
from cogitave.service.args import SearchArgs
from cogitave.surfaces.graphql import MAX_ALIASES, MAX_DEPTH
from cogitave.surfaces.http import create_app
from tests.helpers import BASE_URL, docs_collection


@pytest.fixture(scope="module")
def col(tmp_path_factory: pytest.TempPathFactory) -> Collection:
    return docs_collection(tmp_path_factory)


@pytest.fixture(scope="module")
def client(col: Collection) -> Iterator[TestClient]:
    with TestClient(create_app(col), base_url=BASE_URL) as c:
        yield c


def gql(client: TestClient, query: str, **variables: Any) -> dict[str, Any]:
    resp = client.post("/graphql", json={"query": query, "variables": variables})
    assert resp.status_code in (200, 400), resp.text
    return resp.json()


def data(client: TestClient, query: str, **variables: Any) -> dict[str, Any]:
    body = gql(client, query, **variables)
    assert "errors" not in body, body
    return body["data"]


def errors(client: TestClient, query: str, **variables: Any) -> list[dict[str, Any]]:
    body = gql(client, query, **variables)
    assert body.get("errors"), body
    return body["errors"]


def test_search(client: TestClient, col: Collection) -> None:
    d = data(
        client,
        "query($q: String!) { search(query: $q, limit: 5) "
        "{ root diagnostics results "
        "{ uid rank score kind title snippet lenses url path breadcrumb } } }",
        q="reciprocal rank fusion",
    )["search"]
    want = ops.search(col, SearchArgs("reciprocal rank fusion", limit=5)).to_dict()
    fields = ("uid", "rank", "score", "kind", "title", "snippet", "lenses", "url", "path")
    assert d["results"] == [
        {**{k: h[k] for k in fields}, "breadcrumb": h["breadcrumb"]} for h in want["results"]
    ]
    assert d["root"] == col.root and d["diagnostics"]["root"] == col.root


def test_search_filters_and_nested_node(client: TestClient) -> None:
    d = data(
        client,
        '{ search(query: "python", mode: "bm25", filters: {kind: "code_sample"}, limit: 2) '
        "{ results { uid kind node { code link edges { label dst } } } } }",
    )["search"]
    for hit in d["results"]:
        assert hit["kind"] == "code_sample"
        assert hit["node"]["code"] and hit["node"]["link"].startswith("/nodes/")


def test_node_and_related(client: TestClient) -> None:
    d = data(
        client,
        '{ node(uid: "tutorial/query") { uid kind meta content '
        'related(labels: ["partOf"], direction: "in") { truncated items { uid depth '
        "path { label direction uid } node { kind code } } } } }",
    )["node"]
    assert d["kind"] == "page" and d["meta"]["url"] == "/tutorial/query/"
    assert [i["uid"] for i in d["related"]["items"]] == ["tutorial/query#ranking"]
    r = data(
        client,
        '{ related(uid: "tutorial/query#ranking", labels: ["implementedBy"], direction: "out") '
        "{ items { uid node { code } } } }",
    )["related"]
    assert {i["uid"] for i in r["items"]} == {"tutorial/query#code-1", "tutorial/query#code-2"}


def test_learning_path_xref_query_graph_roots(client: TestClient, col: Collection) -> None:
    d = data(
        client,
        '{ learningPath(target: "tutorial/query") { target truncated steps { uid why } } '
        'resolveXref(ref: "install.md#using-pip") { exact candidates { uid evidence } } '
        'queryGraph(query: "MATCH (s:skill) RETURN s.uid") { columns rows truncated elapsedMs }'
        " roots { current roots { id head } } }",
    )
    steps = [s["uid"] for s in d["learningPath"]["steps"]]
    assert steps == ["tutorial/install", "tutorial/first-steps", "tutorial/query"]
    assert "tutorial/install#using-pip" in [c["uid"] for c in d["resolveXref"]["candidates"]]
    assert d["queryGraph"]["rows"] == [["skill:indexing"]]
    assert d["roots"]["current"] == col.root


def test_query_graph_params(client: TestClient) -> None:
    d = data(
        client,
        'query($p: JSON) { queryGraph(query: "MATCH (n {uid: $uid}) RETURN n.kind", '
        "params: $p) { rows } }",
        p={"uid": "tutorial/install#code-1"},
    )
    assert d["queryGraph"]["rows"] == [["code_sample"]]


@pytest.mark.parametrize(
    "query, code",
    [
        ('{ search(query: "  ") { root } }', "query"),
        ('{ search(query: "x", limit: 0) { root } }', "query"),
        ('{ search(query: "x", limit: 100000) { root } }', "query"),
        ('{ search(query: "x", mode: "magic") { root } }', "query"),
        ('{ node(uid: "no/such") { uid } }', "not_found"),
        ('{ related(uid: "tutorial/query", depth: 9) { truncated } }', "depth"),
        ('{ related(uid: "tutorial/query", labels: ["likes"]) { truncated } }', "label"),
        ('{ learningPath(target: "zzz-unknown") { target } }', "not_found"),
        ('{ queryGraph(query: "MATCH (n) DETACH DELETE n") { rows } }', "read_only"),
        ('{ queryGraph(query: "MATCH (a)-[*]->(b) RETURN b") { rows } }', "unbounded"),
    ],
)
def test_engine_errors_carry_their_code(client: TestClient, query: str, code: str) -> None:
    (err,) = errors(client, query)
    assert err["extensions"]["code"] == code
    assert err["extensions"]["status"] in (400, 404)
    assert err["message"]


def test_wrong_types_and_unknown_fields_are_errors(client: TestClient) -> None:
    assert errors(client, '{ search(query: "x", limit: "ten") { root } }')
    assert errors(client, "{ search { root } }")
    assert errors(client, '{ search(query: "x", colour: "red") { root } }')
    assert errors(client, '{ search(query: "x") { nope } }')


def test_depth_limit(client: TestClient) -> None:
    inner = "uid"
    for _ in range(MAX_DEPTH):
        inner = f"related {{ items {{ node {{ {inner} }} }} }}"
    errs = errors(client, f'{{ node(uid: "tutorial/query") {{ {inner} }} }}')
    assert "depth" in errs[0]["message"]
    shallow = '{ node(uid: "tutorial/query") { related { items { node { uid } } } } }'
    assert data(client, shallow)["node"]["related"]["items"]


def test_alias_and_token_limits(client: TestClient) -> None:
    many = " ".join(f'a{i}: node(uid: "index") {{ uid }}' for i in range(MAX_ALIASES + 5))
    assert "alias" in errors(client, f"{{ {many} }}")[0]["message"].lower()
    huge = " ".join("uid" for _ in range(3000))
    assert "token" in errors(client, f'{{ node(uid: "index") {{ {huge} }} }}')[0]["message"]
