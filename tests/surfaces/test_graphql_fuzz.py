"""Random GraphQL documents within the documented limits (depth 8, 20 aliases, 2000 tokens,
each field's own bounds) do bounded work (the rows the engine fetched for them, counted) with
bounded output: either data or coded errors (``too_costly`` when the nested limits multiply),
never a crash."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cogitave.collection import Collection
from cogitave.service import ops
from cogitave.surfaces.cost import DEFAULT_LIMITS
from cogitave.surfaces.graphql import MAX_ALIASES, MAX_DEPTH
from cogitave.surfaces.http import create_app
from tests.helpers import BASE_URL, docs_collection

# Rows one document may have the engine fetch: the expansion bound, plus what the fields
# already running when it is passed fetch (each at most 1000 rows, at most one per alias).
MAX_FETCHED = DEFAULT_LIMITS.expansions + MAX_ALIASES * 1000
UIDS = ["tutorial/query", "tutorial/install", "tutorial/install#using-pip", "index"]
GRAPH_QUERIES = [
    "MATCH (n) RETURN n.uid LIMIT 1000",
    "MATCH (a)-[*1..4]-(b) RETURN a.uid, b.uid LIMIT 1000",
    "MATCH (a),(b),(c) RETURN a.uid ORDER BY c.title LIMIT 1000",
]
KNOWN_CODES = {
    "too_costly",
    "query",
    "not_found",
    "depth",
    "limit",
    "timeout",
    "label",
    "syntax",
    "bad_input",
}
FUZZ = settings(
    max_examples=30,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)

limits = st.integers(1, 1000)
depths = st.integers(1, 4)


def node_fields(depth: int) -> st.SearchStrategy[str]:
    """A Node selection using at most ``depth`` more levels of the depth limit."""
    leaf = st.just("uid kind")
    if depth < 4:  # related { items { node { ... } } } takes four levels
        return leaf
    related = st.builds(
        lambda d, n, inner: (
            f"uid related(depth: {d}, limit: {n}) {{ items {{ uid node {{ {inner} }} }} }}"
        ),
        depths,
        limits,
        st.deferred(lambda: node_fields(depth - 3)),
    )
    return st.one_of(leaf, related)


def top_field(i: int) -> st.SearchStrategy[str]:
    inner = node_fields(MAX_DEPTH - 3)  # field, results/items, node: three levels
    return st.one_of(
        st.builds(
            lambda n, sel: (
                f'a{i}: search(query: "index documents", limit: {n}) '
                f"{{ results {{ uid node {{ {sel} }} }} }}"
            ),
            limits,
            inner,
        ),
        st.builds(
            lambda u, d, n, sel: (
                f'a{i}: related(uid: "{u}", depth: {d}, limit: {n}) '
                f"{{ items {{ uid node {{ {sel} }} }} }}"
            ),
            st.sampled_from(UIDS),
            depths,
            limits,
            inner,
        ),
        st.builds(
            lambda q: f'a{i}: queryGraph(query: "{q}") {{ rows truncated }}',
            st.sampled_from(GRAPH_QUERIES),
        ),
        st.builds(
            lambda n: f'a{i}: resolveXref(ref: "install", limit: {n}) {{ candidates {{ uid }} }}',
            st.integers(1, 50),
        ),
        st.builds(lambda u: f'a{i}: node(uid: "{u}") {{ uid content }}', st.sampled_from(UIDS)),
    )


documents = st.integers(1, MAX_ALIASES).flatmap(
    lambda k: st.tuples(*(top_field(i) for i in range(k))).map(
        lambda fs: "{ " + " ".join(fs) + " }"
    )
)


FETCHED: list[int] = []


def _fetching(real: Any) -> Any:
    def run(*a: Any, **kw: Any) -> Any:
        answer = real(*a, **kw)
        rows = [getattr(answer, f, None) for f in ("results", "items", "candidates", "rows")]
        FETCHED.append(sum(len(r) for r in rows if r is not None))
        return answer

    return run


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    col: Collection = docs_collection(tmp_path_factory)
    with pytest.MonkeyPatch.context() as mp:
        for name in ("search", "related", "resolve_xref", "query_graph"):
            mp.setattr(ops, name, _fetching(getattr(ops, name)))
        with TestClient(create_app(col), base_url=BASE_URL) as c:
            yield c


@FUZZ
@given(doc=documents)
def test_random_documents_are_bounded(client: TestClient, doc: str) -> None:
    FETCHED.clear()
    resp = client.post("/graphql", json={"query": doc})
    assert sum(FETCHED) <= MAX_FETCHED, (sum(FETCHED), doc)
    assert len(resp.content) <= DEFAULT_LIMITS.response_bytes + 10_000, len(resp.content)
    assert resp.status_code == 200, resp.text[:300]
    body = resp.json()
    for err in body.get("errors") or ():
        code = (err.get("extensions") or {}).get("code")
        assert code in KNOWN_CODES, (err, doc)
