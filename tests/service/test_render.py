"""The Markdown answer of a search: the budget shared by the hits, each cut to the blocks
that answer the query, never past the budget, never inside a code fence."""

from __future__ import annotations

import re
from dataclasses import replace

import pytest

from cogitave.nodes import Node
from cogitave.query.types import Hit
from cogitave.service.render import blocks, estimate_tokens, search_markdown

FILLER = " ".join(["Background prose about the framework and its history."] * 12)


def section(i: int, answer: str) -> tuple[Hit, Node]:
    content = "\n\n".join(
        [
            f"# Section {i}",
            FILLER,
            f"## Detail {i}",
            answer,
            "```python\nrows = session.get(Item, item_id)\n```" if i % 2 else FILLER,
            FILLER,
        ]
    )
    hit = Hit(uid=f"p{i}", rank=i + 1, score=1.0 / (i + 1.2), kind="section",
              title=f"Section {i}", snippet="", url=f"https://d.dev/p{i}/")  # fmt: skip
    return hit, Node(uid=f"p{i}", kind="section", dims={"title": f"Section {i}"}, content=content)


ENTRIES = [
    section(i, f"To read one row by id call session.get and raise 404 ({i}).") for i in range(10)
]


def test_the_budget_is_shared_by_the_hits() -> None:
    text, cut = search_markdown("read one row by id and return 404", ENTRIES, 2000)
    assert cut.shown >= 4 and estimate_tokens(text) <= 2000
    heads = re.findall(r"^## (.*)$", text, flags=re.M)
    assert heads[:4] == ["Section 0", "Section 1", "Section 2", "Section 3"]
    # each shown hit has its answering paragraph, and says where to read the rest
    for i in range(cut.shown):
        assert f"raise 404 ({i})" in text
    assert text.count("more: docs_fetch https://d.dev/p") >= cut.shown - 1
    assert "```python\nrows = session.get(Item, item_id)\n```" in text  # a fence whole


def test_the_headings_inside_a_hit_sit_below_the_hits() -> None:
    text, _ = search_markdown("detail", ENTRIES[:2], 2000)
    assert "### Detail 0" in text and "\n## Detail" not in text


def test_a_clear_leader_may_take_more() -> None:
    lead = [(replace(ENTRIES[0][0], score=10.0), ENTRIES[0][1])]
    _, alone = search_markdown("background framework history", lead + ENTRIES[1:], 2000)
    _, even = search_markdown("background framework history", ENTRIES, 2000)
    assert alone.shown <= even.shown


def test_no_answer_passes_its_budget_or_breaks_a_fence() -> None:
    for budget in (100, 160, 300, 700, 2000, 6000):
        text, cut = search_markdown("session get 404", ENTRIES, budget)
        assert estimate_tokens(text) <= budget, budget
        assert all(b.count("```") % 2 == 0 for b in blocks(text))
        assert cut.max_tokens == budget


def _one(content: str) -> list[tuple[Hit, Node]]:
    hit = Hit(uid="p", rank=1, score=1.0, kind="section", title="Page", snippet="",
              url="https://d.dev/p/")  # fmt: skip
    return [(hit, Node(uid="p", kind="section", dims={"title": "Page"}, content=content))]


def test_a_word_rare_in_the_hit_brings_its_subsection_and_code() -> None:
    common = "\n\n".join(
        f"A path parameter is declared in the path, example {i}." for i in range(12)
    )
    content = "\n\n".join(
        [
            "# Path parameters",
            common,
            "## Numbers: greater than",
            "Constraints on numbers.",
            "It is written as follows:",
            "```python\nitem_id: Annotated[int, Path(gt=0)]\n```",
            common,
        ]
    )
    text, cut = search_markdown("a path parameter greater than zero", _one(content), 300)
    assert "Path(gt=0)" in text  # under the heading with "greater", led in by its prose
    assert cut.omitted_blocks > 0


