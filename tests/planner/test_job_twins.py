"""Jobs equal but for their id and `after` take the first one's candidates renamed
(candidates/job_twins.py): the problem is the one every job built in full gives, field for field,
whether the ids are distinctive (copies trusted and used) or words that texts also hold (`a`)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

import plan.planner.candidates.build as build_module
from plan.models.loading import load_scenario
from plan.planner.candidates.build import CandidateBuilder
from plan.planner.candidates.job_twins import twin_shape


def _twins(base: dict[str, Any], ids: list[str]) -> dict[str, Any]:
    """The base scenario's first job under each of `ids`, each after the one before, then its
    second job (a shape of its own)."""
    first, other = base["jobs"]
    jobs = []
    for n, job_id in enumerate(ids):
        job = copy.deepcopy(first)
        job["id"] = job_id
        if n:
            job["after"] = [ids[n - 1]]
        jobs.append(job)
    base["jobs"] = [*jobs, {**other, "after": [ids[-1]]}]
    return base


@pytest.mark.parametrize("ids", [["sft-one", "sft-two", "sft-three", "sft-four"],
                                 ["a", "a2", "b2", "lab"]])
def test_twins_build_the_problem_a_full_build_gives(ids, base_scenario, write_scenario,
                                                    monkeypatch) -> None:
    loaded = load_scenario(write_scenario(_twins(base_scenario, ids)))
    estimates: dict[tuple[object, ...], Any] = {}
    twinned = CandidateBuilder(loaded, estimates)
    with_twins = twinned.build()
    # every job its own shape: each built in full
    monkeypatch.setattr(build_module, "twin_shape", lambda job: job.id)
    full = CandidateBuilder(loaded, estimates).build()
    assert with_twins == full
    assert all(with_twins.candidates[job_id] for job_id in ids)
    shape = twin_shape(loaded.scenario.jobs[0])
    if ids[0] == "sft-one":  # (no text holds these ids but where it names the job)
        assert twinned._twins[shape][1] is True
        assert twinned.job_builds["sft-four"].job.id == "sft-four"


def test_removed_as_is_replace_of_every_field() -> None:
    """`removed_as` builds the renamed entry field by field: it equals `dataclasses.replace` of the
    job, rule and reason, and Removed holds no field it does not copy."""
    import dataclasses

    from plan.models.problem import Removed
    from plan.planner.candidates.job_twins import removed_as
    from plan.planner.candidates.windows import instance_renamer

    assert [f.name for f in dataclasses.fields(Removed)] == [
        "job", "platform", "gpu", "gpus", "billing", "rule", "reason", "floor_cost"]
    own = instance_renamer("j1", "j2")
    for entry in (Removed("j1", "p", "h800", 8, "spot", "sensitivity/j1", "j1 keeps data", 42),
                  Removed("j1", "q", "a800", 4, "hourly", "memory", "fits no layout")):
        renamed = removed_as(entry, "j2", own)
        assert renamed == dataclasses.replace(entry, job="j2", rule=own(entry.rule),
                                              reason=own(entry.reason))
        assert renamed.rule != entry.rule or "j1" not in entry.rule
