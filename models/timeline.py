"""A scenario's work over months and years: dates written by the user turned into hours from the
plan's start, budgets per period, and recurring jobs expanded into their instances.

Two steps around the scenario's validation (models/scenario.py): `written_dates_to_hours` reads the
raw mapping (a date becomes the offset the fields already accept), and `expand_repeats` turns each
`repeat:` job into instances once the jobs are valid.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field

from plan.models.base import Strict
from plan.models.calendar import HOURS_PER_DAY, Period, as_date, hours_from, period_kind, periods
from plan.models.fields import PositiveMoney
from plan.models.limits import MAX_DURATION_H
from plan.models.said import say_as

if TYPE_CHECKING:
    from plan.models.job import Job

PeriodKind = Literal["month", "quarter", "year"]


class PeriodAmount(Strict):
    """Money for one named period: `2027` (a fiscal year), `2027-Q1` or `2027-03`."""

    period: str = Field(min_length=4, max_length=7)
    amount: PositiveMoney


class BudgetByPeriod(Strict):
    """`budget: {per: month, amount: 25万}` (the same amount every period), or a list of
    `{period, amount}` (`periods`); a period the list does not name has no money."""

    per: PeriodKind | None = None
    amount: PositiveMoney | None = None
    periods: list[PeriodAmount] = Field(default_factory=list, max_length=1000)

    def kind(self) -> PeriodKind:
        if self.per is not None:
            return self.per
        kinds = {period_kind(p.period) for p in self.periods}
        return kinds.pop()  # type: ignore[return-value]  # one kind: checked by `problems`

    def problems(self) -> list[str]:
        if self.per is not None:
            if self.amount is None or self.periods:
                return [say_as("rule.budget_per_form", "budget: {form} takes an amount and no "
                               "list of periods", form="{per: ..., amount: ...}")]
            return []
        if not self.periods:
            return [say_as("rule.budget_no_period", "budget: a list of {form} needs at least one "
                           "period", form="{period, amount}")]
        found: list[str] = []
        kinds: set[str] = set()
        for i, item in enumerate(self.periods):
            try:
                kinds.add(period_kind(item.period))
            except ValueError as err:
                found.append(say_as("rule.at_field", "{field}: {problem}",
                                    field=f"budget[{i}].period", problem=reason_of(err)))
        labels = [p.period for p in self.periods]
        found += [say_as("rule.budget_twice", "budget: period {label} is listed twice",
                         label=label) for label in sorted(set(labels)) if labels.count(label) > 1]
        if len(kinds) > 1:
            found.append(say_as("rule.budget_one_kind", "budget: list periods of one kind (all "
                                "years, all quarters or all months)"))
        return found

    def budgets(self, start: dt.date, until_h: float,
                fiscal: tuple[int, int]) -> list[tuple[Period, float]]:
        """Each period from the plan's start to `until_h` with the money it may spend."""
        written = {p.period: p.amount for p in self.periods}
        every = self.amount if self.per is not None else None
        return [(period, every if every is not None else written.get(period.label, 0.0))
                for period in periods(start, until_h, self.kind(), fiscal)]


def move_budget_forms(data: dict[str, Any]) -> None:
    """`budget:` written as a mapping or a list goes to `budget_by_period` (the total stays a
    number in `budget`)."""
    budget = data.get("budget")
    if isinstance(budget, Mapping):
        data["budget_by_period"] = dict(budget)
        del data["budget"]
    elif isinstance(budget, list):
        data["budget_by_period"] = {"periods": budget}
        del data["budget"]


