"""Content roots: hashing, HEAD, retention, readers' holds, the writer lock, corruption
detection."""

from __future__ import annotations

import gc
import json
import os
import signal
import subprocess
import sys

import pytest

from cogitave import Collection
from cogitave.errors import ConflictError, CorruptionError, NotFoundError
from cogitave.store.roots import RootStore, sha256_bytes
from tests.conftest import SCHEMA, WORDS, make_nodes


def test_root_id_is_hash_of_manifest(collection):
    store = collection.store
    rid = store.head()
    data = (store.roots / f"{rid}.json").read_bytes()
    assert sha256_bytes(data) == rid
    manifest = json.loads(data)
    assert manifest["counts"]["nodes"] == 300
    for digest in manifest["lexical"]["files"].values():
        assert store.get_bytes(digest)  # every named object exists and matches its hash


def test_tampered_manifest_is_detected(collection):
    store = collection.store
    rid = store.head()
    p = store.roots / f"{rid}.json"
    p.write_bytes(p.read_bytes().replace(b'"nodes":300', b'"nodes":301'))
    with pytest.raises(CorruptionError, match=rid):
        store.read_root(rid)


def test_flipped_object_byte_is_detected(collection):
    store = collection.store
    obj = store.read_root(store.head()).stats_obj
    p = store.objects / obj
    data = bytearray(p.read_bytes())
    data[len(data) // 2] ^= 0xFF
    p.write_bytes(bytes(data))
    with pytest.raises(CorruptionError, match=obj):
        Collection.open(store.path).snapshot.stats  # noqa: B018


def test_second_writer_gets_clear_error(tmp_path):
    store = RootStore(tmp_path / "c")
    with (
        store.writer_lock(),
        pytest.raises(ConflictError, match="another writer"),
        store.writer_lock(),
    ):
        pass


def test_retention_keeps_newest_and_head(tmp_path):
    col = Collection.create(tmp_path / "c", SCHEMA, encoder=None)
    nodes = make_nodes(30)
    ids = []
    for i in range(6):
        col.add(nodes[i * 5 : i * 5 + 5])
        ids.append(col.publish(retention=3))
    kept = [r.id for r in col.roots()]
    assert kept == list(reversed(ids[-3:]))
    assert col.roots()[0].head
    with pytest.raises(NotFoundError, match="not retained"):
        Collection.open(tmp_path / "c", root=ids[0])
    # the oldest retained root is whole: it opens and answers
    old = Collection.open(tmp_path / "c", root=ids[-3])
    assert len(old) == 20


def test_open_missing_collection(tmp_path):
    with pytest.raises(NotFoundError):
        Collection.open(tmp_path / "nothing")


def test_create_twice_conflicts(collection):
    with pytest.raises(ConflictError):
        Collection.create(collection.store.path, SCHEMA)


def _publish_past(writer: Collection, n: int, start: int = 100) -> None:
    """``n`` publishes with retention 1, each adding one node."""
    for node in make_nodes(start + n)[start:]:
        writer.add([node])
        writer.publish(retention=1)


def test_an_open_reader_holds_its_root_against_retention(tmp_path):
    col = Collection.create(tmp_path / "c", SCHEMA, encoder=None)
    col.add(make_nodes(20))
    old = col.publish()
    del col  # it held its root too
    reader = Collection.open(tmp_path / "c")  # nothing read yet: every index opens lazily
    _publish_past(Collection.open(tmp_path / "c"), 3)
    store = RootStore(tmp_path / "c")
    assert store.head() != old
    held = {r.id for r in store.list_roots() if r.held}
    assert old in held  # past the count, held by the reader
    res = reader.search(WORDS[0], mode="bm25", limit=5)
    assert res.root == old and res.uids
    assert len(reader) == 20
    del reader, res
    gc.collect()
    _publish_past(Collection.open(tmp_path / "c"), 1, start=200)
    assert old not in {r.id for r in store.list_roots()}  # released: the next publish retires it
    assert not [p for p in store.readers.iterdir() if p.name.startswith(old)]


def test_a_writer_does_not_hold_the_roots_it_retires(tmp_path):
    col = Collection.create(tmp_path / "c", SCHEMA, encoder=None)
    col.add(make_nodes(5))
    col.publish(retention=1)
    col.search(WORDS[0], mode="bm25")  # an engine on that root, cached by the collection
    _publish_past(col, 2)
    assert [r.id for r in col.roots()] == [col.root]


def test_a_killed_readers_hold_is_cleared(tmp_path):
    col = Collection.create(tmp_path / "c", SCHEMA, encoder=None)
    col.add(make_nodes(5))
    old = col.publish()
    code = (
        "import sys, time\n"
        "from cogitave import Collection\n"
        "c = Collection.open(sys.argv[1])\n"
        "print(c.root, flush=True)\n"
        "time.sleep(60)\n"
    )
    store = RootStore(tmp_path / "c")
    args = [sys.executable, "-c", code, str(tmp_path / "c")]
    with subprocess.Popen(args, stdout=subprocess.PIPE, text=True) as proc:
        try:
            assert proc.stdout is not None and proc.stdout.readline().strip() == old
            _publish_past(col, 2)
            assert old in {r.id for r in store.list_roots()}  # another process holds it
        finally:
            os.kill(proc.pid, signal.SIGKILL)
    _publish_past(col, 1, start=200)
    assert old not in {r.id for r in store.list_roots()}  # the kernel dropped the dead lock
    assert not [p for p in store.readers.iterdir() if p.name.startswith(old)]


def test_no_hold_where_readers_cannot_write(tmp_path):
    col = Collection.create(tmp_path / "c", SCHEMA, encoder=None)
    col.add(make_nodes(5))
    col.publish()
    del col
    gc.collect()
    store = RootStore(tmp_path / "c")
    store.readers.rmdir()  # empty: the only reader is gone
    store.readers.write_text("not a folder")  # as a read-only mount refuses the folder
    assert store.pin(store.head()) is None
    assert Collection.open(tmp_path / "c").search(WORDS[0], mode="bm25").uids  # reads still work
    assert store.held() == set()
