"""A source tree -> the library it documents and the version: :func:`identify`, and the
versions of the docs a versioned tree holds: :func:`doc_versions`.

The name, first found of:

1. the site's config: MkDocs ``site_name``; Docusaurus, VitePress and Starlight ``title`` (the
   outermost one: not a navbar's or a locale's); Sphinx ``project`` (``conf.py``); Hugo
   ``title`` (else the default language's); a built Sphinx site's ``objects.inv`` project;
2. the nearest package at or above the docs root, inside the tree: ``pyproject.toml``
   (``[project]``, else ``[tool.poetry]``) or ``package.json`` (not one marked
   ``"private": true``: that is a site or a workspace, not the library);
3. the folder's name (a generic one, ``docs``, ``website``, ..., gives its parent's).

The version, first found of:

1. the site's config: Sphinx ``release`` (else ``version``); Docusaurus, the version served
   by default (``versions.json``, ``lastVersion``; the unreleased docs only when the config
   labels them); Hugo ``params.version`` (Docsy's); a built Sphinx site's ``objects.inv``
   version;
2. that package's version: ``[project] version``, or when it is dynamic, ``__version__`` (or
   the named attribute) in the file ``tool.hatch.version.path`` / ``tool.pdm.version.path`` /
   ``tool.setuptools.dynamic.version`` names, else in the package's ``__init__.py``,
   ``_version.py``, ``version.py`` or ``__about__.py``; ``package.json`` ``version`` (not a
   ``0.0.0`` placeholder);
3. the git tag of the checked-out commit (``v1.2.3`` and ``pkg@1.2.3`` give ``1.2.3``);
4. else None (the caller names it ``latest``).

The commit is the work tree's checked-out commit (:mod:`~cogitave.ingest.gitrepo`: read from
``.git`` as files, never by running git). Config files are read as text or data, never run
(``conf.py`` is parsed, not executed); every file goes through the tree's
:class:`~cogitave.ingest.confined.TreeReader`, so nothing outside the tree (or the folders
allowed outside it) is read, and what is refused is passed over.
"""

from __future__ import annotations

import ast
import json
import os
import re
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from cogitave.errors import IngestError
from cogitave.ingest.confined import TreeReader
from cogitave.ingest.docs import docusaurus, starlight, vitepress
from cogitave.ingest.docs.frontmatter import load_yaml
from cogitave.ingest.docs.hugo_urls import hugo_config
from cogitave.ingest.docs.jsconfig import config_file, object_body, outer_setting, setting
from cogitave.ingest.docs.layout import detect_site
from cogitave.ingest.docs.mkdocs import config_in
from cogitave.ingest.docs.site import DocVersion, Site
from cogitave.ingest.gitrepo import read_head
from cogitave.ingest.web.inventory import parse_inventory

# Folder names that say where docs are, not whose: the name is taken from the folder above.
GENERIC_FOLDERS = frozenset(
    {"docs", "doc", "documentation", "website", "site", "content", "src", "source", "en"}
    | {"www", "book", "guide", "manual"}
)
VERSION_FILES = ("__init__.py", "_version.py", "version.py", "__about__.py")
_VERSION = re.compile(r"^\d+(?:\.\d+)*(?:[-.+]?[0-9A-Za-z][0-9A-Za-z.+-]*)?$")


@dataclass(frozen=True)
class SourceIdentity:
    """The library a source documents, as its docs name it, and where each fact came from
    (``name_from``, ``version_from``: "mkdocs.yml site_name", "git tag v1.2.0"; "" when the
    version was not found)."""

    name: str | None  # the library's name as its docs spell it ("FastAPI", "Hugo")
    version: str | None  # the version the docs describe (None: not found)
    commit: str | None  # the checked-out git commit, when the tree is in a git work tree
    name_from: str
    version_from: str


@dataclass(frozen=True)
class _Found:
    value: str
    source: str


