"""Sharded collections: N ordinary collections behind one manifest, built and searched on
Ray (or shard by shard in one process) with the answers of one collection."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from cogitave.distributed.view import ShardedView


def open_view(
    path: str | Path, ray: str | None = None, *, allow_partial: bool = False
) -> ShardedView:
    """The sharded collection at ``path``: shard actors on Ray (``ray`` = an address or
    ``local``), or every shard in this process (``ray`` None)."""
    from cogitave.distributed.view import ShardedView

    if ray is None:
        return ShardedView.open_local(path, allow_partial=allow_partial)
    from cogitave.distributed.actors import connect, open_ray

    connect(ray)
    return open_ray(path, allow_partial=allow_partial)
