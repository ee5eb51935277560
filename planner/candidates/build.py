"""The `Problem` of a loaded scenario: every option of every job (options.py), estimated
(estimating.py), costed (billing.py) and checked against the rules; options that fit in no layout,
or are dominated, are recorded with the reason. Problems built in this process are kept
for variants that change no candidate (reuse.py).
"""

from __future__ import annotations

import dataclasses
from collections import defaultdict
from functools import lru_cache
from itertools import islice

from plan.constraints import (
    capacity,
    compatibility,
    ops_skill,
    policy,
    reproducibility,
    sensitivity,
)
from plan.models.figures import CandidateFigures, CandidateTime, EstimateFigures
from plan.models.gpu import GPU
from plan.models.loading import LoadedScenario
from plan.models.model_card import ModelCard
from plan.models.problem import SCALE, Candidate, Problem, Removed, Resource, resources_in_use
from plan.models.scenario import Job, Scenario
from plan.planner import build_deadline
from plan.planner.candidates.billing import Billing
from plan.planner.candidates.cost_floor import Place, cost_floor, options_by_place
from plan.planner.candidates.estimating import EstimateCache, Estimating
from plan.planner.candidates.job_builds import JobBuild, record, replay
from plan.planner.candidates.job_twins import (
    candidate_as,
    removed_as,
    renamed,
    same_build,
    twin_shape,
)
from plan.planner.candidates.options import _Option, _place_of, _said, pinned_text
from plan.planner.candidates.purchase import buy_options
from plan.planner.candidates.spot_risk import spot_risk
from plan.planner.candidates.transfer import JobTransfer, job_transfer
from plan.planner.candidates.windows import (
    budget_periods,
    held_alone_twins,
    instance_renamer,
    instance_shape,
    series_heads,
)
from plan.planner.estimate import Estimate
from plan.planner.estimate.band import (
    memory_factor,
    stack_maturity_note,
    uncalibrated_band_note,
)
from plan.planner.estimate.factors import efficiency_assumption
from plan.planner.estimate.reliability import hours_quantile
from plan.planner.i18n.said import money, phrase, say

NO_DEADLINE_HORIZON_H = 2 * 365 * 24.0
# Stop adding GPUs to an offer when two steps in a row gain less than 5% throughput, or when the
# job already takes under half an hour and the last step did not cut its GPU-hours (more GPUs make
# a short job no cheaper, only riskier, unless they scale it better than linearly: the memory they
# free lets a layout drop its recomputation, 1 H800 at 28 min recomputing, 2 at 12 min without).
STALL_GAIN = 1.05
MIN_USEFUL_HOURS = 0.5

MEMORY_NOTE_KEYS = ("memory.shortfall", "memory.offload", "memory.paged")
"""The host-memory notes a plan repeats from its estimate (which may come back from the store as
plain text): their templates, to say them again in the reader's language."""


def _span(hours: float) -> str:
    return f"{hours:,.1f} h" if hours < 48 else f"{hours / 24:,.1f} days"


# The two notes nearly every candidate of a place repeats, said once per process for each distinct
# input: `say` renders its English and remembers its key and fields, the same whichever candidate
# asks (a warm lab_six_jobs build said them 1,600 times).
@lru_cache(maxsize=1024)
def _efficiency_note(gpu_id: str, architecture: str) -> str | None:
    assumed = efficiency_assumption(architecture)
    return say("note.gpu", gpu=gpu_id, note=assumed) if assumed else None


@lru_cache(maxsize=1024)
def _band_note(job_id: str, uncalibrated: tuple[str, ...]) -> str:
    return say("note.of", who=job_id, note=uncalibrated_band_note(uncalibrated))


def budget_group(scenario: Scenario) -> str:
    """The budget rule as explanations name it (the scenario has a budget)."""
    return say("group.budget", budget=money(scenario.budget or 0.0, scenario.currency))


def deadline_group(job_id: str, limit_h: float) -> str:
    """A job's deadline rule as explanations name it."""
    if limit_h < 48:  # hours under 2 days
        return say("group.deadline_hours", job=job_id, hours=limit_h)
    return say("group.deadline_days", job=job_id, days=limit_h / 24)


