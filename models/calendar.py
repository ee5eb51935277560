"""The plan's calendar: a start date, offsets in hours from it, calendar steps (a month is not 730
hours when a start date is set) and the periods a budget is counted in (months, quarters, fiscal
years).

Time inside the planner stays hours (and the solver's minutes) from the plan's start; dates live
only at the edges: in the scenario a user writes, and beside hours in the answer.
"""

from __future__ import annotations

import calendar
import datetime as dt
import re
from dataclasses import dataclass

from plan.models.limits import MAX_DURATION_H
from plan.models.said import say_as
from plan.models.units import parse_duration_h

HOURS_PER_DAY = 24.0
# Without a start date a calendar unit is its average length (a 365-day year's twelfth).
AVERAGE_MONTH_H = 365 * 24 / 12
CALENDAR_UNITS_MONTHS = {"month": 1, "months": 1, "quarter": 3, "quarters": 3, "year": 12,
                         "years": 12}
_STEP = re.compile(r"^\s*(\d+)?\s*([a-z]+)\s*$")
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_FISCAL = re.compile(r"^(\d{2})-(\d{2})$")


def as_date(value: object) -> dt.date | None:
    """A date the user wrote (YAML's date, or ISO text `2027-01-01`), else None."""
    if isinstance(value, dt.datetime):
        return value.date()
    if isinstance(value, dt.date):
        return value
    if isinstance(value, str) and _DATE.match(value.strip()):
        try:
            return dt.date.fromisoformat(value.strip())
        except ValueError as err:
            raise ValueError(say_as("rule.not_a_date", "{value} is not a date of the calendar "
                                    "({reason})", value=repr(value),
                                    reason=date_reason(str(err)))) from None
    return None


def hours_from(start: dt.date, day: dt.date) -> float:
    return (day - start).days * HOURS_PER_DAY


def add_months(day: dt.date, months: int) -> dt.date:
    """`months` calendar months after `day` (the 31st becomes the month's last day)."""
    index = day.month - 1 + months
    year, month = day.year + index // 12, index % 12 + 1
    return dt.date(year, month, min(day.day, calendar.monthrange(year, month)[1]))


def date_at(start: dt.date, hours: float) -> dt.date:
    return start + dt.timedelta(hours=hours)


@dataclass(frozen=True)
class Step:
    """How far apart repeated work is: whole calendar months, or a fixed number of hours."""

    months: int = 0
    hours: float = 0.0

    def offset_h(self, k: int, start: dt.date | None) -> float:
        """Hours from the plan's start to the k-th step (k = 0 is the start)."""
        if not self.months:
            return k * self.hours
        if start is None:
            return k * self.months * AVERAGE_MONTH_H
        return hours_from(start, add_months(start, k * self.months))

    def describe(self) -> str:
        if self.months:
            return {1: "month", 3: "quarter", 12: "year"}.get(self.months, f"{self.months} months")
        return f"{self.hours:g} h"


def parse_step(value: object) -> Step:
    """`1 month`, `quarter`, `2 years` (calendar units), or a duration (`30d`, `2w`)."""
    if isinstance(value, str):
        found = _STEP.match(value.lower())
        if found and found.group(2) in CALENDAR_UNITS_MONTHS:
            count = int(found.group(1) or 1)
            if count <= 0:
                raise ValueError(_not_positive(value))
            months = count * CALENDAR_UNITS_MONTHS[found.group(2)]
            if months * AVERAGE_MONTH_H > MAX_DURATION_H:
                raise ValueError(say_as("rule.step_years", "{value} is longer than the "
                                        "planner's limit of {most:g} years", value=repr(value),
                                        most=MAX_DURATION_H / (365 * 24)))
            return Step(months=months)
    try:
        hours = parse_duration_h(value)
    except ValueError:
        raise ValueError(say_as("rule.step_form", "expected a calendar unit (1 month, quarter, "
                                "year) or a duration (30d, 2w), got {value}",
                                value=repr(value))) from None
    if hours <= 0:
        raise ValueError(_not_positive(value))
    if hours > MAX_DURATION_H:
        raise ValueError(say_as("rule.step_hours", "{value} is longer than the planner's limit of "
                                "{most:g} h", value=repr(value), most=MAX_DURATION_H))
    return Step(hours=hours)


