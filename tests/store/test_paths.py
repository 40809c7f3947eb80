"""No identifier a caller gives (a root id, a uid, a reference) makes the store build a path
outside the collection: no request, through any surface or the Python API, creates, deletes
or reads a file there.

The collection lives in a folder of its own (``outer/col``) beside decoy files; hostile ids
climb out of ``readers/``, ``roots/`` and ``snapshots/`` into ``outer`` or name it by an
absolute path. The file tree of ``outer`` outside the collection is compared before and after
every request, and an audit hook records every file operation Python makes on a path there.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cogitave.collection import Collection
from cogitave.errors import CogitaveError, CorruptionError, NotFoundError
from cogitave.query.types import SearchRequest
from cogitave.store.lexical import link_tree
from cogitave.store.roots import RootStore
from cogitave.surfaces.http import create_app
from tests.helpers import BASE_URL, docs_batch, mcp_calls

# -- watching the folder around the collection ------------------------------------------------
_WATCHED: list[tuple[Path, Path, list[str]]] = []  # (outer, collection, touched paths)
_FILE_EVENTS = frozenset(
    {
        "open",
        "os.link",
        "os.symlink",
        "os.remove",
        "os.rename",
        "os.mkdir",
        "os.rmdir",
        "os.truncate",
        "shutil.rmtree",
        "shutil.copyfile",
        "os.listdir",
        "os.scandir",
    }
)


def _audit(event: str, args: tuple[Any, ...]) -> None:
    if not _WATCHED or event not in _FILE_EVENTS:
        return
    outer, col, touched = _WATCHED[-1]
    for a in args[:2]:
        if not isinstance(a, str | bytes | os.PathLike):
            continue
        try:
            p = Path(os.fsdecode(a))
            p = Path(os.path.normpath(p if p.is_absolute() else Path.cwd() / p))
        except (TypeError, ValueError):
            continue
        if p.is_relative_to(outer) and not p.is_relative_to(col):
            touched.append(f"{event} {p}")


sys.addaudithook(_audit)


def tree(root: Path, skip: Path) -> dict[str, tuple[int, int]]:
    """Every entry under ``root`` but ``skip``: path -> (size, mtime)."""
    out: dict[str, tuple[int, int]] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        here = Path(dirpath)
        dirnames[:] = [d for d in dirnames if here / d != skip]
        for name in dirnames + filenames:
            st = os.lstat(here / name)
            out[str(here / name)] = (st.st_size, st.st_mtime_ns)
    return out


class Outside:
    """The folder around a collection, and what a call did there."""

    def __init__(self, outer: Path, col: Path) -> None:
        self.outer, self.col = outer, col

    def check(self, call: Callable[[], Any]) -> Any:
        """Run ``call``; fail if it touched anything outside the collection. Engine errors are
        answers (the ids are hostile); anything else is a crash."""
        before = tree(self.outer, self.col)
        touched: list[str] = []
        _WATCHED.append((self.outer, self.col, touched))
        try:
            out = call()
        except CogitaveError as e:
            out = e
        finally:
            _WATCHED.pop()
        assert not touched, touched
        assert tree(self.outer, self.col) == before
        return out


@pytest.fixture(scope="module")
def outside(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Outside, Collection]]:
    outer = tmp_path_factory.mktemp("outer")
    batch = docs_batch(tmp_path_factory)
    col = Collection.create(outer / "col", batch.schema, encoder=None)
    col.add(batch.nodes)
    col.publish()
    for decoy in ("readers", "roots", "snapshots", "objects", "tmp/x"):
        (outer / decoy).mkdir(parents=True, exist_ok=True)
        (outer / decoy / "keep.json").write_text("{}")
    (outer / "secret.json").write_text('{"format": 1}')
    yield Outside(outer, col.store.path), col


@pytest.fixture(scope="module")
def client(outside: tuple[Outside, Collection]) -> Iterator[TestClient]:
    with TestClient(create_app(outside[1]), base_url=BASE_URL) as c:
        yield c


NAMES = st.text(
    alphabet=st.sampled_from("abcdef0123456789./-_INJECTED\\ %\x00é"), min_size=0, max_size=20
)


@st.composite
def hostile_ids(draw: st.DrawFn) -> str:
    """An id that climbs out of a collection folder into ``outer``, or names a place there
    absolutely, or is just odd."""
    kind = draw(st.sampled_from(["up", "absolute", "text", "hexlike"]))
    name = draw(NAMES)
    if kind == "up":
        return (
            "../" * draw(st.integers(1, 3)) + draw(st.sampled_from(["", "tmp/x/", "roots/"])) + name
        )
    if kind == "absolute":
        return "{outer}/" + draw(st.sampled_from(["", "tmp/x/", "secret"])) + name
    if kind == "hexlike":
        return "../" + "a" * draw(st.integers(55, 64))
    return draw(st.text(max_size=80))


def _requests(client: TestClient, col: Collection, bad: str) -> list[tuple[str, Callable[[], Any]]]:
    store = col.store
    path = quote(bad, safe="/")
    return [
        ("rest search", lambda: client.post("/search", json={"query": "install", "root": bad})),
        ("rest node", lambda: client.get("/nodes/" + path)),
        ("rest related", lambda: client.get(f"/nodes/{path}/related")),
        ("rest fetch", lambda: client.get("/fetch", params={"ref": bad})),
        ("rest xref", lambda: client.get("/xref", params={"ref": bad, "base": bad})),
        ("rest path", lambda: client.get("/learning-path", params={"target": bad})),
        ("rest facets", lambda: client.get("/facets", params={"uids": bad})),
        (
            "graphql",
            lambda: client.post(
                "/graphql",
                json={
                    "query": "query($u: String!) { node(uid: $u) { uid } "
                    "fetch(ref: $u) { markdown } related(uid: $u) { truncated } }",
                    "variables": {"u": bad},
                },
            ),
        ),
        (
            "mcp",
            lambda: mcp_calls(
                col,
                ("docs_fetch", {"ref": bad or "x"}),
                ("get_related", {"uid": bad or "x"}),
                ("resolve_xref", {"ref": bad or "x", "base": bad}),
            ),
        ),
        ("api search", lambda: col.search(SearchRequest("install", root=bad))),
        ("api get", lambda: col.get(bad or "x", root=bad)),
        ("api port", lambda: col.port(bad)),
        ("api open", lambda: Collection.open(store.path, root=bad)),
        ("store pin", lambda: store.pin(bad)),
        ("store read_root", lambda: store.read_root(bad)),
        ("store snapshot_dir", lambda: store.snapshot_dir(bad)),
        ("store object", lambda: store.get_bytes(bad)),
        ("store set_head", lambda: store.set_head(bad)),
    ]


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(raw=hostile_ids())
def test_no_request_touches_a_file_outside_the_collection(
    outside: tuple[Outside, Collection], client: TestClient, raw: str
) -> None:
    watch, col = outside
    bad = raw.replace("{outer}", str(watch.outer))
    head = col.store.head()
    for name, request in _requests(client, col, bad):
        out = watch.check(request)
        status = getattr(out, "status_code", None)
        assert status is None or status < 500, (name, bad, out.text[:300])
    assert col.store.head() == head


def test_the_reported_traversal_creates_nothing(
    outside: tuple[Outside, Collection], client: TestClient
) -> None:
    watch, col = outside
    bad = "../../tmp/x/INJECTED"
    resp = watch.check(lambda: client.post("/search", json={"query": "x", "root": bad}))
    assert resp.status_code in (400, 404)
    with pytest.raises(NotFoundError, match="not a root id"):
        col.store.pin(bad)
    assert not list((watch.outer / "tmp" / "x").glob("INJECTED*"))


@pytest.mark.parametrize("rid", ["../x", "A" * 64, "g" * 64, "a" * 63, "", "a" * 64 + "/"])
def test_every_path_from_a_root_id_is_checked_first(tmp_path: Path, rid: str) -> None:
    store = RootStore(tmp_path / "col")
    store.init()
    for call in (store.pin, store.read_root, store.snapshot_dir, store.set_head):
        with pytest.raises(NotFoundError, match="not a root id"):
            call(rid)
    with pytest.raises(CorruptionError, match="not an object hash"):
        store.object_path(rid)
    assert not (tmp_path / "col" / "HEAD").exists()


def test_lexical_file_names_stay_in_their_directory(tmp_path: Path) -> None:
    store = RootStore(tmp_path / "col")
    store.init()
    digest = store.put_bytes(b"segment")
    for name in ("../escaped", "a/b", "..", "", "x\x00y"):
        with pytest.raises(CorruptionError, match="not a file name"):
            link_tree(store, {name: digest}, tmp_path / "col" / "snapshots" / "s")
    assert not (tmp_path / "col" / "escaped").exists()
