"""Helpers the tests share: the small MkDocs collection of the surface tests (plain and
sharded, built once per session), the command line in this process, MCP calls, the HTTP
error shape."""

from __future__ import annotations

import contextlib
import io
import socket
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.types import CallToolResult

from cogitave.collection import Collection
from cogitave.distributed.facade import ShardedCollection
from cogitave.reader import Reader

CLI = (sys.executable, "-m", "cogitave.surfaces.cli")
BASE_URL = "http://127.0.0.1:8765"  # the MCP transport checks Host against DNS rebinding
DOCS: dict[str, str] = {
    "mkdocs.yml": """site_name: Demo
nav:
  - Home: index.md
  - Tutorial:
    - tutorial/install.md
    - tutorial/first-steps.md
    - tutorial/query.md
""",
    "docs/index.md": """# Demo docs

Welcome to the demo. Start with [the installation](tutorial/install.md).
""",
    "docs/tutorial/install.md": """# Installation

Install the package with pip before anything else.

## Using pip

```bash
pip install demo-package
```

## From source

Clone the repository and build the wheel.

```python
import subprocess
subprocess.run(["python", "-m", "build"])
```
""",
    "docs/tutorial/first-steps.md": """---
skills: [indexing]
---
# First steps

Create an index of your documents. Read [installation](install.md#using-pip) first.

## Index a folder

```python
from demo import Index
idx = Index.create("docs")
idx.add_folder("docs/")
```

## Configuration

A TOML configuration file sets the tokenizer and the embedding model.

```toml
[index]
tokenizer = "default"
```
""",
    "docs/tutorial/query.md": """# Querying

Search the index with a query string; results are ranked with reciprocal rank fusion.

## Ranking

Reciprocal rank fusion combines BM25 and dense vectors.

```python
results = idx.search("leather boots", limit=10)
for hit in results:
    print(hit.uid, hit.score)
```

```javascript
const results = await idx.search("leather boots");
```
""",
}
_SHARED: dict[str, Any] = {}


def write_tree(root: Path, files: dict[str, str]) -> Path:
    """Write ``files`` (relative path -> text) under ``root``; returns ``root``."""
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    return root


def docs_site(factory: pytest.TempPathFactory) -> Path:
    """The demo docs site (:data:`DOCS`) on disk, written once: its ``mkdocs.yml``."""
    if "site" not in _SHARED:
        _SHARED["site"] = write_tree(factory.mktemp("docs-site"), DOCS) / "mkdocs.yml"
    return _SHARED["site"]


def docs_batch(factory: pytest.TempPathFactory) -> Any:
    from cogitave.ingest.docs import read_docs as read_markdown

    if "batch" not in _SHARED:
        _SHARED["batch"] = read_markdown(docs_site(factory))
    return _SHARED["batch"]


def docs_collection(factory: pytest.TempPathFactory) -> Collection:
    """The shared read-only collection (pages, sections, code samples, edges), built once."""
    if "col" not in _SHARED:
        batch = docs_batch(factory)
        col = Collection.create(factory.mktemp("docs-col") / "col", batch.schema)
        col.add(batch.nodes)
        col.publish()
        _SHARED["col"] = col
    return _SHARED["col"]


def sharded_docs_collection(factory: pytest.TempPathFactory, shards: int = 2) -> Path:
    """The same docs as a sharded collection (shards in this process), built once."""
    from cogitave.distributed.build import build_sharded
    from cogitave.expand.embed import DEFAULT_ENCODER

    key = f"sharded-{shards}"
    if key not in _SHARED:
        batch = docs_batch(factory)
        path = factory.mktemp("docs-sharded") / "col"
        build_sharded(path, batch.nodes, batch.schema, shards=shards, encoder=DEFAULT_ENCODER)
        _SHARED[key] = path
    return _SHARED[key]


def sharded(path: Path) -> ShardedCollection:
    return ShardedCollection.open(path)


# -- the command line -------------------------------------------------------------------------
@dataclass(frozen=True)
class CliResult:
    """What one command printed and its exit status."""

    returncode: int
    stdout: str
    stderr: str


def run_cli(*args: str, ok: bool = True) -> CliResult:
    """``cogitave ARGS`` in this process (as ``main()`` runs it: one-line errors, exit
    codes); ``ok`` asserts it exited 0."""
    from cogitave.surfaces import cli

    out, err = io.StringIO(), io.StringIO()
    code = 0
    argv = sys.argv
    sys.argv = ["cogitave", *args]
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            cli.main()
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    finally:
        sys.argv = argv
    res = CliResult(code, out.getvalue(), err.getvalue())
    if ok:
        assert code == 0, res.stderr
    return res


def cli_process(
    *args: str, ok: bool = True, timeout: float = 120, command: Sequence[str] = CLI
) -> CliResult:
    """``cogitave ARGS`` as a process of its own (the entry point itself, servers, watches,
    signals); ``command`` is ``python -m cogitave.surfaces.cli`` unless given."""
    proc = subprocess.run([*command, *args], capture_output=True, text=True, timeout=timeout)
    if ok:
        assert proc.returncode == 0, proc.stderr
    return CliResult(proc.returncode, proc.stdout, proc.stderr)


# -- MCP and HTTP -----------------------------------------------------------------------------
def mcp_calls(reader: Reader, *batch: tuple[str, dict[str, Any]], mode: str = "auto") -> list[Any]:
    """Run tool calls through the SDK's in-memory client; returns their results in order."""
    from cogitave.surfaces.mcp import build_mcp

    async def run() -> list[Any]:
        async with Client(build_mcp(reader), mode=mode) as client:  # type: ignore[arg-type]
            return [await client.call_tool(name, args) for name, args in batch]

    return anyio.run(run)


def mcp_call(reader: Reader, name: str, args: dict[str, Any]) -> CallToolResult:
    """One tool call through the SDK's in-memory client."""
    return mcp_calls(reader, (name, args))[0]


def mcp_text(res: CallToolResult) -> str:
    return "".join(getattr(c, "text", "") for c in res.content)


def http_error(resp: Any, status: int, code: str | None = None) -> dict[str, Any]:
    """Assert the common HTTP error shape; return the error object."""
    assert resp.status_code == status, resp.text
    body = resp.json()
    assert set(body) == {"error"}
    err = body["error"]
    assert isinstance(err["message"], str) and err["message"]
    if code is not None:
        assert err["code"] == code, err
    return err


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])
