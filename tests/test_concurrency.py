"""Readers and a writer at once: no errors, no mixed-root answers, readers never wait.

A writer process publishes repeatedly (adds, replacements and deletes) while reader threads,
one pinned reader and a reader process search. Each reader follows HEAD the way a server
would (a new ``Collection`` when HEAD moves). Every answer names its root; afterwards each
answer is compared with a fresh ``Collection.open(path, root=that_root)`` search, so an answer
mixing two roots (results of one, statistics or rows of another) shows up as a difference.
Latency is recorded per search and split by whether a publish was running at the time (for
``bench/concurrency.py``; the tests assert no time). That readers never wait is shown with a
publish held midway: searches, opens and refreshes all finish while it is held.

``bench/concurrency.py`` runs the same harness longer and on a bigger collection.
"""

from __future__ import annotations

import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from cogitave import Collection
from cogitave.errors import NotFoundError
from cogitave.store.lexical import link_tree
from cogitave.store.roots import RootStore
from tests.conftest import SCHEMA, make_nodes

REPO = Path(__file__).resolve().parents[1]
QUERIES = (
    "alpha beta",
    "river mountain",
    "leather boots wool",
    "graph vector index",
    "omega",
    "sigma lambda kappa theta",
)
MODES = ("bm25", "planned")

WRITER = textwrap.dedent(
    """
    import sys, time
    from cogitave import Collection, Node
    from tests.conftest import make_nodes
    path, publishes, batch, seconds, retention = (
        sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4]), int(sys.argv[5])
    )
    col = Collection.open(path)
    base = sorted(col.snapshot.nodes.nid_of)
    print("ready", flush=True)
    sys.stdin.readline()  # "go": the readers are running
    t_end = time.monotonic() + seconds
    i = 0
    while i < publishes or time.monotonic() < t_end:
        fresh = make_nodes(batch, seed=1000 + i)
        col.add(Node(uid=f"w{i}-{n.uid}", kind=n.kind, dims=n.dims) for n in fresh)
        # replace a few live nodes with other text, and delete one: results must move
        for k in range(3):
            uid = base[(i * 7 + k) % len(base)]
            dims = {"title": f"rewritten {i}", "body": fresh[k].text("body")}
            col.add([Node(uid=uid, dims=dims)])
        col.delete([base[(i * 11 + 5) % len(base)]])
        t0 = time.monotonic()
        rid = col.publish(retention=retention)
        print("pub", t0, time.monotonic(), rid, flush=True)
        i += 1
    """
)


@dataclass(frozen=True)
class Answer:
    """One search a reader made."""

    reader: str
    t0: float  # time.monotonic() at the start (one clock for every process on the machine)
    seconds: float
    root: str
    query: str
    mode: str
    uids: tuple[str, ...]


@dataclass
class Run:
    """Everything a concurrency run recorded."""

    answers: list[Answer] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    publishes: list[tuple[float, float, str]] = field(default_factory=list)
    opens: list[float] = field(default_factory=list)  # seconds to open a new HEAD + 1st search
    mismatches: list[str] = field(default_factory=list)
    idle: list[float] = field(default_factory=list)  # search latency before the writer started
    dropped: int = 0  # answers whose root retention has dropped (not comparable afterwards)

    def during(self) -> list[float]:
        """Latencies of searches that overlapped a publish."""
        spans = self.publishes
        return [
            a.seconds
            for a in self.answers
            if any(a.t0 < t1 and a.t0 + a.seconds > t0 for t0, t1, _ in spans)
        ]

    def summary(self) -> dict[str, Any]:
        during = self.during()
        lat = [a.seconds for a in self.answers]
        pub = [t1 - t0 for t0, t1, _ in self.publishes]
        return {
            "searches": len(self.answers),
            "during_publish": len(during),
            "roots_seen": len({a.root for a in self.answers}),
            "publishes": len(self.publishes),
            "publish_ms_mean": 1000 * statistics.fmean(pub) if pub else 0.0,
            "errors": len(self.errors),
            "mismatches": len(self.mismatches),
            "idle_p50_ms": 1000 * _pct(self.idle, 50),
            "idle_max_ms": 1000 * max(self.idle, default=0.0),
            "p50_ms": 1000 * _pct(lat, 50),
            "p99_ms": 1000 * _pct(lat, 99),
            "max_ms": 1000 * max(lat, default=0.0),
            "during_p99_ms": 1000 * _pct(during, 99),
            "during_max_ms": 1000 * max(during, default=0.0),
            "open_max_ms": 1000 * max(self.opens, default=0.0),
        }


