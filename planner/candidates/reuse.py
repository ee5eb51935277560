"""Problems built in this process, kept for variants that change no candidate: a batch sweeping
the budget, a deadline within the same horizon, the objective or the solver's settings builds the
candidates once and reuses them (and the builder, whose estimates answer the explainers'
what-ifs).

Whether a variant may reuse a build is decided from what it changes, field by field
(`FIELD_USE`): a field the candidates do not read, or read only through a figure the reuse key
holds, reuses; any other field, and any field not listed, builds again. tests/planner/
test_problem_reuse.py changes each field and checks that a reused problem equals a fresh build and
that a field that changes candidates builds again.
"""

from __future__ import annotations

import dataclasses
from collections import OrderedDict
from collections.abc import Callable, Collection, Mapping, Sequence
from weakref import WeakKeyDictionary

from plan.models.loading import LoadedScenario
from plan.models.problem import SCALE, Candidate, Problem
from plan.models.scenario import Job, Scenario
from plan.planner.candidates.abiding_places import AbidingPlaces
from plan.planner.candidates.build import (
    CandidateBuilder,
    budget_group,
    deadline_group,
    horizons_h,
)
from plan.planner.candidates.job_builds import JobBuild
from plan.planner.candidates.ruled_out import RuledOut
from plan.planner.candidates.searches_ahead import searched_ahead
from plan.planner.candidates.shared_estimates import shared_estimates
from plan.planner.candidates.soonest_end import late_job, usable
from plan.planner.candidates.windows import instance_shape, series_heads
from plan.planner.collector import collector_paused
from plan.planner.estimate import store as estimate_store

SOLVE_ONLY = "solve only"
"""Read by the solve alone (the problem does not hold it): a change reuses the build as it is."""
PROBLEM_FIGURE = "problem figure"
"""A figure of the problem, not of any candidate (the budget, the objective, the value of time,
the name): a change reuses the candidates and sets the figure (`_with_figures`)."""
HORIZON = "horizon"
"""Deadlines: they reach the candidates only through the two horizons (`horizons_h`: no candidate
may end after 3x the latest deadline; purchases are amortized over the latest one), which the key
holds; the deadlines themselves are problem figures. A deadline that moves a horizon builds
again."""
CANDIDATES = "candidates"
"""Changes candidates (the jobs, the catalog, the estimator's inputs, the rules): builds again."""

FIELD_USE: dict[str, str] = {
    "name": PROBLEM_FIGURE,
    "description": SOLVE_ONLY,
    "currency": CANDIDATES,  # every price is converted into it
    "lang": SOLVE_ONLY,  # the language of the words shown (JSON never changes with it)
    "calibration": CANDIDATES,  # the estimator's measured speed
    "budget": PROBLEM_FIGURE,
    "budget_by_period": CANDIDATES,  # the problem's periods, counted over the horizon
    "start": CANDIDATES,  # dates written for releases and deadlines
    "fiscal_year_start": CANDIDATES,  # where budget periods begin
    "deadline_h": HORIZON,
    "objective": PROBLEM_FIGURE,
    "value_of_time_per_day": PROBLEM_FIGURE,
    "academic": CANDIDATES,  # academic prices
    "ops_skill": CANDIDATES,  # which stacks and offers a team can run
    "sites": CANDIDATES,  # data transfer, residency
    "renter_jurisdiction": CANDIDATES,  # which rentals a catalog renter rule flags
    "owned": CANDIDATES,
    "policy": CANDIDATES,  # rules each candidate breaks, headroom, spot, purchases
    "confidence": CANDIDATES,  # scheduled time of each candidate
    "budget_basis": CANDIDATES,  # what a purchase costs
    "purchase": CANDIDATES,
    "catalog": CANDIDATES,
    "stack_maturity": CANDIDATES,  # a pre-training job's whole-run hours
    "jobs": CANDIDATES,
    "solver": SOLVE_ONLY,
}
"""How each top-level scenario field reaches a problem. A field missing here builds again."""

