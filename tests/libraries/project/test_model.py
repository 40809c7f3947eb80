"""Names: the key a library is matched by, per ecosystem."""

from __future__ import annotations

from cogitave.libraries.project import normalise


def test_normalise_python_follows_pep_503() -> None:
    assert normalise("Foo_Bar.baz", "python") == "foo-bar-baz"
    assert normalise("FastAPI", "python") == "fastapi"
    assert normalise("pydantic__settings", "python") == "pydantic-settings"


def test_normalise_npm_lowers_and_keeps_the_scope() -> None:
    assert normalise("@TanStack/React-Query", "npm") == "@tanstack/react-query"
    assert normalise("lodash.merge", "npm") == "lodash.merge"  # no PEP 503 folding for npm
