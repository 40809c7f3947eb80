"""Verify a collection: every retained root read back and checked; the first problem names a file.

collection directory -> one :class:`RootCheck` per retained root (plus the state of HEAD)::

    HEAD        a root id, naming a retained manifest
    manifest    its SHA-256 is its name; JSON; a format this version reads
    objects     every object it names exists and hashes to its name (streamed, each once)
    lexical     the tantivy index of its file table opens and holds ``counts.nodes`` live docs;
                its materialised ``snapshots/<id>/``, when present, holds the same files
    nodes       node segments load with consistent rows; live nodes = ``counts.nodes``
    terms       each node segment's term arrays load: strictly increasing ``uint64`` keys of
                the segment's own nids, one array per lexical field of the schema
    stats       the statistics object loads; its node count agrees
    vectors     every vector segment loads (keys, vectors, HNSW graph) with matching shapes
    graph       the graph segment and alias table load; node and edge counts agree

Verification only reads the collection: the lexical index is opened from a temporary
directory of symlinks outside it. A root that retention drops while it is being checked is
left out of the report (a concurrent publish may do that), not reported as bad.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import time
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from cogitave.errors import CogitaveError, CorruptionError, NotFoundError
from cogitave.expand.stats import CorpusStats
from cogitave.schema import Schema
from cogitave.store.arrays import load_npy
from cogitave.store.graph import GraphSegment
from cogitave.store.lexical import LexicalReader
from cogitave.store.manifest import Manifest, parent_of
from cogitave.store.roots import RootStore, is_root_id, sha256_file
from cogitave.store.vectors import DimVectors


@dataclass(frozen=True)
class RootCheck:
    """The verdict on one retained root: OK, or the first problem and the file it is in."""

    root: str
    head: bool
    ok: bool
    problem: str | None = None
    file: str | None = None
    nodes: int | None = None
    objects: int = 0


@dataclass(frozen=True)
class VerifyReport:
    """Every retained root's verdict, HEAD first, plus any problem with HEAD itself."""

    path: str
    head: str | None
    roots: tuple[RootCheck, ...]
    head_problem: str | None = None
    head_file: str | None = None
    bytes_hashed: int = 0
    seconds: float = 0.0
    orphans: int = field(default=0)

    @property
    def ok(self) -> bool:
        return self.head_problem is None and all(r.ok for r in self.roots)

    @property
    def bad(self) -> tuple[RootCheck, ...]:
        return tuple(r for r in self.roots if not r.ok)

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "ok": self.ok}

    def lines(self) -> list[str]:
        """The human report: one line per root, a line for HEAD if it is bad, a summary."""
        out = []
        if self.head_problem:
            out.append(f"BAD   HEAD          {self.head_problem}")
        for r in self.roots:
            tag = "HEAD" if r.head else "    "
            if r.ok:
                out.append(f"OK    {r.root[:12]}  {tag}  {r.nodes} nodes, {r.objects} objects")
            else:
                out.append(f"BAD   {r.root[:12]}  {tag}  {r.problem}")
        n_bad = len(self.bad) + (1 if self.head_problem else 0)
        out.append(
            f"{'OK' if self.ok else 'CORRUPT'}: {len(self.roots)} roots checked, {n_bad} bad, "
            f"{self.bytes_hashed / 1e6:.2f} MB hashed in {self.seconds:.2f} s"
            + (f"; {self.orphans} unreferenced objects" if self.orphans else "")
        )
        return out


class _Bad(Exception):
    """The first problem found in a root (internal: becomes a RootCheck)."""

    def __init__(self, problem: str, file: Path | str) -> None:
        super().__init__(problem)
        self.problem = problem
        self.file = str(file)


