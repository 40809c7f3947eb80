"""griffe's model of a distribution's packages -> its public API as :class:`ApiDoc` entries.

Public modules are those reached from a top-level package through names without a leading
underscore. A module's public names are its ``__all__`` when it has one; else what it
defines under a public name, and, for a package's ``__init__``, what it imports from the
distribution's own modules (``from .app import Flask``: a re-export). Each object is one
entry, however many names reach it: named by the shortest public path (a name in a package
named like the distribution first, then the fewest dots, then its own name over a renaming
import, then the shortest), the others and
the path it is defined at kept as ``aliases`` (``attrs.define``, defined in
``attr._next_gen``, also reached as ``attr.define``). A public class brings its public
methods, properties and documented attributes, named under the class's public name.

Each entry has its kind (``module``, ``class``, ``exception``, ``function``, ``method``,
``attribute``), its signature as Python source (``def get(url: URL | str, *, params: ... =
None) -> Response``; a class shows its constructor, an attribute its annotation and value),
its docstring as written and as Markdown (:mod:`~cogitave.ingest.pyapi.docstrings`), and the
file and line it is defined at. Entries stop at :attr:`Limits.max_objects`; what is left out
is listed.
"""

from __future__ import annotations

import builtins
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import griffe

from cogitave.ingest.pyapi.docstrings import docstring_markdown, summary
from cogitave.ingest.pyapi.load import Limits, Loaded, Skipped

MAX_VALUE_CHARS = 200  # an attribute's value shown in its signature, at most
# A longer dotted name is left out: it is a node's uid, and a library version's namespace is
# put before it (records.MAX_UID is 1024).
MAX_NAME = 512


@dataclass(frozen=True)
class ApiDoc:
    """One public object of a package."""

    name: str  # the public dotted name ("httpx.Client")
    kind: str  # module, class, exception, function, method, attribute
    signature: str  # Python source ("" for a module)
    docstring: str  # as written (indentation cleaned)
    markdown: str  # the docstring as Markdown
    path: str  # the file it is defined in, relative to the folder read
    line: int  # its first line there (0: unknown)
    canonical: str  # where it is defined ("httpx._client.Client")
    aliases: tuple[str, ...] = ()  # other names reaching it (the canonical one included)
    module: str = ""  # the public module whose page holds it
    parent: str = ""  # the class holding a method or attribute ("" for module members)

    @property
    def summary(self) -> str:
        """The first paragraph of the docstring, on one line."""
        return summary(self.docstring)


@dataclass
class Collected:
    """The entries of a read, in page order, and what was left out."""

    entries: list[ApiDoc] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    unresolved: int = 0  # re-exports whose target was not read (another distribution's)
    names: set[str] = field(default_factory=set)  # the names given so far


@dataclass
class _Candidate:
    names: list[tuple[str, str]] = field(default_factory=list)  # (public name, module)
    obj: griffe.Object | None = None


def collect(loaded: Loaded, prefer: str = "", limits: Limits | None = None) -> Collected:
    """The public API of the packages ``loaded`` holds (see the module doc); ``prefer``: the
    top-level package whose names come first (the one named like the distribution)."""
    limits = limits or Limits()
    out = Collected()
    modules = list(_public_modules(loaded))
    found: dict[str, _Candidate] = {}
    for module in modules:
        for name, target in _exports(module, loaded, out):
            cand = found.setdefault(target.path, _Candidate())
            cand.obj = target
            cand.names.append((f"{module.path}.{name}", module.path))
    for module in modules:
        cand = found.setdefault(module.path, _Candidate())
        cand.obj = module
        cand.names.insert(0, (module.path, module.path))  # a module's page is its own

    def rank(name: str, own: str = "") -> tuple[bool, int, bool, int, str]:
        top, last = name.split(".", 1)[0], name.rsplit(".", 1)[-1]
        return (top != prefer, name.count("."), last != own, len(name), name)

    chosen: list[tuple[str, str, _Candidate]] = []
    for cand in found.values():
        own = cand.obj.name if cand.obj is not None else ""
        names = sorted({n for n, _ in cand.names}, key=lambda n, o=own: rank(n, o))
        holder = dict(cand.names)[names[0]]
        chosen.append((names[0], holder, cand))
    chosen.sort(key=lambda c: (c[1], c[0].count("."), c[0]))
    root = loaded.root
    for public, holder, cand in chosen:
        obj = cand.obj
        assert obj is not None
        names = {n for n, _ in cand.names} | {obj.path}
        aliases = tuple(sorted(names - {public}, key=lambda n, o=obj.name: rank(n, o)))
        module = public if obj.is_module else holder
        if not _add(out, _entry(obj, public, aliases, module, "", root), limits):
            break
        if obj.is_class:
            for member in _class_members(obj, public, module, root):
                if not _add(out, member, limits):
                    break
    return out