def identify(
    path: str | Path, *, allow_outside: Sequence[str | Path] = (), root: Path | None = None
) -> SourceIdentity:
    """The name, version and commit of the source at ``path`` (a docs tree, its config file,
    or any source folder or file): see the module doc for where each is read from. ``root``:
    the repository checkout ``path`` is a folder of (a clone's ``#docs``), whose package
    above the docs counts too."""
    source = Path(path)
    if not source.exists():
        raise IngestError(f"source not found: {source}")
    outside = [*allow_outside, root] if root is not None else list(allow_outside)
    reader = TreeReader.for_source(source, outside)
    try:
        site: Site | None = detect_site(source, reader)
    except (IngestError, OSError, UnicodeDecodeError):
        site = None  # a config that names no folder: the packages and git still tell
    name, version = _from_site(site, reader) if site is not None else (None, None)
    start = _inside(site.docs_root if site is not None else reader.given, reader)
    inv_name, inv_version = _inventory((start, reader.given), reader)
    name, version = name or inv_name, version or inv_version
    package = _package(start, reader, root)
    if name is None and package is not None and package[0] is not None:
        name = package[0]
    if version is None and package is not None:
        version = package[1]
    head = read_head(start, reader)
    if version is None and head is not None and head.tags:
        version = _tag_version(head.tags)
    name = name or _folder_name(reader.given)
    return SourceIdentity(
        name=name.value if name else None,
        version=version.value if version else None,
        commit=head.commit if head is not None else None,
        name_from=name.source if name else "",
        version_from=version.source if version else "",
    )


def doc_versions(
    path: str | Path, *, allow_outside: Sequence[str | Path] = ()
) -> tuple[DocVersion, ...]:
    """The versions of the docs the tree at ``path`` holds, as its site lists them (a
    Docusaurus ``versions.json`` and the unreleased docs: newest first), each with whether
    the site serves it by default and the URL path its pages are served under; () for a tree
    that holds one version (any other)."""
    source = Path(path)
    if not source.exists():
        raise IngestError(f"source not found: {source}")
    return detect_site(source, TreeReader.for_source(source, allow_outside)).versions


# -- the site's config ------------------------------------------------------------------------
def _from_site(site: Site, reader: TreeReader) -> tuple[_Found | None, _Found | None]:
    """(name, version) from the site's config."""
    folder = site.config_dir
    if site.shape == "mkdocs" and folder is not None:
        config = config_in(folder, reader)
        if config is None:
            return None, None
        return _found(_yaml(reader, config), "site_name", _shown(reader, config)), None
    if site.shape == "docusaurus" and folder is not None:
        config = config_file(reader, folder, docusaurus.CONFIGS)
        if config is None or site.version is None:
            return _js_title(reader, config), None
        if site.version in _released(reader, folder):
            where = f"{_shown(reader, folder / 'versions.json')} (served by default)"
        else:  # the unreleased docs, labelled by the config
            where = f"{_shown(reader, config)} versions.current"
        return _js_title(reader, config), _Found(site.version, where)
    if site.shape == "vitepress" and folder is not None:
        return _js_title(
            reader, config_file(reader, folder / ".vitepress", vitepress.CONFIGS)
        ), None
    if site.shape == "starlight" and folder is not None:
        return _js_title(reader, config_file(reader, folder, starlight.CONFIGS)), None
    if site.shape == "sphinx" and folder is not None and reader.is_file(folder / "conf.py"):
        conf = folder / "conf.py"
        values = _python_strings(_text(reader, conf) or "", ("project", "release", "version"))
        where = _shown(reader, conf)
        name = _Found(values["project"], f"{where} project") if values.get("project") else None
        key = "release" if values.get("release") else "version"
        version = _Found(values[key], f"{where} {key}") if values.get(key) else None
        return name, version
    if site.shape == "hugo":
        return _hugo(site, reader)
    return None, None


