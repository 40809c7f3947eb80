"""Library names: keys, references, and the forgiving match of what a person types."""

from __future__ import annotations

import pytest

from cogitave.errors import InputError
from cogitave.libraries.names import library_key, resolve, split_ref


def test_keys() -> None:
    assert library_key("FastAPI") == "fastapi"
    assert library_key("@tanstack/react-query") == "tanstack-react-query"
    assert library_key(" Fast API ") == "fast-api"
    for bad in ("", "  ", "@/", "x" * 201):
        with pytest.raises(InputError):
            library_key(bad)


def test_references() -> None:
    assert split_ref("fastapi") == ("fastapi", None)
    assert split_ref("fastapi@0.115.0") == ("fastapi", "0.115.0")
    assert split_ref("@tanstack/react-query") == ("@tanstack/react-query", None)
    assert split_ref("@tanstack/react-query@5.0.0") == ("@tanstack/react-query", "5.0.0")
    with pytest.raises(InputError):
        split_ref("fastapi@")


@pytest.mark.parametrize(
    ("asked", "best"),
    [
        ("fastapi", "fastapi"),
        ("FastAPI", "fastapi"),
        ("fast api", "fastapi"),
        ("tanstack-query", "tanstack-react-query"),
        ("@tanstack/react-query", "tanstack-react-query"),
        ("sqlalchemy", "sqlalchemy"),
        ("sql alchemy", "sqlalchemy"),
        ("pydantc", "pydantic"),
    ],
)
def test_the_best_match_comes_first(asked: str, best: str) -> None:
    held = ["fastapi", "tanstack-react-query", "sqlalchemy", "pydantic", "vite", "react"]
    got = resolve(asked, held)
    assert got[0].name == best, got
    assert [m.score for m in got] == sorted((m.score for m in got), reverse=True)


def test_an_exact_key_scores_one_and_others_less() -> None:
    got = {m.name: m.score for m in resolve("react", ["react", "react-dom", "preact"])}
    assert got["react"] == 1.0 and got["react-dom"] < 1.0 and got["preact"] < got["react-dom"]
