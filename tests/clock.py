"""A stopwatch for cost-bound tests: CPU time for the bound, wall time for a stall ceiling.

A deadline test asks "did the work stop near its budget?". On a shared two-core box the wall
clock of the same run varies 2-3x with load from other processes, while the CPU time this
process spent does not: a query that ignored its deadline burns CPU past the bound on any box,
and a loaded box only stretches the wall clock. So bounds are checked on CPU time, and the wall
clock gets a generous ceiling that still fails a stall.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

WALL_CEILING_S = 3.0


@dataclass
class Spent:
    wall: float = 0.0
    cpu: float = 0.0

    def within(self, bound_s: float) -> bool:
        """CPU time under ``bound_s`` and wall time under the stall ceiling."""
        return self.cpu < bound_s and self.wall < max(WALL_CEILING_S, 3 * bound_s)


@contextmanager
def stopwatch() -> Iterator[Spent]:
    spent = Spent()
    wall, cpu = time.perf_counter(), time.process_time()
    try:
        yield spent
    finally:
        spent.wall = time.perf_counter() - wall
        spent.cpu = time.process_time() - cpu