def _released(reader: TreeReader, folder: Path) -> set[str]:
    """The released versions' names of a Docusaurus site (its ``versions.json``)."""
    try:
        listed = json.loads(_text(reader, folder / "versions.json") or "null")
    except ValueError:
        return set()
    return {x for x in listed if isinstance(x, str)} if isinstance(listed, list) else set()


def _js_title(reader: TreeReader, config: Path | None) -> _Found | None:
    """A JS/TS config's outermost ``title`` (a Starlight ``title: { en: ... }`` gives its
    English, else its first, entry)."""
    if config is None:
        return None
    text = _text(reader, config) or ""
    title = outer_setting(text, "title")
    if title is None and (body := object_body(text, "title")) is not None:
        pairs = re.findall(r"(['\"]?)([\w-]+)\1\s*:\s*(['\"`])([^'\"`]*)\3", body)
        by_key = {key: value for _, key, _, value in pairs}
        title = by_key.get("en") or by_key.get("root") or (pairs[0][3] if pairs else None)
    return (
        _Found(title.strip(), f"{_shown(reader, config)} title")
        if title and title.strip()
        else None
    )


def _hugo(site: Site, reader: TreeReader) -> tuple[_Found | None, _Found | None]:
    """Hugo's ``title`` (else the default language's) and Docsy's ``params.version``."""
    config = hugo_config(site.base, reader)
    if not config and not reader.is_dir(site.base / "content"):  # the content folder given
        config = hugo_config(site.base.parent, reader)
    title = config.get("title")
    if not isinstance(title, str) or not title.strip():
        languages = config.get("languages")
        if isinstance(languages, Mapping) and languages:
            default = str(config.get("defaultcontentlanguage") or "en")
            chosen = languages.get(default) or next(iter(languages.values()))
            title = _get(chosen, "title")
    name = (
        _Found(title.strip(), "the Hugo config's title")
        if isinstance(title, str) and title.strip()
        else None
    )
    version = _get(config.get("params"), "version")
    found = _Found(version, "the Hugo config's params.version") if version else None
    return name, found


# -- the package ----------------------------------------------------------------------------
def _package(
    start: Path, reader: TreeReader, root: Path | None = None
) -> tuple[_Found | None, _Found | None] | None:
    """(name, version) of the nearest package at or above ``start``, inside the tree (up
    to ``root``, the checkout, when the tree is a folder of one)."""
    top = Path(os.path.abspath(root)) if root is not None else reader.given
    here = start
    while True:
        for found in (_pyproject(here, reader), _package_json(here, reader)):
            if found is not None:
                return found
        if here == top or not here.is_relative_to(top):
            return None
        here = here.parent


def _pyproject(folder: Path, reader: TreeReader) -> tuple[_Found | None, _Found | None] | None:
    file = folder / "pyproject.toml"
    try:
        data = tomllib.loads(_text(reader, file) or "")
    except tomllib.TOMLDecodeError:
        return None
    tool = data.get("tool") if isinstance(data.get("tool"), dict) else {}
    where = _shown(reader, file)
    for table, label in (
        (data.get("project"), "[project]"),
        (_get_map(tool, "poetry"), "[tool.poetry]"),
    ):
        if not isinstance(table, Mapping):
            continue
        name = table.get("name")
        if not isinstance(name, str) or not name.strip():
            continue
        found = _Found(name.strip(), f"{where} {label} name")
        version = table.get("version")
        if isinstance(version, str) and version.strip():
            return found, _Found(version.strip(), f"{where} {label} version")
        return found, _python_version(folder, name.strip(), tool, reader)
    return None


