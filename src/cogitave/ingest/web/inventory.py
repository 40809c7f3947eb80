"""A Sphinx inventory (``objects.inv``, version 2) -> the objects a site documents.

The file is four ``#`` header lines (format, project, version, compression), then zlib-compressed
lines ``name domain:role priority uri dispname``; ``uri`` ending in ``$`` stands for the
name itself, a ``dispname`` of ``-`` for the name. Python-domain objects tell the crawl each
``api`` node's kind, and the objects it did not find on their page as ``<dt id>``. Bounded:
the decompressed text may not exceed :data:`MAX_INVENTORY_BYTES`.
"""

from __future__ import annotations

import re
import zlib
from dataclasses import dataclass

MAX_INVENTORY_BYTES = 64 * 1024 * 1024
_LINE = re.compile(r"^(?P<name>.+?)\s+(?P<domain>[^\s:]+):(?P<role>\S+)\s+(?P<prio>-?\d+)\s+"
                   r"(?P<uri>\S*)\s+(?P<disp>.+)$")  # fmt: skip


@dataclass(frozen=True)
class InventoryEntry:
    """One object of the inventory."""

    name: str
    domain: str
    role: str
    uri: str
    """The page and anchor, relative to the site's root (``library/pathlib.html#pathlib.Path``)."""
    display: str

    @property
    def page(self) -> str:
        return self.uri.partition("#")[0]

    @property
    def anchor(self) -> str:
        return self.uri.partition("#")[2]


@dataclass(frozen=True)
class Inventory:
    """The project, its version and its objects."""

    project: str
    version: str
    entries: tuple[InventoryEntry, ...]

    def python(self) -> dict[str, InventoryEntry]:
        """Python-domain objects by anchor (what a page's ``<dt id>`` is)."""
        return {e.anchor or e.name: e for e in self.entries if e.domain == "py"}


def parse_inventory(data: bytes) -> Inventory | None:
    """The inventory in ``data``; None when it is not a version 2 inventory."""
    lines = data.split(b"\n", 4)
    if len(lines) < 5 or not lines[0].startswith(b"# Sphinx inventory version 2"):
        return None
    project = lines[1].decode("utf-8", "replace").removeprefix("# Project:").strip()
    version = lines[2].decode("utf-8", "replace").removeprefix("# Version:").strip()
    if b"zlib" not in lines[3]:
        return None
    d = zlib.decompressobj()
    try:
        text = d.decompress(lines[4], MAX_INVENTORY_BYTES)
    except zlib.error:
        return None
    entries: list[InventoryEntry] = []
    for raw in text.decode("utf-8", "replace").splitlines():
        m = _LINE.match(raw.strip())
        if m is None:
            continue
        name, uri, disp = m.group("name"), m.group("uri"), m.group("disp")
        if uri.endswith("$"):
            uri = uri[:-1] + name
        shown = name if disp == "-" else disp
        entries.append(InventoryEntry(name, m.group("domain"), m.group("role"), uri, shown))
    return Inventory(project, version, tuple(entries))
