"""Digests of what the docs reader makes of real trees: one hash of every node record and one
of the report per tree, to compare two versions of the reader (not a test: run it by hand).

    PYTHONPATH=src COGITAVE_DATA=../shared/data python -m tests.ingest.docs_digest [--repo DIR]

Trees: ``$COGITAVE_DATA/docs_fastapi`` (the repository root: its includes are inside),
``$COGITAVE_DATA/docs_hugo``, the project's own docs (through ``mkdocs.yml``) and every folder
under ``tests/fixtures/docs``. ``--repo`` names the checkout whose docs and fixtures are read
(default: this one), so two versions can read the same files. Timings are left out of the
report's hash; ``--show NAME`` prints one tree's report.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import sys
from pathlib import Path
from typing import Any

# Keys the report gained with the confined reader; dropped from the hash when empty, so a
# tree that reads nothing outside itself compares equal with an older reader's report.
NEW_EMPTY_KEYS = ("refused", "refused_count", "allow_outside")


def _reader() -> Any:
    from cogitave.ingest.docs import read_docs

    return read_docs


def trees(repo: Path) -> dict[str, Path]:
    data = Path(os.environ.get("COGITAVE_DATA", repo.parent / "shared" / "data"))
    out = {
        "fastapi": data / "docs_fastapi",
        "hugo": data / "docs_hugo",
        "project": repo / "mkdocs.yml",
    }
    for folder in sorted((repo / "tests" / "fixtures" / "docs").iterdir()):
        out[f"fixture:{folder.name}"] = folder
    return out


def node_record(node: Any) -> dict[str, Any]:
    return {
        "uid": node.uid,
        "kind": node.kind,
        "dims": node.dims,
        "content": node.content,
        "edges": [[e.label, e.dst] for e in node.edges],
        "meta": node.meta,
    }


def digest(path: Path, dump: Path | None = None) -> tuple[str, str, str]:
    batch = _reader()(path)
    records = sorted((node_record(n) for n in batch.nodes), key=lambda r: r["uid"])
    nodes = json.dumps(records, sort_keys=True, default=str, ensure_ascii=False)
    stats = dict(batch.stats)
    stats.pop("seconds", None)
    for key in NEW_EMPTY_KEYS:
        if not stats.get(key, 1):
            stats.pop(key)
    report = re.sub(r" in \d+\.\d\d s$", "", batch.report, count=1, flags=re.M)
    both = json.dumps([report, stats, [str(p) for p in batch.problems]], sort_keys=True)
    if dump is not None:  # one record a line, to diff two versions
        dump.write_text(
            "\n".join(json.dumps(r, sort_keys=True, default=str) for r in records)
            + "\n"
            + json.dumps(stats, sort_keys=True, indent=1)
            + "\n"
            + report
            + "\n",
            encoding="utf-8",
        )
    return _h(nodes), _h(both), report


def _h(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repo", type=Path, default=Path(__file__).resolve().parents[2])
    ap.add_argument("--show", default="")
    ap.add_argument("--dump", type=Path, help="a folder: each tree's records, stats, report")
    args = ap.parse_args()
    for name, path in trees(args.repo).items():
        if not path.exists():
            print(f"{name:24} (absent: {path})")
            continue
        dump = args.dump / (name.replace(":", "_") + ".txt") if args.dump else None
        if dump is not None:
            dump.parent.mkdir(parents=True, exist_ok=True)
        nodes, report, text = digest(path, dump)
        print(f"{name:24} nodes {nodes}  report {report}")
        if args.show == name:
            sys.stdout.write(text + "\n")


if __name__ == "__main__":
    main()
