"""Top-level package names + the folder they are installed in -> griffe's model of their
modules, read from the source files alone and bounded.

griffe visits each file's syntax tree (``allow_inspection=False``): no module of the package
is ever imported, so nothing it runs on import runs here, and no program is run (griffe's
``git`` look-up of the package's repository is left out); a compiled module (``.so``) is not
read, only listed. The walk is our own (:class:`_BoundedFinder`): only folders holding an
``__init__.py``, no symlink followed, no ``.pth`` file read, ``.py``/``.pyi`` files only, and
:class:`Limits` on the number of modules, a file's size and the bytes read in all; what a bound
leaves out is listed in :attr:`Loaded.skipped` with its reason. Aliases (``from ._x import
Y``) are resolved inside the packages read, never by loading another package.
"""

from __future__ import annotations

import logging
import os
import stat
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

import griffe

MAX_MODULES = 2_000  # modules read from one distribution
MAX_FILE_BYTES = 2 * 1024 * 1024  # a source file larger than this is not read
MAX_TOTAL_BYTES = 64 * 1024 * 1024  # source read from one distribution in all
MAX_OBJECTS = 50_000  # API entries made from one distribution
MAX_WALKED = 100_000  # files and folders looked at while finding modules
# The hooks griffe fires on every object once a package is loaded.
_LOAD_EVENTS = ("on_alias", "on_object", "on_module", "on_class", "on_function")
_LOAD_EVENTS += ("on_attribute", "on_type_alias")
UNPARSED = "not read: its source could not be parsed (a syntax error, too deep, not UTF-8)"


@dataclass(frozen=True)
class Limits:
    """The bounds of one read (see the module doc)."""

    max_modules: int = MAX_MODULES
    max_file_bytes: int = MAX_FILE_BYTES
    max_total_bytes: int = MAX_TOTAL_BYTES
    max_objects: int = MAX_OBJECTS
    max_walked: int = MAX_WALKED


@dataclass(frozen=True)
class Skipped:
    """A file (or object) left out, and why."""

    path: str  # relative to the folder read
    reason: str

    def __str__(self) -> str:
        return f"{self.path}: {self.reason}"


@dataclass
class Loaded:
    """The packages read, by top-level name, and what was left out."""

    root: Path
    modules: dict[str, griffe.Module] = field(default_factory=dict)
    skipped: list[Skipped] = field(default_factory=list)
    modules_read: int = 0


class _Budget:
    """What one read has spent, shared by the finder of every package."""

    def __init__(self, root: Path, limits: Limits, skipped: list[Skipped]) -> None:
        self.root = root
        self.real_root = Path(os.path.realpath(root))
        self.limits = limits
        self.skipped = skipped
        self.modules = 0
        self.bytes = 0
        self.walked = 0
        self.admitted: set[Path] = set()

    def shown(self, path: Path) -> str:
        """``path`` relative to the folder read (through symlinks above it too)."""
        for base, file in ((self.root, path), (self.real_root, Path(os.path.realpath(path)))):
            if file.is_relative_to(base):
                return file.relative_to(base).as_posix()
        return path.as_posix()

    def admit(self, file: Path) -> bool:
        """Whether ``file`` may be read; a refusal is listed."""
        if file in self.admitted:
            return True
        reason = ""
        try:
            st = os.lstat(file)
            size = st.st_size
        except OSError as e:
            st, size, reason = None, 0, f"not readable ({e.strerror})"
        if st is None:
            pass
        elif stat.S_ISLNK(st.st_mode):
            reason = "a symlink; not followed"
        elif not stat.S_ISREG(st.st_mode):
            reason = "not a regular file; not read"
        elif size > self.limits.max_file_bytes:
            mb = self.limits.max_file_bytes / (1024 * 1024)
            reason = f"{size} bytes, over the {mb:g} MB a source file may have; not read"
        elif self.modules >= self.limits.max_modules:
            reason = f"past the {self.limits.max_modules} modules read from one distribution"
        elif self.bytes + size > self.limits.max_total_bytes:
            mb = self.limits.max_total_bytes / (1024 * 1024)
            reason = f"past the {mb:g} MB of source read from one distribution"
        if reason:
            self.skipped.append(Skipped(self.shown(file), reason))
            return False
        self.admitted.add(file)
        self.modules += 1
        self.bytes += size
        return True