def verify_collection(path: str | Path) -> VerifyReport:
    """Check HEAD and every retained root of the collection at ``path``."""
    t0 = time.perf_counter()
    store = RootStore(path)
    if not store.roots.is_dir() and not (store.path / "HEAD").exists():
        raise NotFoundError(f"no collection at {store.path}")
    head, head_problem, head_file = _check_head(store)
    checker = _Checker(store)
    checks: list[RootCheck] = []
    for rid, name in _retained(store, head):
        check = checker.check(rid, name, head=rid == head)
        if check is not None:
            checks.append(check)
    live = checker.referenced
    orphans = (
        sum(1 for p in store.objects.iterdir() if not p.name.startswith(".") and p.name not in live)
        if store.objects.is_dir()
        else 0
    )
    return VerifyReport(
        path=str(store.path),
        head=head,
        roots=tuple(checks),
        head_problem=head_problem,
        head_file=head_file,
        bytes_hashed=checker.bytes_hashed,
        seconds=time.perf_counter() - t0,
        orphans=orphans,
    )


def verify_root(store: RootStore, rid: str, *, hashed: Iterable[str] = ()) -> RootCheck:
    """Check one root of ``store`` as :func:`verify_collection` checks each (``hashed``:
    objects already known to hash to their names, not hashed again): what an import runs on
    a root from elsewhere before it becomes visible."""
    checker = _Checker(store)
    checker.hashed.update(dict.fromkeys(hashed))
    try:
        check = checker.check(rid, f"{rid}.json", head=True)
    except Exception as e:  # a root written elsewhere may hold any shape of value
        return RootCheck(rid, True, False, f"the root does not load: {_msg(e)}")
    if check is None:
        return RootCheck(rid, True, False, f"root {rid[:12]} is not in {store.path}")
    return check


def _check_head(store: RootStore) -> tuple[str | None, str | None, str | None]:
    """(root id HEAD names, problem, file): HEAD must be a root id naming a retained root."""
    p = store.path / "HEAD"
    try:
        raw = p.read_bytes()
    except FileNotFoundError:
        return None, f"HEAD is missing (file {p})", str(p)
    try:
        rid = raw.decode("ascii").strip()
    except UnicodeDecodeError:
        rid = ""
    if not is_root_id(rid):
        return None, f"HEAD is not a root id: {raw[:80]!r} (file {p})", str(p)
    manifest = store.roots / f"{rid}.json"
    if not manifest.is_file():
        problem = f"HEAD names root {rid[:12]}, which is not retained: no {manifest} (file {p})"
        return rid, problem, str(p)
    return rid, None, None


def _retained(store: RootStore, head: str | None) -> Iterator[tuple[str, str]]:
    """(root id, file name) of every manifest in ``roots/``: HEAD's parent chain first, newest
    first, then the rest by modification time, newest first."""
    if not store.roots.is_dir():
        return
    files = {p.stem: p for p in store.roots.glob("*.json") if not p.name.startswith(".")}
    order: list[str] = []
    rid = head
    while rid is not None and rid in files and rid not in order:
        order.append(rid)
        try:
            rid = parent_of(files[rid].read_bytes())
        except OSError:
            break
    rest = sorted(
        (r for r in files if r not in order),
        key=lambda r: files[r].stat().st_mtime if files[r].exists() else 0.0,
        reverse=True,
    )
    for r in (*order, *rest):
        yield r, files[r].name


#: A node segment's offsets objects: the lines they index, and what those lines are.
_LINES = {"offsets_obj": ("nodes_obj", "records"), "facts_offsets_obj": ("facts_obj", "facts")}


