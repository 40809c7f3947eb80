"""Crash safety at scale: a publishing child process killed with SIGKILL at random moments.

Each trial starts a child that opens the collection, prints ``ready`` and then publishes
batches in a loop, printing ``begin`` before and ``done <root>`` after each publish. After a
random delay the parent sends SIGKILL. There is no failpoint in the write path, so the delays
vary widely to land before, during and after the object writes, the manifest write and the
HEAD move: a third uniform over the child's whole run, a third in the first publish's first
tens of milliseconds, a third aimed inside a publish (after its ``begin``, up to 1.2x the
measured publish time; half of these in its last 15%, where the manifest, the HEAD move and
retention happen). The child idles 20 ms between publishes, so some kills land there.

While the child runs, a reader thread in the parent opens every root the child reports and
searches it. After each kill:

- the collection opens; HEAD is a whole root (a search answers from it), and HEAD is either
  the last root reported or the one publish that moved HEAD before it could report;
- ``verify`` passes on every retained root, and every reported root is among them, intact;
- each pinned reader's results equal those of a fresh ``Collection.open(path, root=...)``;
- the next trial's child publishes on top (recovery from the orphans a kill leaves).

Where the kill landed is read back from the directory afterwards (a root not reported,
a manifest that HEAD does not name, HEAD temp files, scratch files in tmp/).

    .venv/bin/python bench/crash.py [--trials 100] [--encoder none|default] [--seed 1]
        [--batch 50] [--per-collection 10] [--updates] [--sync]

With ``--sync`` the child re-indexes one source per loop (``Collection.sync`` over a sliding
window of records: a batch added, the oldest batch deleted), and the checks add that HEAD's
source maps name exactly its live nodes.

Prints markdown tables; writes nothing outside a temporary directory.
"""

from __future__ import annotations

import argparse
import os
import queue
import random
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.conftest import SCHEMA  # noqa: E402

from cogitave import Collection  # noqa: E402
from cogitave.expand.embed import DEFAULT_ENCODER  # noqa: E402
from cogitave.store.roots import RootStore, is_root_id  # noqa: E402
from cogitave.store.verify import verify_collection  # noqa: E402

QUERIES = ("alpha beta", "river mountain forest", "leather boots", "graph vector")

CHILD = textwrap.dedent(
    """
    import sys, time
    from cogitave import Collection
    from tests.conftest import make_nodes
    path, seed, batch, updates = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    mode = sys.argv[5]
    col = Collection.open(path)
    nodes = make_nodes(batch * 205, seed=seed)
    start = len(col)
    print("ready", flush=True)
    for i in range(200):
        if mode == "sync":
            # a sliding window over the records: each sync adds a batch, deletes the oldest
            # batch (with --updates also changes 3 nodes): every kind of write a re-index makes
            window = [type(n)(uid=f"s{seed}-{n.uid}", kind=n.kind, dims=n.dims)
                      for n in nodes[i * batch:(i + 3) * batch]]
            if updates == "1":
                window[:3] = [type(n)(uid=n.uid, kind=n.kind, dims={**n.dims, "title": f"x{i}"})
                              for n in window[:3]]
            sys.stdout.write(f"begin {time.monotonic()}\\n")
            sys.stdout.flush()
            res = col.sync(f"s{seed}", window, retention=100_000)
            rid = res.root or col.root
            sys.stdout.write(f"done {rid} {time.monotonic()}\\n")
            sys.stdout.flush()
            time.sleep(0.02)
            continue
        # new uids, a delete and (with --updates) replacements: every kind of segment write
        for n in nodes[i * batch:(i + 1) * batch]:
            col.add([type(n)(uid=f"s{seed}-{n.uid}", kind=n.kind, dims=n.dims)])
        if i:
            col.delete([f"s{seed}-{nodes[(i - 1) * batch + 5].uid}"])
        if i and updates == "1":
            col.add([type(n)(uid=f"s{seed}-{n.uid}", kind=n.kind, dims={**n.dims, "title": "x"})
                     for n in nodes[(i - 1) * batch:(i - 1) * batch + 3]])
        sys.stdout.write(f"begin {time.monotonic()}\\n")
        sys.stdout.flush()
        rid = col.publish(retention=100_000)
        sys.stdout.write(f"done {rid} {time.monotonic()}\\n")  # one write: a whole line or none
        sys.stdout.flush()
        time.sleep(0.02)  # a short idle gap: some kills land between publishes
    """
)


