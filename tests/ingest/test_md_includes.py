"""Include directives -> the included text (content of pages and sections)."""

from __future__ import annotations

from cogitave.ingest.docs.includes import (
    expand,
    expand_snippets,
    line_ranges,
    rewrite_links,
    tidy,
)

FILES = {
    "src/app.py": ("\n".join(f"line{n}" for n in range(1, 11)) + "\n", "python"),
    "part.md": ("---\ntitle: Part\n---\nIncluded **text**.\n", "markdown"),
}


def read(path: str) -> tuple[str, str] | None:
    return FILES.get(path.removeprefix("../"))


def test_fastapi_include_fenced_with_line_ranges_and_highlights() -> None:
    md = "Intro\n\n{* ../src/app.py ln[2:3,9] hl[2] *}\n\nAfter"
    out = expand(md, read)
    assert '```python hl_lines="2"\nline2\nline3\n\n# ...\n\nline9\n```' in out
    assert out.startswith("Intro") and out.endswith("After")
    whole = expand("{* src/app.py *}", read)
    assert whole == "```python\n" + FILES["src/app.py"][0].rstrip("\n") + "\n```"


def test_include_inside_a_fence_and_missing_files() -> None:
    out = expand("```toml\n{!> src/app.py !}\n```", read)
    assert out.startswith("```toml\nline1\n") and out.endswith("line10\n```")
    assert expand("{* nope.py *}", read) == "{* nope.py *}"  # unresolvable: kept as written


def test_mkdocs_snippets_inline_block_and_escaped() -> None:
    out = expand_snippets('A\n--8<-- "part.md"\nB\n--8<--\nsrc/app.py\n--8<--\n;--8<-- "x"', read)
    assert "Included **text**." in out and "line10" in out
    assert out.endswith('--8<-- "x"')


def test_hugo_include_and_code_shortcodes() -> None:
    md = (
        '{{% include "part.md" %}}\n{{< code-toggle file=hugo >}}\n[a]\nb = 1\n'
        "{{< /code-toggle >}}\nNew {{< new-in 0.1 >}} thing."
    )
    out = expand(md, read, hugo=True)
    assert out == "Included **text**.\n```toml\n[a]\nb = 1\n```\nNew  thing."
    assert expand('{{< readfile file="part.md" >}}', read, hugo=True) == "Included **text**."


def test_line_ranges_and_tidy() -> None:
    assert line_ranges("1:3, 7, 9:", 10) == [(1, 3), (7, 7), (9, 10)]
    assert tidy("a\n\n\n\nb\n```\n\n\n```") == "a\n\nb\n```\n\n\n```"


def test_rewrite_links_outside_code_only() -> None:
    urls = {"a.md": "https://x.dev/a/", "b.md#c": "https://x.dev/b/#c"}
    md = '[A](a.md) and [B](b.md#c "t") and `[A](a.md)` and [ext](https://e.org)\n```\n[A](a.md)\n```'
    out = rewrite_links(md, urls.get)
    assert out.startswith('[A](https://x.dev/a/) and [B](https://x.dev/b/#c "t") and `[A](a.md)`')
    assert "[ext](https://e.org)" in out and out.endswith("```\n[A](a.md)\n```")


def test_a_hugo_code_shortcode_without_a_body_opens_no_fence() -> None:
    # ``{{< code-toggle config=build />}}`` shows the site's settings, which no file holds:
    # it is left out, and the fence of the next code shortcode is the page's first
    md = (
        "Defaults:\n\n{{< code-toggle config=build />}}\n\n`buildStats`\n: Stats.\n\n"
        "{{< code-toggle file=hugo >}}\n[build]\nx = 1\n{{< /code-toggle >}}\n"
    )
    out = expand(md, read, hugo=True)
    assert out == "Defaults:\n\n\n\n`buildStats`\n: Stats.\n\n```toml\n[build]\nx = 1\n```\n"
