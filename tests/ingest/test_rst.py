"""reStructuredText -> doctree facts and Markdown (docutils with Sphinx's markup)."""

from __future__ import annotations

import textwrap
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt

from cogitave.ingest.confined import MAX_INCLUDE_DEPTH
from cogitave.ingest.docs import read_docs
from cogitave.ingest.docs.rst import MAX_INCLUDES, Xref, find_py_object, parse_rst
from cogitave.ingest.docs.rst_markdown import render_markdown


def parse(text: str) -> str:
    doc = parse_rst(textwrap.dedent(text), "page")
    return render_markdown(doc, lambda x: None, lambda d, p: None).markdown


def test_unknown_directives_and_roles_never_fail() -> None:
    md = parse(
        """
        Title
        =====

        .. made-up:: arg
           :opt: 1

           Inner *text*.

        .. include:: /etc/passwd

        .. raw:: html

           <script>x()</script>

        A :made:`role` and :c:func:`PyList_New` and :pep:`8`.
        """
    )
    assert "**arg**\n\nInner \\*text\\*." in md  # an unknown directive's text, as written
    assert "root:" not in md and "<script>" not in md  # no file insertion, no raw HTML
    assert "`role`" in md and "`PyList_New`" in md and "PEP 8" in md


def test_a_cross_reference_roles_bang_is_markup_not_text() -> None:
    # `!` asks Sphinx for no link; a role that shows its text as written keeps it.
    doc = parse_rst(
        textwrap.dedent(
            """
            Utilities for :keyword:`!with`\\ -statement contexts
            =======================================================

            Use :keyword:`!with`, :envvar:`!PATH`, :samp:`!{cmd}` and :kbd:`!`.
            """
        ),
        "page",
    )
    md = render_markdown(doc, lambda x: None, lambda d, p: None).markdown
    assert doc.title == "Utilities for with-statement contexts"
    assert "`with`, `PATH`, `!{cmd}` and `!`" in md


def test_objects_labels_and_toctree() -> None:
    doc = parse_rst(
        textwrap.dedent(
            """
            .. _top:

            Mod
            ===

            .. currentmodule:: pkg.mod

            .. toctree::
               :caption: Parts
               :glob:

               one
               Two <sub/two>
               parts/*

            .. class:: Thing(a)

               .. method:: run()
               .. attribute:: size

            .. function:: helper(x)
               :no-index:

            .. _later:

            Some paragraph.
            """
        ),
        "page",
    )
    names = {(o.name, o.objtype) for o in doc.objects}
    assert names == {("pkg.mod.Thing", "class"), ("pkg.mod.Thing.run", "method"),
                     ("pkg.mod.Thing.size", "attribute")}  # fmt: skip
    assert doc.labels["top"] == ("", "Mod") and doc.labels["later"] == ("", "Mod")
    (tree,) = doc.toctrees
    assert tree.caption == "Parts" and tree.glob
    assert tree.entries == [(None, "one"), ("Two", "sub/two"), (None, "parts/*")]


def test_markdown_rendering_of_blocks() -> None:
    md = parse(
        """
        Title
        =====

        Section
        -------

        * item *one*
        * item ``two``

        1. first

        Term
           Definition.

        .. code-block:: rust
           :caption: main.rs

           fn main() {}

        .. warning:: Mind the gap.

        +-----+-----+
        | a   | b   |
        +=====+=====+
        | 1   | 2   |
        +-----+-----+

        .. versionchanged:: 3.12
           Now faster.
        """
    )
    assert md.startswith("# Title\n\n## Section { #section }\n")
    assert "- item *one*\n- item `two`" in md
    assert "1. first" in md and "**Term**\n: Definition." in md
    assert "main.rs\n\n```rust\nfn main() {}\n```" in md
    assert "> **Warning:**\n>\n> Mind the gap." in md
    assert "| a | b |\n|---|---|\n| 1 | 2 |" in md
    assert "**Changed in version 3.12:** Now faster." in md


