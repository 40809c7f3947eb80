"""One version rule on every surface: each way a project pins a library (exact, a nearer
older version, older than every version held, a range answered by an older version, no pin)
gets the same version, said the same way, from the Python API, the CLI, REST, GraphQL and
MCP; a pin older than every version held is the same error everywhere; ``--project`` that
reads nothing says so."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from cogitave.distributed import hashed
from cogitave.errors import NotFoundError
from cogitave.libraries.collection import LibraryCollection
from cogitave.nodes import Node
from cogitave.service import ops
from cogitave.service.args import SearchArgs
from cogitave.surfaces.http import create_app
from tests.conftest import SCHEMA, make_nodes
from tests.helpers import BASE_URL, mcp_call, mcp_text, run_cli

QUERY = "alpha gamma"
HELD = {"click": ("8.1.7", "8.3.0"), "flask": ("2.2.2",), "jinja2": ("3.1.2",)}


def pages(seed: int) -> list[Node]:
    return [
        replace(node, uid=f"guide/p{i:03d}", kind="page", meta={"url": f"/guide/p{i:03d}/"})
        for i, node in enumerate(make_nodes(20, seed=seed))
    ]


@pytest.fixture(scope="module")
def deps(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("versions") / "deps"
    lib = LibraryCollection.create(path, encoder=hashed.register())
    seed = 0
    for name, versions in HELD.items():
        for v in versions:
            seed += 1
            lib.sync_library(name, v, pages(seed), schema=SCHEMA, source=f"/src/{name}-{v}",
                             commit=f"{seed:02d}" * 20)  # fmt: skip
    return path


@dataclass(frozen=True)
class Case:
    """A project's requirement, the library searched, and what every surface must say."""

    requirement: str | None
    library: str
    ref: str | None  # the version read (None: the error naming the versions held)
    match: str | None = None
    wanted: str | None = None


CASES = {
    "exact": Case("click==8.1.7", "click", "click@8.1.7", "exact", "8.1.7"),
    "nearer older": Case("click==8.2.0", "click", "click@8.1.7", "nearest", "8.2.0"),
    "older than all held": Case("click==8.0.0", "click", None, wanted="8.0.0"),
    "range answered by older": Case("Flask~=3.0", "flask", "flask@2.2.2", "nearest", "~=3.0"),
    "unpinned": Case(None, "click", "click@8.3.0", "default", None),
}


def project(tmp: Path, case: Case) -> Path | None:
    if case.requirement is None:
        return None
    folder = tmp / "app"
    folder.mkdir(exist_ok=True)
    (folder / "requirements.txt").write_text(f"{case.requirement}\njinja2==3.1.2\n")
    return folder


def reader(deps: Path, folder: Path | None) -> LibraryCollection:
    lib = LibraryCollection.open(deps)
    if folder is not None:
        lib.use_project(folder)
    return lib


def python(deps: Path, folder: Path | None, case: Case) -> list[dict[str, Any]] | str:
    try:
        answer = ops.docs_search(reader(deps, folder), SearchArgs(QUERY, library=case.library))
    except NotFoundError as e:
        return e.code + ": " + e.message
    return [h.to_dict() for h in answer.results]


def cli(deps: Path, folder: Path | None, case: Case) -> list[dict[str, Any]] | str:
    more = ("--project", str(folder)) if folder else ()
    res = run_cli("search", QUERY, "-c", str(deps), "--library", case.library, "--json", *more,
                  ok=False)  # fmt: skip
    if res.returncode:
        assert "click: not read unless named (none: " in res.stderr
        last = res.stderr.splitlines()[-1]
        assert last.startswith("error[not_found]: ") and res.stderr.endswith(last + "\n")
        return "not_found: " + last.split(": ", 1)[1]
    hits = json.loads(res.stdout)["results"]
    return [{"library": h["library"], **_prov(h["provenance"])} for h in hits]


def _prov(p: dict[str, Any]) -> dict[str, Any]:
    return {"version_match": p["version_match"], "wanted": p["wanted"]}


def rest(deps: Path, folder: Path | None, case: Case) -> list[dict[str, Any]] | str:
    with TestClient(create_app(reader(deps, folder)), base_url=BASE_URL) as c:
        resp = c.post("/search", json={"query": QUERY, "library": [case.library]})
        if resp.status_code != 200:
            err = resp.json()["error"]
            return f"{err['code']}: {err['message']}"
        hits = resp.json()["results"]
    return [{"library": h["library"], **_prov(h["provenance"])} for h in hits]


def graphql(deps: Path, folder: Path | None, case: Case) -> list[dict[str, Any]] | str:
    q = (
        "query($q: String!, $l: [String!]) { searchMarkdown(query: $q, library: $l) "
        "{ results { library versionMatch wanted } } }"
    )
    with TestClient(create_app(reader(deps, folder)), base_url=BASE_URL) as c:
        body = c.post("/graphql", json={"query": q, "variables": {"q": QUERY, "l": [case.library]}})
    out = body.json()
    if out.get("errors"):
        err = out["errors"][0]
        return f"{err['extensions']['code']}: {err['message']}"
    return [
        {"library": h["library"], "version_match": h["versionMatch"], "wanted": h["wanted"]}
        for h in out["data"]["searchMarkdown"]["results"]
    ]


