"""A sharded collection on disk: N ordinary collections and one manifest naming their roots.

::

    DIR/SHARDS.json      the view: shard paths + pinned root ids + the graph object
    DIR/shard-000/ ...   ordinary collections (each with its own roots and HEAD)
    DIR/graph/           an object store holding the whole property graph (one copy)

A node lives in shard ``blake2b(uid) mod N``. A shard's HEAD may move ahead of the view while a
build runs; readers only ever open the roots ``SHARDS.json`` names, and a build replaces
``SHARDS.json`` in one rename after every shard has published, so a view is always one
consistent set of roots.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cogitave.errors import CorruptionError, NotFoundError
from cogitave.store.roots import atomic_write

MANIFEST = "SHARDS.json"
FORMAT = "cogitave-sharded/1"
MAX_SHARDS = 256  # ids pack the shard number in 8 bits


def shard_of(uid: str, n: int) -> int:
    """The shard of a uid: stable across processes, machines and Python versions."""
    digest = hashlib.blake2b(uid.encode(), digest_size=8).digest()
    return int.from_bytes(digest, "little") % n


def shard_dir(i: int) -> str:
    return f"shard-{i:03d}"


@dataclass(frozen=True)
class ShardRef:
    """One shard of a view: its collection directory (relative to the view) and root."""

    path: str
    root: str


@dataclass(frozen=True)
class ShardedManifest:
    """One consistent view of a sharded collection."""

    shards: tuple[ShardRef, ...]
    graph: dict[str, Any] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def n(self) -> int:
        return len(self.shards)

    @property
    def view_id(self) -> str:
        """A content id of the view (what responses report as their root)."""
        body = json.dumps([[s.path, s.root] for s in self.shards], separators=(",", ":"))
        return hashlib.sha256(body.encode()).hexdigest()

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "hash": "blake2b-64-mod-n",
            "shards": [{"path": s.path, "root": s.root} for s in self.shards],
            "graph": self.graph,
            **self.extra,
        }


def is_sharded(path: str | Path) -> bool:
    """True if ``path`` holds a sharded collection."""
    return (Path(path) / MANIFEST).is_file()


def read_manifest(path: str | Path) -> ShardedManifest:
    """The current view of the sharded collection at ``path``."""
    p = Path(path) / MANIFEST
    if not p.is_file():
        raise NotFoundError(f"no sharded collection at {path}")
    try:
        raw = json.loads(p.read_text())
        if raw.get("format") != FORMAT:
            raise ValueError(f"unknown format {raw.get('format')!r}")
        shards = tuple(ShardRef(str(s["path"]), str(s["root"])) for s in raw["shards"])
    except (ValueError, KeyError, TypeError) as e:
        raise CorruptionError(f"{p}: not a shard manifest ({e})") from e
    if not 1 <= len(shards) <= MAX_SHARDS:
        raise CorruptionError(f"{p}: {len(shards)} shards (1..{MAX_SHARDS} allowed)")
    extra = {k: v for k, v in raw.items() if k not in ("format", "hash", "shards", "graph")}
    return ShardedManifest(shards, dict(raw.get("graph") or {}), extra)


def write_manifest(
    path: str | Path, shards: Sequence[ShardRef], graph: dict[str, Any], **extra: Any
) -> ShardedManifest:
    """Publish a view: every shard root in it must already be written (temp file + rename)."""
    m = ShardedManifest(tuple(shards), dict(graph), dict(extra))
    Path(path).mkdir(parents=True, exist_ok=True)
    atomic_write(Path(path) / MANIFEST, json.dumps(m.to_dict(), indent=1).encode())
    return m
