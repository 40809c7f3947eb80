"""Path patterns -> linear-time matchers (config excludes, Hugo page matchers, gitignore lines,
VitePress rewrites): the syntax, agreement with a regex reference and with pathspec on small
inputs, and work linear in the name for patterns that make a backtracking regex run for
ever (the matcher's steps counted, not timed)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pathspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cogitave.errors import IngestError
from cogitave.ingest.docs import read_docs
from cogitave.ingest.globs import GitIgnore, GlobError, Matcher, compile_glob, compile_route
from tests.ingest.helpers import write

HOSTILE = "**a**a**a**a**a**a**a**a**a**a**b"  # ten `**a`: exponential for a regex
LONG_NAME = "a" * 100


def test_stars_classes_and_braces() -> None:
    def m(pattern: str, path: str, ignore_case: bool = False) -> bool:
        return compile_glob(pattern, ignore_case=ignore_case).fullmatch(path)

    assert m("*.md", "a.md") and not m("*.md", "x/a.md")
    assert m("**/a.md", "a.md") and m("**/a.md", "x/y/a.md")
    assert m("x/**", "x/y/z.md") and m("?.md", "a.md") and not m("?.md", "ab.md")
    assert m("[!_]*.md", "a.md") and not m("[!_]*.md", "_a.md")
    assert m("{/docs,/blog/**}", "/docs") and m("{/docs,/blog/**}", "/blog/a/b")
    assert not m("{/docs,/blog/**}", "/docs/a")
    assert m("a,b{c", "a,b{c")  # a comma outside braces and a lone brace are themselves
    assert m("/Docs/**", "/docs/a", ignore_case=True)
    assert m("[a-c]x", "bx") and not m("[a-c]x", "dx")


@pytest.mark.parametrize("pattern", ["[z-a].rst", "a{b{c}", "[]", "[!]"])
def test_a_pattern_that_cannot_be_read_is_an_error_not_a_traceback(pattern: str) -> None:
    with pytest.raises(GlobError):
        compile_glob(pattern)


@pytest.fixture
def steps(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The matchers' steps from now on: closures, character tests and Pike VM thread adds."""
    counted: list[int] = []
    for name in ("_closure", "_char", "_add"):
        real = getattr(Matcher, name)

        def step(*a: Any, _real: Any = real, **kw: Any) -> Any:
            counted.append(1)
            return _real(*a, **kw)

        monkeypatch.setattr(Matcher, name, step)
    return counted


def test_hostile_patterns_take_linear_work(steps: list[int]) -> None:
    def hostile(name: str) -> int:
        steps.clear()
        assert not compile_glob(HOSTILE).fullmatch(name)
        assert not compile_glob(HOSTILE).fullmatch(name + ".rst")
        assert not GitIgnore([HOSTILE, "*a*a*a*a*a*a*a*a*a*a*b"]).match_file(name)
        route = "".join(f":p{k}*a" for k in range(10)) + "b"
        assert compile_route(route).groups(name) is None
        return len(steps)

    one, two = hostile(LONG_NAME), hostile(LONG_NAME * 2)
    assert one > 0 and two <= 2.2 * one, (one, two)  # twice the name, twice the work


def test_sphinx_exclude_patterns_cannot_hang_a_read(tmp_path: Path, steps: list[int]) -> None:
    def read(name: str) -> int:
        root = tmp_path / str(len(name))
        write(root, "conf.py", f"exclude_patterns = [{HOSTILE!r}]\n")
        write(root, "index.rst", "Home\n====\n\nText.\n")
        write(root, f"{name}.rst", "Long\n====\n\nText.\n")
        steps.clear()
        batch = read_docs(root)
        assert {n.uid for n in batch.nodes if n.kind == "page"} == {"index", name}
        return len(steps)

    one, two = read(LONG_NAME), read(LONG_NAME * 2)
    assert one > 0 and two <= 2.2 * one, (one, two)