def _pct(xs: Sequence[float], p: float) -> float:
    if not xs:
        return 0.0
    s = sorted(xs)
    return s[min(len(s) - 1, round(p / 100 * (len(s) - 1)))]


class Caught:
    """The root each reader answered on last, to wait for followers to reach a root."""

    def __init__(self) -> None:
        self._cv = threading.Condition()
        self._roots: dict[str, str] = {}

    def saw(self, name: str, root: str) -> None:
        with self._cv:
            self._roots[name] = root
            self._cv.notify_all()

    def wait(self, names: Sequence[str], root: str, timeout: float) -> bool:
        """True once every reader of ``names`` has answered on ``root`` (False: timed out,
        a failure guard, never a pause)."""
        with self._cv:
            return self._cv.wait_for(
                lambda: all(self._roots.get(n) == root for n in names), timeout
            )


def read_loop(
    path: Path,
    name: str,
    stop: threading.Event | Path,
    *,
    follow: bool = True,
    seed: int = 0,
    sink: Any = None,
    caught: Caught | None = None,
) -> tuple[list[Answer], list[str], list[float]]:
    """Search until ``stop`` (an Event, or a file that appears); follow HEAD when ``follow``."""
    rng = random.Random(seed)
    store = RootStore(path)
    answers: list[Answer] = []
    errors: list[str] = []
    opens: list[float] = []
    col = Collection.open(path)
    for q in QUERIES[:2]:  # warm-up (the planned mode loads its lexicon once per process)
        for mode in MODES:
            col.search(q, mode=mode)

    def stopped() -> bool:
        return stop.is_set() if isinstance(stop, threading.Event) else stop.exists()

    while not stopped():
        try:
            if follow and store.head() != col.root:
                t = time.perf_counter()
                col = Collection.open(path)
                col.search(QUERIES[0], limit=10, mode="bm25")
                opens.append(time.perf_counter() - t)
            q, mode = rng.choice(QUERIES), rng.choice(MODES)
            t0 = time.monotonic()
            res = col.search(q, mode=mode)
            dt = time.monotonic() - t0
            if res.root != col.root or res.diagnostics.get("root", res.root) != res.root:
                errors.append(f"{name}: answer names root {res.root[:12]}, reader is on {col.root}")
            a = Answer(name, t0, dt, res.root, q, mode, tuple(res.uids))
            if sink is not None:
                sink(a)
            else:
                answers.append(a)
            if caught is not None:
                caught.saw(name, res.root)
        except Exception as e:
            errors.append(f"{name}: {type(e).__name__}: {e}")
            time.sleep(0.01)  # a backoff, so a failing reader does not spin
    return answers, errors, opens


def reader_main() -> None:
    """The reader process: ``python -c 'from tests.test_concurrency import reader_main;
    reader_main()' PATH STOPFILE SEED``; one JSON line per answer, then errors and opens."""
    path, stopfile, seed = Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3])
    print("ready", flush=True)

    def emit(a: Answer) -> None:
        sys.stdout.write(json.dumps({"answer": a.__dict__}) + "\n")

    _, errors, opens = read_loop(path, "process", stopfile, seed=seed, sink=emit)
    sys.stdout.write(json.dumps({"errors": errors, "opens": opens}) + "\n")


def _popen(args: list[str], stderr: Any = subprocess.PIPE) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=stderr,
        text=True,
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": os.pathsep.join((str(REPO / "src"), str(REPO)))},
    )


