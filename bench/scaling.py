"""Growth of `plan solve` with the number of jobs: generated scenarios of 1, 2, 4, ... 64 jobs
(mixed methods, some in sequence, one shared owned pool; bench/generated.py), each solved as a whole
process.

Usage: python bench/scaling.py [--sizes 1 2 4 8 16 32 64] [--runs 1] Reports per size: wall time
cold (fresh estimate cache) and warm (cache filled by the cold run), peak memory (max RSS of the
process), status, gap and the solver's own time; then the fitted growth exponent of warm wall time
(least squares on log time against log jobs).
"""

from __future__ import annotations

import argparse
import json
import math
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

# `plan` that reports its own peak memory (max RSS) on stderr as it exits.
PEAK_REPORTING_PLAN = (
    "import atexit, resource, sys\natexit.register(lambda: sys.stderr.write('PEAK_KIB %d\\n' % "
    "resource.getrusage(resource.RUSAGE_SELF).ru_maxrss))\nsys.argv = ['plan', "
    "*sys.argv[1:]]\nfrom plan.planner.cli.app import main\nmain()\n"
)


def run(path: Path, cache: Path) -> tuple[float, float, dict[str, object]]:
    """(wall s, peak MiB, solve JSON) of one `plan solve` process."""
    env = dict(os.environ, PLAN_CACHE_DIR=str(cache))
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", PEAK_REPORTING_PLAN, "solve", str(path), "--format", "json"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    wall = time.perf_counter() - started
    if done.returncode not in (0, 1, 3):
        raise SystemExit(f"{path}: exit {done.returncode}: {done.stderr[-800:]}")
    peak = [line.split()[1] for line in done.stderr.splitlines() if line.startswith("PEAK_KIB ")]
    return wall, int(peak[-1]) / 1024 if peak else float("nan"), json.loads(done.stdout)


def fitted_exponent(sizes: list[int], times: list[float]) -> float:
    xs, ys = [math.log(n) for n in sizes], [math.log(t) for t in times]
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / sum(
        (x - mx) ** 2 for x in xs
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", type=int, nargs="*", default=[1, 2, 4, 8, 16, 32, 64])
    parser.add_argument("--runs", type=int, default=1, help="warm runs per size (median reported)")
    args = parser.parse_args()
    print(f"{'jobs':>4} {'cold s':>7} {'warm s':>7} {'peak MiB':>8} {'status':>9} {'gap':>6} "
          f"{'solver s':>8}  plans")
    warm_times = []
    with tempfile.TemporaryDirectory() as tmp:
        for n in args.sizes:
            path = write(n, Path(tmp))
            cache = Path(tmp) / f"cache-{n}"
            cold, _, _ = run(path, cache)
            warms = [run(path, cache) for _ in range(args.runs)]
            wall = statistics.median(w for w, _, _ in warms)
            peak = max(p for _, p, _ in warms)
            data = warms[-1][2]
            warm_times.append(wall)
            print(f"{n:4d} {cold:7.2f} {wall:7.2f} {peak:8.0f} {data['status']:>9} "
                  f"{data.get('gap') or 0:6.1%} "
                  f"{data['solve_time_s']:8.2f}  {len(data.get('plans', []))}", flush=True)
    if len(args.sizes) > 1:
        print(f"growth exponent of warm wall time: {fitted_exponent(args.sizes, warm_times):.2f} "
              f"(time ~ jobs^k; {os.cpu_count()} CPUs)")


if __name__ == "__main__":
    main()
