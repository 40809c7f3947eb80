"""Graph factories for the graph tests: a small docs graph and dense generated graphs."""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

from cogitave.nodes import Edge, Node
from cogitave.schema import EDGE_LABELS
from cogitave.store.graph import GraphSegment


def E(label: str, dst: str) -> Edge:
    return Edge(label, dst)


def docs_nodes() -> list[Node]:
    """A small documentation site: pages, sections, skills, a role, an API symbol, a cycle."""
    t = "docs/tutorial"
    return [
        Node(f"{t}/index.md", "page", {"title": "Tutorial", "lang": "en"}),
        Node(
            f"{t}/first-steps.md",
            "page",
            {"title": "First Steps", "lang": "en", "tags": ("intro", "basics")},
            edges=(E("partOf", f"{t}/index.md"), E("teachesSkill", "skill:basics")),
        ),
        Node(
            f"{t}/dependencies.md",
            "page",
            {"title": "Dependencies", "lang": "en"},
            edges=(
                E("partOf", f"{t}/index.md"),
                E("dependsOn", f"{t}/first-steps.md"),
                E("xref", f"{t}/first-steps.md"),
                E("teachesSkill", "skill:di"),
                E("xref", "docs/missing.md"),  # dangling
            ),
        ),
        Node(
            f"{t}/dependencies.md#sub-dependencies",
            "section",
            {"title": "Sub-dependencies", "lang": "en"},
            edges=(E("partOf", f"{t}/dependencies.md"),),
        ),
        Node(
            f"{t}/security.md",
            "page",
            {"title": "Security", "lang": "de"},
            edges=(
                E("partOf", f"{t}/index.md"),
                E("dependsOn", f"{t}/dependencies.md"),
                E("forRole", "role:backend"),
            ),
        ),
        Node(
            "docs/advanced/security.md",
            "page",
            {"title": "Advanced Security", "lang": "en"},
            edges=(E("dependsOn", f"{t}/security.md"),),
        ),
        Node(
            "docs/old/security.md",
            "page",
            {"title": "Security (old)", "lang": "en"},
            edges=(E("supersededBy", f"{t}/security.md"),),
        ),
        Node(
            "api:fastapi.Depends",
            "api",
            {"title": "fastapi.Depends()"},
            edges=(E("implementedBy", f"{t}/dependencies.md"),),
        ),
        Node("skill:basics", "skill", {"title": "Basics"}),
        Node(
            "skill:di",
            "skill",
            {"title": "Dependency Injection"},
            edges=(E("dependsOn", "skill:basics"),),
        ),
        Node("role:backend", "role", {"title": "Backend developer"}),
        Node(
            "docs/cycle/a.md",
            "page",
            {"title": "Cycle A"},
            edges=(E("dependsOn", "docs/cycle/b.md"),),
        ),
        Node(
            "docs/cycle/b.md",
            "page",
            {"title": "Cycle B"},
            edges=(E("dependsOn", "docs/cycle/a.md"),),
        ),
        Node(
            "docs/cycle/c.md",
            "page",
            {"title": "Cycle C"},
            edges=(E("dependsOn", "docs/cycle/a.md"),),
        ),
    ]


def docs_graph() -> tuple[GraphSegment, Any]:
    """The docs graph and a ``node_props`` function exposing each node's dims."""
    nodes = docs_nodes()
    g = GraphSegment.build(nodes)
    dims: Mapping[str, Mapping[str, Any]] = {n.uid: n.dims for n in nodes}

    def node_props(i: int) -> Mapping[str, Any]:
        return dims[g.uid(i)]

    return g, node_props


def random_nodes(
    n: int, k: int, *, seed: int = 0, labels: tuple[str, ...] = EDGE_LABELS[:3]
) -> list[Node]:
    """``n`` nodes with ``k`` random out-edges each (duplicates and self-loops allowed)."""
    rnd = random.Random(seed)
    kinds = ("page", "section", "sample")
    out = []
    for i in range(n):
        edges = tuple(Edge(rnd.choice(labels), f"n{rnd.randrange(n):06d}") for _ in range(k))
        out.append(Node(f"n{i:06d}", kinds[i % 3], {"title": f"Node {i}"}, edges=edges))
    return out
