"""One listening socket served by several processes: ``cogitave serve --processes N``.

The HTTP server is bound by Python work per request (one core holds the GIL), so more
answers per second on more cores need more processes. :func:`run` forks ``N`` children
right after the socket is bound (:func:`cogitave.surfaces.http.bind`) and before anything
heavy exists in the parent (no reader, no encoder, no thread), so each child opens the
collection read-only itself (readers share the store's root locks), loads its own encoder,
follows the roots writers publish, and runs uvicorn on the inherited socket; a new
connection goes to the process with the fewest open ones (:class:`Balanced`).

The parent only supervises. SIGINT or SIGTERM is passed on to every child (the children
have their own process group, so a terminal's Ctrl-C reaches them once, through the
parent), which finish their requests and exit; a second signal kills the rest. A child that
exits on its own (a crash, a collection it cannot open) is reported in one line, the others
are stopped and the parent exits non-zero: no restart, so a fault that would repeat does not
loop; restarting the server is the service manager's job. A child whose parent died (even
by SIGKILL) sees its end of a pipe close and stops too.
"""

from __future__ import annotations

import contextlib
import errno
import mmap
import os
import signal
import socket
import sys
import threading
import time
import traceback
from collections.abc import Callable, Iterable
from typing import Any

from cogitave.errors import CogitaveError, InputError, InternalError

MAX_AUTO = 8  # ``auto``: each process holds its own encoder (~100 MB)
STOP_GRACE_S = 30.0  # after SIGINT/SIGTERM, the time children get to finish
POLL_S = 0.05
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


def count(value: str) -> int:
    """``--processes``: a number >= 1, or ``auto``: the CPUs this process may run on, at
    most :data:`MAX_AUTO`."""
    if value.strip().lower() == "auto":
        cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
        return max(1, min(cpus or 1, MAX_AUTO))
    try:
        n = int(value)
    except ValueError:
        n = 0
    if n < 1:
        raise InputError(f"--processes {value}: a number >= 1, or auto")
    return n


def check(
    processes: int, workers: int, mcp_sessions: int, ray: str | None, sync: bool = False,
    project: object = None,
) -> None:  # fmt: skip
    """The serve options, or a one-line error: among them, what several processes cannot
    share (MCP sessions, a local Ray, the one writer that ``--sync`` runs)."""
    if workers < 1:
        raise InputError("--workers must be >= 1")
    if sync and (project is None or processes > 1):
        raise InputError(
            "--sync keeps a project's docs current in one process: give --project DIR, "
            "and no --processes"
        )
    if processes > 1 and mcp_sessions > 0:
        raise InputError(
            "--mcp-sessions keeps MCP sessions in one process's memory: "
            "use it with --processes 1, or --mcp-sessions 0 (stateless) with more processes"
        )
    if processes > 1 and ray == "local":
        raise InputError("--ray local starts Ray in each process: use --processes 1 with it")


class _Stop(Exception):
    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


class Seats:
    """The open connections of each server process, in memory they share (mapped before the
    fork); each process writes only its own count."""

    def __init__(self, processes: int) -> None:
        self._map = mmap.mmap(-1, 8 * processes)  # MAP_SHARED | MAP_ANONYMOUS
        self.counts = memoryview(self._map).cast("q")
        self.mine = 0


_seats: Seats | None = None  # set in :func:`run`; a child's ``mine`` is its index
WAIT_S = 0.05  # a process with more connections leaves a new one this long to the others


class Balanced(socket.socket):
    """A listening socket the server processes share, balanced by open connections.

    Left alone, the processes woken by a new connection race for it, and the event loop's
    accept loop takes every pending connection at once: a burst of keep-alive clients opening
    their pools all lands in one process, which then does all their work on one core. So a
    process holding more open connections than another one declines a new connection, for at
    most :data:`WAIT_S` in a row (should the other one not accept); a declining accept raises
    ``BlockingIOError``, as one that finds nothing does, and the loop polls again. The
    connections it accepts count themselves out on close."""

    _since = 0.0  # the first and the last decline of this run of declines
    _last = float("-inf")

    def accept(self) -> tuple[socket.socket, Any]:
        seats = _seats
        if seats is None:
            return super().accept()
        now = time.monotonic()
        if seats.counts[seats.mine] > min(seats.counts):
            if now - self._last > WAIT_S:  # another process took what was declined before
                self._since = now
            self._last = now
            if now - self._since < WAIT_S:
                raise BlockingIOError(errno.EAGAIN, "left to a process with fewer connections")
        conn, addr = super().accept()
        self._last = float("-inf")  # the next connection is declined again, if it should be
        seats.counts[seats.mine] += 1
        return _Counted(conn.family, conn.type, conn.proto, fileno=conn.detach()), addr


class _Counted(socket.socket):
    """An accepted connection of this process's count (:class:`Seats`)."""

    _open = True

    def close(self) -> None:
        if self._open and _seats is not None:
            self._open = False
            _seats.counts[_seats.mine] -= 1
        super().close()


