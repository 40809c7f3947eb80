"""What a documentation build costs: CPU seconds per page and per embedded text, against a
baseline checkout in the same run.

    .venv/bin/python bench/build_cost.py [--sets fastapi,hugo,vite,react] \
        [--baseline-src DIR] [--also NAME=DIR ...] [--rounds 1] [--write]

For each docs tree of ``bench/docs_quality.py`` named in ``--sets`` (FastAPI and Hugo from
``$COGITAVE_DATA``, Vite and React from ``bench/.cache/sources``; a missing tree is skipped),
``cogitave index --collection TMP TREE`` runs as a subprocess into a fresh collection, once
with this checkout and once with ``--baseline-src`` (another checkout's ``src``, run by the
same interpreter; omitted: this checkout only) and each ``--also NAME=DIR`` (more checkouts,
each against the same baseline), all taking turns in rotating order. The
CPU time is the subprocess's own (user + system, ``RUSAGE_CHILDREN``), so the shared
machine's other load changes it less than wall time. Pages, nodes and texts embedded are read
from the command's report.

Printed per set and checkout: pages, nodes, texts embedded, CPU s, CPU s per page, CPU ms
per embedded text, wall s, and CPU per page against the baseline's (ratio, < 1 is cheaper).
``--write`` puts the table in its section of bench/RESULTS.md with the machine noted.
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from _machine import machine_line, write_section  # noqa: E402
from docs_quality import BASE_URLS, trees  # noqa: E402

DEFAULT_SETS = "fastapi,hugo,vite,react"
_NODES = re.compile(r"^nodes: (.*)$", re.M)
_TEXTS = re.compile(r"(\d+) texts embedded")


@dataclass
class Build:
    checkout: str
    pages: int
    nodes: int
    texts: int
    cpu: float
    wall: float


def run_build(tree: Path, src: Path, checkout: str, base_url: str | None) -> Build:
    """One ``cogitave index`` of ``tree`` with the package under ``src``, into a fresh folder."""
    work = Path(tempfile.mkdtemp(prefix="cogitave-build-cost-"))
    cmd = [sys.executable, "-m", "cogitave.surfaces.cli", "index", "--collection"]
    cmd += [str(work / "col"), str(tree)]
    if base_url:
        cmd += ["--base-url", base_url]
    env = {**os.environ, "PYTHONPATH": str(src)}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, env=env)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        sys.exit(f"{checkout}: cogitave index failed ({done.returncode}):\n{done.stderr[-2000:]}")
    out = done.stdout + done.stderr
    kinds = _NODES.search(out)
    texts = _TEXTS.search(out)
    if kinds is None or texts is None:
        sys.exit(f"{checkout}: the index report has no node or text counts:\n{out[-2000:]}")
    counts = {k: int(v) for k, v in (part.rsplit(" ", 1) for part in kinds.group(1).split(", "))}
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return Build(
        checkout, counts.get("page", 0), sum(counts.values()), int(texts.group(1)), cpu, wall
    )


def package_src(checkout: Path) -> Path:
    """A checkout's ``src`` (the folder put on ``PYTHONPATH``); exits when it holds no package:
    a wrong path would fall back to the installed package and time this checkout twice."""
    src = checkout.resolve() / "src"
    if not (src / "cogitave" / "__init__.py").is_file():
        sys.exit(f"{checkout} is not a checkout: {src / 'cogitave'} is missing (pass its root)")
    return src


def cost_table(sets: list[str], checkouts: dict[str, Path], rounds: int, data: Path) -> str:
    """The table (markdown): each set built by each checkout, turns rotating, best of rounds."""
    lines = [
        "| set | checkout | pages | nodes | texts embedded | CPU s | CPU s/page "
        "| CPU ms/text | wall s | CPU/page vs baseline |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    names = list(checkouts)
    for name, tree in trees(data).items():
        if name not in sets:
            continue
        if not tree.exists():
            print(f"skip {name}: {tree} not found", file=sys.stderr)
            continue
        best: dict[str, Build] = {}
        for r in range(rounds):
            turn = names[r % len(names) :] + names[: r % len(names)]
            for checkout in turn:
                b = run_build(tree, checkouts[checkout], checkout, BASE_URLS.get(name))
                print(f"{name} {checkout}: {b.cpu:.1f} CPU s, {b.wall:.1f} s", flush=True)
                if checkout not in best or b.cpu < best[checkout].cpu:
                    best[checkout] = b
        base = best.get("baseline")
        for checkout in names:
            b = best[checkout]
            per_page = b.cpu / max(b.pages, 1)
            ratio = (
                f"{per_page / (base.cpu / max(base.pages, 1)):.2f}x" if base is not None else "-"
            )
            lines.append(
                f"| {name} | {checkout} | {b.pages:,} | {b.nodes:,} | {b.texts:,} | {b.cpu:.1f} "
                f"| {per_page:.3f} | {1000 * b.cpu / max(b.texts, 1):.1f} | {b.wall:.1f} "
                f"| {ratio} |"
            )
    return "\n".join(lines) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    data = os.environ.get("COGITAVE_DATA") or HERE.parent.parent / "shared" / "data"
    ap.add_argument("--data", type=Path, default=Path(data))
    ap.add_argument("--sets", default=DEFAULT_SETS, help="comma-separated docs trees")
    ap.add_argument("--baseline-src", type=Path, help="another checkout to build with too")
    ap.add_argument(
        "--also",
        action="append",
        default=[],
        metavar="NAME=DIR",
        help="another checkout to build with, named NAME in the table (repeatable)",
    )
    ap.add_argument("--rounds", type=int, default=1, help="builds per checkout (best CPU)")
    ap.add_argument("--write", action="store_true", help="replace its section of RESULTS.md")
    args = ap.parse_args()
    checkouts = {"current": HERE.parent / "src"}
    if args.baseline_src:
        checkouts["baseline"] = package_src(args.baseline_src)
    for item in args.also:
        name, sep, where = item.partition("=")
        if not sep or not name or name in checkouts:
            sys.exit(f"--also takes NAME=DIR with a new name, not {item!r}")
        checkouts[name] = package_src(Path(where))
    sets = [s for s in args.sets.split(",") if s]
    table = cost_table(sets, checkouts, args.rounds, args.data)
    print(table)
    if args.write:
        base = f" --baseline-src {args.baseline_src}" if args.baseline_src else ""
        base += "".join(f" --also {item}" for item in args.also)
        write_section(
            "build_cost",
            f"## What a docs build costs ({time.strftime('%Y-%m-%d')})\n\n{machine_line()}\n\n"
            f"`bench/build_cost.py --sets {args.sets}{base} --rounds {args.rounds}`\n\n{table}",
        )


if __name__ == "__main__":
    main()
