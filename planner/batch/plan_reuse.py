"""Proven answers a budget sweep's variants share, where a budget cannot move them.

A variant differs from one solved before in this worker by its whole-plan budget alone. A budget
only removes plans (those dearer than it), so:
- a plan proven optimal under budget B1, costing c, is optimal under every budget from c to B1
  (the plans that remain are a subset of those it beat, and it remains), whatever the objective
  and every stage of it: a lexicographic second stage, the cheapest-plan tie-breaks, the earliest
  ends (each stage's set only shrinks, and the plan is still in it);
- under the cost objective it is also optimal above B1: no plan cheaper than c exists under a
  larger budget that did not exist under B1, and the plans of cost c are the same;
- a variant proven infeasible under B1 is infeasible under every smaller budget.
Only proven rows (optimal, infeasible) are kept: a plan a work or time limit cut is solved again.
The row then says `plan reused` (planner/batch/rows.py). A budget within a money unit of the plan's
cost is solved (the cost's rounding never decides a reuse).
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass

from plan.models.loading import LoadedScenario
from plan.models.problem import SCALE
from plan.planner.batch.rows import Row
from plan.planner.cpsat.overflow_guard import MAX_MODEL_MAGNITUDE
from plan.planner.session import SolveOptions


@dataclass(frozen=True)
class _Solved:
    budget_units: int | None  # the budget it was solved under (None: none, no upper limit)
    cost_units: int | None  # the plan's cost (None: infeasible)
    row: Row


_SOLVED: OrderedDict[tuple[object, ...], list[_Solved]] = OrderedDict()
_KEPT_SCENARIOS = 8  # a batch walks a file's variants in order
_KEPT_PER_SCENARIO = 16


def _key(loaded: LoadedScenario, options: SolveOptions) -> tuple[object, ...]:
    """Everything a row depends on but the whole-plan budget."""
    s = loaded.scenario
    return (s.model_dump_json(exclude={"budget"}), id(loaded.catalog),
            tuple((job, card.model_dump_json()) for job, card in sorted(loaded.models.items())),
            str(loaded.path.parent), repr(options))


def _objective(loaded: LoadedScenario, options: SolveOptions) -> str:
    return options.objective or loaded.scenario.objective


def _serves(solved: _Solved, budget: int | None, cost_objective: bool) -> bool:
    """Whether `solved`'s answer is this budget's, by the rules in the module docstring."""
    upper = solved.budget_units
    below = upper is None or (budget is not None and budget <= upper)
    if solved.cost_units is None:  # infeasible under `upper`: so under any budget below it
        return below
    if budget is not None and solved.cost_units + 1 > budget:  # the plan must stay within it
        return False
    return below or cost_objective


def _budget_units(loaded: LoadedScenario) -> int | None:
    budget = loaded.scenario.budget
    return SCALE.money(budget) if budget is not None else None


def reused_row(loaded: LoadedScenario, options: SolveOptions) -> Row | None:
    """The proven row of an earlier variant that is this one's answer too, or None."""
    entries = _SOLVED.get(_key(loaded, options))
    if not entries:
        return None
    units = _budget_units(loaded)
    if units is not None and units > MAX_MODEL_MAGNITUDE:  # a solve would refuse it: let it
        return None
    cost_objective = _objective(loaded, options) == "cost"
    return next((e.row for e in entries if _serves(e, units, cost_objective)), None)


def remember(loaded: LoadedScenario, options: SolveOptions, row: Row,
             cost: float | None) -> None:
    """Keep a solved row for the next variants (proven rows only); `cost`: its plan's exact
    cost (the row's is rounded)."""
    if not row.proven or (row.status == "optimal" and cost is None):
        return
    key = _key(loaded, options)
    entries = _SOLVED.setdefault(key, [])
    _SOLVED.move_to_end(key)
    entries.append(_Solved(_budget_units(loaded), SCALE.money(cost) if cost is not None else None,
                           row))
    del entries[:-_KEPT_PER_SCENARIO]
    while len(_SOLVED) > _KEPT_SCENARIOS:
        _SOLVED.popitem(last=False)


def forget() -> None:
    """Drop every kept row (tests and benches that time a fresh solve)."""
    _SOLVED.clear()
