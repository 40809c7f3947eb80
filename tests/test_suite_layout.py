"""The test suite's own layout: a test module imports from the package, from ``conftest`` and
from helpers modules (``tests/helpers.py``, ``tests/<folder>/helpers.py`` and the like), never
from another ``test_*`` module.

A helper kept in a test module ties the two modules together: collecting one runs the other's
module code, renaming a test breaks an unrelated file, and the helper's home is hard to guess.
Read from the source (``ast``): every import, at module level and inside functions.
"""

from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).resolve().parent


def _module(path: Path) -> str:
    parts = list(path.relative_to(TESTS.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports_of_test_modules(source: str, module: str, is_package: bool = False) -> list[str]:
    """The ``test_*`` modules that ``source`` (the module ``module``) imports from."""
    package = module if is_package else module.rpartition(".")[0]
    found: list[str] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # `from .test_x import y`, `from .. import test_x`
                parts = package.split(".")
                up = parts[: len(parts) - node.level + 1]
                base = ".".join([*up, base] if base else up)
            names = [base, *(f"{base}.{a.name}" for a in node.names)]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        else:
            continue
        for name in names:
            parts = name.split(".")
            hit = next((i for i, p in enumerate(parts) if p.startswith("test_")), None)
            if hit is not None and ".".join(parts[: hit + 1]) not in found:
                found.append(".".join(parts[: hit + 1]))
    return found


def test_no_test_module_imports_another() -> None:
    bad = {}
    for path in sorted(TESTS.rglob("*.py")):
        mod = _module(path)
        names = imports_of_test_modules(
            path.read_text(encoding="utf-8"), mod, path.name == "__init__.py"
        )
        if names:
            bad[str(path.relative_to(TESTS.parent))] = names
    assert not bad, f"helpers belong in a helpers module, not a test module: {bad}"


def test_the_check_sees_every_form_of_import() -> None:
    mod = "tests.surfaces.test_cost"
    for source in (
        "from tests.surfaces.test_http import error",
        "import tests.surfaces.test_mcp",
        "from tests.surfaces import test_mcp",
        "from .test_http import error",
        "from . import test_mcp",
        "from ..ingest.test_markdown import write",
        "def f():\n    from tests.ingest.test_smart import CISI_LIKE\n",
    ):
        assert imports_of_test_modules(source, mod), source
    for source in (
        "from tests.helpers import run_cli",
        "from tests.ingest.helpers import write",
        "from tests.conftest import make_nodes",
        "from . import helpers",
        "from cogitave.surfaces import cli",
    ):
        assert not imports_of_test_modules(source, mod), source