@dataclass
class Trial:
    """What one kill did and what the checks found."""

    delay: float
    strategy: str
    lines: list[str] = field(default_factory=list)
    published: list[str] = field(default_factory=list)
    phase: str = ""
    roots_verified: int = 0
    readers_compared: int = 0
    failures: list[str] = field(default_factory=list)


UPDATES = False  # --updates: also replace nodes by uid in every publish
MODE = "publish"  # --sync: the child re-indexes a source (adds, deletes, changes) instead


def child(path: Path, seed: int, batch: int) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", CHILD, str(path), str(seed), str(batch), str(int(UPDATES)), MODE],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": os.pathsep.join((str(ROOT / "src"), str(ROOT)))},
    )


def calibrate(path: Path, batch: int) -> float:
    """Median seconds per publish, measured on a throwaway copy of the collection."""
    tmp = path.parent / "calibrate"
    shutil.copytree(path, tmp)
    proc = child(tmp, 999, batch)
    assert proc.stdout is not None
    starts: list[float] = []
    times: list[float] = []
    while len(times) < 5:
        line = proc.stdout.readline()
        if not line:
            raise SystemExit(f"calibration child died: {proc.stderr.read() if proc.stderr else ''}")
        parts = line.split()
        if parts[0] == "begin":
            starts.append(float(parts[1]))
        elif parts[0] == "done":
            times.append(float(parts[2]) - starts[-1])
    proc.kill()
    proc.communicate()
    shutil.rmtree(tmp)
    return statistics.median(times)


