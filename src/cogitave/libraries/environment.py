"""A project's environment -> what is installed in it: a Python distribution's
``*.dist-info`` and version, an npm package's folder and version.

The environment is the project's own, found without running anything: ``.venv`` and ``venv``
in the project folder, then ``$VIRTUAL_ENV``; its ``lib/python*/site-packages`` (or
``Lib/site-packages``) holds the Python distributions, named and versioned by their
``METADATA`` (:func:`~cogitave.ingest.pyapi.dist.read_dist_info`, never by a folder's name);
the project's ``node_modules`` holds the npm packages, each versioned by its
``package.json``. Every file is read bounded; a symlink out of the environment is not
followed for a package's own files.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

from packaging.utils import canonicalize_name

from cogitave.ingest.confined import TreeReader
from cogitave.libraries.project import Dependency

MAX_PACKAGE_JSON = 1024 * 1024
"""A ``package.json`` larger than this is not read."""
MAX_SITE_DIRS = 8
"""``site-packages`` folders looked at in one environment."""


@dataclass(frozen=True)
class Installed:
    """A package found installed: where it is, its version, what it is."""

    name: str  # as its metadata spells it
    version: str | None
    path: Path  # a site-packages (Python) or the package's folder (npm)
    marker: Path  # the *.dist-info folder, or the package.json


@dataclass(frozen=True)
class Environment:
    """Where a project's packages are installed (either may be empty)."""

    site_packages: tuple[Path, ...]
    node_modules: Path | None

    def describe(self) -> str:
        """One line: the folders looked in."""
        parts = [str(p) for p in self.site_packages]
        if self.node_modules is not None:
            parts.append(str(self.node_modules))
        return ", ".join(parts) or "no .venv, venv, $VIRTUAL_ENV or node_modules"

    def find(self, dep: Dependency) -> Installed | None:
        """The installed package ``dep`` names (its ecosystem's), or None."""
        if dep.ecosystem == "npm":
            return self._npm(dep.name)
        for site in self.site_packages:
            got = _python(site, dep.name)
            if got is not None:
                return got
        return None

    def _npm(self, name: str) -> Installed | None:
        if self.node_modules is None or not _npm_name_ok(name):
            return None
        folder = self.node_modules / name
        manifest = folder / "package.json"
        data = _read_json(manifest, self.node_modules)
        if data is None:
            return None
        version = data.get("version")
        shown = data.get("name")
        return Installed(
            shown if isinstance(shown, str) and shown else name,
            version if isinstance(version, str) and 0 < len(version) <= 100 else None,
            folder,
            manifest,
        )


def environment(folder: Path) -> Environment:
    """The environment of the project in ``folder`` (see the module doc)."""
    venvs = [folder / ".venv", folder / "venv"]
    given = os.environ.get("VIRTUAL_ENV")
    if given:
        venvs.append(Path(given))
    sites: list[Path] = []
    for venv in venvs:
        for site in _site_dirs(venv):
            if site not in sites and len(sites) < MAX_SITE_DIRS:
                sites.append(site)
    modules = folder / "node_modules"
    return Environment(tuple(sites), modules if modules.is_dir() else None)


def _site_dirs(venv: Path) -> list[Path]:
    """The ``site-packages`` folders of a virtual environment."""
    found: list[Path] = []
    lib = venv / "lib"
    try:
        names = sorted(os.listdir(lib)) if lib.is_dir() else []
    except OSError:
        names = []
    for name in names[:32]:
        if name.startswith("python"):
            site = lib / name / "site-packages"
            if site.is_dir():
                found.append(site)
    win = venv / "Lib" / "site-packages"
    if win.is_dir():
        found.append(win)
    return found


def _python(site: Path, name: str) -> Installed | None:
    """The distribution ``name`` installed in ``site``: its ``*.dist-info`` (names compared
    as PEP 503 normalises them), its version from ``METADATA``."""
    from cogitave.errors import InputError
    from cogitave.ingest.pyapi.dist import locate

    try:
        dist = locate(site, name).dist
    except InputError:
        return None
    if dist.dist_info is None or canonicalize_name(dist.name) != canonicalize_name(name):
        return None
    return Installed(dist.name, dist.version, site, dist.dist_info)


def _npm_name_ok(name: str) -> bool:
    """A name that stays one package folder inside ``node_modules`` (``pkg`` or
    ``@scope/pkg``)."""
    parts = name.split("/")
    if len(name) > 214 or not 1 <= len(parts) <= 2 or (len(parts) == 2 and name[0] != "@"):
        return False
    return all(p and p not in (".", "..") and "\\" not in p for p in parts)


def _read_json(path: Path, root: Path) -> dict[str, object] | None:
    """A small JSON object file (None: missing, too large, not an object)."""
    try:  # a link may point into node_modules' own store (pnpm), never out of ``root``
        raw = TreeReader(root, max_bytes=MAX_PACKAGE_JSON).read_bytes(path)
        if raw is None:
            return None
        data = json.loads(raw.decode("utf-8", errors="replace"))
    except (OSError, ValueError, RecursionError):
        return None
    return data if isinstance(data, dict) else None
