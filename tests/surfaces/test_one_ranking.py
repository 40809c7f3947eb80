"""One ranking: the Python API, the CLI, REST, GraphQL and MCP return the same uids in order.

Also home of the small MkDocs collection every surface test shares (built once per session).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from fastapi.testclient import TestClient
from mcp import Client

from cogitave.collection import Collection
from cogitave.ingest.docs import read_docs as read_markdown
from cogitave.query.types import SearchRequest
from cogitave.surfaces.http import create_app
from cogitave.surfaces.mcp import build_mcp

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
QUERIES = (
    "install with pip",
    "reciprocal rank fusion",
    "configuraton file tokenizer",  # misspelled on purpose
    "index a folder of documents",
    "how do I search the index",
    "print the score of each hit",
)
_SHARED: dict[str, Collection] = {}


def docs_collection(factory: pytest.TempPathFactory) -> Collection:
    """The shared read-only collection (pages, sections, code samples, edges), built once."""
    if "col" not in _SHARED:
        site = factory.mktemp("docs-site")
        for rel, text in DOCS.items():
            (site / rel).parent.mkdir(parents=True, exist_ok=True)
            (site / rel).write_text(text, encoding="utf-8")
        batch = read_markdown(site / "mkdocs.yml")
        col = Collection.create(factory.mktemp("docs-col") / "col", batch.schema)
        col.add(batch.nodes)
        col.publish()
        _SHARED["col"] = col
    return _SHARED["col"]


@pytest.fixture(scope="module")
def col(tmp_path_factory: pytest.TempPathFactory) -> Collection:
    return docs_collection(tmp_path_factory)


def cli_rankings(path: Path, queries: tuple[str, ...], limit: int) -> dict[str, list[str]]:
    """``cogitave search --json`` for each query, one process per CPU at a time."""
    out: dict[str, list[str]] = {}
    width = max(1, os.cpu_count() or 1)
    for i in range(0, len(queries), width):
        procs = {
            q: subprocess.Popen(
                [*CLI, "search", q, "--collection", str(path), "--limit", str(limit), "--json"],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for q in queries[i : i + width]
        }
        for q, p in procs.items():
            stdout, stderr = p.communicate(timeout=120)
            assert p.returncode == 0, stderr
            out[q] = [r["uid"] for r in json.loads(stdout)["results"]]
    return out


async def mcp_rankings(col: Collection, queries: tuple[str, ...], limit: int) -> dict[str, Any]:
    out = {}
    async with Client(build_mcp(col)) as client:
        for q in queries:
            res = await client.call_tool("docs_search", {"query": q, "limit": limit})
            assert not res.is_error, res.content
            out[q] = [r["uid"] for r in res.structured_content["results"]]
    return out


def test_every_surface_returns_the_same_ranking(col: Collection) -> None:
    limit = 10
    python = {q: col.search(SearchRequest(query=q, limit=limit)).uids for q in QUERIES}
    # docs_search groups by page; REST gives the same grouping when asked for it
    grouped = {
        q: col.search(SearchRequest(query=q, limit=limit, group_by_page=True)).uids for q in QUERIES
    }
    cli = cli_rankings(col.store.path, QUERIES, limit)
    with TestClient(create_app(col), base_url=BASE_URL) as client:
        rest = {
            q: [
                r["uid"]
                for r in client.post("/search", json={"query": q, "limit": limit}).json()["results"]
            ]
            for q in QUERIES
        }
        rest_grouped = {
            q: [
                r["uid"]
                for r in client.post(
                    "/search", json={"query": q, "limit": limit, "group_by_page": True}
                ).json()["results"]
            ]
            for q in QUERIES
        }
        gql = {}
        for q in QUERIES:
            body = client.post(
                "/graphql",
                json={
                    "query": "query($q: String!, $n: Int!) { search(query: $q, limit: $n) "
                    "{ results { uid } } }",
                    "variables": {"q": q, "n": limit},
                },
            ).json()
            assert "errors" not in body, body
            gql[q] = [r["uid"] for r in body["data"]["search"]["results"]]
    mcp = anyio.run(mcp_rankings, col, QUERIES, limit)
    for q in QUERIES:
        assert python[q], f"no results for {q!r}"
        assert cli[q] == python[q], q
        assert rest[q] == python[q], q
        assert gql[q] == python[q], q
        assert mcp[q] == grouped[q] == rest_grouped[q], q


def test_the_same_ranking_with_filters_and_offset(col: Collection) -> None:
    body = {"query": "python code", "limit": 3, "offset": 1, "mode": "bm25"}
    body["filters"] = {"kind": ["code_sample", "section"]}
    python = col.search(SearchRequest.from_dict(body)).uids
    with TestClient(create_app(col), base_url=BASE_URL) as client:
        rest = [r["uid"] for r in client.post("/search", json=body).json()["results"]]
    assert rest == python
