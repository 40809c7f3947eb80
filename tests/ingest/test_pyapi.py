"""An installed Python package -> API entries and the docs graph, read from its source and
never imported: public names, aliases, signatures, docstrings, kinds, bounds, METADATA, the
``pyapi`` source format and ``api_for``."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from cogitave.errors import InputError
from cogitave.ingest.detect import detect_format
from cogitave.ingest.pyapi import (
    ApiDoc,
    Limits,
    api_for,
    locate,
    read_package,
    read_pyapi,
)
from cogitave.ingest.pyapi.load import UNPARSED
from cogitave.ingest.sources import identify, read_source

MARKER = "imported.marker"

INIT = '''"""Demo kit: small tools for widgets.

Usage
-----

Make a thing, then grow it.
"""
import pathlib

pathlib.Path(__file__).parent.parent.joinpath("{marker}").write_text("imported")

from demokit._core import Thing, ThingError, make_thing
from demokit._core import make_thing as build
from demokit import helpers

__all__ = ["DEFAULT_SIZE", "Thing", "ThingError", "build", "helpers", "make_thing"]

DEFAULT_SIZE: int = 8
"""The size a new thing gets."""

raise RuntimeError("demokit was imported")
'''

CORE = '''"""The private module that defines everything."""
import pathlib

pathlib.Path(__file__).parent.parent.joinpath("{marker}").write_text("imported")


class Thing:
    """A thing with a size.

    Args:
        size: How big it is.
        name: What it is called.
    """

    def __init__(self, size: int = 8, *, name: str | None = None) -> None:
        self.size = size

    def grow(self, by: int = 1) -> int:
        """Grow the thing by a few widgets.

        Args:
            by: How much to add.

        Returns:
            The new size.

        Raises:
            ValueError: When ``by`` is negative.
        """
        return self.size + by

    def _private(self) -> None:
        """Not part of the API."""


def make_thing(size: int = 8, *names: str, strict: bool = False, **extra: object) -> Thing:
    """Make a thing.

    Examples:
        >>> make_thing(3).size
        3
    """
    return Thing(size)


class ThingError(ValueError):
    """Raised when a thing breaks."""
'''

HELPERS = '''"""Helpers for things."""
import os


def shrink(thing, by=1):
    """Shrink a thing."""


def _hidden():
    """Private."""


def scale(thing, factor=2.0):
    """Scale a thing by :func:`~demokit.make_thing` rules, ``factor`` times.

    Use it like this::

        scale(thing, 3)

    .. note:: Factors below one shrink it.

    .. _scaling: https://example.org/scaling

    :param thing: The thing to scale.
    :param factor: How much.
    :returns: The scaled thing.
    """
'''

METADATA = """Metadata-Version: 2.1
Name: DemoKit
Version: 1.2.3
Summary: Small tools for widgets.
Description-Content-Type: text/markdown

# DemoKit

DemoKit makes widgets out of spare parts.

## Install

