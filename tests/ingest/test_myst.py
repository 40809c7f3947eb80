"""MyST pages of a Sphinx tree: directives and roles -> plain Markdown, code as written."""

from __future__ import annotations

import textwrap
from pathlib import Path

from cogitave.ingest.docs import read_docs
from cogitave.ingest.docs.myst import myst_markdown
from tests.ingest.helpers import by_uid, write

EXAMPLE = """@click.command()
@click.option('--name', help='Who.\\n')
def hello(name):
    click.echo(f"Hello {name}!\\b")"""

PAGE = f"""# Options

```{{eval-rst}}
.. currentmodule:: click
```

Use the {{func}}`option` decorator, {{class}}`~click.core.Option`, {{meth}}`!Context.invoke`
and {{func}}`the docs <click.option>`; see {{ref}}`arguments`. Not a role: `{{func}}`x``.
As {{pep}}`8` says.

```{{eval-rst}}
.. click:example::

{textwrap.indent(EXAMPLE, "    ")}

.. click:run::

    invoke(hello, args=['--name', 'x'])
```

```{{code-block}} python
:caption: app.py

x = '\\n'  # *kept*
```

````{{tip}}
Nested:

```bash
pip install click
```
````

```{{versionadded}} 8.0
New.
```

```{{toctree}}
:maxdepth: 2

quickstart
```

```{{admonition}} A title
:class: note

   Some *text*.
```
"""


def test_myst_directives_and_roles_become_markdown() -> None:
    md = myst_markdown(PAGE, lambda rst: f"<rst {len(rst.splitlines())} lines>")
    assert "Use the `option()` decorator, `Option`, `Context.invoke`" in md
    assert "and `the docs`; see {ref}`arguments`. Not a role: `{func}`x``.\nAs PEP 8 says." in md
    assert "<rst 10 lines>" in md and "<rst 1 lines>" in md
    assert "**app.py**\n\n```python\nx = '\\n'  # *kept*\n```" in md
    assert "**Tip:**\n\nNested:\n\n```bash\npip install click\n```" in md
    assert "**Added in version 8.0:**\n\nNew." in md
    assert "quickstart" not in md and "maxdepth" not in md
    assert "**A title**\n\n   Some *text*." in md
    assert md.count("\n") == PAGE.count("\n")  # shorter blocks are padded: lines stay put


def test_a_myst_page_renders_eval_rst_code_verbatim(tmp_path: Path) -> None:
    write(tmp_path, "docs/conf.py", 'extensions = ["myst_parser"]\nversion = "8.1"\n')
    write(tmp_path, "docs/index.rst", "Home\n====\n\n.. toctree::\n\n   options\n")
    write(tmp_path, "docs/hello.py", "print('\\t')\n")
    extra = (
        "\n```{literalinclude} hello.py\n:language: python\n```\n\n```{eval-rst}\n|version|\n```\n"
    )
    (tmp_path / "docs" / "options.md").write_text(PAGE + extra)
    nodes = by_uid(read_docs(tmp_path))
    content = nodes["options"].content or ""
    assert f"```python\n{EXAMPLE}\n```" in content
    assert "```\ninvoke(hello, args=['--name', 'x'])\n```" in content
    assert "{eval-rst}" not in content and "{func}`option`" not in content
    assert content.endswith("\n\n8.1")  # |version| from conf.py
    assert "```python\nprint('\\t')\n```" in content
    codes = {str(n.dims["code"]) for n in nodes.values() if n.kind == "code_sample"}
    assert EXAMPLE + "\n" in codes and "x = '\\n'  # *kept*\n" in codes
    assert not any("quickstart" in c for c in codes)  # a toctree is not code
    assert edges_of_xref(nodes["options"]) == []  # `{ref}` to a missing label: no edge


def edges_of_xref(node) -> list[str]:  # type: ignore[no-untyped-def]
    return [e.dst for e in node.edges if e.label == "xref"]
