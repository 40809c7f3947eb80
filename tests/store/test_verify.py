"""`cogitave verify`: every retained root checked; a corrupt file is named, exit status 1.

Also what opening a damaged collection does today: the facade reads the manifest at open and
every other object lazily, at the first search, so "open" below means open + first search.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from cogitave import Collection
from cogitave.errors import CorruptionError
from cogitave.store.manifest import Manifest
from cogitave.store.roots import RootStore
from cogitave.store.verify import verify_collection
from tests.conftest import SCHEMA, make_nodes
from tests.helpers import docs_collection, run_cli


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Three roots: empty, 80 nodes, then 10 more and one delete (BM25 only)."""
    path = tmp_path_factory.mktemp("verify") / "col"
    col = Collection.create(path, SCHEMA, encoder=None)
    col.add(make_nodes(80))
    col.publish()
    col.add(make_nodes(90, seed=3)[80:])
    col.delete(["n00001"])
    col.publish()
    col.search("alpha")  # materialise HEAD's snapshot directory, as a reader would
    OBJECT_SIZES.update({p.name: p.stat().st_size for p in (path / "objects").iterdir()})
    return path


@pytest.fixture
def damaged(pristine: Path, tmp_path: Path) -> Path:
    """A copy of the pristine collection to damage (hard links kept: objects are shared)."""
    dst = tmp_path / "col"
    shutil.copytree(pristine, dst, copy_function=shutil.copy2)
    shutil.rmtree(dst / "snapshots")  # copies would not share inodes with objects/
    (dst / "snapshots").mkdir()
    Collection.open(dst).search("alpha")
    return dst


def head_manifest(path: Path) -> tuple[str, dict[str, Any]]:
    rid = (path / "HEAD").read_text().strip()
    return rid, json.loads((path / "roots" / f"{rid}.json").read_bytes())


OBJECT_SIZES: dict[str, int] = {}  # object hash -> size, filled by the pristine fixture


def object_of(manifest: dict[str, Any], kind: str) -> str:
    """The object hash of one kind of segment file in a manifest."""
    if kind.startswith("lexical"):
        # Segment files are named by random UUIDs, and merges depend on timing: take the
        # largest file of the kind, so that every run damages the same segment.
        suffix = kind.split(":")[1]
        files = [(n, d) for n, d in manifest["lexical"]["files"].items() if n.endswith(suffix)]
        return max(files, key=lambda nd: (OBJECT_SIZES.get(nd[1], 0), nd[1]))[1]
    if kind in ("graph_obj", "aliases_obj"):
        return str(manifest["graph"][kind])
    if kind == "stats_obj":
        return str(manifest[kind])
    return str(manifest["segments"][-1][kind])


def flip_byte(path: Path, at: int | None = None) -> None:
    """Flip one byte in place (the inode is kept, like bit rot under a hard link); the middle
    one by default, ``at=-1`` for the last (past a small .npy file's header)."""
    data = path.read_bytes()
    i = len(data) // 2 if at is None else at % len(data)
    with path.open("r+b") as f:
        f.seek(i)
        f.write(bytes([data[i] ^ 0xFF]))


def roots_naming(path: Path, digest: str) -> set[str]:
    store = RootStore(path)
    return {
        p.stem
        for p in store.roots.glob("*.json")
        if digest in set(Manifest.from_dict(json.loads(p.read_bytes())).objects())
    }


# -- healthy ----------------------------------------------------------------------------------
def test_a_healthy_collection_verifies(pristine: Path) -> None:
    report = verify_collection(pristine)
    assert report.ok, report.lines()
    assert len(report.roots) == 3
    assert report.roots[0].head and report.roots[0].root == head_manifest(pristine)[0]
    assert [r.nodes for r in report.roots] == [89, 80, 0]
    assert all(r.ok and r.problem is None for r in report.roots)
    assert report.bytes_hashed > 0


