"""Where a cold candidate build's CPU goes: its layout searches, by who asked each first.

Issue 47 asks that the new scenarios solve cold in under 5 s CPU; nearly all of a cold build is
layout searches (`Estimating._search`). This counts them and their CPU seconds (process time, so a
busy machine does not skew the split) by three things a speed-up would act on:
- whether the option that asked first breaks a rule (a lazy build of rule-breaking options could
  skip those; the answer's "options removed" line counts them, so it would change that line);
- the GPU count of the searched cluster (large clusters have many splits and combinations);
- the caller: a candidate's own estimate, or `_offload_allowed`'s look at the place's largest count;
- the searches that only rule-breaking options ask (no option that abides asks the same one), by
  the kinds of rule those options break: what a build that leaves rule-breaking options unsized
  until an answer needs them would save (one that abides later asks it anyway is not counted).

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
        self.asking = {"option": "?", "caller": "candidate", "rules": "?"}
        self.askers: defaultdict[tuple[Any, ...], set[str]] = defaultdict(set)
        self.key_cpu_s: defaultdict[tuple[Any, ...], float] = defaultdict(float)

    def only_rule_breakers(self) -> list[tuple[str, int, float]]:
        """(rule kinds, searches, CPU s) of the searches no abiding option asked, most CPU first."""
        count: Counter[str] = Counter()
        cpu_s: defaultdict[str, float] = defaultdict(float)
        for key, askers in self.askers.items():
            if "abides" not in askers:
                label = " | ".join(sorted(askers))
                count[label] += 1
                cpu_s[label] += self.key_cpu_s[key]
        return sorted(((k, count[k], cpu_s[k]) for k in count), key=lambda r: -r[2])

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
        cpu_s = time.process_time() - started
        tally.add(["all", f"option {tally.asking['option']}", _band(cluster.gpus),
                   f"asked by {tally.asking['caller']}"], cpu_s)
        key = (card.id, job.id, repr(cluster.key()), *rest)
        tally.askers[key].add(tally.asking["rules"])
        tally.key_cpu_s[key] += cpu_s
        return found

    def tagged_candidate(self: CandidateBuilder, index: int, job: Any, card: Any, option: Any,
                         shape: str) -> Any:
        broken = self.violations(job, option)
        tally.asking["option"] = "breaks a rule" if broken else "abides"
        # (a group's kind: "residency" of "residency/job", "policy.gpus" as it is)
        tally.asking["rules"] = (" + ".join(sorted({g.split("/")[0] for g in broken}))
                                 if broken else "abides")
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
    only = tally.only_rule_breakers()
    print(f"  asked only by rule-breaking options: {sum(n for _, n, _ in only)} searches, "
          f"{sum(s for _, _, s in only):.1f} s CPU; by the rules they break:")
    for label, n, cpu_s in only:
        print(f"    {label:<60} {n:>6} searches {cpu_s:>7.1f} s CPU")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
