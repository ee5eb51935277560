"""Among plans of the same cost and makespan the planner returns the one whose jobs end earliest: a
job that does not set the makespan does not wait for no reason."""

from __future__ import annotations

from plan.models.problem import SCALE
from plan.planner.solve import solve_session
from tests.conftest import REPO, generous_session


def test_a_job_off_the_critical_path_starts_when_its_gpus_are_ready():
    # The 405B continued pre-training rents a month of H800s; its successor waits for bought H200s
    # delivered around day 90, which sets the makespan whenever the 405B run happens. It once
    # started on day 60, for nothing; it must start when its reservation's lead time has passed.
    result = solve_session(generous_session(REPO / "scenarios" / "frontier_private_vs_hybrid.yaml"))
    assert result.status == "optimal"
    plan = result.plans[0]
    jobs = {j.job: j for j in plan.jobs}
    cpt, sft = jobs["cpt-405b"], jobs["sensitive-sft"]
    assert cpt.start_h == cpt.figures.time.startup_h > 0
    assert sft.start_h >= cpt.end_h  # the successor still follows it
    # the reservation is held from the job's start, not before it
    (month,) = [r for r in plan.reservations if r.key == cpt.reservation]
    assert (
        month.start_h <= cpt.start_h and cpt.end_h <= month.start_h + month.periods * month.period_h
    )


def test_the_same_money_ends_the_job_as_soon_as_any_option_would():
    # 384 H800s for one month cost what 128 for three months do, and the month cannot move the
    # makespan (the successor waits for bought H200s): the tie must still go to the month, which
    # the stage that ends every job earliest once skipped because each job already started as
    # soon as its own option allowed.
    session = generous_session(REPO / "scenarios" / "frontier_private_vs_hybrid.yaml")
    result = solve_session(session)
    problem = session.problem
    cpt = {j.job: j for j in result.plans[0].jobs}["cpt-405b"]
    # (an option on a shared reservation has a twin held alone: the same option, cost alone)
    money = min(problem.standalone_cost(c) for c in problem.candidates["cpt-405b"]
                if (c.platform, c.gpu, c.gpus, c.billing, c.layout) ==
                (cpt.platform, cpt.gpu, cpt.gpus, cpt.billing, cpt.layout))
    soonest_min = min(problem.earliest_start_min(c) + c.duration_min
                      for c in problem.candidates["cpt-405b"]
                      if not c.violations and problem.standalone_cost(c) <= money)
    assert cpt.end_h <= SCALE.to_hours(soonest_min) + 0.01
