"""Candidate generation: every way to run every job, estimated, costed and checked against the
rules.

For each job: every platform offer (GPU x billing mode), every owned pool and every purchase option,
at every sensible GPU count (options.py); the estimator picks the fastest fitting layout
(estimating.py); billing turns the duration into a cost or a share of a reservation (billing.py);
each rule family says which of its rules the option breaks, and options that fit in no layout, or
are dominated, are recorded with the reason (build.py). Problems built are kept for variants that
change no candidate (reuse.py; `_BUILT` is its cache itself).
"""

from plan.planner.candidates.build import CandidateBuilder, budget_group
from plan.planner.candidates.options import gpu_counts, job_counts, pinned_fields, pinned_text
from plan.planner.candidates.reuse import (
    _BUILT,
    FIELD_USE,
    build_problem,
    build_problem_and_builder,
    field_use,
    will_reuse,
)

__all__ = [
    "FIELD_USE",
    "_BUILT",
    "CandidateBuilder",
    "budget_group",
    "build_problem",
    "build_problem_and_builder",
    "field_use",
    "gpu_counts",
    "job_counts",
    "pinned_fields",
    "pinned_text",
    "will_reuse",
]
