"""Months and years in a scenario: the start date, releases, recurring jobs, budgets per period,
and one clear line for each mistake."""

from __future__ import annotations

import pytest

from plan.models.calendar import add_months, parse_step, periods
from plan.models.errors import InputError
from plan.models.loading import load_scenario


def _load(base_scenario, write_scenario, **changes):
    data = base_scenario
    job_changes = changes.pop("job", {})
    data.update(changes)
    data.pop("deadline", None)
    data["jobs"][0].update(job_changes)
    return load_scenario(write_scenario(data)).scenario


def test_monthly_instances_follow_the_calendar(base_scenario, write_scenario):
    s = _load(base_scenario, write_scenario, start="2027-01-31",
              job={"repeat": {"every": "1 month", "count": 3}, "deadline": "20d"})
    instances = [j for j in s.jobs if j.series]
    assert [j.id for j in instances] == [f"{s.jobs[0].series}-0{k}" for k in (1, 2, 3)]
    # 31 Jan, 28 Feb (the month's last day), 31 Mar
    assert [j.release_h for j in instances] == [0.0, 28 * 24.0, (28 + 31) * 24.0]
    assert [j.deadline_h for j in instances] == [j.release_h + 20 * 24 for j in instances]


def test_without_a_deadline_an_instance_is_due_at_the_next_release(base_scenario, write_scenario):
    s = _load(base_scenario, write_scenario,
              job={"repeat": {"every": "30d", "count": 2}, "release": "5d"})
    assert [(j.release_h, j.deadline_h) for j in s.jobs if j.series] == [(120.0, 840.0),
                                                                         (840.0, 1560.0)]
    assert s.jobs[-1].after == ["a-01", "a-02"]  # b, after a: after every instance


def test_dates_become_hours_from_the_start(base_scenario, write_scenario):
    s = _load(base_scenario, write_scenario, start="2027-01-01",
              job={"release": "2027-02-01", "deadline": "2027-02-28"})
    assert s.jobs[0].release_h == 31 * 24
    assert s.jobs[0].deadline_h == (31 + 28) * 24  # the end of 28 February


def test_after_a_recurring_job_means_the_matching_instance(base_scenario, write_scenario):
    data = base_scenario
    data.pop("deadline", None)
    first = dict(data["jobs"][0], id="prep", repeat={"every": "7d", "count": 2})
    second = dict(data["jobs"][0], id="train", repeat={"every": "7d", "count": 2},
                  after=["prep"])
    last = dict(data["jobs"][0], id="report", after=["train"])
    data["jobs"] = [first, second, last]
    s = load_scenario(write_scenario(data)).scenario
    after = {j.id: j.after for j in s.jobs}
    assert after["train-01"] == ["prep-01"] and after["train-02"] == ["prep-02"]
    assert after["report"] == ["train-01", "train-02"]


@pytest.mark.parametrize(("changes", "expected"), [
    ({"job": {"release": "2027-02-01"}}, "jobs[0].release: a date needs the scenario's start"),
    ({"start": "2027-02-30"}, "start"),
    ({"start": "2027-01-01", "job": {"deadline": "2026-12-01"}}, "before the plan's start"),
    ({"job": {"repeat": {"every": "fortnight", "count": 2}}}, "calendar unit"),
    ({"job": {"repeat": {"every": "1 month", "count": 0}}}, "count"),
    ({"budget": {"per": "week", "amount": "10k"}}, "budget_by_period.per"),
    ({"budget": {"per": "month", "amount": "10k"}}, "needs the scenario's start date"),
    ({"start": "2027-01-01", "budget": [{"period": "2027-13", "amount": "1k"}]},
     "budget[0].period"),
    ({"start": "2027-01-01", "budget": [{"period": "2027", "amount": "1k"},
                                        {"period": "2027-Q1", "amount": "1k"}]}, "one kind"),
    ({"fiscal_year_start": "13-01"}, "fiscal_year_start"),
    ({"job": {"billing": ["hourly", "weekly"]}}, "billing"),
    ({"job": {"repeat": {"every": "1e300d", "count": 3}}}, "longer than the planner's limit"),
    ({"start": "2027-01-01", "job": {"repeat": {"every": "5 years", "count": 3}}},
     "beyond the planner's limit"),
])
def test_mistakes_get_one_clear_line(base_scenario, write_scenario, changes, expected):
    with pytest.raises(InputError) as err:
        _load(base_scenario, write_scenario, **changes)
    assert any(expected in line for line in err.value.problems), err.value.problems
    assert all("\n" not in line for line in err.value.problems)


def test_budget_periods_name_fiscal_years():
    import datetime as dt
    found = periods(dt.date(2027, 1, 1), 400 * 24, "year", (4, 1))
    assert [p.label for p in found] == ["2026/27", "2027/28"]
    assert found[0].from_h == 0 and found[0].to_h == (31 + 28 + 31) * 24
    assert add_months(dt.date(2027, 1, 31), 1) == dt.date(2027, 2, 28)
    assert parse_step("quarter").months == 3 and parse_step("2w").hours == 336


@pytest.mark.parametrize(("line", "expected"), [
    ("start: 2027-02-30", "start: '2027-02-30' is not a date of the calendar (day is out of range "
                          "for month)"),
    ("start: 2027-13-01", "start: '2027-13-01' is not a date of the calendar"),
])
def test_a_date_off_the_calendar_written_unquoted_is_refused_by_its_field(
        base_scenario, write_scenario, line, expected):
    """YAML reads an unquoted 2027-02-30 as a timestamp, and PyYAML's constructor then raises a
    bare ValueError (once an internal error, exit 70): the field refuses it as it does the quoted
    form."""
    path = write_scenario(base_scenario)
    path.write_text(f"{line}\n{path.read_text(encoding='utf-8')}", encoding="utf-8")
    with pytest.raises(InputError) as err:
        load_scenario(path)
    assert any(expected in problem for problem in err.value.problems), err.value.problems
