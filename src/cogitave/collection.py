"""The Python facade: ``Collection`` and the calls every surface makes.

>>> col = Collection.create(path, schema)          # doctest: +SKIP
>>> col.add(nodes); col.delete(["old"]); col.publish()
>>> col.search(SearchRequest(query="leather boots", limit=10))

A ``Collection`` reads through a pinned snapshot (HEAD when opened, or a retained root by id)
and writes through :func:`cogitave.publish.publish`. After ``publish()`` the collection
moves to the new root; other open readers keep theirs until they :meth:`~Collection.refresh`
(servers :meth:`~Collection.follow` HEAD: a ``stat`` of the HEAD file a few times a second).

>>> col.sync("docs", nodes)                           # doctest: +SKIP
>>> col.follow()                                      # doctest: +SKIP
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from cogitave import opening
from cogitave.config import Settings
from cogitave.errors import ConflictError, EncoderError, InputError, NotFoundError
from cogitave.expand.embed import DEFAULT_ENCODER, canonical_name, check_identity, load_encoder
from cogitave.nodes import Node
from cogitave.publish import Progress, Published, configure, empty_manifest, publish, reembed
from cogitave.publish import sync as sync_source
from cogitave.query.types import SearchRequest, SearchResponse
from cogitave.reader import FOLLOW_INTERVAL, Follower, Reader
from cogitave.schema import Schema
from cogitave.store.roots import DEFAULT_RETENTION, RootInfo, RootStore
from cogitave.store.snapshot import Snapshot
from cogitave.sync import SourceUpdate, read_sources, source_object, source_sizes


class _Snapshots:
    """A collection's read ports: the snapshot reads go to, and a few recently read roots
    (each holds its root against retention while it lives)."""

    KEEP = 4

    def __init__(self, store: RootStore, root: str) -> None:
        self.store = store
        self._lock = threading.Lock()
        self._open: dict[str, Snapshot] = {}
        self.snapshot = self.get(root)

    def get(self, rid: str) -> Snapshot:
        """The snapshot of retained root ``rid``, opened once."""
        with self._lock:
            snap = self._open.get(rid)
            if snap is None:
                snap = Snapshot.open(self.store, rid)
                self._open = {rid: snap, **dict(list(self._open.items())[: self.KEEP - 1])}
            return snap

    def forget_others(self) -> None:
        with self._lock:
            self._open = {self.snapshot.root: self.snapshot}

    # -- Ports ------------------------------------------------------------------------------
    def current(self) -> Snapshot:
        return self.snapshot

    def at(self, root: str) -> Snapshot:
        return self.get(root)

    def library_name(self) -> str:
        return library_name(self.store, self.snapshot)

    def library_details(self) -> tuple[str | None, str, str | None]:
        found = recorded_identity(self.store, self.snapshot)
        if found is None:
            return None, "", None
        source, ident = found
        version, commit = ident.get("version"), ident.get("commit")
        return (
            version if isinstance(version, str) and version else None,
            source,
            commit if isinstance(commit, str) and commit else None,
        )

    def namespaces(self, libraries: Sequence[str] | None) -> tuple[str, ...] | None:
        if libraries:
            check_library(libraries, self.library_name())
        return None

    def scope(self, request: SearchRequest) -> Snapshot:
        if request.libraries:
            check_library(request.libraries, self.library_name())
        return self.at(request.root) if request.root else self.snapshot

    def roots(self) -> list[RootInfo]:
        return self.store.list_roots()

    def finish(self, response: SearchResponse) -> SearchResponse:
        return response


class Collection(Reader):
    """A schema plus a history of content roots, in one directory: a :class:`Reader` over
    its current root, and the writes that publish new roots."""

    def __init__(self, store: RootStore, root: str | None = None) -> None:
        self.store = store
        self._pending_adds: dict[str, Node] = {}
        self._pending_deletes: set[str] = set()
        self._pinned = root
        self._head_sig = self._head_stat()
        self._snaps = _Snapshots(store, root or store.head())
        super().__init__(self._snaps)
        self.changed_at: float | None = None
        """Wall time the collection last moved to a root another writer published."""
        # made when following starts: it holds the collection, which must stay collectable
        # (its reader pin is released when it is) while nobody follows
        self._following: Follower | None = None

    # -- lifecycle --------------------------------------------------------------------------
    @classmethod
    def create(
        cls,
        path: str | Path,
        schema: Schema,
        *,
        encoder: str | None = DEFAULT_ENCODER,
        settings: Settings | None = None,
        graph: str | None = None,
    ) -> Collection:
        """Create an empty collection (its first root has the schema and no nodes).

        ``encoder`` names the sentence encoder of the dense legs (``None``: BM25 only); it is
        recorded in every root with the graph it runs (``graph``; None: the default), and
        the collection always embeds with both."""
        store = RootStore(path)
        if store.exists():
            raise ConflictError(f"a collection already exists at {store.path}")
        enc = load_encoder(encoder, graph) if encoder else None
        with store.writer_lock():
            store.init()
            rid = store.write_root(empty_manifest(schema, enc, settings))
            store.set_head(rid)
        return cls(store)

    @classmethod
    def open(
        cls, path: str | Path, root: str | None = None, *, encoder: str | None = None
    ) -> Collection:
        """Open a collection at HEAD, or at a retained root id. ``encoder``, if given, must be
        the encoder the collection was created with. A folder of libraries or of shards opens
        as its own reader (what :func:`cogitave.open` gives: the same
        :class:`~cogitave.reader.Reader` interface, read-only for shards)."""
        store = RootStore(path)
        if not store.exists():
            other = opening.open_other(Path(path), root)
            if other is not None:
                if encoder is not None:
                    raise InputError(f"{path} is not a plain collection: open it without encoder")
                return other  # type: ignore[no-any-return]  # a Reader, as the docstring says
            raise NotFoundError(f"no collection at {store.path}")
        col = cls(store, root)
        have = col.snapshot.encoder_name
        if encoder is not None and canonical_name(encoder) != have:
            raise EncoderError(
                f"collection {store.path} was built with encoder {have!r}, not {encoder!r}; "
                "vectors of different encoders are not comparable (cogitave settings --set "
                "encoder=NAME re-embeds it)"
            )
        check_identity(col.snapshot.manifest.encoder, f"collection {store.path}")
        return col

    @classmethod
    def exists(cls, path: str | Path) -> bool:
        return RootStore(path).exists()

    @property
    def snapshot(self) -> Snapshot:
        """The snapshot of the root reads go to."""
        return self._snaps.snapshot

    def _move(self, rid: str) -> None:
        self._snaps.snapshot = self._snaps.get(rid)

    def _forget_old_roots(self, retention: int) -> None:
        """Before this collection writes: drop the cached snapshots of other roots (each
        holds its root against retention while it lives; a request still running on one
        keeps its own reference, and so its root), so a writer's own reads never keep what
        its publish retires. The current root becomes HEAD's parent, which a retention of 2
        or more keeps anyway; with 1, its hold ends here too."""
        self._snaps.forget_others()
        if retention < 2:
            self.snapshot.release_hold()

    # -- writes -----------------------------------------------------------------------------
    def add(self, nodes: Iterable[Node]) -> int:
        """Stage nodes (new uids are added, known uids replaced) until :meth:`publish`."""
        n = 0
        for node in nodes:
            self._pending_deletes.discard(node.uid)
            self._pending_adds[node.uid] = node
            n += 1
        return n

    def delete(self, uids: Iterable[str]) -> int:
        """Stage deletions by uid until :meth:`publish` (unknown uids are ignored)."""
        n = 0
        for uid in uids:
            self._pending_adds.pop(uid, None)
            self._pending_deletes.add(uid)
            n += 1
        return n

    def publish(
        self, *, progress: Progress | None = None, retention: int = DEFAULT_RETENTION
    ) -> str:
        """Write the staged changes as a new root on top of HEAD; returns the root id."""
        self._forget_old_roots(retention)
        rid = publish(
            self.store,
            list(self._pending_adds.values()),
            sorted(self._pending_deletes),
            progress=progress,
            retention=retention,
        )
        self._pending_adds.clear()
        self._pending_deletes.clear()
        self._move(rid)
        return rid

    def configure(self, settings: Settings, *, retention: int = DEFAULT_RETENTION) -> str:
        """Make ``settings`` the collection's (ranking, fusion, docs options) in a new root on
        top of HEAD; nothing is re-indexed. Returns the root id (HEAD's when unchanged)."""
        self._forget_old_roots(retention)
        rid = configure(self.store, settings, retention)
        self._move(rid)
        return rid

    def sync(
        self,
        source: str,
        nodes: Sequence[Node],
        *,
        add_only: bool = False,
        progress: Progress | None = None,
        retention: int = DEFAULT_RETENTION,
        state: bytes | None = None,
        report: bytes | None = None,
        identity: bytes | None = None,
    ) -> Published:
        """Make the nodes recorded for ``source`` equal to ``nodes``: new uids added, changed
        ones replaced, missing ones deleted (kept with ``add_only``), other sources untouched.
        Staged changes are not included. Nothing changed: no new root (``root`` is None).
        ``state`` (what the source's next sync starts from), ``report`` and ``identity`` (the
        library it documents, JSON) are kept with the source in the new root
        (:meth:`source_object` reads them back)."""
        self._forget_old_roots(retention)
        res = sync_source(
            self.store,
            SourceUpdate(source, list(nodes), add_only, state, report, identity),
            progress=progress,
            retention=retention,
        )
        if res.root:
            self._move(res.root)
        return res

    def delete_source(
        self, source: str, *, progress: Progress | None = None, retention: int = DEFAULT_RETENTION
    ) -> Published:
        """Delete every node recorded for ``source`` and forget the source."""
        if source not in self.sources():
            raise NotFoundError(
                f"no source {source!r} in {self.store.path}; known: "
                + (", ".join(sorted(self.sources())) or "none")
            )
        return self.sync(source, [], progress=progress, retention=retention)

    def sources(self) -> dict[str, int]:
        """Sources recorded in the current root: name -> number of nodes."""
        return source_sizes(self.snapshot.manifest)

    def source_object(self, source: str, key: str) -> bytes | None:
        """The object ``key`` (``state``, ``report``) kept with ``source`` in the current root."""
        return source_object(self.store, self.snapshot.manifest, source, key)

    def source_uids(self, source: str) -> list[str]:
        """The uids recorded for ``source`` in the current root."""
        return sorted(read_sources(self.store, self.snapshot.manifest).get(source, {}))

    def compact(
        self, progress: Progress | None = None, *, retention: int = DEFAULT_RETENTION
    ) -> str:
        """Publish HEAD again with each dimension's vectors in one segment of its live rows
        (fewer segments, faster dense search; nodes and indexes are otherwise unchanged).
        Staged changes are not included: they stay staged for :meth:`publish`. Returns the
        root id."""
        self._forget_old_roots(retention)
        rid = publish(self.store, [], [], progress=progress, retention=retention, compact=True)
        self._move(rid)
        return rid

    def reembed(
        self,
        encoder: str,
        progress: Progress | None = None,
        *,
        retention: int = DEFAULT_RETENTION,
    ) -> tuple[str, bool]:
        """Make ``encoder`` the collection's: publish HEAD again with every live node embedded
        by it (:func:`cogitave.publish.reembed`; nothing reused from the old encoder, never
        two encoders' vectors in one root). Staged changes stay staged. Returns (root id,
        whether a root was written: not when HEAD already has that encoder). Readers of the
        new root embed their queries with the new encoder; older roots keep theirs."""
        self._forget_old_roots(retention)
        rid, changed = reembed(self.store, encoder, progress=progress, retention=retention)
        self._move(rid)
        return rid, changed

    # -- following HEAD -----------------------------------------------------------------------
    def _head_stat(self) -> tuple[int, int, int] | None:
        try:
            st = os.stat(self.store.path / "HEAD")
        except OSError:
            return None
        return (st.st_ino, st.st_mtime_ns, st.st_size)

    def refresh(self) -> bool:
        """Move to HEAD if another writer moved it (a ``stat`` when it did not). The new root
        is opened and warmed before it replaces the current one, so requests never wait for
        it; a request already running keeps the snapshot it started with. Pinned: no-op."""
        if self._pinned:
            return False
        sig = self._head_stat()
        if sig == self._head_sig:
            return False
        rid = self.store.head()
        if rid == self.snapshot.root:
            self._head_sig = sig
            return False
        snap = self._snaps.get(rid)
        self.engine(rid).warm()
        self._head_sig = sig
        self._snaps.snapshot = snap  # one reference assignment: reads see the old or new root
        self.changed_at = time.time()
        return True

    def follow(self, interval: float = FOLLOW_INTERVAL) -> None:
        """Follow HEAD from a background thread (servers call this once); a root that fails
        to open is retried on the next look and the current one kept meanwhile."""
        if self._pinned:
            return
        if self._following is None:
            self._following = Follower(self.refresh, self._forget_head)
        self._following.start(interval)

    def _forget_head(self) -> None:
        self._head_sig = None  # e.g. a root retired mid-open: keep serving, look again

    def unfollow(self) -> None:
        """Stop following HEAD."""
        if self._following is not None:
            self._following.stop()
        self._following = None


def recorded_identity(store: RootStore, snapshot: Snapshot) -> tuple[str, dict[str, Any]] | None:
    """(source, the library it documents: name, version, commit) as its metadata said when
    it was indexed (the first source that recorded one; None: none did)."""
    for source in sorted(snapshot.manifest.sources):
        blob = source_object(store, snapshot.manifest, source, "identity")
        if blob is None:
            continue
        try:
            data = json.loads(blob)
        except ValueError:
            continue
        if isinstance(data, dict) and isinstance(data.get("name"), str) and data["name"]:
            return source, data
    return None


def library_name(store: RootStore, snapshot: Snapshot) -> str:
    """The one library a collection of no libraries holds: as its source's metadata named it
    (:func:`recorded_identity`), else (a collection indexed before sources recorded it, or
    of records no metadata names) from its source, else from the collection's folder."""
    found = recorded_identity(store, snapshot)
    if found is not None:
        return str(found[1]["name"])
    sources = sorted(snapshot.manifest.sources)
    if sources:
        p = Path(sources[0])
        return (
            p.parent.name if p.suffix in (".yml", ".yaml", ".toml", ".py") else p.name
        ) or p.name
    return store.path.resolve().name


def check_library(asked: Sequence[str], held: str) -> None:
    """A collection of one library answers only for that one (any version)."""
    from cogitave.libraries.names import library_key, split_ref

    for ref in asked:
        name, _ = split_ref(ref)
        if library_key(name) != library_key(held):
            raise NotFoundError(
                f"no library {name!r} in this collection; it holds one library: {held}",
                details={"libraries": [held]},
            )
