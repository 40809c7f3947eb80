"""The package's layering: no import cycles between modules, tantivy only behind the store.

Read from the source (``ast``), so the test needs nothing imported. Cycles are checked over
module-level imports (``if TYPE_CHECKING`` blocks left out: annotations only): those decide
whether a module can be imported at all. An import inside a function is the deliberate,
lazy exception (the CLI keeps ``--help`` fast that way; the docs layout asks the site
detectors only when needed). Tantivy is checked everywhere, functions included.
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


def _imports(*, top_level_only: bool = False) -> dict[str, set[str]]:
    mods = {_module(p): p for p in SRC.rglob("*.py")}
    out: dict[str, set[str]] = {}
    for mod, path in mods.items():
        deps: set[str] = set()
        tree = ast.parse(path.read_text(encoding="utf-8"))
        nodes = _top_level(tree) if top_level_only else ast.walk(tree)
        for node in nodes:
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            else:
                continue
            deps |= {n for n in names if n in mods and n != mod} | {
                n for n in names if n.split(".")[0] in ("tantivy",)
            }
        out[mod] = deps
    return out


def _top_level(tree: ast.Module) -> list[ast.AST]:
    """Statements at module level, and inside module-level ``if``/``try`` blocks (not
    ``if TYPE_CHECKING``)."""
    out: list[ast.AST] = []
    todo: list[ast.AST] = list(tree.body)
    while todo:
        node = todo.pop()
        out.append(node)
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            continue
        if isinstance(node, ast.If | ast.Try):
            todo.extend(node.body)
            todo.extend(node.orelse)
            if isinstance(node, ast.Try):
                for h in node.handlers:
                    todo.extend(h.body)
                todo.extend(node.finalbody)
    return out


def test_no_import_cycles():
    imports = _imports(top_level_only=True)
    graph = {m: {d for d in deps if d.startswith("cogitave")} for m, deps in imports.items()}
    # a package's __init__ re-exporting its modules is not a cycle of design
    graph = {m: {d for d in deps if not m.startswith(d + ".")} for m, deps in graph.items()}
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(m: str) -> None:
        state[m] = 1
        stack.append(m)
        for d in sorted(graph.get(m, ())):
            if state.get(d) == 1:
                cycle = [*stack[stack.index(d) :], d]
                raise AssertionError("import cycle: " + " -> ".join(cycle))
            if d not in state:
                visit(d)
        stack.pop()
        state[m] = 2

    for m in sorted(graph):
        if m not in state:
            visit(m)


def test_tantivy_only_behind_the_store():
    users = {m for m, deps in _imports().items() if "tantivy" in deps}
    assert users <= TANTIVY_ALLOWED, sorted(users - TANTIVY_ALLOWED)


def test_the_read_path_names_no_index_fields():
    for path in (SRC / "query").glob("*.py"):
        text = path.read_text(encoding="utf-8")
        for prefix in ('"s_', '"t_', '"x_', 'f"s_', 'f"t_', 'f"x_'):
            assert prefix not in text, f"{path.name} spells an index field ({prefix})"
