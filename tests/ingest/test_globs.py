"""Path globs -> regexes (config excludes, Hugo page matchers)."""

from __future__ import annotations

import re

from cogitave.ingest.globs import glob_regex


def test_stars_classes_and_braces() -> None:
    def m(pattern: str, path: str, flags: int = 0) -> bool:
        return glob_regex(pattern, flags).fullmatch(path) is not None

    assert m("*.md", "a.md") and not m("*.md", "x/a.md")
    assert m("**/a.md", "a.md") and m("**/a.md", "x/y/a.md")
    assert m("x/**", "x/y/z.md") and m("?.md", "a.md") and not m("?.md", "ab.md")
    assert m("[!_]*.md", "a.md") and not m("[!_]*.md", "_a.md")
    assert m("{/docs,/blog/**}", "/docs") and m("{/docs,/blog/**}", "/blog/a/b")
    assert not m("{/docs,/blog/**}", "/docs/a")
    assert m("a,b{c", "a,b{c")  # a comma outside braces and a lone brace are themselves
    assert m("/Docs/**", "/docs/a", re.IGNORECASE)