# Few entries: a batch walks a file's variants in order. Builds of what-ifs (an explanation's
# relaxations: `what_if`) go first when there are too many, so that an infeasible variant's dozen
# relaxations do not push out the build the next variants reuse.
_BUILT: OrderedDict[tuple[object, ...], tuple[object, Problem, CandidateBuilder]] = OrderedDict()
_BUILT_KEPT = 8
_WHAT_IFS: set[tuple[object, ...]] = set()  # keys in _BUILT built for a what-if


def field_use(field: str) -> str:
    """How a change to the top-level scenario field `field` reaches a problem (CANDIDATES where
    unlisted)."""
    return FIELD_USE.get(field, CANDIDATES)


def reuse_key(loaded: LoadedScenario, defer: bool = False) -> tuple[object, ...]:
    """What a build depends on: every field that changes candidates, the two horizons, which
    figures are present (their rule groups are numbered in the order a build adds them), the
    catalog, the model cards, the calibration file's folder, and whether it deferred its
    rule-breaking options (ruled_out.py)."""
    s = loaded.scenario
    free = {name for name in type(s).model_fields if field_use(name) != CANDIDATES}
    return (s.model_dump_json(exclude=free), horizons_h(s), s.budget is None,
            s.deadline_h is None, id(loaded.catalog),
            tuple((job, card.model_dump_json()) for job, card in sorted(loaded.models.items())),
            str(loaded.path.parent) if s.calibration else "", defer)


def will_reuse(loaded: LoadedScenario, defer: bool = True) -> bool:
    """Whether `build_problem_and_builder(loaded, defer=defer)` would reuse a build of this
    process (a plain solve's defers: `solve.solve`)."""
    return reuse_key(loaded, defer) in _BUILT


def _with_figures(problem: Problem, scenario: Scenario) -> Problem:
    """A copy (its own containers) carrying this scenario's problem figures: budget, deadlines,
    objective, value of time and name, as a build of it would set them."""
    groups = dict(problem.groups)
    if scenario.budget is not None:
        groups["budget"] = budget_group(scenario)
    deadline_min: dict[str, int | None] = {}
    for job in scenario.jobs:
        limit = scenario.effective_deadline_h(job)
        deadline_min[job.id] = SCALE.minutes(limit) if limit else None
        if limit is not None:
            groups[f"deadline/{job.id}"] = deadline_group(job.id, limit)
    return dataclasses.replace(
        problem, scenario_name=scenario.name, objective=scenario.objective,
        budget=SCALE.money(scenario.budget) if scenario.budget is not None else None,
        value_of_time_per_min=SCALE.money(scenario.value_of_time_per_day / (24 * 60)),
        groups=groups, candidates={job: list(cands) for job, cands in problem.candidates.items()},
        resources=dict(problem.resources), removed=list(problem.removed),
        deadline_min=deadline_min,
        after={job: list(before) for job, before in problem.after.items()})


def kept_jobs(parent: CandidateBuilder | None, loaded: LoadedScenario,
              defer: bool = False) -> dict[str, JobBuild]:
    """The jobs `parent` built that a build of `loaded` may take as they are (job_builds.py): none
    unless both read the same catalog, model cards and calibration folder, every field that reaches
    the candidates but `jobs` is the same (`FIELD_USE`) and so are the horizons; then each job
    whose every field is the same in both. Both must defer rule-breaking options, or neither."""
    if parent is None or parent.catalog is not loaded.catalog or (
            parent.loaded.models is not loaded.models) or parent.defer != defer:
        return {}
    a, b = parent.scenario, loaded.scenario
    free = {name for name in type(b).model_fields if field_use(name) != CANDIDATES} | {"jobs"}
    if (
        a.model_dump_json(exclude=free) != b.model_dump_json(exclude=free)
        or horizons_h(a) != horizons_h(b)
        # (a horizon's removal says whether any job has a release)
        or any(j.release_h for j in a.jobs) != any(j.release_h for j in b.jobs)
        or parent.loaded.path != loaded.path
    ):
        return {}
    return {job.id: kept for job in b.jobs
            if (kept := parent.job_builds.get(job.id)) is not None and kept.job == job}


