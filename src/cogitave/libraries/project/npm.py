"""npm manifests and lockfiles -> declarations and locked versions on a
:class:`~cogitave.libraries.project.reading._Project`: ``package.json`` (its sections, aliases
and workspaces), ``pnpm-workspace.yaml``, and the lockfiles in the order their versions are
taken (:data:`_NPM_LOCKS`: ``npm-shrinkwrap.json``, ``package-lock.json``, ``pnpm-lock.yaml``,
``yarn.lock`` v1 and berry, ``bun.lock``)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from cogitave.libraries.project.model import normalise
from cogitave.libraries.project.reading import (
    _Decl,
    _json,
    _Lock,
    _Locked,
    _Malformed,
    _opt_table,
    _Project,
    _str,
    _strings,
    _table,
    _text,
    _yaml,
)

_NPM_SECTIONS = (
    ("dependencies", False),
    ("optionalDependencies", False),
    ("peerDependencies", False),
    ("devDependencies", True),
)


def _npm_alias(name: str, spec: str) -> tuple[str, str]:
    """An alias ``"foo": "npm:bar@^1"`` installs package ``bar`` (range ``^1``) as ``foo``."""
    if spec.startswith("npm:"):
        rest = spec[4:]
        at = rest.find("@", 1)
        if at > 0:
            return rest[:at], rest[at + 1 :].removeprefix("npm:")
        return name, rest
    return name, spec


def _npm_pin(spec: str | None) -> str | None:
    if spec is None or not _EXACT_SEMVER.fullmatch(spec.strip()):
        return None
    return spec.strip().lstrip("=v").strip()


_EXACT_SEMVER = re.compile(r"=?\s*v?\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?")


def _read_package_json(project: _Project, path: Path, rel: str) -> None:
    data = _json(project, path)
    if isinstance(data.get("name"), str):
        project.own.add(normalise(data["name"], "npm"))
    if rel == "package.json":  # npm, yarn and bun workspaces: a list or {packages: [...]}
        spaces = data.get("workspaces", [])
        if isinstance(spaces, dict):
            spaces = spaces.get("packages", [])
        project.member_globs += _strings(spaces, "workspaces")
    for section, dev in _NPM_SECTIONS:
        for install, spec in _opt_table(data, section, "").items():
            name, range_ = _npm_alias(install, _str(spec, f"{section} {install}").strip())
            specifier = None if range_ in ("", "*") else range_
            decl = _Decl(name, "npm", specifier, _npm_pin(specifier), rel, dev, install=install)
            project.decls.append(decl)


def _npm_installed(version: str) -> str | None:
    """A lockfile's version when it is one (not ``file:``, ``git+...``, ``github:...``)."""
    return version.strip() if _EXACT_SEMVER.fullmatch(version.strip()) else None


def _read_package_lock(project: _Project, path: Path, rel: str) -> None:
    """``package-lock.json`` / ``npm-shrinkwrap.json``: v2/v3 ``packages`` (top-level installs,
    ``node_modules/<name>``; the root package lists the direct dependencies), else v1
    ``dependencies`` (every top-level entry)."""
    data = _json(project, path)
    lock = _Lock(rel, "npm")
    packages = data.get("packages")
    if packages is not None:
        for where, entry in _table(packages, "packages").items():
            entry = _table(entry, f"packages[{where!r}]")
            if where == "":
                lock.direct = []
                for section, dev in _NPM_SECTIONS:
                    for install, spec in _opt_table(entry, section, "the root package's ").items():
                        name, range_ = _npm_alias(install, _str(spec, f"{section} {install}"))
                        lock.direct.append((install.lower(), range_, dev))
                continue
            install = where.removeprefix("node_modules/")
            if not where.startswith("node_modules/") or "/node_modules/" in where:
                continue  # a nested install or a workspace folder
            version = entry.get("version")
            name = _str(entry.get("name", install), f"packages[{where!r}] name")
            dev = bool(entry.get("dev", False))
            if version is not None:
                version = _npm_installed(_str(version, f"packages[{where!r}] version"))
            lock.add(install.lower(), _Locked(name, version, dev))
    else:
        for install, entry in _opt_table(data, "dependencies", "").items():
            entry = _table(entry, f"dependencies[{install!r}]")
            version = _str(entry.get("version"), f"dependencies[{install!r}] version")
            name, version = _npm_alias(install, version)
            dev = bool(entry.get("dev", False))
            lock.add(install.lower(), _Locked(name, _npm_installed(version), dev))
    project.locks.append(lock)