def mcp(deps: Path, folder: Path | None, case: Case) -> list[dict[str, Any]] | str:
    res = mcp_call(reader(deps, folder), "docs_search", {"query": QUERY, "library": case.library})
    if res.is_error:
        text = mcp_text(res)
        assert "error[not_found]: " in text
        return "not_found: " + text.split("error[not_found]: ", 1)[1]
    return res.structured_content["results"]  # type: ignore[index]


SURFACES = {"python": python, "cli": cli, "rest": rest, "graphql": graphql, "mcp": mcp}


@pytest.fixture(params=list(CASES))
def case(request: pytest.FixtureRequest) -> Iterator[Case]:
    yield CASES[request.param]


@pytest.mark.parametrize("surface", list(SURFACES))
def test_every_pin_reads_the_same_version_on_every_surface(
    deps: Path, tmp_path: Path, case: Case, surface: str
) -> None:
    got = SURFACES[surface](deps, project(tmp_path, case), case)
    if case.ref is None:
        assert isinstance(got, str), got
        assert got.startswith("not_found: ")
        assert "8.0.0" in got and "versions held: 8.1.7, 8.3.0" in got
        return
    assert isinstance(got, list) and got, got
    seen = {(h["library"], h.get("version_match"), h.get("wanted")) for h in got}
    assert seen == {(case.ref, case.match, case.wanted)}


def test_a_library_pinned_older_than_every_version_is_left_out_unnamed(
    deps: Path, tmp_path: Path
) -> None:
    folder = project(tmp_path, CASES["older than all held"])
    lib = reader(deps, folder)
    answer = ops.docs_search(lib, SearchArgs(QUERY, limit=50))
    assert {h.library for h in answer.results} == {"jinja2@3.1.2"}
    with pytest.raises(NotFoundError) as e:
        ops.docs_search(lib, SearchArgs(QUERY, library="click"))
    assert e.value.details == {
        "library": "click",
        "wanted": "8.0.0",
        "versions": ["8.1.7", "8.3.0"],
    }
    # named with its version, it is read
    one = ops.docs_search(lib, SearchArgs(QUERY, library="click@8.3.0"))
    assert {(h.library, h.version_match) for h in one.results} == {("click@8.3.0", "exact")}
    listed = {i.key: i for i in ops.list_libraries(lib).libraries}
    assert listed["click"].project is not None and listed["click"].project.startswith("none")
    assert not any(v.default for v in listed["click"].versions)


def test_list_libraries_says_every_pin_exact_ones_too(deps: Path, tmp_path: Path) -> None:
    lib = reader(deps, project(tmp_path, CASES["exact"]))
    body = json.loads(json.dumps(ops.to_json(ops.list_libraries(lib))))
    versions = {
        (lib_["key"], v["version"]): (v["default"], v["version_match"], v["wanted"])
        for lib_ in body["libraries"]
        for v in lib_["versions"]
    }
    assert versions[("click", "8.1.7")] == (True, "exact", "8.1.7")
    assert versions[("jinja2", "3.1.2")] == (True, "exact", "3.1.2")
    assert versions[("click", "8.3.0")] == (False, None, None)
    with TestClient(create_app(lib), base_url=BASE_URL) as c:
        assert c.get("/libraries").json() == body


def test_a_project_that_gives_nothing_is_a_warning_everywhere(deps: Path, tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    res = run_cli("search", QUERY, "-c", str(deps), "--project", str(empty))
    assert "warning: --project" in res.stderr and "no manifest or lockfile" in res.stderr
    assert "requirements*.txt" in res.stderr and "package.json" in res.stderr
    lib = reader(deps, empty)
    answer = ops.docs_search(lib, SearchArgs(QUERY))
    assert answer.warnings and "no manifest or lockfile" in answer.warnings[0]
    body = mcp_call(lib, "docs_search", {"query": QUERY}).structured_content
    assert body is not None and "no manifest or lockfile" in body["warnings"][0]
    with TestClient(create_app(lib), base_url=BASE_URL) as c:
        assert "no manifest or lockfile" in c.get("/libraries").json()["warnings"][0]
        assert (
            "no manifest or lockfile"
            in c.post("/search", json={"query": QUERY}).json()["warnings"][0]
        )
    other = tmp_path / "other"
    other.mkdir()
    (other / "requirements.txt").write_text("numpy==2.0.0\n")
    res = run_cli("libraries", "-c", str(deps), "--project", str(other))
    assert "none of its 1 dependencies" in res.stderr and "requirements.txt" in res.stderr


def test_the_cli_text_names_the_version_and_how_on_every_hit(deps: Path, tmp_path: Path) -> None:
    folder = project(tmp_path, CASES["range answered by older"])
    res = run_cli("search", QUERY, "-c", str(deps), "--library", "flask", "--project", str(folder))
    hits = [line for line in res.stdout.splitlines() if re.match(r"^ *\d+\. ", line)]
    lines = [line.strip() for line in res.stdout.splitlines() if "flask@2.2.2" in line]
    assert hits and len(lines) == len(hits)
    assert all("nearest to ~=3.0" in line and "/src/flask-2.2.2" in line for line in lines)
    md = run_cli("search", QUERY, "-c", str(deps), "--library", "flask", "--project",
                 str(folder), "--format", "markdown").stdout  # fmt: skip
    heads = [line for line in md.splitlines() if line.startswith("## ")]
    assert heads and all("(flask 2.2.2, nearest to ~=3.0, commit " in h for h in heads)
    table = run_cli("libraries", "-c", str(deps)).stdout
    assert "commit" in table and "010101010101" in table
