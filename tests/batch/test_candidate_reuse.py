"""A sweep reuses candidates where its variants change none (planner/candidates/reuse.py): every
row it gives equals the row a fresh solve of that variant gives, and says whether it reused."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import yaml

from plan.planner import candidates
from plan.planner.batch import plan_reuse
from plan.planner.batch.inputs import Input
from plan.planner.batch.sweep import expand_grid, parse_sweeps
from plan.planner.batch.tasks import Task, build_tasks
from plan.planner.batch.work import _load, run_task
from plan.planner.session import SolveOptions
from plan.planner.solve import solve
from tests.batch.conftest import FAST_SOLVER
from tests.conftest import REPO


def _tasks(tmp_path: Path, sweeps: list[str]) -> list[Task]:
    data = yaml.safe_load((REPO / "scenarios" / "student_no_ops.yaml").read_text("utf-8"))
    # (a safety net no busy machine reaches: an infeasible variant's explanation builds what-ifs)
    data["solver"] = {**FAST_SOLVER, "top_k": 3, "time_limit_s": 3600}
    path = tmp_path / "student.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    found = build_tasks([Input(path)], expand_grid(parse_sweeps(sweeps)), (), SolveOptions())
    return [task for task in found if isinstance(task, Task)]


def test_every_reused_row_equals_a_fresh_solve_of_its_variant(tmp_path: Path) -> None:
    # budgets from infeasible up; deadlines within one horizon (the job states none: the
    # scenario's deadline sets it, so each deadline builds once) and objectives
    tasks = _tasks(tmp_path, ["deadline=7d,6d", "objective=cost,time",
                              "budget=100,150,200,1000,5000"])
    candidates._BUILT.clear()
    swept = []
    for task in tasks:  # (each solved: an earlier proven answer is not reused, test_plan_reuse)
        plan_reuse.forget()
        swept.append(run_task(task))
    assert [row.candidates for row in swept] == ["built"] + ["reused"] * 9 + ["built"] + \
        ["reused"] * 9
    assert {row.status for row in swept} >= {"optimal", "infeasible"}
    for task, row in zip(tasks, swept, strict=True):
        candidates._BUILT.clear()
        plan_reuse.forget()
        fresh = run_task(task)
        assert fresh.candidates == "built"
        assert row.without_time() == fresh.without_time(), task.variant


def test_a_row_is_the_best_plan_of_a_full_solve(tmp_path: Path) -> None:
    """A row's solve asks for no alternatives: its plan, status, cost and bound are a full solve's
    (alternatives included) all the same."""
    for task in _tasks(tmp_path, ["budget=100,200,5000", "objective=cost,time"]):
        row = run_task(task)
        result = solve(_load(task), task.options)
        best = result.plans[0] if result.plans else None
        assert (row.status, row.gap, row.bound) == (result.status, result.gap, result.bound)
        assert row.plan == (best.summary() if best else "")
        assert row.total_cost == (round(best.total_cost, 2) if best else None)


def test_rows_say_whether_candidates_were_reused_in_the_results_file(tmp_path: Path) -> None:
    from plan.planner.batch import read_rows
    from plan.planner.batch.local import run_local
    from plan.planner.batch.runner import run_batch

    # (the cheapest plan under 200 CNY, 159, is the cheapest under 300; under the time objective
    # a larger budget may buy a faster plan, so 300 is solved, on the candidates built for 200)
    tasks = _tasks(tmp_path, ["objective=cost,time", "budget=200,300"])
    candidates._BUILT.clear()
    plan_reuse.forget()
    out = tmp_path / "rows.csv"
    run_batch(tasks, lambda todo: run_local(todo, 1), output=out)
    assert [row.candidates for row in read_rows(out)] == ["built", "plan reused", "reused",
                                                          "reused"]
    # a file written before rows said so is still read
    old = out.read_text("utf-8").replace(",candidates", "").replace(",built", "").replace(
        ",plan reused", "").replace(",reused", "")
    out.write_text(old, encoding="utf-8")
    assert [dataclasses.replace(r, candidates="") for r in read_rows(out)] == read_rows(out)
    assert len(read_rows(out)) == 4
