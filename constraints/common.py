"""The one way a per-candidate rule is posted: a candidate that breaks group G is off while G
holds."""

from __future__ import annotations

from plan.constraints.groups import Groups, family
from plan.constraints.sat import cp_model
from plan.constraints.variables import Variables


def forbid_violations(
    model: cp_model.CpModel, variables: Variables, groups: Groups, family_name: str
) -> int:
    """Post x[c] + A[G] <= 1 for every candidate c that violates a group G of `family_name`.

    Returns the number of constraints posted (for tests and model statistics).
    """
    posted = 0
    for candidate in variables.problem.all_candidates():
        for group in candidate.violations:
            if family(group) == family_name:
                model.add_bool_or([~variables.chosen(candidate), ~groups.literal(group)])
                posted += 1
    return posted
