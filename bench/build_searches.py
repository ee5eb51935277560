"""Where a cold candidate build's CPU goes: its layout searches, by who asked each first.

Issue 47 asks that the new scenarios solve cold in under 5 s CPU; nearly all of a cold build is
layout searches (`Estimating._search`). This counts them and their CPU seconds (process time, so a
busy machine does not skew the split) by three things a speed-up would act on:
- whether the option that asked first breaks a rule (a lazy build of rule-breaking options could
  skip those; the answer's "options removed" line counts them, so it would change that line);
- the GPU count of the searched cluster (large clusters have many splits and combinations);
- the caller: a candidate's own estimate, or `_offload_allowed`'s look at the place's largest count.

Usage: PLAN_CACHE_DIR=off python bench/build_searches.py scenarios/rubin_buy_or_rent.yaml
(the store off: with it, searches read back from disk are not searches)
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

from plan.models.loading import load_scenario
from plan.planner.candidates.build import CandidateBuilder
from plan.planner.candidates.estimating import Estimating

COUNT_BANDS = (8, 64, 512)
"""Upper GPU counts of the bands reported (one node of 8, a few racks, a hall); larger: the rest."""


def _band(gpus: int) -> str:
    upper = next((b for b in COUNT_BANDS if gpus <= b), None)
    return f"<= {upper} GPUs" if upper is not None else f"> {COUNT_BANDS[-1]} GPUs"


class _Tally:
    """Searches and their CPU seconds by label; the labels of the search being asked now."""

    def __init__(self) -> None:
        self.count: Counter[str] = Counter()
        self.cpu_s: defaultdict[str, float] = defaultdict(float)
        self.asking = {"option": "?", "caller": "candidate"}

    def add(self, labels: list[str], cpu_s: float) -> None:
        for label in labels:
            self.count[label] += 1
            self.cpu_s[label] += cpu_s


def _instrument(tally: _Tally) -> None:
    """Wrap the builder's search, candidate and offload check to tally each search."""
    search: Callable[..., Any] = Estimating._search
    candidate: Callable[..., Any] = CandidateBuilder._candidate
    offload: Callable[..., Any] = Estimating._offload_allowed

    def timed_search(self: Estimating, card: Any, job: Any, cluster: Any, *rest: Any) -> Any:
        started = time.process_time()
        found = search(self, card, job, cluster, *rest)
        tally.add(["all", f"option {tally.asking['option']}", _band(cluster.gpus),
                   f"asked by {tally.asking['caller']}"], time.process_time() - started)
        return found

    def tagged_candidate(self: CandidateBuilder, index: int, job: Any, card: Any, option: Any,
                         shape: str) -> Any:
        tally.asking["option"] = "breaks a rule" if self.violations(job, option) else "abides"
        return candidate(self, index, job, card, option, shape)

    def tagged_offload(self: Estimating, *args: Any) -> Any:
        tally.asking["caller"] = "_offload_allowed (largest count)"
        try:
            return offload(self, *args)
        finally:
            tally.asking["caller"] = "candidate"

    Estimating._search = timed_search  # type: ignore[method-assign,assignment]
    CandidateBuilder._candidate = tagged_candidate  # type: ignore[method-assign]
    Estimating._offload_allowed = tagged_offload  # type: ignore[method-assign,assignment]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("scenario", type=Path)
    args = parser.parse_args(argv)
    if os.environ.get("PLAN_CACHE_DIR") != "off":
        print("note: PLAN_CACHE_DIR is not 'off': stored searches are read, not run",
              file=sys.stderr)
    tally = _Tally()
    _instrument(tally)
    loaded = load_scenario(args.scenario)
    started = time.process_time()
    problem = CandidateBuilder(loaded).build()
    build_s = time.process_time() - started
    kept = sum(len(c) for c in problem.candidates.values())
    print(f"{args.scenario}: build {build_s:.1f} s CPU, {kept} candidates, "
          f"{len(problem.removed)} options removed")
    for label in sorted(tally.count, key=lambda k: (k != "all", k)):
        print(f"  {label:<40} {tally.count[label]:>6} searches {tally.cpu_s[label]:>7.1f} s CPU")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
