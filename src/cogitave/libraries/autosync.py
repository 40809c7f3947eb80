"""A served collection of libraries kept current with a project (``serve``/``mcp --project DIR
--sync``): the docs of every dependency at the version the project's lockfiles pin.

:class:`ProjectSync` runs what ``index --project`` runs (:mod:`cogitave.libraries.deps`: plan,
then fetch what is not held) in one background thread: at start, and after every burst of
changes to the manifests and lockfiles directly in the project folder (watched with
watchfiles, the folder alone, not what is below it; a look at their sizes and times every
``poll_s`` as well, so a change the watcher missed is still seen). One run at a time:
changes during a run schedule exactly one more run after it. A run writes through the
collection's writes, which hold its writer lock (a second writer, such as an ``index``
started by hand meanwhile, makes a fetch fail with its reason, never a mixed collection).
After each run the reader reads ``LIBRARIES.json`` again and is pinned to the project again
(:meth:`~cogitave.libraries.collection.LibraryCollection.use_project`), so searches read the
new versions at once.

Nothing a run does ends the serving: a failing dependency is an outcome with its reason, a
failing run (a project folder gone, a manifest unreadable) is the run's error; both are in
:meth:`ProjectSync.status` and logged (the ``cogitave`` logger). The surfaces only read that
status (:func:`status_of`, through ``list_libraries``).
"""

from __future__ import annotations

import logging
import threading
import weakref
from collections import deque
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from cogitave.errors import CogitaveError, InputError
from cogitave.libraries.collection import LibraryCollection
from cogitave.libraries.deps import LOCKFILES, Outcome
from cogitave.printable import printable

log = logging.getLogger("cogitave")

MANIFESTS = ("pyproject.toml", "Pipfile", "package.json")
"""The manifests read in a project folder (with ``requirements*.txt`` and the lockfiles)."""
HISTORY = 16
"""Finished runs kept for :meth:`ProjectSync.wait`."""
POLL_S = 2.0
"""Seconds between looks at the project's files' sizes and times (the watcher's fallback)."""

_attached: weakref.WeakKeyDictionary[object, ProjectSync] = weakref.WeakKeyDictionary()


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def is_project_file(folder: Path, path: Path) -> bool:
    """A manifest or lockfile directly in the project folder (what ``read_project`` reads)."""
    if path.parent != folder:
        return False
    name = path.name
    return (
        name in MANIFESTS
        or name in LOCKFILES
        or (name.startswith("requirements") and name.endswith(".txt"))
    )


@dataclass(frozen=True)
class DependencyOutcome:
    """What the last run did for one dependency: ``fetched``, ``held`` or ``failed`` (with
    why)."""

    name: str
    version: str | None
    status: str
    source: str = ""
    reason: str = ""


@dataclass
class RunReport:
    """One finished run: when, its outcome per dependency, or the error that ended it."""

    started_at: str
    finished_at: str = ""
    why: str = ""
    dependencies: list[DependencyOutcome] = field(default_factory=list)
    error: str | None = None

    def counts(self) -> dict[str, int]:
        out = {"held": 0, "fetched": 0, "failed": 0}
        for d in self.dependencies:
            out[d.status] = out.get(d.status, 0) + 1
        return out


