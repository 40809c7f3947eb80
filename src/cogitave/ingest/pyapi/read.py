"""A package folder or a ``site-packages`` + a distribution name -> its public API
(:func:`read_package`); dotted names -> their entries, found or not (:func:`api_for`).

Both read statically and bounded (:mod:`~cogitave.ingest.pyapi.load`): nothing is imported.
:func:`api_for` is what fills the gaps of a docs tree whose reference is generated at build
time (``.. autoclass:: click.Command``, ``.. automodule:: jinja2``): each name is looked up
among the public names, aliases and defining paths of the package it starts with, read from
the first of ``search_paths`` that holds it (once per package).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from packaging.utils import canonicalize_name

from cogitave.ingest.pyapi.dist import PackageSource, distribution_of, locate
from cogitave.ingest.pyapi.entries import ApiDoc, collect
from cogitave.ingest.pyapi.load import Limits, Skipped, load_packages, quiet


@dataclass
class PackageApi:
    """What one read of a distribution gives."""

    source: PackageSource
    entries: list[ApiDoc] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    modules_read: int = 0
    unresolved: int = 0  # re-exported names not found in its modules (another distribution's)


def read_package(
    path: str | Path, distribution: str | None = None, limits: Limits | None = None
) -> PackageApi:
    """The public API of the distribution at ``path``: an importable package folder, or a
    folder of installed distributions (``site-packages``) with ``distribution`` naming
    one. An :class:`~cogitave.errors.InputError` when ``path`` is neither."""
    source = locate(Path(path), distribution)
    return read_source_api(source, limits)


def read_source_api(source: PackageSource, limits: Limits | None = None) -> PackageApi:
    """The public API of the packages of a located distribution."""
    limits = limits or Limits()
    packages = source.dist.packages
    loaded = load_packages(source.root, packages, limits)
    with quiet():
        got = collect(loaded, _preferred(source.dist.name, packages), limits)
    return PackageApi(
        source, got.entries, [*loaded.skipped, *got.skipped], loaded.modules_read, got.unresolved
    )


@dataclass(frozen=True)
class ApiLookup:
    """A dotted name and the entry it names (None: not found, ``reason`` says why)."""

    name: str
    entry: ApiDoc | None
    reason: str = ""


def api_for(
    names: Sequence[str], search_paths: Sequence[Path], limits: Limits | None = None
) -> list[ApiLookup]:
    """One :class:`ApiLookup` per name, in order (see the module doc)."""
    index: dict[str, dict[str, ApiDoc] | str] = {}  # top-level package -> names, or why not
    out: list[ApiLookup] = []
    for written in names:
        name = written.strip().removesuffix("()")
        top = name.split(".", 1)[0]
        if not name or not all(part.isidentifier() for part in name.split(".")):
            out.append(ApiLookup(written, None, "not a dotted Python name"))
            continue
        if top not in index:
            index[top] = _index_package(top, search_paths, limits)
        found = index[top]
        if isinstance(found, str):
            out.append(ApiLookup(written, None, found))
        elif name in found:
            out.append(ApiLookup(written, found[name]))
        else:
            out.append(ApiLookup(written, None, f"no public object {name} in {top}"))
    return out


class ApiIndex:
    """Dotted names -> entries of the packages found under ``search_paths``, each package
    read once (the autodoc directives of a whole docs tree share one index)."""

    def __init__(self, search_paths: Sequence[Path], limits: Limits | None = None) -> None:
        self.search_paths = tuple(Path(p) for p in search_paths)
        self.limits = limits
        self._packages: dict[str, dict[str, ApiDoc] | str] = {}

    def lookup(self, written: str) -> ApiLookup:
        """The entry ``written`` names, or why there is none."""
        name = written.strip().removesuffix("()")
        if not name or not all(part.isidentifier() for part in name.split(".")):
            return ApiLookup(written, None, "not a dotted Python name")
        found = self._package(name.split(".", 1)[0])
        if isinstance(found, str):
            return ApiLookup(written, None, found)
        if name in found:
            return ApiLookup(written, found[name])
        return ApiLookup(written, None, f"no public object {name}")

    def members(self, entry: ApiDoc) -> list[ApiDoc]:
        """The documented members of a module (its module-level objects) or of a class (its
        methods and attributes), in source order."""
        found = self._package(entry.name.split(".", 1)[0])
        if isinstance(found, str):
            return []
        seen: set[int] = set()
        out: list[ApiDoc] = []
        for doc in found.values():
            if id(doc) in seen or doc is entry:
                continue
            if entry.kind == "module":
                belongs = doc.module == entry.name and not doc.parent and doc.kind != "module"
            else:
                belongs = doc.parent in (entry.name, entry.canonical)
            if belongs:
                seen.add(id(doc))
                out.append(doc)
        out.sort(key=lambda d: (d.path, d.line))
        return out

    def _package(self, top: str) -> dict[str, ApiDoc] | str:
        if top not in self._packages:
            self._packages[top] = _index_package(top, self.search_paths, self.limits)
        return self._packages[top]


def _index_package(
    top: str, search_paths: Sequence[Path], limits: Limits | None
) -> dict[str, ApiDoc] | str:
    """Every name (public, alias, defining path) of the package ``top`` -> its entry; a
    reason when no search path holds it."""
    for root in search_paths:
        root = Path(root)
        if not any(
            f.is_file()
            for f in (root / top / "__init__.py", root / top / "__init__.pyi", root / f"{top}.py")
        ):
            continue
        dist = distribution_of(root, top)
        api = read_source_api(PackageSource(root, dist), limits)
        names: dict[str, ApiDoc] = {}
        for entry in api.entries:
            names.setdefault(entry.name, entry)
        for entry in api.entries:
            for alias in entry.aliases:
                names.setdefault(alias, entry)
        return names
    shown = ", ".join(str(p) for p in search_paths) or "no search path"
    return f"no package {top} in {shown}"


def _preferred(name: str, packages: Sequence[str]) -> str:
    """The package whose names come first: the one named like the distribution."""
    want = canonicalize_name(name).replace("-", "_")
    return want if want in packages else (packages[0] if packages else "")