def balanced(sock: socket.socket) -> Balanced:
    """``sock`` (listening) as a :class:`Balanced`; ``sock`` is left detached."""
    return Balanced(sock.family, sock.type, sock.proto, fileno=sock.detach())


THREADS_ENV = "COGITAVE_THREADS"
"""The cores a process counts as its own (read by :func:`cogitave.expand.embed.default_threads`:
the encoder's threads and the encoder batches run at once; named here too, so the parent
imports nothing of the engine before it forks). Each child gets its share: with the whole
machine's count, each of two processes ran its lone queries on two threads, and the four
threads of two processes contended for two cores (at concurrency 8, two processes: CPU a
request 5.64 / 5.11 / 5.72 ms against 4.57 / 4.76 / 5.35 ms with their share, in three
alternating rounds, each answering more per second)."""


def share_of_cores(processes: int) -> int:
    """The cores each of ``processes`` server processes may count as its own (at least one)."""
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cpus = os.cpu_count() or 1
    return max(1, cpus // processes)


def run(processes: int, sock: socket.socket, serve: Callable[[], None]) -> int:
    """Fork ``processes`` children that each call ``serve`` (which serves on their copy of
    ``sock``, made :func:`balanced`);
    supervise them until a signal or a child's exit. The parent's exit code: 0 after a
    signal, else the dead child's code (1 if it had none)."""
    if threading.active_count() > 1:  # a forked child would hold copies of their locks
        raise InternalError("cannot start server processes: this process runs threads")
    global _seats
    _seats = Seats(processes)
    alive_r, alive_w = os.pipe()
    pids: list[int] = []
    try:
        for i in range(processes):
            pid = os.fork()
            if pid == 0:  # pragma: no cover - the child never returns
                _seats.mine = i
                os.environ.setdefault(THREADS_ENV, str(share_of_cores(processes)))
                os.close(alive_w)
                os._exit(_child(serve, alive_r))
            pids.append(pid)
        os.close(alive_r)
        sock.close()  # the children accept on their copies
        return _supervise(pids)
    finally:
        _stop(_reap(pids, block=False), signal.SIGKILL, 0.0)  # never leave one behind
        os.close(alive_w)


def _child(serve: Callable[[], None], alive: int) -> int:  # pragma: no cover - in the child
    """A child's life: serve until stopped; its exit code."""
    os.setpgid(0, 0)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    threading.Thread(target=_orphaned, args=(alive,), name="cogitave-parent", daemon=True).start()
    try:
        serve()
        return 0
    except KeyboardInterrupt:
        return 0
    except CogitaveError as e:
        sys.stderr.write(f"error[{e.code}]: {' '.join(e.message.split())}\n")
        return 2 if isinstance(e, InputError) or e.http_status < 500 else 1
    except SystemExit as e:
        return e.code if isinstance(e.code, int) else 1
    except BaseException:
        traceback.print_exc()
        return 1
    finally:
        sys.stdout.flush()
        sys.stderr.flush()


def _orphaned(alive: int) -> None:  # pragma: no cover - in the child
    """Block until the parent is gone (the pipe's write end closes), then stop serving."""
    while os.read(alive, 1):
        pass
    os.kill(os.getpid(), signal.SIGTERM)


def _supervise(pids: list[int]) -> int:
    def stop(signum: int, _frame: object) -> None:
        raise _Stop(signum)

    before = {s: signal.signal(s, stop) for s in STOP_SIGNALS}
    try:
        try:
            pid, status = os.wait()
        except _Stop as s:
            _stop(pids, s.signum, STOP_GRACE_S)
            return 0
        code = os.waitstatus_to_exitcode(status)
        how = f"exited with code {code}" if code >= 0 else f"was killed by signal {-code}"
        sys.stderr.write(f"error[internal]: server process {pid} {how}; stopping the server\n")
        _stop([p for p in pids if p != pid], signal.SIGTERM, STOP_GRACE_S)
        return code if code > 0 else 1
    finally:
        for s, handler in before.items():
            signal.signal(s, handler)


def _stop(pids: Iterable[int], signum: int, grace_s: float) -> None:
    """Send ``signum`` to ``pids`` and reap them; after ``grace_s`` or a second SIGINT or
    SIGTERM, SIGKILL the rest."""
    alive = set(pids)
    forced = threading.Event()
    before = {s: signal.signal(s, lambda *_: forced.set()) for s in STOP_SIGNALS}
    try:
        _signal(alive, signum)
        deadline = time.monotonic() + grace_s
        while alive := _reap(alive, block=False):
            if forced.is_set() or time.monotonic() >= deadline:
                _signal(alive, signal.SIGKILL)
                _reap(alive, block=True)
                return
            time.sleep(POLL_S)
    finally:
        for s, handler in before.items():
            signal.signal(s, handler)


def _signal(pids: Iterable[int], signum: int) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signum)


def _reap(pids: Iterable[int], *, block: bool) -> set[int]:
    """The ``pids`` still running (the others reaped)."""
    left = set()
    for pid in pids:
        try:
            done, _ = os.waitpid(pid, 0 if block else os.WNOHANG)
        except ChildProcessError:
            continue
        if not done:
            left.add(pid)
    return left
