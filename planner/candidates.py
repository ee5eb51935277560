"""Candidate generation: every way to run every job, estimated, costed and checked against the rules.

For each job: every platform offer (GPU x billing mode), every owned pool and every purchase option,
at every sensible GPU count; the estimator picks the fastest fitting layout; billing turns the
duration into a cost (or a share of a reservation); each rule family says which of its rules the
option breaks. Options that fit in no layout, or are dominated, are recorded with the reason.
"""

from __future__ import annotations

import dataclasses
import math
from collections import OrderedDict, defaultdict
from dataclasses import dataclass, field

from plan.constraints import (
    capacity,
    compatibility,
    ops_skill,
    policy,
    reproducibility,
    sensitivity,
)
from plan.constraints import memory as memory_rule
from plan.models.catalog import Catalog
from plan.models.features import owned_defaults
from plan.models.gpu import GPU
from plan.models.loading import LoadedScenario
from plan.models.model_card import ModelCard
from plan.models.platform import PERIOD_H, Features, Offer, Platform, billed_hours
from plan.models.problem import (
    SCALE,
    Candidate,
    Placement,
    Problem,
    PurchaseEconomics,
    Removed,
    Resource,
    resources_in_use,
)
from plan.models.scenario import FixedLayout, Job, OwnedPool, Scenario
from plan.planner import build_deadline
from plan.planner.capacity_limits import allowance
from plan.planner.collector import collector_paused
from plan.planner.estimate import Cluster, Estimate, LayoutSpec, default_global_batch, search_layout
from plan.planner.estimate import store as estimate_store
from plan.planner.estimate.advice import host_shortfall, on_roomy_card
from plan.planner.estimate.band import memory_factor, uncalibrated_band_note
from plan.planner.estimate.factors import efficiency_assumption
from plan.planner.estimate.flops import shape_of
from plan.planner.estimate.reliability import RunEstimate, hours_quantile
from plan.planner.estimate.types import OPTIMIZER_ALIASES
from plan.planner.purchase import BuyOption, buy_options
from plan.planner.spot_risk import spot_risk
from plan.planner.transfer import job_transfer

MAX_GPUS_PER_JOB = 4096
# Multi-node sizes tried, in nodes. Dense enough that the optimum is rarely between two of them.
NODE_STEPS = (2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512)
NO_DEADLINE_HORIZON_H = 2 * 365 * 24.0
# Stop adding GPUs to an offer when two steps in a row gain less than 5% throughput, or when the
# job already takes under half an hour and the last step did not cut its GPU-hours (more GPUs make a short
# job no cheaper, only riskier, unless they scale it better than linearly: the memory they free lets a
# layout drop its recomputation, 1 H800 at 28 min recomputing, 2 at 12 min without).
STALL_GAIN = 1.05
MIN_USEFUL_HOURS = 0.5


NOT_WEIGHED = "cannot be weighed against renting"
"""Why a purchase was dropped when no rental of its GPU exists to compare it with."""


def _span(hours: float) -> str:
    return f"{hours:,.1f} h" if hours < 48 else f"{hours / 24:,.1f} days"


def gpu_counts(gpus_per_node: int, limit: int) -> list[int]:
    """1, 2, 4, ... up to one node, then whole nodes, capped at `limit`."""
    counts = {n for n in (1, 2, 4, 8, 16, 32, 64) if n <= gpus_per_node} | {gpus_per_node}
    counts |= {gpus_per_node * k for k in NODE_STEPS}
    return sorted(n for n in counts if n <= limit)


def job_counts(job: Job, gpus_per_node: int, limit: int) -> list[int]:
    """The GPU counts tried for `job` on an offer of at most `limit`: its pinned count (`gpus`), or the
    usual steps from `min_gpus` up (min_gpus itself included), multiples of a fixed tp x pp only."""
    if job.gpus is not None:
        return [job.gpus] if job.gpus <= limit else []
    counts = set(gpu_counts(gpus_per_node, limit))
    if job.min_gpus is not None and job.min_gpus <= limit:
        counts.add(job.min_gpus)
    return sorted(n for n in counts if job.allows_count(n))


def _pinned(job: Job) -> dict[str, str]:
    """Each field of the job that fixes its count or layout, with what it fixes: gpus, min_gpus, layout (its
    stated fields, 'tp=2 zero=1'), hybrid_shard (when true)."""
    pinned = {name: f"{name}={value}" for name, value in (("gpus", job.gpus), ("min_gpus", job.min_gpus))
              if value is not None}
    if job.layout is not None:
        fixed = " ".join(f"{k}={v}" for k, v in job.layout.model_dump().items() if v is not None)
        if fixed:
            pinned["layout"] = fixed
    if job.hybrid_shard:
        pinned["hybrid_shard"] = "hybrid_shard=true"
    return pinned


def pinned_fields(job: Job) -> list[str]:
    """The job's fields that fix its count or layout (`_pinned`)."""
    return list(_pinned(job))


def pinned_text(job: Job) -> str:
    """What the job fixes of count and layout, e.g. 'gpus=8, tp=2 zero=1, hybrid_shard=true' ('' when nothing)."""
    return ", ".join(_pinned(job).values())


@dataclass
class _Option:
    """A placement plus what it costs and where it comes from, before estimation."""

    place: Placement
    cluster_platform: Platform | None
    offer: Offer | None = None
    pool: OwnedPool | None = None
    purchase: BuyOption | None = None
    assumptions: list[str] = field(default_factory=list)
    startup_h: float = 0.0  # queue/provisioning (or reservation lead time) before the job can start
    largest_gpus: int = 0  # the most GPUs of this GPU the place offers the job (0: unknown)


