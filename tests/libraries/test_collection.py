"""A collection of libraries: each version its own collection, one view over all of them.

A search scoped to one library version scores what a collection of that library alone
scores; without a scope every library answers at its default version (the pinned one, else
the newest); hits name their version; pages point to the same page of the next version.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from cogitave import Collection, SearchRequest
from cogitave.distributed import hashed
from cogitave.errors import ConflictError, NotFoundError
from cogitave.libraries.collection import LibraryCollection, Pin, namespaced, version_order
from cogitave.nodes import Node
from tests.conftest import SCHEMA, make_nodes

QUERIES = ("alpha gamma", "river mountain forest", "fusion cache index", "leather boots")


def pages(n: int, seed: int, label: str) -> list[Node]:
    """Generated page nodes whose uids look like page paths (the same across versions)."""
    return [
        replace(
            node, uid=f"guide/p{i:03d}", kind="page", dims={**node.dims, "title": f"{label} {i}"}
        )
        for i, node in enumerate(make_nodes(n, seed=seed))
    ]


@pytest.fixture(scope="module")
def libs(tmp_path_factory: pytest.TempPathFactory) -> LibraryCollection:
    lib = LibraryCollection.create(tmp_path_factory.mktemp("libs") / "c", encoder=hashed.register())
    lib.sync_library("Demo", "1.0", pages(60, 1, "old"), schema=SCHEMA, source="/src/demo-1")
    lib.sync_library("Demo", "2.0", pages(70, 2, "new"), schema=SCHEMA, source="/src/demo-2")
    lib.sync_library("other-lib", "0.3", pages(50, 3, "other"), schema=SCHEMA, source="/o")
    return lib


def test_one_version_scores_as_its_own_collection(libs: LibraryCollection, tmp_path: Path) -> None:
    alone = Collection.create(tmp_path / "alone", SCHEMA, encoder=hashed.NAME)
    alone.add(namespaced(n, "demo@1.0", "Demo", "1.0") for n in pages(60, 1, "old"))
    alone.publish()
    for q in QUERIES:
        for mode in ("bm25", "hybrid", "planned"):
            got = libs.search(SearchRequest(query=q, mode=mode, libraries=("demo@1.0",)))
            want = alone.search(SearchRequest(query=q, mode=mode))
            assert [(h.uid, h.score) for h in got.results] == [
                (h.uid, h.score) for h in want.results
            ], (q, mode)


def test_hits_name_their_library_version(libs: LibraryCollection) -> None:
    res = libs.search(SearchRequest(query="alpha", limit=50))
    versions = {(h.uid.split(":")[0]) for h in res.results}
    assert versions == {"demo@2.0", "other-lib@0.3"}  # each library at its newest version
    node = libs.get(res.results[0].uid)
    assert node.meta["library"] in ("Demo", "other-lib") and node.meta["version"] != "1.0"


def test_names_and_versions_select_what_is_read(libs: LibraryCollection) -> None:
    def versions(*refs: str) -> set[str]:
        res = libs.search(SearchRequest(query="alpha", limit=100, libraries=refs))
        return {h.uid.split(":")[0] for h in res.results}

    assert versions("demo") == {"demo@2.0"}
    assert versions("Demo@1.0") == {"demo@1.0"}
    assert versions("demo@1.0", "other_lib") == {"demo@1.0", "other-lib@0.3"}
    with pytest.raises(NotFoundError, match=r"versions held: 1\.0, 2\.0"):
        libs.search(SearchRequest(query="alpha", libraries=("demo@3.1",)))
    with pytest.raises(NotFoundError, match="closest: demo"):
        libs.search(SearchRequest(query="alpha", libraries=("demon",)))


def test_a_pin_is_the_default_version(libs: LibraryCollection) -> None:
    libs.pin("demo", Pin("1.0", "nearest", wanted="1.4"))
    try:
        res = libs.search(SearchRequest(query="alpha", limit=100))
        assert {h.uid.split(":")[0] for h in res.results} == {"demo@1.0"}  # pinned libraries only
    finally:
        libs.pin("demo", None)


def test_a_page_points_to_the_same_page_of_the_next_version(libs: LibraryCollection) -> None:
    rel = libs.related("demo@1.0:guide/p003", labels=["supersededBy"], direction="out")
    assert [i.uid for i in rel.items] == ["demo@2.0:guide/p003"]
    assert libs.related("demo@2.0:guide/p003", labels=["supersededBy"], direction="out").items == ()
    xref = libs.resolve_xref("guide/p003")
    assert {c.uid for c in xref.candidates} >= {"demo@1.0:guide/p003", "demo@2.0:guide/p003"}


def test_another_source_for_a_version_is_refused_unless_replaced(tmp_path: Path) -> None:
    lib = LibraryCollection.create(tmp_path / "c", encoder=None)
    lib.sync_library("x", "1", pages(5, 1, "a"), schema=SCHEMA, source="/a")
    with pytest.raises(ConflictError, match="--replace"):
        lib.sync_library("x", "1", pages(5, 2, "b"), schema=SCHEMA, source="/b")
    lib.sync_library("x", "1", pages(6, 2, "b"), schema=SCHEMA, source="/b", replace_source=True)
    assert lib.libraries()[0].source == "/b" and len(lib) == 6


def test_delete_a_version_then_a_library(tmp_path: Path) -> None:
    lib = LibraryCollection.create(tmp_path / "c", encoder=None)
    for v in ("1", "2", "3"):
        lib.sync_library("x", v, pages(5, int(v), v), schema=SCHEMA, source=f"/{v}")
    assert lib.related("x@1:guide/p000", labels=["supersededBy"]).items[0].uid == "x@2:guide/p000"
    lib.delete_library("x@2")
    assert [e.version for e in lib.libraries()] == ["1", "3"]
    assert not (tmp_path / "c" / "libs" / "x@2").exists()
    succ = lib.related("x@1:guide/p000", labels=["supersededBy"], direction="out").items
    assert [i.uid for i in succ] == ["x@3:guide/p000"]  # the edge to the deleted one is gone
    lib.delete_library("x")
    assert lib.libraries() == []
    with pytest.raises(NotFoundError, match="no library"):
        lib.delete_library("x")


def test_versions_sort_by_value() -> None:
    held = ["0.9", "0.10.1", "v2.0", "latest", "main-docs", "10.x.x", "1.0rc1"]
    assert sorted(held, key=version_order) == [
        "main-docs", "0.9", "0.10.1", "1.0rc1", "v2.0", "10.x.x", "latest",
    ]  # fmt: skip


def test_a_plain_collection_is_one_library(dense_collection: Collection) -> None:
    with pytest.raises(NotFoundError, match="holds one library"):
        dense_collection.search(SearchRequest(query="alpha", libraries=("fastapi",)))


# -- recovery: what a killed writer leaves never blocks the next one ----------------------------
def killed_first_index(col: Path, key: str, version: str) -> Path:
    """The state a writer killed during a version's first index leaves: the version's own
    collection made (its HEAD, a root), ``LIBRARIES.json`` not naming it."""
    folder = col / "libs" / f"{key}@{version}"
    half = Collection.create(folder, SCHEMA, encoder=None)
    half.add(pages(3, 7, "half"))
    half.publish()
    return folder


@pytest.mark.parametrize("first", [True, False])
def test_a_version_killed_in_its_first_index_is_indexed_again(tmp_path: Path, first: bool) -> None:
    lib = LibraryCollection.create(tmp_path / "c", encoder=None)
    if not first:
        lib.sync_library("x", "1", pages(5, 1, "a"), schema=SCHEMA, source="/a")
    killed_first_index(tmp_path / "c", "x", "2")
    lib.sync_library("x", "2", pages(6, 2, "b"), schema=SCHEMA, source="/b")
    entry = lib.manifest.find("x@2")
    assert entry is not None and entry.nodes == 6
    assert lib.port_of([entry]).nodes.live_count == 6
    res = lib.search(SearchRequest(query="alpha", libraries=("x@2",), limit=50))
    assert {h.uid.split(":")[0] for h in res.results} == {"x@2"}
    assert sorted(p.name for p in (tmp_path / "c" / "libs").iterdir()) == (
        ["x@2"] if first else ["x@1", "x@2"]
    )


def test_delete_removes_a_version_folder_the_manifest_does_not_name(tmp_path: Path) -> None:
    from cogitave import indexing

    lib = LibraryCollection.create(tmp_path / "c", encoder=None)
    lib.sync_library("x", "1", pages(5, 1, "a"), schema=SCHEMA, source="/a")
    orphan = killed_first_index(tmp_path / "c", "y", "1.0")
    assert indexing.delete_library(tmp_path / "c", "y@1.0") == ["libs/y@1.0 (never published)"]
    assert not orphan.exists() and [e.ref for e in lib.libraries()] == ["x@1"]
    with pytest.raises(NotFoundError):
        indexing.delete_library(tmp_path / "c", "y@1.0")


def test_a_staging_folder_no_live_writer_owns_is_collected(tmp_path: Path) -> None:
    from cogitave.libraries import layout

    lib = LibraryCollection.create(tmp_path / "c", encoder=None)
    libs = tmp_path / "c" / "libs"
    old = libs / ".import-0123456789abcdef"  # an import killed mid-stream (no owner lock)
    (old / "objects").mkdir(parents=True)
    (old / "objects" / "blob").write_bytes(b"x" * 1000)
    dead = libs / ".new-999999-abc"  # a first index killed: its lock file is held by nobody
    dead.mkdir()
    (libs / ".new-999999-abc.lock").touch()
    with layout.staging_dir(tmp_path / "c", "import") as live:  # another writer, alive
        (live / "part").write_bytes(b"y")
        lib.sync_library("x", "1", pages(5, 1, "a"), schema=SCHEMA, source="/a")
        left = sorted(p.name for p in libs.iterdir())
        assert left == sorted(["x@1", live.name, live.name + ".lock"])
        assert layout.staging_leftovers(tmp_path / "c") == []
    assert sorted(p.name for p in libs.iterdir()) == ["x@1"]


def test_a_first_index_that_fails_leaves_no_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    lib = LibraryCollection.create(tmp_path / "c", encoder=None)
    lib.sync_library("x", "1", pages(5, 1, "a"), schema=SCHEMA, source="/a")

    def boom(*a: object, **k: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(Collection, "sync", boom)
    with pytest.raises(OSError):
        lib.sync_library("x", "2", pages(5, 2, "b"), schema=SCHEMA, source="/b")
    assert sorted(p.name for p in (tmp_path / "c" / "libs").iterdir()) == ["x@1"]
    monkeypatch.undo()
    lib.sync_library("x", "2", pages(5, 2, "b"), schema=SCHEMA, source="/b")
    assert [e.ref for e in lib.libraries()] == ["x@1", "x@2"]


def test_an_unknown_encoder_is_refused_before_the_folder_is_made(tmp_path: Path) -> None:
    from cogitave.errors import EncoderError

    with pytest.raises(EncoderError, match="unknown encoder"):
        LibraryCollection.create(tmp_path / "libs", encoder="no-such-encoder")
    assert not (tmp_path / "libs").exists()


def test_a_project_without_a_lockfile_is_pinned_to_what_its_environment_runs(
    libs: LibraryCollection, tmp_path: Path
) -> None:
    # The manifest gives a range both held versions fit; the project's .venv runs 1.0: that
    # is the version read, exact, and where it came from is said.
    project = tmp_path / "app"
    site = project / ".venv" / "lib" / "python3.11" / "site-packages"
    (site / "demo-1.0.dist-info").mkdir(parents=True)
    (site / "demo-1.0.dist-info" / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: Demo\nVersion: 1.0\n"
    )
    (project / "pyproject.toml").write_text(
        '[project]\nname = "app"\nversion = "0.1"\ndependencies = ["demo>=1.0"]\n'
    )
    try:
        pins = libs.use_project(project)
        row = next(r for r in pins.dependencies if r.library == "demo")
        assert (row.version, row.match, row.wanted) == ("1.0", "exact", "1.0")
        assert libs.pins["demo"].version == "1.0"
    finally:
        libs.pins.clear()
        libs.excluded.clear()
