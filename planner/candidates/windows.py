"""Work spread over months: reservations held for one window or several, and the budget periods a
scenario counts cash in.

A monthly or yearly reservation is paid for the calendar window it holds, whoever uses it. Jobs
months apart can share one long window or each hold their own: every candidate on a reservation
that several jobs may use gets a twin on a reservation held for its job alone (priced
`Resource.held_alone`), so the model chooses, per job, the cheaper way.
"""

from __future__ import annotations

import dataclasses

from plan.models.job import Job
from plan.models.problem import SCALE, BudgetPeriod, Candidate, Resource
from plan.models.scenario import Scenario


def instance_shape(job: Job) -> str:
    """A recurring job's instance without its calendar (id, release, deadline, `after`): two
    instances of one shape have the same candidates."""
    return job.model_copy(update={"id": job.series or job.id, "release_h": 0.0,
                                  "deadline_h": None, "after": []}).model_dump_json()


def held_alone_twins(candidates: dict[str, list[Candidate]],
                     resources: dict[str, Resource]) -> dict[str, list[Candidate]]:
    """Each job's candidates, with a twin on its own window for every candidate on a reservation
    other jobs may share (the twin's resource is added to `resources`)."""
    users: dict[str, set[str]] = {}
    for job, cands in candidates.items():
        for c in cands:
            if c.resource is not None and resources[c.resource].kind == "reservation":
                users.setdefault(c.resource, set()).add(job)
    shared = {key for key, jobs in users.items() if len(jobs) > 1}
    if not shared:
        return candidates
    twinned: dict[str, list[Candidate]] = {}
    for job, cands in candidates.items():
        twins = []
        for c in cands:
            if c.resource not in shared:
                continue
            res = resources[c.resource]
            key = f"{res.key}#{job}"
            mine = tuple(sorted({o.gpus for o in cands if o.resource == res.key}))
            resources[key] = dataclasses.replace(
                res, key=key, label=f"{res.label}, held for {job} alone", levels=mine)
            twins.append(dataclasses.replace(c, resource=key))
        twinned[job] = [*cands, *twins]
    return twinned


def budget_periods(scenario: Scenario, horizon_h: float) -> tuple[BudgetPeriod, ...]:
    """The scenario's budget per period over the model's horizon, in money units."""
    by_period = scenario.budget_by_period
    if by_period is None or scenario.start is None:
        return ()
    return tuple(
        BudgetPeriod(period.label, SCALE.minutes(period.from_h),
                     SCALE.minutes(period.to_h), SCALE.money(amount))
        for period, amount in by_period.budgets(scenario.start, horizon_h,
                                                scenario.fiscal_year_start))
