"""Readers during publishes, longer and bigger than tests/test_concurrency.py (same harness).

For each reader-thread count: a fresh BM25-only collection of ``--nodes`` nodes; reader
threads that follow HEAD, one pinned reader, one reader process; a writer process that
publishes batches (adds, 3 replacements, 1 delete) for ``--seconds``. Every answer is compared
with a fresh ``Collection.open(path, root=...)`` of the root it names. Latency is split into
the idle baseline (before the writer starts), all searches, and searches that overlapped a
publish; "open" is a reader moving to a new HEAD (open + first search).

    .venv/bin/python bench/concurrency.py [--threads 1,8] [--seconds 20] [--nodes 5000]
        [--batch 200] [--retention 100000]

Prints a markdown table (``--write`` puts it in its section of bench/RESULTS.md with the
machine); the collection lives in a temporary directory.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from _machine import machine_line, write_section  # noqa: E402
from tests.conftest import SCHEMA, make_nodes  # noqa: E402
from tests.test_concurrency import run_concurrency  # noqa: E402

from cogitave import Collection  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--threads", default="1,8", help="comma-separated reader-thread counts")
    ap.add_argument("--seconds", type=float, default=20.0, help="how long the writer publishes")
    ap.add_argument("--nodes", type=int, default=5000)
    ap.add_argument("--batch", type=int, default=200, help="nodes added per publish")
    ap.add_argument("--retention", type=int, default=100_000, help="roots the writer keeps")
    ap.add_argument("--write", action="store_true", help="replace its section of bench/RESULTS.md")
    args = ap.parse_args()
    rows = []
    for n_threads in (int(x) for x in args.threads.split(",")):
        tmp = Path(tempfile.mkdtemp(prefix="cogitave-conc-"))
        try:
            path = tmp / "col"
            col = Collection.create(path, SCHEMA, encoder=None)
            col.add(make_nodes(args.nodes))
            col.publish()
            t = time.perf_counter()
            run = run_concurrency(
                path,
                threads=n_threads,
                publishes=1,
                batch=args.batch,
                seconds=args.seconds,
                retention=args.retention,
                idle_seconds=2.0,
            )
            s = run.summary()
            rows.append((n_threads, s, run.errors, run.mismatches, time.perf_counter() - t))
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    out = [
        f"\n## Concurrency: readers during publishes ({args.nodes} nodes, BM25 only, "
        f"{args.batch} adds per publish, {args.seconds:.0f} s of publishing, "
        f"retention {args.retention}) ({time.strftime('%Y-%m-%d')})\n",
        machine_line(),
        "",
        f"`.venv/bin/python bench/concurrency.py --retention {args.retention} --write`. "
        "Errors: failed searches; mixed-root: answers that differ from a fresh reader's on "
        "the root they name.",
        "",
        "| reader threads (+1 pinned, +1 process) | publishes | publish ms | searches "
        "| during publish | errors | mixed-root | idle p50 ms | p50 ms | p99 ms "
        "| during-publish p99 ms | during-publish max ms | max open ms |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for n, s, errors, mism, _ in rows:
        out.append(
            f"| {n} | {s['publishes']} | {s['publish_ms_mean']:.0f} | {s['searches']} "
            f"| {s['during_publish']} | {len(errors)} | {len(mism)} "
            f"| {s['idle_p50_ms']:.2f} | {s['p50_ms']:.2f} | {s['p99_ms']:.1f} "
            f"| {s['during_p99_ms']:.1f} | {s['during_max_ms']:.1f} | {s['open_max_ms']:.1f} |"
        )
    out.append("")
    for n, _, errors, mism, _ in rows:
        out += [f"- {n} threads: {e[:300]}" for e in (errors + mism)[:5]]
    text = "\n".join(out) + "\n"
    print(text)
    if args.write:
        write_section("concurrency", text)
    if any(errors or mism for _, _, errors, mism, _ in rows):
        sys.exit(1)


if __name__ == "__main__":
    main()
