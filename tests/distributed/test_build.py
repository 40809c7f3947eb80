"""Sharded builds: every shard records the encoder and the graph its vectors came from, and
the sharded view embeds queries with that graph."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from cogitave import Node, Schema
from cogitave.distributed.build import build_sharded
from cogitave.distributed.facade import ShardedCollection
from cogitave.expand.embed import DEFAULT_ENCODER, OnnxMiniLMEncoder, get_encoder
from cogitave.schema import WHOLE, Dimension
from cogitave.store.roots import RootStore

SCHEMA = Schema((Dimension("title", "semantic"),))


def test_shards_record_the_graph_and_queries_use_it(tmp_path: Path) -> None:
    nodes = [Node(uid=f"n{i}", kind="page", dims={"title": f"river number {i}"}) for i in range(6)]
    build_sharded(tmp_path / "sh", nodes, SCHEMA, shards=2, encoder=DEFAULT_ENCODER)
    graph = get_encoder().graph_name  # type: ignore[attr-defined]
    for shard in sorted((tmp_path / "sh").glob("shard-*")):
        store = RootStore(shard)
        assert store.read_root(store.head()).encoder["graph"] == graph
    sharded = ShardedCollection.open(tmp_path / "sh")
    port = sharded.port()
    assert port.encoder_graph == graph
    q = "a river"
    want = OnnxMiniLMEncoder(graph=graph).encode_queries([q])[0]
    np.testing.assert_allclose(sharded.engine().embed([q])[0], want, atol=1e-5)
    assert port.vector_count(WHOLE) == 6
