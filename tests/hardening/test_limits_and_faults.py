"""Bounded loops and batch faults: divisors by factorization, the time limit covering candidate
building (exit 3), the results-file lock, and workers that exit when the parent is killed."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from plan.planner.batch.output_lock import OutputLockError, locked_output
from plan.planner.batch.worker_life import parent_alive
from plan.planner.estimate.search_space import divisors
from tests.conftest import REPO
from tests.hardening.conftest import HOSTILE_BASE, invoke
from tests.hardening.test_interrupts import PLAN, _slow_scenario


def test_divisors_by_factorization_match_the_definition_and_stay_fast() -> None:
    for n in range(1, 400):
        assert divisors(n) == tuple(d for d in range(1, n + 1) if n % d == 0)
    started = time.perf_counter()
    assert divisors(999_999_937) == (1, 999_999_937)  # a prime near 1e9: sqrt(n) steps, not n
    assert len(divisors(2**20 * 3**5)) == 21 * 6
    assert time.perf_counter() - started < 1.0


def test_the_time_limit_covers_candidate_building(tmp_path: Path) -> None:
    # (each job its own token count: jobs equal but for their ids are built once and copied,
    # planner/candidates/job_twins.py, and 200 copies take less than the limit)
    jobs = [{**HOSTILE_BASE["jobs"][0], "id": f"j{i}", "tokens": 10_000_000 + 1_000 * i}
            for i in range(200)]
    path = tmp_path / "many.yaml"
    path.write_text(yaml.safe_dump({**HOSTILE_BASE, "jobs": jobs}), encoding="utf-8")
    started = time.perf_counter()
    code, out, _, escaped = invoke("solve", str(path), "--time-limit", "0.5", "--format", "json")
    assert escaped is None and code == 3
    assert json.loads(out)["status"] == "cut"  # never an answer, and it says what was cut
    assert "cut candidate building" in out and time.perf_counter() - started < 30


def test_a_second_writer_of_the_same_results_file_is_refused(tmp_path: Path) -> None:
    out = tmp_path / "r.csv"
    with (
        locked_output(out),
        pytest.raises(OutputLockError, match="another `plan batch` is writing"),
        locked_output(out),
    ):
        pass
    with locked_output(out):  # released when the first run ends
        pass


def test_parent_alive_sees_a_dead_process() -> None:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    assert parent_alive(os.getpid()) and not parent_alive(proc.pid)


def _descendants(pid: int) -> set[int]:
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[-1].split()
            except OSError:
                continue
            children.setdefault(int(stat[1]), []).append(int(entry))
    found, todo = set(), [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.add(child)
            todo.append(child)
    return found


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")
def test_workers_exit_when_the_parent_is_killed(tmp_path: Path) -> None:
    slow = [_slow_scenario(tmp_path / f"s{i}.yaml") for i in range(2)]
    proc = subprocess.Popen(
        [*PLAN, "batch", *map(str, slow), "-j", "2"],
        cwd=REPO,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    ends = time.monotonic() + 60
    while len(workers := _descendants(proc.pid)) < 3:  # the forkserver and two workers
        assert time.monotonic() < ends and proc.poll() is None
        time.sleep(0.2)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    ends = time.monotonic() + 15
    while any(parent_alive(pid) for pid in workers):
        assert time.monotonic() < ends, "workers outlived the killed parent"
        time.sleep(0.2)


@pytest.mark.skipif(
    not Path("/proc/self").exists(), reason="needs /proc, a folder nobody can write"
)
def test_an_unwritable_results_folder_is_refused_before_any_work(tmp_path: Path) -> None:
    scenario = tmp_path / "s.yaml"
    scenario.write_text(yaml.safe_dump(HOSTILE_BASE), encoding="utf-8")
    started = time.perf_counter()
    code, out, err, escaped = invoke("batch", str(scenario), "-o", "/proc/rows.csv")
    assert escaped is None and code == 2 and out == ""
    assert (
        err.startswith("error: /proc/rows.csv: cannot write in /proc")
        and time.perf_counter() - started < 5
    )


def test_an_unreadable_input_is_its_own_error_row(tmp_path: Path) -> None:
    good = tmp_path / "good.yaml"
    good.write_text(yaml.safe_dump(HOSTILE_BASE), encoding="utf-8")
    loop = tmp_path / "l1.yaml"
    loop.symlink_to(tmp_path / "l2.yaml")
    (tmp_path / "l2.yaml").symlink_to(loop)
    fifo = tmp_path / "f.yaml"
    os.mkfifo(fifo)
    out = tmp_path / "rows.jsonl"
    code, _, _, escaped = invoke(
        "batch", str(loop), str(fifo), str(good), "-j", "1", "-o", str(out)
    )
    assert escaped is None and code == 1
    rows = [yaml.safe_load(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert [r["status"] for r in rows] == ["error", "error", "optimal"]
    assert "symbolic links" in rows[0]["error"] and "FIFO" in rows[1]["error"]


def test_a_pool_that_cannot_start_is_said_and_the_batch_runs_in_one_process(
    tmp_path: Path, monkeypatch, capsys
) -> None:
    from plan.planner.batch import local
    from plan.planner.batch.inputs import Input
    from plan.planner.batch.tasks import build_tasks
    from plan.planner.session import SolveOptions

    def no_pool(jobs: int) -> None:
        raise OSError(38, "Function not implemented")  # e.g. no POSIX semaphores in a container

    monkeypatch.setattr(local, "_start_pool", no_pool)
    paths = []
    for name in ("a.yaml", "b.yaml"):
        paths.append(tmp_path / name)
        paths[-1].write_text(yaml.safe_dump({**HOSTILE_BASE, "name": name}), encoding="utf-8")
    tasks = [
        t
        for t in build_tasks([Input(p) for p in paths], [_no_variant()], (), SolveOptions(top_k=1))
    ]
    rows = dict(local.run_local(tasks, jobs=2))  # type: ignore[arg-type]
    assert sorted(r.status for r in rows.values()) == ["optimal", "optimal"]
    assert "could not start 2 worker processes" in capsys.readouterr().err


def _no_variant():  # the single, empty variant of a batch without --sweep
    from plan.planner.batch.sweep import expand_grid

    return expand_grid([])[0]