def _python_version(
    folder: Path, name: str, tool: Mapping[str, Any], reader: TreeReader
) -> _Found | None:
    """A dynamic version: the file the build backend reads it from, else the package's."""
    for backend in ("hatch", "pdm"):
        path = _get(_get_map(tool, backend), "version", "path")
        if path:
            found = _version_in(folder / path, ("__version__", "VERSION"), reader)
            if found is not None:
                return found
    dynamic = _get_map(_get_map(tool, "setuptools"), "dynamic").get("version")
    if isinstance(dynamic, Mapping):
        attr, files = dynamic.get("attr"), dynamic.get("file")
        if isinstance(attr, str) and "." in attr:
            module, _, variable = attr.rpartition(".")
            parts = module.split(".")
            for base in (folder, folder / "src"):
                for file in (
                    base.joinpath(*parts, "__init__.py"),
                    base.joinpath(*parts[:-1], parts[-1] + ".py"),
                ):
                    found = _version_in(file, (variable,), reader)
                    if found is not None:
                        return found
        files = [files] if isinstance(files, str) else files
        if isinstance(files, list) and files and isinstance(files[0], str):
            text = (_text(reader, folder / files[0]) or "").strip()
            if _VERSION.match(text):
                return _Found(text, f"{_shown(reader, folder / files[0])}")
    package = re.sub(r"[-.]+", "_", name).lower()
    for base in (folder / "src", folder):
        files = [base / package / f for f in VERSION_FILES] + [base / f"{package}.py"]
        for file in files:
            found = _version_in(file, ("__version__",), reader)
            if found is not None:
                return found
    return None


def _version_in(file: Path, names: Sequence[str], reader: TreeReader) -> _Found | None:
    """``<name> = "x"`` in a Python file (parsed, never run)."""
    if reader.locate(file) != "file":
        return None
    values = _python_strings(_text(reader, file) or "", names)
    for name in names:
        if values.get(name):
            return _Found(values[name], f"{_shown(reader, file)} {name}")
    return None


def _package_json(folder: Path, reader: TreeReader) -> tuple[_Found | None, _Found | None] | None:
    file = folder / "package.json"
    try:
        data = json.loads(_text(reader, file) or "null")
    except ValueError:
        return None
    if not isinstance(data, dict) or data.get("private") is True:
        return None
    where = _shown(reader, file)
    name, version = data.get("name"), data.get("version")
    found_name = (
        _Found(name.strip(), f"{where} name") if isinstance(name, str) and name.strip() else None
    )
    placeholder = isinstance(version, str) and re.match(r"^0\.0\.0(?:$|-)", version.strip())
    found_version = (
        _Found(version.strip(), f"{where} version")
        if isinstance(version, str) and version.strip() and not placeholder
        else None
    )
    if found_name is None and found_version is None:
        return None
    return found_name, found_version


# -- git and the folder -----------------------------------------------------------------------
def _inventory(folders: Sequence[Path], reader: TreeReader) -> tuple[_Found | None, _Found | None]:
    """(name, version) from a built Sphinx site's ``objects.inv`` in the first of ``folders``
    that holds one (a build's pages are read from its ``_sources/``; the file is above)."""
    files = [(f if os.path.isdir(f) else f.parent) / "objects.inv" for f in folders]
    file = next((f for f in files if reader.locate(f) == "file"), None)
    if file is None:
        return None, None
    try:
        data = reader.read_bytes(file)
    except OSError:
        return None, None
    inv = parse_inventory(data) if data else None
    if inv is None:
        return None, None
    where = _shown(reader, file)
    name = _Found(inv.project, f"{where} project") if inv.project else None
    ok = inv.version and _VERSION.match(inv.version.lstrip("vV"))
    version = _Found(inv.version.lstrip("vV"), f"{where} version") if ok else None
    return name, version