def test_a_large_table_keeps_its_header_and_the_rows_that_answer() -> None:
    rows = [f"| `--flag{i}` | Option number {i} of the command |" for i in range(40)]
    rows[17] = "| `--strictPort` | Exit if the port is already in use |"
    table = "\n".join(["| Options | |", "| --- | --- |", *rows])
    text, cut = search_markdown("fail when the port is in use", _one(table), 300)
    assert "| Options | |\n|---|---|\n| `--strictPort` |" in text
    assert "--flag3 " not in text and "| … |" in text and cut.omitted_blocks >= 1


def test_an_admonition_marker_is_never_shown_alone() -> None:
    content = "\n\n".join(["/// note", "Unrelated remark.", "///", "Set the port to 8000."])
    text, _ = search_markdown("port", _one(content), 120)
    assert "Set the port" in text and "///" not in text


def test_a_fragment_link_points_at_the_hits_page() -> None:
    content = (
        "Call [register()](#flask.Blueprint.register) or see [the guide](other.html#x).\n\n"
        "```python\n# [kept](#as-is)\n```"
    )
    hit = Hit(uid="api", rank=1, score=1.0, kind="section", title="API", snippet="",
              url="https://flask.dev/api/#flask.Blueprint")  # fmt: skip
    node = Node(uid="api", kind="section", dims={"title": "API"}, content=content)
    text, _ = search_markdown("register blueprint", [(hit, node)], 2000)
    assert "[register()](https://flask.dev/api/#flask.Blueprint.register)" in text
    assert "[the guide](other.html#x)" in text  # not only a fragment: as it is
    assert "# [kept](#as-is)" in text  # code is never touched


def _grouped(code_lines: int) -> tuple[list[tuple[Hit, Node]], dict[str, list[Node]]]:
    """A page hit whose prose repeats the query and whose code sample (a match of the same
    page, in ``group``) names the fix; a second page after it."""
    prose = "\n\n".join(
        f"Hash each user password, then hand out access tokens to the users ({i})."
        for i in range(30)
    )
    code = "\n".join(["# hand out an access token", "token = jwt.encode(claims, key)"] * code_lines)
    page = Node(uid="auth", kind="page", dims={"title": "Auth"}, content=f"# Auth\n\n{prose}")
    sample = Node(uid="auth#code-1", kind="code_sample", meta={"line": 70},
                  dims={"code": code, "language": "python", "title": "Sign"})  # fmt: skip
    hits = [
        (
            Hit(
                uid="auth",
                rank=1,
                score=1.0,
                kind="page",
                title="Auth",
                snippet="",
                url="https://d.dev/auth/",
                group=("auth#code-1",),
            ),
            page,
        ),
        ENTRIES[1],
    ]
    return hits, {"auth": [sample]}


def test_a_grouped_hit_shows_its_pages_code() -> None:
    entries, groups = _grouped(1)
    query = "hash user passwords and hand out access tokens"
    alone, _ = search_markdown(query, entries, 600)
    text, _ = search_markdown(query, entries, 600, None, lambda h: groups.get(h.uid, []))
    assert "jwt.encode" not in alone and "jwt.encode" in text
    assert "```python\n# hand out an access token\ntoken = jwt.encode(claims, key)\n```" in text


@pytest.mark.parametrize("budget", [100, 160, 250, 400, 700, 1500])
@pytest.mark.parametrize("code_lines", [1, 20, 200])
def test_page_matches_keep_the_budget_and_whole_fences(budget: int, code_lines: int) -> None:
    entries, groups = _grouped(code_lines)
    query = "hash user passwords and hand out access tokens"
    text, cut = search_markdown(query, entries, budget, None, lambda h: groups.get(h.uid, []))
    assert estimate_tokens(text) <= budget and cut.tokens <= budget
    assert text.count("```") % 2 == 0 and all(b.count("```") % 2 == 0 for b in blocks(text))
