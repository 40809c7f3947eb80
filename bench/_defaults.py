"""Cached bench collections measured as a new collection would be: with today's default settings.

Settings live in every root and are read at query time; a collection cached under older
defaults is published again with the current ones (nothing re-indexed, a no-op when equal).
"""

from __future__ import annotations

from cogitave import Collection
from cogitave.config import Settings


def with_default_settings(col: Collection) -> Collection:
    if col.snapshot.settings != Settings():
        col.configure(Settings())
    return col
