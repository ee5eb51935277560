"""Why not X: a user's option (job, platform, GPU, count, billing) forced into the plan, and
what it costs or which rules it breaks."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, get_args

from plan.models.limits import MAX_GPUS
from plan.models.platform import BillingMode
from plan.models.problem import SCALE, Candidate, Problem
from plan.models.said import say_as
from plan.models.validation_words import listed
from plan.planner.cpsat.model import Bounds
from plan.planner.cpsat.run import Outcome, to_plan
from plan.planner.explain.conflicts import (
    conflict_groups,
    describe,
    duration_text,
)
from plan.planner.explain.narrate import explain_plan
from plan.planner.i18n.said import money, say, word
from plan.planner.plan import Conflict, Plan
from plan.planner.session import Session

# --- why not X?
# -------------------------------------------------------------------------------------

@dataclass
class WhyNot:
    status: str  # feasible | infeasible | unavailable
    delta_cost: float | None = None
    delta_makespan_h: float | None = None
    plan: Plan | None = None
    conflicts: list[Conflict] = field(default_factory=list)
    reasons: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "delta_cost": self.delta_cost,
            "delta_makespan_h": self.delta_makespan_h,
            "plan": self.plan.to_dict() if self.plan else None,
            "conflicts": [{"constraint": c.constraint, "detail": c.detail} for c in self.conflicts],
            "reasons": self.reasons,
        }


WHY_NOT_KEYS = ("job", "platform", "gpu", "gpus", "billing")


# Billing modes a candidate can have: the catalog's (plan.models.platform.BillingMode), owned and
# purchase.
WHY_NOT_BILLING = (*get_args(BillingMode), "owned", "purchase")


def parse_why_not(text: str) -> dict[str, str]:
    """'job=ID platform=P gpu=G gpus=N billing=B' (any subset). Raises ValueError naming what is
    allowed."""
    spec: dict[str, str] = {}
    for part in text.replace(",", " ").split():
        key, sep, value = part.partition("=")
        if not sep or key not in WHY_NOT_KEYS or not value:
            raise ValueError(say_as("cli.why_not_pairs",
                                    "expected key=value pairs with keys {keys}, got {part}",
                                    keys=listed(WHY_NOT_KEYS), part=repr(part)))
        spec[key] = value
    if not spec:
        raise ValueError(say_as("cli.why_not_empty", "give at least one of {keys}",
                                keys=listed(WHY_NOT_KEYS)))
    gpus = spec.get("gpus")
    # str.isdigit() accepts '²' and other digits int() refuses: only ASCII 0-9 here.
    if gpus is not None and not (gpus.isascii() and gpus.isdigit() and 0 < int(gpus) <= MAX_GPUS):
        raise ValueError(say_as("cli.why_not_gpus",
                                "gpus must be a whole number from 1 to {most:,}, got {value}",
                                most=MAX_GPUS, value=repr(gpus)))
    if "billing" in spec and spec["billing"] not in WHY_NOT_BILLING:
        raise ValueError(say_as("cli.why_not_billing",
                                "billing: {value} is not a billing mode; use one of {modes}",
                                value=repr(spec["billing"]), modes=listed(WHY_NOT_BILLING)))
    return spec


def _matches(
    spec: dict[str, str], job: str, platform: str, gpu: str, gpus: int, billing: str
) -> bool:
    return all([spec.get("job", job) == job, spec.get("platform", platform) == platform,
                spec.get("gpu", gpu) == gpu, int(spec.get("gpus", gpus)) == gpus,
                spec.get("billing", billing) == billing])


def why_not(session: Session, spec: dict[str, str], best: Outcome | None) -> WhyNot:
    """Force the option `spec` names. With a best plan (`best`), its extra cost and time, or the
    rules it breaks; on an infeasible scenario (`best` None), what the option itself breaks."""
    problem = session.problem
    jobs = [spec["job"]] if "job" in spec else problem.jobs
    forced = []
    answer = WhyNot(status="unavailable")
    for job in jobs:
        matching = tuple(c.index for c in problem.candidates[job]
                         if _matches(spec, job, c.platform, c.gpu, c.gpus, c.billing))
        if not matching:
            removed = [r for r in problem.removed
                       if _matches(spec, job, r.platform, r.gpu, r.gpus, r.billing)]
            if removed:
                answer.reasons += sorted({say("whynot.removed", job=job, rule=r.rule,
                                              reason=r.reason) for r in removed})[:5]
            else:
                answer.reasons.append(say("whynot.no_option", job=job))
                if job in problem.pinned:
                    answer.reasons.append(say("whynot.pinned", job=job,
                                              pinned=problem.pinned[job]))
            continue
        forced.append(matching)
    if len(forced) < len(jobs):
        if "job" not in spec and forced:
            answer.reasons.append(say("whynot.some_jobs"))
        else:
            return answer
    bounds = Bounds(forced=tuple(forced))
    outcome = session.best(bounds, hint=None) if best is not None else None
    if best is not None and outcome is not None and outcome.solved:
        answer.status = "feasible"
        answer.plan = to_plan(problem, outcome, 1)
        answer.delta_cost = SCALE.to_money(outcome.total_cost - best.total_cost)
        answer.delta_makespan_h = SCALE.to_hours(outcome.makespan_min - best.makespan_min)
        explain_plan(session, answer.plan, outcome, best)
        return answer
    answer.status = "infeasible"
    by_index = {c.index: c for c in problem.all_candidates()}
    # Each forced option at its most favourable: fewest broken rules, then cheapest.
    options = [
        min(
            (by_index[i] for i in indices),
            key=lambda c: (len(c.violations), problem.standalone_cost(c)),
        )
        for indices in forced
    ]
    for name in conflict_groups(session, bounds):
        answer.conflicts.append(Conflict(name, describe(problem, name, options)))
    for c in options:
        answer.reasons += [say("whynot.removed", job=c.job, rule=g, reason=r)
                           for g, r in sorted(c.violations.items())]
        answer.reasons += _limits_broken(problem, c)
    if best is None:
        answer.reasons.append(say("whynot.no_plan"))
    return answer


def _limits_broken(problem: Problem, c: Candidate) -> list[str]:
    """The budget and deadline a candidate breaks on its own."""
    found = []
    cost = problem.standalone_cost(c)
    if problem.budget is not None and cost > problem.budget:
        found.append(say("whynot.over_budget", job=c.job,
                         cost=money(SCALE.to_money(cost), problem.currency),
                         budget=money(SCALE.to_money(problem.budget), problem.currency)))
    limit = problem.deadline_min[c.job]
    if limit is not None and c.duration_min > limit:
        took, unit = duration_text(c.hours)
        allowed, allowed_unit = duration_text(SCALE.to_hours(limit))
        found.append(say("whynot.too_long", job=c.job, took=took, unit=word("dur", unit),
                         allowed=allowed, allowed_unit=word("dur", allowed_unit)))
    return found
