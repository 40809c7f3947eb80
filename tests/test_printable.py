"""Text from outside made safe to show: control characters escaped, length bounded."""

from __future__ import annotations

from cogitave.printable import is_printable_text, printable


def test_terminal_escapes_become_visible() -> None:
    shown = printable("kit\x1b[2J\x1b]8;;file:///etc\x07\r\u202egnp.exe\x00")
    assert shown == "kit\\x1b[2J\\x1b]8;;file:///etc\\x07\\x0d\\u202egnp.exe\\x00"
    assert is_printable_text(shown) and not is_printable_text("a\x1bb")


def test_long_text_is_cut_with_a_marker() -> None:
    assert printable("x" * 5_000_000, 10) == "xxxxxxxxxx… (4999990 more characters)"
    assert printable("plain text, ünïcode ok") == "plain text, ünïcode ok"
    assert printable(42) == "42"
