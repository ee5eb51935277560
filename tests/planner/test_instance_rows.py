"""PlanModel.instance appends the dominated candidates' rows (`x == 0`) and the hint whole
(planner/cpsat/model.py): the model it hands CP-SAT is, row for row, the one posting each row and
each hinted value one at a time makes, so that no answer changes."""

from __future__ import annotations

import dataclasses

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from plan.constraints.sat import cp_model
from plan.models.problem import Problem
from plan.planner.cpsat.model import Bounds, PlanModel
from tests.planner.builders import Spec, make_problem
from tests.planner.test_dominated_candidates import problems


def _one_at_a_time(model: PlanModel, objective: str, bounds: Bounds,
                   hint: dict[int, int] | None) -> cp_model.CpModel:
    """The instance as posting each dominated row and each hinted value in turn makes it."""
    made = model.instance(objective, dataclasses.replace(bounds, keep_dominated=True))
    x = model.variables.x
    for index in model.dominated(objective, bounds, with_assumptions=False):
        made.add(x[index] == 0)
    for index, value in (hint or {}).items():
        if index in x:
            made.add_hint(x[index], value)
    return made


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(problem=problems(), objective=st.sampled_from(["cost", "time", "balanced", "earliest"]),
       capped=st.booleans(), hinted=st.booleans(), data=st.data())
def test_instance_is_the_one_row_at_a_time_model(problem: Problem, objective: str, capped: bool,
                                                  hinted: bool, data: st.DataObject) -> None:
    model = PlanModel(problem)
    every = problem.all_candidates()
    bounds = Bounds(max_cost=10_000_000, max_makespan=10_000_000) if capped else Bounds()
    # (an index beyond the model's: a plan of a wider model, which the hint leaves out)
    hint = ({c.index: data.draw(st.integers(0, 1)) for c in every} | {len(every) + 5: 1}
            if hinted else None)
    made = model.instance(objective, bounds, hint=hint)
    assert str(made.proto) == str(_one_at_a_time(model, objective, bounds, hint).proto)
    # a second instance appends the same rows again, not twice
    again = model.instance(objective, bounds, hint=hint)
    assert str(again.proto) == str(made.proto)


def test_dominated_rows_are_appended_where_some_are_dominated() -> None:
    """The case the property must reach: a problem with dominated candidates, whose instance
    holds one `x == 0` row per dominated candidate more than one that keeps them."""
    problem = make_problem([Spec("a", "cloud", gpus=8, billing="hourly", hours=10, cost=100),
                            Spec("a", "cloud", gpus=4, billing="hourly", hours=20, cost=300)],
                           jobs=["a"])
    model = PlanModel(problem)
    dominated = model.dominated("cost", Bounds(), with_assumptions=False)
    assert dominated
    kept = model.instance("cost", Bounds(keep_dominated=True))
    made = model.instance("cost", Bounds())
    assert len(made.proto.constraints) == len(kept.proto.constraints) + len(dominated)
    assert str(made.proto) == str(_one_at_a_time(model, "cost", Bounds(), None).proto)
