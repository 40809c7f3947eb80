"""Shards on a local Ray cluster: a distributed build and search give the local answers."""

from __future__ import annotations

import numpy as np
import pytest

from cogitave.distributed.view import ShardedView, ShardUnavailable

ray = pytest.importorskip("ray")

from cogitave.distributed import hashed  # noqa: E402
from cogitave.distributed.actors import open_ray, stop  # noqa: E402
from cogitave.distributed.build import build_sharded, embed_local, embed_ray  # noqa: E402
from cogitave.distributed.facade import ShardedCollection  # noqa: E402
from cogitave.ingest.beir import BEIR_SCHEMA  # noqa: E402
from cogitave.query.types import SearchRequest  # noqa: E402
from cogitave.schema import WHOLE  # noqa: E402


@pytest.fixture(scope="module")
def cluster():
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    yield
    ray.shutdown()


@pytest.fixture(scope="module")
def ray_built(cluster, tmp_path_factory, scifact_slice):
    nodes, _ = scifact_slice
    path = tmp_path_factory.mktemp("raybuilt") / "s2"
    build_sharded(
        path,
        nodes[:400],
        BEIR_SCHEMA,
        shards=2,
        encoder=hashed.register(),
        use_ray=True,
        embed_actors=2,
    )
    return path


def test_ray_build_equals_local_build(ray_built, tmp_path, scifact_slice) -> None:
    nodes, _ = scifact_slice
    local = tmp_path / "local"
    build_sharded(local, nodes[:400], BEIR_SCHEMA, shards=2, encoder=hashed.NAME)
    a, b = ShardedView.open_local(ray_built), ShardedView.open_local(local)
    uids = sorted(n.uid for n in nodes[:400])
    ids_a = np.asarray([a.id_of(u) for u in uids], np.uint64)
    ids_b = np.asarray([b.id_of(u) for u in uids], np.uint64)
    np.testing.assert_array_equal(a.vectors_of(WHOLE, ids_a)[0], b.vectors_of(WHOLE, ids_b)[0])
    # the same content-addressed vector and node objects
    for i in range(2):
        ma = a.clients[i].server.snap.manifest
        mb = b.clients[i].server.snap.manifest
        assert ma.vectors == mb.vectors
        assert [s["uids_obj"] for s in ma.segments] == [s["uids_obj"] for s in mb.segments]


def test_actors_answer_as_in_process(ray_built, scifact_slice) -> None:
    view = open_ray(ray_built)
    try:
        local = ShardedView.open_local(ray_built)
        for q in scifact_slice[1][:15]:
            for mode in ("bm25", "hybrid"):
                req = SearchRequest(query=q, mode=mode, limit=10)
                got = ShardedCollection(view).search(req).uids
                assert got == ShardedCollection(local).search(req).uids
    finally:
        stop(view)


def test_dead_actor_is_named_or_partial(ray_built) -> None:
    view = open_ray(ray_built)
    try:
        ray.kill(view.clients[1].actor)
        with pytest.raises(ShardUnavailable, match=r"shard 1 \(shard-001\)"):
            ShardedCollection(view).search(SearchRequest(query="cancer cells", mode="bm25"))
        view.allow_partial = True
        res = ShardedCollection(view).search(SearchRequest(query="cancer cells", mode="bm25"))
        assert res.diagnostics["partial"] is True
        assert res.diagnostics["missing_shards"] == ["shard 1 (shard-001)"]
        assert res.uids and all(view.id_of(u) & 0xFF == 0 for u in res.uids)
    finally:
        stop(view)


def test_ray_embeds_the_default_encoder_as_one_process_does(cluster, scifact_slice) -> None:
    # Ray Data cuts the texts into its own batches on two actors: other batch-mates, other
    # padding than one process's length-sorted batches. The default graph's fixed activation
    # ranges give every text the same bits either way.
    from cogitave.expand.embed import DEFAULT_ENCODER, get_encoder

    nodes, _ = scifact_slice
    texts = [str(n.dims.get("text", ""))[:400] for n in nodes[:60]]
    graph = get_encoder(DEFAULT_ENCODER).graph_name  # type: ignore[attr-defined]
    local = embed_local(DEFAULT_ENCODER, graph, texts)
    remote = embed_ray(DEFAULT_ENCODER, graph, texts, actors=2, batch_size=7)
    np.testing.assert_array_equal(remote, local)
