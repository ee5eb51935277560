"""Write every user-visible output of the shipped examples to one folder, for before/after diffs.

A behaviour-preserving change (a module moved, a type introduced) must leave these files byte
identical: `plan solve` as JSON and markdown on every shipped scenario and docs example, `plan
pareto` fronts of three scenarios, `plan explain --why-not` on one option, and the validation
bench's whole report (every row's estimate). Wall-clock fields (`solve_time_s`) are masked, and the
wall-clock safety net is raised (`--time-limit 3600`) so that a busy machine cannot cut a solve.

    python bench/output_snapshot.py /tmp/before
    ... change ...
    python bench/output_snapshot.py /tmp/after && diff -r /tmp/before /tmp/after
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PLAN = [sys.executable, "-m", "plan.planner.cli.app"]
SCENARIOS = sorted((ROOT / "scenarios").glob("*.yaml")) + sorted(
    (ROOT / "docs/examples").glob("*.yaml")
)
PARETO = ["student_no_ops", "medical_hybrid", "grant_qlora_compare"]
WHY_NOT = ("scenarios/medical_hybrid.yaml", "job=domain-cpt platform=tencent-ti-one gpu=h800 "
                                            "gpus=64 billing=hourly")
WALL = ["--time-limit", "3600"]
WALL_CLOCK = re.compile(r'(?<="solve_time_s": )[0-9.]+|(?<=, )[0-9.]+ s(?=\))')
"""A solve's seconds: JSON's `solve_time_s` and the `(cost objective, 2.80 s)` of the text views."""


def _commands(out: Path) -> dict[str, list[str]]:
    cmds: dict[str, list[str]] = {}
    for path in SCENARIOS:
        rel = str(path.relative_to(ROOT))
        cmds[f"solve-{path.stem}.json"] = [
            *PLAN,
            "--no-cache",
            "solve",
            rel,
            "--format",
            "json",
            *WALL,
        ]
        cmds[f"solve-{path.stem}.md"] = [
            *PLAN,
            "--no-cache",
            "solve",
            rel,
            "--format",
            "markdown",
            *WALL,
        ]
    for stem in PARETO:
        front = out / f"pareto-{stem}.csv"
        cmds[f"pareto-{stem}.txt"] = [
            *PLAN,
            "--no-cache",
            "pareto",
            f"scenarios/{stem}.yaml",
            "--points",
            "8",
            *WALL,
            "-o",
            str(front),
            "--quiet",
        ]
    cmds["why-not.txt"] = [*PLAN, "--no-cache", "explain", WHY_NOT[0], "--why-not", WHY_NOT[1]]
    cmds["validate_estimates.txt"] = [sys.executable, "bench/validate_estimates.py"]
    return cmds


def _run(name: str, cmd: list[str], out: Path) -> str:
    done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, check=False)
    text = WALL_CLOCK.sub("<masked>", done.stdout)
    text = text.replace(str(out), "<out>")
    (out / name).write_text(f"exit {done.returncode}\n{text}\n--- stderr\n{done.stderr}")
    return f"{name}: exit {done.returncode}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path, help="folder to write the outputs to (created)")
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args(argv)
    out: Path = args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    with ThreadPoolExecutor(args.jobs) as pool:
        for line in pool.map(lambda kv: _run(kv[0], kv[1], out), _commands(out).items()):
            print(line)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