def test_xref_lookup_and_python_domain_search() -> None:
    seen: list[Xref] = []

    def lookup(x: Xref) -> tuple[str, str] | None:
        seen.append(x)
        return ("/a.html#" + x.target, "Shown") if x.target != "missing" else None

    doc = parse_rst(
        ".. module:: m\n\nSee :meth:`~m.C.run`, :ref:`label`, :class:`!Plain`, :func:`missing`.\n",
        "p",
    )
    out = render_markdown(doc, lookup, lambda d, p: None)
    assert "[`run()`](/a.html#m.C.run)" in out.markdown
    assert "[Shown](/a.html#label)" in out.markdown
    assert "`Plain`" in out.markdown and "`missing()`" in out.markdown
    assert [x.target for x, _ in out.unresolved] == ["missing"]
    assert {x.role for x in seen} == {"py:meth", "ref", "py:func"}
    objects = {"m.C.run": 1, "m.f": 1, "os.path.join": 1}
    assert find_py_object(objects, "run", "m", "C") == "m.C.run"
    assert find_py_object(objects, "f()", "m", "") == "m.f"
    assert find_py_object(objects, ".join", "", "") == "os.path.join"
    assert find_py_object(objects, "nothing", "m", "C") is None


def test_sphinx_naming_rules_for_declared_objects() -> None:
    doc = parse_rst(
        textwrap.dedent(
            """
            .. module:: sys

            .. data:: stdin
                      stdout

            .. currentmodule:: None

            .. class:: list([iterable])

               .. method:: list.sort(*, key=None)
               .. method:: append(x)

            .. function:: dumps(obj)
               :module: json
            """
        ),
        "page",
    )
    names = [o.name for o in doc.objects]
    assert names == ["sys", "sys.stdin", "sys.stdout", "list", "list.sort", "list.append",
                     "json.dumps"]  # fmt: skip
    out = render_markdown(doc, lambda x: None, lambda d, p: None)
    assert sorted(o.name for o, _, _ in out.api) == sorted(names)
    assert "`stdin`\n`stdout`" in out.markdown


def test_include_reads_through_the_callback_and_stops_cycles() -> None:
    files = {"a.txt": "From *a*.\n\n.. include:: a.txt\n", "code.py": "x = 1\n"}
    doc = parse_rst(
        ".. include:: code.py\n   :code: python\n\n.. include:: no.txt\n\n.. include:: a.txt\n",
        "p",
        read=lambda path, _line: files.get(path),
    )
    md = render_markdown(doc, lambda x: None, lambda d, p: None).markdown
    assert md.count("From *a*.") == MAX_INCLUDE_DEPTH  # a cycle stops at the depth cap
    assert "```python\nx = 1\n```" in md
    assert ("no.txt", 4) in doc.includes
    ((path, _line, why),) = doc.refused
    assert path == "a.txt" and f"nested more than {MAX_INCLUDE_DEPTH} deep" in why


def test_includes_per_page_are_bounded() -> None:
    text = "".join(f".. include:: f{i}.txt\n\n" for i in range(MAX_INCLUDES + 5))
    doc = parse_rst(text, "p", read=lambda path, _line: f"Text of {path}.\n")
    md = render_markdown(doc, lambda x: None, lambda d, p: None).markdown
    assert md.count("Text of") == MAX_INCLUDES and len(doc.refused) == 5


CLICK_EXAMPLE = r'''@click.command()
@click.option('--count', default=1, help='Number of greetings.')
@click.option('--name', prompt='Your name',
              help='The person to greet.')
def hello(count, name):
    """Simple program that greets NAME for a total of COUNT times.

    \b
    This paragraph is *not* rewrapped.
    """
    for x in range(count):
        click.echo(f"Hello {name}!" + '\n' * 2)

if __name__ == '__main__':
    hello()'''