Install it with pip and enjoy the widget factory.
"""


def site_packages(root: Path) -> Path:
    """A site-packages folder holding the demokit distribution."""
    site = root / "site-packages"
    pkg = site / "demokit"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text(INIT.replace("{marker}", MARKER))
    (pkg / "_core.py").write_text(CORE.replace("{marker}", MARKER))
    (pkg / "helpers.py").write_text(HELPERS)
    (pkg / "_speedups.cpython-311-x86_64-linux-gnu.so").write_bytes(b"\x7fELF not really")
    info = site / "demokit-1.2.3.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(METADATA)
    (info / "top_level.txt").write_text("demokit\n")
    (info / "RECORD").write_text("demokit/__init__.py,,\ndemokit/_core.py,,\n")
    # Another distribution beside it, which a read of demokit leaves alone.
    other = site / "otherpkg"
    other.mkdir()
    (other / "__init__.py").write_text('def other():\n    """Other."""\n')
    (site / "otherpkg-0.1.dist-info").mkdir()
    (site / "otherpkg-0.1.dist-info" / "METADATA").write_text("Name: otherpkg\nVersion: 0.1\n")
    return site


@pytest.fixture
def site(tmp_path: Path) -> Path:
    return site_packages(tmp_path)


def by_name(entries: list[ApiDoc]) -> dict[str, ApiDoc]:
    return {e.name: e for e in entries}


def test_public_names_aliases_signatures_and_docstrings(site: Path) -> None:
    api = read_package(site, "DemoKit")
    got = by_name(api.entries)
    assert set(got) == {
        "demokit",
        "demokit.DEFAULT_SIZE",
        "demokit.Thing",
        "demokit.Thing.grow",
        "demokit.ThingError",
        "demokit.make_thing",
        "demokit.helpers",
        "demokit.helpers.shrink",
        "demokit.helpers.scale",
    }
    thing = got["demokit.Thing"]
    assert thing.kind == "class" and thing.canonical == "demokit._core.Thing"
    assert thing.signature == "class Thing(size: int = 8, *, name: str | None = None)"
    assert thing.path == "demokit/_core.py" and thing.line == 7
    assert "demokit._core.Thing" in thing.aliases
    # One object, two public names: the shortest is the entry, the other an alias of it.
    make = got["demokit.make_thing"]
    assert make.kind == "function"
    assert set(make.aliases) == {"demokit.build", "demokit._core.make_thing"}
    assert make.signature == (
        "def make_thing(size: int = 8, *names: str, strict: bool = False, **extra: object) -> Thing"
    )
    assert "```pycon\n>>> make_thing(3).size\n3\n```" in make.markdown
    grow = got["demokit.Thing.grow"]
    assert grow.kind == "method" and grow.parent == "demokit.Thing"
    assert grow.signature == "def grow(by: int = 1) -> int"
    assert grow.docstring.startswith("Grow the thing by a few widgets.\n\nArgs:")
    assert "**Parameters**\n\n- `by` (`int`, default `1`): How much to add." in grow.markdown
    assert "**Returns**\n\n- `int`: The new size." in grow.markdown
    assert "**Raises**\n\n- `ValueError`: When `by` is negative." in grow.markdown
    assert got["demokit.ThingError"].kind == "exception"
    size = got["demokit.DEFAULT_SIZE"]
    assert size.kind == "attribute" and size.signature == "DEFAULT_SIZE: int = 8"
    assert size.docstring == "The size a new thing gets."
    module = got["demokit"]
    assert module.kind == "module" and module.path == "demokit/__init__.py"
    # The module's own "Usage" heading does not open a section of the page: bold text.
    assert "**Usage**" in module.markdown and "-----" not in module.markdown
    assert got["demokit.helpers.shrink"].signature == "def shrink(thing, by=1)"
    # Sphinx-style fields and reStructuredText prose -> Markdown.
    assert got["demokit.helpers.scale"].markdown == (
        "Scale a thing by `make_thing` rules, `factor` times.\n\n"
        "Use it like this:\n\n```python\nscale(thing, 3)\n```\n\n"
        "**Note**\n\nFactors below one shrink it.\n\n"
        "**Parameters**\n\n- `thing`: The thing to scale.\n- `factor` (default `2.0`): How much."
        "\n\n**Returns**\n\n- The scaled thing."
    )
    # The compiled module is listed, not read; the other distribution is not read at all.
    assert [s.reason for s in api.skipped] == ["a compiled module"]
    assert not any(e.name.startswith("otherpkg") for e in api.entries)


def test_the_package_is_never_imported(site: Path) -> None:
    # Importing demokit would write the marker (and raise); reading it must do neither.
    read_pyapi(site, "DemoKit")
    read_package(site / "demokit")
    api_for(["demokit.Thing"], [site])
    assert not (site / MARKER).exists()
    assert "demokit" not in sys.modules and "demokit._core" not in sys.modules


def test_no_program_is_run(site: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # griffe asks git for a package's repository (its remote, its commit): git reads the
    # repository's config, which a package's folder may bring. Reading runs nothing.
    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError(f"a program was run: {args}")

    monkeypatch.setattr(subprocess, "run", refuse)
    monkeypatch.setattr(subprocess, "Popen", refuse)
    api = read_package(site, "DemoKit")
    assert "demokit.Thing" in {e.name for e in api.entries}


def test_metadata_names_the_library_not_the_folder(site: Path) -> None:
    src = locate(site, "demokit")  # any spelling PEP 503 normalises alike
    dist = src.dist
    assert (dist.name, dist.version, dist.packages) == ("DemoKit", "1.2.3", ("demokit",))
    assert src.dist.readme_type == "markdown" and "spare parts" in src.dist.readme
    # A package folder finds the dist-info beside it.
    assert locate(site / "demokit").dist.name == "DemoKit"
    ident = identify(site, library="DemoKit")
    assert (ident.name, ident.version) == ("DemoKit", "1.2.3")
    assert ident.version_from == "demokit-1.2.3.dist-info/METADATA"
    with pytest.raises(InputError, match="--library NAME"):
        locate(site)
    with pytest.raises(InputError, match="no distribution 'nothere'"):
        locate(site, "nothere")


def test_graph_pages_api_nodes_and_readme(site: Path) -> None:
    batch = read_pyapi(site, "DemoKit")
    nodes = {n.uid: n for n in batch.nodes}
    index = nodes["index"]
    assert index.kind == "page" and index.dims["title"] == "DemoKit 1.2.3"
    assert "spare parts" in (index.content or "")
    assert nodes["index#install"].kind == "section"  # the README's own sections
    page = nodes["api/demokit"]
    assert page.kind == "page" and page.dims["title"] == "demokit"
    assert ("partOf", "index") in {(e.label, e.dst) for e in page.edges}
    assert "[`demokit.Thing`](#demokit.Thing) (class): A thing with a size." in page.content
    thing = nodes["demokit.Thing"]
    assert thing.kind == "api" and thing.dims["title"] == "demokit.Thing"
    assert thing.dims["code"] == "class Thing(size: int = 8, *, name: str | None = None)"
    assert thing.content.startswith(
        "```python\nclass Thing(size: int = 8, *, name: str | None = None)\n```"
    )
    assert "- `grow` (method): Grow the thing by a few widgets." in thing.content
    assert thing.meta["url"] == "/api/demokit/#demokit.Thing"
    assert thing.meta["anchor"] == "demokit.Thing" and thing.meta["objtype"] == "class"
    assert thing.meta["path"] == "demokit/_core.py" and thing.meta["line"] == 7
    assert nodes["demokit.DEFAULT_SIZE"].meta["path"] == "demokit/__init__.py"
    assert thing.meta["breadcrumb"] == ["demokit", "demokit.Thing"]
    assert [(e.label, e.dst) for e in thing.edges if e.label == "partOf"] == [
        ("partOf", "api/demokit")
    ]
    grow = nodes["demokit.Thing.grow"]
    assert [(e.label, e.dst) for e in grow.edges if e.label == "partOf"] == [
        ("partOf", "demokit.Thing")
    ]
    assert grow.meta["breadcrumb"] == ["demokit", "demokit.Thing", "demokit.Thing.grow"]
    assert nodes["demokit.make_thing"].meta["aliases"] == [
        "demokit.build",
        "demokit._core.make_thing",
    ]
    sub = nodes["api/demokit.helpers"]
    assert sub.meta["aliases"] == ["demokit.helpers"]
    assert ("partOf", "api/demokit") in {(e.label, e.dst) for e in sub.edges}
    assert "demokit.helpers.shrink" in nodes and "demokit.helpers._hidden" not in nodes
    assert "python package DemoKit 1.2.3 (demokit)" in batch.report
    assert batch.stats["pyapi"]["skipped"] == [
        "demokit/_speedups.cpython-311-x86_64-linux-gnu.so: a compiled module"
    ]


def test_bounds_leave_out_and_list(tmp_path: Path) -> None:
    site = tmp_path / "sp"
    pkg = site / "big"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text('"""Big."""\n')
    for i in range(6):
        (pkg / f"m{i}.py").write_text(f'def f{i}():\n    """F{i}."""\n')
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "huge.py").write_text("X = 1\n" + "#" * 5000 + "\n")
    (pkg / "loop").symlink_to(pkg, target_is_directory=True)  # never followed
    api = read_package(pkg, limits=Limits(max_modules=4, max_file_bytes=2000))
    reasons = {s.path: s.reason for s in api.skipped}
    assert "over the" in reasons["big/huge.py"] and "not read" in reasons["big/huge.py"]
    past = [p for p, r in reasons.items() if r.startswith("past the 4 modules")]
    assert len(past) == 4  # 9 module files: 4 read (its own __init__ first), huge.py too big
    assert api.modules_read == 4
    names = {e.name for e in api.entries}
    assert {"big", "big.m0", "big.m0.f0"} <= names and "big.m5" not in names
    assert not any("loop" in n for n in names)
    total = read_package(pkg, limits=Limits(max_total_bytes=300))
    assert any("MB of source read from one distribution" in s.reason for s in total.skipped)
    assert total.modules_read == 8  # all but huge.py
    capped = read_package(pkg, limits=Limits(max_objects=3))
    assert len(capped.entries) == 3
    assert any(s.reason.startswith("past the 3 objects") for s in capped.skipped)


def test_a_broken_file_is_left_out_not_fatal(tmp_path: Path) -> None:
    pkg = tmp_path / "sp" / "brk"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text('"""Fine."""\nfrom brk.ok import good\n__all__ = ["good"]\n')
    (pkg / "ok.py").write_text('def good(x: int) -> int:\n    """Good."""\n')
    (pkg / "bad.py").write_text("def (:\n")
    (pkg / "long.py").write_text(f'def {"x" * 600}():\n    """Long."""\n')
    (pkg / "deep.py").write_text("X = " + "1+" * 100_000 + "1\n")
    os.mkfifo(pkg / "pipe.py")  # reading it would block for ever
    api = read_package(pkg)
    assert {e.name for e in api.entries} == {"brk", "brk.good", "brk.long", "brk.ok"}
    assert sorted(str(s) for s in api.skipped) == [
        f"brk/bad.py: {UNPARSED}",
        f"brk/deep.py: {UNPARSED}",
        "brk/long.py: a name of 609 characters",
        "brk/pipe.py: not a regular file; not read",
    ]


def test_api_for_fills_autodoc_names(site: Path, tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    got = api_for(
        [
            "demokit.Thing",
            "demokit._core.Thing",
            "demokit.build",
            "demokit.Thing.grow",
            "demokit.helpers",
            "demokit.nope",
            "missingpkg.Thing",
            "not a name",
        ],
        [empty, site],
    )
    found = {g.name: (g.entry.name if g.entry else None) for g in got}
    assert found == {
        "demokit.Thing": "demokit.Thing",
        "demokit._core.Thing": "demokit.Thing",
        "demokit.build": "demokit.make_thing",
        "demokit.Thing.grow": "demokit.Thing.grow",
        "demokit.helpers": "demokit.helpers",
        "demokit.nope": None,
        "missingpkg.Thing": None,
        "not a name": None,
    }
    reasons = {g.name: g.reason for g in got if g.entry is None}
    assert reasons["demokit.nope"] == "no public object demokit.nope in demokit"
    assert reasons["missingpkg.Thing"].startswith("no package missingpkg in ")
    assert reasons["not a name"] == "not a dotted Python name"


def test_source_format_detected_and_checked(site: Path, tmp_path: Path) -> None:
    assert detect_format(site) == "pyapi"
    assert detect_format(site / "demokit") == "pyapi"
    batch = read_source(site, library="DemoKit")
    assert "demokit.Thing" in {n.uid for n in batch.nodes}
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("# A\n")
    with pytest.raises(InputError, match="no Python package"):
        read_source(docs, "pyapi")
    with pytest.raises(InputError, match="try --format pyapi"):
        read_source(site / "demokit", "docs")


def test_index_a_package_then_resolve_and_search(site: Path, tmp_path: Path) -> None:
    from cogitave.indexing import open_reader
    from tests.helpers import run_cli

    col = tmp_path / "col"
    res = run_cli("index", "-c", str(col), "--library", "DemoKit", str(site), "-q")
    assert res.returncode == 0
    listed = run_cli("libraries", "-c", str(col), "--json").stdout
    assert '"version": "1.2.3"' in listed
    reader = open_reader(col)
    hit = reader.resolve_xref("demokit.Thing")
    assert hit.exact and hit.candidates[0].kind == "api"
    assert hit.candidates[0].title == "demokit.Thing"
    # The defining path and a second public name both reach the one entry.
    module = reader.resolve_xref("demokit.helpers")
    assert module.exact and module.candidates[0].kind == "page"
    assert module.candidates[0].uid.endswith("api/demokit.helpers")
    for ref in ("demokit._core.make_thing", "demokit.build"):
        alias = reader.resolve_xref(ref)
        assert alias.exact and alias.candidates[0].title == "demokit.make_thing", ref
    found = reader.search("grow the thing by a few widgets", limit=5)
    titles = [n.dims.get("title") for n in found.nodes]
    assert "demokit.Thing.grow" in titles or "demokit.Thing" in titles
    assert not (site / MARKER).exists()


@pytest.mark.skipif(
    not any((Path(p) / "httpx" / "__init__.py").is_file() for p in sys.path),
    reason="httpx is not installed here",
)
def test_a_real_installed_package() -> None:
    sp = next(Path(p) for p in sys.path if (Path(p) / "httpx" / "__init__.py").is_file())
    api = read_package(sp, "httpx")
    assert api.source.dist.name == "httpx" and api.source.dist.version
    got = by_name(api.entries)
    client = got["httpx.Client"]
    assert client.kind == "class" and client.canonical == "httpx._client.Client"
    assert client.path == "httpx/_client.py"
    assert client.signature.startswith("class Client(*, auth: AuthTypes | None = None, ")
    assert "follow_redirects: bool = False" in client.signature
    assert got["httpx.get"].signature.startswith("def get(url: URL | str, *, ")
    assert got["httpx.get"].signature.endswith(") -> Response")
    assert got["httpx.HTTPError"].kind == "exception"
    assert "httpx.Client.get" in got and got["httpx.Client.get"].kind == "method"
