"""The facade: snapshot isolation, updates and deletes by uid, crash safety."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from cogitave import Collection, Node, SearchRequest
from cogitave.errors import QueryError, SchemaError
from tests.conftest import SCHEMA


def test_reader_pinned_before_publish_sees_old_results(collection):
    path = collection.store.path
    reader = Collection.open(path)
    before = reader.search("alpha beta", limit=20).uids
    writer = Collection.open(path)
    writer.delete(before[:5])
    writer.add([Node(uid="new", dims={"title": "alpha beta zebrine", "body": "alpha"})])
    writer.publish()
    assert reader.search("alpha beta", limit=20).uids == before
    assert "new" not in reader.search("zebrine", limit=300).uids
    fresh = Collection.open(path)
    assert fresh.search("zebrine").uids[0] == "new"
    assert not set(before[:5]) & set(fresh.search("alpha beta", limit=300).uids)


def test_update_replaces_and_delete_removes(collection):
    uid = collection.search("gamma").uids[0]
    collection.add([Node(uid=uid, dims={"title": "zzzunique", "body": "nothing else"})])
    collection.publish()
    assert collection.search("zzzunique", mode="bm25").uids == [uid]
    assert uid not in collection.search("gamma", limit=300, mode="bm25").uids
    assert collection.get(uid).text("title") == "zzzunique"
    collection.delete([uid])
    collection.publish()
    assert collection.search("zzzunique", mode="bm25").uids == []
    assert len(collection) == 299


def test_stats_follow_updates(collection):
    from cogitave.expand.stats import StatsBuilder

    collection.delete(["n00001", "n00002"])
    collection.add([Node(uid="n00003", dims={"title": "omega", "body": "omega river"})])
    collection.publish()
    fresh = StatsBuilder(collection.schema)
    nodes = [collection.get(u) for u in collection.snapshot.nodes.nid_of]
    fresh.add_all(nodes)
    recount = fresh.apply(None)
    got = collection.snapshot.stats
    for d in ("title", "body"):
        assert got.dim(d).stems == recount.dim(d).stems
        assert got.dim(d).n_docs == recount.dim(d).n_docs
        assert (got.dim(d).bigram_keys == recount.dim(d).bigram_keys).all()
        assert (got.dim(d).bigram_df == recount.dim(d).bigram_df).all()


def test_unknown_dimension_is_a_schema_error(collection):
    collection.add([Node(uid="x", dims={"colour": "red"})])
    with pytest.raises(SchemaError, match="colour"):
        collection.publish()
    assert len(Collection.open(collection.store.path)) == 300


def test_bad_requests(collection):
    with pytest.raises(QueryError):
        collection.search("   ")
    with pytest.raises(QueryError):
        collection.search("alpha", limit=0)
    with pytest.raises(QueryError):
        collection.search("alpha", offset=-1)
    with pytest.raises(SchemaError):
        collection.search(SearchRequest(query="alpha", dimensions=("nope",)))


CHILD = textwrap.dedent(
    """
    import sys
    from cogitave import Collection
    from tests.conftest import make_nodes
    col = Collection.open(sys.argv[1])
    nodes = make_nodes(2000, seed=int(sys.argv[2]))
    print("ready", flush=True)
    for i in range(40):
        col.add(nodes[i * 50:(i + 1) * 50])
        if i % 3 == 2:
            col.delete([f"n{(i * 37) % 2000:05d}"])
        rid = col.publish(retention=100)
        print(rid, flush=True)
    """
)


@pytest.mark.slow
def test_publish_killed_at_random_points_leaves_whole_head(tmp_path):
    path = tmp_path / "c"
    # BM25-only so that publishes are quick and many land between kills; vector segments
    # are written through the same object paths (put_bytes / put_file).
    Collection.create(path, SCHEMA, encoder=None)
    rng = random.Random(11)
    published: list[str] = []
    root_dir = Path(__file__).resolve().parents[1]
    for trial in range(12):
        proc = subprocess.Popen(
            [sys.executable, "-c", CHILD, str(path), str(trial)],
            stdout=subprocess.PIPE,
            cwd=root_dir,
            env={
                **os.environ,
                "PYTHONPATH": os.pathsep.join((str(root_dir / "src"), str(root_dir))),
            },
        )
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == b"ready"  # imports done: kill mid-publish
        time.sleep(rng.uniform(0.0, 1.5))
        proc.send_signal(signal.SIGKILL)
        out, _ = proc.communicate()
        published += out.decode().split()
        col = Collection.open(path)  # HEAD is a whole root
        assert col.search("alpha", limit=5).root == col.root
        for rid in published[-5:]:
            pinned = Collection.open(path, root=rid)
            fresh = Collection.open(path, root=rid)
            assert (
                pinned.search("alpha beta", limit=10).uids
                == fresh.search("alpha beta", limit=10).uids
            )
    assert published, "the child never got to publish"


def test_uid_rank_orders_live_nodes_by_uid(collection):
    collection.delete(["n00001"])
    collection.add([Node(uid="a-first", dims={"title": "t", "body": "b"})])
    collection.publish()
    table = collection.snapshot.nodes
    live = table.live_nids().astype(np.int64)
    by_rank = live[np.argsort(table.uid_rank[live])]
    assert [table.uid_of[int(n)] for n in by_rank] == sorted(table.nid_of)
    dead = np.flatnonzero(~table.alive)
    assert len(dead) and (table.uid_rank[dead] == len(live)).all()


# -- following HEAD ------------------------------------------------------------------------------
PUBLISHER = """
import sys
from cogitave import Collection, Node
col = Collection.open(sys.argv[1])
col.add([Node(uid="from-elsewhere", kind="doc", dims={"title": "zebra crossing", "body": "x"})])
print(col.publish())
"""


def publish_elsewhere(path: Path) -> str:
    """Publish a root from another process; returns its id."""
    proc = subprocess.run(
        [sys.executable, "-c", PUBLISHER, str(path)], capture_output=True, text=True, check=True
    )
    return proc.stdout.strip()


def wait_for(pred: Callable[[], bool], seconds: float = 60) -> None:
    """Poll until ``pred()`` holds; ``seconds`` is a failure guard, never a bound tested."""
    t0 = time.monotonic()
    while not pred():
        assert time.monotonic() - t0 < seconds, "timed out"
        time.sleep(0.01)


def test_follow_picks_up_a_root_published_elsewhere(collection: Collection) -> None:
    old_root = collection.root
    in_flight = collection.engine()  # what a request running now holds
    collection.follow(interval=0.05)
    try:
        rid = publish_elsewhere(collection.store.path)
        wait_for(lambda: collection.root == rid)
        assert collection.changed_at is not None
        assert collection.search("zebra crossing").results[0].uid == "from-elsewhere"
        # the request in flight finishes on its root
        assert in_flight.port.root == old_root
        assert in_flight.port.id_of("from-elsewhere") is None
    finally:
        collection.unfollow()


def test_refresh_is_a_stat_until_head_moves(collection: Collection) -> None:
    assert collection.refresh() is False
    rid = publish_elsewhere(collection.store.path)
    assert collection.refresh() is True and collection.root == rid
    assert collection.refresh() is False


def test_a_pinned_collection_does_not_follow(collection: Collection) -> None:
    pinned = Collection.open(collection.store.path, root=collection.root)
    publish_elsewhere(collection.store.path)
    assert pinned.refresh() is False and pinned.root == collection.root


def test_server_names_the_new_root(collection: Collection) -> None:
    from fastapi.testclient import TestClient

    from cogitave.surfaces.http import create_app

    collection.follow(interval=0.05)
    try:
        with TestClient(create_app(collection), base_url="http://127.0.0.1") as client:
            before = client.get("/roots").json()["current"]
            rid = publish_elsewhere(collection.store.path)
            assert before != rid
            wait_for(lambda: client.get("/roots").json()["current"] == rid)
            body = client.post("/search", json={"query": "zebra crossing"}).json()
            assert body["results"][0]["uid"] == "from-elsewhere"
    finally:
        collection.unfollow()


def test_configure_publishes_settings_without_reindexing(collection):
    from dataclasses import replace

    before, head = collection.snapshot.manifest, collection.root
    s = collection.snapshot.settings
    new = replace(s, boost=replace(s.boost, residual_factor=2.0))
    rid = collection.configure(new)
    assert rid != head and collection.root == rid
    after = collection.snapshot.manifest
    assert after.parent == head and collection.snapshot.settings == new
    # nothing re-indexed: the same objects, only the settings differ
    assert after.segments == before.segments and after.lexical_files == before.lexical_files
    assert after.vectors == before.vectors and after.stats_obj == before.stats_obj
    assert collection.engine().settings.boost.residual_factor == 2.0
    assert Collection.open(collection.store.path).snapshot.settings == new  # durable
    assert collection.configure(new) == rid, "unchanged settings write no root"
