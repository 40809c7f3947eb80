"""The package's layering: no import cycles between modules, tantivy only behind the store.

Read from the source (``ast``), so the test needs nothing imported. Cycles are checked over
every import: at module level, inside functions and under ``if TYPE_CHECKING``. A lazy import
keeps a module fast to load (the CLI's ``--help``), and an annotation-only import keeps it
importable, but either still makes the two modules one design: a change to one can break
the other. A package's ``__init__`` importing its own modules is not a cycle. Tantivy is
checked everywhere, functions included.
"""

from __future__ import annotations

import ast
from pathlib import Path

import cogitave

SRC = Path(cogitave.__file__).resolve().parent
# the analyzers the index and the planner share are tantivy objects: expand/analysis.py builds
# them; everything else that touches tantivy is the store's business
TANTIVY_ALLOWED = {
    "cogitave.store.lexical",
    "cogitave.store.snapshot",
    "cogitave.expand.analysis",
    # a shard server answers the read port over its own lexical index (global-statistics BM25)
    "cogitave.distributed.shard",
}


def _module(path: Path) -> str:
    rel = path.relative_to(SRC.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imports() -> dict[str, set[str]]:
    """Module -> the package's modules (and tantivy) it imports, anywhere in its source."""
    mods = {_module(p): p for p in SRC.rglob("*.py")}
    out: dict[str, set[str]] = {}
    for mod, path in mods.items():
        deps: set[str] = set()
        package = mod if path.name == "__init__.py" else mod.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:  # `from . import x`, `from ..a import b`
                    parts = package.split(".")
                    up = parts[: len(parts) - node.level + 1]
                    base = ".".join([*up, base] if base else up)
                names = [base] + [f"{base}.{a.name}" for a in node.names]
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            else:
                continue
            deps |= {n for n in names if n in mods and n != mod} | {
                n for n in names if n.split(".")[0] in ("tantivy",)
            }
        out[mod] = deps
    return out


def import_cycles(imports: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of modules (two or more) that import each other, each
    with one cycle through it, sorted."""
    graph = {m: {d for d in deps if d.startswith("cogitave")} for m, deps in imports.items()}
    # a package's __init__ importing its own modules is not a cycle of design
    graph = {m: {d for d in deps if not m.startswith(d + ".")} for m, deps in graph.items()}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[set[str]] = []

    def connect(m: str) -> None:  # Tarjan's strongly connected components
        index[m] = low[m] = len(index)
        stack.append(m)
        on_stack.add(m)
        for d in sorted(graph.get(m, ())):
            if d not in index:
                connect(d)
                low[m] = min(low[m], low[d])
            elif d in on_stack:
                low[m] = min(low[m], index[d])
        if low[m] == index[m]:
            group: set[str] = set()
            while True:
                x = stack.pop()
                on_stack.discard(x)
                group.add(x)
                if x == m:
                    break
            if len(group) > 1:
                groups.append(group)

    for m in sorted(graph):
        if m not in index:
            connect(m)
    return sorted(_cycle_in(g, graph) for g in groups)


def _cycle_in(group: set[str], graph: dict[str, set[str]]) -> list[str]:
    """One cycle through the group's first module (breadth first: the shortest)."""
    start = min(group)
    paths = {start: [start]}
    todo = [start]
    while todo:
        m = todo.pop(0)
        for d in sorted(graph[m] & group):
            if d == start:
                return [*paths[m], start]
            if d not in paths:
                paths[d] = [*paths[m], d]
                todo.append(d)
    return sorted(group)


def test_no_import_cycles():
    cycles = import_cycles(_imports())
    assert not cycles, "import cycles: " + "; ".join(" -> ".join(c) for c in cycles)


def test_cycles_are_found_in_functions_and_type_checking_blocks():
    imports = {
        "cogitave.a": {"cogitave.b"},  # at module level
        "cogitave.b": {"cogitave.a"},  # inside a function, or under TYPE_CHECKING
        "cogitave.p": {"cogitave.p.x"},  # a package importing its own module
        "cogitave.p.x": {"cogitave.p"},
    }
    assert import_cycles(imports) == [["cogitave.a", "cogitave.b", "cogitave.a"]]


def test_tantivy_only_behind_the_store():
    users = {m for m, deps in _imports().items() if "tantivy" in deps}
    assert users <= TANTIVY_ALLOWED, sorted(users - TANTIVY_ALLOWED)


def test_the_read_path_names_no_index_fields():
    for path in (SRC / "query").glob("*.py"):
        text = path.read_text(encoding="utf-8")
        for prefix in ('"s_', '"t_', '"x_', 'f"s_', 'f"t_', 'f"x_'):
            assert prefix not in text, f"{path.name} spells an index field ({prefix})"
