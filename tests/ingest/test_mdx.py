"""MDX and container markup -> plain Markdown, line for line."""

from __future__ import annotations

from cogitave.ingest.docs.mdx import to_markdown

PAGE = """import A from './a';
import {
  B,
  C,
} from './bc';
export const meta = {title: 'x'};

## Title {/*custom-id*/}

<Intro>

Text inside *Intro*.

</Intro>

<Sandpack
  files={files}>

```js
import x from 'y';
export default x;
<Button />
```

</Sandpack>

Inline <Note>kept words</Note> here {/* a comment */}.

:::tip[My title]
Tip text.
:::
"""


def test_mdx_markup_dropped_text_and_code_kept_lines_preserved() -> None:
    out = to_markdown(PAGE)
    lines = out.split("\n")
    assert len(lines) == len(PAGE.split("\n"))  # line numbers still point into the file
    assert lines[7] == "## Title { #custom-id }"
    assert "Text inside *Intro*." in out
    assert "import A" not in out and "B," not in out and "export const meta" not in out
    assert "<Intro>" not in out and "</Sandpack>" not in out and "files={files}>" not in out
    # Fenced code is never touched, even when it looks like MDX.
    assert "import x from 'y';\nexport default x;\n<Button />" in out
    assert "Inline kept words here ." in out
    assert "**My title**\nTip text.\n" in out and ":::" not in out


def test_vitepress_containers_and_code_imports_without_mdx() -> None:
    text = "::: tip\nBe nice.\n:::\n\n<<< @/snippets/a.ts{2} [a.ts]\n\n<Badge text='x'/>\n"
    out = to_markdown(text, mdx=False)
    assert out.split("\n")[:3] == ["", "Be nice.", ""]
    assert "{* snippets/a.ts *}" in out
    assert "<Badge text='x'/>" in out  # not MDX: HTML stays for the Markdown parser


def test_tags_in_headings_go_and_inline_code_keeps_them() -> None:
    out = to_markdown(
        "### <Badge /> `FragmentInstance` {/*fi*/}\n* <Badge /> use `<Fragment ref={r}>`\n"
    )
    assert out.split("\n")[:2] == [
        "###  `FragmentInstance` { #fi }",
        "*  use `<Fragment ref={r}>`",
    ]
