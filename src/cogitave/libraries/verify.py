"""Verify a collection of libraries: its manifest, every version's collection, the shared
graph, and what killed writers left; every problem with the command that repairs it.

collection of libraries -> :class:`LibrariesReport`::

    LIBRARIES.json  parses; every entry's folder exists, is named once, and holds the root
                    the entry pins (retained, and whole)
    libs/<ref>/     each version's collection, checked as ``cogitave verify`` checks one
                    (:func:`cogitave.store.verify.verify_collection`: HEAD, every retained
                    root, objects, indexes, counts)
    graph/          the graph of every version that LIBRARIES.json names: its objects exist
                    and hash to their names, the segment loads, its counts agree
    orphans         version folders LIBRARIES.json does not name (a first index killed
                    after its folder was placed)
    staging         staging folders and lock files no live writer owns (an import or a first
                    index killed on the way); any writer collects them

Verification only reads.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cogitave.errors import CogitaveError
from cogitave.libraries import layout
from cogitave.printable import printable
from cogitave.store.graph import GraphSegment
from cogitave.store.roots import RootStore, is_root_id, sha256_file
from cogitave.store.verify import VerifyReport, verify_collection


@dataclass(frozen=True)
class Problem:
    """One thing wrong, where, and the command or step that repairs it."""

    where: str
    problem: str
    repair: str


@dataclass(frozen=True)
class VersionCheck:
    """One library version's verdict."""

    ref: str
    dir: str
    ok: bool
    nodes: int | None = None
    roots: int = 0


@dataclass(frozen=True)
class LibrariesReport:
    """A collection of libraries' verdict: per version, and every problem with its repair."""

    path: str
    versions: tuple[VersionCheck, ...]
    problems: tuple[Problem, ...]
    bytes_hashed: int = 0
    seconds: float = 0.0
    details: dict[str, Any] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not self.problems

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "kind": "libraries",
            "ok": self.ok,
            "versions": [v.__dict__ for v in self.versions],
            "problems": [p.__dict__ for p in self.problems],
            "bytes_hashed": self.bytes_hashed,
            "seconds": self.seconds,
            **self.details,
        }

    def lines(self) -> list[str]:
        """The human report: one line per version, each problem with its repair, a summary."""
        out = []
        for v in self.versions:
            if v.ok:
                out.append(f"OK    {v.ref}  {v.nodes} nodes, {v.roots} roots")
            else:
                out.append(f"BAD   {v.ref}  ({v.dir})")
        for p in self.problems:
            out.append(f"BAD   {p.where}: {p.problem}")
            out.append(f"      repair: {p.repair}")
        out.append(
            f"{'OK' if self.ok else 'CORRUPT'}: {len(self.versions)} library versions checked, "
            f"{len(self.problems)} problems, {self.bytes_hashed / 1e6:.2f} MB hashed in "
            f"{self.seconds:.2f} s"
        )
        return out


def verify_libraries(path: str | Path) -> LibrariesReport:
    """Check the collection of libraries at ``path`` (see the module doc)."""
    t0 = time.perf_counter()
    root = Path(path)
    where = printable(root, 200)
    problems: list[Problem] = []
    versions: list[VersionCheck] = []
    hashed = 0
    manifest: layout.LibrariesManifest | None = None
    try:
        manifest = layout.read_manifest(root)
    except CogitaveError as e:
        problems.append(
            Problem(
                layout.MANIFEST,
                printable(e.message),
                "restore LIBRARIES.json from a backup; else index the libraries again into a "
                "new collection (or import their packs)",
            )
        )
    if manifest is not None:
        seen: dict[str, str] = {}
        for e in manifest.libraries:
            redo = f"cogitave delete --collection {where} --library {e.ref}, then index it again"
            if e.dir in seen:
                problems.append(Problem(e.ref, f"its folder {e.dir} is {seen[e.dir]}'s too", redo))
                versions.append(VersionCheck(e.ref, e.dir, False))
                continue
            seen[e.dir] = e.ref
            check, report = _version(root, e, redo, problems)
            versions.append(check)
            hashed += report.bytes_hashed if report is not None else 0
        hashed += _graph(root, manifest, problems)
    # without a manifest every version folder would look like an orphan
    for rel in layout.orphans(root, manifest) if manifest is not None else ():
        ref = rel.removeprefix(f"{layout.LIBS}/").split("~")[0]
        problems.append(
            Problem(
                rel,
                "a version folder LIBRARIES.json does not name (an index killed before it "
                "published)",
                f"cogitave delete --collection {where} --library {ref} (or index that version "
                "again: it takes the folder's place)",
            )
        )
    for rel in layout.staging_leftovers(root):
        problems.append(
            Problem(
                rel,
                "a staging leftover no live writer owns (an import or first index killed on "
                "the way)",
                "run any index or delete on this collection: it collects it",
            )
        )
    return LibrariesReport(
        str(root), tuple(versions), tuple(problems), hashed, time.perf_counter() - t0
    )