def horizons_h(scenario: Scenario) -> tuple[float, float]:
    """The planning horizon (3x the latest deadline, or each job's window from its release: no
    candidate may end after it) and the one
    over which an amortized purchase loses value (the latest deadline); both the model's default
    where no deadline is stated. The only way deadlines reach the candidates."""
    stated = [scenario.deadline_h, *(j.deadline_h for j in scenario.jobs)]
    deadlines = [d for d in stated if d]
    latest_release = max(j.release_h for j in scenario.jobs)
    if not deadlines:
        return latest_release + NO_DEADLINE_HORIZON_H, NO_DEADLINE_HORIZON_H
    # With releases (work over months): room for a deadline's relaxation, three times each job's
    # window from its release.
    windows = [j.release_h + 3 * (d - j.release_h) for j in scenario.jobs
               if (d := scenario.effective_deadline_h(j)) and d > j.release_h]
    if latest_release and windows:
        return max(windows), max(deadlines)
    return 3 * max(deadlines), max(deadlines)


class NoOptionLeft(Exception):
    """A build that stops at the first job left no option (`stop_at_empty`): the scenario has no
    plan, and the rest of the build would change nothing of that."""


class CandidateBuilder(Estimating, Billing):
    """Builds the `Problem` for one loaded scenario. One instance per solve; estimates are
    cached."""

    def __init__(self, loaded: LoadedScenario, estimates: EstimateCache | None = None,
                 kept: dict[str, JobBuild] | None = None, defer: bool = False,
                 stop_at_empty: bool = False) -> None:
        """`estimates`: layout searches shared with other builds of `loaded`'s variants
        (shared_estimates.py); a cache of its own when None. `kept`: jobs another build made that
        this one may take as they are (job_builds.py; reuse.py's `jobs_first` says which).
        `defer`: options that break a rule are not sized, only recorded (ruled_out.py).
        `stop_at_empty`: raise NoOptionLeft at the first job left no option, instead of building
        the rest (a plain solve then explains from a whole build: solve.py)."""
        self.loaded = loaded
        self.defer = defer
        self.stop_at_empty = stop_at_empty
        self.scenario = loaded.scenario
        self.catalog = loaded.catalog
        self.graph = sensitivity.link_graph(self.scenario, list(self.catalog.platforms))
        pol = self.scenario.policy
        self.allowed_platforms = {self.catalog.platform(p).id for p in pol.allow_platforms}
        self.forbidden_platforms = {self.catalog.platform(p).id for p in pol.forbid_platforms}
        self.allowed_gpus = {self.catalog.gpu(g).id for g in pol.allow_gpus}
        self.forbidden_gpus = {self.catalog.gpu(g).id for g in pol.forbid_gpus}
        self._estimates = {} if estimates is None else estimates
        self.headroom = pol.memory_headroom
        self.confidence = self.scenario.confidence
        self._pytorch_stacks_only = ops_skill.pytorch_stacks_only(self.scenario)
        self.memory_band_factor = memory_factor(self.confidence)
        self.resources = {}
        self.removed = []
        self.clusters_of = {}
        self._clusters = {}
        self._allowances = {}
        self.asked, self.asked_abiding = {}, {}
        self._kept = kept or {}
        self.job_builds: dict[str, JobBuild] = {}  # what this build did per job, for its variants
        # `place_candidates`: each job's options by place, and each place's pruned candidates
        self._places_listed: dict[str, dict[Place, list[_Option]]] = {}
        self._places_sized: dict[tuple[str, Place], list[Candidate]] = {}
        # the job being built's data transfers by place (`_transfer`); id(platform) keeps the
        # platform alive in the job's options while the entry lives
        self._moves: dict[tuple[str, str | None, str, int], JobTransfer] = {}
        # twin shape -> (its first job's build, whether its copies are trusted: None until a second
        # job of the shape was built; job_twins.py)
        self._twins: dict[str, tuple[JobBuild, bool | None]] = {}
        self.groups: dict[str, str] = {}
        self.horizon_h, self.planning_horizon_h = horizons_h(self.scenario)
        self.buy = buy_options(self.scenario, self.catalog, self._money)
        # the user's measured speed, if the scenario names one
        from plan.planner.calibrate.use import load_for

        self.calibration = load_for(loaded)

    # --- rules ---------------------------------------------------------------------------------
    def violations(self, job: Job, option: _Option) -> dict[str, str]:
        place = option.place
        broken: dict[str, str] = {}
        allowed = self.allowed_platforms or None
        for found in (
            sensitivity.check(self.scenario, job, place, self.graph),
            reproducibility.check(self.scenario, job, place),
            ops_skill.check(self.scenario, job, place),
            compatibility.check(self.scenario, job, place),
            policy.check(self.scenario, job, place, allowed, self.forbidden_platforms,
                         self.allowed_gpus or None, self.forbidden_gpus),
            capacity.check(self.scenario, job, place, option.pool.count if option.pool else None),
        ):
            broken.update(found)
        return broken

    # --- assembly ------------------------------------------------------------------------------
    def build(self) -> Problem:
        scenario = self.scenario
        candidates: dict[str, list[Candidate]] = {}
        index = 0
        for pool in scenario.owned:
            until = pool.available_until_h
            self.resources[pool.id] = Resource(
                key=pool.id, kind="owned", platform=pool.id, gpu=self.catalog.gpu(pool.gpu).id,
                label=say("group.owned_pool", pool=pool.id, count=pool.count, gpu=pool.gpu),
                capacity=pool.count,
                available_from_min=SCALE.minutes(pool.available_from_h),
                available_until_min=SCALE.minutes(until) if until else None)
        heads = series_heads(scenario)  # a series' instance -> the first, whose build it copies
        for done, job in enumerate(scenario.jobs):
            build_deadline.progress(done, len(scenario.jobs))
            same = heads.get(job.id)
            if same is not None:
                candidates[job.id] = self._instance_copy(job, same, candidates[same])
            else:
                candidates[job.id], index = self.job_or_twin(job, index, instance_shape(job))
            if self.stop_at_empty and not candidates[job.id]:
                raise NoOptionLeft(job.id)
        candidates = held_alone_twins(candidates, self.resources)
        # Examples come first from options the scenario's own policy lists leave (a rule is not
        # described by a platform the user already excluded).
        for c in sorted((c for cands in candidates.values() for c in cands),
                        key=lambda c: any(g.startswith("policy.") for g in c.violations)):
            for group, reason in c.violations.items():
                if group not in self.groups:  # (the first example only: said once per group)
                    self.groups[group] = say("group.rule_example", group=group, reason=reason)
        # Renumber after pruning so variable indices are dense and stable.
        renumbered: dict[str, list[Candidate]] = {}
        index = 0
        for job_id, cands in candidates.items():
            renumbered[job_id] = []
            for c in cands:
                renumbered[job_id].append(c.but(index=index))
                index += 1
        resources = resources_in_use(renumbered, self.resources)
        self._describe_groups(resources)
        return Problem(
            scenario_name=scenario.name, currency=scenario.currency, objective=scenario.objective,
            budget=SCALE.money(scenario.budget) if scenario.budget is not None else None,
            deadline_min={j.id: (SCALE.minutes(d) if (d := scenario.effective_deadline_h(j))
                                 else None) for j in scenario.jobs},
            after={j.id: list(j.after) for j in scenario.jobs}, jobs=[j.id for j in scenario.jobs],
            candidates=renumbered, resources=resources, groups=dict(self.groups),
            removed=list(self.removed),
            value_of_time_per_min=SCALE.money(scenario.value_of_time_per_day / (24 * 60)),
            horizon_min=SCALE.minutes(self.horizon_h), memory_headroom=self.headroom,
            confidence=self.confidence, memory_band_factor=self.memory_band_factor,
            pinned={j.id: text for j in scenario.jobs if (text := pinned_text(j))},
            release_min={j.id: SCALE.minutes(j.release_h) for j in scenario.jobs if j.release_h},
            budget_periods=budget_periods(scenario, self.horizon_h), start_date=scenario.start,
            fiscal_year_start=scenario.fiscal_year_start,
            series={j.id: j.series for j in scenario.jobs if j.series is not None})

    def _instance_copy(self, job: Job, source: str, first: list[Candidate]) -> list[Candidate]:
        """Another instance of a recurring job: the first instance's (`source`) candidates (the
        same work on the same options; only its calendar differs) and the reasons options were
        dropped, each rule group and text naming this instance, not the first (a group is per job:
        relaxing one instance's rule must not switch the others')."""
        own = instance_renamer(source, job.id)
        # (the first instance's own, as its build recorded them)
        self.removed.extend(removed_as(r, job.id, own) for r in self.job_builds[source].removed)
        return self._instance_candidates(job, source, first)

    def _instance_candidates(self, job: Job, source: str,
                             first: list[Candidate]) -> list[Candidate]:
        """The first instance's candidates as `job`'s: those that still end within the horizon
        from its release."""
        own = instance_renamer(source, job.id)
        return [candidate_as(c, job.id, own) for c in first
                if job.release_h + c.startup_min / 60 + c.hours <= self.horizon_h]

    def job_or_twin(self, job: Job, index: int, shape: str) -> tuple[list[Candidate], int]:
        """`job_build`, or for a job that is a trusted twin of an earlier one (job_twins.py), that
        one's build renamed."""
        kept = self._kept.get(job.id)
        if job.series is not None or (kept is not None and kept.job == job):
            return self.job_build(job, index, shape)
        key = twin_shape(job)
        first, trusted = self._twins.get(key, (None, None))
        if first is not None and trusted:
            copy = self.job_builds[job.id] = renamed(first, job)
            return replay(copy, index, self.removed, self.resources, self.clusters_of)
        found, next_index = self.job_build(job, index, shape)
        if first is None:
            self._twins[key] = (self.job_builds[job.id], None)
        elif trusted is None:  # (the shape's second job: its copy must equal its build)
            self._twins[key] = (first, same_build(renamed(first, job), self.job_builds[job.id]))
        return found, next_index

    def job_build(self, job: Job, index: int, shape: str) -> tuple[list[Candidate], int]:
        """The job's pruned candidates, numbered from `index`, and the next index: taken from the
        build this one may reuse where it made the same job (`kept`), else built and recorded."""
        kept = self._kept.get(job.id)
        if kept is not None and kept.job == job:
            self.job_builds[job.id] = kept
            return replay(kept, index, self.removed, self.resources, self.clusters_of)
        first_removed, first_cluster = len(self.removed), len(self.clusters_of)
        self.asked, self.asked_abiding, self._moves = {}, {}, {}
        found, next_index = self._job_candidates(job, index, shape)
        pruned = self._prune(found)
        # (a dict keeps its order of insertion: the clusters this job added come last)
        self.job_builds[job.id] = record(
            job, pruned, index, next_index, self.removed[first_removed:], self.asked,
            self.resources, dict(islice(self.clusters_of.items(), first_cluster, None)),
            self.asked_abiding)
        return pruned, next_index

    def _job_candidates(self, job: Job, index: int, shape: str) -> tuple[list[Candidate], int]:
        """The job's candidates, numbered from `index`, and the next index: each (platform, GPU,
        billing) at growing GPU counts until more GPUs stop paying. The cluster of each place
        tried is kept for the explainers' what-ifs (`_cluster_of`, by the job's `shape`): listing
        a job's options again took 0.23 s a job (offload_lines, 64 generated jobs: 15 of 350 s)."""
        found: list[Candidate] = []
        for options in options_by_place(self._options(job)).values():
            index = self._walk_place(job, options, index, shape, found)
        return found, index

    def _walk_place(self, job: Job, options: list[_Option], index: int, shape: str,
                    found: list[Candidate]) -> int:
        """One place's options into `found`, at growing GPU counts until more GPUs stop paying;
        the next index."""
        card = self.loaded.models[job.id]
        best_rate, stalled, last_gpu_h = 0.0, 0, None
        for option in sorted(options, key=lambda o: o.place.gpus):
            build_deadline.check()  # the time limit covers building too
            candidate = self._candidate(index, job, card, option, shape)
            if candidate is None:
                continue
            found.append(candidate)
            index += 1
            # More GPUs stop paying once throughput stalls or the job is already short.
            stalled = stalled + 1 if candidate.tokens_per_s < best_rate * STALL_GAIN else 0
            best_rate = max(best_rate, candidate.tokens_per_s)
            gpu_h = candidate.gpu_hours
            # (unknown before a second count)
            scaled = last_gpu_h is None or gpu_h < last_gpu_h
            last_gpu_h = gpu_h
            if stalled >= 2 or (candidate.hours < MIN_USEFUL_HOURS and not scaled):
                break
        return index

    def place_candidates(self, job_id: str, place: Place) -> list[Candidate]:
        """The job's candidates on one place (platform, GPU, billing), as a whole build of this
        builder's scenario leaves them there (ruled_out.py: a place is walked and pruned on its
        own; a series' instance copies its first instance's)."""
        head = series_heads(self.scenario).get(job_id)
        job = self.scenario.job(head or job_id)
        key = (job.id, place)
        if key not in self._places_sized:
            if job.id not in self._places_listed:
                self._places_listed[job.id] = options_by_place(self._options(job))
            self.asked, self.asked_abiding, self._moves = {}, {}, {}
            found: list[Candidate] = []
            self._walk_place(job, self._places_listed[job.id].get(place, []), 0,
                             instance_shape(job), found)
            self._places_sized[key] = self._prune(found)
        pruned = self._places_sized[key]
        return pruned if head is None else self._instance_candidates(
            self.scenario.job(job_id), head, pruned)

    def _describe_groups(self, resources: dict[str, Resource]) -> None:
        s = self.scenario
        if s.budget is not None:
            self.groups["budget"] = budget_group(s)
        for job in s.jobs:
            limit = s.effective_deadline_h(job)
            if limit is not None:
                self.groups[f"deadline/{job.id}"] = deadline_group(job.id, limit)
        if any(j.after for j in s.jobs):
            self.groups["scheduling.after"] = say("group.after")
        if s.policy.reproducibility.fixed_gpu_type:
            self.groups[reproducibility.FIXED_GPU_TYPE] = say("group.fixed_gpu_type")
        for key, res in resources.items():
            if res.kind == "owned":
                self.groups[f"capacity/{key}"] = say("group.pool_window", label=res.label)
                self.groups[f"scheduling/{key}"] = say("group.pool_shared", label=res.label)
            else:  # English names the group by its id alone, as it always did
                self.groups[f"scheduling/{key}"] = say("group.scheduling", resource=key)
        for period in budget_periods(s, self.horizon_h):
            self.groups[f"budget/{period.label}"] = say("group.period_budget", label=period.label)

    def _fastest(self, job: Job, card: ModelCard, option: _Option, gpu: GPU,
                 shape: str) -> tuple[Estimate | None, str, str]:
        """The option's fastest layout: with CPU offload only as the job states it, or (unstated)
        where nothing fits without it and the place allows it (`_offload_allowed`)."""
        cluster = self._cluster(option, gpu)
        # (the first option of a place, as `_cluster_of` would find it: options are tried in
        # their order within each place's count)
        self.clusters_of.setdefault((shape, _place_of(option)), cluster)
        if job.cpu_offload is not None:
            return self._estimate(card, job, cluster, job.cpu_offload)
        # without it first: where nothing is offloaded, CPU offload is never searched (nor asked
        # about)
        estimate, rule, reason = self._estimate(card, job, cluster, False)
        # (activation offload: after it)
        offloaded = estimate is None or estimate.layout.host_activations
        if offloaded and self._offload_allowed(card, job, option, gpu):
            estimate, rule, reason = self._estimate(card, job, cluster, None)
        return estimate, rule, reason

    def _candidate(self, index: int, job: Job, card: ModelCard, option: _Option,
                   shape: str) -> Candidate | None:
        place = option.place
        gpu = self.catalog.gpus[place.gpu]
        broken = self.violations(job, option)
        if broken and self.defer:
            floor = cost_floor(job, card, option, gpu, self._money, self.scenario,
                               self.planning_horizon_h, self.calibration is not None)
            self.removed.extend(Removed(job.id, place.platform, place.gpu, place.gpus,
                                        place.billing, group, why, floor)
                                for group, why in broken.items())
            return None
        estimate, rule, reason = self._fastest(job, card, option, gpu, shape)
        if estimate is None:
            self.removed.append(Removed(job.id, place.platform, place.gpu, place.gpus,
                                        place.billing, rule, reason))
            return None
        run = estimate.run(job.tokens)
        move = self._transfer(job, card, option)
        transfer_h = move.hours  # data in and the result out (planner/candidates/transfer.py)
        # The schedule (deadlines, reservations) uses the time at the scenario's confidence; the
        # bill, the expected time.
        train_q_h = hours_quantile(run, self.confidence)
        hours = train_q_h + transfer_h
        # The data goes to the platform's storage before the GPUs are rented and the result leaves
        # from it after they are released: the schedule holds both, the GPU bill the training
        billed_h, spot, risk_note = run.hours, None, None
        if place.billing == "spot" and option.cluster_platform is not None:
            risk = spot_risk(option.cluster_platform, place.nodes,
                             estimate.cluster.spot_preemptions_per_day, run.hours)
            hours += risk.wait_h
            billed_h += risk.held_h
            spot, risk_note = risk.figures(), risk.assumption
        # no schedule can hold it (the model's end bound)
        if max(option.startup_h, job.release_h) + hours > self.horizon_h:
            why = ("" if self.horizon_h >= NO_DEADLINE_HORIZON_H
                   else " (3x each job's window from its release)"
                   if any(j.release_h for j in self.scenario.jobs)
                   else " (3x the latest deadline)")
            self.removed.append(Removed(
                job.id, place.platform, place.gpu, place.gpus, place.billing, "horizon",
                f"would end after {_span(max(option.startup_h, job.release_h) + hours)}, beyond "
                "the planning horizon "
                f"of {_span(self.horizon_h)}{why}"))
            return None
        cost, resource, billing = self._billing(job, option, billed_h, run, abiding=not broken)
        cost += SCALE.money(move.egress_cost)
        assumptions = self._assumptions(job, card, gpu, option, estimate, move, risk_note)
        layout = estimate.layout
        return Candidate(
            index=index, job=job.id, platform=place.platform, gpu=place.gpu, gpus=place.gpus,
            nodes=place.nodes, billing=place.billing, duration_min=max(1, SCALE.minutes(hours)),
            transfer_min=SCALE.minutes(transfer_h), cost=cost, resource=resource,
            layout=layout,
            memory_gib_per_gpu=estimate.memory.total_gib, gpu_memory_gib=estimate.gpu_memory_gib,
            tokens_per_s=estimate.tokens_per_s, mfu=estimate.mfu, hours=hours,
            gpu_hours=run.gpu_hours,
            violations={**broken,
                        **policy.check_interruptions(self.scenario, run.expected_interruptions)},
            assumptions=tuple(assumptions),
            expected_interruptions=run.expected_interruptions,
            startup_min=SCALE.minutes(option.startup_h),
            figures=CandidateFigures(
                framework=layout.framework,
                estimate=EstimateFigures(
                    memory_gib=estimate.memory.to_dict(), time_s=estimate.time.to_dict(),
                    step_time_s=estimate.step_time_s, memory_band_factor=self.memory_band_factor,
                    mfu_causal=estimate.mfu_causal),
                time=CandidateTime(
                    train_h=run.hours, train_p10_h=run.hours_range[0],
                    train_p90_h=run.hours_range[1], train_at_confidence_h=train_q_h,
                    confidence=self.confidence, failure_overhead=run.failure_overhead_fraction,
                    checkpoint_interval_h=run.checkpoint_interval_h,
                    startup_h=option.startup_h, transfer_in_h=move.in_h,
                    transfer_out_h=move.out_h, spot=spot),
                cost=dataclasses.replace(billing, result_gb=move.out_gb,
                                         egress_cost=move.egress_cost, result_home=move.home)),
        )

    def _transfer(self, job: Job, card: ModelCard, option: _Option) -> JobTransfer:
        """`job_transfer` of the job (the one being built) to the option's place: it reads the
        place's kind, site and platform alone, so the counts and billings of one place share it
        (a generated 64-job quarter asked it 27,000 times for about 200 places)."""
        place, platform = option.place, option.cluster_platform
        key = (place.kind, place.site, place.platform, id(platform))
        move = self._moves.get(key)
        if move is None:
            move = self._moves[key] = job_transfer(self.scenario, job, place, self.graph, card,
                                                   platform, self._money)
        return move

    def _assumptions(self, job: Job, card: ModelCard, gpu: GPU, option: _Option,
                     estimate: Estimate, move: JobTransfer, risk_note: str | None) -> list[str]:
        """What a candidate's figures assume: the option's, the data transfer's, the spot risk's,
        the model card's, the GPU's and the estimate's."""
        place = option.place
        assumptions = list(option.assumptions) + list(move.notes)
        if risk_note:
            assumptions.append(risk_note)
        if card.assumed:
            assumptions.append(say("note.model", model=card.id, note=card.assumption))
        # (the catalog's notes are plain text: `_said` makes each sentence once)
        if gpu.assumed or gpu.preliminary:
            assumptions.append(_said("note.gpu", ("gpu", gpu.id),
                                     ("note", gpu.assumption or say("note.preliminary"))))
        if gpu.gpus_per_node_assumption and place.node_size_from_gpu and place.gpus > 1:
            assumptions.append(_said("note.gpu", ("gpu", gpu.id),
                                     ("note", gpu.gpus_per_node_assumption)))
        assumed_efficiency = _efficiency_note(gpu.id, gpu.architecture)
        if assumed_efficiency:
            assumptions.append(assumed_efficiency)
        # the wider band can move its scheduled time (confidence) and so the plan
        if estimate.uncalibrated:
            assumptions.append(_band_note(job.id, estimate.uncalibrated))
        assumptions += [say("note.of", who=place.platform, note=note)
                        for note in getattr(estimate.cluster, "assumptions", ())]
        # a stated stack maturity times the whole run (`stack_maturity`: assumed, band.py)
        maturity = stack_maturity_note(job.method, estimate.cluster.stack_maturity)
        if maturity is not None:
            assumptions.append(say("note.of", who=job.id, note=maturity))
        # model states offloaded, or paged optimizer states, in host memory: the host memory they
        # take, the CPU step's assumed speed, their PCIe traffic each step
        assumptions += [say("note.of", who=job.id, note=phrase(note, *MEMORY_NOTE_KEYS))
                        for note in estimate.notes
                        if note.startswith(("CPU offload", "paged optimizer"))]
        return assumptions

    def _prune(self, candidates: list[Candidate]) -> list[Candidate]:
        """Drop candidates another one beats on every count that matters, keeping the reason.

        Within one (platform, GPU, billing, broken rules): a candidate is dominated if another is
        no dearer, starts no later (its queue or provisioning delay: larger counts of some offers
        wait days), runs no longer and (on shared capacity) uses no more GPUs, and is better in one
        of them.
        """
        buckets: dict[tuple[object, ...], list[Candidate]] = defaultdict(list)
        for c in candidates:
            buckets[(c.platform, c.gpu, c.billing, tuple(sorted(c.violations)))].append(c)
        kept: list[Candidate] = []
        for bucket in buckets.values():
            for c in bucket:
                shared = c.resource is not None
                better = next((o for o in bucket if o is not c and o.cost <= c.cost
                               and o.startup_min <= c.startup_min
                               and o.duration_min <= c.duration_min
                               and (not shared or o.gpus <= c.gpus)
                               and (o.cost, o.startup_min, o.duration_min, o.gpus)
                               != (c.cost, c.startup_min, c.duration_min, c.gpus)), None)
                if better is None:
                    kept.append(c)
                else:
                    self.removed.append(Removed(
                        c.job, c.platform, c.gpu, c.gpus, c.billing, "dominated",
                        f"{better.gpus}x {better.gpu} on the same offer is as cheap or cheaper "
                        f"({SCALE.to_money(better.cost):,.0f} vs {SCALE.to_money(c.cost):,.0f}), "
                        f"starts as soon and runs as fast or faster ({better.hours:,.1f} h vs "
                        f"{c.hours:,.1f} h)"))
        return kept