class ProjectSync:
    """Keeps ``reader`` holding the docs of ``project``'s dependencies at their pins (see the
    module doc). ``start`` begins; ``request`` asks for one more run; ``wait`` waits for a
    run to finish; ``status`` is what ``list_libraries`` shows."""

    def __init__(
        self,
        reader: LibraryCollection,
        project: Path,
        *,
        dev: bool = False,
        encoder: str | None = None,
        poll_s: float = POLL_S,
    ) -> None:
        self.reader, self.project, self.dev, self.encoder = reader, project.resolve(), dev, encoder
        self.poll_s = poll_s
        self._cond = threading.Condition()
        self._pending = ""  # why the next run is wanted ("" none)
        self._state = "idle"
        self._current: dict[str, Any] | None = None
        self._last: RunReport | None = None
        self._history: deque[RunReport] = deque(maxlen=HISTORY)  # the last runs, oldest first
        self._runs = 0
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []

    # -- lifecycle ----------------------------------------------------------------------------
    def start(self) -> ProjectSync:
        """Run once now, then after every change of the project's manifests and lockfiles."""
        if self._threads:
            return self
        self.request("start")
        for target, name in ((self._work, "sync-run"), (self._watch, "sync-watch")):
            t = threading.Thread(target=target, name=f"cogitave-{name}", daemon=True)
            t.start()
            self._threads.append(t)
        _attached[self.reader] = self
        return self

    def stop(self, timeout: float = 30.0) -> None:
        """Stop watching and running (a run under way finishes its current fetch first)."""
        self._stop.set()
        with self._cond:
            self._cond.notify_all()
        for t in self._threads:
            t.join(timeout)
        self._threads.clear()
        if _attached.get(self.reader) is self:
            del _attached[self.reader]

    def request(self, why: str) -> None:
        """Ask for a run (one more after the one under way; asks while one waits merge)."""
        with self._cond:
            self._pending = self._pending or why
            self._cond.notify_all()

    def wait(self, runs: int, timeout: float) -> RunReport:
        """The report of the ``runs``-th finished run (counted from 1), once there is one;
        TimeoutError after ``timeout`` seconds without it, LookupError when it is older
        than the last :data:`HISTORY` runs."""
        with self._cond:
            if not self._cond.wait_for(lambda: self._runs >= runs, timeout):
                raise TimeoutError(f"run {runs} did not finish in {timeout}s ({self._runs} did)")
            back = self._runs - runs
            if back >= len(self._history):
                raise LookupError(f"run {runs} is older than the last {HISTORY} runs")
            return self._history[-1 - back]

    @property
    def runs(self) -> int:
        """How many runs have finished."""
        with self._cond:
            return self._runs

    # -- what the surfaces show ---------------------------------------------------------------
    def status(self) -> dict[str, Any]:
        """JSON: the project, the state (``idle``, ``planning``, ``fetching`` with the
        library version and its place in the run), whether another run is wanted, and the
        last run (when, per dependency what it did, the error that ended it)."""
        with self._cond:
            last = self._last
            out: dict[str, Any] = {
                "project": str(self.project),
                "state": self._state,
                "current": dict(self._current) if self._current else None,
                "pending": bool(self._pending),
                "runs": self._runs,
                "last": None,
            }
        if last is not None:
            out["last"] = {
                "started_at": last.started_at,
                "finished_at": last.finished_at,
                "why": last.why,
                "error": last.error,
                "counts": last.counts(),
                "dependencies": [asdict(d) for d in last.dependencies],
            }
        return out

    def _set(self, state: str, current: dict[str, Any] | None = None) -> None:
        with self._cond:
            self._state, self._current = state, current

    # -- the threads --------------------------------------------------------------------------
    def _work(self) -> None:
        while True:
            with self._cond:
                self._cond.wait_for(lambda: self._pending or self._stop.is_set())
                if self._stop.is_set():
                    return
                why, self._pending = self._pending, ""
            report = RunReport(_now(), why=why)
            try:
                report = _run_once(self)
                report.why = why
            except Exception as e:  # a run never ends the serving
                said = e.message if isinstance(e, CogitaveError) else f"{type(e).__name__}: {e}"
                report.error = printable(" ".join(str(said).split()), 500)
                log.warning("syncing the docs of %s: %s", self.project, report.error)
            report.finished_at = _now()
            with self._cond:
                self._last, self._state, self._current = report, "idle", None
                self._history.append(report)
                self._runs += 1
                self._cond.notify_all()
            if report.error is None:
                c = report.counts()
                log.info("synced the docs of %s: %d held, %d fetched, %d failed", self.project,
                         c["held"], c["fetched"], c["failed"])  # fmt: skip

    def _fingerprint(self) -> tuple[tuple[str, int, int], ...]:
        """The size and time of every manifest and lockfile of the project."""
        out = []
        try:
            found = sorted(p for p in self.project.iterdir() if is_project_file(self.project, p))
        except OSError:
            return ()
        for p in found:
            try:
                st = p.stat()
            except OSError:
                continue
            out.append((p.name, st.st_mtime_ns, st.st_size))
        return tuple(out)

    def _watch(self) -> None:
        """Request a run after each burst of changes to a manifest or lockfile, until
        stopped; a look at their sizes and times every ``poll_s`` catches what a watcher
        missed (or cannot see: a folder on a network file system)."""
        from watchfiles import DefaultFilter, watch

        noise = DefaultFilter()
        seen = self._fingerprint()

        def wanted(change: Any, path: str) -> bool:
            return noise(change, path) and is_project_file(self.project, Path(path))

        while not self._stop.is_set():
            try:
                for changes in watch(self.project, watch_filter=wanted, debounce=3000, step=300,
                                     stop_event=self._stop, rust_timeout=int(self.poll_s * 1000),
                                     yield_on_timeout=True, raise_interrupt=False,
                                     recursive=False):  # fmt: skip
                    now = self._fingerprint()
                    if changes or now != seen:
                        seen = now
                        self.request("the project's manifests or lockfiles changed")
            except Exception as e:  # a folder gone or unwatchable: look again later
                log.warning("watching %s: %s", self.project, e)
                if self._stop.wait(self.poll_s):
                    return
                now = self._fingerprint()
                if now != seen:
                    seen = now
                    self.request("the project's manifests or lockfiles changed")


