"""The code's shape: one reader for plain and sharded collections, the engine a loop of stages,
the CLI a thin surface. Read from the source, as the layering test is."""

from __future__ import annotations

import ast
from pathlib import Path

import cogitave

SRC = Path(cogitave.__file__).resolve().parent
READ_METHODS = {
    "search",
    "get",
    "query_graph",
    "related",
    "learning_path",
    "resolve_xref",
    "facets",
    "describe",
    "libraries",
    "systems",
    "roots",
}


def _class(path: Path, name: str) -> ast.ClassDef:
    tree = ast.parse(path.read_text())
    return next(n for n in ast.walk(tree) if isinstance(n, ast.ClassDef) and n.name == name)


def _methods(cls: ast.ClassDef) -> dict[str, ast.FunctionDef]:
    return {n.name: n for n in cls.body if isinstance(n, ast.FunctionDef)}


def test_the_reader_holds_every_read_method_once() -> None:
    reader = _methods(_class(SRC / "reader.py", "Reader"))
    assert set(reader) >= READ_METHODS
    for path, name in (
        (SRC / "collection.py", "Collection"),
        (SRC / "distributed" / "facade.py", "ShardedCollection"),
    ):
        again = READ_METHODS & set(_methods(_class(path, name)))
        assert not again, f"{name} defines read methods of Reader again: {sorted(again)}"


def test_the_engine_search_is_a_loop_of_stages() -> None:
    search = _methods(_class(SRC / "query" / "engine.py", "Engine"))["search"]
    assert search.end_lineno is not None
    assert search.end_lineno - search.lineno + 1 <= 40
    assert any(isinstance(n, ast.For) for n in ast.walk(search))


def test_the_cli_is_a_thin_surface() -> None:
    lines = (SRC / "surfaces" / "cli.py").read_text().count("\n")
    assert lines < 500, f"cli.py has {lines} lines: move application logic to a service"
