"""Text from outside made safe to show: control characters escaped, length bounded.

A string read from a file someone else wrote (a pack's library name, source or commit, a
project's lockfile) may hold ANSI escape sequences, carriage returns or bidirectional
overrides that rewrite what a terminal shows, and may be megabytes long. :func:`printable` is
what such a string goes through before it reaches a terminal, a log or a report: every
control character (C0, DEL, C1), every bidirectional formatting character and every other
non-printable code point becomes a visible escape (``\\x1b``, ``\\u202e``), and the result is
cut to a bound with a marker saying how much was left out.
"""

from __future__ import annotations

MAX_SHOWN = 300
"""Characters shown of one string by default."""


def is_printable_text(text: str) -> bool:
    """True when ``text`` holds nothing :func:`printable` would escape."""
    return all(_plain(c) for c in text)


def printable(text: object, limit: int = MAX_SHOWN) -> str:
    """``text`` (``str()`` of anything else) with every control, format or unassigned
    character escaped, cut to at most ``limit`` characters of the original plus a marker."""
    s = text if isinstance(text, str) else str(text)
    cut = len(s) > limit
    head = s[:limit] if cut else s
    out = "".join(c if _plain(c) else _escape(c) for c in head)
    if cut:
        out += f"… ({len(s) - limit} more characters)"
    return out


def _plain(c: str) -> bool:
    # str.isprintable is False for the controls, format characters (bidirectional
    # overrides among them), separators other than the space, surrogates and unassigned
    return c.isprintable()


def _escape(c: str) -> str:
    n = ord(c)
    if n < 0x100:
        return f"\\x{n:02x}"
    if n < 0x10000:
        return f"\\u{n:04x}"
    return f"\\U{n:08x}"
