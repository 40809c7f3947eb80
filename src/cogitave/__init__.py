"""Cogitave Query: a hybrid retrieval engine for documentation and knowledge graphs."""

import os

# Per-query linear algebra is small (matrix-vector products over a few thousand rows): BLAS
# threads only contend with concurrent requests and the encoder's own threads. A value the
# user set wins. Must run before numpy is first imported.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

from cogitave.errors import CogitaveError
from cogitave.nodes import Edge, Node
from cogitave.schema import EDGE_LABELS, Dimension, Schema, TailRule

__all__ = [
    "EDGE_LABELS",
    "CogitaveError",
    "Collection",
    "Dimension",
    "Edge",
    "Node",
    "Schema",
    "SearchRequest",
    "SearchResponse",
    "TailRule",
    "open",
]


def __getattr__(name: str) -> object:
    if name == "__version__":  # one place, pyproject.toml (metadata costs 70 ms to import)
        from importlib import metadata

        return metadata.version("cogitave-query")
    # The facade pulls in tantivy and numpy; keep `import cogitave` cheap for the CLI's --help.
    if name == "Collection":
        from cogitave import indexing  # noqa: F401  # its opener: Collection.open opens any kind
        from cogitave.collection import Collection

        return Collection
    if name == "open":
        from cogitave.indexing import open_any

        return open_any
    if name in ("SearchRequest", "SearchResponse"):
        from cogitave.query import types

        return getattr(types, name)
    raise AttributeError(name)