def test_code_in_an_unknown_directive_is_kept_byte_for_byte(tmp_path: Path) -> None:
    body = textwrap.indent(CLICK_EXAMPLE, "    ").replace("\n    \n", "\n\n")
    (tmp_path / "conf.py").write_text("project = 'x'\n")
    (tmp_path / "index.rst").write_text(
        f"Quickstart\n==========\n\n.. click:example::\n\n{body}\n\nAnd then:\n\n"
        ".. click:run::\n\n    invoke(hello, args=['--count=3'])\n"
    )
    batch = read_docs(tmp_path)
    page = next(n for n in batch.nodes if n.uid == "index")
    assert f"```python\n{CLICK_EXAMPLE}\n```" in page.content
    codes = [str(n.dims["code"]) for n in batch.nodes if n.kind == "code_sample"]
    assert codes == [CLICK_EXAMPLE + "\n", "invoke(hello, args=['--count=3'])\n"]


def test_unknown_directives_have_a_defined_outcome() -> None:
    md = parse(
        """
        .. shell-session::
           :language: console

           $ pip install "x[y]"  # *not* emphasis

        .. literalblock-thing:: rust

           fn main() { println!("{}", 1); }

        .. weird:: A title

           Prose with a :func:`role` and *stars*, kept
           as written.

           Not a heading
           =============

        .. option:: -v, --verbose

           Be *verbose*.

        .. c:function:: PyObject* PyList_New(Py_ssize_t len)

           Return a new list.

        .. tab-set::

           .. tab-item:: Linux

              Run ``make``.

        Default `role` and a :foo:`bar <baz>` and :raw-html:`<b>`.

        .. math::

           a_1 + b^2 = \\frac{x}{y}

        .. productionlist::
           try_stmt: try1_stmt | try2_stmt

        .. contents:: On this page
           :local:
        """
    )
    assert '```console\n$ pip install "x[y]"  # *not* emphasis\n```' in md
    assert '```rust\nfn main() { println!("{}", 1); }\n```' in md  # a body that is code
    assert "**A title**\n\nProse with a :func:\\`role\\` and \\*stars\\*, kept\nas written." in md
    assert "Not a heading\n\\=============" in md
    assert "`-v, --verbose`\n\nBe *verbose*." in md
    assert "`PyObject* PyList_New(Py_ssize_t len)`\n\nReturn a new list." in md
    assert "**Linux**\n\nRun `make`." in md
    assert "Default `role` and a `bar` and `<b>`." in md
    assert "$$\na_1 + b^2 = \\frac{x}{y}\n$$" in md
    assert "```\ntry_stmt: try1_stmt | try2_stmt\n```" in md
    assert "On this page" not in md  # what only drives the build shows nothing


def test_tabs_and_trailing_spaces_in_code_are_kept() -> None:
    code = "func main() {\n\tfmt.Println(1)  \n\n\t\treturn\n}"
    text = "Go\n==\n\n.. go-example::\n\n" + textwrap.indent(code, "   ") + "\n"
    doc = parse_rst(text, "p")
    md = render_markdown(doc, lambda x: None, lambda d, p: None).markdown
    assert f"```\n{code}\n```" in md
    block = ".. code-block:: go\n\n" + textwrap.indent(code, "   ") + "\n"
    md = render_markdown(parse_rst(block, "p"), lambda x: None, lambda d, p: None).markdown
    assert "\tfmt.Println(1)" in md and "\t\treturn" in md


_CODE_CHARS = st.sampled_from(
    [*"abcxyz_019 \t()[]{}:;.,=+-*/%<>!?@#$&|^~'\"`\\", "é", "→", "|version|", "\\n"]
)
_LINE = st.lists(_CODE_CHARS, max_size=30).map("".join)


@st.composite
def _bodies(draw: st.DrawFn) -> str:
    first = draw(st.sampled_from(["@deco", "def f():", "x", "'''", "`", "*", "_", "\\b", ">>> 1"]))
    rest = draw(st.lists(st.tuples(st.integers(0, 8), _LINE), max_size=8))
    lines = [first + draw(_LINE).rstrip()]
    lines += [(" " * n + line) if line.strip() else "" for n, line in rest]
    while lines and not lines[-1].strip():
        lines.pop()
    return "\n".join(lines)