def run_concurrency(
    path: Path,
    *,
    threads: int = 4,
    publishes: int = 6,
    batch: int = 30,
    seconds: float = 0.0,
    retention: int = 100_000,
    reader_process: bool = True,
    idle_seconds: float = 0.5,
) -> Run:
    """Readers (``threads`` following HEAD, one pinned, optionally a process) search while a
    writer process publishes ``publishes`` times (and for at least ``seconds``)."""
    run = Run()
    stop = threading.Event()
    stopfile = path.parent / f"{path.name}.stop"
    stopfile.unlink(missing_ok=True)
    results: list[tuple[list[Answer], list[str], list[float]]] = []
    lock = threading.Lock()
    caught = Caught()

    def thread(name: str, follow: bool, seed: int) -> None:
        out = read_loop(path, name, stop, follow=follow, seed=seed, caught=caught)
        with lock:
            results.append(out)

    # The processes start (imports take a while) during the idle phase: a baseline latency
    # with nobody writing. The writer waits for a line on stdin before its first publish.
    writer = _popen([WRITER, str(path), str(publishes), str(batch), str(seconds), str(retention)])
    proc = None
    if reader_process:
        reader = "from tests.test_concurrency import reader_main; reader_main()"
        # stderr to a file: stdout is read to the end below, and a full stderr pipe would
        # block the process meanwhile
        errfile = tempfile.TemporaryFile("w+")  # noqa: SIM115 (closed after the run)
        proc = _popen([reader, str(path), str(stopfile), "7"], stderr=errfile)
    warm = Collection.open(path)
    for mode in MODES:
        warm.search(QUERIES[0], mode=mode)
    base_stop = threading.Event()
    threading.Timer(idle_seconds, base_stop.set).start()
    run.idle = [a.seconds for a in read_loop(path, "idle", base_stop)[0]]
    if proc is not None:
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "ready", "the reader process did not start"
    workers = [
        threading.Thread(target=thread, args=(f"thread{i}", True, i), daemon=True)
        for i in range(threads)
    ]
    workers.append(threading.Thread(target=thread, args=("pinned", False, 99), daemon=True))
    for w in workers:
        w.start()
    assert writer.stdout is not None and writer.stdin is not None
    assert writer.stdout.readline().strip() == "ready", writer.stderr and writer.stderr.read()
    writer.stdin.write("go\n")
    writer.stdin.close()
    for line in writer.stdout:
        _, t0, t1, rid = line.split()
        run.publishes.append((float(t0), float(t1), rid))
    assert writer.stderr is not None
    werr = writer.stderr.read()
    writer.wait()
    writer.stdout.close()
    writer.stderr.close()
    if writer.returncode:
        run.errors.append(f"writer exited {writer.returncode}: {werr[-600:]}")
    if run.publishes:  # the followers reach the last root before they stop
        followers = [f"thread{i}" for i in range(threads)]
        if not caught.wait(followers, RootStore(path).head(), timeout=60):
            run.errors.append("the following readers never answered on the last root")
    stop.set()
    stopfile.touch()
    for w in workers:
        w.join(timeout=60)
    for answers, errors, opens in results:
        run.answers += answers
        run.errors += errors
        run.opens += opens
    if proc is not None:
        # Not communicate(): with several pipes it reads the fd directly and loses what
        # readline() above had already buffered.
        assert proc.stdout is not None and proc.stdin is not None
        proc.stdin.close()
        out = proc.stdout.read()
        proc.stdout.close()
        proc.wait(timeout=60)
        errfile.seek(0)
        err = errfile.read()
        errfile.close()
        for line in out.splitlines():
            try:
                rec = json.loads(line)
            except ValueError:
                run.errors.append(f"reader process printed {line[:300]!r}")
                continue
            if "answer" in rec:
                a = rec["answer"]
                run.answers.append(Answer(**{**a, "uids": tuple(a["uids"])}))
            else:
                run.errors += rec["errors"]
                run.opens += rec["opens"]
        if proc.returncode:
            run.errors.append(f"reader process exited {proc.returncode}: {err[-600:]}")
    stopfile.unlink(missing_ok=True)
    compare_with_fresh(path, run)
    return run