def jobs_first(loaded: LoadedScenario, parent: CandidateBuilder | None,
               first: Sequence[str], limits: Mapping[str, int] | None = None,
               lifted: Collection[str] = frozenset(), defer: bool = False,
               ) -> dict[str, JobBuild] | None:
    """The job builds a build of `loaded` may take (`kept`): those of `parent` it may keep
    (`kept_jobs`), and the jobs of `first` built one at a time, those it keeps first (no build),
    then in order; None as soon as the jobs known so far leave the copy's solve (its `lifted`
    groups, the rest held) no plan: a job with no candidate, or none the held rules allow, or one
    that cannot end within the minutes `limits` gives it (the deadline the copy's solve holds it
    to) after the jobs it follows (`soonest_end.late_job`). A build of `loaded` would leave those
    jobs the same (a job's candidates are its own: job_builds.py), so the rest need not be built.
    An instance of a series that a build copies from the series' first (`series_heads`: its
    candidates are the first's, cut to its calendar) stands for that first one, which is built in
    its place and alone counts. `defer`: the copy's build defers rule-breaking options (none may be
    lifted then)."""
    assert not (defer and lifted)  # (a deferring build holds no option a lifted rule allows)
    kept = kept_jobs(parent, loaded, defer)
    if reuse_key(loaded, defer) in _BUILT:
        return kept  # built already: nothing to build first
    scenario = loaded.scenario
    jobs = {job.id: job for job in scenario.jobs}
    heads = series_heads(scenario)
    known = {job: list(build.candidates) for job, build in kept.items() if job not in heads}
    # jobs not built yet, each by its candidates on the places its held rules leave it: a bound
    bounds: dict[str, list[Candidate]] = {}

    def no_plan() -> bool:
        return late_job({**bounds, **known}, limits or {}, {j.id: j.after for j in scenario.jobs},
                        {j.id: SCALE.minutes(j.release_h) for j in scenario.jobs if j.release_h},
                        lifted) is not None

    if no_plan():
        return None
    todo = [jobs[job_id] for job_id in dict.fromkeys(heads.get(j, j) for j in first)
            if job_id in jobs and job_id not in known]
    builder = CandidateBuilder(loaded, shared_estimates(loaded), kept, defer)
    with collector_paused():
        try:
            tried = _NOT_FEW.setdefault(parent, set()) if parent is not None else set()
            few = [job for job in _likely_few(todo, parent, lifted)
                   if _places_key(loaded, job, lifted) not in tried]
            if few and _bounded_late(AbidingPlaces(loaded, shared_estimates(loaded), lifted), few,
                                     bounds, no_plan, tried):
                return None
            for job in todo:
                known[job.id], _ = builder.job_build(job, 0, instance_shape(job))
                if no_plan():
                    return None
        finally:
            estimate_store.flush()
    return {**kept, **builder.job_builds}


# Per build, the jobs its copies found with many options on their abiding places (`_places_key`):
# its other copies (most change a setting or two of a few jobs) do not list them again, a guess
# that costs at most a bound not tried (student_no_ops' six copies listed its run's options each)
_NOT_FEW: WeakKeyDictionary[CandidateBuilder, set[tuple[str, ...]]] = WeakKeyDictionary()


def _places_key(loaded: LoadedScenario, job: Job, lifted: Collection[str]) -> tuple[str, ...]:
    """What mostly decides where a job may run (its data's handling, the team's ops skill, the
    lifted groups): a key for the guess of `_NOT_FEW`, which a copy that changes them asks again."""
    return (job.id, job.data.model_dump_json(), loaded.scenario.ops_skill, *sorted(lifted))


PROOF_SHARE = 4
"""A job is bounded on its abiding places (`abiding_places.py`) before any job is built where
those places hold at most a quarter of its options: a bound that proves nothing costs that much
again of the job's build (its estimates are shared), a proof saves the rest of it."""