def test_a_collection_with_vectors_and_edges_verifies(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    col = docs_collection(tmp_path_factory)  # the surface tests' docs: dense legs and a graph
    assert col.snapshot.manifest.vectors and col.snapshot.graph.n_edges
    report = verify_collection(col.store.path)
    assert report.ok, report.lines()
    assert report.roots[0].nodes == len(col)


def test_verify_writes_nothing(pristine: Path) -> None:
    before = sorted((p.relative_to(pristine), p.stat().st_mtime_ns) for p in pristine.rglob("*"))
    verify_collection(pristine)
    after = sorted((p.relative_to(pristine), p.stat().st_mtime_ns) for p in pristine.rglob("*"))
    assert before == after


def test_cli_ok_and_json(pristine: Path) -> None:
    proc = run_cli("verify", "--collection", str(pristine))
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert [ln.split()[0] for ln in lines] == ["OK", "OK", "OK", "OK:"]
    assert "HEAD" in lines[0]
    body = json.loads(run_cli("verify", "--collection", str(pristine), "--json").stdout)
    assert body["ok"] and len(body["roots"]) == 3


# -- damaged ----------------------------------------------------------------------------------
def test_truncated_manifest_names_the_file(damaged: Path) -> None:
    rid, _ = head_manifest(damaged)
    f = damaged / "roots" / f"{rid}.json"
    f.write_bytes(f.read_bytes()[:100])
    report = verify_collection(damaged)
    assert not report.ok
    (bad,) = report.bad
    assert bad.root == rid and bad.head
    assert bad.file == str(f) and str(f) in bad.problem
    assert [r.ok for r in report.roots] == [False, True, True]
    with pytest.raises(CorruptionError, match=str(f)):
        Collection.open(damaged)


@pytest.mark.parametrize(
    "kind",
    ["lexical:.term", "lexical:.idx", "lexical:meta.json", "nodes_obj", "offsets_obj",
     "facts_obj", "facts_offsets_obj", "graph_obj", "stats_obj", "aliases_obj"],
)  # fmt: skip
def test_flipped_byte_in_a_segment_object_names_the_file(damaged: Path, kind: str) -> None:
    _, m = head_manifest(damaged)
    digest = object_of(m, kind)
    f = damaged / "objects" / digest
    flip_byte(f)
    report = verify_collection(damaged)
    assert not report.ok
    assert {r.root for r in report.bad} == roots_naming(damaged, digest)
    for r in report.bad:
        assert r.file == str(f)
        assert "checksum mismatch" in (r.problem or "") and str(f) in (r.problem or "")


def test_missing_object_names_the_file(damaged: Path) -> None:
    rid, m = head_manifest(damaged)
    f = damaged / "objects" / object_of(m, "nodes_obj")
    f.unlink()
    report = verify_collection(damaged)
    (bad,) = report.bad
    assert bad.root == rid
    assert bad.file == str(f) and "missing object" in (bad.problem or "")
    with pytest.raises(CorruptionError, match=f.name):
        Collection.open(damaged).search("alpha")


@pytest.mark.parametrize(
    "content, reason",
    [(b"", "not a root id"), (b"zz\n", "not a root id"), (b"a" * 64 + b"\n", "not retained")],
)
def test_corrupt_head_names_the_file(damaged: Path, content: bytes, reason: str) -> None:
    (damaged / "HEAD").write_bytes(content)
    report = verify_collection(damaged)
    assert not report.ok
    assert report.head_file == str(damaged / "HEAD")
    assert reason in (report.head_problem or "")
    assert all(r.ok for r in report.roots)  # the roots themselves are intact
    proc = run_cli("verify", "--collection", str(damaged), ok=False)
    assert proc.returncode == 1
    assert "Traceback" not in proc.stderr
    assert proc.stdout.splitlines()[0].startswith("BAD   HEAD")
    assert str(damaged / "HEAD") in proc.stdout


def test_counts_that_disagree_are_reported(damaged: Path) -> None:
    """A well-formed manifest (its hash is its name) whose node count is wrong."""
    store = RootStore(damaged)
    _, m = head_manifest(damaged)
    m = {k: v for k, v in m.items() if k not in ("format", "created")}
    m["counts"] = {**m["counts"], "nodes": m["counts"]["nodes"] + 1}
    rid = store.write_root(Manifest.from_dict(m))
    report = verify_collection(damaged)
    bad = {r.root: r for r in report.bad}
    assert set(bad) == {rid}
    assert "live documents" in (bad[rid].problem or "")
    assert bad[rid].file == str(damaged / "roots" / f"{rid}.json")


def test_a_snapshot_file_that_differs_from_its_object(damaged: Path) -> None:
    rid, m = head_manifest(damaged)
    name = next(n for n in m["lexical"]["files"] if n.endswith(".term"))
    snap = damaged / "snapshots" / rid / name
    data = snap.read_bytes()
    snap.unlink()  # break the hard link, then write different bytes
    snap.write_bytes(data[:-1] + bytes([data[-1] ^ 1]))
    report = verify_collection(damaged)
    (bad,) = report.bad
    assert bad.file == str(snap) and "snapshot" in (bad.problem or "")


def test_cli_reports_each_root_and_exits_1(damaged: Path) -> None:
    rid, m = head_manifest(damaged)
    f = damaged / "objects" / object_of(m, "lexical:.term")
    flip_byte(f)
    proc = run_cli("verify", "--collection", str(damaged), ok=False)
    assert proc.returncode == 1, proc.stdout
    assert "Traceback" not in proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].startswith(f"BAD   {rid[:12]}  HEAD") and str(f) in lines[0]
    assert lines[-1].startswith("CORRUPT:")