class _BoundedFinder(griffe.ModuleFinder):
    """griffe's finder over one folder, with our own bounded walk of a package's files."""

    def __init__(self, budget: _Budget) -> None:
        self.budget = budget
        super().__init__([budget.root])

    def _extend_from_pth_files(self) -> None:
        """``.pth`` files are not read: the search path is the folder named, alone."""

    def submodules(self, module: griffe.Module) -> list[tuple[tuple[str, ...], Path]]:
        """The package's module files (see the module doc), shallowest first."""
        paths = module.filepath if isinstance(module.filepath, list) else [module.filepath]
        found: list[tuple[tuple[str, ...], Path]] = []
        for path in paths:
            if path is None:
                continue
            base = path.parent if path.stem == "__init__" else path
            if base.is_dir():
                found.extend(self._walk(base))
        found.sort(key=lambda item: (len(item[0]), item[0]))
        return [(parts, file) for parts, file in found if self.budget.admit(file)]

    def _walk(self, base: Path) -> Iterator[tuple[tuple[str, ...], Path]]:
        b = self.budget
        for dirpath, dirnames, filenames in os.walk(base):
            here = Path(dirpath)
            b.walked += len(dirnames) + len(filenames)
            if b.walked > b.limits.max_walked:
                b.skipped.append(
                    Skipped(b.shown(here), f"past the {b.limits.max_walked} files looked at")
                )
                dirnames.clear()
                return
            dirnames[:] = sorted(
                d
                for d in dirnames
                if d != "__pycache__"
                and d.isidentifier()
                and not os.path.islink(here / d)
                and any((here / d / f"__init__{s}").is_file() for s in (".py", ".pyi"))
            )
            rel = here.relative_to(base).parts
            for name in sorted(filenames):
                stem, _, suffix = name.partition(".")
                if suffix not in ("py", "pyi"):
                    if name.endswith((".so", ".pyd")) and stem.isidentifier():
                        b.skipped.append(Skipped(b.shown(here / name), "a compiled module"))
                    continue
                if not stem.isidentifier():
                    continue
                if stem == "__init__":
                    if rel:
                        yield rel, here / name
                    continue
                yield (*rel, stem), here / name


class _Loader(griffe.GriffeLoader):
    """griffe's loader, reading through a :class:`_BoundedFinder`."""

    def __init__(self, budget: _Budget) -> None:
        self.budget = budget
        super().__init__(
            search_paths=[budget.root],
            allow_inspection=False,
            force_inspection=False,
            store_source=False,
        )

    @cached_property
    def finder(self) -> griffe.ModuleFinder:
        return _BoundedFinder(self.budget)

    def _post_load(self, module: griffe.Module, obj_path: str) -> griffe.Object | griffe.Alias:
        """griffe's own, without its ``GitInfo.from_package``: that runs ``git`` in the
        package's folder (a repository there brings its own config, and git runs what that
        config names). Exports and wildcards expanded inside the packages read, the
        extensions' hooks fired."""
        self.expand_exports(module)
        self.expand_wildcards(module, external=False)
        obj = self.modules_collection.get_member(obj_path)
        self.extensions.call("on_package", pkg=module, loader=self)
        self.extensions.call("on_module", mod=module, loader=self)
        if self.extensions.has_hooks(*_LOAD_EVENTS):
            self._fire_load_events(module)
        return obj

    def _visit_module(
        self, module_name: str, module_path: Path, parent: griffe.Module | None = None
    ) -> griffe.Module:
        """One file's syntax tree; a tree too deep for the parser, or a NUL byte, fails
        that file alone (griffe leaves out a file that raises ``SyntaxError``)."""
        try:
            return super()._visit_module(module_name, module_path, parent)
        except (RecursionError, ValueError, MemoryError) as e:
            raise SyntaxError(f"{module_path}: {type(e).__name__}") from None


