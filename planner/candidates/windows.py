"""Work spread over months: reservations held for one window or several, and the budget periods a
scenario counts cash in.

A monthly or yearly reservation is paid for the calendar window it holds, whoever uses it. Jobs
months apart can share one long window or each hold their own: every candidate on a reservation
that several jobs may use gets a twin on a reservation held for its job alone (priced
`Resource.held_alone`), so the model chooses, per job, the cheaper way.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable

from plan.models.job import Job
from plan.models.problem import SCALE, BudgetPeriod, Candidate, Resource
from plan.models.said import Said, keyed
from plan.models.scenario import Scenario
from plan.planner.i18n.said import say


def instance_shape(job: Job) -> str:
    """A recurring job's instance without its calendar (id, release, deadline, `after`): two
    instances of one shape have the same candidates."""
    return job.model_copy(update={"id": job.series or job.id, "release_h": 0.0,
                                  "deadline_h": None, "after": []}).model_dump_json()


def series_heads(scenario: Scenario) -> dict[str, str]:
    """Per job that a build copies from an earlier one (`CandidateBuilder.build`), that one: the
    first instance of a series with the same shape (`instance_shape`); a job built on its own is not
    listed."""
    first: dict[str, str] = {}
    heads: dict[str, str] = {}
    for job in scenario.jobs:
        shape = instance_shape(job)
        if shape in first:
            heads[job.id] = first[shape]
        elif job.series is not None:
            first[shape] = job.id
    return heads


def instance_renamer(first: str, instance: str) -> Callable[[str], str]:
    """Text about the series' first instance (a rule group such as `ops_skill/ID-01`, a reason, an
    assumption) rewritten to name `instance`: the id as a whole word only (`ID-01` in `ID-010`
    stays). A keyed sentence stays keyed (its fields renamed too), so it is still said in the
    reader's language."""
    whole_id = re.compile(rf"(?<![\w-]){re.escape(first)}(?![\w-])")
    # id -> (text, renamed): candidates share their texts; holding the text keeps its id its own
    done: dict[int, tuple[str, str]] = {}

    def own(text: str) -> str:
        if first not in text:  # (most reasons name no job: the same object serves every instance)
            return text
        if (seen := done.get(id(text))) is not None:
            return seen[1]
        renamed = whole_id.sub(lambda _: instance, text)
        if isinstance(text, Said):
            fields = {name: own(value) if isinstance(value, str) else value
                      for name, value in text.fields.items()}
            renamed = keyed(renamed, text.key, fields)
        done[id(text)] = (text, renamed)
        return renamed

    return own


def held_alone_twins(candidates: dict[str, list[Candidate]],
                     resources: dict[str, Resource]) -> dict[str, list[Candidate]]:
    """Each job's candidates, with a twin on its own window for every candidate on a reservation
    other jobs may share (the twin's resource is added to `resources`)."""
    users: dict[str, set[str]] = {}
    for job, cands in candidates.items():
        for c in cands:  # (shared by the plans that keep the rules: rule-breakers count for none)
            if (c.resource is not None and resources[c.resource].kind == "reservation"
                    and not c.violations):
                users.setdefault(c.resource, set()).add(job)
    shared = {key for key, jobs in users.items() if len(jobs) > 1}
    if not shared:
        return candidates
    twinned: dict[str, list[Candidate]] = {}
    for job, cands in candidates.items():
        # (cost alone, candidate) of the options billed on their own: a twin no cheaper, no
        # sooner, no shorter and breaking no fewer rules than one of them is never worth holding
        alone = [(c.cost, c) for c in cands if c.resource is None]
        twins = []
        # (rule-abiding ones only: a twin serves the plan the rules allow, not a what-if)
        for c in sorted((c for c in cands if c.resource in shared and not c.violations),
                        key=lambda c: resources[c.resource or ""].held_alone(
                            c.gpus, c.duration_min)[1]):
            res = resources[c.resource or ""]
            cost = res.held_alone(c.gpus, c.duration_min)[1]
            if any(_dominates(o, cost_o, c, cost) for cost_o, o in alone):
                continue
            key = f"{res.key}#{job}"
            mine = tuple(sorted({o.gpus for o in cands
                                 if o.resource == res.key and not o.violations}))
            resources[key] = dataclasses.replace(
                res, key=key, label=say("label.held_alone", label=res.label, job=job), levels=mine,
                abiding_levels=mine)
            twin = dataclasses.replace(c, resource=key)
            twins.append(twin)
            alone.append((cost, twin))
        twinned[job] = [*cands, *twins]
    return twinned


def _dominates(o: Candidate, cost_o: int, c: Candidate, cost_c: int) -> bool:
    return (cost_o <= cost_c and o.startup_min <= c.startup_min
            and o.duration_min <= c.duration_min
            and o.expected_interruptions <= c.expected_interruptions
            and set(o.violations) <= set(c.violations))


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
