"""Index packs: a library version as one file, imported without embedding anything again,
refused whole when damaged, of another encoder, or naming anything but its own objects."""

from __future__ import annotations

import hashlib
import io
import json
import tarfile
from dataclasses import replace
from pathlib import Path

import pytest

from cogitave import SearchRequest
from cogitave.distributed import hashed
from cogitave.errors import ConflictError, EncoderError, InputError
from cogitave.libraries.collection import LibraryCollection
from cogitave.libraries.packs import is_pack
from tests.conftest import SCHEMA, make_nodes


def pages(n: int, seed: int) -> list:
    return [
        replace(node, uid=f"guide/p{i:03d}", kind="page")
        for i, node in enumerate(make_nodes(n, seed=seed))
    ]


@pytest.fixture(scope="module")
def packed(tmp_path_factory: pytest.TempPathFactory) -> tuple[LibraryCollection, Path]:
    tmp = tmp_path_factory.mktemp("packs")
    lib = LibraryCollection.create(tmp / "src", encoder=hashed.register())
    lib.sync_library("Kit", "1.2.0", pages(40, 1), schema=SCHEMA, source="/kit", commit="abc123")
    out = tmp / "kit-1.2.0.cogpack"
    info = lib.export_pack("kit@1.2.0", out)
    assert info.objects > 5 and info.encoder == hashed.NAME and is_pack(out)
    return lib, out


