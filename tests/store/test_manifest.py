"""The typed manifest: the JSON layout on disk round-trips exactly, ids do not move."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from cogitave import Collection
from cogitave.distributed import hashed
from cogitave.errors import CorruptionError
from cogitave.store.manifest import Manifest
from cogitave.store.roots import RootStore, sha256_bytes
from tests.conftest import SCHEMA, make_nodes


@pytest.fixture(scope="module")
def published(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A collection with every kind of root entry: an encoder (vectors, the text cache), a
    source, a delete, and its first (empty) root still retained."""
    path = tmp_path_factory.mktemp("manifest") / "c"
    col = Collection.create(path, SCHEMA, encoder=hashed.register())
    nodes = make_nodes(12)
    col.sync("docs", nodes)
    col.delete([nodes[0].uid])
    col.publish()
    return path


def root_files(path: Path) -> list[bytes]:
    return [p.read_bytes() for p in sorted((path / "roots").glob("*.json"))]


def head_dict(path: Path) -> dict[str, Any]:
    store = RootStore(path)
    return json.loads((store.roots / f"{store.head()}.json").read_bytes())


def test_every_root_round_trips_to_the_same_json(published: Path) -> None:
    files = root_files(published)
    assert len(files) == 3
    for data in files:
        d = json.loads(data)
        m = Manifest.from_dict(d)
        assert m.to_dict() == d
        assert m.to_json() == data
        assert not m.extra and not m.lexical_extra


def test_the_first_root_lacks_what_a_publish_adds(published: Path) -> None:
    store = RootStore(published)
    first = store.list_roots()[-1]
    assert first.parent is None
    m = store.read_root(first.id)
    assert m.absent == {"stats_obj", "graph", "text_vectors", "sources"}
    assert m.node_count == 0 and m.stats_obj is None and m.sources == {}
    # a key set by the writer is written, even to null (a publish without cached vectors)
    assert "text_vectors" in m.with_(text_vectors=None).to_dict()
    assert "text_vectors" not in dataclasses.replace(m, next_nid=1).to_dict()


def test_typed_views_of_a_published_root(published: Path) -> None:
    col = Collection.open(published)
    m = col.snapshot.manifest
    assert isinstance(m, Manifest)
    assert m.node_count == len(col) == 11
    assert m.encoder_name == hashed.NAME and m.encoder_dim == 64
    assert m.vector_rows == {d: sum(e["count"] for e in v) for d, v in m.vectors.items()}
    assert m.vector_rows and m.edge_count == m.counts["edges"]
    assert set(m.sources) == {"docs"} and m.parent is not None
    assert set(m.objects()) <= {p.name for p in (published / "objects").iterdir()}


def test_a_read_and_write_keeps_the_root_id(published: Path) -> None:
    store = RootStore(published)
    for r in store.list_roots():
        assert store.write_root(store.read_root(r.id)) == r.id


def test_unknown_keys_survive(published: Path, tmp_path: Path) -> None:
    d = head_dict(published)
    d["future"] = {"what_obj": d["stats_obj"], "n": [1, 2]}
    d["lexical"]["layout"] = "v9"
    m = Manifest.from_dict(d)
    assert m.extra == {"future": d["future"]} and m.lexical_extra == {"layout": "v9"}
    assert m.to_dict() == d
    assert d["stats_obj"] in list(m.objects())
    # through the store: written, read back, carried into the next publish's root
    store = RootStore(published)
    rid = store.write_root(m)
    assert (store.roots / f"{rid}.json").read_bytes() == m.to_json()
    assert store.read_root(rid) == m
    assert m.with_(next_nid=m.next_nid + 1).to_dict()["future"] == d["future"]
    (store.roots / f"{rid}.json").unlink()


@pytest.mark.parametrize("key", ["schema", "lexical", "segments", "next_nid"])
def test_a_missing_required_key_is_corruption(published: Path, key: str) -> None:
    d = head_dict(published)
    del d[key]
    with pytest.raises(CorruptionError, match=repr(key)):
        Manifest.from_dict(d)


@pytest.mark.parametrize(
    "key, value",
    [("segments", {}), ("next_nid", "7"), ("next_nid", True), ("lexical", {"file": {}}),
     ("counts", None), ("parent", 3)],
)  # fmt: skip
def test_a_value_of_the_wrong_type_is_corruption(published: Path, key: str, value: Any) -> None:
    d = head_dict(published)
    d[key] = value
    with pytest.raises(CorruptionError):
        Manifest.from_dict(d)


def test_read_root_names_the_file_of_a_bad_manifest(published: Path) -> None:
    store = RootStore(published)
    d = head_dict(published)
    del d["segments"]
    data = json.dumps(d, sort_keys=True, separators=(",", ":")).encode()
    rid = sha256_bytes(data)
    p = store.roots / f"{rid}.json"
    p.write_bytes(data)
    try:
        with pytest.raises(CorruptionError, match="'segments'") as e:
            store.read_root(rid)
        assert e.value.details == {"file": str(p)} and str(p) in e.value.message
        assert rid not in {r.id for r in store.list_roots()}
    finally:
        p.unlink()
    with pytest.raises(CorruptionError, match=r"x\.json has format None"):
        Manifest.from_json(b"[1]", source="x.json")
