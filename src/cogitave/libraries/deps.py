"""A project -> the docs of every dependency it uses, at the version it uses, in one
collection of libraries (``cogitave index --collection DIR --project PROJECT``).

Three phases:

- **which** (:func:`wanted`): the project's dependencies (:func:`~cogitave.libraries.project.
  read_project`; runtime ones, ``dev`` adds the dev ones, ``only`` keeps a subset), each at
  a version: the lockfile's (or an exact pin in a manifest), else the one installed in the
  project's environment, else the newest the package index lists that the declared range
  allows. The plan says which.
- **plan** (:func:`plan`): per dependency, "held already" when the collection holds that
  version, else the first source step (:mod:`cogitave.libraries.steps`) with a candidate,
  and why each step before it did not apply.
- **run** (:func:`run`): each dependency not held is fetched by its candidates in order
  (one failing, the next is tried); a dependency none fetches is a failure with its reasons,
  and the others go on. Past ``max_failures`` (a count or a percentage of the dependencies
  fetched, as a crawl's ``--max-failures``) the run fails with its report
  (:class:`~cogitave.errors.DependenciesFailedError`); what was fetched stays. ``prune``
  then deletes the versions held that no dependency of the run pins (with ``only``: of those
  libraries alone).

A second run fetches only what changed: a version already held is "held already", nothing is
read or published for it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from cogitave.errors import CogitaveError, DependenciesFailedError, InputError, PackageIndexError
from cogitave.libraries.environment import environment
from cogitave.libraries.metadata import index_urls, newest_matching
from cogitave.libraries.names import check_version, library_key
from cogitave.libraries.project import Dependency, read_project
from cogitave.libraries.steps import (
    NOT_A_SOURCE,
    Candidate,
    Context,
    NotHere,
    Step,
    Want,
    default_steps,
)
from cogitave.printable import printable

LOCKFILES = ("uv.lock", "poetry.lock", "pdm.lock", "Pipfile.lock", "package-lock.json",
             "npm-shrinkwrap.json", "pnpm-lock.yaml", "yarn.lock", "bun.lock")  # fmt: skip
MAX_DEPENDENCIES = 2000
"""Dependencies one run considers (a project naming more is refused)."""


@dataclass(frozen=True)
class Planned:
    """One dependency's plan: the version, whether it is held, the candidates in order."""

    name: str
    ecosystem: str
    version: str | None
    version_from: str
    held: bool
    candidates: tuple[Candidate, ...] = ()
    skipped: tuple[NotHere, ...] = ()
    want: Want | None = None
    problem: str = ""  # why no version could be chosen

    @property
    def line(self) -> str:
        """One line of the plan."""
        head = f"{self.name} {self.version or '?'} ({self.version_from})"
        if self.problem:
            return printable(f"{head}: cannot fetch: {self.problem}", 600)
        if self.held:
            return printable(f"{head}: held already", 600)
        if not self.candidates:
            reasons = _reasons(self.skipped) or "no step applies"
            return printable(f"{head}: no source: {reasons}", 600)
        c = self.candidates[0]
        why = f"{c.step}: {c.why}"
        if said := _reasons(self.skipped):  # why the places tried before it were not used
            why += f"; {said}"
        return printable(f"{head}: from {c.where} ({why})", 600)


@dataclass(frozen=True)
class Outcome:
    """What the run did for one dependency."""

    name: str
    version: str | None
    version_from: str
    status: str  # "held", "fetched", "failed"
    source: str = ""
    step: str = ""
    nodes: int = 0
    api_entries: int | None = 0
    reason: str = ""

    @property
    def line(self) -> str:
        head = f"{self.name} {self.version or '?'} ({self.version_from})"
        if self.status == "held":
            return printable(f"{head}: held already", 600)
        if self.status == "fetched":
            api = "" if self.api_entries is None else f", {self.api_entries} API entries"
            return printable(
                f"{head}: fetched from {self.source} ({self.step}): {self.nodes} nodes{api}", 600
            )
        return printable(f"{head}: failed: {self.reason}", 600)


