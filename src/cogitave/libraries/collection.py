"""A collection of libraries: a :class:`~cogitave.reader.Reader` over one ordinary collection
per library version (:mod:`cogitave.libraries.layout`), and the writes that add, sync and
delete library versions.

Reading. A search names libraries (``fastapi``, ``fastapi@0.115.0``) or none:

- one library version: the search reads that version's own collection, so it scores exactly
  what a collection of that library alone would (its statistics, its vocabulary);
- several, or none: the search reads a view over those versions' collections (the sharded
  view, :class:`~cogitave.distributed.view.ShardedView`: global BM25 statistics, one
  ranking), each library at its default version: the one a project pins
  (:meth:`LibraryCollection.pin`), else the newest held.

Every node of a library version carries its ``library`` and ``version`` (in ``meta``) and a uid
in that version's namespace (``fastapi@0.115.0:tutorial/query``), so hits name the version
they came from and the same page of two versions are two nodes. The graph of every version
together (with ``supersededBy`` from each page to the same page of the next version held)
answers the graph tools.

Writing. :meth:`LibraryCollection.sync_library` syncs one library version's nodes into its own
collection, updates the graph of every version, and publishes a new ``LIBRARIES.json`` in one
rename; :meth:`LibraryCollection.delete_library` removes versions. One writer at a time. A
version's first index or import is built in a staging folder and renamed into place just
before the new ``LIBRARIES.json`` names it; what a killed writer left is collected or
reclaimed by the next one (:mod:`cogitave.libraries.layout`, "Recovery").
"""

from __future__ import annotations

import contextlib
import itertools
import os
import shutil
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from dataclasses import replace as replace_
from pathlib import Path
from typing import Any

from cogitave.collection import Collection
from cogitave.config import Settings
from cogitave.distributed.shard import ShardServer
from cogitave.distributed.view import LocalShard, ShardedView
from cogitave.errors import ConflictError, EncoderError, InputError, NotFoundError
from cogitave.expand.embed import DEFAULT_ENCODER, canonical_name, load_encoder
from cogitave.expand.models import recorded_graph
from cogitave.libraries import layout
from cogitave.libraries.environment import environment
from cogitave.libraries.layout import LibrariesManifest, LibraryEntry, Pin, version_order
from cogitave.libraries.names import check_version, library_key, resolve, split_ref
from cogitave.libraries.packs import PackInfo, check_replace, install_root, unpack, write_pack
from cogitave.libraries.project import match_version, read_project
from cogitave.nodes import Edge, Node, local_uid, uid_namespace
from cogitave.printable import printable
from cogitave.publish import Progress, Published
from cogitave.query.types import SearchRequest, SearchResponse
from cogitave.reader import FOLLOW_INTERVAL, Follower, Reader
from cogitave.schema import Schema
from cogitave.store.graph import publish_graph
from cogitave.store.manifest import Manifest
from cogitave.store.port import ReadPort
from cogitave.store.roots import RootInfo, RootStore, fsync_dir
from cogitave.store.snapshot import Snapshot
from cogitave.store.verify import verify_root

VIEWS_KEPT = 8
"""Views over library subsets kept open (a view gathers every uid of its libraries once)."""
UNVERSIONED = ("latest", "main", "master", "next", "dev", "current")
LOOKED_FOR = (
    "pyproject.toml, requirements*.txt, Pipfile, uv.lock, poetry.lock, pdm.lock, "
    "Pipfile.lock, package.json, pnpm-workspace.yaml, npm-shrinkwrap.json, "
    "package-lock.json, pnpm-lock.yaml, yarn.lock, bun.lock"
)
"""The files ``--project`` reads (:func:`~cogitave.libraries.project.read_project`)."""


def namespaced(node: Node, ref: str, name: str, version: str) -> Node:
    """A node of library version ``ref`` in its namespace: uid and edge ends prefixed, the
    library and version in ``meta``."""
    prefix = ref + ":"
    return replace(
        node,
        uid=prefix + node.uid,
        edges=tuple(Edge(e.label, prefix + e.dst) for e in node.edges),
        meta={**node.meta, "library": name, "version": version},
    )


