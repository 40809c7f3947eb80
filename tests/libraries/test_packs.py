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
from cogitave.libraries import packs
from cogitave.libraries.collection import LibraryCollection
from cogitave.libraries.packs import is_pack
from tests.conftest import SCHEMA, make_nodes
from tests.helpers import run_cli


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


# -- crafted packs: every field and name checked before anything is written -----------------------
def members(pack: Path) -> list[tuple[tarfile.TarInfo, bytes]]:
    with tarfile.open(pack, "r:*") as tar:
        return [(m, tar.extractfile(m).read()) for m in tar]  # type: ignore[union-attr]


def craft(  # type: ignore[no-untyped-def]
    pack: Path, out: Path, *, head=None, root=None, objects=None, extra=()
) -> Path:
    """A copy of ``pack`` with pack.json passed through ``head(dict)``, root.json through
    ``root(dict)`` (its id recomputed into pack.json), object bytes through
    ``objects(name, data)``, and ``extra`` (name, bytes) members appended."""
    got = members(pack)
    head_d = json.loads(got[0][1])
    root_bytes = got[1][1]
    if root is not None:
        root_d = json.loads(root_bytes)
        root(root_d)
        root_bytes = json.dumps(root_d, sort_keys=True, separators=(",", ":")).encode()
        head_d["root"] = hashlib.sha256(root_bytes).hexdigest()
    if head is not None:
        head(head_d)
    deep = b"[" * 100_000 + b'"x"' + b"]" * 100_000
    rows = [
        ("pack.json", json.dumps(head_d).encode().replace(b'"__DEEP__"', deep)),
        ("root.json", root_bytes),
    ]
    for m, data in got[2:]:
        rows.append((m.name, objects(m.name, data) if objects else data))
    rows.extend(extra)
    with tarfile.open(out, "w:gz") as tar:
        for name, data in rows:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return out


def refused(pack: Path, tmp_path: Path, match: str) -> InputError:
    """Import ``pack`` into a new collection: refused with ``match``, nothing left behind."""
    target = LibraryCollection.create(tmp_path / "c", encoder=hashed.NAME)
    with pytest.raises(InputError, match=match) as info:
        target.import_pack(pack)
    assert target.libraries() == []
    assert sorted(p.name for p in (tmp_path / "c" / "libs").iterdir()) == []
    message = info.value.message
    assert "\n" not in message and "\x1b" not in message and len(message) <= 700
    return info.value


def test_a_root_naming_a_lexical_file_outside_its_snapshot_is_refused(
    packed: tuple[LibraryCollection, Path], tmp_path: Path
) -> None:
    def evil(root: dict) -> None:  # type: ignore[type-arg]
        files = root["lexical"]["files"]
        name = next(iter(files))
        files["../../x"] = files.pop(name)

    bad = craft(packed[1], tmp_path / "evil.cogpack", root=evil)
    refused(bad, tmp_path, r"lexical file '\.\./\.\./x': not a file name")


def test_a_root_naming_a_non_hash_object_is_refused(
    packed: tuple[LibraryCollection, Path], tmp_path: Path
) -> None:
    def evil(root: dict) -> None:  # type: ignore[type-arg]
        root["segments"][0]["nodes_obj"] = "../../../etc/passwd"

    bad = craft(packed[1], tmp_path / "evil.cogpack", root=evil)
    refused(bad, tmp_path, "as an object")


def test_a_ten_megabyte_source_is_refused(
    packed: tuple[LibraryCollection, Path], tmp_path: Path
) -> None:
    def huge(head: dict) -> None:  # type: ignore[type-arg]
        head["source"] = "x" * 10_000_000

    bad = craft(packed[1], tmp_path / "huge.cogpack", head=huge)
    refused(bad, tmp_path, "holds a string of 10000000 characters")


def test_terminal_escapes_in_a_pack_are_refused_and_never_echoed(
    packed: tuple[LibraryCollection, Path], tmp_path: Path
) -> None:
    def ansi(head: dict) -> None:  # type: ignore[type-arg]
        head["source"] = "/kit\x1b[2J\x1b]0;owned\x07"

    bad = craft(packed[1], tmp_path / "ansi.cogpack", head=ansi)
    err = refused(bad, tmp_path, "'source' is not a valid source")
    assert "\\x1b[2J" in err.message


def test_an_object_the_root_does_not_name_is_refused(
    packed: tuple[LibraryCollection, Path], tmp_path: Path
) -> None:
    junk = b"not named by the root"
    name = "objects/" + hashlib.sha256(junk).hexdigest()
    bad = craft(packed[1], tmp_path / "extra.cogpack", extra=[(name, junk)])
    refused(bad, tmp_path, "without its root naming it")


