"""One line naming the machine a benchmark ran on (results are only comparable within a run),
and the one place a benchmark's tables are appended to ``bench/RESULTS.md``."""

from __future__ import annotations

import os
import platform
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


RESULTS = Path(__file__).resolve().parent / "RESULTS.md"


def append_results(text: str) -> None:
    """Append a benchmark's section to ``bench/RESULTS.md`` (what ``--write`` does)."""
    with RESULTS.open("a") as fh:
        fh.write(text)
