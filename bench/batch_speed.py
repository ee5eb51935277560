"""Batch throughput: 100 scenario variants through `plan batch`, locally with 1 and 2 processes and
on Ray.

The 100 variants are two small shipped scenarios, student_no_ops.yaml (one LoRA job) and
grant_qlora_compare.yaml (two QLoRA jobs), each swept over 50 budgets (`--sweep budget=10..500:10`);
the lowest budgets are infeasible, as they would be in a real sweep. Each run is a fresh `plan
batch` process timed end to end, as a user sees it: interpreter start, imports, process pool or Ray
start, 100 solves (top-1 plan, one CP-SAT worker per scenario), the table. No results file, so
nothing is re-used between runs.

Configurations: local --jobs 1 (in-process), local --jobs 2 (process pool), Ray with 2 CPUs started
by the command (cold: `ray.init` inside the run), and optionally Ray connecting to an
already-running local Ray instance with 2 CPUs (`ray start --head`; warm). Ray's overhead is against
the 2-process pool.

Usage: python bench/batch_speed.py [--runs 3] [--no-warm-ray]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
SCENARIOS = [
    ROOT / "scenarios" / "student_no_ops.yaml",
    ROOT / "scenarios" / "grant_qlora_compare.yaml",
]
SWEEP = "budget=10..500:10"  # 50 values per scenario
VARIANTS = 100


def run_once(extra: list[str]) -> tuple[float, str]:
    """Wall seconds of one `plan batch` run, and its summary line."""
    command = [str(BIN / "plan"), "batch", *map(str, SCENARIOS), "--sweep", SWEEP, *extra]
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, check=False)
    wall = time.perf_counter() - started
    if done.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(command)} failed ({done.returncode}):\n{done.stderr[-2000:]}")
    summary = next((line for line in reversed(done.stdout.splitlines()) if " solved" in line), "?")
    return wall, summary


def ray_available() -> bool:
    return (
        subprocess.run(
            [sys.executable, "-c", "import ray"], capture_output=True, check=False
        ).returncode
        == 0
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--no-warm-ray", action="store_true", help="skip Ray on an already-running "
                                                                   "instance")
    args = parser.parse_args()
    configs: list[tuple[str, list[str]]] = [("local, 1 process", ["--jobs", "1"]),
                                            ("local, 2 processes", ["--jobs", "2"])]
    warm = "ray, 2 CPUs (running)"
    if ray_available():
        configs.append(("ray, 2 CPUs (cold start)", ["--backend", "ray", "--jobs", "2"]))
        if not args.no_warm_ray:
            configs.append((warm, ["--backend", "ray", "--address", "auto"]))
    else:
        print("ray is not installed (pip install -e '.[ray]'): Ray rows skipped")
    print(f"{VARIANTS} variants ({', '.join(p.name for p in SCENARIOS)} x --sweep {SWEEP}), "
          f"{os.cpu_count()} CPUs, {args.runs} runs each")
    print(f"{'configuration':28} {'median s':>9} {'min-max s':>13} {'scen/min':>9}  result")
    medians: dict[str, float] = {}
    warm_ray = False
    try:
        for name, extra in configs:
            if name == warm:  # started only now, so the runs before it see no running cluster
                subprocess.run(
                    [
                        str(BIN / "ray"),
                        "start",
                        "--head",
                        "--num-cpus",
                        "2",
                        "--include-dashboard",
                        "false",
                    ],
                    capture_output=True,
                    check=True,
                    env={**os.environ, "RAY_USAGE_STATS_ENABLED": "0"},
                )
                warm_ray = True
            walls, summary = [], ""
            for _ in range(args.runs):
                wall, summary = run_once(extra)
                walls.append(wall)
            medians[name] = median = statistics.median(walls)
            print(f"{name:28} {median:9.1f} {min(walls):6.1f}-{max(walls):<6.1f} "
                  f"{VARIANTS / median * 60:9.0f}  "
                  f"{summary}", flush=True)
    finally:
        if warm_ray:
            subprocess.run([str(BIN / "ray"), "stop"], capture_output=True, check=False)
    pool = medians["local, 2 processes"]
    print(f"speed-up of 2 processes over 1: {medians['local, 1 process'] / pool:.2f}x")
    for name in (n for n in medians if n.startswith("ray")):
        print(f"{name} vs the 2-process pool: {medians[name] - pool:+.1f} s per 100 "
              f"({(medians[name] / pool - 1) * 100:+.0f}%)")


if __name__ == "__main__":
    main()