def test_an_object_larger_than_declared_is_refused_without_reading_it(
    packed: tuple[LibraryCollection, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A small pack whose object decompresses to 64 MB where pack.json declares its real
    size: refused at its header, and the import reads a bounded part of the stream."""
    target_name: list[str] = []

    def grow(name: str, data: bytes) -> bytes:
        if target_name:
            return data
        target_name.append(name)
        return data + bytes(64 * 2**20)

    bad = craft(packed[1], tmp_path / "bomb.cogpack", objects=grow)
    assert bad.stat().st_size < 2 * 2**20
    read: list[int] = []
    real = packs._Stream.read

    def counted(self: packs._Stream, n: int = -1) -> bytes:
        data = real(self, n)
        read.append(len(data))
        return data

    monkeypatch.setattr(packs._Stream, "read", counted)
    refused(bad, tmp_path, "declares")
    assert sum(read) < 8 * 2**20  # the 64 MB member was never streamed


def test_an_object_is_written_only_up_to_its_declared_size() -> None:
    class Sink(io.RawIOBase):
        written = 0

        def write(self, b: bytes) -> int:  # type: ignore[override]
            self.written += len(b)
            return len(b)

    sink = Sink()
    with pytest.raises(ValueError, match="more than 1000 bytes"):
        packs.copy_bounded(io.BytesIO(bytes(10 * 2**20)), sink, 1000)  # type: ignore[arg-type]
    assert sink.written <= 1000
    sink = Sink()
    assert packs.copy_bounded(io.BytesIO(b"abc"), sink, 3)[0] == 3  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("field", "value", "match"),
    [
        ("objects", "many", "'objects' is a string, not an integer"),
        ("name", 5, "'name' is an integer, not a string"),
        ("commit", {"a": 1}, "'commit' is an object, not a string"),
        ("object_sizes", [], "'object_sizes' is a list"),
        ("bytes", -1, "'bytes' is -1"),
        ("source", [[[[[[[["deep"]]]]]]]] * 1, None),
        ("source", "nest", "nested too deeply"),
        ("unknown_key", 1, "unknown keys unknown_key"),
        ("version", "1.0/../..", "not a version"),
        ("library", "other@1.2.0", "'library' is not kit@1.2.0"),
    ],
)
def test_a_pack_json_of_wrong_types_or_depth_is_one_error(
    packed: tuple[LibraryCollection, Path], tmp_path: Path, field: str, value: object, match: str
) -> None:
    def change(head: dict) -> None:  # type: ignore[type-arg]
        head[field] = "__DEEP__" if value == "nest" else value

    bad = craft(packed[1], tmp_path / "typed.cogpack", head=change)
    refused(bad, tmp_path, match or "'source' is a list, not a string")


def test_a_truncated_pack_is_one_line_exit_2_and_leaves_nothing(
    packed: tuple[LibraryCollection, Path], tmp_path: Path
) -> None:
    data = packed[1].read_bytes()
    for cut in (len(data) // 2, len(data) - 9, 40):
        short = tmp_path / f"short-{cut}.cogpack"
        short.write_bytes(data[:cut])
        col = tmp_path / f"col-{cut}"
        res = run_cli("index", "-c", str(col), str(short), "-q", ok=False)
        assert res.returncode == 2, res
        lines = res.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("error[bad_input]: the pack "), lines
        assert "damaged or truncated" in lines[0] or "truncated" in lines[0], lines
        assert not col.exists()
    # into an existing collection: it is as it was, with no staging folder left
    col = tmp_path / "held"
    run_cli("index", "-c", str(col), str(packed[1]), "-q")
    before = sorted(p.name for p in (col / "libs").iterdir())
    res = run_cli("index", "-c", str(col), str(tmp_path / f"short-{len(data) // 2}.cogpack"),
                  "-q", "--replace", ok=False)  # fmt: skip
    assert res.returncode == 2
    assert sorted(p.name for p in (col / "libs").iterdir()) == before


@pytest.mark.parametrize(
    ("change", "match"),
    [
        (
            lambda r: r["segments"][0].__setitem__("nids_obj", [r["segments"][0]["nids_obj"]]),
            "its root does not open",
        ),
        (
            lambda r: [e.__setitem__("count", "x") for v in r["vectors"].values() for e in v],
            "its root does not open",
        ),
        (lambda r: r["segments"][0].__setitem__("count", "many"), "its root does not open"),
        (lambda r: r["counts"].__setitem__("nodes", 7), "its root does not open"),
        (lambda r: r.__setitem__("schema", {"dimensions": 3}), "schema does not load"),
        (lambda r: r.__setitem__("parent", "../HEAD"), "parent that is not a root id"),
        (lambda r: r["lexical"].__setitem__("files", {"meta.json": 5}), "as an object"),
    ],
)
def test_a_root_of_wrong_shape_is_one_error(
    packed: tuple[LibraryCollection, Path], tmp_path: Path, change, match: str
) -> None:  # type: ignore[no-untyped-def]
    bad = craft(packed[1], tmp_path / "shape.cogpack", root=change)
    refused(bad, tmp_path, match)
