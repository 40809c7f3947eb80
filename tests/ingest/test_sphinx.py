"""Sphinx trees -> pages, sections, api nodes, toctree edges; xrefs found by resolve_xref."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from cogitave import Collection
from cogitave.ingest.docs import DocsBatch, read_docs
from cogitave.ingest.docs.sphinx import toctree_root
from cogitave.ingest.docs.sphinx_site import sphinx_substitutions
from cogitave.nodes import Node
from tests.ingest.helpers import assert_graph_closed, by_uid, edges_of

TREE = Path(__file__).resolve().parents[1] / "fixtures" / "docs" / "sphinx"
BASE = "https://docs.example.org/3/"


@pytest.fixture(scope="module")
def batch() -> DocsBatch:
    return read_docs(TREE)


@pytest.fixture(scope="module")
def nodes(batch: DocsBatch) -> dict[str, Node]:
    return by_uid(batch)


def test_detected_as_sphinx_with_html_urls_under_html_baseurl(
    batch: DocsBatch, nodes: dict[str, Node]
) -> None:
    assert batch.stats["shape"] == "sphinx"
    assert_graph_closed(batch)
    assert not batch.problems
    page = nodes["library/pathlib"]
    assert page.kind == "page"
    assert page.meta["url"] == BASE + "library/pathlib.html"
    assert page.meta["path"] == "library/pathlib.rst"
    assert nodes["library/index"].meta["url"] == BASE + "library/index.html"
    section = nodes["library/pathlib#reading-and-writing-files"]
    assert section.kind == "section"
    assert section.meta["url"] == BASE + "library/pathlib.html#reading-and-writing-files"


def test_api_objects_are_nodes_partof_their_section(nodes: dict[str, Node]) -> None:
    expected = {
        "pathlib": "module",
        "pathlib.Path": "class",
        "pathlib.Path.read_text": "method",  # nested in `.. class:: Path`
        "pathlib.Path.write_text": "method",  # `Path.write_text` under `module:: pathlib`
        "pathlib.PurePath.parts": "attribute",
        "pathlib.cwd": "function",
        "pathlib.UnsupportedOperation": "exception",
        "pathlib.DEFAULT_MODE": "data",
    }
    for uid, objtype in expected.items():
        node = nodes[uid]
        assert node.kind == "api" and node.meta["objtype"] == objtype, uid
        where = (
            "library/pathlib"
            if objtype == "module"
            else "library/pathlib#reading-and-writing-files"
        )
        assert edges_of(node, "partOf") == [where], uid
    module = nodes["pathlib"]
    assert module.meta["url"] == BASE + "library/pathlib.html#module-pathlib"
    assert module.dims["body"] == "Object-oriented filesystem paths"  # its synopsis
    read_text = nodes["pathlib.Path.read_text"]
    assert read_text.meta["url"] == BASE + "library/pathlib.html#pathlib.Path.read_text"
    assert read_text.dims["code"] == "read_text(encoding=None, errors=None)"
    assert "decoded contents" in str(read_text.dims["body"])
    assert read_text.content is not None and "```python\np = Path(" in read_text.content


def test_roles_become_xref_edges_and_unknown_markup_degrades(
    batch: DocsBatch, nodes: dict[str, Node]
) -> None:
    tutorial = nodes["tutorial"]
    xrefs = edges_of(tutorial, "xref")
    # :meth:, :func:`~...`, :ref:`reading <reading-files>` (a label before a section), :term:
    assert "pathlib.Path.read_text" in xrefs
    assert "pathlib.Path.write_text" in xrefs
    assert "library/pathlib#reading-and-writing-files" in xrefs
    assert "glossary" in xrefs
    # :doc:`../tutorial` from library/pathlib; :meth:`write_text` inside the class resolves.
    assert "tutorial" in edges_of(nodes["library/pathlib"], "xref")
    section = nodes["library/pathlib#reading-and-writing-files"]
    assert "pathlib.Path.write_text" in edges_of(section, "xref")
    # :mod:`json` names nothing in the tree: counted, with its reason; :c:func: is only text.
    assert batch.stats["unresolved_by_reason"] == {"API object not declared in the tree": 1}
    assert [m.split(": ", 1)[1] for m in batch.stats["missing_includes"]] == [
        "includes/missing.txt"
    ]
    content = tutorial.content or ""
    assert "Text inside an unknown directive." in content
    assert "`kept text`" in content and "`PyObject_Call`" in content
    assert "[`write_text()`](" + BASE + "library/pathlib.html#pathlib.Path.write_text)" in content


def test_code_doctest_literalinclude_and_admonitions(nodes: dict[str, Node]) -> None:
    samples = [
        n for n in nodes.values() if n.kind == "code_sample" and n.uid.startswith("tutorial#")
    ]
    found = [(str(n.dims["language"]), str(n.dims["code"])) for n in samples]
    # `::` blocks take Sphinx's default highlight language; doctest blocks are pycon.
    assert any(lang == "python" and "print(Path" in code for lang, code in found)
    assert any(lang == "pycon" and code.startswith(">>> 1 + 1") for lang, code in found)
    assert any(lang == "python" and 'write_text("hello")' in code for lang, code in found)
    section = nodes["tutorial#reading-a-file"]
    assert "Files are closed for you." in str(section.dims["body"])
    assert section.content is not None
    assert section.content.startswith("## Reading a file")
    assert "> **Note:**" in section.content
    assert "```pycon\n>>> 1 + 1\n2\n```" in section.content
    assert "Shared text from an included file." in section.content  # `.. include::`


def test_toctree_gives_partof_reading_order_and_breadcrumbs(nodes: dict[str, Node]) -> None:
    assert edges_of(nodes["tutorial"], "partOf") == ["index"]
    assert edges_of(nodes["library/index"], "partOf") == ["index"]
    assert edges_of(nodes["library/pathlib"], "partOf") == ["library/index"]
    assert edges_of(nodes["glossary"], "dependsOn") == ["library/index"]
    # Captions and ancestor pages (not the root document) lead the breadcrumb.
    assert nodes["tutorial"].meta["breadcrumb"] == ["The tutorial", "Tutorial"]
    assert nodes["pathlib.Path.read_text"].meta["breadcrumb"] == [
        "Reference",
        "The library",
        "pathlib --- Object-oriented filesystem paths",
        "Reading and writing files",
        "pathlib.Path.read_text",
    ]


def test_resolve_xref_finds_api_objects(tmp_path: Path, batch: DocsBatch) -> None:
    col = Collection.create(tmp_path / "c", batch.schema, encoder=None)
    col.add(batch.nodes)
    col.publish()
    hit = col.resolve_xref("pathlib.Path.read_text")
    assert hit.exact and hit.candidates[0].uid == "pathlib.Path.read_text"
    assert hit.candidates[0].kind == "api"
    assert col.resolve_xref("library/pathlib#reading-files").candidates


def test_built_tree_sources_and_base_url_override(tmp_path: Path) -> None:
    # A built site keeps the sources as _sources/*.rst.txt; --base-url wins over conf.py.
    built = tmp_path / "html" / "_sources"
    for rst in TREE.rglob("*.rst"):
        target = built / (rst.relative_to(TREE).as_posix() + ".txt")
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(rst, target)
    batch = read_docs(tmp_path / "html", base_url="https://py.example/")
    nodes = by_uid(batch)
    assert batch.stats["shape"] == "sphinx"
    assert nodes["library/pathlib"].meta["url"] == "https://py.example/library/pathlib.html"
    assert nodes["pathlib.Path.read_text"].kind == "api"
    assert "pathlib.Path.read_text" in edges_of(nodes["tutorial"], "xref")
    # The .py and .txt files are not in _sources, and missing.txt is missing everywhere.
    assert batch.stats["missing_includes_count"] == 3


def test_built_tree_without_index_finds_its_root_document(tmp_path: Path) -> None:
    # CPython's built docs have no conf.py and no index.rst: the root document is contents.rst,
    # whose title must not head every breadcrumb.
    built = tmp_path / "html" / "_sources"
    for rst in TREE.rglob("*.rst"):
        rel = rst.relative_to(TREE).as_posix()
        target = built / ("contents.rst.txt" if rel == "index.rst" else rel + ".txt")
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(rst, target)
    nodes = by_uid(read_docs(tmp_path / "html"))
    assert edges_of(nodes["library/index"], "partOf") == ["contents"]
    assert nodes["tutorial"].meta["breadcrumb"] == ["The tutorial", "Tutorial"]
    assert nodes["pathlib.Path.read_text"].meta["breadcrumb"][:2] == ["Reference", "The library"]


@pytest.mark.parametrize(
    ("parent", "named", "want"),
    [
        ({}, "index", "index"),  # no toctree: nothing to find
        ({"a": ("index", ""), "b": ("a", "")}, "index", "index"),  # named and used
        # the named root holds no toctree: the top with the most pages under it
        ({"a": ("top", ""), "b": ("a", ""), "c": ("lone", "")}, "index", "top"),
        ({"a": ("b", ""), "b": ("a", "")}, "index", "a"),  # a cycle ends
    ],
)
def test_toctree_root(parent: dict[str, tuple[str, str]], named: str, want: str) -> None:
    assert toctree_root(parent, named) == want


def test_version_and_release_come_from_conf_py_when_literal(tmp_path: Path) -> None:
    (tmp_path / "conf.py").write_text(
        "import x\nversion = '8.1'\nrelease = '8.1.7'\nnightly = x.get()\n"
    )
    (tmp_path / "index.rst").write_text(
        "Home\n====\n\nRelease |release| (|version|) and |today-ish|.\n"
    )
    (tmp_path / "own.rst").write_text(
        "Own\n===\n\n.. |version| replace:: its own\n\nVersion |version|.\n"
    )
    pages = {n.uid: n.content for n in read_docs(tmp_path).nodes}
    assert "Release 8.1.7 (8.1) and |today-ish|." in pages["index"]
    assert "Version its own." in pages["own"]


@pytest.mark.parametrize(
    "conf, want",
    [
        ("version = '2.0'\nrelease = version\n", {"version": "2.0", "release": "2.0"}),
        ("release, version = get_version('click')\n", {}),
        ("version = '1'\nversion = compute()\n", {}),
        ("def f(:\n", {}),
    ],
)
def test_sphinx_substitutions_are_read_without_running_conf_py(conf, want) -> None:
    assert sphinx_substitutions(conf) == want


AUTODOC_PACKAGE = {
    "src/mylib/__init__.py": (
        '"""Mylib connects engines."""\n\nfrom mylib._engine import Engine, connect\n\n'
        '__all__ = ["Engine", "connect"]\n'
        "open('IMPORTED', 'w').write('the package ran')  # reading must never run this\n"
    ),
    "src/mylib/_engine.py": (
        "class Engine:\n"
        '    """An engine that runs jobs.\n\n    :param workers: how many jobs run at once.\n'
        '    """\n\n'
        "    def __init__(self, workers: int = 4) -> None:\n        self.workers = workers\n\n"
        "    def run(self, job: str, *, retries: int = 0) -> bool:\n"
        '        """Run ``job``; retry up to ``retries`` times."""\n        return True\n\n\n'
        "def connect(url: str, timeout: float = 5.0) -> Engine:\n"
        '    """Connect to the engine at ``url``."""\n    return Engine()\n'
    ),
    "pyproject.toml": '[project]\nname = "mylib"\nversion = "2.1.0"\n',
    "docs/conf.py": "project = 'Mylib'\nextensions = ['sphinx.ext.autodoc']\n",
    "docs/index.rst": "Mylib\n=====\n\nStart with :doc:`api`.\n\n.. toctree::\n\n   api\n",
    "docs/api.rst": (
        "API reference\n=============\n\n.. automodule:: mylib\n   :members:\n\n"
        "Connecting\n----------\n\n.. autofunction:: mylib.connect\n\n"
        ".. autoclass:: mylib.Missing\n"
    ),
}


def test_autodoc_directives_get_the_api_reference_from_the_source(tmp_path: Path) -> None:
    # A repository whose docs hold only autodoc directives: the objects they name are read
    # from the package's source (never imported), with signatures and docstrings, and a name
    # the source lacks is listed in the report.
    marker = tmp_path / "IMPORTED"
    for rel, text in AUTODOC_PACKAGE.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text.replace("'IMPORTED'", repr(str(marker))))
    batch = read_docs(tmp_path / "docs", base_url="https://mylib.example/")
    api = {n.uid: n for n in batch.nodes if n.kind == "api"}
    assert {"mylib", "mylib.Engine", "mylib.Engine.run", "mylib.connect"} <= set(api)
    run = api["mylib.Engine.run"]
    assert "run(job: str, *, retries: int = 0) -> bool" in run.dims["code"]
    assert "retry up to" in (run.content or "")
    assert run.meta["url"] == "https://mylib.example/api.html#mylib.Engine.run"
    assert "how many jobs run at once" in (api["mylib.Engine"].content or "")
    assert "mylib.Missing" in batch.report and "not found" in batch.report
    assert not marker.exists()
    assert batch.stats["autodoc"] == {"read": 2, "missing": 1}
