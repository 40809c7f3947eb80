"""Helpers the ingest tests share: docs trees written in a temporary folder, nodes by uid,
edges by label, the closed-graph check, and a small SMART (CISI) collection."""

from __future__ import annotations

import textwrap
from pathlib import Path

from cogitave.ingest.docs import DocsBatch
from cogitave.nodes import Node
from cogitave.schema import EDGE_LABELS


def write(root: Path, rel: str, text: str | bytes) -> Path:
    """``text`` (dedented) or ``bytes`` at ``root / rel``, folders made; returns the path."""
    p = root / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        p.write_bytes(text)
    else:
        p.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return p


def by_uid(batch: DocsBatch) -> dict[str, Node]:
    return {n.uid: n for n in batch.nodes}


def edges_of(node: Node, label: str) -> list[str]:
    return [e.dst for e in node.edges if e.label == label]


def assert_graph_closed(batch: DocsBatch) -> None:
    """Unique uids, known labels, and every edge lands on a node of the batch (not itself)."""
    uids = {n.uid for n in batch.nodes}
    assert len(uids) == len(batch.nodes), "duplicate uids"
    for n in batch.nodes:
        for e in n.edges:
            assert e.label in EDGE_LABELS
            assert e.dst in uids, f"{n.uid} -{e.label}-> {e.dst} dangles"
            assert e.dst != n.uid


CISI_LIKE = """.I 1
.T
18 Editions of the Dewey Decimal
Classifications
.A
Comaromi, J.P.
.W
   The present study is a history of the DEWEY Decimal
Classification.
.X
1	5	1
92	1	1
.I 2
.T
Use Made of Technical Libraries
.A
Slater, M.
.W
This report is an analysis of 6300 acts of use
in 104 technical libraries.
.X
2	1	2
"""
"""Two documents of a SMART collection (CISI's fields, with the ``.X`` citation lines)."""
