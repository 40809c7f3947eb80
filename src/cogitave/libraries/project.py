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
"""

from __future__ import annotations

import json
import re
import tomllib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

import yaml
from nodesemver import Range as _NpmRange
from packaging.markers import Marker
from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.utils import (
    InvalidSdistFilename,
    InvalidWheelFilename,
    canonicalize_name,
    parse_sdist_filename,
    parse_wheel_filename,
)
from packaging.version import InvalidVersion, Version

from cogitave.errors import InputError
from cogitave.ingest.confined import TreeReader

Ecosystem = Literal["python", "npm"]
Match = Literal["exact", "nearest", "range", "latest", "none"]

MAX_FILE_BYTES = 64 * 1024 * 1024
"""A file larger than this is reported, not read (lockfiles of large monorepos stay below)."""

MAX_REASON = 300
"""A warning's reason is cut to this many characters (it may quote a file's content)."""

TAGS = ("latest", "stable", "main", "master", "next", "dev")
"""Held names that stand for a moving version, in the order the "latest" rule prefers them."""

_DEV_WORDS = frozenset({"dev", "develop", "test", "tests", "testing", "lint", "docs", "doc"})
_DEV_WORDS |= {"typing", "typecheck", "ci"}


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


# --------------------------------------------------------------------------- reading


class _Malformed(Exception):
    """A file that cannot be read; the message is the reason."""


@dataclass
class _Decl:
    """One declaration of a dependency in a manifest; several may name one key."""

    name: str
    ecosystem: Ecosystem
    specifier: str | None
    pin: str | None  # an exact pin in the manifest, the installed version without a lockfile
    source: str
    dev: bool
    applies: bool = True  # its environment marker holds under this interpreter
    install: str = ""  # npm: the folder name under node_modules (differs for an alias)

    @property
    def lookup(self) -> str:
        if self.ecosystem == "python":
            return normalise(self.name, "python")
        return (self.install or self.name).lower()


@dataclass(frozen=True)
class _Locked:
    name: str
    version: str | None
    dev: bool = False


@dataclass
class _Lock:
    """A lockfile's packages, by lookup name (python: normalised; npm: install folder name)."""

    source: str
    ecosystem: Ecosystem
    packages: dict[str, list[_Locked]] = field(default_factory=dict)
    # (lookup name, specifier, dev) of the direct dependencies, when the format records them
    direct: list[tuple[str, str | None, bool]] | None = None
    descriptors: dict[str, _Locked] = field(default_factory=dict)  # yarn: "name@range" -> entry

    def add(self, lookup: str, entry: _Locked) -> None:
        self.packages.setdefault(lookup, []).append(entry)

    def find(self, lookup: str, specifier: str | None) -> _Locked | None:
        """The entry installed for a dependency; several versions: the newest that satisfies the
        specifier, else the newest."""
        if specifier is not None and self.descriptors:
            for descriptor in (f"{lookup}@{specifier}", f"{lookup}@npm:{specifier}"):
                hit = self.descriptors.get(descriptor.lower())
                if hit is not None:
                    return hit
        found = self.packages.get(lookup, [])
        if len(found) <= 1:
            return found[0] if found else None
        scheme = _SCHEMES[self.ecosystem]
        rng = scheme.range(specifier) if specifier else None
        fitting = [e for e in found if rng is not None and _fits(scheme, rng, e.version)]
        return max(fitting or found, key=lambda e: _order_key(scheme, e.version))

    def listed(self) -> Iterator[tuple[_Locked, str | None]]:
        """The entries a lockfile alone reports: its direct dependencies, else all."""
        if self.direct is None:
            for lookup in self.packages:
                entry = self.find(lookup, None)
                if entry is not None:
                    yield entry, None
            return
        for lookup, specifier, dev in self.direct:
            entry = self.find(lookup, specifier)
            yield replace(entry or _Locked(lookup, None), dev=dev), specifier