class Readers:
    """Pins every reported root as it appears and records its answers."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.todo: queue.Queue[str | None] = queue.Queue()
        self.answers: dict[str, dict[str, list[str]]] = {}
        self.errors: list[str] = []
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        while (rid := self.todo.get()) is not None:
            try:
                col = Collection.open(self.path, root=rid)
                self.answers[rid] = {q: col.search(q, limit=10, mode="bm25").uids for q in QUERIES}
            except Exception as e:  # recorded as a failure of the trial
                self.errors.append(f"reader on {rid[:12]}: {type(e).__name__}: {e}")

    def close(self) -> None:
        self.todo.put(None)
        self.thread.join()


def run_trial(
    path: Path, seed: int, batch: int, rng: random.Random, publish_s: float, reported: set[str]
) -> Trial:
    strategy = rng.choice(("uniform", "early", "aimed"))
    store = RootStore(path)
    prev_head = store.head()
    scratch = _scratch(store)
    proc = child(path, seed, batch)
    assert proc.stdout is not None and proc.stderr is not None
    lines: queue.Queue[str] = queue.Queue()
    seen_lines: list[str] = []
    readers = Readers(path)

    def pump() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            seen_lines.append(line.strip())
            lines.put(line.strip())
            if (rid := _reported(line)) is not None:
                readers.todo.put(rid)

    pumper = threading.Thread(target=pump, daemon=True)
    pumper.start()
    first = lines.get(timeout=120)
    if first != "ready":
        proc.kill()
        raise SystemExit(f"child did not start: {first!r} {proc.stderr.read()}")
    if strategy == "uniform":
        delay = rng.uniform(0.0, publish_s * 8)
    elif strategy == "early":
        delay = rng.uniform(0.0, min(0.05, publish_s))
    else:
        # wait for the k-th publish to begin, then a delay up to 1.2x its expected length
        k, seen = rng.randint(0, 3), -1
        t_end = time.monotonic() + 60
        while seen < k and time.monotonic() < t_end:
            if lines.get(timeout=60).startswith("begin"):
                seen += 1
        # half anywhere in the publish, half in its last 15% (manifest, HEAD, retention)
        lo = 0.0 if rng.random() < 0.5 else 0.85
        delay = rng.uniform(publish_s * lo, publish_s * 1.2)
    time.sleep(delay)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    pumper.join()
    stderr = proc.stderr.read()
    readers.close()
    trial = Trial(delay=delay, strategy=strategy)
    trial.lines = list(seen_lines)
    trial.published = [rid for ln in trial.lines if (rid := _reported(ln)) is not None]
    if proc.returncode != -signal.SIGKILL:
        trial.failures.append(f"child exited {proc.returncode} before the kill: {stderr[-400:]}")
    trial.failures += readers.errors
    check(path, trial, reported, prev_head, scratch, readers.answers)
    reported.update(trial.published)
    reported.add(store.head())  # a root HEAD moved to before the child could report it
    return trial


def _reported(line: str) -> str | None:
    """The root id of a whole ``done <root> <time>`` line (a kill can cut a line short)."""
    parts = line.split()
    if len(parts) == 3 and parts[0] == "done" and is_root_id(parts[1]):
        return parts[1]
    return None


def _scratch(store: RootStore) -> set[str]:
    """Writer scratch: entries of tmp/ and temp files in objects/ and the collection root."""
    return (
        {f"tmp/{p.name}" for p in store.tmp.iterdir()}
        | {f"objects/{p.name}" for p in store.objects.iterdir() if p.name.startswith(".")}
        | {p.name for p in store.path.iterdir() if p.name.startswith(".")}
    )


def check(
    path: Path,
    trial: Trial,
    reported: set[str],
    prev_head: str,
    scratch: set[str],
    answers: dict[str, dict[str, list[str]]],
) -> None:
    """The invariants after a kill; failures are recorded on the trial, never raised."""
    store = RootStore(path)
    before = set(reported)
    last = trial.published[-1] if trial.published else None
    try:
        col = Collection.open(path)
        head = col.root
        res = col.search("alpha beta", limit=10, mode="bm25")
        if res.root != head:
            trial.failures.append(f"search answered from {res.root[:12]}, HEAD is {head[:12]}")
    except Exception as e:
        trial.failures.append(f"open at HEAD: {type(e).__name__}: {e}")
        return
    manifests = {p.stem for p in store.roots.glob("*.json")}
    unreported = manifests - before - set(trial.published)
    # Classify where the kill landed, from what the directory holds.
    last_line = trial.lines[-1] if trial.lines else "ready"
    in_publish = last_line != "ready" and _reported(last_line) is None
    if not in_publish:
        trial.phase = "between publishes"
    elif head in unreported:
        trial.phase = "publish: after HEAD moved (retention / before report)"
    elif unreported:
        trial.phase = "publish: manifest written, HEAD not moved"
    elif any(p.name.startswith(".HEAD.") for p in path.iterdir()):
        trial.phase = "publish: during the HEAD write"
    elif _scratch(store) - scratch:
        trial.phase = "publish: writing segments"
    else:
        trial.phase = "publish: before any file"
    if head != (last or prev_head) and not (head in unreported and in_publish):
        trial.failures.append(f"HEAD {head[:12]} is neither the last reported root nor new")
    if len(unreported - {head}) > 1:
        trial.failures.append(f"{len(unreported)} unreported manifests after one kill")
    report = verify_collection(path)
    ok = {r.root for r in report.roots if r.ok}
    for r in report.bad:
        trial.failures.append(f"verify: {r.root[:12]}: {r.problem}")
    if report.head_problem:
        trial.failures.append(f"verify: {report.head_problem}")
    missing = (before | set(trial.published)) - {r.root for r in report.roots}
    if missing:
        trial.failures.append(f"{len(missing)} reported roots are gone")
    trial.roots_verified = len(ok & (before | set(trial.published) | {head}))
    # the source maps of HEAD name exactly its live nodes (in --sync mode every node has one)
    recorded = {u for s in col.sources() for u in col.source_uids(s)}
    live = set(col.snapshot.nodes.nid_of)
    if recorded - live:
        trial.failures.append(f"{len(recorded - live)} uids recorded for a source are not live")
    if MODE == "sync" and live - recorded:
        trial.failures.append(f"{len(live - recorded)} live nodes belong to no source")
    for rid, want in answers.items():
        fresh = Collection.open(path, root=rid)
        for q, uids in want.items():
            got = fresh.search(q, limit=10, mode="bm25").uids
            if got != uids:
                trial.failures.append(f"root {rid[:12]} {q!r}: pinned {uids} != fresh {got}")
        trial.readers_compared += 1


def new_collection(base: Path, n: int, encoder: str | None) -> Path:
    path = base / f"col{n}"
    Collection.create(path, SCHEMA, encoder=encoder)
    return path


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--trials", type=int, default=100)
    ap.add_argument("--encoder", choices=("none", "default"), default="none")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--batch", type=int, default=50, help="nodes added per publish")
    ap.add_argument("--per-collection", type=int, default=10, help="trials per collection")
    ap.add_argument(
        "--updates",
        action="store_true",
        help="also replace 3 nodes by uid per publish (verify then reports the graph losing "
        "replaced nodes: a publish bug, not a crash-safety one)",
    )
    ap.add_argument(
        "--sync",
        action="store_true",
        help="the child re-indexes a source (Collection.sync: adds, deletes, changes) "
        "instead of publishing staged adds",
    )
    args = ap.parse_args()
    global UPDATES, MODE
    UPDATES = args.updates
    MODE = "sync" if args.sync else "publish"
    encoder = DEFAULT_ENCODER if args.encoder == "default" else None
    rng = random.Random(args.seed)
    base = Path(tempfile.mkdtemp(prefix="cogitave-crash-"))
    trials: list[Trial] = []
    t0 = time.perf_counter()
    try:
        path = new_collection(base, 0, encoder)
        publish_s = calibrate(path, args.batch)
        print(f"publish takes {publish_s * 1000:.0f} ms (median of 5, batch {args.batch})")
        reported = {RootStore(path).head()}
        for i in range(args.trials):
            if i and i % args.per_collection == 0:
                shutil.rmtree(path)
                path = new_collection(base, i, encoder)
                reported = {RootStore(path).head()}
            t = run_trial(path, args.seed * 1000 + i, args.batch, rng, publish_s, reported)
            trials.append(t)
            status = "ok" if not t.failures else "FAIL: " + "; ".join(t.failures)[:300]
            print(
                f"trial {i + 1:3d}  {t.strategy:7s} {t.delay * 1000:7.1f} ms  "
                f"{len(t.published):2d} published  {t.phase:52s} {status}",
                flush=True,
            )
    finally:
        shutil.rmtree(base, ignore_errors=True)
    report(trials, args, time.perf_counter() - t0)


def report(trials: list[Trial], args: argparse.Namespace, seconds: float) -> None:
    during = sum(t.phase.startswith("publish") for t in trials)
    failed = [t for t in trials if t.failures]
    print()
    print(
        f"## Crash safety: SIGKILL during {'sync' if args.sync else 'publish'} (encoder "
        f"{args.encoder}, seed {args.seed}, batch {args.batch}"
        f"{', updates' if args.updates else ''})"
    )
    print()
    print(
        "| trials | kills during publish | kills between publishes | roots published "
        "| roots verified | pinned readers compared | failures |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|")
    print(
        f"| {len(trials)} | {during} | {len(trials) - during} "
        f"| {sum(len(t.published) for t in trials)} | {sum(t.roots_verified for t in trials)} "
        f"| {sum(t.readers_compared for t in trials)} | {len(failed)} |"
    )
    print()
    print("| where the kill landed | trials |")
    print("|---|---:|")
    for phase, n in sorted(Counter(t.phase for t in trials).items()):
        print(f"| {phase} | {n} |")
    print()
    print(f"{seconds:.0f} s in all. 'roots verified' counts, per trial, the reported roots and")
    print("HEAD that verify found intact (a root is checked again after every later kill).")
    for t in failed:
        print(f"- FAIL ({t.phase}, {t.delay * 1000:.1f} ms): {'; '.join(t.failures)[:500]}")
    if failed:
        sys.exit(1)


if __name__ == "__main__":
    main()
