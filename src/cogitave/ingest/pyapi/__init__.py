"""An installed Python package -> its API reference, read from its source files, never
imported: the ``pyapi`` source format.

One module per step: :mod:`~cogitave.ingest.pyapi.dist` (the distribution: ``METADATA``'s
name, version and README, the packages it installs), :mod:`~cogitave.ingest.pyapi.load`
(griffe over the source files, bounded, no import), :mod:`~cogitave.ingest.pyapi.entries`
(public names, aliases, signatures, kinds), :mod:`~cogitave.ingest.pyapi.docstrings`
(docstrings -> Markdown), :mod:`~cogitave.ingest.pyapi.read` (a package -> its entries;
:func:`api_for`: dotted names -> entries) and :mod:`~cogitave.ingest.pyapi.build` (entries ->
the docs graph: pages and ``api`` nodes as the docs reader makes them).

Names are loaded when first used: telling whether a folder is a package
(:func:`~cogitave.ingest.pyapi.dist.is_package_source`, on every ``index``) imports neither
griffe nor the docs builder.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from cogitave.ingest.docs.read import DocsBatch
    from cogitave.ingest.pyapi.build import build_batch
    from cogitave.ingest.pyapi.dist import Distribution, is_package_source, locate
    from cogitave.ingest.pyapi.entries import ApiDoc
    from cogitave.ingest.pyapi.load import Limits, Skipped
    from cogitave.ingest.pyapi.read import ApiLookup, PackageApi, api_for, read_package
    from cogitave.schema import Schema

__all__ = [
    "ApiDoc",
    "ApiLookup",
    "Distribution",
    "Limits",
    "PackageApi",
    "Skipped",
    "api_for",
    "build_batch",
    "is_package_source",
    "locate",
    "read_package",
    "read_pyapi",
]

_WHERE = {
    "ApiDoc": "entries",
    "ApiLookup": "read",
    "Distribution": "dist",
    "Limits": "load",
    "PackageApi": "read",
    "Skipped": "load",
    "api_for": "read",
    "build_batch": "build",
    "is_package_source": "dist",
    "locate": "dist",
    "read_package": "read",
}


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{_WHERE[name]}"), name)


def read_pyapi(
    path: str | Path,
    distribution: str | None = None,
    schema: Schema | None = None,
    limits: Limits | None = None,
) -> DocsBatch:
    """The docs graph of the distribution at ``path`` (a package folder, or a
    ``site-packages`` with ``distribution`` naming one)."""
    from cogitave.ingest.pyapi.build import build_batch
    from cogitave.ingest.pyapi.read import read_package

    return build_batch(read_package(path, distribution, limits), schema)
