"""Content roots: hashing, HEAD, retention, the writer lock, corruption detection."""

from __future__ import annotations

import json

import pytest

from cogitave import Collection
from cogitave.errors import ConflictError, CorruptionError, NotFoundError
from cogitave.store.roots import RootStore, sha256_bytes
from tests.conftest import SCHEMA, make_nodes


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