def written_dates_to_hours(data: dict[str, Any]) -> list[str]:
    """Dates in `deadline` and jobs' `release`/`deadline` become hours from `start` (a release at
    the day's beginning, a deadline at its end); the problems, as 'field.path: message'."""
    problems: list[str] = []
    try:
        start = as_date(data.get("start"))
    except ValueError as err:
        return [say_as("rule.at_field", "{field}: {problem}", field="start",
                       problem=reason_of(err))]

    def offset(where: str, value: Any, end_of_day: bool) -> Any:
        try:
            day = as_date(value)
        except ValueError as err:
            problems.append(say_as("rule.at_field", "{field}: {problem}", field=where,
                                   problem=reason_of(err)))
            return value
        if day is None:
            return value
        if start is None:
            problems.append(say_as("rule.date_needs_start", "{field}: a date needs the "
                                   "scenario's start date (start: {year}-01-01)", field=where,
                                   year=day.isoformat()[:4]))
            return value
        hours = hours_from(start, day) + (HOURS_PER_DAY if end_of_day else 0.0)
        if hours < 0 or (end_of_day and hours == 0):
            problems.append(say_as("rule.date_before_start", "{field}: {day} is before the "
                                   "plan's start ({start})", field=where, day=str(day),
                                   start=str(start)))
            return value
        return f"{hours:g}h"

    for key in ("deadline", "deadline_h"):
        if key in data:
            data[key] = offset(key, data[key], True)
    jobs = data.get("jobs")
    if isinstance(jobs, list):
        for i, job in enumerate(jobs):
            if not isinstance(job, dict):
                continue
            for key, end in (("release", False), ("release_h", False), ("deadline", True),
                             ("deadline_h", True)):
                if key not in job:
                    continue
                if end and job.get("repeat") is not None and as_date(job[key]) is not None:
                    problems.append(say_as("rule.repeat_deadline_date", "{field}: a recurring "
                                           "job's deadline is a duration after each release "
                                           "(e.g. 30d)", field=f"jobs[{i}].{key}"))
                    continue
                job[key] = offset(f"jobs[{i}].{key}", job[key], end)
    return problems


def instances_label(series: str, ids: list[str]) -> str:
    """Instances of the recurring job `series` named at once: 'sft-01..12' for a run of
    consecutive ones, 'sft-01/03/07' otherwise (ids as expand_repeats writes them)."""
    suffixes = [i.removeprefix(f"{series}-") for i in ids]
    if len(ids) == 1 or not all(s.isdigit() for s in suffixes):
        return ", ".join(ids)
    numbers = [int(s) for s in suffixes]
    if numbers == list(range(numbers[0], numbers[0] + len(numbers))):
        return f"{series}-{suffixes[0]}..{suffixes[-1]}"
    return f"{series}-" + "/".join(suffixes)


def expand_repeats(jobs: list[Job], start: dt.date | None) -> tuple[list[Job], list[str]]:
    """Each recurring job as its instances ID-01..ID-NN (instance k released k-1 steps after the
    job's release, due its deadline after that, or by the next release); `after` naming a
    recurring job means its matching instance (or, from a job that does not recur, all of them)."""
    series = {j.id: j.repeat.count for j in jobs if j.repeat is not None}
    if not series:
        return jobs, []
    width = max(2, len(str(max(series.values()))))

    def instance_id(job_id: str, k: int) -> str:
        return f"{job_id}-{k + 1:0{width}d}"

    expanded: list[Job] = []
    for job in jobs:
        if job.repeat is None:
            after = [a for dep in job.after for a in (
                [instance_id(dep, k) for k in range(series[dep])] if dep in series else [dep])]
            expanded.append(job.model_copy(update={"after": after}))
            continue
        step, count = job.repeat.every, job.repeat.count
        last = job.release_h + step.offset_h(count - 1, start)
        if last > MAX_DURATION_H:
            return jobs, [say_as("rule.repeat_beyond", "jobs: {job}'s last instance would be "
                                 "released at {last:,.0f} h, beyond the planner's limit of "
                                 "{most:g} h: fewer or closer repeats", job=job.id, last=last,
                                 most=MAX_DURATION_H)]
        for k in range(count):
            release = job.release_h + step.offset_h(k, start)
            due = (release + job.deadline_h if job.deadline_h is not None
                   else job.release_h + step.offset_h(k + 1, start))
            # (a series shorter than this one: its later instances wait for none of it)
            after = [instance_id(dep, k) if dep in series else dep for dep in job.after
                     if dep not in series or k < series[dep]]
            expanded.append(job.model_copy(update={
                "id": instance_id(job.id, k), "release_h": release, "deadline_h": due,
                "repeat": None, "series": job.id, "after": after}))
    ids = [j.id for j in expanded]
    problems: list[str] = [
        say_as("rule.repeat_id_clash", "jobs: instance id {id} of a recurring job is also another "
               "job's id", id=repr(i)) for i in sorted({i for i in ids if ids.count(i) > 1})]
    return expanded, problems


def reason_of(err: ValueError) -> str:
    """A calendar ValueError's reason, keyed where it was raised keyed (models/calendar.py)."""
    first = err.args[0] if len(err.args) == 1 else None
    return first if isinstance(first, str) else str(err)
