"""Graph fixtures: built once per session (the dense graphs take ~0.1-0.3 s each)."""

from __future__ import annotations

from typing import Any

import pytest

from cogitave.store.graph import GraphSegment
from tests.graph._graphs import docs_graph, random_nodes


@pytest.fixture(scope="session")
def docs() -> tuple[GraphSegment, Any]:
    return docs_graph()


@pytest.fixture(scope="session")
def dense() -> GraphSegment:
    """The worst case of the spec's bounds: 2000 nodes, 20 out-edges each (40k edges)."""
    return GraphSegment.build(random_nodes(2000, 20, seed=7))


@pytest.fixture(scope="session")
def big() -> GraphSegment:
    """10k nodes, 100k edges."""
    return GraphSegment.build(random_nodes(10_000, 10, seed=11))
