"""The collection's file system says no: a read-only mount is read, a full disk fails a
publish in one line and leaves the previous root whole."""

from __future__ import annotations

import contextlib
import errno
import gc
import json
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from fastapi.testclient import TestClient

from cogitave.collection import Collection
from cogitave.errors import StorageError
from cogitave.query.types import SearchRequest
from cogitave.store import roots
from cogitave.surfaces.http import create_app
from tests.conftest import SCHEMA, make_nodes
from tests.helpers import BASE_URL, docs_batch, free_port, run_cli

CLI = (sys.executable, "-m", "cogitave.surfaces.cli")


# -- read-only collections ----------------------------------------------------------------------
@contextlib.contextmanager
def read_only_view(src: Path, mnt: Path) -> Iterator[Path]:
    """``src`` at ``mnt`` through a read-only bind mount (writes fail with EROFS, even for
    root); skipped where mounting is not allowed."""
    mnt.mkdir(parents=True, exist_ok=True)
    try:
        subprocess.run(["mount", "--bind", str(src), str(mnt)], check=True, capture_output=True)
    except (OSError, subprocess.CalledProcessError) as e:
        pytest.skip(f"no bind mount here: {e}")
    try:
        subprocess.run(
            ["mount", "-o", "remount,bind,ro", str(mnt)], check=True, capture_output=True
        )
        probe = mnt / ".probe"
        with pytest.raises(OSError) as denied:
            probe.write_text("x")
        assert denied.value.errno in (errno.EROFS, errno.EACCES)
        yield mnt
    finally:
        gc.collect()  # readers map index files: let them go before unmounting
        subprocess.run(["umount", "-l", str(mnt)], capture_output=True)


@pytest.fixture(scope="module")
def docs_src(tmp_path_factory: pytest.TempPathFactory) -> Path:
    batch = docs_batch(tmp_path_factory)
    src = tmp_path_factory.mktemp("ro-src")
    col = Collection.create(src / "col", batch.schema, encoder=None)
    col.add(batch.nodes)
    col.publish()
    return src


@pytest.mark.parametrize("materialised", [False, True])
def test_a_read_only_collection_opens_and_answers(
    docs_src: Path, tmp_path: Path, materialised: bool
) -> None:
    """Whether or not its snapshot directory was built before the mount went read-only."""
    shutil.rmtree(docs_src / "col" / "snapshots")
    (docs_src / "col" / "snapshots").mkdir()
    if materialised:  # a reader opened it while it was writable
        Collection.open(docs_src / "col").search(SearchRequest("install"))
        gc.collect()
    before = sorted(p.relative_to(docs_src) for p in docs_src.rglob("*"))
    with read_only_view(docs_src, tmp_path / "ro") as mnt:
        col = Collection.open(mnt / "col")
        hits = col.search(SearchRequest("install")).results
        assert hits and col.get(hits[0].uid).uid == hits[0].uid
        with TestClient(create_app(col), base_url=BASE_URL) as c:
            assert c.post("/search", json={"query": "install"}).json()["results"]
            gql = c.post("/graphql", json={"query": "{ roots { current } }"}).json()
            assert gql["data"]["roots"]["current"] == col.root
        res = run_cli("search", "--collection", str(mnt / "col"), "install", "--json", ok=False)
        assert res.returncode == 0, res.stderr
        assert json.loads(res.stdout)["results"]
        del col, c
    assert sorted(p.relative_to(docs_src) for p in docs_src.rglob("*")) == before


def test_serve_answers_from_a_read_only_collection(docs_src: Path, tmp_path: Path) -> None:
    with read_only_view(docs_src, tmp_path / "ro") as mnt:
        port = free_port()
        argv = [*CLI, "serve", "--collection", str(mnt / "col"), "--port", str(port)]
        log = tmp_path / "serve.log"
        with log.open("wb") as out:
            proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=out)
        try:
            answer = None
            for _ in range(120):  # up to a minute for the server to start
                if proc.poll() is not None:
                    break
                try:
                    answer = httpx.post(
                        f"http://127.0.0.1:{port}/search", json={"query": "install"}, timeout=5
                    )
                    break
                except httpx.TransportError:
                    time.sleep(0.5)
            assert answer is not None, log.read_text()[-500:]
            assert answer.status_code == 200 and answer.json()["results"], answer.text[:300]
        finally:
            proc.send_signal(signal.SIGINT)
            try:
                proc.wait(15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def test_publishing_to_a_read_only_collection_is_one_line(docs_src: Path, tmp_path: Path) -> None:
    with read_only_view(docs_src, tmp_path / "ro") as mnt:
        col = Collection.open(mnt / "col")
        col.add(make_nodes(2, seed=3, vocab=("alpha", "beta")))
        with pytest.raises(StorageError) as e:
            col.publish()
        assert e.value.code == "io" and "previous root" in e.value.message
        del col


# -- a full disk ----------------------------------------------------------------------------
def test_a_full_disk_fails_the_publish_in_one_line_and_keeps_the_root(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "col"
    col = Collection.create(path, SCHEMA, encoder=None)
    col.add(make_nodes(40))
    head = col.publish()
    src = tmp_path / "more.jsonl"
    src.write_text(
        "".join(
            json.dumps(n.to_record()["dims"] | {"uid": n.uid}) + "\n"
            for n in make_nodes(30, seed=11)
        )
    )

    real = roots.atomic_write
    writes = {"n": 0}

    def full(p: Path, data: bytes) -> None:  # the third whole-file write finds the disk full
        writes["n"] += 1
        if writes["n"] >= 3:
            raise OSError(errno.ENOSPC, "No space left on device", str(p))
        real(p, data)

    monkeypatch.setattr(roots, "atomic_write", full)
    res = run_cli("index", "--collection", str(path), "--format", "jsonl", str(src), "-q", ok=False)
    assert writes["n"] >= 3  # the disk filled up midway
    assert res.returncode == 1, res
    assert res.stderr.count("\n") == 1 and res.stderr.startswith("error[io]: "), res.stderr
    assert "No space left on device" in res.stderr and "Traceback" not in res.stderr
    monkeypatch.setattr(roots, "atomic_write", real)

    assert Collection.open(path).root == head
    verified = run_cli("verify", "--collection", str(path), ok=False)
    assert verified.returncode == 0, verified.stdout + verified.stderr
    # and the next publish, with room again, goes through
    run_cli("index", "--collection", str(path), "--format", "jsonl", str(src), "-q")
    assert Collection.open(path).root != head


def test_a_full_disk_while_objects_are_stored_is_a_storage_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    col = Collection.create(tmp_path / "col", SCHEMA, encoder=None)
    col.add(make_nodes(20))
    head = col.publish()

    def full(self: roots.RootStore, src: Path, digest: str | None = None) -> str:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(roots.RootStore, "put_file", full)
    col.add(make_nodes(5, seed=5))
    with pytest.raises(StorageError, match="No space left"):
        col.publish()
    assert col.store.head() == head
