"""One result row per scenario variant, and the batch's tally, summary line and exit code."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, fields, replace
from typing import Any

from plan.models.said import say_as
from plan.planner.i18n import t

STATUSES = ("optimal", "feasible", "infeasible", "unknown", "cut", "error")
SOLVED = ("optimal", "feasible")
PROVEN = ("optimal", "infeasible")
# prefix of an error row's message when the fault is ours, not the input's
INTERNAL_ERROR = "internal error: "


@dataclass(frozen=True)
class Row:
    """What `plan batch` reports for one scenario variant. Money is in `currency`, times in
    hours/seconds.

    `hash` identifies the inputs that produced the row (see plan.planner.batch.tasks.content_hash);
    a re-run with the same output file re-uses rows whose hash still matches.
    """

    file: str
    variant: str
    status: str  # optimal | feasible | infeasible | unknown | cut (wall clock) | error
    total_cost: float | None
    currency: str
    makespan_h: float | None
    plan: str  # the rank-1 plan in one line
    solve_time_s: float
    error: str  # one line; empty unless status is error
    hash: str
    gap: float | None = None  # (objective - bound) / objective of the best plan; 0 when optimal
    bound: float | None = None  # no plan does better on the objective (currency, or hours for time)
    # reused: the candidates of an earlier variant in the same worker (only figures the candidates
    # do not depend on changed; planner/candidates/reuse.py); built: built for this row; plan
    # reused: an earlier variant's proven answer, which this one's budget cannot move
    # (planner/batch/plan_reuse.py); "" when none were (bad input) or in files written before rows
    # said so
    candidates: str = ""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Row:
        """A row read back from a results file (CSV gives strings). Raises ValueError if it is
        not one."""
        names = [f.name for f in fields(cls)]
        # (a JSON line that is a number or a list is no row either)
        if not isinstance(data, Mapping) or set(data) not in (
                set(names), set(BOUND_COLUMNS), set(LEGACY_COLUMNS)):
            raise ValueError(say_as("batch.row_columns", "expected columns {columns}",
                                    columns=", ".join(names)))

        def number(key: str) -> float | None:
            value = data[key]
            if value in ("", None):
                return None
            try:
                return float(value)
            except (ValueError, TypeError):  # Python's own words name neither cell nor column
                raise ValueError(say_as("batch.row_not_number", "{name} is not a number: {value}",
                                        name=key, value=repr(value)[:40])) from None

        status = str(data["status"])
        if status not in STATUSES:
            raise ValueError(say_as("batch.row_status", "unknown status {status}",
                                    status=repr(status)))
        return cls(
            file=str(data["file"]),
            variant=str(data["variant"] or ""),
            status=status,
            gap=number("gap") if "gap" in data else None,
            bound=number("bound") if "bound" in data else None,
            total_cost=number("total_cost"),
            currency=str(data["currency"] or ""),
            makespan_h=number("makespan_h"),
            plan=str(data["plan"] or ""),
            solve_time_s=number("solve_time_s") or 0.0,
            error=str(data["error"] or ""),
            hash=str(data["hash"]),
            candidates=str(data.get("candidates") or ""),
        )

    def without_time(self) -> Row:
        """The row with its solve time zeroed and without saying whether its candidates were
        reused (which depends on the worker that solved it): what must not depend on the backend or
        the job count, and what a fresh solve of the same variant must give."""
        return replace(self, solve_time_s=0.0, candidates="")

    @property
    def proven(self) -> bool:
        """Optimal, or proven infeasible: a re-run with more work cannot change it."""
        return self.status in PROVEN

    @property
    def bad_input(self) -> bool:
        return self.status == "error" and not self.error.startswith(INTERNAL_ERROR)


COLUMNS = tuple(f.name for f in fields(Row))
PLAN_REUSED = "plan reused"  # (planner/batch/plan_reuse.py)
CANDIDATES = ("reused", "built", PLAN_REUSED)  # what a row's `candidates` says
# Files written before rows said whether candidates were reused: still read (for resume).
BOUND_COLUMNS = tuple(c for c in COLUMNS if c != "candidates")
# Files written before rows carried gap and bound: still read (for resume), their rows count as
# unproven.
LEGACY_COLUMNS = tuple(c for c in BOUND_COLUMNS if c not in ("gap", "bound"))


@dataclass(frozen=True)
class Tally:
    solved: int = 0
    infeasible: int = 0
    unknown: int = 0
    bad_input: int = 0
    internal_error: int = 0

    @classmethod
    def of(cls, rows: Iterable[Row]) -> Tally:
        counts = dict.fromkeys(
            ("solved", "infeasible", "unknown", "bad_input", "internal_error"), 0
        )
        for row in rows:
            if row.status in SOLVED:
                counts["solved"] += 1
            elif row.status == "error":
                counts["bad_input" if row.bad_input else "internal_error"] += 1
            else:  # (a cut row counts with those not solved within the limits)
                counts["unknown" if row.status == "cut" else row.status] += 1
        return cls(**counts)

    @property
    def total(self) -> int:
        return self.solved + self.infeasible + self.unknown + self.bad_input + self.internal_error

    def line(self) -> str:
        """'12 solved, 2 infeasible, 1 bad input' (zero counts left out, except solved), in the
        reader's language."""
        parts = [t("batch.tally.solved", n=self.solved)]
        for count, what in ((self.infeasible, "infeasible"), (self.unknown, "unknown"),
                            (self.bad_input, "bad_input"), (self.internal_error, "internal_error")):
            if count:
                parts.append(t(f"batch.tally.{what}", n=count))
        return t("batch.tally_sep").join(parts)

    def exit_code(self) -> int:
        """0 all solved; 2 nothing could be read (every row is bad input); 1 otherwise."""
        if self.total and self.bad_input == self.total:
            return 2
        return 0 if self.solved == self.total else 1
