"""Time `solve` on every scenario (median and spread of several runs) and compare CP-SAT with a
brute-force enumeration of the same candidates where enumeration is small enough to finish.

Usage: python bench/solve_speed.py [--runs 3] [--scenarios scenarios/*.yaml]
Reports, per scenario: candidates, candidate-building time (estimator), CP-SAT time for the best
plan, total solve time with top-k alternatives and explanations.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
# The estimator is timed cold: the persistent estimate cache is off unless PLAN_CACHE_DIR names one.
os.environ.setdefault("PLAN_CACHE_DIR", "off")

from plan.models.loading import load_scenario  # noqa: E402
from plan.planner import candidates  # noqa: E402
from plan.planner.candidates import build_problem  # noqa: E402
from plan.planner.cpsat.model import Bounds  # noqa: E402
from plan.planner.solve import Session, solve_session  # noqa: E402


def _brute_force_cost(problem) -> tuple[int, float] | None:
    """Single job: the cheapest rule-abiding candidate that meets the deadline and budget, by plain
    enumeration (a reservation or purchase held only for this job costs exactly its standalone cost)."""
    started = time.perf_counter()
    (job,) = problem.jobs
    limit = problem.deadline_min[job]
    costs = []
    for c in problem.candidates[job]:
        res = problem.resources.get(c.resource) if c.resource else None
        start = max(res.available_from_min if res else 0, c.startup_min)  # queue/provisioning first
        end = start + c.duration_min
        if c.violations or (limit is not None and end > limit):
            continue
        if res is not None and res.available_until_min is not None and end > res.available_until_min:
            continue
        cost = problem.standalone_cost(c)
        if problem.budget is None or cost <= problem.budget:
            costs.append(cost)
    return (min(costs), time.perf_counter() - started) if costs else None


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--scenarios", nargs="*", default=sorted(str(p) for p in (ROOT / "scenarios").glob("*.yaml")))
    args = parser.parse_args()
    print(f"{'scenario':34} {'cands':>6} {'build s':>8} {'best s':>14} {'top-k+expl s':>14} {'bf check':>10}")
    for path in args.scenarios:
        loaded = load_scenario(Path(path))
        builds, bests, totals = [], [], []
        for _ in range(args.runs):
            from plan.planner.estimate import search as search_module  # clear the estimator's caches
            for name in dir(search_module):
                fn = getattr(search_module, name)
                if hasattr(fn, "cache_clear"):
                    fn.cache_clear()
            candidates._BUILT.clear()  # and the problems built in this process
            t0 = time.perf_counter()
            problem = build_problem(loaded)
            builds.append(time.perf_counter() - t0)
            session = Session(problem, loaded.scenario.solver.model_copy(update={"time_limit_s": 120}),
                              loaded.scenario.objective)
            t1 = time.perf_counter()
            outcome = session.best(Bounds())
            bests.append(time.perf_counter() - t1)
            session = Session(problem, loaded.scenario.solver.model_copy(update={"time_limit_s": 120}),
                              loaded.scenario.objective)
            t2 = time.perf_counter()
            solve_session(session)
            totals.append(time.perf_counter() - t2)
        n = sum(len(c) for c in problem.candidates.values())
        check = "-"
        if loaded.scenario.objective == "cost" and len(problem.jobs) == 1:
            bf = _brute_force_cost(problem)
            if bf is not None:
                check = "match" if bf[0] == outcome.total_cost else f"DIFF {bf[0]} vs {outcome.total_cost}"
        def fmt(xs):
            return f"{statistics.median(xs):.2f}±{(max(xs) - min(xs)) / 2:.2f}"
        print(f"{Path(path).name:34} {n:6d} {fmt(builds):>8} {fmt(bests):>14} {fmt(totals):>14} {check:>10}")


if __name__ == "__main__":
    main()