@dataclass
class Report:
    """What a run did: per dependency, what was pruned, the project's warnings."""

    outcomes: list[Outcome] = field(default_factory=list)
    pruned: list[str] = field(default_factory=list)
    warnings: tuple[str, ...] = ()

    def count(self, status: str) -> int:
        return sum(1 for o in self.outcomes if o.status == status)

    def lines(self) -> list[str]:
        out = [f"warning: {printable(w, 400)}" for w in self.warnings]
        out += [o.line for o in self.outcomes]
        out += [f"pruned {printable(r, 200)} (no dependency pins it)" for r in self.pruned]
        out.append(
            f"{len(self.outcomes)} dependencies: {self.count('held')} held already, "
            f"{self.count('fetched')} fetched, {self.count('failed')} failed"
            + (f"; {len(self.pruned)} versions pruned" if self.pruned else "")
        )
        return out

    def __str__(self) -> str:
        return "\n".join(self.lines())


# -- which dependencies, at which version -----------------------------------------------------
def select(
    deps: Sequence[Dependency], *, dev: bool = False, only: Sequence[str] = ()
) -> list[Dependency]:
    """The runtime dependencies (with ``dev``, the dev ones too); ``only``: those named
    (by normalised name); a name in ``only`` the project does not use is an error."""
    chosen = [d for d in deps if dev or not d.dev]
    if only:
        keys = {library_key(n) for n in only if n.strip()}
        chosen = [d for d in deps if library_key(d.key) in keys or library_key(d.name) in keys]
        named = {library_key(d.key) for d in chosen} | {library_key(d.name) for d in chosen}
        missing = keys - named
        if missing:
            raise InputError(f"--only: the project uses no {', '.join(sorted(missing))}")
    if len(chosen) > MAX_DEPENDENCIES:
        raise InputError(
            f"the project names {len(chosen)} dependencies; at most {MAX_DEPENDENCIES}"
        )
    return chosen


def version_of(dep: Dependency, ctx: Context) -> tuple[str | None, str, str]:
    """(version, where it came from, why none): the lockfile's or an exact pin, else the one
    installed, else the newest the index lists that the range allows."""
    if dep.version:
        lock = Path(dep.source).name in LOCKFILES
        said = ("locked in " if lock else "pinned in ") + printable(dep.source, 200)
        return dep.version, said, ""
    got = ctx.env.find(dep)
    if got is not None and got.version:
        return got.version, "installed", ""
    rng = dep.specifier or "any version"
    try:
        newest = newest_matching(dep, ctx.bases)
    except PackageIndexError as e:
        return None, f"range {printable(rng, 100)}", f"not locked or installed; {e.message}"
    if newest is None:
        return None, f"range {printable(rng, 100)}", "the package index lists no version it allows"
    return newest, f"newest matching {printable(rng, 100)}", ""


# -- planning ---------------------------------------------------------------------------------
def plan(
    deps: Sequence[Dependency], ctx: Context, steps: Sequence[Step] | None = None
) -> list[Planned]:
    """Each dependency's plan (see the module doc); asks package indexes (metadata, tags),
    writes nothing."""
    from cogitave.libraries.layout import is_library_collection, read_manifest

    steps = list(steps) if steps is not None else default_steps()
    held: set[str] = set()
    if is_library_collection(ctx.collection):
        held = {e.ref for e in read_manifest(ctx.collection).libraries}
    out: list[Planned] = []
    for dep in deps:
        version, where, problem = version_of(dep, ctx)
        if version is not None:
            try:
                version = check_version(version)
            except InputError as e:
                version, problem = None, e.message
        if version is None:
            out.append(Planned(dep.name, dep.ecosystem, None, where, False, problem=problem))
            continue
        try:
            ref = f"{library_key(dep.name)}@{version}"
        except InputError as e:  # a name no library can have: said, the others go on
            out.append(Planned(dep.name, dep.ecosystem, version, where, False, problem=e.message))
            continue
        want = Want(dep, version, where)
        if ref in held:
            out.append(Planned(dep.name, dep.ecosystem, version, where, True, want=want))
            continue
        cands: list[Candidate] = []
        skipped: list[NotHere] = []
        for step in steps:
            got = step.plan(want, ctx)
            if isinstance(got, NotHere):
                skipped.append(got)
                continue
            if step.exclusive:
                cands, skipped = [got], []
                break
            cands.append(got)
        first = [s for s in skipped if not cands or _before(s, cands[0], steps)]
        out.append(Planned(dep.name, dep.ecosystem, version, where, False, tuple(cands),
                           tuple(first), want))  # fmt: skip
    return out


def _before(skip: NotHere, cand: Candidate, steps: Sequence[Step]) -> bool:
    names = [s.name for s in steps]
    return names.index(skip.step) < names.index(cand.step) and skip.step != "sources"


def _reasons(skipped: Sequence[NotHere]) -> str:
    said = [f"{s.step}: {s.reason}" for s in skipped if s.reason != NOT_A_SOURCE]
    return "; ".join(said)


