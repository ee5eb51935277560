"""What a build did for each job, kept so that a changed copy of the scenario that leaves a job as
it was takes that job's candidates instead of building them again.

An infeasible answer builds changed copies of its scenario (its relaxations, `Session.variant`);
most change one job or a few (a leaner optimizer, a fused loss, a data level stepped down), and the
rest of the build was most of the answer's time (lab_six_jobs at a one-hour deadline: 5 of its
8 s). A job's candidates depend on its own fields and the scenario-wide ones (the horizons among
them: `build.horizons_h`), never on another job's (options, estimates, billing and rules read the
job and the scenario's other fields only). So a copy whose every field but `jobs` is the same, with
the same horizons, may take a job that is the same in both as the first build left it: its
candidates (pruned, before numbering), the options it dropped and why, the GPU counts its
candidates asked of each shared resource, and the places' clusters it kept for the what-ifs.
tests/planner/test_job_builds.py checks that such a copy's problem equals a fresh build's.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from plan.models.problem import Candidate, Removed, Resource
from plan.models.scenario import Job
from plan.planner.estimate import Cluster

ClusterKey = tuple[str, tuple[str, str, int, str]]


@dataclass(frozen=True)
class JobBuild:
    """One job's part of a build, as `CandidateBuilder.build` made it."""

    job: Job
    # pruned, with the indices the first build gave them: only their order counts, since every
    # build numbers its candidates again once it has them all
    candidates: tuple[Candidate, ...]
    removed: tuple[Removed, ...]  # in the order the build dropped them
    # per shared resource its candidates asked for (first asked first): the resource as the build
    # left it (its levels are set again) and the GPU counts this job asked of it
    asked: tuple[tuple[str, Resource, tuple[int, ...]], ...]
    clusters: tuple[tuple[ClusterKey, Cluster | None], ...]  # places' clusters it kept first
    span: int  # candidate indices it used, pruned ones included
    # per shared resource, the GPU counts this job's rule-abiding options asked of it
    asked_abiding: tuple[tuple[str, tuple[int, ...]], ...] = ()


def record(
    job: Job,
    kept: list[Candidate],
    first_index: int,
    next_index: int,
    removed: list[Removed],
    asked: dict[str, set[int]],
    resources: dict[str, Resource],
    clusters: dict[ClusterKey, Cluster | None],
    asked_abiding: dict[str, set[int]] | None = None,
) -> JobBuild:
    """The job's part of a build: `removed`, `asked` and `clusters` hold what its build added."""
    return JobBuild(
        job=job,
        candidates=tuple(kept),
        removed=tuple(removed),
        asked=tuple((key, resources[key], tuple(sorted(levels))) for key, levels in asked.items()),
        clusters=tuple(clusters.items()),
        span=next_index - first_index,
        asked_abiding=tuple((key, tuple(sorted(levels)))
                            for key, levels in (asked_abiding or {}).items()),
    )


def replay(
    kept: JobBuild,
    index: int,
    removed: list[Removed],
    resources: dict[str, Resource],
    clusters_of: dict[ClusterKey, Cluster | None],
) -> tuple[list[Candidate], int]:
    """Add a kept job's part to a build at candidate index `index`, as building the job there would:
    its candidates and the next index; its dropped options, its shared resources' counts and its
    clusters go into the build's own containers."""
    removed.extend(kept.removed)
    abiding = dict(kept.asked_abiding)
    for key, resource, levels in kept.asked:
        existing = resources.get(key)
        merged = tuple(sorted({*(existing.levels if existing else ()), *levels}))
        held = tuple(sorted({*(existing.abiding_levels or () if existing else ()),
                             *abiding.get(key, ())}))
        resources[key] = dataclasses.replace(existing or resource, levels=merged,
                                             abiding_levels=held)
    for place, cluster in kept.clusters:
        clusters_of.setdefault(place, cluster)
    return list(kept.candidates), index + kept.span
