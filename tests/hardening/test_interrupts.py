"""Ctrl-C, for real: SIGINT to a `plan` subprocess during a CP-SAT solve (solve, pareto, batch with
one and two processes). The process exits 130 with one line saying what was kept; no interrupted
plan is printed or stored; batch rows finished before the interrupt are in the results file."""

from __future__ import annotations

import csv
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.conftest import REPO

PLAN = [sys.executable, "-c", "from plan.planner.cli.app import main; main()"]
# The planner runs two threads (main, and one the libraries start at import); a CP-SAT solve adds
# the thread it runs in (plan.planner.cpsat.interruptible).
SOLVING_THREADS = 3


def _slow_scenario(path: Path) -> Path:
    """48 jobs, a large work limit: the search runs for 15 s or more (32 jobs are proven in about 8
    s on a 2-core machine)."""
    base: dict[str, Any] = yaml.safe_load(
        (REPO / "scenarios" / "lab_six_jobs.yaml").read_text(encoding="utf-8")
    )
    jobs = []
    for k in range(8):
        for job in base["jobs"]:
            jobs.append(
                {
                    **job,
                    "id": f"{job['id']}-{k}",
                    "after": [f"{a}-{k}" for a in job.get("after", [])],
                }
            )
    base.update(
        jobs=jobs[:48],
        budget="5M",
        deadline="120d",
        solver={
            "work_limit": 600,
            "time_limit_s": 600,
            "workers": 1,
            "seed": 0,
            "top_k": 3,
            "gap": 0.1,
        },
    )
    path.write_text(yaml.safe_dump(base, sort_keys=False), encoding="utf-8")
    return path


def _start(*args: str) -> subprocess.Popen[str]:
    # A new session, so the test can signal the whole process group as a terminal's Ctrl-C does.
    return subprocess.Popen(
        [*PLAN, *args],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )


def _threads(pid: int) -> int:
    try:
        return len(os.listdir(f"/proc/{pid}/task"))
    except OSError:
        return 0


def _wait_for_solve(
    proc: subprocess.Popen[str], in_worker: bool = False, limit_s: float = 120.0
) -> None:
    """Until the process (or, `in_worker`, one of its pool workers, which idle on two threads) runs
    a CP-SAT solve (its solve thread is up), or fail."""
    if not Path("/proc/self/task").exists():
        time.sleep(15)  # no /proc: give candidate building time instead
        return
    ends = time.monotonic() + limit_s
    while time.monotonic() < ends:
        assert proc.poll() is None, proc.communicate()
        pids = _group_members(proc) if in_worker else [proc.pid]
        if any(_threads(pid) >= SOLVING_THREADS for pid in pids):
            time.sleep(1.0)  # well inside the search
            return
        time.sleep(0.1)
    pytest.fail("no solve started" + (" in a worker" if in_worker else ""))


def _group_members(proc: subprocess.Popen[str]) -> list[int]:
    """The processes of `proc`'s session (its pool workers), `proc` itself left out."""
    members = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == proc.pid:
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text(encoding="utf-8")
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2:].split()
        if int(fields[2]) == proc.pid:  # the process group: the session `_start` began
            members.append(int(entry))
    return members


def _interrupt(proc: subprocess.Popen[str]) -> tuple[int, str, str]:
    os.killpg(proc.pid, signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    return proc.returncode, out, err


@pytest.mark.parametrize("command", ["solve", "pareto"])
def test_ctrl_c_during_a_solve_reports_nothing_and_exits_130(tmp_path: Path, command: str) -> None:
    scenario = _slow_scenario(tmp_path / "slow.yaml")
    proc = _start(command, str(scenario), *(["--format", "json"] if command == "solve" else
                                            ["-o", str(tmp_path / "front.csv")]))
    _wait_for_solve(proc)
    code, out, err = _interrupt(proc)
    assert code == 130, err
    assert out == ""  # no plan, no front: an interrupted search is not a result
    assert err.strip().splitlines() == ["interrupted: nothing was kept (an interrupted search is "
                                        "not a result)"]
    assert not (tmp_path / "front.csv").exists()


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_ctrl_c_in_a_batch_keeps_finished_rows_and_stores_no_interrupted_one(
    tmp_path: Path, jobs: str
) -> None:
    quick = tmp_path / "a-quick.yaml"
    quick.write_text(
        (REPO / "scenarios" / "student_no_ops.yaml").read_text(encoding="utf-8"), encoding="utf-8"
    )
    slow = _slow_scenario(tmp_path / "b-slow.yaml")
    out_file = tmp_path / "rows.csv"
    proc = _start("batch", str(quick), str(slow), "-j", jobs, "-o", str(out_file))
    ends = time.monotonic() + 120
    # flushed at once
    while not (out_file.exists() and "a-quick" in out_file.read_text(encoding="utf-8")):
        assert time.monotonic() < ends and proc.poll() is None, proc.communicate()
        time.sleep(0.2)
    # the slow scenario's search: here, or in a pool worker
    _wait_for_solve(proc, in_worker=jobs != "1")
    assert proc.poll() is None, ("the batch ended before the interrupt", proc.communicate())
    code, out, err = _interrupt(proc)
    assert code == 130, (code, err, out[-500:], out_file.read_text(encoding="utf-8"))
    rows = list(csv.DictReader(out_file.open(encoding="utf-8")))
    assert [r["file"] for r in rows] == [str(quick)] and rows[0]["status"] == "optimal"
    assert err.strip().splitlines()[-1].startswith("interrupted: 1 of 2 rows had finished and "
                                                   f"were written to {out_file}")
    time.sleep(2)
    leftover = subprocess.run(
        ["pgrep", "-f", f"forkserver.*{REPO}"], capture_output=True, text=True
    ).stdout.split()
    assert not [
        pid for pid in leftover if _threads(int(pid)) and str(tmp_path) in _cmdline(int(pid))
    ]


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_text(errors="replace")
    except OSError:
        return ""