def _add(out: Collected, entry: ApiDoc, limits: Limits) -> bool:
    """Add ``entry`` unless its name is taken (a function named like a submodule: the first
    one keeps it); False once the entries are at their bound."""
    if entry.name in out.names:
        out.skipped.append(Skipped(entry.path, f"{entry.name}: the name of another object"))
        return True
    if len(entry.name) > MAX_NAME:
        out.skipped.append(Skipped(entry.path, f"a name of {len(entry.name)} characters"))
        return True
    if len(out.entries) >= limits.max_objects:
        if not any(s.reason.startswith("past the") and s.path == "*" for s in out.skipped):
            reason = f"past the {limits.max_objects} objects made from one distribution"
            out.skipped.append(Skipped("*", f"{reason}; {entry.name} and later left out"))
        return False
    out.entries.append(entry)
    out.names.add(entry.name)
    return True


def _public_modules(loaded: Loaded) -> Iterator[griffe.Module]:
    """The public modules, shallowest first (see the module doc)."""
    queue = [m for name, m in sorted(loaded.modules.items()) if not name.startswith("_")]
    seen: set[str] = set()
    while queue:
        module = queue.pop(0)
        if module.path in seen:
            continue
        seen.add(module.path)
        yield module
        for name, sub in sorted(module.members.items()):
            # not ``module.modules``: that resolves every alias, and one may point nowhere
            if not name.startswith("_") and isinstance(sub, griffe.Module):
                queue.append(sub)


def _exports(
    module: griffe.Module, loaded: Loaded, out: Collected
) -> Iterator[tuple[str, griffe.Object]]:
    """(name, the object it names) for each public name of ``module`` that is not one of its
    submodules."""
    exports = _export_names(module)
    for name, member in list(module.members.items()):
        if name.startswith("__"):
            continue
        if exports is not None:
            if name not in exports:
                continue
        elif name.startswith("_"):
            continue
        elif member.is_alias and not _is_package(module):
            continue  # an import in a plain module is not its API
        target = _target(member)
        if target is None:
            if member.is_alias and (exports is not None or _inside(member, loaded)):
                out.unresolved += 1
            continue
        if target.path.split(".", 1)[0] not in loaded.modules:
            if exports is not None:
                out.unresolved += 1
            continue  # another distribution's object: not this one's API
        if target.is_module and not member.is_alias:
            continue  # a submodule: a page of its own
        if target.is_module and target.path.rsplit(".", 1)[-1].startswith("_"):
            continue
        if target.is_attribute and not member.is_alias and exports is None and not target.docstring:
            continue  # an undocumented module constant: not worth an entry
        yield name, target


def _export_names(module: griffe.Module) -> set[str] | None:
    try:
        exports = module.exports
    except Exception:  # a computed __all__ griffe cannot follow
        return None
    if exports is None:
        return None
    return {str(getattr(e, "name", e)) for e in exports}


def _is_package(module: griffe.Module) -> bool:
    path = module.filepath
    return isinstance(path, list) or (path is not None and path.stem == "__init__")


def _inside(member: griffe.Object | griffe.Alias, loaded: Loaded) -> bool:
    target = getattr(member, "target_path", "")
    return bool(target) and str(target).split(".", 1)[0] in loaded.modules