def compare_with_fresh(path: Path, run: Run) -> None:
    """Every answer must equal a fresh open of the root it names (the same query and mode).
    Answers from roots that retention has dropped since are counted in ``run.dropped``."""
    want: dict[tuple[str, str, str], tuple[str, ...] | None] = {}
    fresh: dict[str, Collection | None] = {}
    for a in run.answers:
        key = (a.root, a.query, a.mode)
        if key not in want:
            if a.root not in fresh:
                try:
                    fresh[a.root] = Collection.open(path, root=a.root)
                except NotFoundError:
                    fresh[a.root] = None
            col = fresh[a.root]
            want[key] = None if col is None else tuple(col.search(a.query, mode=a.mode).uids)
        if want[key] is None:
            run.dropped += 1
        elif a.uids != want[key]:
            run.mismatches.append(
                f"{a.reader} on {a.root[:12]} {a.query!r}/{a.mode}: {a.uids} != {want[key]}"
            )


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    col = Collection.create(tmp_path / "col", SCHEMA, encoder=None)
    col.add(make_nodes(300))
    col.publish()
    return tmp_path / "col"


def test_readers_during_publishes(corpus: Path) -> None:
    first = RootStore(corpus).head()
    run = run_concurrency(corpus, threads=4, publishes=6)
    s = run.summary()
    assert not run.errors, run.errors[:5]
    assert not run.mismatches, run.mismatches[:5]
    assert s["publishes"] == 6
    readers = {a.reader for a in run.answers}
    assert {"thread0", "pinned", "process"} <= readers
    # the pinned reader stayed on the first root; followers reached the last one
    assert {a.root for a in run.answers if a.reader == "pinned"} == {first}
    last = run.publishes[-1][2]
    assert {a.reader for a in run.answers if a.root == last} >= {"thread0", "thread3"}


def test_readers_never_wait_for_a_publish_held_midway(corpus: Path, monkeypatch) -> None:
    """A publish stopped inside its writer lock, its objects written and its root not yet:
    searches on the current root, a new open, a refresh and a search pinned to the old root
    all finish while it is held; then it completes and a refresh moves to its root."""
    reader = Collection.open(corpus)
    before = reader.search("alpha beta").uids
    inside, release = threading.Event(), threading.Event()
    real = RootStore.write_root

    def held(self: RootStore, manifest: Any) -> str:
        inside.set()
        release.wait(60)
        return real(self, manifest)

    monkeypatch.setattr(RootStore, "write_root", held)
    writer = Collection.open(corpus)
    writer.add(make_nodes(20, seed=77))
    published: list[str] = []
    t = threading.Thread(target=lambda: published.append(writer.publish()))
    t.start()
    try:
        assert inside.wait(60)
        first = reader.root
        for mode in MODES:
            assert reader.search("alpha beta", mode=mode).root == first
        assert reader.search("alpha beta").uids == before
        assert Collection.open(corpus).search("river mountain").root == first
        reader.refresh()
        assert reader.root == first
        assert t.is_alive() and not release.is_set()  # all of it while the publish is held
    finally:
        release.set()
        t.join(60)
    assert published and RootStore(corpus).head() == published[0] != first
    reader.refresh()
    assert reader.root == published[0] and reader.search("alpha beta").root == published[0]


def test_readers_while_retention_drops_roots(corpus: Path) -> None:
    """With retention 2 the writer deletes old roots as readers move off them; the pinned
    reader's root, held, stays until it closes."""
    run = run_concurrency(
        corpus, threads=3, publishes=5, retention=2, reader_process=False, idle_seconds=0.1
    )
    assert not run.errors, run.errors[:5]
    assert not run.mismatches, run.mismatches[:5]
    assert run.summary()["publishes"] == 5


def test_retention_spares_a_snapshot_being_made(corpus: Path) -> None:
    """Deterministic form of the race: a reader is halfway through linking a root's files
    when a publish (and its retention) runs."""
    store = RootStore(corpus)
    rid = store.head()
    files = store.read_root(rid).lexical_files
    partial = store.snapshots / f".{rid}.{os.getpid()}.1"
    link_tree(store, dict(list(files.items())[:2]), partial)
    writer = Collection.open(corpus)
    writer.delete(["n00000"])
    writer.publish()
    assert partial.is_dir() and len(list(partial.iterdir())) == 2