@dataclass(frozen=True)
class ProjectPin:
    """One dependency of a project and the library version it reads."""

    package: str
    library: str | None
    wanted: str | None
    version: str | None
    match: str
    reason: str


@dataclass(frozen=True)
class ProjectPins:
    """What ``--project`` read and chose."""

    project: str
    dependencies: tuple[ProjectPin, ...]
    warnings: tuple[str, ...]


class _LibraryPorts:
    """A collection of libraries' read ports: a library version's own snapshot, or a view
    over several (see the module doc)."""

    def __init__(self, owner: LibraryCollection) -> None:
        self.owner = owner

    def current(self) -> ReadPort:
        return self.owner.port_of(self.owner.manifest.libraries)

    def at(self, root: str) -> ReadPort:
        for e in self.owner.manifest.libraries:
            if e.root == root:
                return self.owner.port_of([e])
        view = self.current()
        if view.root == root:
            return view
        raise NotFoundError(f"root {root[:12]} is not a root this collection reads")

    def scope(self, request: SearchRequest) -> ReadPort:
        if request.root:
            return self.at(request.root)
        return self.owner.port_of(self.owner.select(request.libraries))

    def library_name(self) -> str:
        return self.owner.path.resolve().name

    def library_details(self) -> tuple[str | None, str, str | None]:
        return None, "", None

    def namespaces(self, libraries: Sequence[str] | None) -> tuple[str, ...] | None:
        return tuple(e.ref for e in self.owner.select(libraries))

    def roots(self) -> list[RootInfo]:
        return [
            RootInfo(e.root, None, e.indexed_at, e.nodes, 0, 1, head=True)
            for e in self.owner.manifest.libraries
        ]

    def finish(self, response: SearchResponse) -> SearchResponse:
        return response