def _fits(scheme: _Scheme, rng: Any, version: str | None) -> bool:
    parsed = scheme.version(version) if version else None
    return parsed is not None and scheme.satisfies(rng, parsed)


def _order_key(scheme: _Scheme, version: str | None) -> tuple[int, Any]:
    parsed = scheme.version(version) if version else None
    return (0, None) if parsed is None else (1, parsed)


class _Project:
    """One reading of a project folder: files, warnings, declarations and lockfiles."""

    def __init__(self, folder: Path) -> None:
        self.root = folder
        self.real_root = folder.resolve()
        # the one way a file of the project is read (see read_bytes)
        self.reader = TreeReader(folder, max_bytes=MAX_FILE_BYTES)
        self.files: list[str] = []
        self.warnings: list[str] = []
        self.decls: list[_Decl] = []
        self.locks: list[_Lock] = []
        # the root's workspace member patterns, and those it excludes
        self.member_globs: list[str] = []
        self.member_excludes: list[str] = []
        # the packages the project (root and members) publishes itself: not dependencies
        self.own: set[str] = set()

    def rel(self, path: Path) -> str:
        """The name a file goes by: relative to the project folder (a link keeps its own name)."""
        for inside, root in ((path, self.root), (path.resolve(), self.real_root)):
            try:
                return inside.relative_to(root).as_posix()
            except ValueError:
                pass
        return path.as_posix()

    def read_bytes(self, path: Path) -> bytes:
        """A file of the project: a regular file inside the project folder (a link is
        followed only when its target is inside too: a cloned repository may carry a
        ``uv.lock`` linked to ``/dev/zero`` or to a file of the user's), at most
        :data:`MAX_FILE_BYTES`, opened without blocking (a FIFO or a device is refused after
        ``fstat``, never read). A refused file is :class:`_Malformed` with the reason."""
        data = self.reader.read_bytes(path)
        if data is None:
            shown = self.reader.shown(path)
            why = [r.reason for r in self.reader.refusals if r.path == shown]
            raise _Malformed(why[-1] if why else "not read")
        return data

    def warn(self, source: str, reason: str) -> None:
        reason = _one_line(reason)
        if len(reason) > MAX_REASON:
            reason = reason[: MAX_REASON - 1] + "…"
        self.warnings.append(f"{source}: {reason}")

    def read(self, name: str, reader: Callable[[_Project, Path, str], None]) -> None:
        path = self.root / name
        if path.exists() or path.is_symlink():
            self.read_path(path, reader)

    def read_path(self, path: Path, reader: Callable[[_Project, Path, str], None]) -> None:
        rel = self.rel(path)
        marks = len(self.files), len(self.decls), len(self.locks), len(self.warnings)
        self.files.append(rel)  # before the files it includes
        try:
            reader(self, path, rel)
        except (
            _Malformed,
            OSError,
            UnicodeDecodeError,
            ValueError,
            TypeError,
            KeyError,
            AttributeError,
            RecursionError,
        ) as exc:
            # the file contributes nothing, not half of itself
            files, decls, locks, warnings = marks
            del self.files[files:], self.decls[decls:], self.locks[locks:]
            del self.warnings[warnings:]
            reason = str(exc) if isinstance(exc, _Malformed) else _describe(exc)
            self.warn(rel, reason)


def _describe(exc: BaseException) -> str:
    if isinstance(exc, UnicodeDecodeError):
        return "not UTF-8 text"
    if isinstance(exc, OSError):
        return f"cannot be read ({exc.strerror or type(exc).__name__})"
    return f"unexpected content ({type(exc).__name__}: {exc})"


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _text(project: _Project, path: Path) -> str:
    """The file as text (universal newlines), read through the project's confined reader
    (:meth:`_Project.read_bytes`)."""
    return project.read_bytes(path).decode("utf-8").replace("\r\n", "\n").replace("\r", "\n")


