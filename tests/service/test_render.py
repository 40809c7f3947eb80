"""The Markdown answer of a search: the budget shared by the hits, each cut to the blocks
that answer the query, never past the budget, never inside a code fence."""

from __future__ import annotations

import re
from dataclasses import replace

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