@settings(max_examples=150, deadline=None)
@given(body=_bodies(), name=st.sampled_from(["example", "click:example", "my-examples"]))
def test_any_body_of_an_example_directive_is_kept_verbatim(body: str, name: str) -> None:
    text = f"Page\n====\n\n.. {name}::\n\n" + textwrap.indent(body, "    ") + "\n\nAfter.\n"
    md = render_markdown(parse_rst(text, "p"), lambda x: None, lambda d, p: None).markdown
    fences = [t for t in MarkdownIt("commonmark").parse(md) if t.type == "fence"]
    assert [t.content for t in fences] == [body + "\n"]


def _fences(md: str) -> list[tuple[str, str]]:
    """(info, code) of each fence of ``md`` as CommonMark reads it."""
    return [
        (t.info, t.content.rstrip("\n"))
        for t in MarkdownIt("commonmark").parse(md)
        if t.type == "fence"
    ]


def test_code_in_a_field_or_a_definition_is_a_fence_of_its_own() -> None:
    # a literal block in a field's body or a definition (Python's enum and tkinter pages)
    # stays a fence, not triple backticks inside the field's paragraph
    md = parse(
        """
        :names: The members (a string)::

            'RED GREEN BLUE'

          or an iterator of names::

            ['RED', 'GREEN']

        :module: where the class is found.

        At creation time
           ::

              fred = Button(self, fg="red")

        After it
           Set it::

              fred["fg"] = "red"

        Then::

            >>> print(1)
            1
        """
    )
    assert [code for _, code in _fences(md)] == [
        "'RED GREEN BLUE'",
        "['RED', 'GREEN']",
        'fred = Button(self, fg="red")',
        'fred["fg"] = "red"',
        ">>> print(1)\n1",
    ]
    assert "- **module**: where the class is found." in md
    assert "**After it**\n: Set it:" in md


def test_the_argument_of_a_test_directive_names_its_group_not_a_language() -> None:
    # a body written right under ``.. testcode::`` is its group name, as in Sphinx
    md = parse(
        """
        .. testcode::
           import random

           print(random.random())

        .. doctest:: grouped

           >>> 1 + 1
           2
        """
    )
    assert _fences(md) == [("python", "print(random.random())"), ("python", ">>> 1 + 1\n2")]


def test_literal_blocks_in_an_unknown_directive_stay_code() -> None:
    # Python's own directives (``awaitablemethod``, ``pdbcommand``, ``deprecated-removed``)
    # hold prose with literal blocks: the prose stays plain text, each block code as written
    md = parse(
        """
        .. awaitablemethod:: loop.run(func)

           Run *func*. Example::

              import asyncio

              def  blocking():
                  pass

           is the same as ::

              await  x

           A session:

           >>> f(1)
           2

           .. note::

              Not code.

        .. deprecated-removed:: 3.11 3.13
           Gone.

           For example, with :class:`Message`::

               msg = Message()
               msg['to'] = 'x'
        """
    )
    assert [code for _, code in _fences(md)] == [
        "import asyncio\n\ndef  blocking():\n    pass",
        "await  x",
        ">>> f(1)\n2",
        "msg = Message()\nmsg['to'] = 'x'",
    ]
    assert "Run \\*func\\*. Example:" in md and "is the same as" in md
    assert "For example, with :class:\\`Message\\`:" in md
    assert ".. note::\n\nNot code." in md  # a directive inside: text, as before


def test_a_directive_whose_name_only_holds_a_code_word_is_prose(tmp_path: Path) -> None:
    # CPython's ``.. opcode::`` describes an instruction in prose: "code" inside a word of the
    # name is not a code directive (``code-tab``, ``runblock``, ``plantuml`` are).
    (tmp_path / "conf.py").write_text("project = 'x'\n")
    (tmp_path / "dis.rst").write_text(
        "Opcodes\n=======\n\n.. opcode:: LOAD_FAST (var_num)\n\n"
        "   Pushes a reference to the local variable onto the stack.\n\n"
        ".. plantuml::\n\n   Alice -> Bob: hello\n"
    )
    batch = read_docs(tmp_path)
    codes = [str(n.dims["code"]) for n in batch.nodes if n.kind == "code_sample"]
    assert codes == ["Alice -> Bob: hello\n"]
    page = next(n for n in batch.nodes if n.uid == "dis")
    assert "Pushes a reference to the local variable onto the stack." in page.content