def _tag_version(tags: Sequence[str]) -> _Found | None:
    """The version a tag of the commit gives (``v1.2.3``, ``release-1.2``, ``pkg@1.2.3``):
    among several, an unprefixed one first, then the highest."""
    best: tuple[tuple[Any, ...], str, str] | None = None
    for tag in tags:
        rest, prefixed = tag, False
        if "@" in rest:
            rest, prefixed = rest.rsplit("@", 1)[1], True
        elif not re.match(r"^[vV]?\d", rest):
            m = re.match(r"^[A-Za-z][\w./]*?[-_/]([vV]?\d.*)$", rest)
            if m is None:
                continue
            rest, prefixed = m.group(1), True
        version = rest[1:] if rest[:1] in ("v", "V") else rest
        if not _VERSION.match(version):
            continue
        numbers = tuple(int(x) for x in re.findall(r"\d+", version.split("-")[0])[:6])
        key = (not prefixed, numbers, "-" not in version)
        if best is None or key > best[0]:
            best = (key, version, tag)
    return _Found(best[1], f"git tag {best[2]}") if best else None


def tag_version(tag: str) -> str:
    """The version a tag names (``v1.2.3`` -> ``1.2.3``), or the tag itself."""
    found = _tag_version([tag])
    return found.value if found else tag


def _folder_name(folder: Path) -> _Found | None:
    """The folder's name; a generic one (``docs``, ``website``) gives the folder above's."""
    here = Path(os.path.abspath(folder))
    for candidate in (here, *here.parents):
        if candidate.name and candidate.name.lower() not in GENERIC_FOLDERS:
            how = (
                "the folder's name"
                if candidate == here
                else f"the name of the folder above {here.name}/"
            )
            return _Found(candidate.name, how)
    return _Found(here.name, "the folder's name") if here.name else None


# -- plumbing -----------------------------------------------------------------------------
def _inside(folder: Path, reader: TreeReader) -> Path:
    """``folder`` when it is in the tree named, else the tree's folder."""
    here = Path(os.path.abspath(folder))
    return here if here.is_relative_to(reader.given) else reader.given


def _python_strings(text: str, names: Sequence[str]) -> dict[str, str]:
    """The string literals a Python file assigns to ``names`` at module level (the last
    one wins, as when it runs; ``a = b = "x"`` and annotated assignments count); a file that
    does not parse is read with ``name = "..."`` patterns."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return {n: v for n in names if (v := setting(text, n)) is not None}
    out: dict[str, str] = {}
    for node in tree.body:
        targets: list[ast.expr] = []
        if isinstance(node, ast.Assign):
            targets, value = node.targets, node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            targets, value = [node.target], node.value
        else:
            continue
        for target in targets:
            if isinstance(target, ast.Name) and target.id in names:
                if isinstance(value, ast.Constant) and isinstance(value.value, str):
                    out[target.id] = value.value.strip()
                else:
                    out.pop(target.id, None)  # computed: not known without running it
    return out


def _yaml(reader: TreeReader, file: Path) -> Any:
    try:
        return load_yaml(_text(reader, file) or "")
    except yaml.YAMLError:
        return None


def _found(data: Any, key: str, where: str) -> _Found | None:
    value = data.get(key) if isinstance(data, Mapping) else None
    if isinstance(value, str | int | float) and str(value).strip():
        return _Found(str(value).strip(), f"{where} {key}")
    return None


def _get(data: Any, *keys: str) -> str | None:
    """A nested string value (keys matched without case, as Hugo does)."""
    for key in keys:
        if not isinstance(data, Mapping):
            return None
        data = next((v for k, v in data.items() if str(k).lower() == key), None)
    if isinstance(data, int | float) and not isinstance(data, bool):
        data = str(data)
    return data.strip() if isinstance(data, str) and data.strip() else None


def _get_map(data: Any, key: str) -> Mapping[str, Any]:
    value = data.get(key) if isinstance(data, Mapping) else None
    return value if isinstance(value, Mapping) else {}


def _text(reader: TreeReader, file: Path) -> str | None:
    """A file of the tree as text; None when it is missing, outside, unreadable or not
    UTF-8 (passed over quietly: nothing here is an error)."""
    if reader.locate(file) != "file":
        return None
    try:
        return reader.read_text(file)
    except (OSError, UnicodeDecodeError):
        return None


def _shown(reader: TreeReader, file: Path) -> str:
    return reader.shown(file)
