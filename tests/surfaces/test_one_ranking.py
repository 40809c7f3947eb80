"""One ranking: every surface asks the same service operation and gets the same pages in the
same order, on a plain and on a sharded collection.

The reference is the service operation itself (``ops.search``); then MCP ``docs_search``,
REST JSON and Markdown, GraphQL ``search`` and ``searchMarkdown``, the CLI's ``--json`` and
``--format markdown``, each with only the question and the limit (every default is the
operation's). The same ranking, ids and scores, comes back while other processes and threads
burn the CPU: no stage reads a clock.
"""

from __future__ import annotations

import json
import multiprocessing as mp
import re
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from multiprocessing.synchronize import Event as MpEvent
from typing import Any

import pytest
from fastapi.testclient import TestClient

from cogitave.collection import Collection
from cogitave.config import Settings
from cogitave.nodes import Edge, Node
from cogitave.query.types import SearchRequest
from cogitave.reader import Reader
from cogitave.schema import Dimension, Schema
from cogitave.service import ops
from cogitave.service.args import SearchArgs
from cogitave.surfaces.http import create_app
from tests.helpers import (
    BASE_URL,
    docs_collection,
    mcp_calls,
    run_cli,
    sharded,
    sharded_docs_collection,
)

QUERIES = (
    "install with pip",
    "reciprocal rank fusion",
    "configuraton file tokenizer",  # misspelled on purpose
    "index a folder of documents",
    "how do I search the index",
    "print the score of each hit",
)
LIMIT = 10
TOKENS = 10_000  # every hit shown in the Markdown answers
GQL = """query($q: String!, $n: Int!, $t: Int!) {
  search(query: $q, limit: $n) { results { uid } }
  searchMarkdown(query: $q, limit: $n, maxTokens: $t) { markdown results { uid } }
}"""


@pytest.fixture(scope="module")
def col(tmp_path_factory: pytest.TempPathFactory) -> Collection:
    return docs_collection(tmp_path_factory)


def where_shown(markdown: str) -> list[str]:
    """The URL (or path, or uid) line under each hit's heading of a Markdown answer."""
    return re.findall(r"^## .*\n(\S+)$", markdown, flags=re.M)


def surfaces(reader: Reader, path: str) -> dict[str, dict[str, list[str]]]:
    """Per surface, per question: the uids it ranked (or the places a Markdown answer
    shows)."""
    got: dict[str, dict[str, list[str]]] = {}

    def put(surface: str, q: str, items: list[str]) -> None:
        got.setdefault(surface, {})[q] = items

    answers = mcp_calls(reader, *(("docs_search", {"query": q, "limit": LIMIT}) for q in QUERIES))
    for q, res in zip(QUERIES, answers, strict=True):
        assert not res.is_error, res.content
        put("mcp", q, [r["uid"] for r in res.structured_content["results"]])
    with TestClient(create_app(reader), base_url=BASE_URL) as client:
        for q in QUERIES:
            body = {"query": q, "limit": LIMIT}
            put("rest", q, [r["uid"] for r in client.post("/search", json=body).json()["results"]])
            md = client.post(
                "/search", params={"format": "markdown", "max_tokens": TOKENS}, json=body
            )
            put("rest markdown", q, where_shown(md.text))
            gql = client.post(
                "/graphql", json={"query": GQL, "variables": {"q": q, "n": LIMIT, "t": TOKENS}}
            ).json()
            assert "errors" not in gql, gql
            put("graphql", q, [r["uid"] for r in gql["data"]["search"]["results"]])
            sm = gql["data"]["searchMarkdown"]
            put("graphql markdown", q, where_shown(sm["markdown"]))
            put("graphql markdown hits", q, [r["uid"] for r in sm["results"]])
    for q in QUERIES:
        args = ("search", q, "--collection", path, "--limit", str(LIMIT))
        put("cli", q, [r["uid"] for r in json.loads(run_cli(*args, "--json").stdout)["results"]])
        md = run_cli(*args, "--format", "markdown", "--max-tokens", str(TOKENS)).stdout
        put("cli markdown", q, where_shown(md))
    return got


@pytest.mark.parametrize("kind", ["plain", "sharded"])
def test_every_surface_returns_the_same_pages(
    kind: str, col: Collection, tmp_path_factory: pytest.TempPathFactory
) -> None:
    if kind == "plain":
        reader: Reader = col
        path = str(col.store.path)
    else:
        where = sharded_docs_collection(tmp_path_factory)
        reader, path = sharded(where), str(where)
    reference = {q: ops.search(reader, SearchArgs(q, limit=LIMIT)) for q in QUERIES}
    uids = {q: r.uids for q, r in reference.items()}
    shown = {q: [h.url or h.path or h.uid for h in r.results] for q, r in reference.items()}
    assert all(uids.values())
    got = surfaces(reader, path)
    for surface, ranked in got.items():
        want = shown if "markdown" in surface and "hits" not in surface else uids
        for q in QUERIES:
            assert ranked[q] == want[q], (surface, q)
    # one hit per page by default: no page is listed twice
    for q, r in reference.items():
        pages = [h.path or h.uid.split("#")[0] for h in r.results]
        assert len(pages) == len(set(pages)), q


