"""What reading a project gives: :class:`Dependency` (one dependency, its installed version
and range), :class:`ProjectDeps` (a project's dependencies, the files read, the warnings) and
:class:`VersionMatch` (the held docs version chosen for a dependency, and why), plus
:func:`normalise` (a package name -> the key libraries are matched by)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from packaging.utils import canonicalize_name

Ecosystem = Literal["python", "npm"]
Match = Literal["exact", "nearest", "range", "latest", "none"]


@dataclass(frozen=True)
class Dependency:
    """One dependency of a project, as its manifests and lockfiles describe it."""

    name: str  # as the manifest spells it ("FastAPI", "@tanstack/react-query")
    key: str  # normalise(name, ecosystem): the key libraries are matched by
    ecosystem: Ecosystem
    version: str | None  # the installed version: the lockfile's, else an exact manifest pin
    specifier: str | None  # the manifest's range (">=0.100,<1", "^18.2.0"), when declared
    source: str  # the file its version was read from, else the manifest declaring it
    dev: bool = False  # a dev/test-only dependency (dev groups, devDependencies)


@dataclass(frozen=True)
class ProjectDeps:
    """What :func:`read_project` found in a project folder."""

    dependencies: tuple[Dependency, ...]  # one per (ecosystem, key): the lockfile's version wins
    files: tuple[str, ...]  # the files read, relative to the project folder
    warnings: tuple[str, ...]  # one line each: a file that could not be read, and why


@dataclass(frozen=True)
class VersionMatch:
    """The held docs version chosen for a dependency, and why."""

    wanted: str | None  # what the project uses (locked version, else its range)
    held: str | None  # the version of the docs to read (None: no held version fits)
    match: Match
    reason: str  # one line for a person or an agent


def normalise(name: str, ecosystem: Ecosystem) -> str:
    """The key a library is matched by: PEP 503 for python (``Foo_Bar`` -> ``foo-bar``), lower
    case with the scope kept for npm (``@TanStack/Query`` -> ``@tanstack/query``)."""
    if ecosystem == "python":
        return canonicalize_name(name.strip())
    if ecosystem == "npm":
        return name.strip().lower()
    raise ValueError(f"unknown ecosystem {ecosystem!r}")