def budget_group(scenario: Scenario) -> str:
    """The budget rule as explanations name it (the scenario has a budget)."""
    return f"total cost within the budget of {scenario.budget:,.0f} {scenario.currency}"


def _features(features: Features) -> frozenset[str]:
    return frozenset(name for name, value in features.model_dump().items() if value is True)


BILLING_QUANTILES = tuple((i + 0.5) / 20 for i in range(20))
"""Where the training time's band is sampled to price rounded billing (every 5th percentile's
midpoint): the expected unused part of a billed day or hour."""


def _band_offsets_h(run: RunEstimate) -> list[float]:
    """The training time's band around its expected hours, at BILLING_QUANTILES, as offsets that average
    to zero (so a bill rounded at a fine granularity stays the expected hours' bill)."""
    if run.hours <= 0:
        return [0.0]
    factors = [hours_quantile(run, q) / run.hours for q in BILLING_QUANTILES]
    mean_factor = sum(factors) / len(factors)
    return [run.hours * (f / mean_factor - 1) for f in factors]


def _place_key(candidate: Candidate) -> tuple[str, str, int, str]:
    return candidate.platform, candidate.gpu, candidate.gpus, candidate.billing


class CandidateBuilder:
    """Builds the `Problem` for one loaded scenario. One instance per solve; estimates are cached."""

    def __init__(self, loaded: LoadedScenario) -> None:
        self.loaded = loaded
        self.scenario: Scenario = loaded.scenario
        self.catalog: Catalog = loaded.catalog
        self.graph = sensitivity.link_graph(self.scenario, list(self.catalog.platforms))
        pol = self.scenario.policy
        self.allowed_platforms = {self.catalog.platform(p).id for p in pol.allow_platforms}
        self.forbidden_platforms = {self.catalog.platform(p).id for p in pol.forbid_platforms}
        self.allowed_gpus = {self.catalog.gpu(g).id for g in pol.allow_gpus}
        self.forbidden_gpus = {self.catalog.gpu(g).id for g in pol.forbid_gpus}
        # key -> (best estimate or None, rule that removed the option, why)
        self._estimates: dict[tuple[object, ...], tuple[Estimate | None, str, str]] = {}
        self.headroom = pol.memory_headroom
        self.confidence = self.scenario.confidence
        self._pytorch_stacks_only = ops_skill.pytorch_stacks_only(self.scenario)
        self.memory_band_factor = memory_factor(self.confidence)
        self.resources: dict[str, Resource] = {}
        self.removed: list[Removed] = []
        self.groups: dict[str, str] = {}
        deadlines = [d for d in [self.scenario.deadline_h, *(j.deadline_h for j in self.scenario.jobs)] if d]
        self.horizon_h = 3 * max(deadlines) if deadlines else NO_DEADLINE_HORIZON_H
        # The horizon over which an amortized purchase loses value: the latest deadline, else the model's.
        self.planning_horizon_h = max(deadlines) if deadlines else NO_DEADLINE_HORIZON_H
        self.buy = buy_options(self.scenario, self.catalog, self._money)
        from plan.planner.calibrate.use import load_for  # the user's measured speed, if the scenario names one

        self.calibration = load_for(loaded)

    # --- options -------------------------------------------------------------------------------
    def _money(self, amount: float, currency: str) -> float:
        return self.catalog.to_currency(amount, currency, self.scenario.currency)

    def _cloud_options(self, job: Job) -> list[_Option]:
        options = []
        for platform in self.catalog.platforms.values():
            for offer in platform.offers:
                gpu = self.catalog.gpus[offer.gpu]
                per_node = offer.gpus_per_node or min(gpu.gpus_per_node,
                                                      platform.limits.max_gpus_per_node or gpu.gpus_per_node)
                limit = min(x for x in (platform.limits.max_gpus_per_job, offer.max_gpus, MAX_GPUS_PER_JOB)
                            if x is not None)
                if not platform.limits.multi_node:
                    limit = min(limit, per_node)
                allowed = allowance(platform, offer, per_node)
                if limit > allowed.ceiling:
                    self.removed.append(Removed(
                        job.id, platform.id, gpu.id, allowed.ceiling + 1, offer.billing, "capacity",
                        f"{platform.id} lets one customer have at most {allowed.ceiling} {gpu.id} "
                        f"({offer.billing}); raise it in an overlay with your quota"))
                    limit = allowed.ceiling
                self._note_pinned_above(job, platform.id, gpu.id, offer.billing, limit)
                counts = list(job_counts(job, per_node, limit))
                for count in counts:
                    place = self._placement("cloud", platform.id, platform.kind, gpu, count, per_node,
                                            offer.billing, platform.jurisdiction, _features(platform.features),
                                            multi_node=platform.limits.multi_node,
                                            max_gpus=platform.limits.max_gpus_per_job, assumed=offer.assumed,
                                            regions=tuple(platform.regions),
                                            node_size_from_gpu=offer.gpus_per_node is None
                                            and per_node == gpu.gpus_per_node)
                    notes = [f"price of {gpu.id} {offer.billing} on {platform.id}: {offer.assumption}"
                             ] if offer.assumed else []
                    if allowed.note:
                        notes.append(allowed.note)
                    if allowed.needs_reservation(count):
                        notes.append(f"{count}x {gpu.id} on {platform.id} is above the {allowed.max_gpus} one "
                                     f"customer gets without a reservation: arrange it with the vendor "
                                     f"({allowed.startup_for(count):g} h lead time)")
                    options.append(_Option(place, platform, offer=offer, assumptions=notes,
                                           startup_h=allowed.startup_for(count), largest_gpus=max(counts)))
        return options

    def _owned_options(self, job: Job) -> list[_Option]:
        options = []
        for pool in self.scenario.owned:
            gpu = self.catalog.gpu(pool.gpu)
            site = next(s for s in self.scenario.sites if s.id == pool.site)
            self._note_pinned_above(job, pool.id, gpu.id, "owned", pool.count)
            counts = list(job_counts(job, pool.gpus_per_node, pool.count))
            for count in counts:
                place = self._placement("owned", pool.id, "owned", gpu, count, pool.gpus_per_node, "owned",
                                        site.jurisdiction, pool.capabilities(owned_defaults(gpu)), site=pool.site)
                options.append(_Option(place, None, pool=pool, largest_gpus=max(counts)))
        return options

    def _purchase_options(self, job: Job) -> list[_Option]:
        """Buy options the scenario asked for (whole servers); `_pays_back` filters them once the
        job's rentals are known."""
        options = []
        site = job.data.at or (self.scenario.sites[0].id if self.scenario.sites else None)
        jurisdiction = next((s.jurisdiction for s in self.scenario.sites if s.id == site), "cn")
        for buy in self.buy:
            gpu = self.catalog.gpus[buy.gpu]
            platform_id = f"buy-{gpu.id}"
            if buy.lead_time_days * 24 >= self.horizon_h:
                self.removed.append(Removed(job.id, platform_id, gpu.id, 0, "purchase", "horizon",
                                            f"buying {gpu.id} takes {buy.lead_time_days:g} days to "
                                            f"arrive, beyond the planning horizon"))
                continue
            per_node = buy.gpus_per_node or gpu.gpus_per_node
            counts = [n for n in job_counts(job, per_node, min(MAX_GPUS_PER_JOB, buy.max_gpus or MAX_GPUS_PER_JOB))
                      if n >= per_node]  # nobody buys a fraction of a server
            for count in counts:
                place = self._placement("purchase", platform_id, "owned", gpu, count, per_node,
                                        "purchase", jurisdiction, _features(buy.platform.features), site=site,
                                        assumed=bool(buy.notes), node_size_from_gpu=buy.gpus_per_node is None)
                options.append(_Option(place, buy.platform, purchase=buy, assumptions=list(buy.notes),
                                       largest_gpus=max(counts)))
        return options

    def _note_pinned_above(self, job: Job, platform: str, gpu: str, billing: str, limit: int) -> None:
        """A pinned count (`gpus: N`) this offer cannot give, kept so that 'why not?' has an answer."""
        if job.gpus is not None and job.gpus > limit:
            self.removed.append(Removed(job.id, platform, gpu, job.gpus, billing, "gpus",
                                        f"{platform} gives at most {limit} {gpu} per job; {job.id} pins "
                                        f"gpus: {job.gpus}"))

    @staticmethod
    def _placement(kind: str, platform: str, platform_kind: str, gpu: GPU, gpus: int, per_node: int,
                   billing: str, jurisdiction: str, features: frozenset[str], *, site: str | None = None,
                   multi_node: bool = True, max_gpus: int | None = None, assumed: bool = False,
                   regions: tuple[str, ...] = (), node_size_from_gpu: bool = False) -> Placement:
        return Placement(kind=kind, platform=platform, platform_kind=platform_kind, gpu=gpu.id,
                         gpu_architecture=gpu.architecture, gpu_has_bf16=gpu.peak_tflops.bf16 is not None,
                         gpu_has_fp8=gpu.supports_fp8, gpus=gpus, gpus_per_node=per_node, billing=billing,
                         jurisdiction=jurisdiction, features=features, site=site,
                         multi_node_allowed=multi_node, max_gpus_per_job=max_gpus, offer_assumed=assumed,
                         regions=regions, node_size_from_gpu=node_size_from_gpu)

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

    # --- estimation ----------------------------------------------------------------------------
    def _cluster(self, option: _Option, gpu: GPU) -> Cluster:
        place = option.place
        spot = place.billing == "spot"
        trust = self.scenario.policy.trust_vendor_claims
        pool = option.pool
        cluster = Cluster.of(gpu, place.gpus, option.cluster_platform, gpus_per_node=place.gpus_per_node,
                             spot=spot, trust_vendor_claims=trust,
                             fabric=(pool.fabric.kind, pool.fabric.gbps_per_gpu) if pool is not None else None)
        if pool is not None:
            cluster = dataclasses.replace(cluster, host_memory_gib_per_gpu=pool.host_memory_gib_per_gpu)
        return cluster

    def _offload_allowed(self, card: ModelCard, job: Job, option: _Option, gpu: GPU) -> bool:
        """CPU offload of the model states (`Layout.state_offload`) only where the job fits at no GPU count
        the place offers without it: a lab's two 24 GB cards for a 70B QLoRA, not a cloud that rents
        enough GPUs to hold the states (memory falls as the count grows, so its largest count decides).
        Offloaded steps lean on an assumed host speed; they must not undercut a plan that needs none."""
        if option.largest_gpus <= option.place.gpus:
            return True
        largest = dataclasses.replace(option, place=dataclasses.replace(option.place, gpus=option.largest_gpus))
        best, _, _ = self._estimate(card, job, self._cluster(largest, gpu), state_offload=False)
        return best is None or best.layout.host_activations  # (activation offload: offloading all the same)

    def offloaded_alternative(self, candidate: Candidate) -> Estimate | None:
        """The fastest layout with the model states in host memory on the candidate's own GPUs (same place,
        count and billing), for the plan's note where it is clearly faster (planner/estimate/advice.py). None
        where the job states cpu_offload, the candidate offloads already, or nothing offloaded fits."""
        job = self.scenario.job(candidate.job)
        if job.cpu_offload is not None or candidate.layout.state_offload:
            return None
        cluster = self._cluster_of(job, _place_key(candidate))
        return None if cluster is None else self._estimate(self.loaded.models[job.id], job, cluster, True)[0]

    def full_shard_alternative(self, candidate: Candidate) -> Estimate | None:
        """The fastest layout of a hybrid-sharded candidate's job on its own GPUs without hybrid sharding, for the
        plan's line saying what the hybrid shard gains; None where the candidate is not hybrid-sharded."""
        if not candidate.layout.shard_group:
            return None
        job = self.scenario.job(candidate.job)
        cluster = self._cluster_of(job, _place_key(candidate))
        return None if cluster is None else self._estimate(self.loaded.models[job.id], job, cluster, False,
                                                           hybrid_shard=False)[0]

    def fitting_without_offload(self, candidate: Candidate, change: dict[str, str]) -> Estimate | None:
        """The fastest layout of the candidate's job with `change` (a memory saver's field and value) on the
        candidate's own GPUs with nothing in host memory, or None where none fits so."""
        job = self.scenario.job(candidate.job).model_copy(update=change)
        cluster = self._cluster_of(job, _place_key(candidate))
        found = None if cluster is None else self._estimate(self.loaded.models[job.id], job, cluster, False)[0]
        return None if found is None or found.layout.host_activations else found

    def host_shortfall(self, job_id: str, place: tuple[str, str, int, str]) -> str | None:
        """Where the job's model states, offloaded to host memory on this place's GPUs (platform, GPU, count,
        billing), need more host memory per GPU than its servers have (FSDP offloads them all or none): the
        estimator's line saying so, else None."""
        job = self.scenario.job(job_id)
        cluster = None if job.cpu_offload is False else self._cluster_of(job, place)
        if cluster is None:
            return None
        # the offloadable layout (ZeRO-3 on FSDP, no tp or pp) on a card that holds anything
        offloading = job.model_copy(update={"framework": "fsdp", "cpu_offload": True,
                                            "layout": FixedLayout(tp=1, pp=1, zero=3)})
        return host_shortfall(self._estimate(self.loaded.models[job.id], offloading, on_roomy_card(cluster), True)[0])

    def _cluster_of(self, job: Job, wanted: tuple[str, str, int, str]) -> Cluster | None:
        """The cluster of a place (platform, GPU, count, billing), None where it is not offered to the job."""
        for option in [*self._cloud_options(job), *self._owned_options(job), *self._purchase_options(job)]:
            place = option.place
            if (place.platform, place.gpu, place.gpus, place.billing) == wanted:
                return self._cluster(option, self.catalog.gpus[place.gpu])
        return None

    def _estimate(self, card: ModelCard, job: Job, cluster: Cluster,
                  state_offload: bool | None = None, hybrid_shard: bool | None = None
                  ) -> tuple[Estimate | None, str, str]:
        """Fastest fitting layout. Reliability does not change the layout, so the search runs on the
        cluster without it (one search serves hourly, spot and every platform with this fabric) and
        the estimate is re-attached to the real cluster for `run`. On one node the fabric is
        irrelevant too, so single-node searches are shared across platforms. `state_offload` None: CPU
        offload searched where nothing fits without it; False: never. `hybrid_shard` None: the job's
        (`Job.hybrid_shard`, itself searched where unset)."""
        if hybrid_shard is None:
            hybrid_shard = job.hybrid_shard
        fixed = job.layout
        # a job with fewer sequences than the default global batch gets one step of all of them (else the
        # limit does not bind, and jobs of any size share their searches)
        sequences = max(1, int(job.tokens // job.seq_len))
        default = default_global_batch(job.method, job.seq_len, shape_of(card).total_params)
        batch_limit = sequences if job.global_batch is None and sequences < default else None
        key = (card.id, card.params, job.method, job.seq_len, job.global_batch, job.precision, job.lora_rank,
               job.lora_targets, fixed, job.framework, job.optimizer, job.kernels, job.loss, self._pytorch_stacks_only,
               cluster.layout_search_key(), state_offload, batch_limit, hybrid_shard)
        if key not in self._estimates:
            spec = LayoutSpec(seq_len=job.seq_len, global_batch=job.global_batch, precision=job.precision,
                              lora_rank=job.lora_rank or 16, lora_targets=job.lora_targets or "all",
                              memory_headroom=self.headroom, memory_confidence=self.confidence,
                              tp=fixed.tp if fixed else None, pp=fixed.pp if fixed else None,
                              zero=fixed.zero if fixed else None, cp=fixed.cp if fixed else None,
                              recompute=fixed.recompute if fixed else None,
                              micro_batch=fixed.micro_batch if fixed else None,
                              ep=fixed.ep if fixed else None,
                              framework=job.framework, optimizer=OPTIMIZER_ALIASES.get(job.optimizer, job.optimizer),
                              fused_modules=job.kernels == "fused", loss=job.loss,
                              batch_limit=batch_limit,
                              pytorch_stacks_only=self._pytorch_stacks_only, state_offload=state_offload,
                              hybrid_shard=hybrid_shard)
            try:
                result = search_layout(card, job.method, cluster.for_layout_search(), spec)
            except ValueError as exc:  # a fixed choice this hardware can never run (fp8 on Ampere, tp=3)
                self._estimates[key] = (None, "layout", str(exc))
                return self._estimates[key]
            reason = ""
            if result.best is None:
                least = getattr(result, "least_memory", None)
                least_gib = least.memory.total_gib if least is not None else None
                reason = memory_rule.reason(card.id, cluster.gpus, cluster.gpu.id, least_gib,
                                            cluster.gpu.memory_gib, self.headroom, self.memory_band_factor)
            self._estimates[key] = (result.best, memory_rule.GROUP, reason)
        best, rule, reason = self._estimates[key]
        if best is not None and self.calibration is not None:
            return self.calibration.apply(dataclasses.replace(best, cluster=cluster), job.method), rule, reason
        return (dataclasses.replace(best, cluster=cluster) if best is not None else None), rule, reason

    # --- billing -------------------------------------------------------------------------------
    def _billing(self, job: Job, option: _Option, hours: float,
                 run: RunEstimate) -> tuple[int, str | None, dict[str, object]]:
        """(cost in money units for this job alone, shared resource key or None, cost detail).

        A time-billed offer rounds the hours up to its step (a day for a daily offer), so the expected
        bill is the average bill over the training time's band (`_band_offsets_h` of `run`): a run
        expected at 23.6 h on a daily offer costs two days whenever it runs past 24 h, and that chance is
        priced, not ignored."""
        place = option.place
        academic = self.scenario.academic
        if option.pool is not None:
            cost = option.pool.cost_per_gpu_hour * place.gpus * hours
            return SCALE.money(cost), option.pool.id, {"rate_per_gpu_hour": option.pool.cost_per_gpu_hour}
        if option.purchase is not None:
            return 0, self._purchase_resource(option.purchase, place), {}
        offer = option.offer
        assert offer is not None
        price = self._money(offer.price_per_gpu_period, offer.currency)
        if academic and offer.academic_discount:
            price *= 1 - offer.academic_discount
        if offer.billing in ("monthly", "yearly"):
            return 0, self._reservation(option, price), {"price_per_gpu_period": price}
        step_h = PERIOD_H["daily"] if offer.billing == "daily" else offer.granularity_s / 3600
        min_h = offer.min_periods * step_h
        runs_h = [max(0.0, hours + d) for d in _band_offsets_h(run)]
        billed_h = max(hours, sum(billed_hours(h, step_h, min_h) for h in runs_h) / len(runs_h))
        # the rounding travels with the plan, so its cost band bills p10 and p90 hours the same way
        return SCALE.money(price / offer.period_h * billed_h * place.gpus), None, {
            "price_per_gpu_period": price, "billed_hours": billed_h, "billable_hours": hours,
            "billing_step_h": step_h, "min_billed_hours": min_h,
            "price_per_gpu_hour": price / offer.period_h}

    def _levels(self, key: str, gpus: int) -> tuple[int, ...]:
        """GPU counts a shared resource may be sized to: every count a candidate on it asks for."""
        existing = self.resources.get(key)
        return tuple(sorted({*(existing.levels if existing else ()), gpus}))

    def _reservation(self, option: _Option, price: float) -> str:
        offer, place = option.offer, option.place
        assert offer is not None
        key = f"{place.platform}:{place.gpu}:{offer.billing}"
        levels = self._levels(key, place.gpus)
        period_min = SCALE.minutes(offer.period_h)
        self.resources[key] = Resource(
            key=key, kind="reservation", platform=place.platform, gpu=place.gpu,
            label=f"{offer.billing} reservation of {place.gpu} on {place.platform}", levels=levels,
            period_min=period_min, price_per_gpu_period=SCALE.money(price), min_periods=offer.min_periods,
            max_periods=max(offer.min_periods, math.ceil(self.horizon_h / offer.period_h) + 1))
        return key

    def _pays_back(self, job: Job, found: list[Candidate]) -> list[Candidate]:
        """Drop purchases that do not pay back within the hardware's life against renting, where a
        rental may run the job at all; where the job's rules forbid every rental (data that must stay
        on premises), buying is the only way and the comparison does not apply."""
        can_rent = any(c.billing not in ("purchase", "owned") and not c.violations for c in found)
        if not can_rent:
            return found
        kept = []
        for c in found:
            econ = self.resources[c.resource].economics if c.billing == "purchase" and c.resource else None
            if econ is None:
                kept.append(c)
                continue
            months = econ.payback_months(c.gpus)
            if months is not None and months <= econ.life_years * 12:
                kept.append(c)
                continue
            life = f"{econ.life_years * 12:g}-month life"
            if econ.rent_per_gpu_hour is None:
                why = f"buying {c.gpu} {NOT_WEIGHED}: the catalog rents no {c.gpu}"
            elif months is None:
                why = (f"buying {c.gpus}x {c.gpu} never pays back against renting ({econ.rent_label}): "
                       "its power and staff cost more than the rental")
            else:
                why = (f"buying {c.gpus}x {c.gpu} pays back only after {months:,.0f} months of full use "
                       f"against renting ({econ.rent_label}), beyond its {life}")
            self.removed.append(Removed(job.id, c.platform, c.gpu, c.gpus, "purchase", "purchase.payback", why))
        return kept

    def _economics(self, buy: BuyOption) -> PurchaseEconomics:
        rent = self._cheapest_rental(buy.gpu)
        return PurchaseEconomics(
            capex_per_gpu=buy.capex_per_gpu, running_per_gpu_hour=buy.power_per_gpu_hour,
            staff_per_hour=buy.staff_per_hour, life_years=buy.life_years,
            rent_per_gpu_hour=rent[0] if rent else None, rent_label=rent[1] if rent else None)

    def _purchase_resource(self, buy: BuyOption, place: Placement) -> str:
        """A purchase as a resource: the price (cash, or the value lost within the horizon when
        amortized) once per GPU bought, then power per GPU and staff per day while held."""
        key = f"buy:{place.gpu}"
        levels = self._levels(key, place.gpus)
        period_h = 24.0  # held by the day once bought and installed
        basis = self.scenario.budget_basis
        upfront = buy.upfront_per_gpu(basis, self.planning_horizon_h)
        label = (f"buy {place.gpu} at {buy.capex_per_gpu:,.0f} {self.scenario.currency}/GPU, paid in cash"
                 if basis == "cash" else
                 f"buy {place.gpu} at {buy.capex_per_gpu:,.0f} {self.scenario.currency}/GPU, amortized: "
                 f"{upfront / buy.capex_per_gpu:.1%} of the price falls within the "
                 f"{self.planning_horizon_h / 24:g}-day horizon, the residual value is credited")
        self.resources[key] = Resource(
            key=key, kind="purchase", platform=place.platform, gpu=place.gpu, label=label, levels=levels,
            period_min=SCALE.minutes(period_h), price_per_gpu_period=SCALE.money(buy.power_per_gpu_hour * period_h),
            fixed_price_per_period=SCALE.money(buy.staff_per_hour * period_h),
            upfront_per_gpu=SCALE.money(upfront),
            available_from_min=SCALE.minutes(buy.lead_time_days * 24),
            max_periods=math.ceil(self.horizon_h / period_h) + 1, economics=self._economics(buy))
        return key

    def _cheapest_rental(self, gpu: str) -> tuple[float, str] | None:
        """(price per GPU-hour, "billing on platform") of the cheapest non-spot offer of `gpu`, the rent
        a purchase saves; reservations count at full use of their period."""
        best: tuple[float, str] | None = None
        for platform in self.catalog.platforms.values():
            for offer in platform.offers:
                if offer.gpu != gpu or offer.billing == "spot":
                    continue
                price = self._money(offer.price_per_gpu_period, offer.currency) / offer.period_h
                if self.scenario.academic and offer.academic_discount:
                    price *= 1 - offer.academic_discount
                if best is None or price < best[0]:
                    best = (price, f"{offer.billing} on {platform.id}")
        return best

    # --- assembly ------------------------------------------------------------------------------
    def build(self) -> Problem:
        scenario = self.scenario
        candidates: dict[str, list[Candidate]] = {}
        index = 0
        for pool in scenario.owned:
            self.resources[pool.id] = Resource(
                key=pool.id, kind="owned", platform=pool.id, gpu=self.catalog.gpu(pool.gpu).id,
                label=f"owned pool {pool.id} ({pool.count}x {pool.gpu})", capacity=pool.count,
                available_from_min=SCALE.minutes(pool.available_from_h),
                available_until_min=SCALE.minutes(pool.available_until_h) if pool.available_until_h else None)
        for done, job in enumerate(scenario.jobs):
            build_deadline.progress(done, len(scenario.jobs))
            card = self.loaded.models[job.id]
            found: list[Candidate] = []
            groups: dict[tuple[str, str, str], list[_Option]] = defaultdict(list)
            for option in [*self._cloud_options(job), *self._owned_options(job), *self._purchase_options(job)]:
                groups[(option.place.platform, option.place.gpu, option.place.billing)].append(option)
            for options in groups.values():
                best_rate, stalled, last_gpu_h = 0.0, 0, None
                for option in sorted(options, key=lambda o: o.place.gpus):
                    build_deadline.check()  # the time limit covers building too
                    candidate = self._candidate(index, job, card, option)
                    if candidate is None:
                        continue
                    found.append(candidate)
                    index += 1
                    # More GPUs stop paying once throughput stalls or the job is already short.
                    stalled = stalled + 1 if candidate.tokens_per_s < best_rate * STALL_GAIN else 0
                    best_rate = max(best_rate, candidate.tokens_per_s)
                    gpu_h = candidate.gpu_hours
                    scaled = last_gpu_h is None or gpu_h < last_gpu_h  # (unknown before a second count)
                    last_gpu_h = gpu_h
                    if stalled >= 2 or (candidate.hours < MIN_USEFUL_HOURS and not scaled):
                        break
            candidates[job.id] = self._prune(self._pays_back(job, found))
        # Examples come first from options the scenario's own policy lists leave (a rule is not
        # described by a platform the user already excluded).
        for c in sorted((c for cands in candidates.values() for c in cands),
                        key=lambda c: any(g.startswith("policy.") for g in c.violations)):
            for group, reason in c.violations.items():
                self.groups.setdefault(group, f"{group} rule, e.g. {reason}")
        # Renumber after pruning so variable indices are dense and stable.
        renumbered: dict[str, list[Candidate]] = {}
        index = 0
        for job_id, cands in candidates.items():
            renumbered[job_id] = []
            for c in cands:
                renumbered[job_id].append(dataclasses.replace(c, index=index))
                index += 1
        resources = resources_in_use(renumbered, self.resources)
        self._describe_groups(resources)
        return Problem(
            scenario_name=scenario.name, currency=scenario.currency, objective=scenario.objective,
            budget=SCALE.money(scenario.budget) if scenario.budget is not None else None,
            deadline_min={j.id: (SCALE.minutes(d) if (d := scenario.effective_deadline_h(j)) else None)
                          for j in scenario.jobs},
            after={j.id: list(j.after) for j in scenario.jobs}, jobs=[j.id for j in scenario.jobs],
            candidates=renumbered, resources=resources, groups=dict(self.groups), removed=list(self.removed),
            value_of_time_per_min=SCALE.money(scenario.value_of_time_per_day / (24 * 60)),
            horizon_min=SCALE.minutes(self.horizon_h), memory_headroom=self.headroom,
            confidence=self.confidence, memory_band_factor=self.memory_band_factor,
            pinned={j.id: text for j in scenario.jobs if (text := pinned_text(j))})

    def _describe_groups(self, resources: dict[str, Resource]) -> None:
        s = self.scenario
        if s.budget is not None:
            self.groups["budget"] = budget_group(s)
        for job in s.jobs:
            limit = s.effective_deadline_h(job)
            if limit is not None:
                within = f"{limit:g} hours" if limit < 48 else f"{limit / 24:g} days"  # hours under two days
                self.groups[f"deadline/{job.id}"] = f"{job.id} ends within {within}"
        if any(j.after for j in s.jobs):
            self.groups["scheduling.after"] = "jobs run after the jobs they depend on"
        if s.policy.reproducibility.fixed_gpu_type:
            self.groups[reproducibility.FIXED_GPU_TYPE] = "every job on the same GPU type"
        for key, res in resources.items():
            if res.kind == "owned":
                self.groups[f"capacity/{key}"] = f"{res.label}: its GPUs and availability window"
                self.groups[f"scheduling/{key}"] = f"{res.label}: jobs share its GPUs over time"

    def _candidate(self, index: int, job: Job, card: ModelCard, option: _Option) -> Candidate | None:
        place = option.place
        gpu = self.catalog.gpus[place.gpu]
        cluster = self._cluster(option, gpu)
        if job.cpu_offload is not None:
            estimate, rule, reason = self._estimate(card, job, cluster, job.cpu_offload)
        else:  # without it first: where nothing is offloaded, CPU offload is never searched (nor asked about)
            estimate, rule, reason = self._estimate(card, job, cluster, False)
            offloaded = estimate is None or estimate.layout.host_activations  # (activation offload: after it)
            if offloaded and self._offload_allowed(card, job, option, gpu):
                estimate, rule, reason = self._estimate(card, job, cluster, None)
        if estimate is None:
            self.removed.append(Removed(job.id, place.platform, place.gpu, place.gpus, place.billing, rule, reason))
            return None
        run = estimate.run(job.tokens)
        move = job_transfer(self.scenario, job, place, self.graph, card, option.cluster_platform, self._money)
        transfer_h = move.hours  # data in and the result out (planner/transfer.py)
        # The schedule (deadlines, reservations) uses the time at the scenario's confidence; the bill,
        # the expected time.
        train_q_h = hours_quantile(run, self.confidence)
        hours = train_q_h + transfer_h
        # The data goes to the platform's storage before the GPUs are rented and the result leaves from it
        # after they are released: the schedule holds both, the GPU bill the training
        billed_h, risk_detail, risk_note = run.hours, {}, None
        if place.billing == "spot" and option.cluster_platform is not None:
            risk = spot_risk(option.cluster_platform, place.nodes, estimate.cluster.spot_preemptions_per_day,
                             run.hours)
            hours += risk.wait_h
            billed_h += risk.held_h
            risk_detail, risk_note = risk.detail(), risk.assumption
        if option.startup_h + hours > self.horizon_h:  # no schedule can hold it (the model's end bound)
            why = " (3x the latest deadline)" if self.horizon_h < NO_DEADLINE_HORIZON_H else ""
            self.removed.append(Removed(job.id, place.platform, place.gpu, place.gpus, place.billing, "horizon",
                                        f"would end after {_span(option.startup_h + hours)}, beyond the "
                                        f"planning horizon of {_span(self.horizon_h)}{why}"))
            return None
        cost, resource, cost_detail = self._billing(job, option, billed_h, run)
        cost += SCALE.money(move.egress_cost)
        assumptions = list(option.assumptions) + list(move.notes)
        if risk_note:
            assumptions.append(risk_note)
        if card.assumed:
            assumptions.append(f"model {card.id}: {card.assumption}")
        if gpu.assumed or gpu.preliminary:
            assumptions.append(f"GPU {gpu.id}: {gpu.assumption or 'preliminary figures'}")
        if gpu.gpus_per_node_assumption and place.node_size_from_gpu and place.gpus > 1:
            assumptions.append(f"GPU {gpu.id}: {gpu.gpus_per_node_assumption}")
        assumed_efficiency = efficiency_assumption(gpu.architecture)
        if assumed_efficiency:
            assumptions.append(f"GPU {gpu.id}: {assumed_efficiency}")
        if estimate.uncalibrated:  # the wider band can move its scheduled time (confidence) and so the plan
            assumptions.append(f"{job.id}: {uncalibrated_band_note(estimate.uncalibrated)}")
        assumptions += [f"{place.platform}: {note}" for note in getattr(estimate.cluster, "assumptions", ())]
        layout = estimate.layout
        # model states offloaded, or paged optimizer states, in host memory: the host memory they take, the CPU
        # step's assumed speed, their PCIe traffic each step
        assumptions += [f"{job.id}: {note}" for note in estimate.notes
                        if note.startswith(("CPU offload", "paged optimizer"))]
        return Candidate(
            index=index, job=job.id, platform=place.platform, gpu=place.gpu, gpus=place.gpus,
            nodes=place.nodes, billing=place.billing, duration_min=max(1, SCALE.minutes(hours)),
            transfer_min=SCALE.minutes(transfer_h), cost=cost, resource=resource,
            layout=layout,
            memory_gib_per_gpu=estimate.memory.total_gib, gpu_memory_gib=estimate.gpu_memory_gib,
            tokens_per_s=estimate.tokens_per_s, mfu=estimate.mfu, hours=hours, gpu_hours=run.gpu_hours,
            violations={**self.violations(job, option),
                        **policy.check_interruptions(self.scenario, run.expected_interruptions)},
            assumptions=tuple(assumptions),
            expected_interruptions=run.expected_interruptions, startup_min=SCALE.minutes(option.startup_h),
            detail={"memory_gib": estimate.memory.to_dict(), "time_s": estimate.time.to_dict(),
                    "step_time_s": estimate.step_time_s, "failure_overhead": run.failure_overhead_fraction,
                    "transfer_h": transfer_h, "train_h": run.hours, "startup_h": option.startup_h,
                    "train_p10_h": run.hours_range[0], "train_p90_h": run.hours_range[1],
                    "train_at_confidence_h": train_q_h, "confidence": self.confidence,
                    "framework": layout.framework, "memory_band_factor": self.memory_band_factor,
                    "mfu_causal": estimate.mfu_causal,
                    **risk_detail, **cost_detail, **move.detail()},
        )

    def _prune(self, candidates: list[Candidate]) -> list[Candidate]:
        """Drop candidates another one beats on every count that matters, keeping the reason.

        Within one (platform, GPU, billing, broken rules): a candidate is dominated if another is no
        dearer, starts no later (its queue or provisioning delay: larger counts of some offers wait days),
        runs no longer and (on shared capacity) uses no more GPUs, and is better in one of them.
        """
        buckets: dict[tuple[object, ...], list[Candidate]] = defaultdict(list)
        for c in candidates:
            buckets[(c.platform, c.gpu, c.billing, tuple(sorted(c.violations)))].append(c)
        kept: list[Candidate] = []
        for bucket in buckets.values():
            for c in bucket:
                shared = c.resource is not None
                better = next((o for o in bucket if o is not c and o.cost <= c.cost
                               and o.startup_min <= c.startup_min and o.duration_min <= c.duration_min
                               and (not shared or o.gpus <= c.gpus)
                               and (o.cost, o.startup_min, o.duration_min, o.gpus)
                               != (c.cost, c.startup_min, c.duration_min, c.gpus)), None)
                if better is None:
                    kept.append(c)
                else:
                    self.removed.append(Removed(
                        c.job, c.platform, c.gpu, c.gpus, c.billing, "dominated",
                        f"{better.gpus}x {better.gpu} on the same offer is as cheap or cheaper "
                        f"({SCALE.to_money(better.cost):,.0f} vs {SCALE.to_money(c.cost):,.0f}), starts as soon "
                        f"and runs as fast or faster ({better.hours:,.1f} h vs {c.hours:,.1f} h)"))
        return kept


# Problems built in this process, by everything but the budget (which only the CP-SAT model reads):
# a batch sweeping the budget builds the candidates once. Few entries: a batch walks variants in order.
# Each keeps the builder that made it, whose estimates the explainers' what-ifs reuse.
_BUILT: OrderedDict[tuple[object, ...], tuple[object, Problem, CandidateBuilder]] = OrderedDict()
_BUILT_KEPT = 8


def _reuse_key(loaded: LoadedScenario) -> tuple[object, ...]:
    s = loaded.scenario
    return (s.model_dump_json(exclude={"budget"}), s.budget is None, id(loaded.catalog),
            tuple((job, card.model_dump_json()) for job, card in sorted(loaded.models.items())))


def _with_budget(problem: Problem, scenario: Scenario) -> Problem:
    """A copy (its own containers) carrying this scenario's budget."""
    groups = dict(problem.groups)
    if scenario.budget is not None:
        groups["budget"] = budget_group(scenario)
    return dataclasses.replace(
        problem, budget=SCALE.money(scenario.budget) if scenario.budget is not None else None, groups=groups,
        candidates={job: list(cands) for job, cands in problem.candidates.items()},
        resources=dict(problem.resources), removed=list(problem.removed), deadline_min=dict(problem.deadline_min),
        after={job: list(before) for job, before in problem.after.items()})


def build_problem(loaded: LoadedScenario) -> Problem:
    return build_problem_and_builder(loaded)[0]


def build_problem_and_builder(loaded: LoadedScenario) -> tuple[Problem, CandidateBuilder]:
    """The scenario's problem, and the builder that made it: its estimates (and the calibration it
    read) answer the explainers' what-ifs without building anything again."""
    key = _reuse_key(loaded)
    if key in _BUILT:
        _BUILT.move_to_end(key)
        _, problem, builder = _BUILT[key]
        return _with_budget(problem, loaded.scenario), builder
    builder = CandidateBuilder(loaded)
    with collector_paused():  # hundreds of thousands of objects that live on (plan.planner.collector)
        try:
            problem = builder.build()
        finally:
            estimate_store.flush()  # share this build's new estimates with later runs and batch workers
    _BUILT[key] = (loaded.catalog, problem, builder)  # the catalog is kept so that its id is not reused
    while len(_BUILT) > _BUILT_KEPT:
        _BUILT.popitem(last=False)
    return _with_budget(problem, loaded.scenario), builder
