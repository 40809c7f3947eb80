"""The CLI's sync: index again (nothing changed: no root), delete, watch, and every bad input
as one line with exit status 2 and the collection unchanged.

Commands run in this process; ``watch`` runs as a process of its own, stopped with SIGTERM."""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from cogitave import indexing
from cogitave.ingest import sources
from cogitave.surfaces import cli as cli_module
from tests.helpers import run_cli


def records(path: Path, uids: list[str], word: str = "river") -> None:
    path.write_text(
        "".join(
            json.dumps({"uid": u, "title": f"{word} {u}", "body": f"{u} text"}) + "\n" for u in uids
        )
    )


def state(col: Path) -> dict[str, object]:
    """Everything a failed command must leave as it was: HEAD, roots and objects."""
    if not col.exists():
        return {}
    return {
        "head": (col / "HEAD").read_text() if (col / "HEAD").exists() else None,
        "roots": sorted(p.name for p in (col / "roots").glob("*")),
        "objects": sorted(p.name for p in (col / "objects").glob("*")),
    }


@pytest.fixture(scope="module")
def synced(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("clisync")
    records(tmp / "r.jsonl", ["a", "b", "c"])
    run_cli("index", "-c", str(tmp / "col"), str(tmp / "r.jsonl"), "-q")
    return tmp


def test_nothing_changed_no_root(synced: Path) -> None:
    before = state(synced / "col")
    proc = run_cli("index", "-c", str(synced / "col"), str(synced / "r.jsonl"), "-q")
    assert "nothing changed" in proc.stdout
    assert state(synced / "col") == before


def test_index_deletes_then_delete_command(tmp_path: Path) -> None:
    src, col = tmp_path / "r.jsonl", tmp_path / "col"
    records(src, ["a", "b", "c"])
    out = run_cli("index", "-c", str(col), str(src), "--source", "recs", "-q").stdout
    assert "3 added" in out
    records(src, ["a", "b"])
    out = run_cli("index", "-c", str(col), str(src), "--source", "recs", "-q").stdout
    assert "1 deleted" in out and "2 live nodes" in out
    records(src, ["d"])
    out = run_cli("index", "-c", str(col), str(src), "--source", "recs", "--add-only", "-q").stdout
    assert "1 added" in out and "0 deleted" in out and "3 live nodes" in out
    out = run_cli("delete", "-c", str(col), "--uid", "a", "--uid", "zz").stdout
    assert "deleted 1 nodes (1 unknown uids ignored)" in out and "2 live nodes" in out
    out = run_cli("delete", "-c", str(col), "--source", "recs").stdout
    assert "deleted source recs: 2 nodes" in out and "0 live nodes" in out


@pytest.mark.parametrize(
    "args",
    [
        ("delete",),  # neither --uid nor --source
        ("delete", "--uid", "a", "--source", "x"),  # both
        ("delete", "--source", "no-such-source"),
    ],
)
def test_delete_usage_errors(synced: Path, args: tuple[str, ...]) -> None:
    before = state(synced / "col")
    proc = run_cli(*args, "-c", str(synced / "col"), ok=False)
    assert (
        proc.returncode == 2 and proc.stderr.startswith("error[") and "Traceback" not in proc.stderr
    )
    assert len(proc.stderr.strip().splitlines()) == 1
    assert state(synced / "col") == before


def bad(tmp: Path, case: str) -> tuple[list[str], Path]:
    """(arguments, collection path) of one bad-input case."""
    col = tmp / "col"
    src = tmp / "r.jsonl"
    if case == "collection_is_a_file":
        col = tmp / "afile"
        col.write_text("not a collection")
        return ["index", "-c", str(col), str(src)], col
    if case == "collection_in_a_folder_of_other_files":
        col = tmp / "docs"
        col.mkdir()
        (col / "readme.md").write_text("# mine")
        return ["index", "-c", str(col), str(src)], col
    if case == "no_documents_of_the_format":
        tree = tmp / "tree"
        tree.mkdir()
        (tree / "page.md").write_text("# A page\n\ntext\n")
        (tree / "other.md").write_text("# Another\n\ntext\n")
        return ["index", "-c", str(col), str(tree), "--format", "beir"], col
    if case == "empty_markdown_folder":
        tree = tmp / "empty"
        tree.mkdir()
        (tree / "notes.txt").write_text("no markdown here")
        return ["index", "-c", str(col), str(tree), "--format", "markdown"], col
    if case == "vanished_source":
        return ["index", "-c", str(col), str(tmp / "gone.jsonl")], col
    raise AssertionError(case)


CASES = [
    "collection_is_a_file",
    "collection_in_a_folder_of_other_files",
    "no_documents_of_the_format",
    "empty_markdown_folder",
    "vanished_source",
]


@pytest.mark.parametrize("case", CASES)
def test_bad_input_is_one_line_exit_2_collection_unchanged(
    synced: Path, tmp_path: Path, case: str
) -> None:
    records(tmp_path / "r.jsonl", ["a"])
    args, col = bad(tmp_path, case)
    if case in ("no_documents_of_the_format", "empty_markdown_folder", "vanished_source"):
        col = synced / "col"  # an existing collection must stay as it was
        args[args.index("-c") + 1] = str(col)
    before = state(col)
    files_before = sorted(p.name for p in col.iterdir()) if col.is_dir() else None
    proc = run_cli(*args, "-q", ok=False)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.startswith("error[") and "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert state(col) == before
    if files_before is not None:
        assert sorted(p.name for p in col.iterdir()) == files_before
    if case == "no_documents_of_the_format":
        assert "try --format docs" in proc.stderr
    if case == "empty_markdown_folder":
        assert "no documents for --format markdown in" in proc.stderr


def test_unreadable_folder(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """A folder the reader may not open (as root every folder is readable, so the reader is
    made to fail as it would for another user)."""
    tree = tmp_path / "locked"
    tree.mkdir()
    (tree / "page.md").write_text("# A page\n")

    def denied(source: Path, *args: object) -> object:
        raise PermissionError(13, "Permission denied", str(source / "page.md"))

    for fmt in sources.READERS:
        monkeypatch.setitem(sources.READERS, fmt, denied)
    monkeypatch.setattr(sys, "argv", ["cogitave", "index", "-c", str(tmp_path / "col"), str(tree)])
    with pytest.raises(SystemExit) as exc:
        cli_module.main()
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("error[bad_input]: cannot read") and "permission denied" in err
    assert len(err.strip().splitlines()) == 1
    assert not (tmp_path / "col").exists()


CLI_WATCH = [sys.executable, "-X", "faulthandler", "-m", "cogitave.surfaces.cli", "watch"]


def test_watch_syncs_once_per_burst(tmp_path: Path) -> None:
    src, col = tmp_path / "r.jsonl", tmp_path / "col"
    records(src, ["a", "b"])
    proc = subprocess.Popen(
        # a burst ends after 1.5 s without a change: the test's three writes stay one burst
        # even when a busy machine pauses the test between them
        [*CLI_WATCH, "-c", str(col), str(src), "--debounce", "1500"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    lines: queue.Queue[str] = queue.Queue()
    assert proc.stdout is not None

    errors: queue.Queue[str] = queue.Queue()

    def pump(stream: Any, into: queue.Queue[str]) -> None:
        for line in stream:
            into.put(line)

    pumps = [
        threading.Thread(target=pump, args=(proc.stdout, lines), daemon=True),
        threading.Thread(target=pump, args=(proc.stderr, errors), daemon=True),
    ]
    for t in pumps:
        t.start()

    def next_line(timeout: float = 90) -> str:
        return lines.get(timeout=timeout)

    try:
        assert "2 added" in next_line()
        time.sleep(0.5)  # the watcher is up once the first sync printed; let it settle
        # a burst: three writes in quick succession -> one sync, one root
        records(src, ["a", "b", "c"])
        records(src, ["a", "b", "c", "d"])
        records(src, ["b", "c", "d"], word="lake")
        line = next_line(60)
        assert "2 added" in line and "1 deleted" in line and "1 changed" in line, line
        src.unlink()  # a vanished source: an error line, the collection kept, still watching
        records(tmp_path / "other.jsonl", ["x"])  # noise beside the file is ignored
        deadline = time.monotonic() + 60
        while "source not found" not in errors.get(timeout=60):
            assert time.monotonic() < deadline
        # no second publish for the same burst came before the next burst's answer (and the
        # roots counted at the end are one per burst)
        assert lines.empty(), list(lines.queue)
        src.write_text(json.dumps({"uid": "z", "title": "zed", "body": "back"}) + "\n")
        line = next_line(60)
        assert "1 added" in line and "3 deleted" in line, line
    finally:
        # SIGTERM: a test run in the background inherits an ignored SIGINT
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            # -X faulthandler: SIGABRT prints every thread's stack, so a hang says where
            proc.send_signal(signal.SIGABRT)
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
            for t in pumps:
                t.join(timeout=10)
            stacks = "".join(errors.queue)[-6000:]
            raise AssertionError(f"watch did not stop on SIGTERM; its stacks:\n{stacks}") from None
        finally:
            for t in pumps:
                t.join(timeout=10)
            proc.stdout.close()
            assert proc.stderr is not None
            proc.stderr.close()
    err = "".join(errors.queue)
    assert proc.returncode == 0, err
    assert "stopped watching" in err and "Traceback" not in err
    roots = len(list((col / "roots").glob("*.json")))
    assert roots == 4  # empty, first sync, the burst, the file back
    assert os.path.exists(col / "HEAD")


def test_watch_waits_for_another_writer(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A burst that meets another writer's lock is synced once the lock is free, not lost."""
    from cogitave.errors import CogitaveError, ConflictError
    from cogitave.store.roots import RootStore

    src, col = tmp_path / "r.jsonl", tmp_path / "col"
    records(src, ["a"])
    spec = indexing.SourceSpec(src, col, "jsonl")
    indexing.index(spec)
    store = RootStore(col)
    before = store.head()
    met_lock, synced = threading.Event(), threading.Event()
    real_index = indexing.index

    def index(*a: Any, **kw: Any) -> Any:
        try:
            return real_index(*a, **kw)
        except ConflictError:
            met_lock.set()
            raise

    monkeypatch.setattr(indexing, "index", index)
    stop = threading.Event()
    watcher = threading.Thread(
        target=indexing.watch,
        args=(spec, lambda r: None if isinstance(r, CogitaveError) else synced.set()),
        kwargs={"stop": stop},
        daemon=True,
    )
    watcher.start()
    try:
        with store.writer_lock():
            # write until a burst meets the lock (the watcher may not be watching yet)
            for n in range(120):
                records(src, ["a", "b"], word=f"v{n}")
                if met_lock.wait(0.5):
                    break
            assert met_lock.is_set(), "no burst reached the lock"
            assert store.head() == before and not synced.is_set()
        assert synced.wait(60), "the burst was lost"  # synced once the lock is free
        assert store.head() != before
    finally:
        stop.set()
        watcher.join(timeout=30)
    assert not watcher.is_alive()
