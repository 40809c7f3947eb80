"""Shards as Ray actors: one actor per shard holds its snapshot; the view scatters to them.

What is shipped to workers: the cogitave package must be importable on every worker (install
it in the cluster's image, or pass ``runtime_env``); each actor receives only its shard's path
and root id and opens the files itself (so the collection directory must be readable from the
worker's node: a shared filesystem, or a copy at the same path). Queries ship term lists, query
vectors and id arrays; answers are id and score arrays, masks, vectors and node records.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from cogitave.distributed.layout import read_manifest
from cogitave.distributed.view import ShardedView, _graph_store

SHARD_CPUS = 0.25
"""CPUs each shard actor reserves (a shard is mostly memory-mapped reads)."""
CALL_TIMEOUT_S = 30.0
"""A shard that does not answer within this time counts as unavailable."""


def connect(address: str) -> None:
    """Join the Ray cluster at ``address``, or start a local one for ``local``."""
    import ray

    if ray.is_initialized():
        return
    if address == "local":
        ray.init(
            num_cpus=int(os.environ.get("COGITAVE_RAY_CPUS", os.cpu_count() or 1)),
            include_dashboard=False,
            log_to_driver=False,
            configure_logging=False,
        )
    else:
        ray.init(address=address, log_to_driver=False, configure_logging=False)


class RayShard:
    """The view's handle on one shard actor."""

    def __init__(self, actor: Any, index: int, label: str) -> None:
        self.actor = actor
        self.index = index
        self.label = label

    def submit(self, method: str, *args: Any) -> Any:
        return self.actor.call.remote(method, *args)

    def result(self, handle: Any) -> Any:
        import ray

        return ray.get(handle, timeout=CALL_TIMEOUT_S)


def start_shards(path: str | Path, *, shard_cpus: float = SHARD_CPUS) -> list[RayShard]:
    """One actor per shard of the view at ``path`` (Ray must be connected)."""
    import ray

    from cogitave.distributed.shard import ShardServer

    path = Path(path).resolve()
    m = read_manifest(path)
    cls = ray.remote(ShardServer).options(num_cpus=shard_cpus, max_restarts=0, max_concurrency=4)
    return [
        RayShard(
            cls.remote(str(path / s.path), s.root, i),  # type: ignore[attr-defined]
            i,
            f"shard {i} ({s.path})",
        )
        for i, s in enumerate(m.shards)
    ]


def open_ray(
    path: str | Path, *, allow_partial: bool = False, shard_cpus: float = SHARD_CPUS
) -> ShardedView:
    """The view at ``path`` served by shard actors on the connected Ray cluster."""
    path = Path(path).resolve()
    clients = start_shards(path, shard_cpus=shard_cpus)
    return ShardedView(
        read_manifest(path), clients, _graph_store(path), allow_partial=allow_partial
    )


def stop(view: ShardedView) -> None:
    """Kill the view's shard actors."""
    import ray

    for c in view.clients:
        if isinstance(c, RayShard):
            ray.kill(c.actor)
