"""Python manifests and lockfiles -> declarations and locked versions on a
:class:`~cogitave.libraries.project.reading._Project`: ``pyproject.toml`` (PEP 621, PEP 735,
Poetry, PDM, uv), ``requirements*.txt`` (with ``-r`` includes), ``Pipfile``, and the lockfiles
in the order their versions are taken (:data:`_PYTHON_LOCKS`: ``uv.lock``, ``poetry.lock``,
``pdm.lock``, ``Pipfile.lock``)."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from packaging.markers import Marker
from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.utils import (
    InvalidSdistFilename,
    InvalidWheelFilename,
    parse_sdist_filename,
    parse_wheel_filename,
)
from packaging.version import InvalidVersion

from cogitave.libraries.project.model import normalise
from cogitave.libraries.project.reading import (
    _Decl,
    _is_dev_name,
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
    _toml,
)
from cogitave.libraries.project.versions import _pep440

# --- manifests


def _python_pin(specifier: str | None) -> str | None:
    """The version an exact pin installs (``==1.2.3``, ``===1.2.3``, Poetry's bare ``1.2.3``)."""
    if not specifier:
        return None
    text = specifier.strip()
    try:
        specs = list(SpecifierSet(text))
    except InvalidSpecifier:
        return text if _PLAIN_VERSION.fullmatch(text) and _pep440(text) else None
    if len(specs) == 1 and specs[0].operator in ("==", "===") and "*" not in specs[0].version:
        return specs[0].version
    return None


_PLAIN_VERSION = re.compile(r"v?\d+(\.\d+)*([a-zA-Z0-9.+-]*)")


_REQUIREMENT_PARTS = re.compile(r"\s*[A-Za-z0-9][A-Za-z0-9._-]*\s*(?:\[[^\]]*\])?\s*([^;]*)")


def _specifier_text(text: str, req: Requirement) -> str | None:
    """A requirement's version specifier as written (``>=0.100,<1``, not packaging's sorted
    ``<1,>=0.100``), without spaces."""
    if not req.specifier:
        return None
    match = _REQUIREMENT_PARTS.match(text)
    raw = re.sub(r"\s+", "", match.group(1)).strip("()") if match else ""
    try:
        if SpecifierSet(raw) == req.specifier:
            return raw
    except InvalidSpecifier:
        pass
    return str(req.specifier)


def _marker_holds(marker: Marker | None) -> bool:
    if marker is None:
        return True
    try:
        return marker.evaluate()
    except ValueError:  # an undefined name: the marker decides nothing here
        return True


def _requirement_decl(text: str, source: str, dev: bool, where: str) -> _Decl:
    """A PEP 508 requirement string as a declaration."""
    try:
        req = Requirement(text)
    except InvalidRequirement as exc:
        raise _Malformed(f"{where}: not a requirement: {text!r} ({exc})") from None
    specifier = _specifier_text(text, req)
    pin = _python_pin(specifier)
    if req.url:
        pin = _version_in_location(req.url)[1]
    return _Decl(req.name, "python", specifier, pin, source, dev, _marker_holds(req.marker))


def _read_pyproject(project: _Project, path: Path, rel: str) -> None:
    data = _toml(project, path)
    out: list[_Decl] = []

    def requirements(values: Any, where: str, dev: bool) -> None:
        for text in _strings(values, where):
            if text.lstrip().startswith("-e"):  # PDM's editable entries
                name = _version_in_location(text)[0]
                if name is not None:
                    project.warn(rel, f"{where}: skipped editable {name}: version unknown")
                continue
            out.append(_requirement_decl(text, rel, dev, where))

    meta = _opt_table(data, "project", "")
    if isinstance(meta.get("name"), str):
        project.own.add(normalise(meta["name"], "python"))
    if "dependencies" in meta:
        requirements(meta["dependencies"], "[project] dependencies", False)
    extras = _opt_table(meta, "optional-dependencies", "[project] ")
    for extra, values in extras.items():
        requirements(values, f"[project.optional-dependencies] {extra}", _is_dev_name(extra))

    groups = _opt_table(data, "dependency-groups", "")
    for group, values in groups.items():
        if not isinstance(values, list):
            raise _Malformed(f"[dependency-groups] {group} is not a list")
        where = f"[dependency-groups] {group}"
        # an {include-group = "..."} entry adds a group that is read on its own
        if not all(isinstance(v, str) or _is_include(v) for v in values):
            raise _Malformed(f"{where} holds neither requirements nor include-group tables")
        requirements([v for v in values if isinstance(v, str)], where, True)

    tool = _opt_table(data, "tool", "")
    poetry = _opt_table(tool, "poetry", "[tool] ")
    out.extend(_poetry_decls(poetry, "dependencies", rel, False))
    out.extend(_poetry_decls(poetry, "dev-dependencies", rel, True))
    for group, table in _opt_table(poetry, "group", "[tool.poetry] ").items():
        group_table = _table(table, f"[tool.poetry.group.{group}]")
        out.extend(_poetry_decls(group_table, "dependencies", rel, group != "main", group))

    pdm = _opt_table(tool, "pdm", "[tool] ")
    for group, values in _opt_table(pdm, "dev-dependencies", "[tool.pdm] ").items():
        requirements(values, f"[tool.pdm.dev-dependencies] {group}", True)

    uv = _opt_table(tool, "uv", "[tool] ")
    if "dev-dependencies" in uv:
        requirements(uv["dev-dependencies"], "[tool.uv] dev-dependencies", True)
    if rel == "pyproject.toml":  # the root's workspace (a member's would be its own)
        ws = _opt_table(uv, "workspace", "[tool.uv] ")
        project.member_globs += _strings(ws.get("members", []), "[tool.uv.workspace] members")
        project.member_excludes += _strings(ws.get("exclude", []), "[tool.uv.workspace] exclude")
    project.decls.extend(out)


def _is_include(value: Any) -> bool:
    return isinstance(value, dict) and isinstance(value.get("include-group"), str)


def _poetry_decls(
    table: dict[str, Any], key: str, source: str, dev: bool, group: str | None = None
) -> list[_Decl]:
    where = f"[tool.poetry.group.{group}.{key}]" if group else f"[tool.poetry.{key}]"
    out: list[_Decl] = []
    for name, spec in _opt_table(table, key, where).items():
        if name.lower() == "python":
            continue
        specifier = _poetry_constraint(spec, f"{where} {name}")
        out.append(_Decl(name, "python", specifier, _python_pin(specifier), source, dev))
    return out


def _poetry_constraint(spec: Any, where: str) -> str | None:
    """A Poetry dependency value's version constraint: ``"^1.2"``, ``{version = "^1.2"}``,
    several ``[{version=..., markers=...}]`` joined with ``||``; git/path/url: None."""
    if isinstance(spec, str):
        return None if spec.strip() in ("", "*") else spec.strip()
    if isinstance(spec, dict):
        version = spec.get("version")
        return None if version is None else _poetry_constraint(_str(version, where), where)
    if isinstance(spec, list):
        parts = [_poetry_constraint(_table(s, where), where) for s in spec]
        kept = [p for p in parts if p]
        return " || ".join(kept) if len(kept) == len(parts) and kept else None
    raise _Malformed(f"{where} is neither a version string nor a table")


def _read_pipfile(project: _Project, path: Path, rel: str) -> None:
    data = _toml(project, path)
    for section, dev in (("packages", False), ("dev-packages", True)):
        for name, spec in _opt_table(data, section, "").items():
            where = f"[{section}] {name}"
            if isinstance(spec, dict):
                spec = spec.get("version", "*")
            specifier = _str(spec, where).strip()
            specifier = None if specifier in ("", "*") else specifier
            decl = _Decl(name, "python", specifier, _python_pin(specifier), rel, dev)
            project.decls.append(decl)


_OPTION = re.compile(r"(--[A-Za-z][\w-]*)(?:\s*=\s*|\s+)?(.*)")
_URL = re.compile(r"[A-Za-z][\w+.-]*://|file:")
_ARCHIVE = re.compile(r"[^\s@;]+\.(whl|tar\.gz|zip)")


def _read_requirements(project: _Project, path: Path, rel: str, dev: bool, seen: set[Path]) -> None:
    """A pip requirements file: requirement lines, ``-r`` includes inside the project folder;
    other options are skipped, and lines whose package version cannot be known warn."""
    seen.add(path.resolve())
    lines = _logical_lines(_text(project, path))
    for lineno, line in lines:
        where = f"{rel}:{lineno}"
        if line.startswith("-"):
            if line.startswith("--"):
                match = _OPTION.fullmatch(line)
                option, value = (match.group(1), match.group(2).strip()) if match else (line, "")
            else:  # short options take their value with or without a space: -rbase.txt
                option, value = line[:2], line[2:].lstrip(" =").strip()
            if option in ("-r", "--requirement"):
                _include(project, path, value, where, dev, seen)
            elif option in ("-e", "--editable"):
                _editable(project, value, where)
            continue  # -c constraints, index and build options: no dependency
        line = re.split(r"\s--", line, maxsplit=1)[0].strip()  # per-line --hash=... options
        if _URL.match(line) or line.startswith((".", "/")) or _ARCHIVE.fullmatch(line):
            name, version = _version_in_location(line)
            if name and version:
                project.decls.append(_Decl(name, "python", None, version, rel, dev))
            elif name:
                project.warn(where, f"skipped {name}: installed from {line}; version unknown")
            continue
        try:
            req = Requirement(line)
        except InvalidRequirement as exc:
            project.warn(where, f"not a requirement: {line!r} ({exc})")
            continue
        specifier = _specifier_text(line, req)
        pin = _python_pin(specifier)
        if req.url:
            pin = _version_in_location(req.url)[1]
            if pin is None:
                reason = f"skipped {req.name}: installed from {req.url}; version unknown"
                project.warn(where, reason)
                continue
        project.decls.append(
            _Decl(req.name, "python", specifier, pin, rel, dev, _marker_holds(req.marker))
        )


def _logical_lines(text: str) -> list[tuple[int, str]]:
    """Lines with comments removed and ``\\`` continuations joined, with their first line."""
    out: list[tuple[int, str]] = []
    pending, start = "", 0
    for number, raw in enumerate(text.splitlines(), 1):
        line = re.sub(r"(^|\s)#.*$", "", raw)
        if not pending:
            start = number
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        line = (pending + line).strip()
        pending = ""
        if line:
            out.append((start, line))
    if pending.strip():
        out.append((start, pending.strip()))
    return out


def _include(
    project: _Project, parent: Path, value: str, where: str, dev: bool, seen: set[Path]
) -> None:
    target = (parent.parent / value).resolve()
    try:
        target.relative_to(project.real_root)
    except ValueError:
        project.warn(where, f"not read: {value} is outside the project folder")
        return
    if target in seen:
        return
    if not target.is_file():
        project.warn(where, f"not read: {value} does not exist")
        return
    included_dev = dev or _is_dev_name(target.stem)
    project.read_path(
        target, lambda p, path, rel: _read_requirements(p, path, rel, included_dev, seen)
    )


def _editable(project: _Project, value: str, where: str) -> None:
    location = value.split("[", 1)[0].strip()
    if location in (".", "./", "file:.") or location.rstrip("/") == str(project.real_root):
        return  # the project itself
    name = _version_in_location(location)[0]
    project.warn(where, f"skipped editable {name or location}: version unknown")


def _version_in_location(location: str) -> tuple[str | None, str | None]:
    """The package (and version) a URL or path names: a wheel or sdist file name, or
    ``#egg=name``."""
    base = location.split("#", 1)[0].split("?", 1)[0].rstrip("/")
    filename = base.rsplit("/", 1)[-1]
    try:
        if filename.endswith(".whl"):
            name, version, _, _ = parse_wheel_filename(filename)
            return str(name), str(version)
        if filename.endswith((".tar.gz", ".zip")):
            name, version = parse_sdist_filename(filename)
            return str(name), str(version)
    except (InvalidWheelFilename, InvalidSdistFilename, InvalidVersion):
        pass
    egg = re.search(r"[#&]egg=([A-Za-z0-9][A-Za-z0-9._-]*)", location)
    return (egg.group(1), None) if egg else (None, None)


# --- lockfiles


def _lock_packages(data: dict[str, Any], where: str = "[[package]]") -> list[dict[str, Any]]:
    packages = data.get("package", [])
    if not isinstance(packages, list):
        raise _Malformed(f"{where} is not an array of tables")
    out = [_table(p, where) for p in packages]
    for p in out:
        _str(p.get("name"), f"{where} name")
        if "version" in p:
            _str(p["version"], f"{where} {p['name']} version")
    return out


def _read_uv_lock(project: _Project, path: Path, rel: str) -> None:
    lock = _Lock(rel, "python")
    root: dict[str, Any] | None = None
    for package in _lock_packages(_toml(project, path)):
        source = package.get("source", {})
        if isinstance(source, dict) and "." in (source.get("editable"), source.get("virtual")):
            root = package
            continue
        name = package["name"]
        lock.add(normalise(name, "python"), _Locked(name, package.get("version")))
    if root is not None:
        lock.direct = []
        for dep in _uv_deps(root.get("dependencies", []), "dependencies"):
            lock.direct.append((dep, None, False))
        for group_key, dev in (("optional-dependencies", None), ("dev-dependencies", True)):
            for group, deps in _table(root.get(group_key, {}), group_key).items():
                group_dev = _is_dev_name(group) if dev is None else dev
                lock.direct.extend((d, None, group_dev) for d in _uv_deps(deps, group_key))
    project.locks.append(lock)


def _uv_deps(values: Any, where: str) -> list[str]:
    if not isinstance(values, list):
        raise _Malformed(f"the project's {where} is not a list")
    names = [_str(_table(v, where).get("name"), f"{where} name") for v in values]
    return [normalise(name, "python") for name in names]


def _read_poetry_lock(project: _Project, path: Path, rel: str) -> None:
    """Poetry 1.x (``category = "dev"``) and 2.x (``groups = [...]``) lockfiles."""
    lock = _Lock(rel, "python")
    for package in _lock_packages(_toml(project, path)):
        groups = package.get("groups")
        if groups is not None:
            dev = "main" not in _strings(groups, f"{package['name']} groups")
        else:
            dev = package.get("category") == "dev"
        name = package["name"]
        lock.add(normalise(name, "python"), _Locked(name, package.get("version"), dev))
    project.locks.append(lock)


def _read_pdm_lock(project: _Project, path: Path, rel: str) -> None:
    lock = _Lock(rel, "python")
    for package in _lock_packages(_toml(project, path)):
        groups = package.get("groups")
        dev = groups is not None and "default" not in _strings(groups, "groups")
        name = package["name"]
        lock.add(normalise(name, "python"), _Locked(name, package.get("version"), dev))
    project.locks.append(lock)


def _read_pipfile_lock(project: _Project, path: Path, rel: str) -> None:
    data = _json(project, path)
    lock = _Lock(rel, "python")
    for section, dev in (("default", False), ("develop", True)):
        for name, entry in _opt_table(data, section, "").items():
            version = _table(entry, f"{section} {name}").get("version")
            if version is not None:
                version = _str(version, f"{section} {name} version").lstrip("=").strip() or None
            key = normalise(name, "python")
            if key not in lock.packages:  # in both sections: a runtime dependency
                lock.add(key, _Locked(name, version, dev))
    project.locks.append(lock)


_PYTHON_LOCKS: tuple[tuple[str, Callable[[_Project, Path, str], None]], ...] = (
    ("uv.lock", _read_uv_lock),
    ("poetry.lock", _read_poetry_lock),
    ("pdm.lock", _read_pdm_lock),
    ("Pipfile.lock", _read_pipfile_lock),
)
