"""(dependency, held docs versions) -> the one to read (:func:`match_version`): versions, ``x``
patterns and ranges parsed per ecosystem (:class:`_Pep440` with Poetry's constraint syntax for
python, :class:`_Semver` with npm's ranges), and the rules that choose exact, nearest, range or
latest. Lockfile readers use the same schemes to pick among several installed versions."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from nodesemver import Range as _NpmRange
from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

from cogitave.libraries.project.model import Dependency, VersionMatch

TAGS = ("latest", "stable", "main", "master", "next", "dev")
"""Held names that stand for a moving version, in the order the "latest" rule prefers them."""


def _pep440(text: str) -> Version | None:
    try:
        return Version(text)
    except InvalidVersion:
        return None


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


def _fits(scheme: _Scheme, rng: Any, version: str | None) -> bool:
    parsed = scheme.version(version) if version else None
    return parsed is not None and scheme.satisfies(rng, parsed)


def _order_key(scheme: _Scheme, version: str | None) -> tuple[int, Any]:
    parsed = scheme.version(version) if version else None
    return (0, None) if parsed is None else (1, parsed)


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