class _Checker:
    """Checks roots one by one; object hashes are computed once and shared between roots."""

    def __init__(self, store: RootStore) -> None:
        self.store = store
        self.hashed: dict[str, str | None] = {}  # digest -> problem (None: intact)
        self.referenced: set[str] = set()
        self.bytes_hashed = 0

    def check(self, rid: str, name: str, *, head: bool) -> RootCheck | None:
        mpath = self.store.roots / name
        try:
            nodes, n_objects = self._root(rid, mpath)
        except _Bad as e:
            if not mpath.exists():
                return None  # retention dropped it while we looked
            return RootCheck(rid, head, False, e.problem, e.file)
        return RootCheck(rid, head, True, nodes=nodes, objects=n_objects)

    # -- the steps --------------------------------------------------------------------------
    def _root(self, rid: str, mpath: Path) -> tuple[int, int]:
        manifest = self._manifest(rid, mpath)
        digests = _object_refs(manifest, mpath)
        self.referenced |= set(digests)
        for digest in digests:
            self._object(digest)
        n = manifest.node_count
        if n is None:
            raise _Bad(f"manifest has no node count (file {mpath})", mpath)
        try:
            schema = Schema.from_dict(manifest.schema, source=f"root {rid[:12]}")
        except (CogitaveError, KeyError, TypeError, ValueError) as e:
            raise _Bad(f"manifest schema does not load: {_msg(e)} (file {mpath})", mpath) from e
        self._lexical(rid, manifest, schema, n, mpath)
        alive = self._nodes(manifest, n, mpath)
        self._terms(manifest, schema, mpath)
        self._stats(manifest, n, mpath)
        self._vectors(manifest, alive, mpath)
        self._graph(manifest, n, manifest.edge_count, mpath)
        return n, len(digests)

    def _manifest(self, rid: str, mpath: Path) -> Manifest:
        if not is_root_id(rid):
            raise _Bad(f"manifest file name is not a root id (file {mpath})", mpath)
        try:
            return self.store.read_root(rid)
        except (CorruptionError, NotFoundError) as e:
            raise _Bad(_msg(e), mpath) from e

    def _object(self, digest: str) -> None:
        p = self.store.objects / digest
        if digest not in self.hashed:
            if not p.is_file():
                problem: str | None = f"missing object {digest} (file {p})"
            else:
                got = sha256_file(p)
                self.bytes_hashed += p.stat().st_size
                problem = None if got == digest else f"checksum mismatch in object (file {p})"
            self.hashed[digest] = problem
        problem = self.hashed[digest]
        if problem:
            raise _Bad(problem, p)

    def _lexical(self, rid: str, manifest: Manifest, schema: Schema, n: int, mpath: Path) -> None:
        files = manifest.lexical_files
        snap = self.store.snapshots / rid
        if (snap / "meta.json").exists():
            # Readers use this directory when it exists: it must hold the root's bytes.
            for fname, digest in files.items():
                sp, op = snap / fname, self.store.objects / digest
                if not sp.is_file():
                    raise _Bad(f"snapshot file missing (file {sp})", sp)
                if not _same_file(sp, op) and sha256_file(sp) != digest:
                    raise _Bad(f"snapshot file differs from its object (file {sp})", sp)
        if not files:
            if n:
                raise _Bad(f"manifest has {n} nodes but no lexical files (file {mpath})", mpath)
            return
        tmp = Path(tempfile.mkdtemp(prefix="cogitave-verify-"))
        try:
            for fname, digest in files.items():
                os.symlink((self.store.objects / digest).resolve(), tmp / fname)
            try:
                docs = _num_docs(tmp, schema)
            except CogitaveError as e:
                meta = self.store.objects / files.get("meta.json", "?")
                raise _Bad(f"lexical index does not open: {_msg(e)} (file {meta})", meta) from e
            except BaseException as e:  # tantivy panics surface as BaseException subclasses
                if isinstance(e, KeyboardInterrupt | SystemExit):
                    raise
                meta = self.store.objects / files.get("meta.json", "?")
                raise _Bad(f"lexical index does not open: {_msg(e)} (file {meta})", meta) from e
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
            if tmp.exists():  # tantivy may touch its lock file while the index is dropped
                time.sleep(0.05)
                shutil.rmtree(tmp, ignore_errors=True)
        if docs != n:
            raise _Bad(
                f"lexical index holds {docs} live documents, the manifest counts {n} "
                f"(file {mpath})",
                mpath,
            )

    def _nodes(self, manifest: Manifest, n: int, mpath: Path) -> np.ndarray:
        from cogitave.store.nodes import NodeTable

        next_nid = manifest.next_nid
        segments = manifest.segments
        for seg in segments:
            count = seg.get("count", -1)
            keys = ["nids_obj", "offsets_obj", "deletes_obj"]
            if "facts_offsets_obj" in seg:
                keys.append("facts_offsets_obj")
            for key in keys:
                p = self.store.objects / seg[key]
                try:
                    arr = load_npy(self.store, seg[key], mmap=False)
                except (CogitaveError, ValueError, OSError, EOFError) as e:
                    raise _Bad(f"node segment {key} does not load: {_msg(e)} (file {p})", p) from e
                want = count if key == "nids_obj" else count + 1 if key in _LINES else None
                if arr.ndim != 1 or (want is not None and len(arr) != want):
                    raise _Bad(f"node segment {key} has {arr.shape} rows, not {want} (file {p})", p)
                if key == "nids_obj" and len(arr) and int(arr.max()) >= next_nid:
                    raise _Bad(f"node ids past next_nid {next_nid} (file {p})", p)
                if key in _LINES and len(arr):
                    data, what = _LINES[key]
                    size = (self.store.objects / seg[data]).stat().st_size
                    if int(arr[-1]) != size or (np.diff(arr) < 0).any():
                        raise _Bad(f"node offsets do not match the {what} (file {p})", p)
        try:
            table = NodeTable(self.store, segments, next_nid)
        except (CogitaveError, ValueError, IndexError, KeyError, OSError) as e:
            raise _Bad(f"node segments do not load: {_msg(e)} (file {mpath})", mpath) from e
        if table.live_count != n:
            raise _Bad(
                f"node segments hold {table.live_count} live nodes, the manifest counts {n} "
                f"(file {mpath})",
                mpath,
            )
        return table.alive

    def _terms(self, manifest: Manifest, schema: Schema, mpath: Path) -> None:
        fields = {f"s_{d}" for d in schema.semantic} | {
            f"{p}_{d}" for d in schema.exact for p in ("t", "x")
        }
        for seg in manifest.segments:
            terms = seg.get("terms")
            if terms is None:
                continue  # written before the forward term index: readers ask tantivy
            if not isinstance(terms, dict):
                raise _Bad(f"node segment terms are not an object (file {mpath})", mpath)
            nids: np.ndarray | None = None
            for fname, entry in terms.items():
                if fname not in fields:
                    raise _Bad(f"term arrays name an unknown field {fname!r} (file {mpath})", mpath)
                if not isinstance(entry, dict) or not isinstance(entry.get("keys_obj"), str):
                    raise _Bad(f"term arrays of {fname!r} name no object (file {mpath})", mpath)
                p = self.store.objects / entry["keys_obj"]
                try:
                    keys = load_npy(self.store, entry["keys_obj"], mmap=False)
                except (CogitaveError, ValueError, OSError, EOFError) as e:
                    raise _Bad(
                        f"term keys of {fname!r} do not load: {_msg(e)} (file {p})", p
                    ) from e
                if keys.dtype != np.uint64 or keys.ndim != 1 or len(keys) != entry.get("count"):
                    raise _Bad(
                        f"term keys of {fname!r} are {keys.dtype} {keys.shape}, not "
                        f"{entry.get('count')} uint64 (file {p})",
                        p,
                    )
                if len(keys) > 1 and not (keys[1:] > keys[:-1]).all():
                    raise _Bad(f"term keys of {fname!r} are not sorted (file {p})", p)
                if nids is None:
                    nids = load_npy(self.store, seg["nids_obj"], mmap=False).astype(np.uint64)
                owners = keys >> np.uint64(32)  # sorted: keys are
                owners = owners[np.concatenate(([True], owners[1:] != owners[:-1]))]
                if not np.isin(owners, nids).all():
                    raise _Bad(
                        f"term keys of {fname!r} name nodes of another segment (file {p})", p
                    )

    def _stats(self, manifest: Manifest, n: int, mpath: Path) -> None:
        obj = manifest.stats_obj
        if not obj:
            return
        p = self.store.objects / obj
        try:
            stats = CorpusStats.from_bytes(p.read_bytes())
        except Exception as e:  # numpy raises many kinds on a bad archive
            raise _Bad(f"statistics do not load: {_msg(e)} (file {p})", p) from e
        if stats.n_nodes != n:
            raise _Bad(f"statistics count {stats.n_nodes} nodes, not {n} (file {p})", p)

    def _vectors(self, manifest: Manifest, alive: np.ndarray, mpath: Path) -> None:
        want_dim = manifest.encoder_dim
        rows = manifest.vector_rows
        for dim, entries in manifest.vectors.items():
            for e in entries:
                self._vector_segment(e, want_dim)
            try:
                DimVectors(self.store, entries, alive)
            except Exception as ex:
                raise _Bad(
                    f"vectors of {dim!r} do not load: {_msg(ex)} (file {mpath})", mpath
                ) from ex
            total = sum(int(e.get("count", 0)) for e in entries)
            if dim in rows and rows[dim] != total:
                raise _Bad(
                    f"vectors of {dim!r}: {total} rows, the manifest counts {rows[dim]} "
                    f"(file {mpath})",
                    mpath,
                )

    def _vector_segment(self, e: dict[str, Any], want_dim: int | None) -> None:
        from usearch.index import Index

        count = int(e.get("count", -1))
        for key in ("keys_obj", "vec_obj"):
            p = self.store.objects / e[key]
            try:
                arr = load_npy(self.store, e[key], mmap=False)
            except (CogitaveError, ValueError, OSError, EOFError) as ex:
                raise _Bad(f"vector segment {key} does not load: {_msg(ex)} (file {p})", p) from ex
            ok = len(arr) == count and (
                key == "keys_obj" or (arr.ndim == 2 and want_dim in (None, arr.shape[1]))
            )
            if not ok:
                raise _Bad(
                    f"vector segment {key} has shape {arr.shape}, expected {count} rows"
                    + (f" of {want_dim}" if key == "vec_obj" and want_dim else "")
                    + f" (file {p})",
                    p,
                )
        if e.get("hnsw_obj"):
            p = self.store.objects / e["hnsw_obj"]
            try:
                idx = Index.restore(str(p), view=True)
            except Exception as ex:
                raise _Bad(f"HNSW graph does not load: {_msg(ex)} (file {p})", p) from ex
            if idx is None or len(idx) != count:
                size = None if idx is None else len(idx)
                raise _Bad(f"HNSW graph holds {size} rows, not {count} (file {p})", p)

    def _graph(self, manifest: Manifest, n: int, edges: int | None, mpath: Path) -> None:
        entry = manifest.graph
        if not entry:
            return
        p = self.store.objects / entry["graph_obj"]
        try:
            graph = GraphSegment.open(self.store, entry["graph_obj"])
        except CogitaveError as e:
            raise _Bad(f"graph segment does not load: {_msg(e)} (file {p})", p) from e
        if graph.n_nodes != n or graph.n_nodes != entry.get("nodes"):
            raise _Bad(f"graph holds {graph.n_nodes} nodes, the manifest counts {n} (file {p})", p)
        if graph.n_edges != entry.get("edges") or (edges is not None and graph.n_edges != edges):
            raise _Bad(
                f"graph holds {graph.n_edges} edges, the manifest counts {edges} (file {p})", p
            )
        if entry.get("aliases_obj"):
            ap = self.store.objects / entry["aliases_obj"]
            try:
                aliases = json.loads(ap.read_bytes())
            except (ValueError, OSError) as e:
                raise _Bad(f"alias table is not JSON (file {ap})", ap) from e
            if not isinstance(aliases, dict):
                raise _Bad(f"alias table is not an object (file {ap})", ap)


def _object_refs(manifest: Manifest, mpath: Path) -> list[str]:
    """Every object hash the manifest names, in manifest order, each once."""
    out = list(dict.fromkeys(manifest.objects()))
    for d in out:
        if not isinstance(d, str) or not is_root_id(d):  # object names are SHA-256 hex too
            raise _Bad(f"manifest names a malformed object id {d!r} (file {mpath})", mpath)
    return out


def _num_docs(path: Path, schema: Schema) -> int:
    """Live documents of the index in ``path``; the index is dropped when this returns."""
    return LexicalReader(path, schema).num_docs()


def _same_file(a: Path, b: Path) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def _msg(e: BaseException) -> str:
    text = e.message if isinstance(e, CogitaveError) else f"{type(e).__name__}: {e}"
    return " ".join(str(text).split())[:300]
