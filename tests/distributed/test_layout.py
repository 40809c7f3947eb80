from __future__ import annotations

import json
from pathlib import Path

import pytest

from cogitave.distributed.layout import (
    MANIFEST,
    ShardRef,
    is_sharded,
    read_manifest,
    shard_of,
    write_manifest,
)
from cogitave.errors import CorruptionError, NotFoundError


def test_shard_of_is_stable_and_spreads() -> None:
    # fixed values: a change of hash would move every node of every existing collection
    assert [shard_of(u, 4) for u in ("a", "b", "doc-1", "doc-2")] == [
        shard_of("a", 4),
        shard_of("b", 4),
        shard_of("doc-1", 4),
        shard_of("doc-2", 4),
    ]
    assert (
        shard_of("doc-1", 4)
        == int.from_bytes(__import__("hashlib").blake2b(b"doc-1", digest_size=8).digest(), "little")
        % 4
    )
    counts = [0] * 4
    for i in range(4000):
        counts[shard_of(f"uid-{i}", 4)] += 1
    assert min(counts) > 900


def test_manifest_round_trip_and_atomic_write(tmp_path: Path) -> None:
    assert not is_sharded(tmp_path)
    with pytest.raises(NotFoundError):
        read_manifest(tmp_path)
    m = write_manifest(tmp_path, [ShardRef("shard-000", "a" * 64)], {"graph_obj": "x"})
    assert is_sharded(tmp_path)
    back = read_manifest(tmp_path)
    assert back.shards == m.shards and back.graph == {"graph_obj": "x"}
    assert back.view_id == m.view_id
    write_manifest(tmp_path, [ShardRef("shard-000", "b" * 64)], {})
    assert read_manifest(tmp_path).view_id != m.view_id
    assert [p.name for p in tmp_path.iterdir()] == [MANIFEST]  # no temp file left


def test_bad_manifest_is_corruption(tmp_path: Path) -> None:
    (tmp_path / MANIFEST).write_text(json.dumps({"format": "other"}))
    with pytest.raises(CorruptionError):
        read_manifest(tmp_path)
    (tmp_path / MANIFEST).write_text(json.dumps({"format": "cogitave-sharded/1", "shards": []}))
    with pytest.raises(CorruptionError, match="0 shards"):
        read_manifest(tmp_path)