def _target(member: griffe.Object | griffe.Alias) -> griffe.Object | None:
    """The object a member names, through its aliases (None: not resolvable here)."""
    if not member.is_alias:
        return member  # type: ignore[return-value]
    try:
        target = member.final_target  # type: ignore[union-attr]
    except (griffe.AliasResolutionError, griffe.CyclicAliasError, RecursionError):
        return None
    return target


def _class_members(cls: griffe.Object, public: str, module: str, root: Path) -> list[ApiDoc]:
    """A public class's own public members (see the module doc)."""
    out: list[ApiDoc] = []
    for name, member in cls.members.items():
        if name.startswith("_") or member.is_alias:
            continue
        if member.is_attribute and not member.docstring:
            continue
        if not (member.is_function or member.is_attribute or member.is_class):
            continue
        canonical = member.path
        aliases = (canonical,) if canonical != f"{public}.{name}" else ()
        out.append(_entry(member, f"{public}.{name}", aliases, module, public, root))
    return out


def _entry(
    obj: griffe.Object,
    public: str,
    aliases: tuple[str, ...],
    module: str,
    parent: str,
    root: Path,
) -> ApiDoc:
    kind = _kind(obj)
    doc = obj.docstring.value if obj.docstring else ""
    return ApiDoc(
        name=public,
        kind=kind,
        signature=signature(obj, public.rsplit(".", 1)[-1], kind),
        docstring=doc,
        markdown=docstring_markdown(obj),
        path=_relative(obj, root),
        line=obj.lineno or 0,
        canonical=obj.path,
        aliases=aliases,
        module=module,
        parent=parent,
    )


def _kind(obj: griffe.Object) -> str:
    if obj.is_module:
        return "module"
    if obj.is_class:
        return "exception" if _is_exception(obj) else "class"
    if obj.is_function:
        if "property" in obj.labels or "cached_property" in obj.labels:
            return "attribute"
        parent = obj.parent
        return "method" if parent is not None and parent.is_class else "function"
    return "attribute"


def _is_exception(cls: griffe.Object, depth: int = 0) -> bool:
    """Whether a class derives from ``BaseException`` (through bases read, or a builtin)."""
    if depth > 12:
        return False
    for base in getattr(cls, "bases", ()):
        name = str(base).rsplit(".", 1)[-1]
        found = getattr(builtins, name, None)
        if isinstance(found, type) and issubclass(found, BaseException):
            return True
    try:
        resolved = cls.resolved_bases  # type: ignore[attr-defined]
    except Exception:
        return False
    return any(_is_exception(b, depth + 1) for b in resolved if b.is_class)


def signature(obj: griffe.Object, name: str, kind: str) -> str:
    """``obj``'s signature as Python source (see the module doc)."""
    try:
        if obj.is_function:
            if kind == "attribute":  # a property: the type it gives
                returns = obj.returns  # type: ignore[attr-defined]
                return f"{name}: {returns}" if returns else name
            text = obj.signature(name=name)  # type: ignore[attr-defined]
            prefix = "async def" if "async" in obj.labels else "def"
            return f"{prefix} {text}"
        if obj.is_class:
            text = obj.signature(name=name)  # type: ignore[attr-defined]
            return f"class {text or name}"
        if obj.is_attribute:
            annotation = getattr(obj, "annotation", None)
            value = getattr(obj, "value", None)
            text = name + (f": {annotation}" if annotation else "")
            if value is not None:
                shown = str(value)
                if len(shown) > MAX_VALUE_CHARS:
                    shown = shown[:MAX_VALUE_CHARS] + "..."
                text += f" = {shown}"
            return text
    except Exception:  # an expression griffe cannot render: no signature, not no entry
        return ""
    return ""


def _relative(obj: griffe.Object, root: Path) -> str:
    path = obj.filepath
    if isinstance(path, list):
        path = path[0] if path else None
    if path is None:
        return ""
    file = Path(path)
    for base in (root, _real(root)):
        if file.is_relative_to(base):
            return file.relative_to(base).as_posix()
    real = file.resolve()
    for base in (root, _real(root)):
        if real.is_relative_to(base):
            return real.relative_to(base).as_posix()
    return file.as_posix()


@lru_cache(maxsize=64)
def _real(root: Path) -> Path:
    return root.resolve()
