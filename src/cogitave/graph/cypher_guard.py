"""query_graph stage 0, the lexical guard: query text -> the text the grammar parses.

Size, comments, string literals, write/procedure keywords (named, with line and column), ASCII
outside strings, bracket nesting; every violation is a :class:`QueryGraphError`.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Any

from cogitave.errors import QueryGraphError

MAX_QUERY_CHARS = 4000
MAX_NESTING = 16

WRITE_KEYWORDS = frozenset(
    {
        "CREATE",
        "MERGE",
        "SET",
        "DELETE",
        "DETACH",
        "NODETACH",
        "REMOVE",
        "INSERT",
        "DROP",
        "CALL",
        "LOAD",
        "FOREACH",
        "UNWIND",
        "ALTER",
        "RENAME",
        "GRANT",
        "DENY",
        "REVOKE",
    }
)
_SCHEMA_OBJECTS = frozenset({"INDEX", "CONSTRAINT", "DATABASE", "ALIAS", "USER", "ROLE"})
_PROCEDURE_NAMESPACES = frozenset({"APOC", "DBMS", "DB", "GDS"})
_WORD = re.compile(r"[^\W\d]\w*")
_READ_ONLY_HINT = (
    "query_graph is read-only: use MATCH / OPTIONAL MATCH ... WHERE ... RETURN with "
    "ORDER BY / SKIP / LIMIT"
)


# -- stage 0: lexical guard -------------------------------------------------------------------
def _line_col(text: str, pos: int) -> tuple[int, int]:
    line = text.count("\n", 0, pos) + 1
    return line, pos - (text.rfind("\n", 0, pos) + 1) + 1


def scan(text: str) -> tuple[str, str]:
    """``(parse_text, code_text)``: comments blanked (newlines kept), and additionally the
    insides of string literals blanked. Positions are unchanged in both."""
    parse_out: list[str] = []
    code_out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        two = text[i : i + 2]
        if two == "//":
            j = text.find("\n", i)
            j = n if j < 0 else j
            blank = " " * (j - i)
            parse_out.append(blank)
            code_out.append(blank)
            i = j
        elif two == "/*":
            j = text.find("*/", i + 2)
            if j < 0:
                line, col = _line_col(text, i)
                raise QueryGraphError(
                    "syntax", f"unterminated /* comment at line {line}, column {col}"
                )
            blank = "".join("\n" if ch == "\n" else " " for ch in text[i : j + 2])
            parse_out.append(blank)
            code_out.append(blank)
            i = j + 2
        elif c in "'\"":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            if j >= n:
                line, col = _line_col(text, i)
                raise QueryGraphError(
                    "syntax", f"unterminated string literal at line {line}, column {col}"
                )
            parse_out.append(text[i : j + 1])
            inner = "".join("\n" if ch == "\n" else " " for ch in text[i + 1 : j])
            code_out.append(c + inner + c)
            i = j + 1
        else:
            parse_out.append(c)
            code_out.append(c)
            i += 1
    return "".join(parse_out), "".join(code_out)


def _write_keyword(code: str) -> tuple[str, int] | None:
    """The first write/procedure keyword in ``code`` (NFKC-normalised) and its position."""
    chars: list[str] = []
    origin: list[int] = []  # position in ``code`` of each normalised character
    for pos, ch in enumerate(code):
        folded = unicodedata.normalize("NFKC", ch) if ord(ch) > 127 else ch
        chars.append(folded)
        origin.extend([pos] * len(folded))
    norm = "".join(chars)
    words = [(m.group().upper(), m.start(), m.end()) for m in _WORD.finditer(norm)]
    for k, (w, start, end) in enumerate(words):
        before = norm[:start].rstrip()[-1:]
        if before in (".", "$"):
            continue  # a property key or a parameter name, never a clause
        nxt = words[k + 1][0] if k + 1 < len(words) else ""
        after = norm[end:].lstrip()[:1]
        if w in _PROCEDURE_NAMESPACES and after == ".":
            return f"{w.lower()}.* procedures", origin[start]
        if w not in WRITE_KEYWORDS:
            continue
        if w in ("CREATE", "DROP", "ALTER") and nxt in _SCHEMA_OBJECTS:
            return f"{w} {nxt} (schema operation)", origin[start]
        if w == "LOAD" and nxt == "CSV":
            return "LOAD CSV", origin[start]
        if w == "DETACH" and nxt == "DELETE":
            return "DETACH DELETE", origin[start]
        if w == "CALL":
            kw = "CALL {...} subquery" if after == "{" else "CALL (procedure)"
            return kw, origin[start]
        return w, origin[start]
    return None


def guard(text: Any) -> str:
    """Stage 0: size, comments, strings, write keywords, ASCII, nesting. Returns the text the
    grammar parses (comments blanked)."""
    if not isinstance(text, str):
        raise QueryGraphError("syntax", "the query must be a string")
    if len(text) > MAX_QUERY_CHARS:
        raise QueryGraphError(
            "syntax",
            f"query is {len(text)} characters; the maximum is {MAX_QUERY_CHARS}",
            details={"max_chars": MAX_QUERY_CHARS},
        )
    parse_text, code = scan(text)
    found = _write_keyword(code)
    if found:
        kw, pos = found
        line, col = _line_col(code, pos)
        raise QueryGraphError(
            "read_only",
            f"{kw} is not allowed (line {line}, column {col}); {_READ_ONLY_HINT}",
            details={"keyword": kw, "line": line, "column": col},
        )
    for pos, ch in enumerate(code):
        if ord(ch) > 127:
            line, col = _line_col(code, pos)
            raise QueryGraphError(
                "syntax",
                f"non-ASCII character {ch!r} (U+{ord(ch):04X}) at line {line}, column {col} "
                "outside a string literal; keywords, names and labels must be plain ASCII",
                details={"line": line, "column": col},
            )
    depth = deepest = 0
    for ch in code:
        if ch in "([{":
            depth += 1
            deepest = max(deepest, depth)
        elif ch in ")]}":
            depth -= 1
    if deepest > MAX_NESTING:
        raise QueryGraphError(
            "syntax", f"brackets nest {deepest} deep; the maximum is {MAX_NESTING}"
        )
    if not code.strip():
        raise QueryGraphError("syntax", "the query is empty; write MATCH (n) RETURN n LIMIT 10")
    return parse_text
