"""Time `plan pareto` fronts: candidate building and the epsilon-constraint walk, per scenario.

Usage: python bench/pareto_speed.py [--runs 3] [--points N] [--scenarios scenarios/*.yaml]
Reports the number of points, the CP-SAT solves and the work (deterministic time) the front took,
and the median and half-range of the walk, of its part inside CP-SAT and of the whole command in CPU
seconds of this process (time.process_time: the machine may be shared; estimator caches cleared
before every run, so each run is cold).
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
from plan.planner.pareto.front import pareto_front  # noqa: E402
from plan.planner.session import Session, SolveOptions  # noqa: E402

WORK_LIMIT = 1000.0  # deterministic time for all of a front's solves: enough for every scenario


def _clear_caches() -> None:
    from plan.planner.estimate import search, search_space

    for search_module in (search, search_space):  # the estimator's caches
        for name in dir(search_module):
            fn = getattr(search_module, name)
            if hasattr(fn, "cache_clear"):
                fn.cache_clear()
    from plan.planner import candidates

    candidates._BUILT.clear()  # and the problems built in this process


def _spread(values: list[float]) -> str:
    return f"{statistics.median(values):6.2f}±{(max(values) - min(values)) / 2:.2f}"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--points", type=int, default=None)
    parser.add_argument(
        "--scenarios",
        nargs="*",
        default=sorted(str(p) for p in (ROOT / "scenarios").glob("*.yaml")),
    )
    args = parser.parse_args()
    print(f"{'scenario':34} {'jobs':>4} {'points':>6} {'solves':>6} {'work':>7} "
          f"{'walk cpu s':>12} {'cp-sat cpu s':>12} {'total cpu s':>12}")
    for path in args.scenarios:
        loaded = load_scenario(Path(path))
        walks, in_solver, totals, count, solves, work = [], [], [], 0, 0, 0.0
        for _ in range(args.runs):
            _clear_caches()
            t0 = time.process_time()
            options = SolveOptions(time_limit_s=300, work_limit=WORK_LIMIT)
            session = Session.from_loaded(loaded, options)
            t1 = time.process_time()
            front = pareto_front(session, max_points=args.points)
            t2 = time.process_time()
            walks.append(t2 - t1)
            in_solver.append(session.solve_cpu_s)
            totals.append(t2 - t0)
            count, solves, work = len(front.points), session.solves, WORK_LIMIT - session.work_left
        jobs = len(loaded.scenario.jobs)
        print(f"{Path(path).name:34} {jobs:>4} {count:>6} {solves:>6} {work:>7.2f} "
              f"{_spread(walks):>12} {_spread(in_solver):>12} {_spread(totals):>12}")


if __name__ == "__main__":
    main()
