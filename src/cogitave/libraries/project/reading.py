"""One reading of a project folder, shared by the ecosystems' readers: :class:`_Project` (a
file of the folder -> bytes through the confined reader; the files read, the warnings, the
declarations and lockfiles found), the declarations and lockfile entries readers add
(:class:`_Decl`, :class:`_Lock`), the helpers that turn a file into typed TOML/JSON/YAML or a
warning, the workspace members a root declares, and the last step: declarations and lockfiles
-> one :class:`~cogitave.libraries.project.model.Dependency` per package."""

from __future__ import annotations

import json
import re
import tomllib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import yaml

from cogitave.ingest.confined import TreeReader
from cogitave.libraries.project.model import Dependency, Ecosystem, normalise
from cogitave.libraries.project.versions import _SCHEMES, _fits, _order_key

MAX_FILE_BYTES = 64 * 1024 * 1024
"""A file larger than this is reported, not read (lockfiles of large monorepos stay below)."""

MAX_REASON = 300
"""A warning's reason is cut to this many characters (it may quote a file's content)."""


_DEV_WORDS = frozenset({"dev", "develop", "test", "tests", "testing", "lint", "docs", "doc"})
_DEV_WORDS |= {"typing", "typecheck", "ci"}


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


MAX_MEMBERS = 200
"""Workspace members read at most (a glob such as ``packages/*`` may match many folders)."""


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
