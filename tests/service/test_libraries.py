"""The service operations over a collection of libraries: what is held, what a name means,
provenance on every answer, a project's pins said on every hit, older pages pointing on."""

from __future__ import annotations

from dataclasses import replace

import pytest

from cogitave.distributed import hashed
from cogitave.errors import InputError, NotFoundError
from cogitave.libraries.collection import LibraryCollection
from cogitave.libraries.layout import Pin
from cogitave.service import ops
from cogitave.service.args import FetchArgs, LibraryArgs, RelatedArgs, SearchArgs, XrefArgs
from tests.conftest import SCHEMA, make_nodes


def pages(n: int, seed: int) -> list:
    return [
        replace(node, uid=f"guide/p{i:03d}", kind="page", meta={"url": f"/guide/p{i:03d}/"})
        for i, node in enumerate(make_nodes(n, seed=seed))
    ]


@pytest.fixture(scope="module")
def lib(tmp_path_factory: pytest.TempPathFactory) -> LibraryCollection:
    c = LibraryCollection.create(tmp_path_factory.mktemp("svc") / "c", encoder=hashed.register())
    c.sync_library("FastAPI", "0.110.0", pages(30, 1), schema=SCHEMA, source="/f/0110")
    c.sync_library("FastAPI", "0.115.0", pages(30, 2), schema=SCHEMA, source="/f/0115")
    c.sync_library("@tanstack/react-query", "5.0.0", pages(20, 3), schema=SCHEMA, source="/t")
    return c


def test_list_libraries(lib: LibraryCollection) -> None:
    answer = ops.list_libraries(lib)
    by_key = {i.key: i for i in answer.libraries}
    assert set(by_key) == {"fastapi", "tanstack-react-query"}
    fast = by_key["fastapi"]
    assert fast.name == "FastAPI" and [v.version for v in fast.versions] == ["0.115.0", "0.110.0"]
    assert [v.default for v in fast.versions] == [True, False]
    assert fast.versions[1].source == "/f/0110" and fast.versions[1].pages == 30
    assert ops.to_json(answer)["libraries"][0]["versions"][0]["indexed_at"]


@pytest.mark.parametrize(
    ("name", "key", "found"),
    [
        ("fast api", "fastapi", True),
        ("FastAPI", "fastapi", True),
        ("tanstack-query", "tanstack-react-query", False),
        ("@tanstack/react-query", "tanstack-react-query", True),
        ("fastapy", "fastapi", False),
    ],
)
def test_resolve_library(lib: LibraryCollection, name: str, key: str, found: bool) -> None:
    got = ops.resolve_library(lib, LibraryArgs(name))
    assert got.matches[0].key == key and got.found is found
    if key == "fastapi":
        assert got.matches[0].versions == ("0.110.0", "0.115.0")


def test_resolve_library_leaves_weak_matches_out(lib: LibraryCollection) -> None:
    got = ops.resolve_library(lib, LibraryArgs("zzqx"))
    assert got.matches == () and not got.found
    assert [m.key for m in ops.resolve_library(lib, LibraryArgs("fastapi")).matches] == ["fastapi"]


def test_every_hit_names_its_version_and_the_answer_its_provenance(lib: LibraryCollection) -> None:
    answer = ops.docs_search(lib, SearchArgs("alpha gamma", limit=20))
    assert {h.library for h in answer.results} == {"fastapi@0.115.0", "tanstack-react-query@5.0.0"}
    prov = {p.library: p for p in answer.libraries}
    assert prov["fastapi@0.115.0"].source == "/f/0115" and prov["fastapi@0.115.0"].indexed_at
    assert "(FastAPI 0.115.0, newest held)" in answer.markdown
    one = ops.docs_search(lib, SearchArgs("alpha", library="fastapi", version="0.110.0"))
    assert {h.library for h in one.results} == {"fastapi@0.110.0"}
    with pytest.raises(InputError, match="version needs exactly one library"):
        SearchArgs("alpha", version="0.110.0")


def test_a_pin_that_is_not_exact_is_said_on_every_hit(lib: LibraryCollection) -> None:
    lib.pin("fastapi", Pin("0.110.0", "nearest", wanted="0.112.3"))
    try:
        answer = ops.docs_search(lib, SearchArgs("alpha", limit=10, library="fastapi"))
        assert {h.library for h in answer.results} == {"fastapi@0.110.0"}
        assert {h.version_match for h in answer.results} == {"nearest"}
        assert "(FastAPI 0.110.0, nearest to 0.112.3)" in answer.markdown
        (p,) = answer.libraries
        assert (p.version_match, p.wanted) == ("nearest", "0.112.3")
        listed = ops.list_libraries(lib).libraries
        fast = next(i for i in listed if i.key == "fastapi")
        assert [(v.version, v.default, v.version_match) for v in fast.versions] == [
            ("0.115.0", False, None),
            ("0.110.0", True, "nearest"),
        ]
    finally:
        lib.pin("fastapi", None)


def test_an_older_page_says_which_page_supersedes_it(lib: LibraryCollection) -> None:
    old = ops.fetch(lib, FetchArgs("guide/p004", library="fastapi", version="0.110.0"))
    assert old.uid == "fastapi@0.110.0:guide/p004"
    assert old.superseded_by == "fastapi@0.115.0:guide/p004"
    assert "A newer version of this page: fastapi@0.115.0:guide/p004" in old.markdown
    new = ops.fetch(lib, FetchArgs("/guide/p004/"))  # the default version: the newest
    assert new.uid == "fastapi@0.115.0:guide/p004" and new.superseded_by is None
    rel = ops.related(lib, RelatedArgs("guide/p004", ("supersededBy",), "in", library="fastapi"))
    assert [i.uid for i in rel.items] == ["fastapi@0.110.0:guide/p004"]


def test_references_resolve_in_the_versions_asked(lib: LibraryCollection) -> None:
    got = ops.resolve_xref(lib, XrefArgs("guide/p004", library="fastapi@0.110.0"))
    assert [c.uid for c in got.candidates] == ["fastapi@0.110.0:guide/p004"]
    anyv = ops.resolve_xref(lib, XrefArgs("guide/p004", limit=5))
    assert anyv.candidates[0].uid.startswith("fastapi@0.115.0")  # the default versions first
    with pytest.raises(NotFoundError, match="versions held"):
        ops.resolve_xref(lib, XrefArgs("guide/p004", library="fastapi", version="9"))