def _split_descriptor(descriptor: str) -> tuple[str, str]:
    """``"@scope/name@^1.2"`` -> ``("@scope/name", "^1.2")``."""
    at = descriptor.find("@", 1)
    return (descriptor, "") if at < 0 else (descriptor[:at], descriptor[at + 1 :])


def _pnpm_version(raw: str) -> tuple[str | None, str | None]:
    """A pnpm version value: ``1.2.3``, ``1.2.3(react@18.2.0)`` (peer suffix), an alias
    ``/bar@1.2.3`` (v6) or ``bar@1.2.3`` (v9), ``link:../x`` (no version)."""
    value = raw.split("(", 1)[0].strip()
    if value.startswith(("link:", "file:", "workspace:")):
        return None, None
    if _EXACT_SEMVER.fullmatch(value):
        return None, value
    name, version = _split_descriptor(value.lstrip("/"))
    if version and _EXACT_SEMVER.fullmatch(version):
        return name, version
    return None, None


def _read_pnpm_lock(project: _Project, path: Path, rel: str) -> None:
    """pnpm v6 to v9: ``importers['.']`` (or v6's top-level sections for a single project) lists
    the direct dependencies with their versions; without them, the ``packages`` keys."""
    data = _yaml(_text(project, path))
    lock = _Lock(rel, "npm")
    importers = _opt_table(data, "importers", "")
    importer = _table(importers.get(".", {}), "importers['.']") if importers else data
    direct: list[tuple[str, str | None, bool]] = []
    for section, dev in _NPM_SECTIONS:
        for install, value in _opt_table(importer, section, "").items():
            if isinstance(value, dict):
                raw = _str(value.get("version"), f"{section} {install} version")
                specifier: str | None = value.get("specifier")
            else:  # v5 style: the version alone
                raw, specifier = _str(value, f"{section} {install}"), None
            alias, version = _pnpm_version(raw)
            lock.add(install.lower(), _Locked(alias or install, version, dev))
            if specifier is not None:
                specifier = _npm_alias(install, _str(specifier, f"{install} specifier"))[1]
            direct.append((install.lower(), specifier, dev))
    if direct or importers:
        lock.direct = direct
    else:
        for key, entry in _opt_table(data, "packages", "").items():
            name, version = _split_descriptor(key.split("(", 1)[0].lstrip("/"))
            if version and _EXACT_SEMVER.fullmatch(version):
                dev = isinstance(entry, dict) and entry.get("dev") == "true"
                lock.add(name.lower(), _Locked(name, version, dev))
    project.locks.append(lock)


def _read_yarn_lock(project: _Project, path: Path, rel: str) -> None:
    """yarn.lock: berry (YAML with ``__metadata``; its root workspace lists the direct
    dependencies) or v1 (every entry)."""
    text = _text(project, path)
    lock = _Lock(rel, "npm")
    if re.search(r"^__metadata:", text, flags=re.MULTILINE):
        entries = _yarn_berry(_yaml(text), lock)
    else:
        entries = _yarn_v1(text)
    for descriptors, version in entries:
        for descriptor in descriptors:
            install, range_ = _split_descriptor(descriptor)
            name = _npm_alias(install, range_)[0]
            entry = _Locked(name, version)
            lock.descriptors[descriptor.lower()] = entry
            if entry not in lock.packages.get(install.lower(), []):
                lock.add(install.lower(), entry)
    project.locks.append(lock)


