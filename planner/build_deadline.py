"""The time limit covers candidate building too: a cooperative deadline the candidate loop checks.

`Session.from_loaded` opens a `build_deadline(limit_s)`; `check()` (called once per option tried in
`plan.planner.candidates`) raises BuildTimeout once it has passed, saying how far building got.
Outside a deadline `check()` does nothing, so tests and tools that build problems directly are
unaffected.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from contextvars import ContextVar
from dataclasses import dataclass

from plan.planner.i18n.said import say


class BuildTimeout(Exception):
    """The time limit ran out while candidates were being built (no solve was attempted)."""

    def __init__(self, limit_s: float, jobs_done: int, jobs_total: int) -> None:
        self.limit_s, self.jobs_done, self.jobs_total = limit_s, jobs_done, jobs_total
        super().__init__(say("solve.build_cut", limit_s=limit_s, done=jobs_done,
                             total=jobs_total))


@dataclass
class _Deadline:
    limit_s: float
    ends: float
    jobs_done: int = 0
    jobs_total: int = 0


_CURRENT: ContextVar[_Deadline | None] = ContextVar("build_deadline", default=None)


@contextlib.contextmanager
def build_deadline(limit_s: float, started: float | None = None) -> Iterator[None]:
    start = time.perf_counter() if started is None else started
    token = _CURRENT.set(_Deadline(limit_s, start + limit_s))
    try:
        yield
    finally:
        _CURRENT.reset(token)


def progress(jobs_done: int, jobs_total: int) -> None:
    """Record how many jobs are built (for the message)."""
    current = _CURRENT.get()
    if current is not None:
        current.jobs_done, current.jobs_total = jobs_done, jobs_total


def check() -> None:
    """Raise BuildTimeout if the current build's deadline has passed."""
    current = _CURRENT.get()
    if current is not None and time.perf_counter() > current.ends:
        raise BuildTimeout(current.limit_s, current.jobs_done, current.jobs_total)


def remaining_s() -> float | None:
    """Seconds left before the current build's deadline (0 once passed), None outside one."""
    current = _CURRENT.get()
    return None if current is None else max(0.0, current.ends - time.perf_counter())
