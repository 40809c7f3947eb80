"""Answers an MCP client can use as they come: Markdown hits within a token budget, docs_fetch
with continuation, absolute URLs; the same over stdio, REST, GraphQL and the CLI."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import anyio
import pytest
from fastapi.testclient import TestClient
from mcp import Client, StdioServerParameters

from cogitave.collection import Collection
from cogitave.ingest.docs import read_docs as read_markdown
from cogitave.nodes import Node
from cogitave.service.render import blocks, estimate_tokens, fence, fit
from cogitave.surfaces.http import create_app
from tests.helpers import BASE_URL, CLI, DOCS, CliResult, mcp_calls, mcp_text, run_cli

SITE = "https://demo.example.org/docs"
LONG = "\n\n".join(
    f"Paragraph {i} about rate limiting and request quotas, with enough words to count." * 3
    for i in range(60)
)
SITE_DOCS = {
    **DOCS,
    "mkdocs.yml": f"site_url: {SITE}/\n" + DOCS["mkdocs.yml"] + "    - tutorial/limits.md\n",
    "docs/tutorial/limits.md": "# Limits\n\n"
    + LONG
    + "\n\n## Quota code\n\n```python\nquota = 10\n```\n",
}


def _absolute(nodes: list[Node]) -> list[Node]:
    """URLs under the site_url and breadcrumbs, as the ingest of a site with a base URL
    stores them in node meta (written here so this test depends on the surface alone)."""
    titles = {n.uid: str(n.dims.get("title", "")) for n in nodes}
    out = []
    for n in nodes:
        meta = dict(n.meta)
        if isinstance(meta.get("url"), str) and meta["url"].startswith("/"):
            meta["url"] = SITE + meta["url"]
        page = n.uid.split("#", 1)[0]
        if n.kind == "section":
            meta["breadcrumb"] = [titles.get(page, page), titles[n.uid]]
        elif n.kind == "page":
            meta["breadcrumb"] = [titles[n.uid]]
        out.append(replace(n, meta=meta))
    return out


@pytest.fixture(scope="module")
def col(tmp_path_factory: pytest.TempPathFactory) -> Collection:
    site = tmp_path_factory.mktemp("site")
    for rel, text in SITE_DOCS.items():
        (site / rel).parent.mkdir(parents=True, exist_ok=True)
        (site / rel).write_text(text, encoding="utf-8")
    batch = read_markdown(site / "mkdocs.yml")
    c = Collection.create(tmp_path_factory.mktemp("col") / "col", batch.schema)
    c.add(_absolute(list(batch.nodes)))
    c.publish()
    return c


def balanced(md: str) -> bool:
    """Every fence opened in ``md`` is closed (the cut never lands inside one)."""
    return all(b.count("```") % 2 == 0 for b in blocks(md)) and md.count("```") % 2 == 0


# -- the renderer -------------------------------------------------------------------------------
def test_blocks_keep_fences_whole_and_close_unterminated_ones() -> None:
    md = "# T\n\npara one\nline two\n\n```py\na = 1\n\nb = 2\n```\ntail\n\n~~~\nx"
    assert blocks(md) == [
        "# T",
        "para one\nline two",
        "```py\na = 1\n\nb = 2\n```",
        "tail",
        "~~~\nx\n~~~",
    ]
    assert fence("a ``` b", "md").startswith("````md\n")
    cut = fit(["a" * 40, "b" * 40, "c" * 40], 22)
    assert cut.kept == ["a" * 40, "b" * 40] and cut.omitted == 1
    assert estimate_tokens("x" * 9) == 3


# -- MCP: docs_search and code_sample_search answer Markdown ---------------------------------
def test_docs_search_answers_markdown_with_breadcrumb_url_and_code(col: Collection) -> None:
    (res,) = mcp_calls(col, ("docs_search", {"query": "install with pip", "limit": 5}))
    assert not res.is_error, mcp_text(res)
    md = mcp_text(res)
    # grouped by page: the install page (or its best section) answers, with its absolute URL
    assert "## Installation" in md
    assert f"{SITE}/tutorial/install/" in md
    assert "```bash\npip install demo-package\n```" in md
    assert balanced(md) and estimate_tokens(md) <= 2000
    assert not md.lstrip().startswith("{")  # not JSON
    body = res.structured_content
    assert body["budget"]["max_tokens"] == 2000
    assert 1 <= body["budget"]["shown"] <= len(body["results"])
    assert json.dumps(body, separators=(",", ":")).count(col.root) == 1
    assert all(r["url"].startswith(SITE) for r in body["results"] if r["kind"] != "code_sample")


@pytest.mark.parametrize("max_tokens", [100, 150, 300])
def test_max_tokens_caps_the_answer_at_block_boundaries(col: Collection, max_tokens: int) -> None:
    (res,) = mcp_calls(
        col,
        ("docs_search", {"query": "rate limiting quotas", "limit": 10, "max_tokens": max_tokens}),
    )
    md = mcp_text(res)
    assert estimate_tokens(md) <= max_tokens, (estimate_tokens(md), md)
    assert balanced(md)
    budget = res.structured_content["budget"]
    assert budget["truncated"] and "left out" in md and f"max_tokens={max_tokens}" in md
    assert budget["omitted_blocks"] > 0 or budget["shown"] < budget["hits"]


@pytest.mark.parametrize("bad", [99, 10_001, 0, -5])
def test_max_tokens_is_bounded(col: Collection, bad: int) -> None:
    (res,) = mcp_calls(col, ("docs_search", {"query": "pip", "max_tokens": bad}))
    assert res.is_error


def test_code_sample_search_fences_code_with_its_language(col: Collection) -> None:
    (res,) = mcp_calls(
        col, ("code_sample_search", {"query": "build the wheel", "language": "python"})
    )
    md = mcp_text(res)
    assert "```python\nimport subprocess" in md and balanced(md)
    assert f"{SITE}/tutorial/install/#from-source" in md  # a sample takes its section's URL
    assert res.structured_content["results"][0]["code"].startswith("import subprocess")


# -- docs_fetch --------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "ref",
    [
        f"{SITE}/tutorial/install/",
        "/tutorial/install/",
        "docs/tutorial/install.md",
        "tutorial/install",
        "Installation",
    ],
)
def test_docs_fetch_reads_a_page_by_url_path_uid_or_title(col: Collection, ref: str) -> None:
    (res,) = mcp_calls(col, ("docs_fetch", {"ref": ref}))
    assert not res.is_error, mcp_text(res)
    md = mcp_text(res)
    assert md.startswith("# Installation\n" + f"{SITE}/tutorial/install/")
    assert "## Using pip" in md and "## From source" in md and balanced(md)
    assert res.structured_content["uid"] == "tutorial/install"
    assert res.structured_content["next_offset"] is None


@pytest.mark.parametrize(
    "ref", ["tutorial/install#from-source", f"{SITE}/tutorial/install/#from-source"]
)
def test_docs_fetch_reads_one_section(col: Collection, ref: str) -> None:
    (res,) = mcp_calls(col, ("docs_fetch", {"ref": ref}))
    md = mcp_text(res)
    assert md.startswith("# Installation › From source")
    assert "Clone the repository" in md and "Using pip" not in md


def test_docs_fetch_continues_a_long_page(col: Collection) -> None:
    seen: list[str] = []
    offset: int | None = 0
    parts = 0
    while offset is not None:
        (res,) = mcp_calls(
            col, ("docs_fetch", {"ref": "tutorial/limits", "max_tokens": 500, "offset": offset})
        )
        assert not res.is_error, mcp_text(res)
        md = mcp_text(res)
        assert estimate_tokens(md) <= 500 and balanced(md)
        body = res.structured_content
        nxt = body["next_offset"]
        if nxt is not None:
            assert f"offset={nxt}" in md and nxt > offset
        seen.extend(b for b in blocks(md)[1:] if not b.startswith("_Continued"))
        offset = nxt
        parts += 1
    assert parts >= 4
    assert seen[0].startswith("Paragraph 0") and seen[-1] == "```python\nquota = 10\n```"
    assert sum(b.startswith("Paragraph") for b in seen) == 60  # every block once


def test_docs_fetch_errors(col: Collection) -> None:
    missing, past = mcp_calls(
        col,
        ("docs_fetch", {"ref": "no/such/page"}),
        ("docs_fetch", {"ref": "tutorial/install", "offset": 999}),
    )
    assert missing.is_error and "not_found" in mcp_text(missing)
    assert past.is_error and "offset" in mcp_text(past)


# -- the other transports and surfaces ---------------------------------------------------------
def test_stdio_markdown_and_fetch(col: Collection) -> None:
    params = StdioServerParameters(
        command=sys.executable,
        args=[*CLI[1:], "mcp", "--collection", str(col.store.path)],
        env=dict(os.environ),
    )

    async def run() -> Any:
        async with Client(params) as client:
            s = await client.call_tool(
                "docs_search", {"query": "install with pip", "max_tokens": 300}
            )
            f = await client.call_tool("docs_fetch", {"ref": f"{SITE}/tutorial/install/#using-pip"})
            return s, f

    s, f = anyio.run(run)
    assert "## Installation" in mcp_text(s) and estimate_tokens(mcp_text(s)) <= 300
    fetched = mcp_text(f)
    assert fetched.startswith("# Installation › Using pip")
    assert "pip install demo-package" in fetched


@pytest.fixture(scope="module")
def client(col: Collection) -> Iterator[TestClient]:
    with TestClient(create_app(col), base_url=BASE_URL) as c:
        yield c


def test_rest_markdown_search_and_fetch(client: TestClient) -> None:
    r = client.post(
        "/search",
        params={"format": "markdown", "max_tokens": 300},
        json={"query": "install with pip"},
    )
    assert r.headers["content-type"].startswith("text/markdown")
    assert "## Installation" in r.text and estimate_tokens(r.text) <= 300
    j = client.get(
        "/fetch", params={"ref": "tutorial/limits", "max_tokens": 400, "offset": 3}
    ).json()
    assert j["offset"] == 3 and j["next_offset"] > 3 and j["url"] == f"{SITE}/tutorial/limits/"
    m = client.get("/fetch", params={"ref": f"{SITE}/tutorial/install/", "format": "markdown"})
    assert m.text.startswith("# Installation") and m.headers["content-type"].startswith(
        "text/markdown"
    )
    assert client.get("/fetch", params={"ref": "nope/nope"}).json()["error"]["code"] == "not_found"
    assert (
        client.get("/fetch", params={"ref": "tutorial/install", "max_tokens": 5}).status_code == 400
    )


def test_graphql_markdown_search_and_fetch(client: TestClient) -> None:
    q = """query($r: String!) {
      searchMarkdown(query: "install with pip", maxTokens: 300) {
        markdown budget { tokens truncated }
      }
      fetch(ref: $r, maxTokens: 400) { uid markdown nextOffset }
    }"""
    data = client.post("/graphql", json={"query": q, "variables": {"r": "tutorial/limits"}}).json()[
        "data"
    ]
    assert "## Installation" in data["searchMarkdown"]["markdown"]
    assert data["searchMarkdown"]["budget"]["tokens"] <= 300
    assert data["fetch"]["uid"] == "tutorial/limits" and data["fetch"]["nextOffset"] > 0


def _cli(col: Collection, *args: str) -> CliResult:
    return run_cli(
        "search", "install with pip", "--collection", str(col.store.path), *args, ok=False
    )


def test_cli_formats(col: Collection) -> None:
    t = _cli(col, "--limit", "3", "--no-group-by-page")
    assert t.returncode == 0, t.stderr
    assert (
        "Installation › Using pip" in t.stdout and f"{SITE}/tutorial/install/#using-pip" in t.stdout
    )
    j = _cli(col, "--limit", "3", "--format", "json")
    assert json.loads(j.stdout)["results"][0]["uid"]
    alias = json.loads(_cli(col, "--limit", "3", "--json").stdout)
    assert alias["results"] == json.loads(j.stdout)["results"]
    m = _cli(col, "--limit", "3", "--format", "markdown", "--max-tokens", "200")
    assert "```bash" in m.stdout and estimate_tokens(m.stdout.strip()) <= 200
    bad = _cli(col, "--format", "yaml")
    assert bad.returncode == 2 and bad.stderr.startswith("error[")
