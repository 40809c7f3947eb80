"""The main job, timed: the docs of every dependency of a real project, at the versions it runs.

    .venv/bin/python bench/project_deps.py [--project DIR] [--only a,b,...] [--write]

Runs ``cogitave index --collection TMP --project DIR`` (by default this project, whose
``.venv`` holds every runtime dependency: each is read from the installed package, offline)
into a fresh temporary collection, then the same command again (a second run must fetch
nothing). Reports per dependency where its docs came from, nodes and API entries, and for the
whole job: dependencies, nodes, wall minutes and CPU seconds (the command's own and its
children's, from ``getrusage``, steadier than wall time on a shared machine). ``--write`` puts
the table in its section of bench/RESULTS.md.
"""

from __future__ import annotations

import argparse
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
_LINE = re.compile(
    r"^(?P<name>\S+) (?P<version>\S+) \((?P<how>[^)]*)\): fetched from (?P<source>\S+) "
    r"\((?P<step>[^)]*)\): (?P<nodes>\d+) nodes, (?P<api>\d+) API entries"
)


def run(cmd: list[str]) -> tuple[str, float, float]:
    """(output, wall seconds, CPU seconds of the command and its children)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    res = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if res.returncode not in (0, 1):
        sys.exit(f"{' '.join(cmd)} exited {res.returncode}:\n{res.stderr[-2000:]}")
    return res.stdout + res.stderr, wall, cpu


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--project", type=Path, default=ROOT)
    ap.add_argument("--only", default="", help="comma-separated dependencies (default: all)")
    ap.add_argument("--write", action="store_true")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="cogitave-deps-"))
    cli = [sys.executable, "-m", "cogitave.surfaces.cli", "index", "--collection", str(tmp / "c"),
           "--project", str(args.project)]  # fmt: skip
    if args.only:
        cli += ["--only", args.only]
    try:
        first, wall, cpu = run(cli)
        second, wall2, cpu2 = run(cli)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    rows = [m.groupdict() for line in first.splitlines() if (m := _LINE.match(line.strip()))]
    failed = [line for line in first.splitlines() if ": failed" in line or " failed:" in line]
    summary = next((x for x in first.splitlines() if "dependencies:" in x), "")
    again = next((x for x in second.splitlines() if "dependencies:" in x), "")
    nodes = sum(int(r["nodes"]) for r in rows)
    api = sum(int(r["api"]) for r in rows)
    lines = [
        "| dependency | version | from | nodes | API entries |",
        "|---|---|---|---:|---:|",
        *(
            f"| {r['name']} | {r['version']} | {r['step']} | {r['nodes']} | {r['api']} |"
            for r in rows
        ),
    ]
    shown = f"--only {args.only}" if args.only else "every runtime dependency"
    text = "\n".join(
        [
            f"## The main job: a project's dependencies ({time.strftime('%Y-%m-%d')})",
            "",
            f"`bench/project_deps.py{' --only ' + args.only if args.only else ''}`: "
            f"`cogitave index --project {args.project.name or '.'}` ({shown}) into a fresh "
            "collection with the default encoder, then the same command again.",
            "",
            *lines,
            "",
            f"{summary.strip()} {len(rows)} indexed, {nodes} nodes, {api} API entries; "
            f"{wall / 60:.1f} min wall, {cpu:.0f} s CPU ({cpu / max(nodes, 1) * 1000:.0f} ms "
            f"a node). Second run: {again.strip()} in {wall2:.1f} s ({cpu2:.1f} s CPU).",
            *(f"- {x.strip()}" for x in failed[:20]),
        ]
    )
    print(text)
    if args.write:
        sys.path.insert(0, str(Path(__file__).parent))
        from _machine import machine_line, write_section

        head, rest = text.split("\n", 1)
        write_section("project_deps", f"{head}\n\n{machine_line()}\n{rest}")


if __name__ == "__main__":
    main()
