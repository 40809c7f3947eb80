"""A Sphinx tree: ``conf.py`` (sources) or a built tree's ``_sources`` -> a
:class:`~cogitave.ingest.docs.site.Site`.

Read from ``conf.py`` without running it: ``html_baseurl``, ``master_doc``/``root_doc``, MyST
(``myst`` named: Markdown pages too), ``exclude_patterns`` and ``version``/``release`` (what
``|version|`` and ``|release|`` show) from its literal assignments.
A built tree is read from its ``_sources/*.rst.txt``.
"""

from __future__ import annotations

import ast
from pathlib import Path

from cogitave.ingest.confined import TreeReader
from cogitave.ingest.docs.jsconfig import read_text, setting
from cogitave.ingest.docs.site import Site
from cogitave.ingest.globs import compile_globs

SPHINX_DIRS = ("", "source", "doc", "docs", "Doc", "docs/source", "doc/source")


def sphinx_exclude_patterns(conf: str) -> list[str] | None:
    """``exclude_patterns`` of a ``conf.py``, from its literal assignments (``=``, ``+=``,
    ``.extend``/``.append``) at module level; None when it is computed some other way."""
    try:
        tree = ast.parse(conf)
    except SyntaxError:
        return None
    out: list[str] = []
    for node in tree.body:
        value: ast.expr | None = None
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "exclude_patterns" for t in node.targets
        ):
            out, value = [], node.value
        elif (
            isinstance(node, ast.AugAssign)
            and isinstance(node.target, ast.Name)
            and node.target.id == "exclude_patterns"
        ):
            value = node.value
        elif (
            isinstance(node, ast.Expr)
            and isinstance(node.value, ast.Call)
            and isinstance(node.value.func, ast.Attribute)
            and isinstance(node.value.func.value, ast.Name)
            and node.value.func.value.id == "exclude_patterns"
            and node.value.func.attr in ("extend", "append")
            and len(node.value.args) == 1
        ):
            arg = node.value.args[0]
            value = ast.List([arg], ast.Load()) if node.value.func.attr == "append" else arg
        if value is None:
            continue
        try:
            items = ast.literal_eval(value)
        except ValueError:
            return None
        if not isinstance(items, list | tuple) or not all(isinstance(x, str) for x in items):
            return None
        out.extend(items)
    return out


def sphinx_substitutions(conf: str) -> dict[str, str]:
    """``version`` and ``release`` of a ``conf.py``, where a module-level assignment sets
    them to a string literal (or one to the other: ``release = version``); a computed value
    (``release = get_version("x")``) is left out."""
    try:
        tree = ast.parse(conf)
    except SyntaxError:
        return {}
    out: dict[str, str] = {}
    for node in tree.body:
        if not isinstance(node, ast.Assign):
            continue
        for target in node.targets:
            if not isinstance(target, ast.Name) or target.id not in ("version", "release"):
                continue
            value = node.value
            if isinstance(value, ast.Constant) and isinstance(value.value, str):
                out[target.id] = value.value
            elif isinstance(value, ast.Name) and value.id in out:
                out[target.id] = out[value.id]
            else:
                out.pop(target.id, None)  # computed: what it holds is not known here
    return out


_PROJECT_FILES = ("pyproject.toml", "setup.py", "setup.cfg", ".git")


def autodoc_paths(tree: Path, conf_dir: Path) -> list[Path]:
    """Where autodoc's objects are read from: the tree and ``conf.py``'s folder, and the
    project holding the docs (the nearest of two folders up with ``pyproject.toml``,
    ``setup.py``, ``setup.cfg`` or ``.git``) with its ``src/`` — as a docs build that installs
    the package would find it. Nothing is imported: the source is read
    (:mod:`cogitave.ingest.pyapi`)."""
    out = [conf_dir, tree, conf_dir / "src", tree / "src"]
    for up in (conf_dir.parent, conf_dir.parent.parent):
        if any((up / f).exists() for f in _PROJECT_FILES):
            out += [up / "src", up]
            break
    return list(dict.fromkeys(p.resolve() for p in out if p.is_dir()))


def detect_sphinx(path: Path, reader: TreeReader) -> Site | None:
    """A Sphinx source tree (``conf.py``) or a built one (``_sources/*.rst.txt``)."""
    for rel in SPHINX_DIRS:
        folder = path / rel if rel else path
        if reader.is_file(folder / "conf.py"):
            site = Site("sphinx", path, folder, "sphinx", config_dir=folder)
            conf = read_text(reader, folder / "conf.py")
            # MyST sites mix Markdown pages in; they follow the same .html URLs.
            site.suffixes = (".rst", ".md") if "myst" in conf else (".rst",)
            site.site_url = setting(conf, "html_baseurl") or ""
            master = setting(conf, "master_doc") or setting(conf, "root_doc") or "index"
            site.root_doc = master
            site.substitutions = sphinx_substitutions(conf)
            if "autodoc" in conf or "automodapi" in conf or "autoapi" in conf:
                from cogitave.ingest.pyapi.read import ApiIndex

                site.api = ApiIndex(autodoc_paths(path, folder))
            patterns = sphinx_exclude_patterns(conf)
            if patterns is None:
                site.notes.append(
                    "exclude_patterns: conf.py computes it or does not parse; not applied"
                )
            elif patterns:
                where = f"{folder / 'conf.py'}: exclude_patterns"
                site.excludes.globs["exclude_patterns"] = compile_globs(patterns, where)
            return site
    for folder in (path, path / "_sources", path / "html" / "_sources"):
        if folder.name == "_sources" and reader.is_dir(folder):
            site = Site("sphinx", path, folder, "sphinx")
            site.suffixes = (".rst.txt",)
            site.notes.append("built Sphinx tree: reading _sources/*.rst.txt")
            return site
    return None