class LibraryCollection(Reader):
    """The docs of many libraries, each at one or more versions, in one directory."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.manifest = layout.read_manifest(self.path)
        self._sig = self._manifest_stat()
        self._lock = threading.RLock()
        self._snaps: dict[tuple[str, str], Snapshot] = {}
        self._servers: dict[tuple[str, str], ShardServer] = {}
        self._views: dict[tuple[str, ...], ShardedView] = {}
        self.pins: dict[str, Pin] = {}
        """Library key -> the version a project uses (:meth:`pin`, :meth:`use_project`)."""
        self.excluded: dict[str, ProjectPin] = {}
        """Libraries a project uses at a version no held version fits (key -> what it
        wants): left out of reads without libraries, an error when named without a version."""
        self.project: ProjectPins | None = None
        """What the last :meth:`use_project` read and chose."""
        # made when following starts: it holds the collection, which must stay collectable
        # (its reader pin is released when it is) while nobody follows
        self._following: Follower | None = None
        super().__init__(_LibraryPorts(self))

    # -- lifecycle --------------------------------------------------------------------------
    @classmethod
    def open(cls, path: str | Path) -> LibraryCollection:
        return cls(path)

    @classmethod
    def create(
        cls, path: str | Path, *, encoder: str | None = DEFAULT_ENCODER
    ) -> LibraryCollection:
        """An empty collection of libraries at ``path`` (a new or empty folder); ``encoder``
        embeds every library's docs (None: BM25 only)."""
        p = Path(path)
        if layout.is_library_collection(p) or RootStore(p).exists():
            raise ConflictError(f"a collection already exists at {p}")
        if p.is_dir() and any(p.iterdir()):
            raise InputError(f"{p} is a folder that holds other files, not a collection")
        if encoder:  # an unknown encoder is refused before anything is written
            load_encoder(encoder)
        p.mkdir(parents=True, exist_ok=True)
        with layout.writer_lock(p):
            name = canonical_name(encoder) if encoder else None
            layout.write_manifest(p, LibrariesManifest(encoder=name))
        return cls(p)

    def _manifest_stat(self) -> tuple[int, int] | None:
        try:
            st = (self.path / layout.MANIFEST).stat()
        except OSError:
            return None
        return (st.st_ino, st.st_mtime_ns)

    def refresh(self) -> bool:
        """Read ``LIBRARIES.json`` again if another writer replaced it."""
        sig = self._manifest_stat()
        if sig == self._sig:
            return False
        manifest = layout.read_manifest(self.path)
        with self._lock:
            self.manifest, self._sig = manifest, sig
        return True

    def follow(self, interval: float = FOLLOW_INTERVAL) -> None:
        """Follow what writers publish, from a background thread (servers call this once)."""
        if self._following is None:
            self._following = Follower(self.refresh, self._forget_manifest)
        self._following.start(interval)

    def _forget_manifest(self) -> None:
        self._sig = None  # a manifest mid-replace: look again

    def unfollow(self) -> None:
        if self._following is not None:
            self._following.stop()
        self._following = None

    # -- which versions a read covers -------------------------------------------------------
    def pin(self, key: str, pin: Pin | None) -> None:
        """Read library ``key`` at ``pin`` by default (None: the newest held)."""
        if pin is None:
            self.pins.pop(library_key(key), None)
        else:
            self.pins[library_key(key)] = pin

    def use_project(self, folder: Path) -> ProjectPins:
        """Pin every library the project in ``folder`` uses to the version it uses (its
        manifests and lockfiles, :mod:`cogitave.libraries.project`): exact when held, else as
        :func:`~cogitave.libraries.project.match_version` chooses, and said on every hit. A
        package maps to a library by normalised name, or through ``[libraries] aliases``. A
        library the project uses at a version no held version fits is left out of reads
        without a version and is an error when named (never another version in its place).
        Reads without libraries then cover the project's libraries only. A project that
        gives nothing to pin (no manifest or lockfile, or no dependency held here) is a
        warning naming what was looked for."""
        deps = read_project(folder)
        env = environment(folder)
        aliases = {
            library_key(k): library_key(v) for k, v in self.settings().libraries.aliases.items()
        }
        keys = set(self.library_keys())
        rows: list[ProjectPin] = []
        # built aside and swapped in at the end: a read meanwhile sees the old pins or the new
        pins: dict[str, Pin] = {}
        excluded: dict[str, ProjectPin] = {}
        for dep in deps.dependencies:
            if dep.version is None:  # no lockfile pin: the version the environment runs
                found = env.find(dep)
                if found is not None and found.version:
                    dep = replace_(dep, version=found.version, source=f"installed: {found.marker}")
            pkg = library_key(dep.name)
            key = aliases.get(pkg) or aliases.get(library_key(dep.key)) or pkg
            if key not in keys:
                alt = library_key(dep.key)
                key = alt if alt in keys else key
            if key not in keys:
                rows.append(ProjectPin(dep.name, None, dep.version or dep.specifier, None, "none",
                                       "no docs of this package here"))  # fmt: skip
                continue
            m = match_version(dep, [e.version for e in self.manifest.versions(key)])
            # what the project's files say is shown on every hit: escaped and bounded
            wanted = printable(m.wanted, 100) if m.wanted is not None else None
            rows.append(
                ProjectPin(printable(dep.name, 200), key, wanted, m.held, m.match,
                           printable(m.reason, 300))
            )  # fmt: skip
            if m.held is not None:
                pins[key] = Pin(m.held, m.match, wanted)
            else:
                excluded[key] = ProjectPin(dep.name, key, m.wanted, None, m.match, m.reason)
        warnings = list(deps.warnings)
        if not deps.files:
            warnings.append(
                f"--project {folder}: no manifest or lockfile there (looked for {LOOKED_FOR}); "
                "every library answers at its newest version"
            )
        elif not any(r.library for r in rows):
            held = ", ".join(sorted(keys)) or "none"
            warnings.append(
                f"--project {folder}: none of its {len(rows)} dependencies (read from "
                f"{', '.join(deps.files)}) is a library held here (held: {held}); every "
                "library answers at its newest version"
            )
        self.pins, self.excluded = pins, excluded
        self.project = ProjectPins(str(folder), tuple(rows), tuple(warnings))
        return self.project

    def settings(self) -> Settings:
        """The collection's settings (every library version carries the same)."""
        libs = self.manifest.libraries
        return self._snapshot(libs[0]).settings if libs else Settings()

    def library_keys(self) -> list[str]:
        return list(dict.fromkeys(e.key for e in self.manifest.libraries))

    def default_version(self, key: str) -> LibraryEntry:
        """The version of ``key`` a read without a version covers: the pinned one, else the
        newest held; a library the project uses at a version older than every version held
        has none (``NotFoundError`` listing the versions held and the one wanted)."""
        held = self.manifest.versions(key)
        if not held:
            raise self.unknown(key)
        gone = self.excluded.get(key)
        if gone is not None:
            versions = self.versions_held(key)
            raise NotFoundError(
                f"{key}: the project uses {gone.wanted or 'a version'} and no version held "
                f"fits it (none is read in its place); versions held: {', '.join(versions)}; "
                f"name one ({key}@{versions[-1]}) to read it anyway",
                details={"library": key, "wanted": gone.wanted, "versions": versions},
            )
        pin = self.pins.get(key)
        if pin is not None:
            chosen = next((e for e in held if e.version == pin.version), None)
            if chosen is not None:
                return chosen
        return max(held, key=lambda e: version_order(e.version))

    def versions_held(self, key: str) -> list[str]:
        """The versions of ``key`` held, oldest first."""
        return sorted((e.version for e in self.manifest.versions(key)), key=version_order)

    def select(self, refs: Sequence[str] | None) -> list[LibraryEntry]:
        """The library versions ``refs`` name (``name`` or ``name@version``; a name alone is
        its default version, :meth:`default_version`); None: every library at its default
        version (with a project, the libraries it uses; never one it uses at a version no
        held version fits). This is the one rule every surface reads versions by."""
        if not refs:
            keys = list(self.pins) or [k for k in self.library_keys() if k not in self.excluded]
            if not keys:
                if self.excluded:
                    raise NotFoundError(
                        "the project uses every library held here at a version no held "
                        "version fits: name one with its version (name@version)",
                        details={"excluded": sorted(self.excluded)},
                    )
                raise NotFoundError(f"{self.path} holds no library yet: index one first")
            return [self.default_version(k) for k in keys]
        out: list[LibraryEntry] = []
        for ref in refs:
            name, version = split_ref(ref)
            key = self.resolve_key(name)
            if version is None:
                entry = self.default_version(key)
            else:
                entry = self.manifest.find(f"{key}@{version}")
                if entry is None:
                    versions = self.versions_held(key)
                    raise NotFoundError(
                        f"{name} has no version {version!r} here; versions held: "
                        + ", ".join(versions),
                        details={"library": key, "wanted": version, "versions": versions},
                    )
            if entry not in out:
                out.append(entry)
        return out

    def resolve_key(self, name: str) -> str:
        """The key of the held library ``name`` names: exactly, or without separators or
        case; else ``NotFoundError`` naming the closest."""
        key = library_key(name)
        keys = self.library_keys()
        if key in keys:
            return key
        best = resolve(name, keys, limit=3)
        if best and best[0].score >= 0.95:
            return best[0].name
        raise self.unknown(name)

    def unknown(self, name: str) -> NotFoundError:
        close = [m.name for m in resolve(name, self.library_keys(), limit=3)]
        return NotFoundError(
            f"no library {name!r} in this collection"
            + (f"; closest: {', '.join(close)}" if close else "; it holds none yet"),
            details={"closest": close},
        )

    # -- ports ------------------------------------------------------------------------------
    def port_of(self, entries: Sequence[LibraryEntry]) -> ReadPort:
        """One version's own snapshot, or a view over several."""
        if not entries:
            raise NotFoundError(f"{self.path} holds no library yet: index one first")
        if len(entries) == 1:
            return self._snapshot(entries[0])
        key = tuple(f"{e.dir}@{e.root}" for e in entries)
        with self._lock:
            view = self._views.get(key)
            if view is None:
                clients = [LocalShard(self._server(e), e.ref, i) for i, e in enumerate(entries)]
                where = {e.ref: i for i, e in enumerate(entries)}
                view = ShardedView(
                    self.manifest.sharded(entries),
                    clients,
                    RootStore(self.path / "graph"),
                    route=lambda uid: where.get(uid_namespace(uid) or ""),
                )
                if len(self._views) >= VIEWS_KEPT:
                    self._views.pop(next(iter(self._views)))
                self._views[key] = view
            return view

    def _snapshot(self, e: LibraryEntry) -> Snapshot:
        with self._lock:
            snap = self._snaps.get((e.dir, e.root))
            if snap is None:
                snap = Snapshot.open(RootStore(self.path / e.dir), e.root)
                self._snaps[(e.dir, e.root)] = snap
            return snap

    def _server(self, e: LibraryEntry) -> ShardServer:
        got = self._servers.get((e.dir, e.root))
        if got is None:
            got = self._servers[(e.dir, e.root)] = ShardServer(str(self.path / e.dir), e.root)
        return got

    # -- writes -----------------------------------------------------------------------------
    def sync_library(
        self,
        name: str,
        version: str,
        nodes: Sequence[Node],
        *,
        schema: Schema | None = None,
        source: str = "",
        commit: str | None = None,
        replace_source: bool = False,
        progress: Progress | None = None,
        state: bytes | None = None,
        report: bytes | None = None,
    ) -> Published:
        """Make library version ``name@version`` hold exactly ``nodes`` (new uids added,
        changed ones replaced, missing ones deleted), then publish the collection's new
        view. A version indexed from another source is refused unless ``replace_source``.
        ``state`` and ``report`` are kept with the version's source (a crawl's, read back by
        :meth:`source_state`)."""
        key = library_key(name)
        version = check_version(version)
        ref = f"{key}@{version}"
        with layout.writer_lock(self.path):
            manifest = layout.read_manifest(self.path)
            layout.collect_staging(self.path)
            entry = manifest.find(ref)
            if entry and entry.source and source and entry.source != source and not replace_source:
                raise ConflictError(
                    f"{ref} was indexed from {printable(entry.source)}; indexing it from "
                    f"{printable(source)} would replace it: pass --replace to do so"
                )
            mine = [namespaced(n, ref, name, version) for n in nodes]
            with contextlib.ExitStack() as stack:
                if entry is not None:
                    rel, stage = entry.dir, None
                    sub = Collection.open(self.path / rel)
                else:
                    # a first index is built aside and moved into place just before the
                    # manifest names it: a kill on the way leaves nothing in the way
                    rel = layout.new_library_dir(manifest, key, version)
                    stage = stack.enter_context(layout.staging_dir(self.path, "new"))
                    sub = self._new_sub(manifest, stage, key, schema)
                res = sub.sync(ref, mine, progress=progress, state=state, report=report)
                root, count = sub.root, len(sub)
                gone = set(res.deleted)
                changed = set(res.added) | set(res.changed)
                graph = publish_graph(
                    self._graph_store(), manifest.graph, [n for n in mine if n.uid in changed], gone
                )
                new = LibraryEntry(
                    name=entry.name if entry else name,
                    version=version,
                    dir=rel,
                    root=root,
                    source=source or (entry.source if entry else ""),
                    commit=commit,
                    indexed_at=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                    nodes=count,
                    pages=sum(1 for n in nodes if n.kind == "page"),
                )
                if stage is not None:
                    sub.snapshot.release_hold()
                    del sub
                    self._place(stage, rel)
                try:
                    manifest = replace(manifest.with_entry(new), graph=graph)
                    manifest = self._successors(manifest, key)
                    layout.write_manifest(self.path, manifest)
                except BaseException:
                    if stage is not None:
                        shutil.rmtree(self.path / rel, ignore_errors=True)
                    raise
        self.refresh()
        return res

    def source_state(self, source: str, ref: str | None = None) -> bytes | None:
        """The state kept by the last sync of the version indexed from ``source`` (``ref``:
        that version, when several came from it), or None."""
        for e in self.manifest.libraries:
            if e.source == source and (ref is None or e.ref == ref):
                return Collection.open(self.path / e.dir).source_object(e.ref, "state")
        return None

    def export_pack(self, ref: str, out: Path) -> PackInfo:
        """Write library version ``ref`` (``name@version``; a name: its default version) to
        the pack file ``out`` (:mod:`cogitave.libraries.packs`)."""
        (entry,) = self.select([ref])
        return write_pack(RootStore(self.path / entry.dir), entry, out)

    def import_pack(
        self,
        pack: Path,
        *,
        replace: bool = False,
        progress: Progress | None = None,
        source: str | None = None,
    ) -> LibraryEntry:
        """Import a pack: checked object by object, then published as the library version it
        holds, nothing embedded again. A version held from another source is refused unless
        ``replace``; a pack of another encoder than the collection's is refused. ``source``:
        where the version is recorded as coming from (default: the pack's own source)."""
        with layout.staging_dir(self.path, "import") as folder:
            staging = RootStore(folder)
            staging.init()
            held = self.manifest.libraries
            info, root_bytes = unpack(
                pack, staging, self.manifest.encoder if held else Any, progress
            )
            # the root opened and checked whole (indexes, segments, vectors, graph, counts)
            # where nothing reads it yet; its objects were hashed as they arrived
            install_root(staging, info.root, root_bytes)
            manifest = Manifest.from_json(root_bytes, source=f"pack {info.library}")
            check = verify_root(staging, info.root, hashed=manifest.objects())
            if not check.ok:
                raise InputError(
                    f"the pack {printable(pack, 200)}: its root does not open "
                    f"({printable(check.problem or '', 300)}); nothing was imported"
                )
            if source is not None:
                info = replace_(info, source=source)
            return self.adopt(folder, info, root_bytes, replace=replace)

    def adopt(
        self, staging: Path, info: PackInfo, root_bytes: bytes, *, replace: bool = False
    ) -> LibraryEntry:
        """Make the checked objects and root in ``staging`` (an imported pack) the library
        version ``info`` names, and publish the new view (nothing is embedded again). A new
        version's ``staging`` becomes its folder (renamed into place); an existing version's
        folder takes its objects and root."""
        key = library_key(info.name)
        version = check_version(info.version)
        ref = f"{key}@{version}"
        if ref != info.library:
            raise InputError(f"the pack's library {printable(info.library)!r} is not {ref!r}")
        with layout.writer_lock(self.path):
            manifest = layout.read_manifest(self.path)
            layout.collect_staging(self.path)
            if manifest.libraries and manifest.encoder != info.encoder:
                raise EncoderError(
                    f"the pack was made with encoder {info.encoder!r}; this collection embeds "
                    f"with {manifest.encoder!r}: vectors of different encoders are not "
                    "comparable (index the library's docs instead)"
                )
            entry = manifest.find(ref)
            check_replace(entry, info, replace)
            src = RootStore(staging)
            pack_manifest = Manifest.from_json(root_bytes, source=f"pack {ref}")
            if manifest.libraries:
                held = self._snapshot(manifest.libraries[0])
                ours_graph, their_graph = held.encoder_graph, recorded_graph(pack_manifest.encoder)
                if ours_graph != their_graph:
                    raise EncoderError(
                        f"the pack's vectors come from graph {their_graph!r} of "
                        f"{info.encoder!r}, this collection's from graph {ours_graph!r}: one "
                        "query vector serves every library, so they must match (index the "
                        "library's docs instead)"
                    )
                base = held.schema
                theirs = Schema.from_dict(pack_manifest.schema, source=f"pack {ref}")
                extra = [d.name for d in theirs.dimensions if base.get(d.name) is None]
                if extra:
                    raise InputError(
                        f"the libraries of a collection share one schema; the pack's {ref} "
                        f"has dimensions the others lack: {', '.join(extra)}"
                    )
            if entry is not None:
                rel, placed = entry.dir, False
                store = RootStore(self.path / rel)
                store.init()
                for digest in dict.fromkeys(pack_manifest.objects()):
                    store.put_file(src.object_path(digest), digest)
                old = set(self._snapshot(entry).nodes.nid_of)
                install_root(store, info.root, root_bytes)
            else:
                rel, placed, old = layout.new_library_dir(manifest, key, version), True, set()
                install_root(src, info.root, root_bytes)
                self._place(staging, rel)
                store = RootStore(self.path / rel)
            try:
                snap = Snapshot.open(store, info.root)
                table = snap.nodes
                nodes = [table.node(nid) for nid in table.live_nids().tolist()]
                graph = publish_graph(
                    self._graph_store(), manifest.graph, nodes, old - set(table.nid_of)
                )
                new = LibraryEntry(
                    name=info.name,
                    version=version,
                    dir=rel,
                    root=info.root,
                    source=info.source,
                    commit=info.commit,
                    indexed_at=info.indexed_at,
                    nodes=len(nodes),
                    pages=sum(1 for n in nodes if n.kind == "page"),
                )
                manifest = replace_(manifest.with_entry(new), graph=graph)
                if not manifest.libraries[:-1] and entry is None:
                    manifest = replace_(manifest, encoder=info.encoder)
                manifest = self._successors(manifest, key)
                layout.write_manifest(self.path, manifest)
            except BaseException:
                if placed:
                    shutil.rmtree(self.path / rel, ignore_errors=True)
                raise
        self.refresh()
        return new

    def _place(self, stage: Path, rel: str) -> None:
        """Move a version built in ``stage`` to its folder ``rel`` (under the writer lock). A
        folder already there is one the manifest does not name (:meth:`sync_library` and
        :meth:`adopt` only place new versions): an orphan of a killed index, reclaimed."""
        final = self.path / rel
        if final.exists() or final.is_symlink():
            if final.is_dir() and not final.is_symlink():
                shutil.rmtree(final)
            else:
                final.unlink()
        os.rename(stage, final)
        fsync_dir(final.parent)

    def delete_library(self, ref: str) -> list[LibraryEntry]:
        """Delete ``name@version``, or every version of ``name``; returns what was deleted."""
        name, version = split_ref(ref)
        with layout.writer_lock(self.path):
            manifest = layout.read_manifest(self.path)
            layout.collect_staging(self.path)
            self.manifest = manifest
            key = self.resolve_key(name)
            doomed = [e for e in manifest.versions(key) if version is None or e.version == version]
            if not doomed:
                held = ", ".join(e.version for e in manifest.versions(key))
                raise NotFoundError(
                    f"{name} has no version {version!r} here; versions held: {held}"
                )
            gone: set[str] = set()
            for e in doomed:
                gone |= set(self._snapshot(e).nodes.nid_of)
                manifest = manifest.without(e.ref)
            graph = publish_graph(self._graph_store(), manifest.graph, [], gone)
            manifest = self._successors(replace(manifest, graph=graph), key)
            layout.write_manifest(self.path, manifest)
        self.refresh()
        for e in doomed:
            shutil.rmtree(self.path / e.dir, ignore_errors=True)
        return doomed

    def delete_unpublished(self, ref: str) -> list[str]:
        """Remove the folders of ``name@version`` (every version of ``name``) that the
        manifest does not name: orphans a killed first index left
        (:func:`~cogitave.libraries.layout.orphans`). Returns them, relative to the
        collection."""
        name, version = split_ref(ref)
        key = library_key(name)
        with layout.writer_lock(self.path):
            manifest = layout.read_manifest(self.path)
            layout.collect_staging(self.path)
            out = []
            base = layout.library_dir(key, check_version(version)) if version else ""
            for rel in layout.orphans(self.path, manifest):
                if version is not None:
                    if rel == base or rel.startswith(base + "~"):
                        out.append(rel)
                elif rel.startswith(f"{layout.LIBS}/{key}@"):
                    out.append(rel)
            for rel in out:
                shutil.rmtree(self.path / rel, ignore_errors=True)
        return out

    def configure(self, settings: Settings) -> str:
        """Make ``settings`` every library version's (a new root each; nothing re-indexed)."""
        with layout.writer_lock(self.path):
            manifest = layout.read_manifest(self.path)
            layout.collect_staging(self.path)
            for e in manifest.libraries:
                col = Collection.open(self.path / e.dir)
                manifest = manifest.with_entry(replace(e, root=col.configure(settings)))
            layout.write_manifest(self.path, manifest)
        self.refresh()
        return self.root

    def _graph_store(self) -> RootStore:
        store = RootStore(self.path / "graph")
        store.init()
        return store

    def _new_sub(
        self, manifest: LibrariesManifest, path: Path, key: str, schema: Schema | None
    ) -> Collection:
        """A new library version's collection at ``path`` (its staging folder), with the
        schema, encoder and settings the collection's other libraries have."""
        first = manifest.libraries[0] if manifest.libraries else None
        if first is None:
            if schema is None:
                raise InputError("the first library of a collection needs its schema")
            return Collection.create(path, schema, encoder=manifest.encoder)
        base = self._snapshot(first)
        if schema is not None:
            extra = [d.name for d in schema.dimensions if base.schema.get(d.name) is None]
            if extra:
                raise InputError(
                    f"the libraries of a collection share one schema; {key} has dimensions "
                    f"the others lack: {', '.join(extra)}"
                )
        return Collection.create(
            path,
            base.schema,
            encoder=base.encoder_name,
            settings=base.settings,
            graph=base.encoder_graph,
        )

    def _successors(self, manifest: LibrariesManifest, key: str) -> LibrariesManifest:
        """The graph with ``supersededBy`` from each page of every version of ``key`` to the
        same page (its path in the docs tree) of the next version held."""
        versions = sorted(manifest.versions(key), key=lambda e: version_order(e.version))
        if not versions:
            return manifest
        pages: list[dict[str, Node]] = []
        for e in versions:
            snap = self._snapshot(e)
            table = snap.nodes
            pages.append(
                {
                    local_uid(n.uid): n
                    for n in (table.node(nid) for nid in table.live_nids().tolist())
                    if n.kind == "page"
                }
            )
        # Every page is put back, with its successor or without: an edge to a version since
        # deleted must not stay.
        relinked: list[Node] = list(pages[-1].values())
        for older, newer in itertools.pairwise(pages):
            for path, node in older.items():
                succ = newer.get(path)
                extra = () if succ is None else (Edge("supersededBy", succ.uid),)
                relinked.append(replace(node, edges=(*node.edges, *extra)))
        graph = publish_graph(self._graph_store(), manifest.graph, relinked, ())
        return replace(manifest, graph=graph)

    # -- reads this collection adds ---------------------------------------------------------
    def libraries(self) -> list[LibraryEntry]:
        return list(self.manifest.libraries)

    def project_pins(self) -> tuple[ProjectPin, ...]:
        if self.project is None:
            return ()
        return tuple(d for d in self.project.dependencies if d.library is not None)

    def project_warnings(self) -> tuple[str, ...]:
        return self.project.warnings if self.project is not None else ()

    def pin_of(self, ref: str) -> Pin | None:
        entry = self.manifest.find(ref)
        pin = self.pins.get(entry.key) if entry else None
        return (
            pin if pin is not None and entry is not None and pin.version == entry.version else None
        )

    def __len__(self) -> int:
        return sum(e.nodes for e in self.manifest.libraries)
