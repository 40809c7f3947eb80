"""Rows of cell texts -> one Markdown table, the one shape every reader writes.

The first row is the header; short rows are padded to the widest; a row with no text is
dropped; a cell's line breaks become spaces and its pipes are escaped, so a cell never breaks
the table. The rule is ``|---|`` per column (no alignment padding: it costs tokens and says
nothing)."""

from __future__ import annotations

from collections.abc import Sequence


def markdown_table(rows: Sequence[Sequence[str]]) -> str:
    """The Markdown table of ``rows`` (empty when no row has text)."""
    cells = [[_cell(c) for c in row] for row in rows]
    cells = [row for row in cells if any(row)]
    if not cells:
        return ""
    width = max(len(r) for r in cells)
    cells = [r + [""] * (width - len(r)) for r in cells]
    lines = ["| " + " | ".join(cells[0]) + " |", "|" + "---|" * width]
    lines += ["| " + " | ".join(r) + " |" for r in cells[1:]]
    return "\n".join(lines)


def _cell(text: str) -> str:
    return text.replace("\n", " ").replace("|", "\\|").strip()
