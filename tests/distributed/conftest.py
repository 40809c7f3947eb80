"""A SciFact slice built three ways (one collection, 2 and 4 shards) with the hashed encoder."""

from __future__ import annotations

from pathlib import Path

import pytest

from cogitave import Collection
from cogitave.distributed import hashed
from cogitave.distributed.build import build_sharded
from cogitave.ingest.beir import BEIR_SCHEMA, read_beir, read_queries
from tests.conftest import DATA, data_dir

SCIFACT = DATA / "scifact"
N_DOCS = 800
N_QUERIES = 50


@pytest.fixture(scope="session")
def scifact_slice() -> tuple[list, list[str]]:
    data_dir("scifact/corpus.jsonl")  # skips without the shared data (fails in CI)
    nodes = read_beir(SCIFACT).nodes[:N_DOCS]
    queries = list(read_queries(SCIFACT / "queries.jsonl").values())[:N_QUERIES]
    return nodes, queries


@pytest.fixture(scope="session")
def built(tmp_path_factory: pytest.TempPathFactory, scifact_slice) -> dict[int, Path]:
    """Shard count -> path (1: an ordinary collection; 0: a sharded one of 1 shard)."""
    nodes, _ = scifact_slice
    name = hashed.register()
    root = tmp_path_factory.mktemp("sharded")
    col = Collection.create(root / "one", BEIR_SCHEMA, encoder=name)
    col.add(nodes)
    col.publish()
    out = {1: root / "one"}
    for n in (1, 2, 4):
        build_sharded(root / f"s{n}", nodes, BEIR_SCHEMA, shards=n, encoder=name)
        out[n if n > 1 else 0] = root / f"s{n}"
    return out
