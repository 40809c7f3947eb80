"""The one way an ingest reaches a file of the tree it reads: a reader confined to the tree.

A docs tree is untrusted input: a page can name any path in an include, a link can point
anywhere, a config can name any folder. :class:`TreeReader` resolves every path it is given to
its real path (symlinks and ``..`` resolved, as Go's ``os.Root`` and moby's
``FollowSymlinkInScope`` do) and refuses anything outside the tree's root, unless the caller
allowed that folder (``allow_outside``: the command line's ``--allow-outside PATH``). The root
is the folder being read (for a config file or a single page given: its folder), resolved.

Every page, include, snippet, ``literalinclude``, config file and folder a config names is
opened here and nowhere else; walking the tree never follows a symlinked file or folder out of
it (a symlink inside pointing inside is read as its target). What is read is bounded: a file
over :data:`MAX_FILE_BYTES` is not read, and a file that is not a regular file (a FIFO, a
device) is not opened for reading. A path outside the tree is at most looked at (``stat``), to
tell a refused file from a missing one: never opened.

Nothing here raises on a refusal: each becomes a :class:`Refusal` in :attr:`TreeReader.refusals`
(the ingest report lists them, with the ``--allow-outside`` that would read them). Reading
errors of files inside the tree (``OSError``) are the caller's to report.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

MAX_FILE_BYTES = 10 * 1024 * 1024  # a page, an include or a config: larger is not read
MAX_INCLUDE_DEPTH = 8  # includes of includes (reStructuredText): deeper is refused
# What one page may pull in through includes, all its sections counted: past it, refused.
MAX_INCLUDED_BYTES = 64 * 1024 * 1024
_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
_OPEN_FLAGS |= getattr(os, "O_CLOEXEC", 0)


@dataclass(frozen=True)
class Refusal:
    """A file or folder the reader would not read: where it was asked for, what, why, and
    the folder ``--allow-outside`` would have to name to read it ("" when none would)."""

    where: str  # "docs/a.md:12", or the file itself
    path: str  # as written, or the path
    reason: str
    allow: str = ""

    def __str__(self) -> str:
        hint = f"; to read it, pass --allow-outside {self.allow}" if self.allow else ""
        head = f"{self.where}: " if self.where and self.where != self.path else ""
        return f"{head}{self.path}: {self.reason}{hint}"


class TreeReader:
    """Reads files of one tree (see the module doc). ``root``: the folder being read;
    ``allow_outside``: folders outside it that may be read too."""

    def __init__(
        self,
        root: str | Path,
        allow_outside: Iterable[str | Path] = (),
        *,
        max_bytes: int = MAX_FILE_BYTES,
    ) -> None:
        self.given = Path(os.path.abspath(root))
        self.root = Path(os.path.realpath(root))
        self.allowed = (self.root, *(Path(os.path.realpath(a)) for a in allow_outside))
        self.max_bytes = max_bytes
        self.refusals: list[Refusal] = []
        self._seen: dict[tuple[str, str], int] = {}  # (where's file, path) -> index
        self._cache: dict[Path, bytes] = {}

    @classmethod
    def for_source(cls, path: str | Path, allow_outside: Iterable[str | Path] = ()) -> TreeReader:
        """The reader of the tree ``path`` names: the folder, or a file's folder."""
        p = Path(path)
        return cls(p if p.is_dir() else p.parent, allow_outside)

    # -- where a path is ----------------------------------------------------------------
    def real(self, path: str | Path) -> Path:
        return Path(os.path.realpath(path))

    def allows(self, path: str | Path) -> bool:
        """Whether ``path`` resolves inside the tree or a folder allowed outside it."""
        real = self.real(path)
        return any(real == a or real.is_relative_to(a) for a in self.allowed)

    def is_file(self, path: str | Path, *, where: str = "") -> bool:
        """A regular file the reader may read; one that exists outside the tree is refused
        (recorded) and is not one."""
        return self._exists(path, os.path.isfile, where)

    def is_dir(self, path: str | Path, *, where: str = "") -> bool:
        """A folder the reader may walk; one outside the tree is refused (recorded)."""
        return self._exists(path, os.path.isdir, where)

    def _exists(self, path: str | Path, test: Callable[[Path], bool], where: str) -> bool:
        real = self.real(path)
        if not test(real):
            return False
        if self.allows(real):
            return True
        allow = self.allow_for(real, folder=test is os.path.isdir)
        self.refuse(where, self.shown(path), self.outside_reason(real), allow)
        return False

    def locate(self, path: str | Path) -> str:
        """``file`` (readable inside), ``outside`` (a file that resolves outside: refused when
        read) or ``missing``; nothing is recorded."""
        real = self.real(path)
        if not os.path.isfile(real):
            return "missing"
        return "file" if self.allows(real) else "outside"

    # -- reading --------------------------------------------------------------------------
    def read_bytes(self, path: str | Path, *, where: str = "", written: str = "") -> bytes | None:
        """The file's bytes, or None when it is refused (recorded: outside the tree, over
        the size cap, not a regular file). ``where``/``written``: the page and line asking,
        and the path as written there. ``OSError`` for a file inside that cannot be read."""
        real = self.real(path)
        shown = written or self.shown(path)
        if not self.allows(real):
            self.refuse(where, shown, self.outside_reason(real), self.allow_for(real))
            return None
        if real in self._cache:
            return self._cache[real]
        fd = os.open(real, _OPEN_FLAGS)
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode):
                self.refuse(where, shown, "not a regular file; not read")
                return None
            if info.st_size > self.max_bytes:
                self.refuse(where, shown, f"larger than {_mb(self.max_bytes)}; not read")
                return None
            chunks: list[bytes] = []
            size = 0
            while size <= self.max_bytes:
                chunk = os.read(fd, min(1 << 20, self.max_bytes + 1 - size))
                if not chunk:
                    break
                chunks.append(chunk)
                size += len(chunk)
        finally:
            os.close(fd)
        if size > self.max_bytes:  # it grew while read
            self.refuse(where, shown, f"larger than {_mb(self.max_bytes)}; not read")
            return None
        data = b"".join(chunks)
        self._cache[real] = data
        return data

    def read_at(self, path: str | Path, offset: int, size: int) -> bytes | None:
        """Up to ``size`` bytes (at most the size cap) of the file from ``offset``, whatever
        the file's own size (a git pack file), or None when it is refused (recorded: outside
        the tree, not a regular file). Not cached; ``OSError`` is the caller's."""
        real = self.real(path)
        if not self.allows(real):
            self.refuse("", self.shown(path), self.outside_reason(real), self.allow_for(real))
            return None
        fd = os.open(real, _OPEN_FLAGS)
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                self.refuse("", self.shown(path), "not a regular file; not read")
                return None
            return os.pread(fd, max(0, min(size, self.max_bytes)), max(0, offset))
        finally:
            os.close(fd)

    def read_text(self, path: str | Path, *, where: str = "", written: str = "") -> str | None:
        """The file as ``Path.read_text(encoding="utf-8")`` gives it (universal newlines), or
        None when refused; ``UnicodeDecodeError`` and ``OSError`` are the caller's."""
        data = self.read_bytes(path, where=where, written=written)
        if data is None:
            return None
        return data.decode("utf-8").replace("\r\n", "\n").replace("\r", "\n")

    # -- walking --------------------------------------------------------------------------
    def walk(
        self,
        folder: str | Path,
        *,
        want: Callable[[str], bool] | None = None,
        keep_dir: Callable[[str], bool] | None = None,
    ) -> Iterator[tuple[Path, list[str], list[str]]]:
        """``os.walk`` of a folder of the tree, top down (prune ``dirnames`` in place), that
        never leaves it: a symlinked folder is not descended, even with ``allow_outside`` (one
        pointing outside is refused when ``keep_dir`` keeps its name: name its target
        instead); a symlinked file pointing outside is left out (and refused when ``want``
        wants its name)."""
        top = Path(folder)
        if not self.is_dir(top):
            return
        for dirpath, dirnames, filenames in os.walk(top):
            here = Path(dirpath)
            for name in list(dirnames):
                full = here / name
                if os.path.islink(full):
                    dirnames.remove(name)
                    if (keep_dir is None or keep_dir(name)) and not self.allows(full):
                        reason = f"a symlinked folder to {self.real(full)}, outside the tree"
                        self.refuse("", self.shown(full), f"{reason}; not followed")
            files: list[str] = []
            for name in filenames:
                full = here / name
                if os.path.islink(full) and not self.allows(full):
                    if want is None or want(name):
                        real = self.real(full)
                        allow = self.allow_for(real)
                        self.refuse("", self.shown(full), self.outside_reason(real), allow)
                    continue
                files.append(name)
            yield here, dirnames, files

    def listdir(self, folder: str | Path) -> list[Path]:
        """The entries of a folder of the tree, those resolving outside it left out."""
        if not self.is_dir(folder):
            return []
        out: list[Path] = []
        for name in sorted(os.listdir(folder)):
            full = Path(folder) / name
            if not os.path.islink(full) or self.allows(full):
                out.append(full)
        return out

    # -- refusals -------------------------------------------------------------------------
    def refuse(self, where: str, path: str, reason: str, allow: str = "") -> None:
        """Record a refusal once per (asking file, path); a later one that knows the line
        replaces one that did not."""
        file = where.rsplit(":", 1)[0] if where.rpartition(":")[2].isdigit() else where
        key = (file, path)
        known = self._seen.get(key)
        if known is None:
            self._seen[key] = len(self.refusals)
            self.refusals.append(Refusal(where, path, reason, allow))
        elif where != file and self.refusals[known].where == file:
            self.refusals[known] = Refusal(where, path, reason, allow)

    def outside_reason(self, real: Path) -> str:
        return f"resolves to {real}, outside the tree {self.root}; not read"

    def allow_for(self, real: Path, *, folder: bool = False) -> str:
        """The folder to name with ``--allow-outside`` to read ``real``: a folder itself; for
        a file, the top folder of it below what it shares with the tree
        (``../../docs_src/x.py`` -> ``.../docs_src``)."""
        if folder:
            return str(real)
        common = Path(os.path.commonpath([self.root, real]))
        rest = real.relative_to(common).parts
        return str(common / rest[0]) if len(rest) > 1 else str(real.parent)

    def shown(self, path: str | Path) -> str:
        """``path`` relative to the folder being read (absolute when outside it)."""
        p = Path(os.path.abspath(path))
        return p.relative_to(self.given).as_posix() if p.is_relative_to(self.given) else str(p)


def _mb(n: int) -> str:
    return f"{n / (1024 * 1024):g} MB"
