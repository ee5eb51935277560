"""Time `solve` on every scenario (median and spread of several runs) against a baseline commit
measured in the same run, and check CP-SAT against a brute-force enumeration of the same candidates
where enumeration is small enough to finish.

Usage: python bench/solve_speed.py [--runs 3] [--scenarios scenarios/*.yaml] [--baseline REF]
Reports, per scenario: candidates, candidate-building time (estimator, cold: the persistent estimate
cache is off), CP-SAT time for the best plan, solve time with top-k alternatives and explanations,
their sum (`total`: what a user waits for beyond start-up), and the baseline's total (on its own
copy of the scenario, whose schema may be older) with the change. Each tree runs in its own
processes, the two alternating scenario by scenario so that a busy machine slows both alike; the
baseline is checked out into a temporary git worktree.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))

from cli_speed import launcher  # noqa: E402

DEFAULT_BASELINE = "03bebef"  # main before the plan-semantics work (issue #10)


def _brute_force_cost(problem: Any) -> tuple[int, float] | None:
    """Single job: the cheapest rule-abiding candidate that meets the deadline and budget, by plain
    enumeration (a reservation or purchase held only for this job costs exactly its standalone
    cost)."""
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
        if (
            res is not None
            and res.available_until_min is not None
            and end > res.available_until_min
        ):
            continue
        cost = problem.standalone_cost(c)
        if problem.budget is None or cost <= problem.budget:
            costs.append(cost)
    return (min(costs), time.perf_counter() - started) if costs else None


def _clear_caches(prefix: str) -> None:
    """Every run as cold as a new process: the caches of every module of the planner loaded so far
    (the estimator's searches, memory, stages and links) and the layout searches shared between
    builds of one loaded scenario (shared_estimates.py: else the second run's build searches
    nothing)."""
    for name, loaded_module in list(sys.modules.items()):
        if not name.startswith(prefix + "planner.") or loaded_module is None:
            continue
        for attribute in list(vars(loaded_module).values()):
            if callable(getattr(attribute, "cache_clear", None)):
                attribute.cache_clear()
    with contextlib.suppress(ModuleNotFoundError):  # (trees before shared searches lack it)
        importlib.import_module(prefix + "planner.candidates.shared_estimates").forget()


def _measure(path: str, runs: int, check: bool, bare: bool) -> dict[str, Any]:
    """Worker side: build and solve `path` `runs` times in this process, caches cleared before each
    run. Imports the tree on the path: the one-package layout (plan.*) or, in older commits
    (`bare`), the folders by their own names."""
    prefix = "" if bare else "plan."

    def module(name: str) -> Any:
        return importlib.import_module(prefix + name)

    load_scenario = module("models.loading").load_scenario
    candidates = module("planner.candidates")
    Bounds = module("planner.cpsat.model").Bounds
    solving = module("planner.solve")
    Session, solve_session = solving.Session, solving.solve_session
    loaded = load_scenario(Path(path))
    builds, bests, totals = [], [], []
    for _ in range(runs):
        _clear_caches(prefix)
        getattr(candidates, "_BUILT", {}).clear()  # and the problems built in this process
        t0 = time.perf_counter()
        problem = candidates.build_problem(loaded)
        builds.append(time.perf_counter() - t0)
        options = loaded.scenario.solver.model_copy(update={"time_limit_s": 120})
        session = Session(problem, options, loaded.scenario.objective)
        t1 = time.perf_counter()
        outcome = session.best(Bounds())
        bests.append(time.perf_counter() - t1)
        session = Session(problem, options, loaded.scenario.objective)
        t2 = time.perf_counter()
        solve_session(session)
        totals.append(time.perf_counter() - t2)
    verdict = "-"
    if check and loaded.scenario.objective == "cost" and len(problem.jobs) == 1:
        bf = _brute_force_cost(problem)
        if bf is not None:
            verdict = (
                "match" if bf[0] == outcome.total_cost else f"DIFF {bf[0]} vs {outcome.total_cost}"
            )
    return {
        "candidates": sum(len(c) for c in problem.candidates.values()),
        "build": builds,
        "best": bests,
        "solve": totals,
        "sum": [b + t for b, t in zip(builds, totals, strict=True)],
        "check": verdict,
    }


def _run_worker(tree: Path, tmp: Path, path: str, runs: int, check: bool) -> dict[str, Any]:
    pythonpath, module = launcher(tree, tmp)  # `tree`'s own code, not the installed one
    env = dict(os.environ, PYTHONPATH=pythonpath, PLAN_CACHE_DIR="off")  # the estimator timed cold
    flags = (["--check"] if check else []) + (["--bare"] if not module.startswith("plan.") else [])
    done = subprocess.run(
        [
            sys.executable,
            str(Path(__file__).resolve()),
            "--worker",
            "--runs",
            str(runs),
            path,
            *flags,
        ],
        cwd=tree,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise SystemExit(f"{tree}: {path}: exit {done.returncode}\n{done.stderr[-2000:]}")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def _in_tree(path: str, tree: Path) -> str | None:
    """The baseline's own copy of a scenario of this tree (the schema evolves with the code), or
    None; a scenario from elsewhere is used as given."""
    resolved = Path(path).resolve()
    if not resolved.is_relative_to(ROOT):
        return str(resolved)
    own = tree / resolved.relative_to(ROOT)
    return str(own) if own.is_file() else None


def _round(
    path: str, tmp: Path, baseline: Path | None, runs: int
) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """This tree's measurement of `path` (with the brute-force check), then the baseline's on its
    own copy of the scenario (None without a baseline or that copy)."""
    now = _run_worker(ROOT, tmp, str(Path(path).resolve()), runs, check=True)
    own = _in_tree(path, baseline) if baseline is not None else None
    return now, (
        _run_worker(baseline, tmp, own, runs, check=False)
        if baseline is not None and own is not None
        else None
    )


def _fmt(xs: list[float]) -> str:
    return f"{statistics.median(xs):.3f}±{(max(xs) - min(xs)) / 2:.3f}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument(
        "--scenarios",
        nargs="*",
        default=sorted(str(p) for p in (ROOT / "scenarios").glob("*.yaml")),
    )
    parser.add_argument("--baseline", default=DEFAULT_BASELINE, help="git ref to compare with ('' "
                                                                     "to skip)")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--check", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--bare", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("scenario", nargs="?", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(_measure(args.scenario, args.runs, args.check, args.bare)))
        return 0
    with tempfile.TemporaryDirectory(prefix="solve-speed-") as tmp_name:
        tmp = Path(tmp_name)
        baseline = tmp / "baseline"
        if args.baseline:
            subprocess.run(
                ["git", "worktree", "add", "--detach", str(baseline), args.baseline],
                cwd=ROOT,
                check=True,
                capture_output=True,
            )
            os.sync()  # the checkout's writes settle before anything is timed
        try:
            # one untimed round per tree: caches and page cache warm alike
            for path in args.scenarios[:1]:
                _round(path, tmp, baseline if args.baseline else None, 1)
            print(f"{'scenario':34} {'cands':>6} {'build s':>12} {'best s':>12} "
                  f"{'top-k+expl s':>12} {'total s':>12} {'baseline ' + args.baseline:>18} "
                  f"{'change':>7} "
                  f"{'bf check':>10}", flush=True)
            for path in args.scenarios:
                now, base = _round(path, tmp, baseline if args.baseline else None, args.runs)
                base_text, change = "", ""
                if base is not None:
                    base_text = f"{_fmt(base['sum'])} ({base['candidates']})"
                    change = (
                        f"{statistics.median(now['sum']) / statistics.median(base['sum']) - 1:+.0%}"
                    )
                print(f"{Path(path).name:34} {now['candidates']:6d} {_fmt(now['build']):>12} "
                      f"{_fmt(now['best']):>12} {_fmt(now['solve']):>12} {_fmt(now['sum']):>12} "
                      f"{base_text:>18} {change:>7} {now['check']:>10}", flush=True)
        finally:
            if args.baseline:
                subprocess.run(
                    ["git", "worktree", "remove", "--force", str(baseline)],
                    cwd=ROOT,
                    check=False,
                    capture_output=True,
                )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