def test_cli_no_collection_is_one_line_exit_2(tmp_path: Path) -> None:
    proc = run_cli("verify", "--collection", str(tmp_path / "none"), ok=False)
    assert proc.returncode == 2
    assert proc.stderr.startswith("error[not_found]") and proc.stderr.count("\n") == 1


# -- what opening a damaged collection does today -----------------------------------------------
def _open_and_read(path: Path) -> None:
    col = Collection.open(path)
    res = col.search("alpha beta", limit=5)
    col.get(res.uids[0])
    col.related(res.uids[0])


def test_open_with_a_non_utf8_head(damaged: Path) -> None:
    (damaged / "HEAD").write_bytes(b"\x00\xff\xfe")
    with pytest.raises(CorruptionError, match="HEAD"):
        Collection.open(damaged)


def _silent(kind: str) -> Any:
    return pytest.param(kind)


@pytest.mark.parametrize(
    "kind",
    [
        "stats_obj",
        "lexical:meta.json",
        _silent("lexical:.term"),
        _silent("nodes_obj"),
        _silent("offsets_obj"),
        _silent("graph_obj"),
        pytest.param(
            "deletes_obj",
        ),
        pytest.param(
            "nids_obj",
        ),
    ],
)
def test_open_detects_a_flipped_byte(damaged: Path, kind: str) -> None:
    _, m = head_manifest(damaged)
    f = damaged / "objects" / object_of(m, kind)
    flip_byte(f, -1 if kind.endswith(("offsets_obj", "nids_obj", "deletes_obj")) else None)
    # a lexical file may be named by its tantivy file name (the snapshot holds it by that name)
    names = [f.name, *(n for n, d in m["lexical"]["files"].items() if d == f.name)]
    with pytest.raises(CorruptionError, match="|".join(names)):
        _open_and_read(damaged)


def test_an_update_keeps_the_node_in_the_graph(tmp_path: Path) -> None:
    col = Collection.create(tmp_path / "col", SCHEMA, encoder=None)
    col.add(make_nodes(5))
    col.publish()
    col.add([make_nodes(1, seed=9)[0]])  # n00000 again, new text: a replacement
    col.publish()
    assert col.snapshot.graph.n_nodes == len(col) == 5
    assert verify_collection(col.store.path).ok