def _version(
    root: Path, e: layout.LibraryEntry, redo: str, problems: list[Problem]
) -> tuple[VersionCheck, VerifyReport | None]:
    folder = root / e.dir
    if not (folder / "HEAD").is_file() and not (folder / "roots").is_dir():
        problems.append(Problem(e.ref, f"its folder {e.dir} holds no collection", redo))
        return VersionCheck(e.ref, e.dir, False), None
    try:
        report = verify_collection(folder)
    except CogitaveError as ex:
        problems.append(Problem(e.ref, printable(ex.message), redo))
        return VersionCheck(e.ref, e.dir, False), None
    bad = [r for r in report.roots if not r.ok]
    if report.head_problem:
        problems.append(Problem(e.ref, printable(report.head_problem), redo))
    for r in bad:
        problems.append(Problem(e.ref, f"root {r.root[:12]}: {printable(r.problem)}", redo))
    pinned = next((r for r in report.roots if r.root == e.root), None)
    if pinned is None:
        problems.append(
            Problem(e.ref, f"the root LIBRARIES.json pins, {e.root[:12]}, is not retained", redo)
        )
    ok = pinned is not None and pinned.ok and not bad and not report.head_problem
    nodes = pinned.nodes if pinned is not None else None
    if ok and nodes != e.nodes:
        problems.append(
            Problem(e.ref, f"LIBRARIES.json counts {e.nodes} nodes, its root {nodes}", redo)
        )
        ok = False
    return VersionCheck(e.ref, e.dir, ok, nodes, len(report.roots)), report


def _graph(root: Path, manifest: layout.LibrariesManifest, problems: list[Problem]) -> int:
    """Check the shared graph LIBRARIES.json names; bytes hashed."""
    entry = manifest.graph
    if not entry:
        return 0
    store = RootStore(root / "graph")
    redo = (
        "index every library again into a new collection (or import their packs): the graph "
        "of every version is rebuilt from them"
    )
    hashed = 0
    for key, digest in entry.items():
        if not key.endswith("_obj"):
            continue
        if not is_root_id(digest):
            problems.append(Problem("graph", f"{key} is not an object hash", redo))
            return hashed
        p = store.objects / digest
        if not p.is_file():
            problems.append(Problem("graph", f"missing object {digest[:12]} ({key})", redo))
            return hashed
        hashed += p.stat().st_size
        if sha256_file(p) != digest:
            problems.append(Problem("graph", f"checksum mismatch in {p}", redo))
            return hashed
    try:
        graph = GraphSegment.open(store, str(entry.get("graph_obj")), mmap=False)
    except (CogitaveError, ValueError, KeyError, OSError) as e:
        text = e.message if isinstance(e, CogitaveError) else f"{type(e).__name__}: {e}"
        problems.append(Problem("graph", f"the graph does not load: {printable(text)}", redo))
        return hashed
    if graph.n_nodes != entry.get("nodes") or graph.n_edges != entry.get("edges"):
        problems.append(
            Problem(
                "graph",
                f"the graph holds {graph.n_nodes} nodes and {graph.n_edges} edges; "
                f"LIBRARIES.json counts {entry.get('nodes')} and {entry.get('edges')}",
                redo,
            )
        )
    return hashed
