"""Markdown an agent reads: wrappers, images, tables and fence attributes made text; the
lines of a code fence untouched; headings below a level."""

from __future__ import annotations

import pytest

from cogitave.service.clean import absolute_fragments, clean_block, demote, html_table


@pytest.mark.parametrize(
    ("block", "want"),
    [
        (
            '```Python hl_lines="1 3" title="main.py"\nimport a\n```',
            '```Python title="main.py"\nimport a\n```',
        ),
        (
            '```go-html-template {file="layouts/x.html" copy=true}\n{{ . }}\n```',
            '```go-html-template title="layouts/x.html"\n{{ . }}\n```',
        ),
        (
            "```js [vite.config.js]\nexport default {}\n```",
            '```js title="vite.config.js"\nexport default {}\n```',
        ),
        (
            "| a    |  b |\n| :--- | --:|\n| one  | two \\| three |",
            "| a | b |\n|:---|---:|\n| one | two \\| three |",
        ),
        ("```\ncode\n```", "```\ncode\n```"),
        ("```{code-block} python\n:linenos:\nx = 1\n```", "```python\n:linenos:\nx = 1\n```"),
        ('<div class="termy">\n\n$ pip install x\n\n</div>', "$ pip install x"),
        ('Look: <img src="/a.png" alt="the flow" class="x">.', "Look: (image: the flow)."),
        ('<img src="/a.png">Done', "Done"),
        ("![the logo](logo.png) and ![](empty.png)", "(image: the logo) and"),
        ("a<br>b <span class='x'>c</span>", "ab c"),
        ("plain *markdown* stays", "plain *markdown* stays"),
    ],
)
def test_blocks_are_cleaned(block: str, want: str) -> None:
    assert clean_block(block) == want


def test_code_inside_a_fence_is_never_touched() -> None:
    code = '```html\n<div class="x"><img src="a.png" alt="b"></div>\n```'
    assert clean_block(code) == code


def test_an_html_table_becomes_a_markdown_table() -> None:
    html = (
        "<table><thead><tr><th>Name</th><th>Type</th></tr></thead><tbody>"
        "<tr><td>id</td><td>int</td></tr><tr><td>a|b</td><td>str<br>or none</td></tr>"
        "</tbody></table>"
    )
    assert html_table(html) == ("| Name | Type |\n|---|---|\n| id | int |\n| a\\|b | str or none |")
    assert clean_block(f"Before\n{html}\nafter") == f"Before\n{html_table(html)}\nafter"


def test_headings_go_below_a_level() -> None:
    assert demote("# Title", 3) == "### Title"
    assert demote("## Sub", 3) == "### Sub"
    assert demote("#### Deep", 3) == "#### Deep"
    assert demote("#hashtag is not a heading", 3) == "#hashtag is not a heading"
    assert demote("text", 3) == "text"


def test_a_fragment_link_becomes_the_pages_url() -> None:
    block = 'See [a](#x) and `[b](#y)`, <a href="#z">z</a> and [c](page.html#w).\n[ref]: #r'
    assert absolute_fragments(block, "https://d.dev/api/#top") == (
        'See [a](https://d.dev/api/#x) and `[b](#y)`, <a href="https://d.dev/api/#z">z</a> '
        "and [c](page.html#w).\n[ref]: https://d.dev/api/#r"
    )
    assert absolute_fragments("```md\n[a](#x)\n```", "https://d.dev/api/") == (
        "```md\n[a](#x)\n```"
    )
    assert absolute_fragments("[a](#x)", "") == "[a](#x)"  # no page known: as it is
