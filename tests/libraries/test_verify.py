"""``cogitave verify`` on a collection of libraries: the manifest, every version's collection,
the shared graph, and what killed writers left, each problem with the command that repairs
it."""

from __future__ import annotations

import json
import shutil
from dataclasses import replace
from pathlib import Path

import pytest

from cogitave import Collection
from cogitave.libraries.collection import LibraryCollection
from cogitave.libraries.verify import verify_libraries
from cogitave.nodes import Node
from tests.conftest import SCHEMA, make_nodes
from tests.helpers import run_cli


def pages(n: int, seed: int) -> list[Node]:
    return [
        replace(node, uid=f"guide/p{i:03d}", kind="page")
        for i, node in enumerate(make_nodes(n, seed=seed))
    ]


@pytest.fixture
def col(tmp_path: Path) -> Path:
    lib = LibraryCollection.create(tmp_path / "c", encoder=None)
    lib.sync_library("x", "1", pages(5, 1), schema=SCHEMA, source="/a")
    lib.sync_library("x", "2", pages(6, 2), schema=SCHEMA, source="/b")
    return tmp_path / "c"


def test_a_whole_collection_of_libraries_verifies(col: Path) -> None:
    res = run_cli("verify", "-c", str(col))
    assert "OK    x@1  5 nodes" in res.stdout and "OK    x@2  6 nodes" in res.stdout
    assert res.stdout.strip().splitlines()[-1].startswith("OK: 2 library versions checked")
    body = json.loads(run_cli("verify", "-c", str(col), "--json").stdout)
    assert body["ok"] and body["kind"] == "libraries" and body["problems"] == []


def bad_manifest(col: Path) -> str:
    (col / "LIBRARIES.json").write_text("{not json")
    return "restore LIBRARIES.json"


def damaged_object(col: Path) -> str:
    objects = sorted((col / "libs" / "x@1" / "objects").iterdir())
    victim = max(objects, key=lambda p: p.stat().st_size)
    data = bytearray(victim.read_bytes())
    data[len(data) // 2] ^= 1
    victim.write_bytes(bytes(data))
    return f"cogitave delete --collection {col} --library x@1, then index it again"


def missing_folder(col: Path) -> str:
    shutil.rmtree(col / "libs" / "x@2")
    return f"cogitave delete --collection {col} --library x@2"


def orphan(col: Path) -> str:
    Collection.create(col / "libs" / "y@1.0", SCHEMA, encoder=None)
    return f"cogitave delete --collection {col} --library y@1.0"


def staging(col: Path) -> str:
    (col / "libs" / ".import-0123abcd" / "objects").mkdir(parents=True)
    return "run any index or delete on this collection"


def graph_object(col: Path) -> str:
    entry = json.loads((col / "LIBRARIES.json").read_text())["graph"]
    (col / "graph" / "objects" / entry["graph_obj"]).unlink()
    return "index every library again"


@pytest.mark.parametrize(
    "damage", [bad_manifest, damaged_object, missing_folder, orphan, staging, graph_object]
)
def test_each_problem_is_reported_with_its_repair(col: Path, damage) -> None:  # type: ignore[no-untyped-def]
    repair = damage(col)
    report = verify_libraries(col)
    assert not report.ok
    assert any(repair in p.repair for p in report.problems), report.problems
    res = run_cli("verify", "-c", str(col), ok=False)
    assert res.returncode == 1
    assert f"repair: {repair}" in res.stdout or repair in res.stdout
    assert res.stdout.strip().splitlines()[-1].startswith("CORRUPT")


def test_the_repairs_repair(col: Path) -> None:
    orphan(col)
    staging(col)
    run_cli("delete", "-c", str(col), "--library", "y@1.0")
    assert verify_libraries(col).ok  # the delete collected the staging folder too