# -- running ----------------------------------------------------------------------------------
def run(
    plans: Sequence[Planned],
    ctx: Context,
    steps: Sequence[Step] | None = None,
    *,
    max_failures: str = "10%",
    on_done: Callable[[Outcome, int, int], None] | None = None,
) -> Report:
    """Fetch every dependency not held (see the module doc); ``on_done(outcome, done,
    total)`` after each."""
    from cogitave.ingest.web.crawl import failure_limit

    steps = list(steps) if steps is not None else default_steps()
    by_name = {s.name: s for s in steps}
    failure_limit(max_failures, 0)  # a bad value fails before any work
    report = Report()
    todo = [p for p in plans if not p.held]
    done = 0
    for p in plans:
        if p.held:
            report.outcomes.append(Outcome(p.name, p.version, p.version_from, "held"))
            continue
        report.outcomes.append(_fetch_one(p, ctx, by_name))
        done += 1
        if on_done is not None:
            on_done(report.outcomes[-1], done, len(todo))
    failed = report.count("failed")
    if failed and failed > failure_limit(max_failures, len(todo)):
        raise DependenciesFailedError(
            f"{failed} of {len(todo)} dependencies failed, more than --max-failures "
            f"{max_failures} allows (what was fetched is kept)",
            details={"report": str(report)},
        )
    return report


def _fetch_one(p: Planned, ctx: Context, steps: dict[str, Step]) -> Outcome:
    if p.want is None:
        return Outcome(p.name, p.version, p.version_from, "failed", reason=p.problem)
    reasons = [f"{s.step}: {s.reason}" for s in p.skipped if s.reason != NOT_A_SOURCE]
    for cand in p.candidates:
        try:
            got = steps[cand.step].fetch(p.want, cand, ctx)
        except CogitaveError as e:
            reasons.append(f"{cand.step}: {' '.join(e.message.split())}")
            continue
        return Outcome(p.name, p.version, p.version_from, "fetched", got.source, cand.step,
                       got.nodes, got.api_entries)  # fmt: skip
    why = "; ".join(reasons) or "no step applies"
    return Outcome(p.name, p.version, p.version_from, "failed", reason=printable(why, 500))


def prune(
    collection: Path, plans: Sequence[Planned], only: Sequence[str] = (), *, dry: bool = False
) -> list[str]:
    """Delete the library versions held that no planned dependency pins (with ``only``: of
    those libraries alone); returns them (``dry``: only says which)."""
    from cogitave.libraries.collection import LibraryCollection
    from cogitave.libraries.layout import is_library_collection

    if not is_library_collection(collection):
        return []
    lib = LibraryCollection.open(collection)
    pinned = {f"{library_key(p.name)}@{p.version}" for p in plans if p.version}
    keys = {library_key(p.name) for p in plans} if only else None
    gone: list[str] = []
    for e in list(lib.manifest.libraries):
        if e.ref in pinned or (keys is not None and e.key not in keys):
            continue
        gone += [e.ref] if dry else [d.ref for d in lib.delete_library(e.ref)]
    return gone


def context(
    collection: Path, project: Path, *, encoder: str | None = None, sets: Sequence[str] = ()
) -> Context:
    """The context of a run: the project's environment, the package indexes, ``[libraries]
    sources`` and ``registries`` of the collection's settings (with ``sets`` applied)."""
    from cogitave.config import Settings
    from cogitave.libraries.layout import is_library_collection

    settings = Settings()
    if is_library_collection(collection):
        from cogitave.libraries.collection import LibraryCollection

        settings = LibraryCollection.open(collection).settings()
    if sets:
        settings = settings.with_sets(sets)
    libs = settings.libraries
    return Context(collection, environment(project), index_urls(libs.pypi_url, libs.npm_url),
                   dict(libs.sources), encoder, tuple(libs.registries))  # fmt: skip


def project_dependencies(
    project: Path, *, dev: bool = False, only: Sequence[str] = ()
) -> tuple[list[Dependency], tuple[str, ...]]:
    """The dependencies a run covers and the project's warnings."""
    if not project.is_dir():
        raise InputError(f"--project {project} is not a folder")
    deps = read_project(project)
    if not deps.files:
        raise InputError(
            f"--project {project}: no manifest or lockfile (pyproject.toml, requirements*.txt, "
            "Pipfile, package.json, their locks)"
        )
    return select(deps.dependencies, dev=dev, only=only), deps.warnings
