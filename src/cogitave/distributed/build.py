"""Build or sync a sharded collection: nodes -> N shards + one view, on Ray or in process.

::

    nodes (read on the driver) -> shard by uid hash
      -> embed the distinct texts once (Ray Data ``map_batches`` over an actor pool, one
         encoder per actor; or the local encoder)
      -> each shard publishes its nodes with those vectors (one Ray task per shard)
      -> the whole graph (one copy) -> SHARDS.json names the new roots (one rename)

The texts embedded are exactly those :func:`cogitave.publish.publish` would embed, in the same
encoder, so the vectors are the ones a local build stores (the encoder is deterministic); each
shard is an ordinary collection written by the ordinary publish.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import numpy as np

from cogitave.config import Settings
from cogitave.distributed.layout import (
    MAX_SHARDS,
    ShardRef,
    is_sharded,
    read_manifest,
    shard_dir,
    shard_of,
    write_manifest,
)
from cogitave.errors import ConflictError, InputError
from cogitave.expand import embed as embed_mod
from cogitave.expand.embed import DEFAULT_BATCH_SIZE, Encoder, load_encoder
from cogitave.expand.models import recorded_graph
from cogitave.nodes import Node
from cogitave.publish import empty_manifest, publish
from cogitave.schema import WHOLE, Schema
from cogitave.store.graph import publish_graph
from cogitave.store.roots import RootStore
from cogitave.texts import DEFAULT_TEXTS, PLAIN, embed_texts, mixed_context, texts_recipe

Progress = Callable[[str, int, int], None]


@dataclass(frozen=True)
class _EncoderSpec:
    """The name, width and graph an empty root records (the encoder itself runs elsewhere)."""

    name: str
    dim: int
    graph_name: str | None = None


def texts_to_embed(nodes: Sequence[Node], schema: Schema, recipe: str = PLAIN) -> list[str]:
    """The distinct texts a publish of ``nodes`` embeds (:func:`cogitave.texts.embed_texts`:
    the whole text once, each semantic facet's own, by the shards' text ``recipe``; and the
    context lines ``context-v4`` mixes in, :func:`cogitave.texts.mixed_context`)."""
    out: dict[str, None] = {}
    for n in nodes:
        texts = embed_texts(n, schema, recipe)
        for t in texts.values():
            out[t] = None
        if WHOLE in texts and (ctx := mixed_context(n, recipe)):
            out[ctx] = None
    return list(out)


def embed_local(name: str, graph: str | None, texts: Sequence[str]) -> np.ndarray:
    return load_encoder(name, graph).encode(list(texts))


class _EmbedActor:
    """One encoder per actor of the Ray Data pool."""

    def __init__(self, name: str, graph: str | None, factory: Callable[[], Encoder] | None) -> None:
        if factory is not None:  # an encoder registered in the driver only
            embed_mod.register_encoder(name, factory)
        self.encoder = load_encoder(name, graph)

    def __call__(self, batch: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        vecs = self.encoder.encode([str(t) for t in batch["text"]], batch_size=len(batch["text"]))
        return {"i": batch["i"], "vec": np.asarray(vecs, np.float32)}


def embed_ray(
    name: str,
    graph: str | None,
    texts: Sequence[str],
    actors: int,
    batch_size: int = DEFAULT_BATCH_SIZE,
) -> np.ndarray:
    """Texts -> vectors with Ray Data: ``map_batches`` over a pool of ``actors`` encoders."""
    import ray.data

    if not texts:
        return np.zeros((0, load_encoder(name, graph).dim), np.float32)
    ds = ray.data.from_items([{"i": i, "text": t} for i, t in enumerate(texts)])
    out = ds.map_batches(
        _EmbedActor,
        fn_constructor_args=(name, graph, _factory(name)),
        batch_size=batch_size,
        batch_format="numpy",
        concurrency=actors,
        num_cpus=1,
    )
    idx, vecs = [], []
    for b in out.iter_batches(batch_size=None, batch_format="numpy"):
        idx.append(b["i"])
        vecs.append(b["vec"])
    order = np.argsort(np.concatenate(idx))
    return np.concatenate(vecs)[order].astype(np.float32)


def _factory(name: str) -> Callable[[], Encoder] | None:
    """The driver's registered factory for ``name`` (None for built-in encoders)."""
    return embed_mod._FACTORIES.get(embed_mod._ALIASES.get(name, name))


