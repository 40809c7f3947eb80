"""One Markdown table shape for every reader (RST, crawled HTML, HTML tables in Markdown)."""

from __future__ import annotations

from cogitave.ingest.tables import markdown_table


def test_rows_become_one_table_padded_and_escaped() -> None:
    rows = [["name", "type"], ["a|b", "int\nor none"], ["", ""], ["only"]]
    assert markdown_table(rows) == (
        "| name | type |\n|---|---|\n| a\\|b | int or none |\n| only |  |"
    )


def test_no_text_is_no_table() -> None:
    assert markdown_table([]) == ""
    assert markdown_table([[" ", ""], []]) == ""
