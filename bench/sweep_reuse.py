"""Sweeps that reuse candidates (issue 48 item 4): a budget sweep of a one-job scenario, a budget
sweep of lab_six_jobs, and the resume of the finished file, against the old path in the same run.

New path: `plan batch FILE --sweep budget=... -j JOBS -o FILE`, timed end to end (interpreter,
pool, solves, file); then the same command again, which resumes the finished file (nothing left to
solve). Old path, in this process on a sample of the same variants: each variant built from
scratch (the reuse cache emptied) and solved whole as before (alternatives included), against the
new path's `run_task` on the same sample, one process each; the ratio is per variant.

The lab sweep can be run on fewer variants (--lab-variants) and extrapolated to 1,000 when the
machine is busy: the run says so.

Usage: python bench/sweep_reuse.py [--variants 10000] [--lab-variants 1000] [--jobs 2]
       [--sample 40]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from plan.planner import candidates
from plan.planner.batch import plan_reuse, read_rows
from plan.planner.batch.inputs import Input
from plan.planner.batch.rows import PLAN_REUSED
from plan.planner.batch.sweep import expand_grid, parse_sweeps
from plan.planner.batch.tasks import Task, build_tasks
from plan.planner.batch.work import _load, run_task
from plan.planner.session import SolveOptions
from plan.planner.solve import solve

ROOT = Path(__file__).resolve().parents[1]
PLAN = Path(sys.executable).parent / "plan"
ONE_JOB = ROOT / "scenarios" / "student_no_ops.yaml"
LAB = ROOT / "scenarios" / "lab_six_jobs.yaml"


def budgets(start: int, step: int, count: int) -> str:
    return f"budget={start}..{start + step * (count - 1)}:{step}"


def batch(scenario: Path, sweep: str, jobs: int, output: Path) -> tuple[float, str]:
    """Wall seconds of one `plan batch` run, and its summary line."""
    command = [str(PLAN), "batch", str(scenario), "--sweep", sweep, "-j", str(jobs), "-o",
               str(output)]
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, check=False)
    wall = time.perf_counter() - started
    if done.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(command)} failed ({done.returncode}):\n{done.stderr[-2000:]}")
    lines = (done.stdout + done.stderr).splitlines()
    return wall, next((line for line in reversed(lines) if " solved" in line), "?")


def per_variant(scenario: Path, sweep: str, sample: int) -> tuple[float, float, float]:
    """Seconds per variant on the old path (built from scratch, solved whole), on the new one
    solving every variant (run_task: reused candidates, the best plan alone) and on the new one
    as a sweep runs it (an earlier variant's proven answer reused where the budget cannot move it:
    planner/batch/plan_reuse.py), on the same `sample` variants."""
    found = build_tasks([Input(scenario)], expand_grid(parse_sweeps([sweep])), (), SolveOptions())
    tasks = [task for task in found if isinstance(task, Task)][:sample]
    started = time.perf_counter()
    for task in tasks:
        candidates._BUILT.clear()
        solve(_load(task), task.options)
    old = (time.perf_counter() - started) / len(tasks)
    candidates._BUILT.clear()
    started = time.perf_counter()
    for task in tasks:
        plan_reuse.forget()
        run_task(task)
    solved = (time.perf_counter() - started) / len(tasks)
    candidates._BUILT.clear()
    plan_reuse.forget()
    started = time.perf_counter()
    for task in tasks:
        run_task(task)
    new = (time.perf_counter() - started) / len(tasks)
    return old, solved, new


def report_sweep(name: str, scenario: Path, sweep: str, count: int, target: int, args: argparse.
                 Namespace, folder: Path, sample: int, resume: bool) -> None:
    output = folder / f"{name}.csv"
    wall, summary = batch(scenario, sweep, args.jobs, output)
    rows = read_rows(output)
    reused = sum(row.candidates == "reused" for row in rows)
    answers = sum(row.candidates == PLAN_REUSED for row in rows)
    scaled = wall * target / count
    said = f" (measured {count}, extrapolated)" if count != target else ""
    print(f"{name}: {count} variants -j {args.jobs}: {wall:.1f} s ({count / wall * 60:,.0f} "
          f"rows/min; {target:,} variants {scaled:.0f} s{said}); proven answers reused in "
          f"{answers}, candidates reused in {reused}, built in {len(rows) - reused - answers}; "
          f"{summary}", flush=True)
    if resume:
        again, summary = batch(scenario, sweep, args.jobs, output)
        print(f"{name}: resume of the finished {len(rows):,}-row file: {again:.2f} s; {summary}",
              flush=True)
    old, solved, new = per_variant(scenario, sweep, sample)
    print(f"{name}: per variant, one process, {sample} variants: old path {old * 1000:.0f} ms, "
          f"new solving each {solved * 1000:.0f} ms ({old / solved:.1f}x), new reusing proven "
          f"answers {new * 1000:.0f} ms ({old / new:.1f}x)", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--variants", type=int, default=10_000)
    parser.add_argument("--lab-variants", type=int, default=1_000)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--sample", type=int, default=40)
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores", flush=True)
    with tempfile.TemporaryDirectory(prefix="sweep-reuse-") as tmp:
        folder = Path(tmp)
        report_sweep("one job", ONE_JOB, budgets(200, 100, args.variants), args.variants, 10_000,
                     args, folder, args.sample, resume=True)
        report_sweep("lab_six_jobs", LAB, budgets(150_000, 500, args.lab_variants),
                     args.lab_variants, 1_000, args, folder, max(2, args.sample // 10),
                     resume=False)
    print(f"load average {os.getloadavg()[0]:.1f}", flush=True)


if __name__ == "__main__":
    main()