def parse_fiscal_start(value: object) -> tuple[int, int]:
    """`04-01` -> (4, 1): the month and day a fiscal year begins."""
    text = value.isoformat()[5:] if isinstance(value, dt.date) else str(value).strip()
    found = _FISCAL.match(text)
    if found:
        month, day = int(found.group(1)), int(found.group(2))
        if 1 <= month <= 12 and 1 <= day <= calendar.monthrange(2001, month)[1]:
            return month, day
    raise ValueError(say_as("rule.fiscal_form", "expected MM-DD (e.g. 04-01 for a year from "
                            "April), got {value}", value=repr(value)))


def _not_positive(value: object) -> str:
    return say_as("rule.step_positive", "expected a positive step, got {value}", value=repr(value))


@dataclass(frozen=True)
class Period:
    """A budget period: [from_h, to_h) in hours from the plan's start, with the label users
    write (`2027-03`, `2027-Q1`, `2027` or `2027/28` for a fiscal year not starting in January)."""

    label: str
    from_h: float
    to_h: float

    def holds(self, hours: float) -> bool:
        return self.from_h <= hours < self.to_h


def periods(start: dt.date, until_h: float, per: str, fiscal: tuple[int, int]) -> list[Period]:
    """The periods of kind `per` (month, quarter, year) from the one holding the start to the one
    holding `until_h`; years are fiscal years beginning on `fiscal` (month, day)."""
    first = _period_start(start, per, fiscal)
    found: list[Period] = []
    while True:
        nxt = add_months(first, {"month": 1, "quarter": 3, "year": 12}[per])
        found.append(Period(_label(first, per, fiscal), max(0.0, hours_from(start, first)),
                            hours_from(start, nxt)))
        if hours_from(start, nxt) > until_h:
            return found
        first = nxt


def _period_start(day: dt.date, per: str, fiscal: tuple[int, int]) -> dt.date:
    if per == "month":
        return day.replace(day=1)
    if per == "quarter":
        return dt.date(day.year, (day.month - 1) // 3 * 3 + 1, 1)
    begins = dt.date(day.year, *fiscal)
    return begins if begins <= day else dt.date(day.year - 1, *fiscal)


def _label(first: dt.date, per: str, fiscal: tuple[int, int]) -> str:
    if per == "month":
        return f"{first.year}-{first.month:02d}"
    if per == "quarter":
        return f"{first.year}-Q{(first.month - 1) // 3 + 1}"
    return str(first.year) if fiscal == (1, 1) else f"{first.year}/{(first.year + 1) % 100:02d}"


def period_kind(label: str) -> str:
    """Which kind of period a label written in a budget list names."""
    if re.fullmatch(r"\d{4}-(0[1-9]|1[0-2])", label):
        return "month"
    if re.fullmatch(r"\d{4}-Q[1-4]", label):
        return "quarter"
    if re.fullmatch(r"\d{4}(/\d{2})?", label):
        return "year"
    raise ValueError(say_as("rule.period_form", "expected a period as 2027 (a fiscal year), "
                            "2027-Q1 or 2027-03, got {value}", value=repr(label)))


# what datetime.date says of a YYYY-MM-DD that is no day of the calendar
_YEAR_RANGE = re.compile(r"year (?P<year>-?\d+) is out of range")


def date_reason(text: str) -> str:
    """datetime's reason, keyed where its words are known; else as Python wrote it."""
    if text == "day is out of range for month":
        return say_as("rule.day_range", "day is out of range for month")
    if text == "month must be in 1..12":
        return say_as("rule.month_range", "month must be in 1..12")
    if match := _YEAR_RANGE.fullmatch(text):
        return say_as("rule.year_range", "year {year} is out of range", year=match["year"])
    return text