def _run_once(sync: ProjectSync) -> RunReport:
    """Plan and fetch as ``index --project`` does (no failure limit: every dependency is
    tried), then read the collection again and pin the reader to the project again."""
    from cogitave.libraries import deps

    report = RunReport(_now())
    sync._set("planning")
    reader, project = sync.reader, sync.project
    ctx = deps.context(reader.path, project, encoder=sync.encoder)
    chosen, _warnings = deps.project_dependencies(project, dev=sync.dev)
    plans = deps.plan(chosen, ctx)
    todo = [p for p in plans if not p.held]
    outcomes: dict[int, Outcome] = {}
    for i, p in enumerate(todo, 1):
        sync._set("fetching", {"library": f"{p.name}@{p.version or '?'}", "index": i,
                               "of": len(todo)})  # fmt: skip
        (got,) = deps.run([p], ctx, max_failures="100%").outcomes
        outcomes[id(p)] = got
        if got.status == "failed":
            log.warning("syncing %s@%s: %s", p.name, p.version, got.reason)
    for p in plans:
        o = outcomes.get(id(p))
        if o is None:
            report.dependencies.append(DependencyOutcome(p.name, p.version, "held"))
        else:
            report.dependencies.append(
                DependencyOutcome(o.name, o.version, o.status, o.source, o.reason)
            )
    reader.refresh()
    reader.use_project(project)
    return report


def start(reader: object, project: Path | None, **kw: Any) -> ProjectSync:
    """``--sync``: keep ``reader`` (a collection of libraries) holding ``project``'s
    dependencies; an error when there is no project or the collection is not of libraries."""
    if project is None:
        raise InputError("--sync keeps a project's dependencies current: give --project DIR")
    if not isinstance(reader, LibraryCollection):
        raise InputError(
            "--sync needs a collection of libraries (made by index --project), not a "
            "collection of one source"
        )
    if not project.is_dir():
        raise InputError(f"--project {project} is not a folder")
    return ProjectSync(reader, project, **kw).start()


def status_of(reader: object) -> dict[str, Any] | None:
    """What the sync of ``reader`` is doing and last did (None: nothing syncs it)."""
    try:
        sync = _attached.get(reader)
    except TypeError:  # a reader that cannot be weakly referenced: nothing syncs it
        return None
    return sync.status() if sync is not None else None
