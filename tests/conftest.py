"""Shared fixtures: a seeded generated corpus, temp collections, and the shared data folder."""

from __future__ import annotations

import os
import random
from pathlib import Path

import pytest

from cogitave import Collection, Node, Schema
from cogitave.schema import Dimension

DATA = Path(
    os.environ.get("COGITAVE_DATA", Path(__file__).resolve().parents[2] / "shared" / "data")
)

WORDS = [
    "alpha",
    "beta",
    "gamma",
    "delta",
    "epsilon",
    "zeta",
    "theta",
    "kappa",
    "lambda",
    "sigma",
    "omega",
    "river",
    "mountain",
    "forest",
    "engine",
    "planner",
    "segment",
    "vector",
    "graph",
    "lexical",
    "dense",
    "sparse",
    "fusion",
    "cache",
    "index",
    "query",
    "token",
    "stream",
    "buffer",
    "socket",
    "router",
    "schema",
    "manifest",
    "snapshot",
    "publish",
    "merge",
    "leather",
    "boots",
    "cotton",
    "wool",
    "silk",
    "linen",
    "denim",
    "canvas",
    "rubber",
    "steel",
    "copper",
    "silver",
    "golden",
    "crimson",
    "azure",
    "amber",
    "violet",
]


IN_CI = os.environ.get("CI", "").lower() == "true"
"""CI has every optional part (the shared data beside the clone, Chromium): a test that would
skip for want of one fails there instead."""


def data_dir(name: str) -> Path:
    """A folder of the shared evaluation data (``../shared/data`` beside the clone, or
    ``$COGITAVE_DATA``), or skip the test with the reason; in CI, fail it."""
    p = DATA / name
    if not p.exists():
        reason = f"shared evaluation data not found at {p} (set COGITAVE_DATA)"
        if IN_CI:
            pytest.fail(f"{reason}; CI puts shared/ beside the clone")
        pytest.skip(reason)
    return p


def make_nodes(n: int, seed: int = 7, vocab: tuple[str, ...] | list[str] = WORDS) -> list[Node]:
    """Seeded nodes with Zipf-ish word choice in ``title`` and ``body``."""
    rng = random.Random(seed)
    weights = [1.0 / (i + 1) for i in range(len(vocab))]
    nodes = []
    for i in range(n):
        title = " ".join(rng.choices(vocab, weights, k=rng.randint(2, 6)))
        body = " ".join(rng.choices(vocab, weights, k=rng.randint(10, 60)))
        nodes.append(Node(uid=f"n{i:05d}", kind="doc", dims={"title": title, "body": body}))
    return nodes


SCHEMA = Schema((Dimension("title", "semantic"), Dimension("body", "semantic")))


@pytest.fixture
def collection(tmp_path: Path) -> Collection:
    """A BM25-only collection of 300 generated nodes (fresh per test: tests may write)."""
    col = Collection.create(tmp_path / "col", SCHEMA, encoder=None)
    col.add(make_nodes(300))
    col.publish()
    return col


@pytest.fixture(scope="session")
def dense_collection(tmp_path_factory: pytest.TempPathFactory) -> Collection:
    """A collection with the default encoder's dense legs (shared: tests must not write)."""
    col = Collection.create(tmp_path_factory.mktemp("dense") / "col", SCHEMA)
    col.add(make_nodes(300))
    col.publish()
    return col
