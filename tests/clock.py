"""A clock for deadline tests that moves by work, not by time.

A deadline test asks "did the work stop at its budget?". Timed with a real clock, the answer
depends on the machine and its load. :class:`StepClock` stands in for ``time.monotonic`` in
the modules that read it: every read moves it ``step`` seconds, so a deadline falls after a
fixed number of reads, and code that checks its deadline every N steps stops after a fixed
amount of work on any machine. ``step=0`` is a clock that never moves (no deadline ever
passes: a test of another bound). ``advance`` moves it by hand (work that stands for time).
"""

from __future__ import annotations

from types import ModuleType, SimpleNamespace

import pytest


class StepClock:
    """``monotonic()`` that moves ``step`` seconds per read; ``reads`` counts them."""

    def __init__(self, step: float) -> None:
        self.step = step
        self.now = 1000.0
        self.reads = 0

    def monotonic(self) -> float:
        self.reads += 1
        self.now += self.step
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds

    def install(self, monkeypatch: pytest.MonkeyPatch, *modules: ModuleType) -> StepClock:
        """Be the ``time`` these modules read (``time.monotonic`` and ``time.perf_counter``)."""
        fake = SimpleNamespace(monotonic=self.monotonic, perf_counter=self.monotonic)
        for module in modules:
            monkeypatch.setattr(module, "time", fake)
        return self