def _toml(project: _Project, path: Path) -> dict[str, Any]:
    try:
        return tomllib.loads(_text(project, path))
    except tomllib.TOMLDecodeError as exc:
        raise _Malformed(f"not valid TOML ({exc})") from None


def _json(project: _Project, path: Path) -> dict[str, Any]:
    try:
        data = json.loads(_text(project, path))
    except json.JSONDecodeError as exc:
        raise _Malformed(f"not valid JSON ({exc})") from None
    return _table(data, "the top level")


def _yaml(text: str) -> dict[str, Any]:
    # every scalar a string: "1.10" stays a version, not the float 1.1
    loader = getattr(yaml, "CBaseLoader", yaml.BaseLoader)
    try:
        data = yaml.load(text, Loader=loader)
    except yaml.YAMLError as exc:
        raise _Malformed(f"not valid YAML ({_one_line(str(exc))})") from None
    return _table(data, "the top level")


def _table(value: Any, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise _Malformed(f"{where} is not a table/object")
    return value


def _opt_table(data: dict[str, Any], key: str, where: str) -> dict[str, Any]:
    value = data.get(key)
    return {} if value is None else _table(value, f"{where}{key}")


def _strings(value: Any, where: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise _Malformed(f"{where} is not a list of strings")
    return value


def _str(value: Any, where: str) -> str:
    if not isinstance(value, str):
        raise _Malformed(f"{where} is not a string")
    return value


def _is_dev_name(name: str) -> bool:
    """A group, extra or requirements file named for development (``requirements-dev``,
    ``test``, ``lint``, ``docs``...)."""
    return any(word in _DEV_WORDS for word in re.split(r"[^a-z]+", name.lower()))


# --- python manifests


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


def _pep440(text: str) -> Version | None:
    try:
        return Version(text)
    except InvalidVersion:
        return None


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


# --- python lockfiles


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


# --- npm


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


# --- the whole project


_PYTHON_LOCKS: tuple[tuple[str, Callable[[_Project, Path, str], None]], ...] = (
    ("uv.lock", _read_uv_lock),
    ("poetry.lock", _read_poetry_lock),
    ("pdm.lock", _read_pdm_lock),
    ("Pipfile.lock", _read_pipfile_lock),
)
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
MAX_MEMBERS = 200
"""Workspace members read at most (a glob such as ``packages/*`` may match many folders)."""


def _read_pnpm_workspace(project: _Project, path: Path, rel: str) -> None:
    """``pnpm-workspace.yaml``: ``packages`` patterns (``!`` excludes)."""
    patterns = _strings(_yaml(_text(project, path)).get("packages", []), "packages")
    project.member_globs += [m for m in patterns if not m.startswith("!")]
    project.member_excludes += [m[1:] for m in patterns if m.startswith("!")]


def _members(project: _Project) -> list[Path]:
    """The workspace member folders inside the project (a pattern reaching outside it, or a
    link to outside, is skipped with a warning)."""
    skip: set[Path] = set()
    for pattern in project.member_excludes:
        skip.update(p.resolve() for p in _glob(project, pattern))
    out: list[Path] = []
    for pattern in project.member_globs:
        for path in _glob(project, pattern):
            real = path.resolve()
            if real == project.real_root or real in skip or not path.is_dir():
                continue
            if not real.is_relative_to(project.real_root):
                project.warn(project.rel(path), "workspace member outside the project: skipped")
                continue
            if real not in {p.resolve() for p in out}:
                out.append(path)
    if len(out) > MAX_MEMBERS:
        project.warn("workspaces", f"{len(out)} members: the first {MAX_MEMBERS} read")
    return sorted(out)[:MAX_MEMBERS]


def _glob(project: _Project, pattern: str) -> list[Path]:
    pattern = pattern.strip().rstrip("/")
    if not pattern or pattern.startswith("/") or ".." in Path(pattern).parts:
        if pattern:
            project.warn("workspaces", f"member pattern {pattern!r} leaves the project: skipped")
        return []
    return list(project.root.glob(pattern))


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


def _declared(decls: list[_Decl], locks: list[_Lock]) -> Iterator[Dependency]:
    groups: dict[str, list[_Decl]] = {}
    for decl in decls:
        groups.setdefault(normalise(decl.name, decl.ecosystem), []).append(decl)
    for key, group in groups.items():
        applying = [d for d in group if d.applies] or group
        first = applying[0]
        specifier = next((d.specifier for d in applying if d.specifier), None)
        pinned = next((d for d in applying if d.pin), None)
        version, source = (pinned.pin, pinned.source) if pinned else (None, first.source)
        for lock in locks:
            hit = lock.find(first.lookup, specifier)
            if hit is not None and hit.version:
                version, source = hit.version, lock.source
                break
        dev = all(d.dev for d in group)
        yield Dependency(first.name, key, first.ecosystem, version, specifier, source, dev)


def _locked_only(locks: list[_Lock]) -> Iterator[Dependency]:
    seen: set[str] = set()
    for lock in locks:
        for entry, specifier in lock.listed():
            key = normalise(entry.name, lock.ecosystem)
            if key not in seen:
                seen.add(key)
                eco, version, dev = lock.ecosystem, entry.version, entry.dev
                yield Dependency(entry.name, key, eco, version, specifier, lock.source, dev)


# --------------------------------------------------------------------------- matching


_X_PATTERN = re.compile(r"v?(\d+)(?:\.(\d+|[xX*]))?(?:\.([xX*]))?", re.ASCII)


@dataclass(frozen=True, order=True)
class _Sem:
    """A semantic version, ordered as semver orders them (build metadata ignored)."""

    major: int
    minor: int
    patch: int
    release: int  # 1: a release; 0: a prerelease, ordered below its release
    pre: tuple[tuple[int, int | str], ...] = ()

    def text(self) -> str:
        core = f"{self.major}.{self.minor}.{self.patch}"
        return core if self.release else core + "-" + ".".join(str(p[1]) for p in self.pre)


_SEMVER = re.compile(
    r"[v=\s]*(\d+)(?:\.(\d+))?(?:\.(\d+))?(?:-([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?"
    r"(?:\+[0-9A-Za-z.-]+)?\s*",
    re.ASCII,
)


class _Scheme:
    """How one ecosystem parses versions, ``x`` patterns and ranges."""

    def version(self, text: str) -> Any | None:
        raise NotImplementedError

    def bounds(self, major: int, minor: int | None) -> tuple[Any, Any, list[Any]]:
        """An x-pattern's lowest version, the lowest version past it, and versions inside it."""
        raise NotImplementedError

    def range(self, text: str) -> Any | None:
        raise NotImplementedError

    def satisfies(self, rng: Any, version: Any) -> bool:
        raise NotImplementedError

    def probes(self, rng: Any) -> list[Any]:
        """Versions a range names (and their next patch): where a range meets an x-pattern."""
        raise NotImplementedError

    def is_prerelease(self, version: Any) -> bool:
        raise NotImplementedError


class _Pep440(_Scheme):
    def version(self, text: str) -> Version | None:
        return _pep440(text.strip())

    def bounds(self, major: int, minor: int | None) -> tuple[Any, Any, list[Any]]:
        fixed = [major] if minor is None else [major, minor]
        past = [*fixed[:-1], fixed[-1] + 1]
        big = ".999999999" * (3 - len(fixed))
        prefix = ".".join(map(str, fixed))
        return (
            Version(prefix + ".dev0"),
            Version(".".join(map(str, past)) + ".dev0"),
            [Version(prefix), Version(prefix + big)],
        )

    def range(self, text: str) -> list[SpecifierSet] | None:
        text = text.strip()
        if text in ("", "*"):
            return [SpecifierSet()]
        try:
            return [SpecifierSet(text)]
        except InvalidSpecifier:
            return _poetry_range(text)

    def satisfies(self, rng: list[SpecifierSet], version: Version) -> bool:
        return any(s.contains(version, prereleases=bool(s.prereleases)) for s in rng)

    def probes(self, rng: list[SpecifierSet]) -> list[Any]:
        out: list[Any] = []
        for spec in (s for group in rng for s in group):
            parsed = _pep440(spec.version.removesuffix(".*"))
            if parsed is not None and spec.operator != "===":
                release = list(parsed.release)
                release[-1] += 1
                out += [parsed, Version(".".join(map(str, release)))]
        return out

    def is_prerelease(self, version: Version) -> bool:
        return version.is_prerelease


def _poetry_range(text: str) -> list[SpecifierSet] | None:
    """Poetry's constraint syntax as PEP 440: ``^1.2`` (>=1.2,<2.0), ``~1.2`` (>=1.2,<1.3),
    bare ``1.2.3`` (==1.2.3), ``1.2.*``, space or comma separated, ``||`` alternatives."""
    out: list[SpecifierSet] = []
    for alternative in re.split(r"\s*\|\|?\s*", text):
        compact = re.sub(r"(===|==|!=|<=|>=|~=|<|>|=|\^|~)\s+", r"\1", alternative.strip())
        atoms: list[str] = []
        for atom in (a for a in re.split(r"[\s,]+", compact) if a):
            if atom == "*":
                continue
            if atom[0] in "^~" and not atom.startswith("~="):
                bound = _poetry_upper(atom[1:], caret=atom[0] == "^")
                if bound is None:
                    return None
                atoms += [f">={atom[1:]}", f"<{bound}"]
            elif atom[0] in "<>!~=":
                atoms.append("==" + atom[1:] if re.match(r"=[^=]", atom) else atom)
            else:
                atoms.append("==" + atom)
        try:
            out.append(SpecifierSet(",".join(atoms)))
        except InvalidSpecifier:
            return None
    return out or None


def _poetry_upper(version: str, *, caret: bool) -> str | None:
    match = re.match(r"(\d+(?:\.\d+)*)", version)
    if match is None or _pep440(version) is None:
        return None
    parts = [int(p) for p in match.group(1).split(".")]
    if caret:  # the first non-zero part moves (all zero: the last given)
        at = next((i for i, p in enumerate(parts) if p), len(parts) - 1)
    else:  # ~1 -> <2, ~1.2 and ~1.2.3 -> <1.3
        at = min(len(parts) - 1, 1)
    return ".".join(map(str, [*parts[:at], parts[at] + 1]))


class _Semver(_Scheme):
    def version(self, text: str) -> _Sem | None:
        match = _SEMVER.fullmatch(text)
        if match is None:
            return None
        major, minor, patch, pre = match.groups()
        ids = tuple((0, int(p)) if p.isdigit() else (1, p) for p in pre.split(".")) if pre else ()
        return _Sem(int(major), int(minor or 0), int(patch or 0), 0 if pre else 1, ids)

    def bounds(self, major: int, minor: int | None) -> tuple[Any, Any, list[Any]]:
        lowest = ((0, 0),)  # "-0": below every other prerelease
        if minor is None:
            lo, past = _Sem(major, 0, 0, 0, lowest), _Sem(major + 1, 0, 0, 0, lowest)
            inside = [_Sem(major, 0, 0, 1), _Sem(major, 999999999, 999999999, 1)]
        else:
            lo, past = _Sem(major, minor, 0, 0, lowest), _Sem(major, minor + 1, 0, 0, lowest)
            inside = [_Sem(major, minor, 0, 1), _Sem(major, minor, 999999999, 1)]
        return lo, past, inside

    def range(self, text: str) -> _NpmRange | None:
        try:
            return _NpmRange(text.strip(), True)
        except (ValueError, TypeError):
            return None

    def satisfies(self, rng: _NpmRange, version: _Sem) -> bool:
        return bool(rng.test(version.text()))

    def probes(self, rng: _NpmRange) -> list[Any]:
        out: list[Any] = []
        for comparator in (c for group in rng.set for c in group):
            parsed = self.version(str(getattr(comparator.semver, "version", "")))
            if parsed is not None:
                out += [parsed, replace(parsed, patch=parsed.patch + 1, release=1, pre=())]
        return out

    def is_prerelease(self, version: _Sem) -> bool:
        return not version.release


_SCHEMES: dict[str, _Scheme] = {"python": _Pep440(), "npm": _Semver()}


@dataclass(frozen=True)
class _Held:
    text: str
    version: Any | None = None  # a version
    lo: Any | None = None  # an x-pattern: lo <= v < past
    past: Any | None = None
    inside: tuple[Any, ...] = ()

    @property
    def rank(self) -> tuple[Any, int]:
        """Newer ranks higher; an x-pattern ranks just below the series after it."""
        return (self.version, 1) if self.version is not None else (self.past, 0)

    def covers(self, version: Any) -> bool:
        return self.lo is not None and self.lo <= version < self.past


def _parse_held(text: str, scheme: _Scheme) -> _Held | None:
    match = _X_PATTERN.fullmatch(text)
    if match is not None:
        major, minor, patch = match.groups()
        if patch is not None or (minor is not None and not minor.isdigit()):
            lo, past, inside = scheme.bounds(int(major), int(minor) if minor.isdigit() else None)
            return _Held(text, lo=lo, past=past, inside=tuple(inside))
    if text.lower() in TAGS:
        return None
    version = scheme.version(text)
    return None if version is None else _Held(text, version=version)


def _listing(held: Sequence[str], limit: int = 8) -> str:
    shown = ", ".join(held[:limit])
    return shown + (f" and {len(held) - limit} more" if len(held) > limit else "")


def match_version(dep: Dependency | None, held: Sequence[str]) -> VersionMatch:
    """The held docs version to read for a dependency. Never a silent substitution: anything
    but ``exact`` says in ``reason`` what was wanted and what was chosen instead.

    Versions compare per ecosystem: PEP 440 for python (``0.115`` equals ``0.115.0``); semver
    for npm, after coercing partial versions (``v1.2`` is ``1.2.0``). Without a dependency,
    held versions compare as PEP 440. The rules, in order:

    - **exact**: the installed version (``dep.version``) equals a held version, or falls in a
      held x-pattern (``10.x.x`` covers every ``10.*.*``; ``1.2.x`` every ``1.2.*``). An equal
      version is preferred to a covering pattern.
    - **nearest**: else the newest held version not newer than the installed one; an x-pattern
      counts when its whole series is older, and ranks above the versions inside it.
    - **none**: every held version is newer than the installed one (``held`` None; the reason
      lists them). A newer version is never chosen for an older installed one.
    - **range**: no installed version (or one that does not parse) but a range
      (``dep.specifier``: PEP 440, Poetry's ``^``/``~``, npm ranges): the newest held version
      satisfying it; an x-pattern satisfies it when a version inside it does. None satisfies:
      **nearest**, the newest held version older than the lowest version the range allows
      (``~=3.0`` read from 2.2.2, said so), else **none**.
    - **latest**: no version information (no dependency, or neither a version nor a range
      that parses): the newest held release (a prerelease only when there is nothing else).
      When no held version parses, a held tag in the order of :data:`TAGS` ("latest",
      "stable", "main", "master", "next", "dev").

    Held names that are neither versions nor x-patterns ("latest", "main", "edge") are never
    chosen by the first three rules.
    """
    held_texts = [h.strip() for h in held if h and h.strip()]
    wanted = None if dep is None else dep.version or dep.specifier
    if not held_texts:
        return VersionMatch(wanted, None, "none", "no versions are held")
    scheme = _SCHEMES[dep.ecosystem if dep is not None else "python"]
    parsed = [h for h in (_parse_held(t, scheme) for t in held_texts) if h is not None]
    listing = _listing(held_texts)
    note = ""
    if dep is not None and dep.version:
        installed = scheme.version(dep.version)
        if installed is not None:
            return _by_installed(dep.version, installed, parsed, listing)
        note = f"installed version {dep.version!r} does not parse; "
    if dep is not None and dep.specifier:
        rng = scheme.range(dep.specifier)
        if rng is not None:
            return _by_range(wanted, dep.specifier, rng, scheme, parsed, listing, note)
        note += f"{dep.specifier!r} is not a version range; "
    elif not note:
        note = "no version information; "
    return _latest(wanted, scheme, parsed, held_texts, listing, note)


def _by_installed(text: str, installed: Any, parsed: list[_Held], listing: str) -> VersionMatch:
    for h in parsed:
        if h.version is not None and h.version == installed:
            same = h.text == text
            reason = f"{text} is held" if same else f"{text} is held as {h.text}"
            return VersionMatch(text, h.text, "exact", reason)
    for h in parsed:
        if h.covers(installed):
            return VersionMatch(text, h.text, "exact", f"{text} falls in held {h.text}")
    older = [
        h
        for h in parsed
        if (h.version is not None and h.version < installed)
        or (h.past is not None and h.past <= installed)
    ]
    if older:
        best = max(older, key=lambda h: h.rank)
        reason = f"{text} is not held; nearest older held version {best.text}"
        return VersionMatch(text, best.text, "nearest", reason)
    if parsed:
        reason = f"{text} is not held and every held version is newer (held: {listing})"
    else:
        reason = f"{text} is not held and no held version is a version (held: {listing})"
    return VersionMatch(text, None, "none", reason)


def _by_range(
    wanted: str | None,
    spec: str,
    rng: Any,
    scheme: _Scheme,
    parsed: list[_Held],
    listing: str,
    note: str,
) -> VersionMatch:
    def fits(h: _Held) -> bool:
        if h.version is not None:
            return scheme.satisfies(rng, h.version)
        probes = [*h.inside, *(p for p in scheme.probes(rng) if h.covers(p))]
        return any(scheme.satisfies(rng, p) for p in probes)

    fitting = [h for h in parsed if fits(h)]
    if not fitting:
        # the range's lowest version it names: held versions below it are older than
        # anything the range allows, and the newest of them is the nearest older
        floor = min((p for p in scheme.probes(rng) if scheme.satisfies(rng, p)), default=None)
        older = [] if floor is None else [h for h in parsed if h.rank[0] < floor]
        if older:
            best = max(older, key=lambda h: h.rank)
            reason = (
                f"{note}no held version satisfies {spec}; nearest older held version {best.text}"
            )
            return VersionMatch(wanted, best.text, "nearest", reason)
        reason = f"{note}no held version satisfies {spec} (held: {listing})"
        return VersionMatch(wanted, None, "none", reason)
    best = max(fitting, key=lambda h: h.rank)
    note = note or "no installed version; "
    reason = f"{note}newest held version satisfying {spec} is {best.text}"
    return VersionMatch(wanted, best.text, "range", reason)


def _latest(
    wanted: str | None,
    scheme: _Scheme,
    parsed: list[_Held],
    held_texts: list[str],
    listing: str,
    note: str,
) -> VersionMatch:
    if parsed:
        releases = [h for h in parsed if h.version is None or not scheme.is_prerelease(h.version)]
        best = max(releases or parsed, key=lambda h: h.rank)
        return VersionMatch(wanted, best.text, "latest", f"{note}newest held version {best.text}")
    by_name = {t.lower(): t for t in held_texts}
    for tag in TAGS:
        if tag in by_name:
            reason = f"{note}no held version parses; chose {by_name[tag]!r}"
            return VersionMatch(wanted, by_name[tag], "latest", reason)
    reason = f"{note}no held version parses and none is a tag (held: {listing})"
    return VersionMatch(wanted, None, "none", reason)
