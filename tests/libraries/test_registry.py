"""A registry of packs: published from the command line into a folder (index.json updated
under a lock), imported from the folder or over http on 127.0.0.1 without embedding anything
again, each pack's SHA-256 checked before the import; hostile indexes, tampered packs and
packs of another encoder refused with the reason, and nothing left behind."""

from __future__ import annotations

import contextlib
import hashlib
import json
import shutil
import threading
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from cogitave import SearchRequest
from cogitave.distributed import hashed
from cogitave.errors import ConflictError, CorruptionError, IngestError, InputError, NotFoundError
from cogitave.libraries import registry as reg
from cogitave.libraries.collection import LibraryCollection
from tests.conftest import SCHEMA, make_nodes
from tests.helpers import run_cli
from tests.ingest.web.helpers import Route, serve


def pages(n: int, seed: int) -> list:
    return [
        replace(node, uid=f"guide/p{i:03d}", kind="page")
        for i, node in enumerate(make_nodes(n, seed=seed))
    ]


@pytest.fixture(scope="module")
def published(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A collection holding Kit 1.0.0 and 2.0.0 (the hashed encoder), both published with
    ``pack --registry`` into one registry folder."""
    tmp = tmp_path_factory.mktemp("registry")
    src = tmp / "src"
    lib = LibraryCollection.create(src, encoder=hashed.register())
    lib.sync_library("Kit", "1.0.0", pages(30, 1), schema=SCHEMA, source="/kit1")
    lib.sync_library("Kit", "2.0.0", pages(30, 2), schema=SCHEMA, source="/kit2")
    folder = tmp / "registry"
    for ref in ("kit@1.0.0", "kit@2.0.0"):
        res = run_cli("pack", "-c", str(src), "--library", ref, "--registry", str(folder))
        assert f"published {ref}" in res.stdout
    return src, folder


def listing(path: Path) -> set[str]:
    """Every file under ``path`` but the pins of readers in this process (released when
    they are collected)."""
    if not path.exists():
        return set()
    return {str(p.relative_to(path)) for p in path.rglob("*") if "readers" not in p.parts}


def no_embedding(monkeypatch: pytest.MonkeyPatch) -> None:
    def never(*a: object, **k: object) -> object:
        raise AssertionError("an import from a registry must not embed")

    monkeypatch.setattr(hashed.HashedBowEncoder, "encode", never)


def test_publish_writes_the_packs_and_their_index(published: tuple[Path, Path]) -> None:
    _, folder = published
    index = json.loads((folder / "index.json").read_text())
    packs = sorted(index["packs"], key=lambda p: p["version"])
    assert [(p["library"], p["version"], p["encoder"]) for p in packs] == [
        ("Kit", "1.0.0", hashed.NAME),
        ("Kit", "2.0.0", hashed.NAME),
    ]
    for p in packs:
        assert p["url"] == f"kit-{p['version']}.cogpack"
        data = (folder / p["url"]).read_bytes()
        assert hashlib.sha256(data).hexdigest() == p["sha256"]
    assert {p.name for p in folder.iterdir()} == {
        "index.json",
        ".index.lock",
        "kit-1.0.0.cogpack",
        "kit-2.0.0.cogpack",
    }


def test_publishing_again_replaces_the_entry_and_o_writes_a_copy(
    published: tuple[Path, Path], tmp_path: Path
) -> None:
    src, folder = published
    again = tmp_path / "again"
    shutil.copytree(folder, again)
    copy = tmp_path / "out" / "kit.cogpack"
    args = ("pack", "-c", str(src), "--library", "kit@2.0.0", "--registry", str(again))
    run_cli(*args, "-o", str(copy))
    packs = json.loads((again / "index.json").read_text())["packs"]
    assert sorted(p["version"] for p in packs) == ["1.0.0", "2.0.0"]
    mine = next(p for p in packs if p["version"] == "2.0.0")
    assert hashlib.sha256(copy.read_bytes()).hexdigest() == mine["sha256"]
    bad = run_cli("pack", "-c", str(src), "--library", "kit@2.0.0", ok=False)
    assert bad.returncode != 0 and "-o FILE, --registry FOLDER" in bad.stderr


def test_a_publish_that_would_make_the_index_unreadable_changes_nothing(
    published: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, folder = published
    full = tmp_path / "full"
    shutil.copytree(folder, full)
    before = {p.name: p.read_bytes() for p in full.iterdir()}
    monkeypatch.setattr(reg, "MAX_INDEX_BYTES", len(before["index.json"]) + 10)
    src = tmp_path / "src"
    LibraryCollection.create(src, encoder=hashed.NAME).sync_library(
        "Kit", "3.0.0", pages(5, 3), schema=SCHEMA, source="/kit3"
    )
    with pytest.raises(InputError, match="start another one"):
        reg.publish(src, "kit@3.0.0", full)
    assert {p.name: p.read_bytes() for p in full.iterdir()} == before


def test_import_from_a_folder_embeds_nothing_and_searches_as_the_original(
    published: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    src, folder = published
    dst = tmp_path / "dst"
    no_embedding(monkeypatch)
    res = run_cli("index", "-c", str(dst), "--registry", str(folder), "--library", "Kit@1.0.0")
    assert "imported kit@1.0.0 from registry" in res.stdout
    monkeypatch.undo()
    other = LibraryCollection.open(dst)
    (entry,) = other.manifest.libraries
    assert (entry.ref, entry.source, entry.nodes) == ("kit@1.0.0", f"registry:{folder}", 30)
    assert not [p for p in dst.iterdir() if p.name.startswith(".registry-")]
    original = LibraryCollection.open(src)
    for q in ("alpha gamma", "river forest"):
        for mode in ("bm25", "hybrid"):
            req = SearchRequest(query=q, mode=mode, libraries=("kit@1.0.0",))
            a, b = original.search(req), other.search(req)
            assert a.results and [(h.uid, h.score) for h in a.results] == [
                (h.uid, h.score) for h in b.results
            ]


def test_import_over_http_from_a_local_server(
    published: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, folder = published
    no_embedding(monkeypatch)
    with serve(folder=folder) as s:
        got = reg.import_from_registry(tmp_path / "a", s.url, "kit", "2.0.0")
        also = reg.import_from_registry(tmp_path / "b", s.url + "/index.json", "kit", "1.0.0")
        assert s.hits["/index.json"] == 2
        assert s.hits["/kit-2.0.0.cogpack"] == 1 and s.hits["/kit-1.0.0.cogpack"] == 1
    assert got.library.ref == "kit@2.0.0" and got.library.source == f"registry:{s.url}"
    assert got.bytes == (folder / "kit-2.0.0.cogpack").stat().st_size
    assert also.library.ref == "kit@1.0.0"


def test_a_version_held_from_elsewhere_is_replaced_only_when_asked(
    published: tuple[Path, Path], tmp_path: Path
) -> None:
    _, folder = published
    dst = tmp_path / "dst"
    LibraryCollection.create(dst, encoder=hashed.NAME).sync_library(
        "Kit", "2.0.0", pages(5, 7), schema=SCHEMA, source="/local/kit"
    )
    with pytest.raises(ConflictError, match="--replace"):
        reg.import_from_registry(dst, folder, "kit", "2.0.0")
    done = reg.import_from_registry(dst, folder, "kit", "2.0.0", replace=True)
    again = reg.import_from_registry(dst, folder, "kit", "2.0.0")  # the same registry: a refresh
    assert done.library.source == again.library.source == f"registry:{folder}"
    assert again.library.nodes == 30


def test_a_version_the_registry_lacks_lists_what_it_holds(
    published: tuple[Path, Path], tmp_path: Path
) -> None:
    _, folder = published
    dst = tmp_path / "dst"
    bad = run_cli("index", "-c", str(dst), "--registry", str(folder), "--library", "kit@3.0.0",
                  ok=False)  # fmt: skip
    assert bad.returncode != 0
    assert "holds no pack of kit@3.0.0" in bad.stderr
    assert f"1.0.0 ({hashed.NAME}), 2.0.0 ({hashed.NAME})" in bad.stderr
    assert not dst.exists()  # a collection made for the import is gone again
    assert reg.fetch_from_registries(dst, [str(folder)], "kit", "3.0.0") is None
    assert reg.fetch_from_registries(dst, [str(folder)], "nope", "1") is None
    assert not dst.exists()


def test_a_tampered_pack_is_refused_before_the_import(
    published: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, folder = published
    evil = tmp_path / "evil"
    shutil.copytree(folder, evil)
    pack = evil / "kit-2.0.0.cogpack"
    data = bytearray(pack.read_bytes())
    data[len(data) // 2] ^= 0xFF  # the same size, another hash
    pack.write_bytes(bytes(data))
    held = tmp_path / "held"
    reg.import_from_registry(held, str(folder), "kit", "1.0.0")
    before = listing(held)

    def never(*a: object, **k: object) -> object:
        raise AssertionError("a pack that fails its hash must never reach the import")

    monkeypatch.setattr(LibraryCollection, "import_pack", never)
    for dst in (held, tmp_path / "fresh"):
        with pytest.raises(CorruptionError, match="does not hash to the sha256"):
            reg.import_from_registry(dst, str(evil), "kit", "2.0.0")
    assert listing(held) == before
    assert not (tmp_path / "fresh").exists()
    with serve(folder=evil) as s, pytest.raises(CorruptionError, match="refused before import"):
        reg.fetch_from_registries(held, [str(tmp_path / "none"), s.url], "kit", "2.0.0")
    assert listing(held) == before


def test_a_pack_that_is_not_what_the_index_says_is_refused(
    published: tuple[Path, Path], tmp_path: Path
) -> None:
    """The index names kit 2.0.0 but points at kit 1.0.0's pack (its hash right): refused
    before the import, so a registry cannot hand out another version than the one asked."""
    _, folder = published
    lying = tmp_path / "lying"
    shutil.copytree(folder, lying)
    index = json.loads((lying / "index.json").read_text())
    one = next(p for p in index["packs"] if p["version"] == "1.0.0")
    two = next(p for p in index["packs"] if p["version"] == "2.0.0")
    two.update(url=one["url"], sha256=one["sha256"])
    (lying / "index.json").write_text(json.dumps(index))
    with pytest.raises(CorruptionError, match=r"the pack holds kit@1\.0\.0"):
        reg.import_from_registry(tmp_path / "dst", lying, "kit", "2.0.0")
    assert not (tmp_path / "dst").exists()


def write_index(folder: Path, packs: Any) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "index.json").write_text(json.dumps({"packs": packs}))
    return folder


GOOD = {"library": "kit", "version": "1.0.0", "url": "kit-1.0.0.cogpack", "sha256": "a" * 64,
        "encoder": hashed.NAME}  # fmt: skip


@pytest.mark.parametrize(
    ("change", "why"),
    [
        ({"url": "../../etc/passwd"}, "leaves the registry"),
        ({"url": "a/../../etc/passwd"}, "leaves the registry"),
        ({"url": "%2e%2e/passwd"}, "leaves the registry"),
        ({"url": "/etc/passwd"}, "leading '/'"),
        ({"url": "file:///etc/passwd"}, "not http(s)"),
        ({"url": "x.cogpack?a=1"}, "a query"),
        ({"library": 5}, "library is not a string"),
        ({"sha256": "abc"}, "64 lower-case hex"),
        ({"version": "1.0/../x"}, "not a version"),
        ({"encoder": ["x"]}, "encoder is neither"),
        ({"library": "k" * 10_000}, "longer than"),
        ({"url": "x" * 10_000}, "longer than"),
        ({"extra": 1}, "unknown field"),
    ],
)
def test_a_bad_entry_is_skipped_and_said(tmp_path: Path, change: dict[str, Any], why: str) -> None:
    folder = write_index(tmp_path / "r", [{**GOOD, "version": "0.9"}, {**GOOD, **change}])
    r = reg.open_registry(str(folder))
    assert [e.version for e in r.entries] == ["0.9"]
    assert len(r.skipped) == 1 and why in r.skipped[0] and r.skipped[0].startswith("entry 1")
    with pytest.raises(NotFoundError, match=r"holds no pack of kit@1\.0\.0"):
        reg.import_from_registry(tmp_path / "dst", folder, "kit", "1.0.0")


@pytest.mark.parametrize(
    ("body", "why"),
    [
        (b"not json", "is not JSON"),
        (b"[]", 'not an object with a "packs" list'),
        (b'{"packs": {}}', 'not an object with a "packs" list'),
        (b'{"packs": [' + b"{}," * 100_000 + b"{}]}", "names 100,001 packs"),
        (b'{"packs": []}' + b" " * (8 * 2**20), "larger than"),
    ],
)
def test_a_hostile_index_is_one_clear_error(tmp_path: Path, body: bytes, why: str) -> None:
    folder = tmp_path / "r"
    folder.mkdir()
    (folder / "index.json").write_bytes(body)
    with pytest.raises(CorruptionError, match=why) as e:
        reg.open_registry(str(folder))
    assert str(folder) in str(e.value) and "\n" not in str(e.value)
    with serve(folder=folder) as s, pytest.raises(CorruptionError, match=why):
        reg.open_registry(s.url)


def test_a_pack_that_is_a_symlink_out_of_the_registry_is_refused(tmp_path: Path) -> None:
    secret = tmp_path / "secret.cogpack"
    secret.write_bytes(b"not yours")
    folder = write_index(
        tmp_path / "r", [{**GOOD, "sha256": hashlib.sha256(b"not yours").hexdigest()}]
    )
    (folder / "kit-1.0.0.cogpack").symlink_to(secret)
    with pytest.raises(CorruptionError, match="leads outside the registry"):
        reg.import_from_registry(tmp_path / "dst", folder, "kit", "1.0.0")
    assert not (tmp_path / "dst").exists()


def test_a_registry_redirecting_out_of_http_is_refused(tmp_path: Path) -> None:
    routes = {"/index.json": Route(status=302, headers={"Location": "file:///etc/passwd"},
                                   etag=False)}  # fmt: skip
    with serve(routes) as s, pytest.raises(IngestError, match="refused a redirect"):
        reg.open_registry(s.url)
    with serve({}) as s, pytest.raises(NotFoundError, match="HTTP 404"):
        reg.open_registry(s.url)


def test_a_public_registry_never_redirects_into_a_private_network(
    published: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The registry on 127.0.0.1 plays a public host (the policy is told so); its index
    redirects to ``localhost``, a private name: refused before a byte is asked of it."""
    from cogitave.ingest.web import policy

    monkeypatch.setattr(policy, "is_private", lambda host, resolve=None: host != "127.0.0.1")
    _, folder = published
    with serve(folder=folder) as target:
        port = target.url.rsplit(":", 1)[1]
        private = f"http://localhost:{port}/index.json"
        moved = {"/index.json": Route(status=302, headers={"Location": private}, etag=False)}
        with serve(moved) as s, pytest.raises(IngestError, match="private address"):
            reg.open_registry(s.url)
        assert target.hits["/index.json"] == 0
        assert reg.open_registry(target.url).entries  # no redirect: read


def test_a_pack_of_another_encoder_is_not_a_match(
    published: tuple[Path, Path], tmp_path: Path
) -> None:
    _, folder = published
    bm25 = tmp_path / "bm25"
    LibraryCollection.create(bm25, encoder=None).sync_library(
        "Kit", "3.0.0", pages(10, 3), schema=SCHEMA, source="/kit3"
    )
    mixed = tmp_path / "mixed"
    shutil.copytree(folder, mixed)
    reg.publish(bm25, "kit@3.0.0", mixed)
    entry = next(e for e in reg.open_registry(mixed).entries if e.version == "3.0.0")
    assert entry.encoder is None
    held = tmp_path / "held"
    reg.import_from_registry(held, str(folder), "kit", "1.0.0")  # held: the hashed encoder
    with pytest.raises(NotFoundError, match="only of another encoder") as e:
        reg.import_from_registry(held, str(mixed), "kit", "3.0.0")
    assert "3.0.0 (no encoder)" in str(e.value)
    assert reg.fetch_from_registries(held, [str(mixed)], "kit", "3.0.0") is None
    fresh = reg.import_from_registry(tmp_path / "fresh", str(mixed), "kit", "3.0.0")
    assert fresh.library.ref == "kit@3.0.0"  # a new collection takes any encoder


def test_the_registries_setting_is_consulted_in_order(
    published: tuple[Path, Path], tmp_path: Path
) -> None:
    _, folder = published
    dst = tmp_path / "dst"
    reg.import_from_registry(dst, str(folder), "kit", "1.0.0")
    empty = write_index(tmp_path / "empty", [])
    sets = json.dumps([str(tmp_path / "missing"), str(empty), str(folder)])
    run_cli("settings", "-c", str(dst), "--set", f"libraries.registries={sets}")
    res = run_cli("index", "-c", str(dst), "--library", "kit", "--version", "2.0.0")
    assert f"imported kit@2.0.0 from registry {folder}" in res.stdout
    bad = run_cli("index", "-c", str(dst), "--library", "kit@9.9", ok=False)
    assert "no registry of libraries.registries" in bad.stderr
    none = run_cli("index", "-c", str(tmp_path / "new"), "--library", "kit@2.0.0", ok=False)
    assert "names no registries" in none.stderr


def test_concurrent_publishers_keep_each_others_entries(
    published: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    src, _ = published
    folder = tmp_path / "shared"
    both = threading.Barrier(2)
    real = reg.parse_index

    def slow_read(data: bytes, where: str) -> Any:  # both have read the index before either writes
        out = real(data, where)
        with contextlib.suppress(threading.BrokenBarrierError):
            both.wait(timeout=2)
        return out

    monkeypatch.setattr(reg, "parse_index", slow_read)
    write_index(folder, [])
    errors: list[BaseException] = []

    def publish(ref: str) -> None:
        try:
            reg.publish(src, ref, folder)
        except BaseException as e:
            errors.append(e)

    threads = [threading.Thread(target=publish, args=(r,)) for r in ("kit@1.0.0", "kit@2.0.0")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    packs = json.loads((folder / "index.json").read_text())["packs"]
    assert sorted(p["version"] for p in packs) == ["1.0.0", "2.0.0"]
