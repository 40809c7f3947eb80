"""Which reader opens a collection folder that is not a plain collection (a folder of
libraries, a sharded one).

:class:`~cogitave.collection.Collection` knows plain collections only (the other kinds are
built on it); the layer that knows every kind (:mod:`cogitave.indexing`) registers its opener
here when it is imported, so ``Collection.open`` opens any collection (``cogitave.open`` and
``cogitave.Collection`` import that layer first).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

Opener = Callable[[Path, str | None], Any]
"""(folder, root id or None) -> its reader, or None when the folder is not of its kind."""

OPENERS: list[Opener] = []


def register(opener: Opener) -> None:
    """Open the folders ``opener`` knows (once, however often it is registered)."""
    if opener not in OPENERS:
        OPENERS.append(opener)


def open_other(path: Path, root: str | None) -> Any:
    """The reader a registered opener gives for ``path`` (None: none knows it)."""
    for opener in OPENERS:
        reader = opener(path, root)
        if reader is not None:
            return reader
    return None
