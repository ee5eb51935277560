"""The cost of keeping a `plan batch` results file, without the solving: upkeep and resume.

Upkeep: N rows (N = 250, 500, 1,000 by default) come from a backend that has them at once, and
`run_batch` keeps the results file as it does in a real run; the seconds are what the file costs.
Resume: a finished N-row file of a `--sweep budget=1..N:1` over scenarios/student_no_ops.yaml, and a
fresh `plan batch` process on it (every row re-used, nothing solved), timed end to end as a user
sees it (interpreter start, imports, hashing the variants, reading and checking the file).

Usage: python bench/batch_upkeep.py [--rows 250,500,1000] [--runs 3] [--format csv|jsonl]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from plan.planner.batch import Row, Task, build_tasks, expand_paths, run_batch  # noqa: E402
from plan.planner.batch.sweep import expand_grid, parse_sweeps  # noqa: E402
from plan.planner.session import SolveOptions  # noqa: E402

SCENARIO = ROOT / "scenarios" / "student_no_ops.yaml"
PLAN = [sys.executable, "-c", "from plan.planner.cli.app import main; main()"]


def _tasks(rows: int) -> list[Task]:
    variants = expand_grid(parse_sweeps([f"budget=1..{rows}:1"]))
    items = build_tasks(
        expand_paths([str(SCENARIO)]), variants, (), SolveOptions(top_k=1, workers=1)
    )
    return [item for item in items if isinstance(item, Task)]


def _row(task: Task) -> Row:
    """A plausible optimal row for the task (what a solve of it could have written)."""
    cost = 100.0 + task.index
    return Row(
        file=str(task.path),
        variant=task.variant,
        status="optimal",
        total_cost=cost,
        currency="CNY",
        makespan_h=12.5,
        plan=f"job-a: 1x rtx-4090 on autodl, {cost:.0f} CNY",
        solve_time_s=0.25,
        error="",
        hash=task.hash,
        gap=0.0,
        bound=cost,
    )


def _instant(tasks: Sequence[Task]) -> Iterator[tuple[int, Row]]:
    for task in tasks:
        yield task.index, _row(task)


def upkeep_s(tasks: list[Task], path: Path) -> float:
    path.unlink(missing_ok=True)
    started = time.perf_counter()
    run_batch(tasks, _instant, output=path)
    return time.perf_counter() - started


def resume_s(rows: int, path: Path) -> tuple[float, str]:
    command = [*PLAN, "batch", str(SCENARIO), "--sweep", f"budget=1..{rows}:1", "-o", str(path)]
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, check=False)
    wall = time.perf_counter() - started
    summary = next((line for line in reversed(done.stdout.splitlines()) if " solved" in line), "?")
    if done.returncode != 0 or "re-used" not in summary:
        raise SystemExit(f"resume failed ({done.returncode}): {summary}\n{done.stderr[-2000:]}")
    return wall, summary


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", default="250,500,1000")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--format", default="csv", choices=("csv", "jsonl"))
    args = parser.parse_args()
    print(f"{'rows':>6} {'upkeep median s':>16} {'resume median s':>16}  (median of {args.runs})")
    with tempfile.TemporaryDirectory(prefix="plan-upkeep-") as folder:
        for rows in (int(n) for n in args.rows.split(",")):
            tasks = _tasks(rows)
            path = Path(folder) / f"results-{rows}.{args.format}"
            upkeep = statistics.median(upkeep_s(tasks, path) for _ in range(args.runs))
            resume = statistics.median(resume_s(rows, path)[0] for _ in range(args.runs))
            print(f"{rows:6} {upkeep:16.2f} {resume:16.2f}", flush=True)


if __name__ == "__main__":
    main()
