"""docs_search on a collection built here: a hit whose page's best node is not the one that
holds the code draws on its page's other matches, within the budget, never inside a fence."""

from __future__ import annotations

from pathlib import Path

import pytest

from cogitave.collection import Collection
from cogitave.ingest.docs import read_docs
from cogitave.service.args import SearchArgs
from cogitave.service.ops import docs_search
from cogitave.service.render import blocks, estimate_tokens

PROSE = "\n\n".join(
    f"Paragraph {i}: to hand out access tokens, hash each user password first and keep the "
    f"hashed password apart from the users table, then sign the access tokens for users ({i})."
    for i in range(40)
)
CODE = "\n".join(
    [
        "import jwt",
        "",
        "# the access token a user is handed",
        "def issue(claims: dict, key: str) -> str:",
        '    """One signed value."""',
        '    return jwt.encode(claims, key, algorithm="HS256")',
    ]
)
SITE = {
    "mkdocs.yml": "site_name: T\nsite_url: https://t.dev/\nnav:\n  - auth.md\n  - other.md\n",
    "docs/auth.md": f"# Security\n\n{PROSE}\n\n## Sign\n\nLike this:\n\n```python\n{CODE}\n```\n",
    "docs/other.md": "# Other\n\nNothing about the subject here, only a user or two.\n",
}
QUERY = "hash user passwords and hand out access tokens"


@pytest.fixture(scope="module")
def col(tmp_path_factory: pytest.TempPathFactory) -> Collection:
    site = tmp_path_factory.mktemp("site")
    for rel, text in SITE.items():
        (site / rel).parent.mkdir(parents=True, exist_ok=True)
        (site / rel).write_text(text, encoding="utf-8")
    batch = read_docs(site / "mkdocs.yml")
    c = Collection.create(Path(tmp_path_factory.mktemp("col")) / "col", batch.schema)
    c.add(list(batch.nodes))
    c.publish()
    return c


def _search(col: Collection, max_tokens: int) -> tuple[str, list[str], tuple[str, ...]]:
    ans = docs_search(
        col, SearchArgs(query=QUERY, mode="bm25", group_by_page=True, max_tokens=max_tokens)
    )
    top = ans.results[0]
    return ans.markdown, [h.uid for h in ans.results], top.group or ()


def test_the_page_wins_and_its_code_sample_is_shown(col: Collection) -> None:
    text, uids, group = _search(col, 600)
    assert uids[0] == "auth"  # the page node leads ...
    assert any(g.startswith("auth#code") for g in group)  # ... its code sample matched too
    assert "jwt.encode(claims, key" in text
    assert f"```python\n{CODE}\n```" in text  # the fence whole


@pytest.mark.parametrize("max_tokens", [100, 150, 250, 400, 600, 1000, 2000])
def test_the_budget_holds_and_no_fence_is_cut(col: Collection, max_tokens: int) -> None:
    text, _, _ = _search(col, max_tokens)
    assert estimate_tokens(text) <= max_tokens
    assert all(b.count("```") % 2 == 0 for b in blocks(text))
    assert text.count("```") % 2 == 0