def test_a_sharded_collection_ranks_as_the_plain_one(
    col: Collection, tmp_path_factory: pytest.TempPathFactory
) -> None:
    view = sharded(sharded_docs_collection(tmp_path_factory))
    for q in QUERIES:
        for mode in ("bm25", "hybrid", "planned"):
            args = SearchArgs(q, limit=LIMIT, mode=mode)  # type: ignore[arg-type]
            assert ops.search(view, args).uids == ops.search(col, args).uids, (q, mode)


def test_the_same_ranking_with_filters_and_offset(col: Collection) -> None:
    body: dict[str, Any] = {"query": "python code", "limit": 3, "offset": 1, "mode": "bm25"}
    body["filters"] = {"kind": ["code_sample", "section"]}
    python = col.search(SearchRequest.from_dict({**body, "group_by_page": True})).uids
    with TestClient(create_app(col), base_url=BASE_URL) as client:
        rest = [r["uid"] for r in client.post("/search", json=body).json()["results"]]
    assert rest == python


BURNERS = 2  # busy processes: the machine's two cores are both taken


def _burn(stop: MpEvent) -> None:
    """Spin until told to stop."""
    n = 0
    while not stop.is_set():
        for _ in range(10_000):
            n += 1


@pytest.fixture
def busy_cpu() -> Iterator[None]:
    """``BURNERS`` processes spinning on the CPU, stopped (and reaped) at teardown."""
    ctx = mp.get_context("spawn")
    stop = ctx.Event()
    procs = [ctx.Process(target=_burn, args=(stop,), daemon=True) for _ in range(BURNERS)]
    for p in procs:
        p.start()
    try:
        yield
    finally:
        stop.set()
        for p in procs:
            p.join(10)
            if p.is_alive():
                p.kill()
                p.join()


def _ranking(reader: Reader, q: str) -> tuple[list[tuple[str, float]], Any]:
    res = ops.search(reader, SearchArgs(q, limit=LIMIT))
    return [(h.uid, h.score) for h in res.results], res.diagnostics.get("rerank")


def test_the_same_ranking_at_any_load(col: Collection, busy_cpu: None) -> None:
    """A quiet run against the same searches while two processes and two more threads
    spin: ids and scores identical, and the graph rerank did the same work."""
    quiet = {q: _ranking(col, q) for q in QUERIES}
    assert any(r and r.get("applied") for _, r in quiet.values())  # the rerank runs here
    stop = threading.Event()

    def spin() -> None:
        while not stop.is_set():
            sum(range(10_000))

    spinners = [threading.Thread(target=spin, daemon=True) for _ in range(2)]
    for t in spinners:
        t.start()
    try:
        with ThreadPoolExecutor(2) as pool:
            loaded = list(pool.map(lambda q: (q, _ranking(col, q)), QUERIES * 3))
    finally:
        stop.set()
        for t in spinners:
            t.join()
    for q, got in loaded:
        assert got == quiet[q], q


def _hubs(path: Any) -> Collection:
    """40 pages answering "cache tuning", each linked to the next, and 1000 other pages each
    linking to all 40: the graph rerank's walks are long (a hub of 1000 links per candidate)."""
    pages = [
        Node(
            f"p{i:02d}",
            "page",
            {"title": f"cache tuning {i}", "body": "tuning the cache size " * (1 + i % 5)},
            edges=(Edge("xref", f"p{(i + 1) % 40:02d}"),),
        )
        for i in range(40)
    ]
    leaves = [
        Node(
            f"leaf{j:04d}",
            "page",
            {"title": f"leaf {j}", "body": "unrelated text"},
            edges=tuple(Edge("xref", f"p{i:02d}") for i in range(40)),
        )
        for j in range(1000)
    ]
    schema = Schema((Dimension("title", "semantic"), Dimension("body", "semantic")))
    hubs = Collection.create(path, schema, encoder=None, settings=Settings(lexicon="none"))
    hubs.add([*pages, *leaves])
    hubs.publish()
    return hubs


def test_the_same_ranking_at_any_load_around_hubs(
    tmp_path_factory: pytest.TempPathFactory, busy_cpu: None
) -> None:
    """The rerank walking past hubs (cut by its work cap) while two processes spin: the
    same ids, scores and rerank on every run."""
    hubs = _hubs(tmp_path_factory.mktemp("hubs") / "col")
    req = SearchRequest(query="cache tuning", limit=30)
    runs = []
    for _ in range(8):
        res = hubs.search(req)
        runs.append(([(h.uid, h.score) for h in res.results], res.diagnostics["rerank"]))
    assert runs[0][1]["applied"] and runs[0][1]["moves"]
    assert all(run == runs[0] for run in runs), [r[1].get("moves") for r in runs]
