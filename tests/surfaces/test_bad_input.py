"""Bad input on every surface: a clear error, in bounded time, and the service still answers.

Surfaces: the Python API, the CLI (``main()`` in this process), REST and GraphQL (FastAPI
TestClient) and MCP (the SDK's in-memory client). Inputs: empty, 1 MB and 10k-term queries,
invalid UTF-8 and binary bytes, control characters, NUL, unknown fields, negative / huge limit
and offset, an unknown uid, malformed JSON, wrong types, deep nesting, huge query_graph text.

A clear error is: Python, a ``CogitaveError``; REST, a 4xx in the ``{"error": {...}}`` shape;
GraphQL, ``errors`` with a readable message (not the masked "Unexpected error."), or a 4xx;
MCP, ``isError`` with the reason; CLI, exit status 2 and one line on stderr, no traceback.
"ok" cases (control characters are just text) must answer normally or with a clear error.
A refused call is refused before the costly work: no ranking lens runs, no graph walk or graph
query starts (:class:`Work` counts them); afterwards ``/health`` (or a good call) still answers.
Every case here once found a bug; they stay as regression tests.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from typing import Any

import anyio
import pytest
from fastapi.testclient import TestClient
from mcp import Client

from cogitave.collection import Collection
from cogitave.errors import CogitaveError
from cogitave.graph import cypher_exec, traverse
from cogitave.query import stages
from cogitave.query.types import SearchRequest
from cogitave.surfaces.http import create_app
from cogitave.surfaces.mcp import build_mcp
from tests.helpers import BASE_URL, docs_collection, run_cli

MB_QUERY = "a " * 500_000
TERMS_10K = " ".join(f"w{i}" for i in range(10_000))
SURROGATE = "install \udcff pip"  # what invalid UTF-8 becomes in a Python str
CONTROL = "install \x01\x02\x1b[2J pip \x7f"
JSON = {"content-type": "application/json"}
NESTED_MATCH = "MATCH (n) WHERE " + "(" * 900 + "1=1" + ")" * 900 + " RETURN n"
DEEP_LIST = "[" * 3000 + '"a"' + "]" * 3000
ALIASES = " ".join(f"a{i}: roots {{ current }}" for i in range(100))
GRAPH_Q = "query($q: String!) { queryGraph(query: $q) { rows } }"
FILTERS_Q = b'query($f: JSON) { search(query: \\"x\\", filters: $f) { root } }'


@pytest.fixture(scope="module")
def col(tmp_path_factory: pytest.TempPathFactory) -> Collection:
    return docs_collection(tmp_path_factory)


class Work:
    """The costly work done while counting: ranking lens stages run, graph walks and
    ``query_graph`` executions started."""

    def __init__(self, mp: pytest.MonkeyPatch) -> None:
        self.done: list[str] = []

        def counted(what: str, fn: Callable[..., Any]) -> Callable[..., Any]:
            def run(*a: Any, **kw: Any) -> Any:
                self.done.append(what)
                return fn(*a, **kw)

            return run

        for name in ("PLANNED", "PLAIN"):
            pipeline = getattr(stages, name)
            mp.setattr(stages, name, tuple((n, counted(n, f)) for n, f in pipeline))
        mp.setattr(traverse, "_walk_nodes", counted("walk", traverse._walk_nodes))
        mp.setattr(traverse, "_walk_edges", counted("walk", traverse._walk_edges))
        mp.setattr(cypher_exec.Executor, "run", counted("graph query", cypher_exec.Executor.run))

    def of(self, fn: Callable[[], Any]) -> tuple[Any, list[str]]:
        """``fn()`` and the costly work it did (lens stages, walks, graph queries)."""
        self.done.clear()
        out = fn()
        return out, [w for w in self.done if w in ("lenses", "walk", "graph query")]


@pytest.fixture
def work(monkeypatch: pytest.MonkeyPatch) -> Work:
    return Work(monkeypatch)


# -- Python API -------------------------------------------------------------------------------
def _search(**kw: Any) -> Callable[[Collection], Any]:
    return lambda col: col.search(SearchRequest(**kw))


def _from_dict(body: Any) -> Callable[[Collection], Any]:
    return lambda col: col.search(SearchRequest.from_dict(body))


PY_CASES: list[Any] = [
    ("empty", _search(query=""), "error"),
    ("blank", _search(query=" \t\n "), "error"),
    ("1MB", _search(query=MB_QUERY), "error"),
    ("10k_terms", _search(query=TERMS_10K), "error"),
    ("bytes", _search(query=b"\xff\xfe\x00"), "error"),
    pytest.param("invalid_utf8", _search(query=SURROGATE), "error"),
    ("control", _search(query=CONTROL), "ok"),
    ("nul", _search(query="a\x00b"), "error"),
    ("unknown_field", _from_dict({"query": "x", "colour": "red"}), "error"),
    ("limit_negative", _search(query="x", limit=-1), "error"),
    ("limit_zero", _search(query="x", limit=0), "error"),
    ("limit_huge", _search(query="x", limit=2**64), "error"),
    ("offset_negative", _search(query="x", offset=-1), "error"),
    ("offset_huge", _search(query="x", offset=10**12), "error"),
    ("limit_float", _search(query="x", limit=1.5), "error"),
    ("limit_str", _from_dict({"query": "x", "limit": "10"}), "error"),
    ("query_int", _from_dict({"query": 5}), "error"),
    ("body_list", _from_dict([1, 2]), "error"),
    ("filters_str", _from_dict({"query": "x", "filters": "kind"}), "error"),
    ("filters_nested", _from_dict({"query": "x", "filters": {"kind": [[["a"]]]}}), "error"),
    ("filter_unknown_dim", _from_dict({"query": "x", "filters": {"nope": "a"}}), "error"),
    ("dimensions_unknown", _search(query="x", dimensions=("nope",)), "error"),
    ("mode_unknown", _search(query="x", mode="nope"), "error"),
    ("root_unknown", _search(query="x", root="a" * 64), "error"),
    ("root_path", _search(query="x", root="../../etc/passwd"), "error"),
    pytest.param("root_int", _from_dict({"query": "x", "root": 5}), "error"),
    ("uid_unknown", lambda col: col.get("no/such#node"), "error"),
    ("related_unknown", lambda col: col.related("no/such#node"), "error"),
    ("related_depth", lambda col: col.related("index", depth=99), "error"),
    ("graph_huge", lambda col: col.query_graph("MATCH (n) RETURN n " + "x" * 1_000_000), "error"),
    (
        "graph_nesting",
        lambda col: col.query_graph(NESTED_MATCH),
        "error",
    ),
    ("graph_write", lambda col: col.query_graph("MATCH (n) DETACH DELETE n"), "error"),
    ("graph_params", lambda col: col.query_graph("MATCH (n) RETURN n", {"a": [[1]]}), "error"),
]


@pytest.mark.parametrize("name, call, expect", PY_CASES)
def test_python_api(
    col: Collection, work: Work, name: str, call: Callable[[Collection], Any], expect: str
):
    def attempt() -> str:
        try:
            call(col)
            return "ok"
        except CogitaveError as e:
            assert e.message and e.code and 400 <= e.http_status < 500, e.to_dict()
            return "error"

    outcome, done = work.of(attempt)
    assert (outcome == "ok") == bool(done), (name, done)  # a search ran, or nothing did
    assert outcome == expect or expect == "ok", f"{name}: expected an error"
    assert col.search("install with pip").uids  # still answers


# -- REST -------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def client(col: Collection) -> Iterator[TestClient]:
    app = create_app(col)
    with TestClient(app, base_url=BASE_URL, raise_server_exceptions=False) as c:
        yield c


def _nested(depth: int) -> bytes:
    return b"[" * depth + b"]" * depth


REST_CASES: list[Any] = [
    ("empty", "POST", "/search", {"json": {"query": ""}}, 400),
    ("1MB", "POST", "/search", {"json": {"query": MB_QUERY}}, 413),
    ("900KB", "POST", "/search", {"json": {"query": "a " * 450_000}}, 400),
    ("10k_terms", "POST", "/search", {"json": {"query": TERMS_10K}}, 400),
    ("invalid_utf8", "POST", "/search", {"content": b'{"query": "\xff\xfe"}'}, 400),
    ("binary", "POST", "/search", {"content": bytes(range(256))}, 400),
    pytest.param(
        "surrogate_escape",
        "POST",
        "/search",
        {"content": b'{"query": "install \\udcff"}'},
        400,
    ),
    ("control", "POST", "/search", {"json": {"query": CONTROL}}, 200),
    ("nul", "POST", "/search", {"json": {"query": "a\x00b"}}, 400),
    ("unknown_field", "POST", "/search", {"json": {"query": "x", "colour": 1}}, 400),
    ("limit_negative", "POST", "/search", {"json": {"query": "x", "limit": -1}}, 400),
    (
        "limit_2_64",
        "POST",
        "/search",
        {"content": b'{"query": "x", "limit": 18446744073709551616}'},
        400,
    ),
    ("limit_1e400", "POST", "/search", {"content": b'{"query": "x", "limit": 1e400}'}, 400),
    ("limit_nan", "POST", "/search", {"content": b'{"query": "x", "limit": NaN}'}, 400),
    ("offset_huge", "POST", "/search", {"json": {"query": "x", "offset": 10**15}}, 400),
    ("offset_negative", "POST", "/search", {"json": {"query": "x", "offset": -3}}, 400),
    ("malformed", "POST", "/search", {"content": b'{"query": '}, 400),
    ("empty_body", "POST", "/search", {"content": b""}, 400),
    ("body_list", "POST", "/search", {"json": ["query"]}, 400),
    ("query_int", "POST", "/search", {"json": {"query": 5}}, 400),
    ("query_null", "POST", "/search", {"json": {"query": None}}, 400),
    ("limit_str", "POST", "/search", {"json": {"query": "x", "limit": "10"}}, 400),
    ("explain_str", "POST", "/search", {"json": {"query": "x", "explain": "yes"}}, 400),
    ("filters_str", "POST", "/search", {"json": {"query": "x", "filters": "kind"}}, 400),
    pytest.param(
        "root_int",
        "POST",
        "/search",
        {"json": {"query": "x", "root": 5}},
        400,
    ),
    ("root_unknown", "POST", "/search", {"json": {"query": "x", "root": "f" * 64}}, 404),
    pytest.param(
        "deep_json",
        "POST",
        "/search",
        {"content": b'{"query": "x", "filters": ' + _nested(100_000) + b"}"},
        400,
    ),
    pytest.param(
        "int_5000_digits",
        "POST",
        "/search",
        {"content": b'{"query": "x", "limit": ' + b"9" * 5000 + b"}"},
        400,
    ),
    ("uid_unknown", "GET", "/nodes/no/such%23node", {}, 404),
    ("uid_nul", "GET", "/nodes/a%00b", {}, 404),
    ("uid_bad_utf8", "GET", "/nodes/%ff%fe", {}, 404),
    ("related_depth_negative", "GET", "/nodes/index/related?depth=-1", {}, 400),
    ("related_depth_huge", "GET", "/nodes/index/related?depth=" + "9" * 30, {}, 400),
    ("related_limit_str", "GET", "/nodes/index/related?limit=ten", {}, 400),
    ("related_label", "GET", "/nodes/index/related?labels=likes", {}, 400),
    ("xref_limit_huge", "GET", "/xref?ref=x&limit=" + "9" * 30, {}, 400),
    ("xref_blank", "GET", "/xref?ref=%20", {}, 400),
    ("graph_huge", "POST", "/graph/query", {"json": {"query": "MATCH " * 150_000}}, 400),
    ("graph_over_body_cap", "POST", "/graph/query", {"json": {"query": "x" * 1_100_000}}, 413),
    ("graph_write", "POST", "/graph/query", {"json": {"query": "CREATE (n) RETURN n"}}, 400),
    ("graph_unknown_field", "POST", "/graph/query", {"json": {"query": "x", "q": 1}}, 400),
    ("graph_params_list", "POST", "/graph/query", {"json": {"query": "x", "params": [1]}}, 400),
    pytest.param(
        "graph_params_deep",
        "POST",
        "/graph/query",
        {"content": b'{"query": "MATCH (n) RETURN n", "params": {"a": ' + _nested(5000) + b"}}"},
        400,
    ),
    ("unknown_route", "GET", "/nope", {}, 404),
    ("wrong_method", "GET", "/search", {}, 405),
]


@pytest.mark.parametrize("name, method, url, kw, status", REST_CASES)
def test_rest(
    client: TestClient, work: Work, name: str, method: str, url: str, kw: Any, status: int
):
    kw = {**kw, "headers": JSON} if "content" in kw else kw
    resp, done = work.of(lambda: client.request(method, url, **kw))
    assert resp.status_code == status, (name, resp.text[:300])
    assert (status < 400) == bool(done), (name, done)
    if status >= 400:
        err = resp.json()["error"]
        assert err["code"] and err["message"] and "Traceback" not in err["message"]
    assert client.get("/health").json()["status"] == "ok"


# -- GraphQL ----------------------------------------------------------------------------------
SEARCH_Q = "query($q: String!) { search(query: $q) { root } }"
GQL_CASES: list[Any] = [
    ("empty", {"json": {"query": '{ search(query: "") { root } }'}}, "query"),
    ("no_document", {"json": {"query": ""}}, 400),
    ("1MB", {"json": {"query": SEARCH_Q, "variables": {"q": MB_QUERY}}}, 413),
    ("10k_terms", {"json": {"query": SEARCH_Q, "variables": {"q": TERMS_10K}}}, "query"),
    ("nul", {"json": {"query": SEARCH_Q, "variables": {"q": "a\x00b"}}}, "query"),
    ("control", {"json": {"query": SEARCH_Q, "variables": {"q": CONTROL}}}, 200),
    pytest.param(
        "surrogate_var",
        {"content": b'{"query": "' + SEARCH_Q.encode() + b'", "variables": {"q": "\\udcff"}}'},
        "query",
    ),
    pytest.param(
        "invalid_utf8",
        {"content": b'{"query": "{ roots { current } }\xff"}'},
        400,
    ),
    ("binary", {"content": bytes(range(256))}, 400),
    ("malformed", {"content": b'{"query": '}, 400),
    ("unknown_argument", {"json": {"query": '{ search(query: "x", colour: 1) { root } }'}}, "gql"),
    ("unknown_field", {"json": {"query": '{ search(query: "x") { nope } }'}}, "gql"),
    ("limit_str", {"json": {"query": '{ search(query: "x", limit: "ten") { root } }'}}, "gql"),
    ("limit_negative", {"json": {"query": '{ search(query: "x", limit: -1) { root } }'}}, "query"),
    (
        "limit_huge",
        {"json": {"query": '{ search(query: "x", limit: 9999999999) { root } }'}},
        "gql",
    ),
    (
        "offset_huge",
        {"json": {"query": '{ search(query: "x", offset: 200000) { root } }'}},
        "query",
    ),
    ("uid_unknown", {"json": {"query": '{ node(uid: "no/such") { uid } }'}}, "not_found"),
    ("variables_list", {"json": {"query": "{ roots { current } }", "variables": [1]}}, 400),
    ("query_int", {"json": {"query": 5}}, 400),
    ("mutation", {"json": {"query": "mutation { x }"}}, "gql"),
    (
        "deep_selection",
        {
            "json": {
                "query": '{ node(uid: "index") { '
                + "related { items { node { " * 40
                + "uid"
                + " } } }" * 40
                + " } }"
            }
        },
        "depth",
    ),
    (
        "deep_list_literal",
        {"json": {"query": '{ search(query: "x", dimensions: ' + DEEP_LIST + ") { root } }"}},
        "gql",
    ),
    ("many_tokens", {"json": {"query": "{ roots { " + "current " * 3000 + "} }"}}, "token"),
    ("many_aliases", {"json": {"query": "{ " + ALIASES + " }"}}, "alias"),
    (
        "fragment_cycle",
        {"json": {"query": "{ ...A } fragment A on Query { ...B } fragment B on Query { ...A }"}},
        "gql",
    ),
    (
        "graph_huge",
        {"json": {"query": GRAPH_Q, "variables": {"q": "MATCH " * 100_000}}},
        "syntax",
    ),
    pytest.param(
        "deep_json_variables",
        {"content": b'{"query": "%s", "variables": {"f": %s}}' % (FILTERS_Q, _nested(3000))},
        400,
    ),
]


@pytest.mark.parametrize("name, kw, expect", GQL_CASES)
def test_graphql(client: TestClient, work: Work, name: str, kw: Any, expect: int | str) -> None:
    kw = {**kw, "headers": JSON} if "content" in kw else kw
    resp, done = work.of(lambda: client.post("/graphql", **kw))
    assert (expect == 200) == bool(done), (name, done)
    if isinstance(expect, int):
        assert resp.status_code == expect, (name, resp.text[:300])
    else:
        assert resp.status_code == 200, (name, resp.text[:300])
        body = resp.json()
        (err, *_) = body["errors"]
        assert err["message"] and err["message"] != "Unexpected error.", err
        if expect != "gql":  # an engine error carries its code; a GraphQL one names the limit
            got = err.get("extensions", {}).get("code") or err["message"].lower()
            assert expect in got, err
    assert client.get("/health").json()["status"] == "ok"


# -- MCP --------------------------------------------------------------------------------------
MCP_CASES: list[Any] = [
    ("docs_search", {"query": ""}, "query"),
    ("docs_search", {"query": MB_QUERY}, "query"),
    ("docs_search", {"query": TERMS_10K}, "query"),
    ("docs_search", {"query": SURROGATE}, "query"),
    ("docs_search", {"query": "a\x00b"}, "NUL"),
    ("docs_search", {"query": "x", "colour": "red"}, "colour"),
    ("docs_search", {"query": "x", "limit": -1}, "limit"),
    ("docs_search", {"query": "x", "limit": 10**30}, "limit"),
    ("docs_search", {"query": "x", "limit": "ten"}, "limit"),
    ("docs_search", {"query": 5}, "query"),
    ("docs_search", {"query": "x", "dimensions": "title"}, "dimensions"),
    ("docs_search", {"query": "x", "filters": {"kind": [[["a"]]]}}, "filters"),
    ("docs_search", {}, "query"),
    ("no_such_tool", {"query": "x"}, "no_such_tool"),
    ("get_related", {"uid": "no/such#node"}, "not_found"),
    ("get_related", {"uid": "index", "depth": -1}, "depth"),
    ("get_related", {"uid": "index", "limit": 10**20}, "limit"),
    ("get_related", {"uid": "\udcff"}, "uid"),
    ("resolve_xref", {"ref": "x", "limit": -3}, "limit"),
    ("get_learning_path", {"target": "a\x00"}, "bad_input"),
    ("code_sample_search", {"query": "x", "language": 5}, "language"),
    ("query_graph", {"query": "MATCH (n) RETURN n " + "x" * 1_000_000}, "syntax"),
    ("query_graph", {"query": NESTED_MATCH}, "syntax"),
    ("query_graph", {"query": "MATCH (n) RETURN n", "params": {"a": [[[1]]]}}, "param"),
    ("query_graph", {"query": "MATCH (n) RETURN n", "params": "x"}, "params"),
]


def test_mcp(col: Collection, work: Work) -> None:
    """Every bad call is ``isError`` with the reason, refused before the costly work; a good
    call answers after each."""

    async def run() -> list[tuple[Any, list[str], bool]]:
        out = []
        async with Client(build_mcp(col)) as client:
            for name, args, _ in MCP_CASES:
                work.done.clear()
                res = await client.call_tool(name, args)
                done = [w for w in work.done if w in ("lenses", "walk", "graph query")]
                good = await client.call_tool("docs_search", {"query": "install"})
                out.append((res, done, not good.is_error))
        return out

    for (name, args, reason), (res, done, alive) in zip(MCP_CASES, anyio.run(run), strict=True):
        text = "".join(getattr(c, "text", "") for c in res.content)
        assert res.is_error, (name, str(args)[:80], text[:200])
        assert reason in text, (name, str(args)[:80], text[:300])
        assert "Traceback" not in text
        assert not done, (name, done)
        assert alive


# -- CLI --------------------------------------------------------------------------------------
CLI_CASES: list[Any] = [
    ("empty", ["search", ""], 2),
    ("100KB", ["search", "a " * 50_000], 2),  # one argv string is capped at 128 KiB by Linux
    ("10k_terms", ["search", TERMS_10K], 2),
    pytest.param("invalid_utf8", [b"search", b"install \xff\xfe"], 2),
    ("control", ["search", CONTROL], 0),
    ("limit_negative", ["search", "x", "--limit", "-1"], 2),
    ("limit_huge", ["search", "x", "--limit", "9" * 30], 2),
    ("offset_huge", ["search", "x", "--offset", "99999999"], 2),
    ("offset_negative", ["search", "x", "--offset", "-5"], 2),
    ("root_unknown", ["search", "x", "--root", "a" * 64], 2),
    ("root_path", ["search", "x", "--root", "../../etc"], 2),
    ("mode_unknown", ["search", "x", "--mode", "nope"], 2),
    ("malformed_jsonl", ["index", "{bad}", "-q"], 2),
    pytest.param("unknown_option", ["search", "x", "--colour", "r"], 2),
    pytest.param("limit_not_int", ["search", "x", "--limit", "ten"], 2),
    pytest.param("unknown_command", ["nope"], 2),
]


@pytest.fixture(scope="module")
def cli_runs(col: Collection, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Every CLI case, in this process one after another: name -> (returncode, stderr,
    the costly work it did). Bytes arguments are decoded as Python decodes a process's
    argv."""
    tmp = tmp_path_factory.mktemp("cli-bad")
    bad = tmp / "bad.jsonl"
    bad.write_bytes(b'{"uid": "a", "title": \n\xff\xfe\n')
    path = str(col.store.path)

    def argv(args: list[Any]) -> list[str]:
        args = [os.fsdecode(a) for a in args]  # undecodable bytes -> lone surrogates
        args = [str(bad) if a == "{bad}" else a for a in args]
        target = str(tmp / "new") if args[0] == "index" else path
        if args[0] in ("search", "index"):
            args = [*args, "--collection", target]
        return args

    runs = {}
    with pytest.MonkeyPatch.context() as mp:
        work = Work(mp)
        for case in CLI_CASES:
            name, args, _ = case.values if hasattr(case, "values") else case
            res, done = work.of(lambda a=args: run_cli(*argv(a), ok=False))
            runs[name] = (res.returncode, res.stderr, done)
    return runs


@pytest.mark.parametrize("name, args, code", CLI_CASES)
def test_cli(cli_runs: dict[str, Any], name: str, args: list[Any], code: int) -> None:
    rc, stderr, done = cli_runs[name]
    assert "Traceback" not in stderr, (name, stderr[-500:])
    assert rc == code, (name, rc, stderr[-300:])
    if code:
        assert stderr.count("\n") == 1 and stderr.startswith("error["), (name, stderr)
    assert (code == 0) == bool(done), (name, done)


def test_cli_still_answers_after_bad_input(col: Collection, cli_runs: dict[str, Any]) -> None:
    p = run_cli(
        "search", "install with pip", "--json", "--collection", str(col.store.path), ok=False
    )
    assert p.returncode == 0 and '"results"' in p.stdout


def test_nul_in_argv_is_refused_by_the_os() -> None:
    """Why the CLI matrix has no NUL case."""
    with pytest.raises(ValueError, match="null"):
        subprocess.run([sys.executable, "-c", "pass", "a\x00b"], check=False)
