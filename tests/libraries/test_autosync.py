"""``serve``/``mcp --project DIR --sync``: the sync of a served collection of libraries with
the fixture application of ``test_deps`` (a ``.venv`` of real installed packages, a BM25-only
collection). Its first run fetches every pin; a bumped lockfile pin makes one more run that
fetches that version alone, re-pins the reader and shows in ``list_libraries`` (and ``GET
/libraries``); a dependency no source has, and a project folder gone, are reported there
while the sync keeps running. Every wait is on the sync's own finished runs, bounded."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from cogitave.errors import InputError
from cogitave.libraries import autosync
from cogitave.libraries.autosync import ProjectSync, RunReport
from cogitave.libraries.collection import LibraryCollection
from cogitave.service import ops
from cogitave.service.args import SearchArgs
from cogitave.surfaces.http import create_app
from tests.helpers import BASE_URL, mcp_call, run_cli
from tests.libraries.helpers import INSTALLED, libraries, make_app

WAIT_S = 120.0
"""A run fetches three small packages: far less; past it the test fails, never hangs."""
PINS = {f"{name}@{version}" for name, version in INSTALLED.items() if name != "mdurl"}


@pytest.fixture(autouse=True)
def _no_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("VIRTUAL_ENV", raising=False)
    monkeypatch.setenv("COGITAVE_CACHE", str(tmp_path / "cache"))
    # nothing here may reach the public index: an unreachable one fails loudly instead
    monkeypatch.setenv("COGITAVE_PYPI_URL", "http://127.0.0.1:9/pypi")


@pytest.fixture
def served(tmp_path: Path) -> tuple[LibraryCollection, Path]:
    """An empty BM25-only collection of libraries, read pinned to the fixture application."""
    col = tmp_path / "deps"
    LibraryCollection.create(col, encoder=None)
    app = make_app(tmp_path)
    reader = LibraryCollection.open(col)
    reader.use_project(app)
    return reader, app


def write(path: Path, text: str) -> None:
    """Replace a file in one rename (a watcher never sees it half written)."""
    tmp = path.with_name(f".{path.name}.new")
    tmp.write_text(text)
    os.replace(tmp, path)


def bump(app: Path, name: str, old: str, new: str, *, install: bool) -> None:
    """Lock ``name`` at ``new``; ``install``: the environment then holds ``new`` (its
    dist-info renamed and rewritten), before the lockfile says so."""
    if install:
        site = app / ".venv" / "lib" / "python3.11" / "site-packages"
        info = site / f"{name}-{old}.dist-info"
        meta = info / "METADATA"
        meta.write_text(meta.read_text().replace(f"Version: {old}", f"Version: {new}", 1))
        info.rename(site / f"{name}-{new}.dist-info")
    lock = app / "uv.lock"
    text = lock.read_text()
    assert f'version = "{old}"' in text
    write(lock, text.replace(f'version = "{old}"', f'version = "{new}"'))


def next_run(sync: ProjectSync, after: int, until: object = None) -> tuple[int, RunReport]:
    """The first run after run ``after`` whose report satisfies ``until`` (any, if None);
    each wait bounded."""
    n = after
    while True:
        n += 1
        report = sync.wait(n, WAIT_S)
        if until is None or until(report):  # type: ignore[operator]
            return n, report


def outcomes(report: RunReport) -> dict[str, tuple[str, str]]:
    return {f"{d.name}@{d.version}": (d.status, d.reason) for d in report.dependencies}


def alive(sync: ProjectSync) -> bool:
    return all(t.is_alive() for t in sync._threads) and len(sync._threads) == 2


def test_a_bumped_pin_is_fetched_alone_read_and_listed(
    served: tuple[LibraryCollection, Path],
) -> None:
    reader, app = served
    sync = autosync.start(reader, app, poll_s=0.2)
    try:
        first = sync.wait(1, WAIT_S)
        assert first.error is None
        assert outcomes(first) == {ref: ("fetched", "") for ref in PINS}
        assert set(libraries(reader.path)) == PINS
        assert reader.pins["packaging"].version == "26.4"  # read again and re-pinned

        listed = ops.list_libraries(reader)
        assert listed.sync is not None and listed.sync["project"] == str(app.resolve())
        assert listed.sync["last"]["counts"] == {"held": 0, "fetched": 3, "failed": 0}
        assert listed.sync["last"]["finished_at"]

        bump(app, "packaging", "26.4", "26.5", install=True)
        n, second = next_run(sync, 1)
        assert second.error is None and "changed" in second.why
        assert outcomes(second) == {
            "click@8.5.1": ("held", ""),
            "idna@3.20": ("held", ""),
            "packaging@26.5": ("fetched", ""),
        }
        assert set(libraries(reader.path)) == PINS | {"packaging@26.5"}
        assert reader.pins["packaging"].version == "26.5"
        hits = ops.docs_search(reader, SearchArgs("version specifier", library="packaging"))
        assert hits.results and {h.library for h in hits.results} == {"packaging@26.5"}

        status = ops.list_libraries(reader).sync
        assert status is not None and status["runs"] >= n
        assert status["state"] == "idle" and status["current"] is None
        fetched = [d for d in status["last"]["dependencies"] if d["status"] == "fetched"]
        assert [(d["name"], d["version"]) for d in fetched] == [("packaging", "26.5")]
        assert fetched[0]["source"].endswith("packaging-26.5.dist-info")
        versions = {
            v.version: v.default
            for i in ops.list_libraries(reader).libraries
            if i.key == "packaging"
            for v in i.versions
        }
        assert versions == {"26.5": True, "26.4": False}

        with TestClient(create_app(reader), base_url=BASE_URL) as c:
            body = c.get("/libraries").json()
        assert body["sync"]["last"]["dependencies"] == status["last"]["dependencies"]
        tool = mcp_call(reader, "list_libraries", {}).structured_content
        assert tool is not None and tool["sync"]["last"]["counts"]["fetched"] == 1
    finally:
        sync.stop()
    assert ops.list_libraries(reader).sync is None  # stopped: nothing syncs it


def test_failures_are_reported_and_the_sync_keeps_running(
    served: tuple[LibraryCollection, Path], tmp_path: Path
) -> None:
    reader, app = served
    sync = ProjectSync(reader, app, poll_s=0.2).start()
    try:
        assert sync.wait(1, WAIT_S).error is None
        # a pin no source has: not installed at that version, the package index unreachable
        bump(app, "idna", "3.20", "3.99", install=False)
        n, report = next_run(sync, 1, lambda r: "idna@3.99" in outcomes(r))
        status, reason = outcomes(report)["idna@3.99"]
        assert status == "failed" and "installed at 3.20, not 3.99" in reason
        assert outcomes(report)["packaging@26.4"] == ("held", "")
        listed = ops.list_libraries(reader).sync
        assert listed is not None
        failed = [d for d in listed["last"]["dependencies"] if d["status"] == "failed"]
        assert [(d["name"], d["version"]) for d in failed] == [("idna", "3.99")]
        assert "not 3.99" in failed[0]["reason"]
        assert listed["last"]["counts"]["failed"] == 1
        assert alive(sync)

        # the project folder gone: the run fails with why; back again, the next run works
        away = tmp_path / "moved"
        app.rename(away)
        n, broken = next_run(sync, n, lambda r: r.error is not None)
        assert broken.error is not None and "is not a folder" in broken.error
        assert ops.list_libraries(reader).sync["last"]["error"] == broken.error  # type: ignore[index]
        assert alive(sync)
        away.rename(app)
        n, back = next_run(sync, n, lambda r: r.error is None)
        assert outcomes(back)["click@8.5.1"] == ("held", "")
        assert alive(sync)
    finally:
        sync.stop()


def test_changes_during_a_run_make_one_more_run(served: tuple[LibraryCollection, Path]) -> None:
    reader, app = served
    sync = ProjectSync(reader, app, poll_s=60.0)
    inside, release = threading.Event(), threading.Event()
    real = reader.use_project

    def held_open(folder: Path) -> object:  # the end of a run, held until released
        inside.set()
        assert release.wait(WAIT_S)
        return real(folder)

    reader.use_project = held_open  # type: ignore[method-assign]
    sync.start()
    try:
        assert inside.wait(WAIT_S)
        for _ in range(5):  # asked five times during the run: one more run, not five
            sync.request("asked")
        assert sync.status()["pending"] is True
        release.set()
        assert sync.wait(2, WAIT_S).why == "asked"
        assert sync.status()["pending"] is False
        assert sync.runs == 2
    finally:
        release.set()
        sync.stop()


def test_sync_needs_a_project_and_a_collection_of_libraries(tmp_path: Path) -> None:
    col = tmp_path / "deps"
    reader = LibraryCollection.create(col, encoder=None)
    with pytest.raises(InputError, match="give --project"):
        autosync.start(reader, None)
    with pytest.raises(InputError, match="collection of libraries"):
        autosync.start(object(), tmp_path)
    with pytest.raises(InputError, match="not a folder"):
        autosync.start(reader, tmp_path / "nowhere")
    for command in (["mcp"], ["serve", "--port", "0"]):
        res = run_cli(*command, "-c", str(col), "--sync", ok=False)
        assert res.returncode == 2 and "--sync" in res.stderr and "give --project" in res.stderr
