"""Growth of `plan solve` with the number of jobs: generated scenarios of 1, 2, 4, ... 64 jobs
(a platform team's quarter: all nine methods, order chains, four owned pools with calendars, every
catalog platform, spot allowed, mixed data rules; bench/generated.py), each solved as a whole
process.

Usage: python bench/scaling.py [--sizes 1 2 4 8 16 32 64] [--runs 1] Reports per size, cold
(fresh estimate cache) and warm (cache filled by the cold run): wall time, CPU time (the process
and any workers it waited for: the machine may be shared), peak memory (max RSS of the process),
status and gap; then the fitted growth exponent of warm wall time
(least squares on log time against log jobs).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import NamedTuple

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))

from generated import write  # noqa: E402


class Solved(NamedTuple):
    wall_s: float
    cpu_s: float
    peak_mib: float
    data: dict[str, object]

    def row(self) -> str:
        gap = self.data.get("gap") or 0
        return (f"{self.wall_s:7.2f} {self.cpu_s:7.2f} {self.peak_mib:8.0f} "
                f"{self.data['status']:>9} {gap:6.1%}")

# `plan` that reports its own peak memory (max RSS) on stderr as it exits.
PEAK_REPORTING_PLAN = (
    "import atexit, resource, sys\natexit.register(lambda: sys.stderr.write('PEAK_KIB %d\\n' % "
    "resource.getrusage(resource.RUSAGE_SELF).ru_maxrss))\nsys.argv = ['plan', "
    "*sys.argv[1:]]\nfrom plan.planner.cli.app import main\nmain()\n"
)


def run(path: Path, cache: Path, extra: list[str]) -> Solved:
    """Wall s, CPU s (this process's children: the solve and any workers it waited for), peak MiB
    and the solve JSON of one `plan solve` process."""
    env = dict(os.environ, PLAN_CACHE_DIR=str(cache))
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", PEAK_REPORTING_PLAN, "solve", str(path), "--format", "json", *extra],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if done.returncode not in (0, 1, 3):
        raise SystemExit(f"{path}: exit {done.returncode}: {done.stderr[-800:]}")
    peak = [line.split()[1] for line in done.stderr.splitlines() if line.startswith("PEAK_KIB ")]
    data = json.loads(done.stdout)
    return Solved(wall, cpu, int(peak[-1]) / 1024 if peak else float("nan"), data)


def fitted_exponent(sizes: list[int], times: list[float]) -> float:
    xs, ys = [math.log(n) for n in sizes], [math.log(t) for t in times]
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / sum(
        (x - mx) ** 2 for x in xs
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", type=int, nargs="*", default=[1, 2, 4, 8, 16, 32, 64])
    parser.add_argument("--runs", type=int, default=1,
                        help="warm runs per size (median reported; 0: cold only)")
    parser.add_argument("--time-limit", type=float, default=None,
                        help="the wall-clock safety net, s (on a busy machine: so that the work "
                             "limit, not the load, ends each solve)")
    args = parser.parse_args()
    print(f"{'jobs':>4} {'cold s':>7} {'CPU s':>7} {'peak MiB':>8} {'status':>9} {'gap':>6} | "
          f"{'warm s':>7} {'CPU s':>7} {'peak MiB':>8} {'status':>9} {'gap':>6}  plans")
    extra = [] if args.time_limit is None else ["--time-limit", f"{args.time_limit:g}"]
    warm_times = []
    with tempfile.TemporaryDirectory() as tmp:
        for n in args.sizes:
            path = write(n, Path(tmp))
            cache = Path(tmp) / f"cache-{n}"
            cold = run(path, cache, extra)
            warms = [run(path, cache, extra) for _ in range(args.runs)]
            line = f"{n:4d} {cold.row()} |"
            if warms:
                median = sorted(warms, key=lambda w: w.wall_s)[len(warms) // 2]
                warm_times.append(median.wall_s)
                line += f" {median.row()}"
            plans = cold.data.get("plans", [])
            print(f"{line}  {len(plans) if isinstance(plans, list) else 0}", flush=True)
    if len(warm_times) > 1:
        print(f"growth exponent of warm wall time: {fitted_exponent(args.sizes, warm_times):.2f} "
              f"(time ~ jobs^k; {os.cpu_count()} CPUs)")

if __name__ == "__main__":
    main()
