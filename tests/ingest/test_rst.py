"""reStructuredText -> doctree facts and Markdown (docutils with Sphinx's markup)."""

from __future__ import annotations

import textwrap

from cogitave.ingest.confined import MAX_INCLUDE_DEPTH
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
    assert "Inner *text*." in md
    assert "root:" not in md and "<script>" not in md  # no file insertion, no raw HTML
    assert "`role`" in md and "`PyList_New`" in md and "PEP 8" in md


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
