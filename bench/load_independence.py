"""Same scenario, same answer, whatever the machine's load (issue 48, item 1).

Runs `plan solve --format json` on every shipped scenario and `plan pareto -o front.json` on the
lab's front, once on a quiet machine and once beside N busy processes (pure-Python loops, one per
--busy), and compares the answers with their wall-clock fields masked. Prints one line per case
(identical or not, exit codes, seconds quiet / busy) and exits 1 if any answer differs.

    python bench/load_independence.py      # every shipped scenario and the lab front, 8 busy
    python bench/load_independence.py --busy 4 --only medical
"""

from __future__ import annotations

import argparse
import multiprocessing
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PLAN = [sys.executable, "-m", "plan.planner.cli.app", "--no-cache"]
WALL_CLOCK = re.compile(r'"solve_time_s": [0-9.eE+-]+')
STATUS = re.compile(r'^  "status": "(\w+)"', re.M)


def _spin() -> None:
    while True:
        pass


def _cases(out: Path) -> dict[str, tuple[list[str], Path | None]]:
    cases: dict[str, tuple[list[str], Path | None]] = {}
    for path in sorted((ROOT / "scenarios").glob("*.yaml")):
        cases[f"solve {path.stem}"] = ([*PLAN, "solve", str(path), "--format", "json"], None)
    front = out / "front.json"
    lab = ROOT / "scenarios/lab_six_jobs.yaml"
    cases["pareto lab_six_jobs"] = ([*PLAN, "pareto", str(lab), "-q", "-o", str(front)], front)
    return cases


def _answer(cmd: list[str], file: Path | None) -> tuple[int, str, float]:
    """(exit code, the answer with wall-clock fields masked, seconds)."""
    started = time.perf_counter()
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    seconds = time.perf_counter() - started
    text = file.read_text(encoding="utf-8") if file is not None and file.exists() else proc.stdout
    return proc.returncode, WALL_CLOCK.sub('"solve_time_s": <masked>', text), seconds


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--busy", type=int, default=8, help="busy processes beside the second run")
    parser.add_argument("--only", default="", help="cases whose name contains this")
    opts = parser.parse_args()
    differ = 0
    with tempfile.TemporaryDirectory() as tmp:
        cases = {k: v for k, v in _cases(Path(tmp)).items() if opts.only in k}
        quiet = {name: _answer(cmd, file) for name, (cmd, file) in cases.items()}
        spinners = [multiprocessing.Process(target=_spin, daemon=True) for _ in range(opts.busy)]
        for p in spinners:
            p.start()
        try:
            busy = {name: _answer(cmd, file) for name, (cmd, file) in cases.items()}
        finally:
            for p in spinners:
                p.terminate()
    print(f"{len(cases)} cases, quiet then beside {opts.busy} busy processes")
    for name in cases:
        (code_q, text_q, s_q), (code_b, text_b, s_b) = quiet[name], busy[name]
        same = code_q == code_b and text_q == text_b
        differ += not same
        found = STATUS.search(text_q)
        status = found.group(1) if found else "?"
        print(f"  {'identical' if same else 'DIFFERENT':9}  {name:34} exit {code_q}/{code_b}  "
              f"status {status:8} {s_q:6.1f} s / {s_b:6.1f} s")
    print(f"{differ} of {len(cases)} answers changed with the load")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