def _likely_few(jobs: Sequence[Job], parent: CandidateBuilder | None,
                lifted: Collection[str]) -> list[Job]:
    """Those of `jobs` whose candidates in `parent`'s build (of the scenario this one changes) the
    held rules mostly rule out (at most one in PROOF_SHARE usable), fewest usable first: the jobs
    whose options are worth listing to bound them (`AbidingPlaces.share`). A job that build left
    no candidate, or that it did not build, is not listed: nothing says its places are few, and
    listing the options of a job whose places are not few cost paper_reproducibility's copies
    0.6 s. Only a choice of what to try: a job not listed is built whole, as before."""
    def share(job: Job) -> float:
        built = parent.job_builds.get(job.id) if parent is not None else None
        if built is None or not built.candidates:
            return 1.0
        return len(usable(built.candidates, lifted)) / len(built.candidates)

    shares = {job.id: share(job) for job in jobs}
    return sorted((job for job in jobs if shares[job.id] * PROOF_SHARE <= 1),
                  key=lambda job: shares[job.id])


def _bounded_late(places: AbidingPlaces, jobs: Sequence[Job], bounds: dict[str, list[Candidate]],
                  no_plan: Callable[[], bool], not_few: set[tuple[str, ...]]) -> bool:
    """Whether `jobs`, those with few options on their abiding places each built there alone (in
    order, into `bounds`), leave no plan (`no_plan`). (Listing a job's options to count them is a
    tenth of its build: each is counted only until one proves it; one whose places were not few
    goes into `not_few`.)"""
    for job in jobs:
        abiding, every = places.share(job)
        if abiding * PROOF_SHARE > every:
            not_few.add(_places_key(places.loaded, job, places.lifted))
            continue
        bounds[job.id] = places.candidates(job)
        if no_plan():
            return True
    return False


def ruled_out_of(loaded: LoadedScenario, problem: Problem) -> RuledOut:
    """The rule-breaking options a deferring build of `loaded` left unsized in `problem`, sized
    as answers ask by a whole build's builder sharing its estimates."""
    capped = loaded.scenario.policy.max_expected_interruptions is not None
    return RuledOut(problem, CandidateBuilder(loaded, shared_estimates(loaded)), capped)


def build_problem(loaded: LoadedScenario) -> Problem:
    return build_problem_and_builder(loaded)[0]


def build_problem_and_builder(loaded: LoadedScenario, what_if: bool = False,
                              kept: dict[str, JobBuild] | None = None, defer: bool = False,
                              stop_at_empty: bool = False) -> tuple[Problem, CandidateBuilder]:
    """The scenario's problem, and the builder that made it: its estimates (and the calibration it
    read) answer the explainers' what-ifs without building anything again. `what_if`: a changed
    copy of a scenario being solved (kept for reuse, and dropped first); `kept`: jobs another build
    made that this one may take as they are (`jobs_first`); `defer`: options that break a rule are
    left unsized (ruled_out.py); `stop_at_empty`: NoOptionLeft at the first job left no option
    (build.py; such a build is not kept)."""
    key = reuse_key(loaded, defer)
    if key in _BUILT:
        _BUILT.move_to_end(key)
        if not what_if:
            _WHAT_IFS.discard(key)
        _, problem, builder = _BUILT[key]
        return _with_figures(problem, loaded.scenario), builder
    # a variant of the same loaded scenario asks again only the searches its change touches
    estimates = shared_estimates(loaded)
    builder = CandidateBuilder(loaded, estimates, kept, defer, stop_at_empty)
    with collector_paused():  # hundreds of thousands of objects that live on (planner/collector.py)
        try:
            # (a cold build's searches first, across processes where that pays)
            with searched_ahead(loaded, estimates, kept or {}, defer):
                problem = builder.build()
        finally:
            estimate_store.flush()  # share this build's new estimates with later runs and workers
    # the catalog is kept so that its id is not reused
    _BUILT[key] = (loaded.catalog, problem, builder)
    if what_if:
        _WHAT_IFS.add(key)
    while len(_BUILT) > _BUILT_KEPT:
        oldest = next((k for k in _BUILT if k in _WHAT_IFS), next(iter(_BUILT)))
        del _BUILT[oldest]
        _WHAT_IFS.discard(oldest)
    return _with_figures(problem, loaded.scenario), builder
