"""The blocked cheaper options a plan's explanation names, listed once per problem
(planner/explain/cheaper_blocked.py), are those the definition picks for every chosen option: per
job, the cheapest option cheaper than the chosen one that a rule (not the user's policy) or the
job's deadline keeps out, and the cheapest one the band alone sets aside where that is another."""

from __future__ import annotations

from pathlib import Path

from plan.models.loading import load_scenario
from plan.models.problem import SCALE, Candidate, Problem
from plan.planner.cpsat.run import Outcome
from plan.planner.explain.cheaper_blocked import BAND, _job_blocked, by_policy, cheaper_blocked
from plan.planner.session import Session, SolveOptions

ROOT = Path(__file__).resolve().parents[2]


def _why(problem: Problem, c: Candidate, limit: int | None) -> str | None:
    """Why the option is blocked, by the definition; None when it is not (or policy keeps it
    out)."""
    if any(by_policy(g) for g in c.violations):
        return None
    if c.violations:
        return "rule"
    start = problem.earliest_start_min(c)
    if limit is None or start + c.duration_min <= limit:
        return None
    time = c.figures.time if c.figures else None
    expected_h = c.hours - time.train_at_confidence_h + time.train_h if time else c.hours
    return BAND if start + SCALE.minutes(expected_h) <= limit else "late"


def _by_definition(blocked: list[tuple[int, int, str]], mine: int) -> list[tuple[int, str]]:
    """(index, why) of the cheapest blocked option under `mine` and of the cheapest the band alone
    sets aside, where that is another. `blocked`: (standalone cost, index, why) of a job's
    blocked options."""
    cheaper = [b for b in blocked if b[0] < mine]
    cheapest = min(cheaper, default=None)
    by_band = min((b for b in cheaper if b[2] == BAND), default=None)
    return [(b[1], b[2]) for b in (cheapest, by_band if by_band != cheapest else None) if b]


def test_blocked_options_listed_once_match_the_definition_for_every_choice() -> None:
    # rubin_buy_or_rent: options a rule rules out, options too late for a deadline and options the
    # estimator's band alone sets aside
    session = Session.from_loaded(load_scenario(ROOT / "scenarios" / "rubin_buy_or_rent.yaml"),
                                  SolveOptions(time_limit_s=300))
    problem = session.problem
    others = {j: problem.candidates[j][0] for j in problem.jobs}
    named: set[str] = set()
    for job in problem.jobs:
        limit = problem.deadline_min[job]
        blocked = [(problem.standalone_cost(c), c.index, why) for c in problem.candidates[job]
                   if (why := _why(problem, c, limit)) is not None]
        for chosen in problem.candidates[job]:
            outcome = Outcome("optimal", chosen={**others, job: chosen})
            found = [(b.candidate.index, b.why)
                     for j, b in cheaper_blocked(session, outcome) if j == job]
            assert found == _by_definition(blocked, problem.standalone_cost(chosen)), chosen.name
            named |= {why for _, why in found}
    # every kind of block was compared (an option too late costs more than the cheapest ruled out)
    assert named == {"rule", BAND}
    assert any(b.why == "late" for j in problem.jobs for b in _job_blocked(problem, j))
