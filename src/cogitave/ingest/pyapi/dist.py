"""An installed distribution's files -> what it is: name, version, summary, README, and the
top-level packages it installs.

A source is either a folder of installed distributions (``site-packages``: it holds
``*.dist-info`` folders) with the distribution named, or one importable package folder (it
holds ``__init__.py``), whose distribution is the ``*.dist-info`` beside it that installs it
(``top_level.txt``, else ``RECORD``), when there is one. The name and version come from
``METADATA`` (never from a folder's name); its body is the long description, Markdown or
reStructuredText as ``Description-Content-Type`` says (no type: reStructuredText, as PyPI
reads it). Every file is read bounded (:data:`MAX_METADATA_BYTES`); nothing is imported.
"""

from __future__ import annotations

import email.parser
import email.policy
import os
from dataclasses import dataclass
from pathlib import Path

from packaging.utils import canonicalize_name

from cogitave.errors import InputError
from cogitave.ingest.confined import TreeReader

MAX_METADATA_BYTES = 2 * 1024 * 1024  # METADATA, top_level.txt, RECORD: larger is not read
MAX_DIST_INFOS = 20_000  # dist-info folders looked at in one site-packages


@dataclass(frozen=True)
class Distribution:
    """An installed distribution as its metadata says, and the packages it installs."""

    name: str  # as METADATA spells it ("Flask")
    version: str | None
    summary: str
    readme: str  # the long description ("" when none)
    readme_type: str  # "markdown", "rst" or "text"
    packages: tuple[str, ...]  # importable top-level names ("attr", "attrs")
    dist_info: Path | None  # the *.dist-info folder (None: a bare package folder)


@dataclass(frozen=True)
class PackageSource:
    """Where to read: the folder imports start from, and the distribution found there."""

    root: Path  # the search path (site-packages, or a package folder's parent)
    dist: Distribution


def is_package_source(path: Path) -> bool:
    """True for an importable package folder (``__init__.py``) or a folder holding
    ``*.dist-info`` folders (a ``site-packages``)."""
    if not path.is_dir():
        return False
    if (path / "__init__.py").is_file() or (path / "__init__.pyi").is_file():
        return True
    return bool(_dist_infos(path, limit=1))


def locate(path: Path, distribution: str | None = None) -> PackageSource:
    """The distribution ``path`` holds (see the module doc); an :class:`InputError` when the
    folder is neither, or names no distribution of that name."""
    path = Path(os.path.abspath(path))
    if (path / "__init__.py").is_file() or (path / "__init__.pyi").is_file():
        root = path.parent
        info = _info_for_package(root, path.name, distribution)
        if info is None:
            name = distribution or path.name
            bare = Distribution(name, None, "", "", "text", (path.name,), None)
            return PackageSource(root, bare)
        dist = read_dist_info(info)
        if path.name not in dist.packages:
            dist = _with_package(dist, path.name)
        return PackageSource(root, dist)
    if not distribution:
        raise InputError(
            f"{path} holds installed distributions: name the one to read with --library NAME"
        )
    info = _find_dist_info(path, distribution)
    if info is None:
        raise InputError(
            f"no distribution {distribution!r} installed in {path} (no "
            f"{canonicalize_name(distribution).replace('-', '_')}-*.dist-info folder)"
        )
    return PackageSource(path, read_dist_info(info))


def distribution_of(root: Path, package: str) -> Distribution:
    """The distribution that installs the top-level ``package`` in ``root``, with every
    package it installs (one may re-export another's names); a bare one of that package
    alone when no ``*.dist-info`` says."""
    info = _info_for_package(root, package, None)
    if info is not None:
        dist = read_dist_info(info)
        if package in dist.packages:
            return dist
        return _with_package(dist, package)
    return Distribution(package, None, "", "", "text", (package,), None)


