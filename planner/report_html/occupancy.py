"""How many GPUs of a pool are in use at once, at the busiest instant of a plan."""

from __future__ import annotations

from collections.abc import Iterable


def peak_concurrent_gpus(intervals: Iterable[tuple[float, float, int]]) -> int:
    """The most GPUs held at one instant by jobs given as (start_h, end_h, gpus).

    A job holds its GPUs over the half-open hours [start_h, end_h): a sweep over start and end
    events, ends before starts at the same instant, so a job that starts as another ends reuses
    its GPUs instead of counting twice. Summing the jobs that overlap one job over-counts when
    those jobs do not overlap each other (8 GPUs read as 11 on an 8-GPU pool, issue 50).
    """
    events: list[tuple[float, int, int]] = []
    for start_h, end_h, gpus in intervals:
        if end_h > start_h and gpus > 0:
            events += [(start_h, 1, gpus), (end_h, 0, -gpus)]  # 0 sorts ends first at a tie
    in_use = peak = 0
    for _, _, change in sorted(events):
        in_use += change
        peak = max(peak, in_use)
    return peak