def _yarn_berry(data: dict[str, Any], lock: _Lock) -> list[tuple[list[str], str]]:
    entries: list[tuple[list[str], str]] = []
    for key, entry in data.items():
        if key == "__metadata":
            continue
        entry = _table(entry, f"entry {key!r}")
        descriptors = [d.strip() for d in key.split(",") if d.strip()]
        if any(_split_descriptor(d)[1] == "workspace:." for d in descriptors):
            deps = _opt_table(entry, "dependencies", f"{key} ")
            lock.direct = [(n.lower(), _str(r, n), False) for n, r in deps.items()]
            continue
        entries.append((descriptors, _str(entry.get("version"), f"{key} version")))
    return entries


_YARN_KEY = re.compile(r'"([^"]*)"|([^,\s][^,]*)')


def _yarn_v1(text: str) -> list[tuple[list[str], str]]:
    """The documented v1 format: ``descriptor[, descriptor...]:`` at column 0, then indented
    ``key value`` lines (``version "1.2.3"``) and nested blocks."""
    entries: list[tuple[list[str], str]] = []
    current: list[str] | None = None
    version: str | None = None

    def close(lineno: int) -> None:
        if current is not None:
            if version is None:
                raise _Malformed(f"line {lineno}: {', '.join(current)} has no version")
            entries.append((current, version))

    for lineno, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if not line[0].isspace():
            close(lineno)
            if not line.rstrip().endswith(":"):
                raise _Malformed(f"line {lineno}: expected 'descriptor:', got {line.strip()!r}")
            keys = line.rstrip()[:-1]
            current = [(q or b).strip() for q, b in _YARN_KEY.findall(keys)]
            version = None
            continue
        if current is None:
            raise _Malformed(f"line {lineno}: an indented line outside an entry")
        indent = len(line) - len(line.lstrip(" "))
        key, _, value = line.strip().partition(" ")
        if indent == 2 and key.strip('"') == "version":
            version = value.strip().strip('"')
    close(len(text.splitlines()))
    return entries


_TRAILING_COMMA = re.compile(r",(\s*[}\]])")


def _read_bun_lock(project: _Project, path: Path, rel: str) -> None:
    """``bun.lock`` (bun's text lockfile: JSON with trailing commas): ``packages`` maps an
    install path to ``["name@version", ...]``; top-level installs only (``a/b`` is ``b``
    nested under ``a``, unless ``a`` is an ``@scope``). The root workspace (``workspaces['']``)
    lists the direct dependencies when it declares any."""
    data = json.loads(_TRAILING_COMMA.sub(r"\1", _text(project, path)))
    if not isinstance(data, dict):
        raise _Malformed("not a JSON object")
    lock = _Lock(rel, "npm")
    for where, entry in _opt_table(data, "packages", "").items():
        nested = where.count("/") > (1 if where.startswith("@") else 0)
        if nested or not isinstance(entry, list) or not entry or not isinstance(entry[0], str):
            continue
        name, version = _split_descriptor(entry[0])
        if _EXACT_SEMVER.fullmatch(version):
            lock.add(where.lower(), _Locked(name, version))
    root = _opt_table(_opt_table(data, "workspaces", ""), "", "workspaces ")
    direct = [
        (install.lower(), str(spec), dev)
        for section, dev in _NPM_SECTIONS
        for install, spec in _opt_table(root, section, "the root workspace's ").items()
    ]
    if direct:
        lock.direct = direct
    project.locks.append(lock)


_NPM_LOCKS: tuple[tuple[str, Callable[[_Project, Path, str], None]], ...] = (
    ("npm-shrinkwrap.json", _read_package_lock),
    ("package-lock.json", _read_package_lock),
    ("pnpm-lock.yaml", _read_pnpm_lock),
    ("yarn.lock", _read_yarn_lock),
    ("bun.lock", _read_bun_lock),
)


def _read_pnpm_workspace(project: _Project, path: Path, rel: str) -> None:
    """``pnpm-workspace.yaml``: ``packages`` patterns (``!`` excludes)."""
    patterns = _strings(_yaml(_text(project, path)).get("packages", []), "packages")
    project.member_globs += [m for m in patterns if not m.startswith("!")]
    project.member_excludes += [m[1:] for m in patterns if m.startswith("!")]
