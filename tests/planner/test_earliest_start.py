"""Among plans of the same cost and makespan the planner returns the one whose jobs end earliest: a
job that does not set the makespan does not wait for no reason."""

from __future__ import annotations

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