def test_an_invalid_config_pattern_names_the_file_and_the_pattern(tmp_path: Path) -> None:
    write(tmp_path, "conf.py", 'exclude_patterns = ["[z-a].rst"]\n')
    write(tmp_path, "index.rst", "Home\n====\n")
    with pytest.raises(IngestError) as err:
        read_docs(tmp_path)
    assert "conf.py: exclude_patterns" in err.value.message
    assert "'[z-a].rst'" in err.value.message and "\n" not in err.value.message
    site = tmp_path / "mk"
    write(site, "mkdocs.yml", "site_name: x\nexclude_docs: |\n  [z-a].md\n")
    write(site, "docs/index.md", "# Home\n")
    with pytest.raises(IngestError, match=r"mkdocs\.yml: exclude_docs: .*\[z-a\]"):
        read_docs(site)


# -- agreement with references on small inputs --------------------------------------------------
def reference_glob(pattern: str) -> re.Pattern[str]:
    """The regex translation the globs had before (correct, but backtracking)."""
    out, i, depth = [], 0, 0
    while i < len(pattern):
        c = pattern[i]
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
            continue
        if pattern.startswith("**", i):
            out.append(".*")
            i += 2
            continue
        if c == "[" and (end := pattern.find("]", i + 1)) > i:
            body = pattern[i + 1 : end]
            out.append("[" + ("^" + body[1:] if body.startswith("!") else body) + "]")
            i = end + 1
            continue
        if c == "{" and "}" in pattern[i + 1 :]:
            depth += 1
            out.append("(?:")
        elif c == "}" and depth:
            depth -= 1
            out.append(")")
        elif c == "," and depth:
            out.append("|")
        else:
            out.append({"*": "[^/]*", "?": "[^/]"}.get(c) or re.escape(c))
        i += 1
    return re.compile("".join(out))


GLOB_TOKENS = ["a", "b", "/", "*", "**", "**/", "?", "[ab]", "[!a]", "[a-b]", "{", "}", ","]
PATHS = st.text("ab/", max_size=7)


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(GLOB_TOKENS), max_size=6), st.lists(PATHS, max_size=8))
def test_globs_agree_with_the_regex_reference(tokens: list[str], paths: list[str]) -> None:
    pattern = "".join(tokens)
    try:
        reference = reference_glob(pattern)
    except re.error:
        with pytest.raises(GlobError):
            compile_glob(pattern)
        return
    matcher = compile_glob(pattern)
    for path in paths:
        assert matcher.fullmatch(path) == (reference.fullmatch(path) is not None), path


GITIGNORE_TOKENS = ["a", "b", "/", "*", "**", "?", "[ab]", "[!a]", "!", "\\a", "#", " "]
FILES = st.lists(st.sampled_from(["a", "b", "ab", "ba", "aa"]), min_size=1, max_size=4).map(
    "/".join
)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.lists(st.sampled_from(GITIGNORE_TOKENS), max_size=5).map("".join), max_size=3),
    st.lists(FILES, max_size=8),
)
def test_gitignore_agrees_with_pathspec(lines: list[str], files: list[str]) -> None:
    try:
        theirs = pathspec.GitIgnoreSpec.from_lines(lines)
    except ValueError:  # a pattern with nothing in it, as `!`
        with pytest.raises(GlobError):
            GitIgnore(lines)
        return
    ours = GitIgnore(lines)
    for file in files:
        assert ours.match_file(file) == theirs.match_file(file), file


def reference_route(source: str) -> re.Pattern[str]:
    parts, at = [], 0
    kinds = {"": "[^/]+", "?": "[^/]*", "*": ".*", "+": ".+"}
    for m in re.finditer(r":([A-Za-z_]\w*)([*+?]?)", source):
        parts.append(re.escape(source[at : m.start()]))
        parts.append(f"(?P<{m.group(1)}>{kinds[m.group(2)]})")
        at = m.end()
    parts.append(re.escape(source[at:]))
    return re.compile("".join(parts))


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.sampled_from(["a", "/", ".", ":x", ":y*", ":z+", ":w?"]), max_size=5, unique=True),
    st.lists(st.text("ab/.", max_size=7), max_size=8),
)
def test_routes_agree_with_the_regex_reference(tokens: list[str], paths: list[str]) -> None:
    source = "".join(tokens)
    try:
        reference = reference_route(source)
    except re.error:
        return
    route = compile_route(source)
    for path in paths:
        m = reference.fullmatch(path)
        assert route.groups(path) == (m.groupdict() if m else None), path