def test_a_pack_round_trips_without_embedding(
    packed: tuple[LibraryCollection, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    lib, pack = packed

    def never(*a: object, **k: object) -> object:
        raise AssertionError("an import must not embed")

    monkeypatch.setattr(hashed.HashedBowEncoder, "encode", never)
    other = LibraryCollection.create(tmp_path / "dst", encoder=hashed.NAME)
    entry = other.import_pack(pack)
    assert (entry.ref, entry.source, entry.commit, entry.nodes) == (
        "kit@1.2.0",
        "/kit",
        "abc123",
        40,
    )
    monkeypatch.undo()
    for q in ("alpha gamma", "river forest"):
        for mode in ("bm25", "hybrid"):
            a = lib.search(SearchRequest(query=q, mode=mode))
            b = other.search(SearchRequest(query=q, mode=mode))
            assert [(h.uid, h.score) for h in a.results] == [(h.uid, h.score) for h in b.results]


def test_a_new_collection_takes_the_packs_encoder(
    packed: tuple[LibraryCollection, Path], tmp_path: Path
) -> None:
    fresh = LibraryCollection.create(tmp_path / "fresh")  # the default encoder, nothing held
    fresh.import_pack(packed[1])
    assert fresh.manifest.encoder == hashed.NAME


def test_a_pack_of_another_encoder_is_refused(
    packed: tuple[LibraryCollection, Path], tmp_path: Path
) -> None:
    other = LibraryCollection.create(tmp_path / "c", encoder=None)
    other.sync_library("x", "1", pages(3, 9), schema=SCHEMA, source="/x")
    with pytest.raises(EncoderError, match="not comparable"):
        other.import_pack(packed[1])
    assert [e.ref for e in other.libraries()] == ["x@1"]
    assert not [p for p in (tmp_path / "c" / "libs").iterdir() if p.name.startswith(".import")]


def test_a_pack_of_another_graph_of_the_same_encoder_is_refused(tmp_path: Path) -> None:
    """One query vector serves every library of a collection: a pack whose vectors came from
    another graph of the same model (the shipped one, here) is refused, naming both."""
    src = LibraryCollection.create(tmp_path / "src")  # the default encoder and graph
    src.sync_library("Kit", "1.0", pages(3, 1), schema=SCHEMA, source="/kit")
    pack = tmp_path / "kit.cogpack"
    src.export_pack("kit@1.0", pack)
    with tarfile.open(pack, "r:*") as tar:
        root = json.loads(tar.extractfile("root.json").read())  # type: ignore[union-attr]
    ours = root["encoder"]["graph"]
    root["encoder"]["graph"] = "shipped"
    new_root = json.dumps(root).encode()
    new_id = hashlib.sha256(new_root).hexdigest()

    def regraph(info: tarfile.TarInfo, data: bytes):  # type: ignore[no-untyped-def]
        if info.name == "root.json":
            data = new_root
        elif info.name == "pack.json":
            data = json.dumps({**json.loads(data), "root": new_id}).encode()
        yield info, data

    shipped = rewrite(pack, tmp_path / "shipped.cogpack", regraph)
    dst = LibraryCollection.create(tmp_path / "dst")
    dst.sync_library("x", "1", pages(3, 9), schema=SCHEMA, source="/x")
    with pytest.raises(EncoderError, match=f"graph 'shipped'.*graph '{ours}'"):
        dst.import_pack(shipped)
    assert [e.ref for e in dst.libraries()] == ["x@1"]
    assert dst.import_pack(pack).ref == "kit@1.0"  # the same graph is taken


def rewrite(src: Path, dst: Path, change) -> Path:  # type: ignore[no-untyped-def]
    """A copy of a pack with each member passed through ``change(info, data)``."""
    with tarfile.open(src, "r:*") as tin, tarfile.open(dst, "w:gz") as tout:
        for m in tin:
            data = tin.extractfile(m).read()  # type: ignore[union-attr]
            for info, payload in change(m, data):
                if payload is None:
                    tout.addfile(info)
                else:
                    info.size = len(payload)
                    tout.addfile(info, io.BytesIO(payload))
    return dst


@pytest.mark.parametrize(
    "damage",
    ["flipped byte", "missing object", "traversal name", "symlink", "extra file", "root hash"],
)
def test_a_damaged_or_hostile_pack_is_refused_whole(
    packed: tuple[LibraryCollection, Path], tmp_path: Path, damage: str
) -> None:
    first_object: list[str] = []

    def change(m: tarfile.TarInfo, data: bytes):  # type: ignore[no-untyped-def]
        if m.name.startswith("objects/") and not first_object:
            first_object.append(m.name)
            if damage == "flipped byte":
                return [(m, bytes([data[0] ^ 1]) + data[1:])]
            if damage == "missing object":
                return []
            if damage == "traversal name":
                evil = tarfile.TarInfo("objects/../../../escaped")
                return [(evil, b"x"), (m, data)]
            if damage == "symlink":
                link = tarfile.TarInfo("objects/" + "0" * 64)
                link.type, link.linkname = tarfile.SYMTYPE, "/etc/passwd"
                return [(link, None), (m, data)]
            if damage == "extra file":
                return [(tarfile.TarInfo("notes.txt"), b"hi"), (m, data)]
        if m.name == "root.json" and damage == "root hash":
            return [(m, data.replace(b"{", b"{ ", 1))]
        return [(m, data)]

    bad = rewrite(packed[1], tmp_path / "bad.cogpack", change)
    target = LibraryCollection.create(tmp_path / "c", encoder=hashed.NAME)
    with pytest.raises(InputError):
        target.import_pack(bad)
    assert target.libraries() == []
    assert not (tmp_path / "escaped").exists() and not (tmp_path / "c" / "escaped").exists()
    assert [p.name for p in (tmp_path / "c" / "libs").iterdir()] == []


def test_a_version_from_another_source_needs_replace(
    packed: tuple[LibraryCollection, Path], tmp_path: Path
) -> None:
    target = LibraryCollection.create(tmp_path / "c", encoder=hashed.NAME)
    target.sync_library("Kit", "1.2.0", pages(5, 3), schema=SCHEMA, source="/elsewhere")
    with pytest.raises(ConflictError, match="--replace"):
        target.import_pack(packed[1])
    entry = target.import_pack(packed[1], replace=True)
    assert entry.source == "/kit" and len(target) == 40
    res = target.search(SearchRequest(query="alpha", limit=100))
    assert len({h.uid for h in res.results}) == len(res.results)


def test_not_a_pack(tmp_path: Path) -> None:
    junk = tmp_path / "junk.cogpack"
    junk.write_bytes(b"not a tar")
    target = LibraryCollection.create(tmp_path / "c", encoder=hashed.NAME)
    with pytest.raises(InputError, match="not a pack"):
        target.import_pack(junk)
