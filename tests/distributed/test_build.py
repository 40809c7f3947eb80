"""Sharded builds: every shard records the encoder and the graph its vectors came from, and
the sharded view embeds queries with that graph."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from cogitave import Node, Schema
from cogitave.distributed.build import build_sharded, texts_to_embed
from cogitave.distributed.facade import ShardedCollection
from cogitave.expand.embed import DEFAULT_ENCODER, OnnxMiniLMEncoder, get_encoder
from cogitave.schema import WHOLE, Dimension
from cogitave.store.roots import RootStore
from cogitave.texts import DEFAULT_TEXTS

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


def test_a_sharded_build_mixes_each_nodes_place_in_as_one_collection_does(tmp_path: Path) -> None:
    from cogitave import Collection
    from cogitave.distributed import hashed

    name = hashed.register()
    schema = Schema((Dimension("title", "semantic"), Dimension("body", "semantic")))
    nodes = [
        Node(
            uid=f"guide/page{i % 2}#s{i}",
            kind="section",
            dims={"title": f"Step {i}", "body": f"turn the valve {i} times"},
            meta={"breadcrumb": ["Guides", f"Plumbing {i % 2}", f"Step {i}"]},
        )
        for i in range(8)
    ]
    build_sharded(tmp_path / "sh", nodes, schema, shards=2, encoder=name)
    one = Collection.create(tmp_path / "one", schema, encoder=name)
    one.add(nodes)
    one.publish()
    sharded, alone = ShardedCollection.open(tmp_path / "sh").port(), one.port()
    for node in nodes:
        got = [
            p.vectors_of(WHOLE, np.asarray([p.id_of(node.uid)], np.int64))[0][0]
            for p in (sharded, alone)
        ]
        np.testing.assert_allclose(got[0], got[1], atol=1e-6)
    own = hashed.HashedBowEncoder().encode(["Step 7\nturn the valve 7 times"])[0]
    assert not np.allclose(got[1], own, atol=1e-3)  # the place is in the vector
    # the shards' encoder pass gets each place once, beside the own texts
    texts = texts_to_embed(nodes, schema, DEFAULT_TEXTS)
    assert texts.count("Guides › Plumbing 0") == 1 and "Step 7\nturn the valve 7 times" in texts
