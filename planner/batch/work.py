"""The batch work function: one Task in, one Row out, never an exception (the batch must go on).

It is a plain top-level function of picklable arguments, so the process pool and Ray run exactly
the same code.
"""

from __future__ import annotations

import pickle
import time
from dataclasses import replace
from typing import Any

from plan.models.errors import InputError
from plan.models.loading import LoadedScenario, load_scenario, load_scenario_data
from plan.models.yaml_io import read_yaml
from plan.planner import i18n
from plan.planner.batch import plan_reuse
from plan.planner.batch.rows import PLAN_REUSED, Row
from plan.planner.batch.sweep import apply
from plan.planner.batch.tasks import Task
from plan.planner.candidates import will_reuse
from plan.planner.i18n.said import Joined, said_of, say
from plan.planner.solve import solve

ROW_PLANS = 1
"""A row holds the best plan alone, so its solve asks for no alternatives: they are searched after
the best plan, its status and its bound, and change none of them (only the time they would take,
half a small variant's). Nor its explanation, which a row does not hold (SolveOptions.explained)."""


def _load(task: Task) -> LoadedScenario:
    if not task.assignments:
        return load_scenario(task.path, task.overlays)
    raw: Any = read_yaml(task.path, what="scenario file")
    problems = [say("rule.label_problem", label=task.path, problem=p)
                for p in apply(raw, task.assignments)]
    if problems:
        raise InputError(problems)
    return load_scenario_data(raw, task.path, task.overlays)


def _one_line(text: str) -> str:
    """The text on one line; a keyed sentence already on one line stays keyed (said again in the
    reader's language where the row is shown)."""
    line = " ".join(text.split())
    return text if line == text and _portable(text) else line


def _portable(text: str) -> bool:
    """Whether the sentence, its key and fields travel to the process showing it (a worker's row
    is pickled; a field that cannot be would cost the row, so it goes as plain text)."""
    try:
        pickle.dumps(text)
    except Exception:  # whatever a field's own pickling raises
        return False
    return True


def run_task(task: Task) -> Row:
    """Load (with the variant's values set) and solve one scenario; bad input and bugs become
    error rows. The row is English whatever the reader's language (it is the results file's
    data); its error keeps its message keys for the table."""
    with i18n.kept_language():
        i18n.choose("en")
        return _run_task(task)


def _run_task(task: Task) -> Row:
    started = time.perf_counter()
    row = Row(
        file=str(task.path),
        variant=task.variant,
        status="error",
        total_cost=None,
        currency="",
        makespan_h=None,
        plan="",
        solve_time_s=0.0,
        error="",
        hash=task.hash,
    )
    try:
        loaded = _load(task)
        same = plan_reuse.reused_row(loaded, task.options)
        if same is not None:  # an earlier variant's proven answer, which its budget cannot move
            return replace(same, file=row.file, variant=row.variant, hash=row.hash,
                           candidates=PLAN_REUSED,
                           solve_time_s=round(time.perf_counter() - started, 3))
        # (said before solving: the solve keeps this variant's build for the next ones)
        built = "reused" if will_reuse(loaded) else "built"
        row = replace(row, currency=loaded.scenario.currency, candidates=built)
        result = solve(loaded, replace(task.options, top_k=ROW_PLANS, explained=False))
    except InputError as exc:  # bad input: its one-line problems, joined
        error = say("batch.row_problems", problems=Joined(exc.problems, "batch.problem_sep"))
    except Exception as exc:  # a bug must not end the batch: it becomes this row's error
        error = say("batch.internal_row", kind=type(exc).__name__, detail=said_of(exc))
    else:
        best = result.plans[0] if result.plans else None
        solved = replace(
            row,
            status=result.status,
            gap=result.gap,
            bound=result.bound,
            currency=result.currency,
            total_cost=round(best.total_cost, 2) if best else None,
            makespan_h=round(best.makespan_h, 2) if best else None,
            plan=best.summary() if best else "",
            solve_time_s=round(time.perf_counter() - started, 3),
        )
        plan_reuse.remember(loaded, task.options, solved, best.total_cost if best else None)
        return solved
    return replace(
        row, error=_one_line(error), solve_time_s=round(time.perf_counter() - started, 3)
    )