def write_shard(
    path: str,
    schema: dict[str, Any],
    encoder: tuple[str, int, str | None] | None,
    settings: dict[str, Any] | None,
    adds: Sequence[Node],
    deletes: Sequence[str],
    vectors: dict[str, np.ndarray],
) -> str:
    """Publish one shard's changes (creating the shard if new); returns its new root id."""
    store = RootStore(Path(path))
    if not store.exists():
        with store.writer_lock():
            store.init()
            spec = cast(Encoder, _EncoderSpec(*encoder)) if encoder else None
            sch = Schema.from_dict(schema)
            rid = store.write_root(empty_manifest(sch, spec, Settings.from_dict(settings)))
            store.set_head(rid)
    return publish(store, list(adds), list(deletes), embedded=vectors)


def build_sharded(
    path: str | Path,
    nodes: Sequence[Node],
    schema: Schema,
    *,
    shards: int | None = None,
    encoder: str | None = None,
    settings: Settings | None = None,
    deletes: Sequence[str] = (),
    use_ray: bool = False,
    embed_actors: int = 1,
    progress: Progress | None = None,
) -> list[str]:
    """Create the sharded collection at ``path`` (``shards`` required) or sync it (adds
    replace nodes of the same uid; ``deletes`` are uids), then publish a new view. With
    ``use_ray`` (Ray already initialised) embedding and shard writes run on the cluster.
    Returns the shard root ids."""
    path = Path(path)
    step = progress or (lambda *_: None)
    if is_sharded(path):
        old = read_manifest(path)
        if shards is not None and shards != old.n:
            raise ConflictError(
                f"{path} has {old.n} shards, not {shards}; resharding means a new collection"
            )
        n = old.n
        first = RootStore(path / old.shards[0].path)
        base = first.read_root(old.shards[0].root)
        schema = Schema.from_dict(base.schema)
        name, dim = base.encoder_name, base.encoder_dim
        graph = recorded_graph(base.encoder)
        enc = (name, dim, graph) if name is not None and dim is not None else None
        recipe = texts_recipe(base.encoder)
        settings_d = base.settings
        graph_entry = dict(old.graph)
    else:
        if path.exists() and any(path.iterdir()):
            raise ConflictError(f"{path} exists and is not a sharded collection")
        if not shards or not 1 <= shards <= MAX_SHARDS:
            raise InputError(f"--shards must be 1..{MAX_SHARDS} for a new sharded collection")
        n = shards
        enc = None
        if encoder:
            made = load_encoder(encoder)
            enc = (encoder, made.dim, getattr(made, "graph_name", None))
        settings_d = settings.to_dict() if settings is not None else None
        graph_entry = {}
        recipe = DEFAULT_TEXTS  # what the shards' first roots record
    parts: list[list[Node]] = [[] for _ in range(n)]
    gone: list[list[str]] = [[] for _ in range(n)]
    for node in nodes:
        parts[shard_of(node.uid, n)].append(node)
    for uid in deletes:
        gone[shard_of(uid, n)].append(uid)

    vec_of: dict[str, np.ndarray] = {}
    if enc is not None:
        texts = texts_to_embed(nodes, schema, recipe)
        step("embed", 0, len(texts))
        mat = (
            embed_ray(enc[0], enc[2], texts, embed_actors)
            if use_ray
            else embed_local(enc[0], enc[2], texts)
        )
        vec_of = dict(zip(texts, mat, strict=True))
        step("embed", len(texts), len(texts))

    jobs = []
    for i in range(n):
        shard_vecs = (
            {t: vec_of[t] for t in texts_to_embed(parts[i], schema, recipe)} if vec_of else {}
        )
        jobs.append(
            (
                str(path / shard_dir(i)),
                schema.to_dict(),
                enc,
                settings_d,
                parts[i],
                gone[i],
                shard_vecs,
            )
        )
    step("shards", 0, n)
    if use_ray:
        import ray

        task = ray.remote(num_cpus=1)(_write_shard_task)
        factory = _factory(enc[0]) if enc else None
        roots = ray.get([task.remote(factory, *job) for job in jobs])
    else:
        roots = [write_shard(*job) for job in jobs]
    step("shards", n, n)

    gstore = RootStore(path / "graph")
    gstore.init()
    removed = set(deletes) - {x.uid for x in nodes}
    write_manifest(
        path,
        [ShardRef(shard_dir(i), r) for i, r in enumerate(roots)],
        publish_graph(gstore, graph_entry, list(nodes), removed),
    )
    return roots


def _write_shard_task(factory: Callable[[], Encoder] | None, *job: Any) -> str:
    if factory is not None and job[2] is not None:
        embed_mod.register_encoder(job[2][0], factory)
    return write_shard(*job)
