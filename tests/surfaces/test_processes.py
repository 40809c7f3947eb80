"""``cogitave serve --processes N``: several server processes on one port, supervised by the
parent. The real server runs as a process of its own on 127.0.0.1 over the shared docs
collection (hashed encoder)."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from cogitave import Node
from cogitave.collection import Collection
from cogitave.query.types import SearchRequest
from cogitave.surfaces import processes
from tests.helpers import CLI, docs_collection, free_port, run_cli

QUERIES = ("install with pip", "configuration options", "tutorial")


@pytest.fixture(scope="module")
def col(tmp_path_factory: pytest.TempPathFactory) -> Collection:
    return docs_collection(tmp_path_factory)


@contextmanager
def server(
    col: Collection, log: Path, *args: str, ready: int = 1
) -> Iterator[tuple[subprocess.Popen[str], str]]:
    """``cogitave serve ARGS`` on a free port, once it answers ``/health`` and ``ready``
    server processes said they started."""
    port = free_port()
    with log.open("w") as out:
        proc = subprocess.Popen(
            [*CLI, "serve", "--collection", str(col.store.path), "--port", str(port), *args],
            stdout=out,
            stderr=subprocess.STDOUT,
            text=True,
        )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                up = log.read_text().count("Application startup complete")
                if httpx.get(f"{base}/health").status_code == 200 and up >= ready:
                    break
            except httpx.TransportError:
                pass
            assert proc.poll() is None, log.read_text()
            assert time.monotonic() < deadline, "server did not start"
            time.sleep(0.1)
        yield proc, base
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=30)


def children(pid: int) -> set[int]:
    """The child processes of ``pid`` (Linux /proc)."""
    return {int(c) for c in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()}


def running(pid: int) -> bool:
    """``pid`` exists and is not a zombie."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def answers_by_process(base: str, want: int) -> dict[int, list[list[str]]]:
    """Open keep-alive clients at once until ``want`` processes answered: each process's
    ``/health`` pid and its answers to :data:`QUERIES`, over the same connection."""
    clients = [httpx.Client(base_url=base) for _ in range(4 * want)]
    try:
        pids = [c.get("/health").json()["pid"] for c in clients]  # all connections open
        got: dict[int, list[list[str]]] = {}
        for pid, c in zip(pids, clients, strict=True):
            if pid not in got:
                got[pid] = [
                    [r["uid"] for r in c.post("/search", json={"query": q}).json()["results"]]
                    for q in QUERIES
                ]
                assert c.get("/health").json()["pid"] == pid  # the same connection, process
        return got
    finally:
        for c in clients:
            c.close()


def test_two_processes_answer_alike_and_stop_on_sigterm(col: Collection, tmp_path: Path) -> None:
    with server(col, tmp_path / "serve.log", "--processes", "2", ready=2) as (proc, base):
        kids = children(proc.pid)
        assert len(kids) == 2
        got = answers_by_process(base, 2)
        # connections are shared by open ones: clients connecting together reach both
        assert set(got) == kids
        first, second = got.values()
        assert first == second
        assert (
            first[0] == col.search(SearchRequest(query="install with pip", group_by_page=True)).uids
        )
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=60) == 0
    assert not any(running(k) for k in kids)
    assert (tmp_path / "serve.log").read_text().count("Finished server process") == 2


def test_each_process_follows_a_new_root(collection: Collection, tmp_path: Path) -> None:
    with server(collection, tmp_path / "serve.log", "--processes", "2", ready=2) as (proc, base):
        clients = [httpx.Client(base_url=base) for _ in range(8)]
        try:
            by_pid = {c.get("/health").json()["pid"]: c for c in clients}
            assert set(by_pid) == children(proc.pid)
            collection.add(
                [Node(uid="zebra", kind="doc", dims={"title": "zebra crossing", "body": "x"})]
            )
            root = collection.publish()
            for c in by_pid.values():  # each process looks at HEAD on its own
                deadline = time.monotonic() + 60  # a failure guard, not a bound tested
                while c.get("/roots").json()["current"] != root:
                    assert time.monotonic() < deadline, "a server process kept the old root"
                    time.sleep(0.05)
                hits = c.post("/search", json={"query": "zebra crossing"}).json()["results"]
                assert hits[0]["uid"] == "zebra"
        finally:
            for c in clients:
                c.close()


def test_a_dead_child_stops_the_server_with_an_error(col: Collection, tmp_path: Path) -> None:
    with server(col, tmp_path / "serve.log", "--processes", "2", ready=2) as (proc, _):
        kids = children(proc.pid)
        victim = min(kids)
        os.kill(victim, signal.SIGKILL)
        assert proc.wait(timeout=60) == 1
    assert not any(running(k) for k in kids)
    log = (tmp_path / "serve.log").read_text()
    assert f"error[internal]: server process {victim} was killed by signal 9" in log


def test_children_stop_when_the_parent_is_killed(col: Collection, tmp_path: Path) -> None:
    with server(col, tmp_path / "serve.log", "--processes", "2", ready=2) as (proc, base):
        kids = children(proc.pid)
        proc.kill()
        proc.wait(timeout=30)
        deadline = time.monotonic() + 60
        while any(running(k) for k in kids):  # they see their pipe to the parent close
            assert time.monotonic() < deadline, "server processes outlived their parent"
            time.sleep(0.1)
        with pytest.raises(httpx.TransportError):
            httpx.get(f"{base}/health")


def test_one_process_is_the_default_and_health_has_its_pid(col: Collection, tmp_path: Path) -> None:
    with server(col, tmp_path / "serve.log") as (proc, base):
        assert httpx.get(f"{base}/health").json() == {"status": "ok", "pid": proc.pid}
        assert not children(proc.pid)


def test_stateful_mcp_sessions_need_one_process(col: Collection) -> None:
    with socket.create_server(("127.0.0.1", 0)) as taken:  # refused before it binds
        port = str(taken.getsockname()[1])
        args = ("serve", "--collection", str(col.store.path), "--port", port)
        res = run_cli(*args, "--processes", "2", "--mcp-sessions", "4", ok=False)
    assert res.returncode == 2
    assert res.stderr.strip().splitlines() == [
        "error[bad_input]: --mcp-sessions keeps MCP sessions in one process's memory: use it with "
        "--processes 1, or --mcp-sessions 0 (stateless) with more processes"
    ]


@pytest.mark.parametrize("value", ["0", "-1", "many", ""])
def test_bad_process_counts_are_one_line(col: Collection, value: str) -> None:
    res = run_cli("serve", "--collection", str(col.store.path), "--processes", value, ok=False)
    assert res.returncode == 2
    assert res.stderr.strip() == f"error[bad_input]: --processes {value}: a number >= 1, or auto"


def test_auto_is_the_usable_cpus_capped() -> None:
    cpus = len(os.sched_getaffinity(0))
    assert processes.count("auto") == min(cpus, processes.MAX_AUTO)
    assert processes.count(" 3 ") == 3


def test_each_process_counts_its_share_of_the_cores() -> None:
    from cogitave.expand.embed import THREADS_ENV

    assert processes.THREADS_ENV == THREADS_ENV  # the name the engine reads
    cpus = len(os.sched_getaffinity(0))
    assert processes.share_of_cores(1) == cpus
    assert processes.share_of_cores(cpus) == 1
    assert processes.share_of_cores(cpus * 4) == 1  # never none
