"""Jobs that differ only in their name and the jobs they wait for: their candidates are one build's,
renamed.

A platform team's quarter repeats its kinds of work (the same model, method, tokens and data rules
for several teams), and building a job's candidates was most of a warm solve of many jobs (64
generated jobs: about 0.25 s a job of per-candidate work after the layout searches, which are
shared already). A job's candidates depend on its own fields and the scenario's, never on another
job's (job_builds.py), and `after` only orders jobs in the model; so a job equal to an earlier one
in every other field has the earlier one's candidates, dropped options and clusters, with texts
naming the earlier job naming it instead (windows.instance_renamer, as a recurring job's instances
are copied).

Renaming rewrites the earlier job's id wherever it stands as a whole word, and an id might also be
a word of some text that does not name the job (a job called `lora`). So a shape is trusted only
once its second job, built in full, came out equal to the first one's copy renamed; later jobs of a
trusted shape are copies, and a shape whose second build differed is built in full every time.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from plan.models.problem import Candidate, Removed
from plan.models.scenario import Job
from plan.planner.candidates.job_builds import JobBuild
from plan.planner.candidates.windows import instance_renamer, instance_shape


def twin_shape(job: Job) -> str:
    """The job without its id and `after`: jobs of one twin shape have the same candidates."""
    return job.model_copy(update={"id": "", "after": []}).model_dump_json()


def candidate_as(candidate: Candidate, job_id: str, own: Callable[[str], str]) -> Candidate:
    """Another job's candidate as `job_id`'s: its rule groups and texts renamed by `own`
    (windows.instance_renamer); a twin's, or a recurring job's next instance's."""
    return candidate.but(
        job=job_id,
        violations={own(g): own(r) for g, r in candidate.violations.items()},
        assumptions=tuple(own(a) for a in candidate.assumptions))


def removed_as(removed: Removed, job_id: str, own: Callable[[str], str]) -> Removed:
    """Another job's dropped option as `job_id`'s, its rule and reason renamed by `own`. Made
    directly, field by field: `dataclasses.replace` was twice as slow, and a copied job repeats
    every option its first job dropped (a generated 128-job quarter: 72,000 of them;
    tests/planner/test_job_twins.py checks that no field is left behind)."""
    return Removed(job_id, removed.platform, removed.gpu, removed.gpus, removed.billing,
                   own(removed.rule), own(removed.reason), removed.floor_cost)


def renamed(first: JobBuild, job: Job) -> JobBuild:
    """`first`'s build as `job` (a twin of its job) would have made it."""
    own = instance_renamer(first.job.id, job.id)
    candidates = tuple(candidate_as(c, job.id, own) for c in first.candidates)
    removed = tuple(removed_as(r, job.id, own) for r in first.removed)
    shape = instance_shape(job)
    clusters = tuple(((shape, place), cluster) for (_, place), cluster in first.clusters)
    return dataclasses.replace(first, job=job, candidates=candidates, removed=removed,
                               clusters=clusters)


def asked_counts(build: JobBuild) -> list[tuple[str, tuple[int, ...]]]:
    """The GPU counts a job's candidates asked of each shared resource (not the resource as the
    build had it then: later jobs may have asked it other counts)."""
    return [(key, levels) for key, _, levels in build.asked]


def same_build(copied: JobBuild, built: JobBuild) -> bool:
    """Whether a renamed copy equals the job's own build: its candidates (numbered apart, as every
    build numbers them again), the options it dropped and why, the counts it asked of shared
    resources, its clusters and the indices it used."""
    def unnumbered(build: JobBuild) -> list[object]:
        return [c.but(index=0) for c in build.candidates]

    return (unnumbered(copied) == unnumbered(built) and copied.removed == built.removed
            and asked_counts(copied) == asked_counts(built) and copied.clusters == built.clusters
            and copied.asked_abiding == built.asked_abiding
            and copied.span == built.span)