def read_dist_info(info: Path) -> Distribution:
    """The distribution a ``*.dist-info`` folder describes."""
    text = _read(info / "METADATA") or _read(info / "PKG-INFO") or ""
    msg = email.parser.Parser(policy=email.policy.compat32).parsestr(text)
    folder_name = info.name.removesuffix(".dist-info").split("-", 1)[0]
    name = str(msg.get("Name") or folder_name).strip()
    version = str(msg.get("Version") or "").strip() or None
    body = msg.get_payload()
    readme = body if isinstance(body, str) else ""
    if not readme.strip():
        readme = str(msg.get("Description") or "")
    ctype = str(msg.get("Description-Content-Type") or "").lower()
    kind = "markdown" if "markdown" in ctype else "text" if "text/plain" in ctype else "rst"
    return Distribution(
        name=name,
        version=version,
        summary=str(msg.get("Summary") or "").strip(),
        readme=readme.strip("\n"),
        readme_type=kind,
        packages=_packages(info, name),
        dist_info=info,
    )


def _with_package(dist: Distribution, package: str) -> Distribution:
    """The distribution read for one of its packages: that package alone."""
    return Distribution(
        dist.name, dist.version, dist.summary, dist.readme, dist.readme_type, (package,),
        dist.dist_info,
    )  # fmt: skip


def _packages(info: Path, name: str) -> tuple[str, ...]:
    """The importable top-level names a distribution installs: ``top_level.txt``, else the
    first parts of the Python files ``RECORD`` lists, else its name as a module name."""
    root = info.parent
    listed = _read(info / "top_level.txt")
    names: list[str] = []
    if listed:
        names = [n.strip().split("/")[0] for n in listed.splitlines() if n.strip()]
    else:
        for row in (_read(info / "RECORD") or "").splitlines():
            file = row.split(",", 1)[0]
            first, _, rest = file.partition("/")
            if not file.endswith((".py", ".pyi")) or first.startswith(".."):
                continue
            if first.endswith((".dist-info", ".data")) or first == "__pycache__":
                continue
            names.append(first if rest else first.rsplit(".", 1)[0])
    found = [n for n in dict.fromkeys(names) if n.isidentifier() and _importable(root, n)]
    if not found:
        guess = canonicalize_name(name).replace("-", "_")
        found = [guess] if _importable(root, guess) else []
    return tuple(sorted(found))


def _importable(root: Path, name: str) -> bool:
    """A package folder or a module file of that name under ``root``."""
    return (
        (root / name / "__init__.py").is_file()
        or (root / name / "__init__.pyi").is_file()
        or (root / f"{name}.py").is_file()
        or (root / f"{name}.pyi").is_file()
    )


def _find_dist_info(root: Path, distribution: str) -> Path | None:
    """The ``*.dist-info`` folder of ``distribution`` in ``root`` (names compared as PEP 503
    normalises them)."""
    want = canonicalize_name(distribution)
    for info in _dist_infos(root):
        if canonicalize_name(info.name.split("-", 1)[0]) == want:
            return info
    return None


def _info_for_package(root: Path, package: str, distribution: str | None) -> Path | None:
    """The ``*.dist-info`` in ``root`` that installs ``package``: the one named
    ``distribution`` (or like the package), else one whose ``top_level.txt`` lists it."""
    for name in (distribution, package):
        if name and (info := _find_dist_info(root, name)) is not None:
            return info
    for info in _dist_infos(root):
        listed = _read(info / "top_level.txt") or ""
        if package in (n.strip() for n in listed.splitlines()):
            return info
    return None


def _dist_infos(root: Path, limit: int = MAX_DIST_INFOS) -> list[Path]:
    """The ``*.dist-info`` folders of ``root``, sorted, at most ``limit``."""
    out: list[Path] = []
    try:
        with os.scandir(root) as it:
            for entry in it:
                if entry.name.endswith(".dist-info") and entry.is_dir(follow_symlinks=False):
                    out.append(Path(entry.path))
                    if len(out) >= limit:
                        break
    except OSError:
        return []
    return sorted(out)


def _read(file: Path) -> str | None:
    """A small text file of a distribution's metadata (None: missing, not a regular file,
    a link out of its folder, too large), through the confined reader; bad UTF-8 replaced."""
    try:
        data = TreeReader(file.parent, max_bytes=MAX_METADATA_BYTES).read_bytes(file)
    except OSError:
        return None
    return data.decode("utf-8", errors="replace") if data is not None else None
