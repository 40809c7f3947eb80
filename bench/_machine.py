"""One line naming the machine a benchmark ran on (results are only comparable within a run),
and the one place a benchmark writes its tables: its own section of ``bench/RESULTS.md``.

``RESULTS.md`` holds the latest run of each bench only. A section sits between
``<!-- bench:NAME -->`` and ``<!-- /bench:NAME -->`` lines; ``write_section`` replaces it in
place (or adds it, in the order of ``SECTIONS``) and moves the run it replaces to
``bench/history/<date of that run>.md``, so nothing measured is lost and nothing is repeated.
"""

from __future__ import annotations

import os
import platform
import re
import tempfile
import time
from pathlib import Path


def _field(path: str, key: str) -> str | None:
    try:
        for line in Path(path).read_text().splitlines():
            if line.startswith(key):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return None


def machine_line() -> str:
    cpu = _field("/proc/cpuinfo", "model name") or "unknown CPU"
    mem_kb = _field("/proc/meminfo", "MemTotal")
    mem = f", {int(mem_kb.split()[0]) / 1024 / 1024:.0f} GiB" if mem_kb else ""
    return (
        f"Machine: {cpu}, {os.cpu_count()} cores{mem}, {platform.system()} "
        f"{platform.release()}, Python {platform.python_version()}."
    )


HERE = Path(__file__).resolve().parent
RESULTS = HERE / "RESULTS.md"
HISTORY = HERE / "history"

#: Section names (each bench's file stem) in the order they appear in RESULTS.md; a section
#: that is missing is added before the first later one present (an unknown name: at the end).
SECTIONS = (
    "quality",
    "docs_quality",
    "code_verbatim",
    "encoders",
    "encoder_graphs",
    "settings_sweep",
    "settings_sweep_bge",
    "facets",
    "docs_graph",
    "indexing",
    "latency",
    "segments",
    "sync",
    "shards",
    "concurrency",
    "load",
    "load-unseen",
    "project_deps",
    "filters",
    "libraries",
    "crawl",
)

#: A line starting with this inside a section points at a history file; it belongs to today's
#: file only and is dropped when the section moves to the history.
POINTER = "History: "

_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
_HISTORY_FILE = re.compile(r"\d{4}-\d{2}-\d{2}\.md")


def _markers(name: str) -> tuple[str, str]:
    return f"<!-- bench:{name} -->", f"<!-- /bench:{name} -->"


def _read(path: Path) -> str:
    return path.read_bytes().decode("utf-8") if path.exists() else ""


def _atomic_write(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file in the same folder and a rename."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(text.encode("utf-8"))
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _run_date(body: str) -> str:
    """The date of a section's run: the first date in its heading, else in its text, else
    today's."""
    heading = next((ln for ln in body.splitlines() if ln.startswith("#")), "")
    m = _DATE.search(heading) or _DATE.search(body)
    return m.group(0) if m else time.strftime("%Y-%m-%d")


def _to_history(body: str, history: Path) -> None:
    """Append a replaced section to its dated history file, unless a history file already
    holds it verbatim (the runs carried over when the old log was split are there already)."""
    kept = "\n".join(ln for ln in body.splitlines() if not ln.startswith(POINTER)).strip("\n")
    if not kept:
        return
    files = sorted(history.glob("*.md")) if history.is_dir() else []
    if any(kept in _read(f) for f in files if _HISTORY_FILE.fullmatch(f.name)):
        return
    path = history / f"{_run_date(kept)}.md"
    old = _read(path)
    if old and not old.endswith("\n"):
        old += "\n"
    _atomic_write(path, old + ("\n" if old else "") + kept + "\n")


def write_section(
    name: str, text: str, *, results: Path | None = None, history: Path | None = None
) -> None:
    """Replace bench ``name``'s section of ``results`` (default ``RESULTS``) with ``text``, or
    add it; the run it replaces goes to ``history`` (default ``HISTORY``). Every other byte of
    the file stays as it was; the same text twice writes nothing."""
    results = RESULTS if results is None else results
    history = HISTORY if history is None else history
    start, end = _markers(name)
    body = text.strip("\n")
    block = [start, *body.split("\n"), end]
    lines = _read(results).split("\n")  # a file ending in "\n" ends with an empty item
    if start in lines:
        i = lines.index(start)
        if end not in lines[i:]:
            raise ValueError(f"{results}: {start} has no {end}")
        j = lines.index(end, i)
        old = "\n".join(lines[i + 1 : j])
        if old.strip("\n") == body:
            return
        _to_history(old, history)
        lines[i : j + 1] = block
    else:
        later = SECTIONS[SECTIONS.index(name) + 1 :] if name in SECTIONS else ()
        at = next((lines.index(m) for m in (_markers(n)[0] for n in later) if m in lines), None)
        if at is None:
            while lines and lines[-1] == "":
                lines.pop()
            lines += ([""] if lines else []) + block + [""]
        else:
            lines[at:at] = [*block, ""]
    _atomic_write(results, "\n".join(lines))
