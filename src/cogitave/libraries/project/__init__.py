"""A project's dependencies, read from its manifests and lockfiles, and the held docs version that
fits the version a project uses.

Reading (:func:`read_project`) looks at the files directly in the project folder, plus the files a
``requirements*.txt`` includes with ``-r`` from inside the folder, plus the ``pyproject.toml`` and
``package.json`` of each workspace member the root declares (uv ``[tool.uv.workspace]``, npm,
yarn and bun ``workspaces``, ``pnpm-workspace.yaml``; members inside the folder only, the
members' own packages are not dependencies); other nested projects are not read.

Python manifests: ``pyproject.toml`` (PEP 621 ``[project] dependencies`` and
``optional-dependencies``, PEP 735 ``[dependency-groups]``, Poetry ``[tool.poetry.dependencies]``,
``dev-dependencies`` and ``[tool.poetry.group.*]``, PDM ``[tool.pdm.dev-dependencies]``, uv
``[tool.uv] dev-dependencies``), ``requirements*.txt`` and ``Pipfile``. Python lockfiles, in order:
``uv.lock``, ``poetry.lock``, ``pdm.lock``, ``Pipfile.lock``.

npm manifest: ``package.json`` (``dependencies``, ``optionalDependencies``, ``peerDependencies``,
``devDependencies``). npm lockfiles, in order: ``npm-shrinkwrap.json`` and ``package-lock.json``
(v1 ``dependencies``, v2/v3 ``packages``), ``pnpm-lock.yaml`` (v6 to v9), ``yarn.lock`` (v1 and
berry), ``bun.lock``.

How they combine, per ecosystem:

- When a manifest declares dependencies, those are the dependencies reported (direct ones only);
  each takes its version from the first lockfile, in the order above, that installs it.
  With no lockfile entry, an exact pin in a manifest (``==1.2.3``, Poetry ``1.2.3``, npm
  ``1.2.3``) is the installed version; otherwise ``version`` is None and ``specifier`` keeps the
  manifest's range.
- With lockfiles alone: the direct dependencies where the format records them (``uv.lock``'s
  project package, ``package-lock.json``'s root package, ``pnpm-lock.yaml``'s ``importers['.']``,
  a yarn berry lockfile's root workspace), else every package the lockfile holds.
- A package declared several times: the declarations whose environment marker holds under this
  interpreter win (``numpy==1.24; python_version<"3.9"`` next to ``numpy==1.26; ...``); it is a
  dev dependency only when every declaration is (dev groups, ``devDependencies``, extras and
  requirements files named for dev, test, lint, docs or typing).
- A file that cannot be read (unreadable, malformed, wrong types) is one line in ``warnings`` and
  contributes nothing; the other files are still read. A requirements line that names a package
  whose version cannot be known (an editable install, a URL without a wheel or sdist file name)
  is skipped with a warning naming the file and line.

Matching (:func:`match_version`) picks the held docs version for a dependency; its docstring has
the rules.

One module per part: :mod:`~cogitave.libraries.project.model` (what reading gives:
:class:`Dependency`, :class:`ProjectDeps`, :class:`VersionMatch`, :func:`normalise`),
:mod:`~cogitave.libraries.project.reading` (one reading of a folder: the confined reader, the
shared TOML/JSON/YAML helpers, workspace members, declarations and lockfiles -> dependencies),
:mod:`~cogitave.libraries.project.python` and :mod:`~cogitave.libraries.project.npm` (each
ecosystem's manifests and lockfiles -> declarations and locked versions; a new lockfile format is
one reader and one entry in that module's table) and :mod:`~cogitave.libraries.project.versions`
(a dependency and held versions -> the one to read). This package's :func:`read_project` says
which files are read, in which order.
"""

from __future__ import annotations

from pathlib import Path

from cogitave.errors import InputError
from cogitave.libraries.project.model import (
    Dependency,
    Ecosystem,
    Match,
    ProjectDeps,
    VersionMatch,
    normalise,
)
from cogitave.libraries.project.npm import _NPM_LOCKS, _read_package_json, _read_pnpm_workspace
from cogitave.libraries.project.python import (
    _PYTHON_LOCKS,
    _read_pipfile,
    _read_pyproject,
    _read_requirements,
)
from cogitave.libraries.project.reading import (
    MAX_FILE_BYTES,
    MAX_MEMBERS,
    MAX_REASON,
    _declared,
    _is_dev_name,
    _locked_only,
    _members,
    _Project,
)
from cogitave.libraries.project.versions import TAGS, match_version

__all__ = [
    "MAX_FILE_BYTES",
    "MAX_MEMBERS",
    "MAX_REASON",
    "TAGS",
    "Dependency",
    "Ecosystem",
    "Match",
    "ProjectDeps",
    "VersionMatch",
    "match_version",
    "normalise",
    "read_project",
]


def read_project(folder: Path) -> ProjectDeps:
    """The dependencies of the project in ``folder``, read from its manifests and lockfiles (the
    module docstring lists the formats and how they combine).

    Never raises for the content of a file: an unreadable or malformed file is one line in
    ``warnings``. Raises :class:`InputError` when ``folder`` is not an existing folder.
    """
    folder = Path(folder)
    if not folder.exists():
        raise InputError(f"project folder not found: {folder}")
    if not folder.is_dir():
        raise InputError(f"not a folder: {folder}")
    project = _Project(folder)
    project.read("pyproject.toml", _read_pyproject)
    seen: set[Path] = set()
    # runtime requirement files first, so a file both include is read as a runtime one
    for path in sorted(folder.glob("requirements*.txt"), key=lambda p: (_is_dev_name(p.stem), p)):
        if path.resolve() not in seen:
            dev = _is_dev_name(path.stem)
            project.read_path(path, lambda p, f, r, d=dev: _read_requirements(p, f, r, d, seen))
    project.read("Pipfile", _read_pipfile)
    for name, reader in _PYTHON_LOCKS:
        project.read(name, reader)
    project.read("package.json", _read_package_json)
    project.read("pnpm-workspace.yaml", _read_pnpm_workspace)
    for member in _members(project):
        for name, reader in (
            ("pyproject.toml", _read_pyproject),
            ("package.json", _read_package_json),
        ):
            if (member / name).is_file():
                project.read_path(member / name, reader)
    project.decls = [d for d in project.decls if normalise(d.name, d.ecosystem) not in project.own]
    for name, reader in _NPM_LOCKS:
        project.read(name, reader)

    dependencies: list[Dependency] = []
    for ecosystem in ("python", "npm"):
        decls = [d for d in project.decls if d.ecosystem == ecosystem]
        locks = [lock for lock in project.locks if lock.ecosystem == ecosystem]
        if decls:
            dependencies.extend(_declared(decls, locks))
        else:
            dependencies.extend(_locked_only(locks))
    dependencies.sort(key=lambda d: (d.ecosystem, d.key))
    return ProjectDeps(tuple(dependencies), tuple(project.files), tuple(project.warnings))
