"""A budget sweep reuses an earlier variant's proven answer where the budget cannot move it
(planner/batch/plan_reuse.py): every such row equals a fresh solve of its variant, in either walk
order, at the edge where the budget meets the plan's cost, and under objectives where a larger
budget buys a faster plan."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import yaml

from plan.models.problem import SCALE
from plan.planner import candidates
from plan.planner.batch import plan_reuse
from plan.planner.batch.inputs import Input
from plan.planner.batch.plan_reuse import _serves, _Solved
from plan.planner.batch.rows import PLAN_REUSED, Row
from plan.planner.batch.sweep import expand_grid, parse_sweeps
from plan.planner.batch.tasks import Task, build_tasks
from plan.planner.batch.work import _load, run_task
from plan.planner.session import SolveOptions
from tests.batch.conftest import FAST_SOLVER
from tests.conftest import REPO


def _tasks(tmp_path: Path, sweeps: list[str]) -> list[Task]:
    data = yaml.safe_load((REPO / "scenarios" / "student_no_ops.yaml").read_text("utf-8"))
    data["solver"] = {**FAST_SOLVER, "top_k": 1}
    path = tmp_path / "student.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    found = build_tasks([Input(path)], expand_grid(parse_sweeps(sweeps)), (), SolveOptions())
    return [task for task in found if isinstance(task, Task)]


def _fresh(task: Task) -> Row:
    candidates._BUILT.clear()
    plan_reuse.forget()
    return run_task(task)


def test_reused_rows_equal_fresh_solves_in_both_orders_and_at_the_edge(tmp_path: Path) -> None:
    [probe] = _tasks(tmp_path, ["budget=100000"])
    cost = _fresh(probe).total_cost
    assert cost is not None
    unit = 1 / SCALE.money_units_per_currency
    edge = [cost - 1, cost - unit, cost, cost + unit / 2, cost + unit, cost + 2 * unit, cost + 50,
            100_000]
    budgets = ",".join(f"{b:.6f}" for b in edge)
    for objective in ("cost", "time"):
        tasks = _tasks(tmp_path, [f"objective={objective}", f"budget={budgets}"])
        fresh = [_fresh(task).without_time() for task in tasks]
        assert {row.status for row in fresh} == {"optimal", "infeasible"}
        for order in (tasks, tasks[::-1]):
            candidates._BUILT.clear()
            plan_reuse.forget()
            rows = {task.index: run_task(task) for task in order}
            swept = [rows[task.index] for task in tasks]
            assert [row.without_time() for row in swept] == fresh, (objective, order[0].variant)
            said = [row.candidates for row in swept]
            assert PLAN_REUSED in said, (objective, said)
            # a budget a money unit or less above the cost is solved, never reused
            for budget, row in zip(edge, swept, strict=True):
                if row.candidates == PLAN_REUSED and row.status == "optimal":
                    assert SCALE.money(budget) >= SCALE.money(cost) + 1, (budget, cost)


def test_the_rules_of_reuse() -> None:
    row = Row("f", "", "optimal", 1.0, "CNY", 1.0, "p", 0.0, "", "0" * 16)
    plan = _Solved(budget_units=1000, cost_units=500, row=row)
    assert _serves(plan, 500 + 1, cost_objective=False)  # from the cost (and a unit) ...
    assert _serves(plan, 1000, cost_objective=False)  # ... to the budget it was solved under
    assert not _serves(plan, 500, cost_objective=False)  # within a unit of the cost: solved
    assert not _serves(plan, 1001, cost_objective=False)  # more money may buy a faster plan
    assert _serves(plan, 10**9, cost_objective=True)  # but never a cheaper one
    assert _serves(plan, None, cost_objective=True)
    assert not _serves(plan, None, cost_objective=False)
    unbounded = dataclasses.replace(plan, budget_units=None)
    assert _serves(unbounded, 10**9, cost_objective=False)
    assert _serves(unbounded, None, cost_objective=False)
    none = _Solved(budget_units=1000, cost_units=None, row=dataclasses.replace(
        row, status="infeasible"))
    assert _serves(none, 999, cost_objective=True)  # less money: still no plan
    assert _serves(none, 1000, cost_objective=False)
    assert not _serves(none, 1001, cost_objective=True)  # more money may make one
    assert not _serves(none, None, cost_objective=True)


def test_only_proven_rows_are_kept(tmp_path: Path) -> None:
    first, second = _tasks(tmp_path, ["budget=1000,2000"])
    plan_reuse.forget()
    loaded, other = _load(first), _load(second)
    options = first.options
    cut = Row(first.path.name, "", "feasible", 159.0, "CNY", 3.0, "p", 0.0, "", "0" * 16,
              gap=0.01, bound=157.0)
    plan_reuse.remember(loaded, options, cut, 159.0)
    assert plan_reuse.reused_row(other, options) is None
    proven = dataclasses.replace(cut, status="optimal", gap=0.0, bound=159.0)
    plan_reuse.remember(loaded, options, proven, 159.0)
    assert plan_reuse.reused_row(other, options) == proven
    # another change than the budget is another answer
    assert plan_reuse.reused_row(other, dataclasses.replace(options, objective="time")) is None
    plan_reuse.forget()
