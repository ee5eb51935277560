"""Whole-process timings of the commands users wait for, against a baseline release in the same run.

Each command runs as a fresh `plan` process (interpreter start, imports, candidate building, solves,
output), N times; the table gives the median and the min-max spread. This tree is timed twice: with
a warm estimate cache (filled by one untimed run, as on a user's second run of a scenario or any
batch variant) and cold (a fresh, empty cache folder every run). The baseline is another commit of
this repository (default: the session's starting point), checked out into a temporary worktree and
run with the same interpreter; machines differ, so the ratio baseline / warm is the figure to
compare. Each tree runs once untimed per row first, which also writes its bytecode as an installed
package has it.

Usage: python bench/cli_speed.py [--runs 5] [--baseline REF] [--skip-slow] [--only TEXT]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))

from generated import write  # noqa: E402

DEFAULT_BASELINE = "0172ce1"  # main before the speed work (issue #12)
SCENARIOS = ROOT / "scenarios"


def commands(tmp: Path, skip_slow: bool) -> list[tuple[str, list[str], int | None]]:
    """(label, plan arguments, runs override) per row of the issue's table."""
    many = write(32, tmp)
    rows: list[tuple[str, list[str], int | None]] = [
        ("plan --version", ["--version"], None),
        (
            "plan validate scenarios/*.yaml",
            ["validate", *map(str, sorted(SCENARIOS.glob("*.yaml")))],
            None,
        ),
        ("plan solve student_no_ops", ["solve", str(SCENARIOS / "student_no_ops.yaml")], None),
        ("plan solve medical_hybrid", ["solve", str(SCENARIOS / "medical_hybrid.yaml")], None),
        ("plan solve lab_six_jobs", ["solve", str(SCENARIOS / "lab_six_jobs.yaml")], None),
        ("plan solve generated 32 jobs", ["solve", str(many)], 3),
    ]
    if not skip_slow:
        rows.append(
            ("plan pareto lab_six_jobs", ["pareto", str(SCENARIOS / "lab_six_jobs.yaml")], None)
        )
        rows.append(
            (
                "plan batch 100 variants, 2 procs",
                [
                    "batch",
                    str(SCENARIOS / "student_no_ops.yaml"),
                    str(SCENARIOS / "grant_qlora_compare.yaml"),
                    "--sweep",
                    "budget=10..500:10",
                    "--jobs",
                    "2",
                ],
                3,
            )
        )
    return rows


def launcher(tree: Path, tmp: Path) -> tuple[str, str]:
    """(PYTHONPATH, module) that run `tree`'s own CLI, not the installed one. Since the one-package
    layout the folders are plan.models, plan.constraints, plan.planner (mapped in pyproject.toml): a
    folder plan/ of links to them stands in for the install, ahead of it on the path. Older commits
    (the baseline) import the folders by their own names."""
    if '"plan.planner" = "planner"' not in (tree / "pyproject.toml").read_text(encoding="utf-8"):
        return str(tree), "planner.cli.app"
    links = tmp / f"links-{tree.name}"
    (links / "plan").mkdir(parents=True, exist_ok=True)
    for folder in ("models", "constraints", "planner"):
        if not (links / "plan" / folder).exists():
            (links / "plan" / folder).symlink_to(tree / folder, target_is_directory=True)
    return str(links), "plan.planner.cli.app"


def timed(tree: Path, launch: tuple[str, str], args: list[str], cache: str) -> float:
    path, module = launch
    env = dict(os.environ, PYTHONPATH=path, PLAN_CACHE_DIR=cache)
    # As on a user's machine: an installed package has its bytecode (pip compiles it at install) and
    # an imported source tree writes it on first use. A shell that forbids bytecode files would make
    # every timed process compile each module from source (~70 ms for `plan solve`), so the runs may
    # write them.
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", module, *args], cwd=tree, env=env,
                          capture_output=True, text=True, check=False)
    wall = time.perf_counter() - started
    if done.returncode not in (0, 1):
        raise SystemExit(f"{tree}: plan {' '.join(args)}: exit "
                         f"{done.returncode}\n{done.stderr[-1500:]}")
    return wall


def spread(walls: list[float]) -> str:
    return f"{statistics.median(walls):7.2f} ({min(walls):.2f}-{max(walls):.2f})"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--baseline", default=DEFAULT_BASELINE, help="git ref to compare with ('' "
                                                                     "to skip)")
    parser.add_argument("--skip-slow", action="store_true", help="leave out pareto and batch")
    parser.add_argument("--only", default="", help="rows whose label contains this text")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        baseline = tmp / "baseline"
        if args.baseline:
            subprocess.run(
                ["git", "worktree", "add", "--detach", str(baseline), args.baseline],
                cwd=ROOT,
                check=True,
                capture_output=True,
            )
        try:
            here = launcher(ROOT, tmp)
            there = launcher(baseline, tmp) if args.baseline else ("", "")
            print(f"{os.cpu_count()} CPUs, {args.runs} runs per row (fewer where noted); median "
                  "(min-max) seconds")
            print(f"{'command':34} {'warm cache':>22} {'cold cache':>22} "
                  f"{'baseline ' + args.baseline:>22} {'ratio':>6}")
            for label, plan_args, runs_override in commands(tmp, args.skip_slow):
                if args.only not in label:
                    continue
                runs = min(args.runs, runs_override or args.runs)
                cache = tmp / f"cache-{abs(hash(label))}"
                timed(ROOT, here, plan_args, str(cache))  # fills the cache
                warm = [timed(ROOT, here, plan_args, str(cache)) for _ in range(runs)]
                cold = [
                    timed(ROOT, here, plan_args, str(tmp / f"cold-{abs(hash(label))}-{i}"))
                    for i in range(runs)
                ]
                if args.baseline:
                    # untimed, as for this tree: bytecode written
                    timed(baseline, there, plan_args, "off")
                base = (
                    [timed(baseline, there, plan_args, "off") for _ in range(runs)]
                    if args.baseline
                    else []
                )
                ratio = f"{statistics.median(base) / statistics.median(warm):5.2f}x" if base else ""
                print(
                    f"{label + (f' [{runs} runs]' if runs != args.runs else ''):34} "
                    f"{spread(warm):>22} {spread(cold):>22} {spread(base) if base else '':>22} "
                    f"{ratio:>6}",
                    flush=True,
                )
        finally:
            if args.baseline:
                subprocess.run(
                    ["git", "worktree", "remove", "--force", str(baseline)],
                    cwd=ROOT,
                    check=False,
                    capture_output=True,
                )


if __name__ == "__main__":
    main()
