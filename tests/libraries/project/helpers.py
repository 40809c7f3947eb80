"""What the tests of reading a project share: writing its files into a folder, its
dependencies by key, and the PEP 621 project with its ``uv.lock`` that python and reading
tests both read.

Every fixture is written into ``tmp_path`` in the real format (and version) of its file.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

from cogitave.libraries.project import Dependency, ProjectDeps


def write(folder: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return folder


def by_key(deps: ProjectDeps) -> dict[str, Dependency]:
    keys = [(d.ecosystem, d.key) for d in deps.dependencies]
    assert len(keys) == len(set(keys)), "one dependency per (ecosystem, key)"
    return {d.key: d for d in deps.dependencies}


PYPROJECT_PEP621 = """
[build-system]
requires = ["hatchling"]
build-backend = "hatchling.build"

[project]
name = "shop-api"
version = "0.3.0"
requires-python = ">=3.11"
dependencies = [
    "FastAPI>=0.100,<1",
    "pydantic_settings~=2.2",
    "SQLAlchemy[asyncio]>=2.0",
    'tomli>=2; python_version < "3.11"',
]

[project.optional-dependencies]
redis = ["redis>=5"]
test = ["pytest>=8", "httpx>=0.27"]

[dependency-groups]
dev = ["ruff>=0.6", {include-group = "lint"}]
lint = ["mypy>=1.10"]

[tool.ruff]
line-length = 100
"""

UV_LOCK = """
version = 1
requires-python = ">=3.11"

[[package]]
name = "anyio"
version = "4.4.0"
source = { registry = "https://pypi.org/simple" }
dependencies = [
    { name = "idna" },
    { name = "sniffio" },
]
sdist = { url = "https://files.example/anyio-4.4.0.tar.gz", hash = "sha256:00", size = 1 }

[[package]]
name = "fastapi"
version = "0.110.2"
source = { registry = "https://pypi.org/simple" }
dependencies = [
    { name = "pydantic" },
    { name = "starlette" },
]

[[package]]
name = "mypy"
version = "1.10.1"
source = { registry = "https://pypi.org/simple" }

[[package]]
name = "pydantic-settings"
version = "2.3.4"
source = { registry = "https://pypi.org/simple" }

[[package]]
name = "pytest"
version = "8.2.2"
source = { registry = "https://pypi.org/simple" }

[[package]]
name = "redis"
version = "5.0.7"
source = { registry = "https://pypi.org/simple" }

[[package]]
name = "ruff"
version = "0.5.0"
source = { registry = "https://pypi.org/simple" }

[[package]]
name = "shop-api"
version = "0.3.0"
source = { editable = "." }
dependencies = [
    { name = "fastapi" },
    { name = "pydantic-settings" },
    { name = "sqlalchemy", extra = ["asyncio"] },
]

[package.optional-dependencies]
redis = [
    { name = "redis" },
]
test = [
    { name = "pytest" },
]

[package.dev-dependencies]
dev = [
    { name = "ruff" },
]
lint = [
    { name = "mypy" },
]

[package.metadata]
requires-dist = [
    { name = "fastapi", specifier = ">=0.100,<1" },
    { name = "pydantic-settings", specifier = "~=2.2" },
]

[[package]]
name = "sqlalchemy"
version = "2.0.31"
source = { registry = "https://pypi.org/simple" }

[package.optional-dependencies]
asyncio = [
    { name = "greenlet" },
]
"""