@contextmanager
def quiet() -> Iterator[None]:
    """griffe's own warnings (an unparsable docstring, an unresolved alias) kept off stderr:
    what matters is in the report."""
    log = logging.getLogger("griffe")
    level = log.level
    log.setLevel(logging.CRITICAL)
    try:
        yield
    finally:
        log.setLevel(level)


def load_packages(root: Path, packages: Sequence[str], limits: Limits | None = None) -> Loaded:
    """The packages ``packages`` (top-level names) installed in ``root``, read statically and
    bounded (see the module doc). A package that cannot be read is listed as skipped."""
    limits = limits or Limits()
    out = Loaded(root)
    budget = _Budget(root, limits, out.skipped)
    loader = _Loader(budget)
    with quiet():
        pending = list(dict.fromkeys(packages))
        # A package that re-exports another one of the distribution's (``attrs`` from
        # ``attr``) is read after it: one failure waits for a second pass.
        for attempt in range(2):
            failed: list[tuple[str, str]] = []
            for name in pending:
                reason = _load_one(loader, budget, name)
                if reason is None:
                    out.modules[name] = loader.modules_collection.get_member(name)
                else:
                    failed.append((name, reason))
            pending = [name for name, _ in failed]
            if not failed or attempt == 1:
                out.skipped.extend(Skipped(name, reason) for name, reason in failed)
                break
        # Aliases left unresolved are passed over when entries are made.
        with suppress(RecursionError, griffe.GriffeError):
            loader.resolve_aliases(implicit=False, external=False, max_iterations=8)
    _unparsed(loader, budget, out)
    out.modules_read = budget.modules
    return out


def _unparsed(loader: _Loader, budget: _Budget, out: Loaded) -> None:
    """List the files admitted that griffe left out (a syntax error, not UTF-8)."""
    for file in sorted(budget.admitted):
        parts = Path(budget.shown(file)).with_suffix("").parts
        if Path(budget.shown(file)).is_absolute():
            continue
        parts = parts[:-1] if parts[-1] == "__init__" else parts
        if not parts or parts[0] not in out.modules:
            continue  # a package that failed as a whole is listed already
        try:
            loader.modules_collection.get_member(".".join(parts))
        except (KeyError, ValueError, griffe.GriffeError):
            out.skipped.append(Skipped(budget.shown(file), UNPARSED))


def _load_one(loader: _Loader, budget: _Budget, name: str) -> str | None:
    """Load one top-level package; None when read, else why not."""
    root = budget.root
    init = next(
        (f for f in (root / name / "__init__.py", root / name / "__init__.pyi") if f.is_file()),
        None,
    )
    single = next((f for f in (root / f"{name}.py", root / f"{name}.pyi") if f.is_file()), None)
    top = init or single
    if top is None:
        return "no package or module of that name"
    if not budget.admit(top):
        return "its top module is not read (listed above)"
    stub = top.with_suffix(".pyi")
    if stub != top and stub.is_file() and not budget.admit(stub):
        return "its top module's stub is not read (listed above)"
    try:
        loader.load(name, try_relative_path=False)
    except (griffe.GriffeError, ImportError, SyntaxError, RecursionError, ValueError) as e:
        reason = f"not read: {type(e).__name__}: {e}"
    except OSError as e:
        reason = f"not read: {e.strerror or e}"
    else:
        return None
    if name in loader.modules_collection.members:  # half read: read again, or not at all
        loader.modules_collection.del_member(name)
    return reason
