"""Whether a row read back from a results file is one that `plan batch` could have written.

A stored row is re-used instead of solving its variant again, so it is checked first: numbers finite
and not negative, a gap between 0 and 1 (0 when optimal), the cells each status fills filled and the
others empty, a content hash of the form tasks.content_hash gives. A row that fails is solved again
(and the run says so): a file edited by hand, torn by a crash or written by something else can cost
time, never give a wrong row.
"""

from __future__ import annotations

import math
import re

from plan.models.said import say_as
from plan.planner.batch.rows import CANDIDATES, SOLVED, Row

_HASH = re.compile(r"[0-9a-f]{16}")
_NUMBERS = ("total_cost", "makespan_h", "solve_time_s", "gap", "bound")


def row_problem(row: Row) -> str | None:
    """What is wrong with a stored row, in a few words, or None when it could be re-used."""
    for name in _NUMBERS:
        value = getattr(row, name)
        if value is not None and not (math.isfinite(value) and value >= 0):
            return say_as("batch.row_number", "{name} is {value}", name=name, value=value)
    if row.gap is not None and (row.gap > 1 or (row.status == "optimal" and row.gap != 0)):
        return say_as("batch.row_gap", "gap {gap} with status {status}", gap=row.gap,
                      status=row.status)
    if not row.file:
        return say_as("batch.row_no_file", "no file")
    if row.candidates and row.candidates not in CANDIDATES:
        return say_as("batch.row_candidates", "candidates {value} is not one of {allowed}",
                      value=repr(row.candidates[:40]), allowed=", ".join(CANDIDATES))
    if not (_HASH.fullmatch(row.hash) or (row.status == "error" and not row.hash)):
        return say_as("batch.row_hash", "hash {value} is not a content hash",
                      value=repr(row.hash[:40]))
    if row.status in SOLVED:
        if (
            row.total_cost is None
            or not row.makespan_h
            or not row.plan
            or not row.currency
            or row.error
        ):
            return say_as("batch.row_solved_empty",
                          "a {status} row without its cost, time, currency or plan",
                          status=row.status)
    elif row.status == "error":
        if not row.error or row.total_cost is not None or row.plan:
            return say_as("batch.row_error_row", "an error row without its error, or with a plan")
    elif row.status == "cut":  # the safety net cut it: with the plan found by then, or none
        if row.error or (row.plan and row.total_cost is None):
            return say_as("batch.row_cut_row",
                          "a cut row with an error, or a plan without its cost")
    elif row.total_cost is not None or row.makespan_h is not None or row.plan or row.error:
        return say_as("batch.row_unsolved", "an {status} row with a plan or an error",
                      status=row.status)
    return None
