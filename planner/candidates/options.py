"""Every place a job may run: every platform offer (GPU x billing mode), every owned pool and
every purchase option, at every sensible GPU count, as an `_Option` (a placement, what it costs and
where it comes from) before estimation; and the cluster the estimator sees for one.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeVar

from plan.constraints import sensitivity
from plan.constraints.policy import unavailable_text
from plan.models.catalog import Catalog
from plan.models.features import owned_defaults
from plan.models.gpu import GPU
from plan.models.loading import LoadedScenario
from plan.models.platform import Features, Offer, Platform
from plan.models.problem import Placement, Removed
from plan.models.scenario import Job, OwnedPool, Scenario
from plan.planner.candidates.capacity_limits import Allowance, allowance
from plan.planner.candidates.purchase import BuyOption
from plan.planner.candidates.windows import instance_shape
from plan.planner.estimate import Cluster
from plan.planner.i18n.said import say, word

T = TypeVar("T")

MAX_GPUS_PER_JOB = 4096
# Multi-node sizes tried, in nodes. Dense enough that the optimum is rarely between two of them.
NODE_STEPS = (2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512)


def gpu_counts(gpus_per_node: int, limit: int) -> list[int]:
    """1, 2, 4, ... up to one node, then whole nodes, capped at `limit`."""
    counts = {n for n in (1, 2, 4, 8, 16, 32, 64) if n <= gpus_per_node} | {gpus_per_node}
    counts |= {gpus_per_node * k for k in NODE_STEPS}
    return sorted(n for n in counts if n <= limit)


def job_counts(job: Job, gpus_per_node: int, limit: int) -> list[int]:
    """The GPU counts tried for `job` on an offer of at most `limit`: its pinned count (`gpus`), or
    the usual steps from `min_gpus` up (min_gpus itself included), multiples of a fixed tp x pp
    only."""
    if job.gpus is not None:
        return [job.gpus] if job.gpus <= limit else []
    counts = set(gpu_counts(gpus_per_node, limit))
    if job.min_gpus is not None and job.min_gpus <= limit:
        counts.add(job.min_gpus)
    return sorted(n for n in counts if job.allows_count(n))


def _pinned(job: Job) -> dict[str, str]:
    """Each field of the job that fixes its count or layout, with what it fixes: gpus, min_gpus,
    layout (its stated fields, 'tp=2 zero=1'), hybrid_shard (when true)."""
    pinned = {name: f"{name}={value}"
              for name, value in (("gpus", job.gpus), ("min_gpus", job.min_gpus))
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
    """What the job fixes of count and layout, e.g. 'gpus=8, tp=2 zero=1, hybrid_shard=true' (''
    when nothing)."""
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
    # queue/provisioning (or reservation lead time) before the job can start
    startup_h: float = 0.0
    largest_gpus: int = 0  # the most GPUs of this GPU the place offers the job (0: unknown)


def _features(features: Features) -> frozenset[str]:
    return frozenset(name for name, value in features.model_dump().items() if value is True)


def _relied_notes(job: Job, platform: Platform, features: frozenset[str]) -> list[str]:
    """What the job's data rules rely on from the platform, where the catalog's fact for it is
    assumed or asks something of the user (`FeatureFact.note`): one line per such feature."""
    notes = []
    for name in sensitivity.RULES[job.data.sensitivity].needs:
        fact = platform.feature_facts.get(name)
        if name not in features or fact is None:
            continue
        said = "; ".join(text for text in (fact.note, fact.assumption if fact.assumed else None)
                         if text)
        if said:
            notes.append(f"{job.id} relies on {name} on {platform.id}: {said}")
    return notes


@functools.lru_cache(maxsize=1 << 16)
def _said(key: str, *fields: tuple[str, object]) -> str:
    """`say(key, **dict(fields))`, made once per sentence: an offer's notes are the same for every
    job (a generated 64-job quarter made 96,000 of them, 11 of the 21 s CPU of listing options).
    A sentence is English with its key and fields (JSON never changes with the language), so one
    made earlier is the same."""
    return say(key, **dict(fields))


def _made_once(memo: dict[tuple[object, ...], tuple[tuple[object, ...], T]],
               owners: tuple[object, ...], rest: tuple[object, ...], make: Callable[[], T]) -> T:
    """`make()`, once per build for these very `owners` (catalog objects, unhashable: keyed by
    their ids, and an entry is used only where it holds the same objects, so a reused id never
    returns another's) and the hashable `rest`."""
    key = (*map(id, owners), *rest)
    made = memo.get(key)
    if made is not None and all(a is b for a, b in zip(made[0], owners, strict=True)):
        return made[1]
    value = make()
    memo[key] = (owners, value)
    return value


class Options:
    """The options of a job, for `CandidateBuilder` (planner/candidates/build.py): options a pinned
    count or a platform's quota rules out are recorded in `removed` as they are met."""

    loaded: LoadedScenario
    scenario: Scenario
    catalog: Catalog
    removed: list[Removed]
    horizon_h: float
    buy: list[BuyOption]
    clusters_of: dict[tuple[str, tuple[str, str, int, str]], Cluster | None]
    # `_made_once` memos: `_cluster`'s (GPU, platform; count, per node, spot, fabric, host GiB)
    # and `_allowance`'s (platform, offer; GPUs per node)
    _clusters: dict[tuple[object, ...], tuple[tuple[object, ...], Cluster]]
    _allowances: dict[tuple[object, ...], tuple[tuple[object, ...], Allowance]]

    def _money(self, amount: float, currency: str) -> float:
        return self.catalog.to_currency(amount, currency, self.scenario.currency)

    def _options(self, job: Job) -> list[_Option]:
        """Every option of the job: cloud offers, then owned pools, then purchases (those its
        `billing:` list allows)."""
        options = [*self._cloud_options(job), *self._owned_options(job),
                   *self._purchase_options(job)]
        if job.billing is None:
            return options
        allowed = set(job.billing)
        left_out = sorted({(o.place.platform, o.place.gpu, o.place.billing) for o in options
                           if o.place.billing not in allowed})
        for platform, gpu, billing in left_out:
            self.removed.append(Removed(job.id, platform, gpu, 0, billing, "billing",
                                        f"{job.id} may bill only {', '.join(job.billing)} "
                                        "(its billing: list)"))
        return [o for o in options if o.place.billing in allowed]

    def _cloud_options(self, job: Job) -> list[_Option]:
        options = []
        for platform in self.catalog.platforms.values():
            limits = platform.limits
            for offer in platform.offers:
                gpu = self.catalog.gpus[offer.gpu]
                per_node = offer.gpus_per_node or min(
                    gpu.gpus_per_node, limits.max_gpus_per_node or gpu.gpus_per_node)
                limit = min(x for x in (limits.max_gpus_per_job, offer.max_gpus, MAX_GPUS_PER_JOB)
                            if x is not None)
                if not limits.multi_node:
                    limit = min(limit, per_node)
                allowed = self._allowance(platform, offer, per_node)
                if limit > allowed.ceiling:
                    self.removed.append(Removed(
                        job.id, platform.id, gpu.id, allowed.ceiling + 1, offer.billing, "capacity",
                        f"{platform.id} lets one customer have at most {allowed.ceiling} {gpu.id} "
                        f"({offer.billing}); raise it in an overlay with your quota"))
                    limit = allowed.ceiling
                self._note_pinned_above(job, platform.id, gpu.id, offer.billing, limit)
                counts = self._instance_counts(job, platform, offer, per_node, limit)
                features = _features(platform.features) - frozenset(offer.lacks)
                relied = _relied_notes(job, platform, features)
                renter = self.scenario.renter
                rule = platform.renter_rule(gpu.id, renter) if renter is not None else None
                billing = word("billing", offer.billing)
                price = [_said("note.price", ("gpu", gpu.id), ("billing", billing),
                               ("platform", platform.id), ("note", offer.assumption))
                         ] if offer.assumed else []
                unavailable: list[str] | None = None
                for count in counts:
                    place = self._placement(
                        "cloud", platform.id, platform.kind, gpu, count, per_node, offer.billing,
                        platform.jurisdiction, features,
                        multi_node=limits.multi_node, max_gpus=limits.max_gpus_per_job,
                        assumed=offer.assumed, regions=tuple(platform.regions),
                        node_size_from_gpu=offer.gpus_per_node is None
                        and per_node == gpu.gpus_per_node)
                    notes = list(price)
                    if rule is not None:
                        place = dataclasses.replace(place, flagged_renter=renter,
                                                    available_rule=rule.text)
                        # (it names the offer, never the count: said once per offer)
                        if unavailable is None:
                            unavailable = self._unavailable_note(place)
                        notes.extend(unavailable)
                    if allowed.note:
                        notes.append(allowed.note)
                    if offer.sold_by_instance:
                        notes.append(_said("note.whole_instances", ("platform", platform.id),
                                           ("gpu", gpu.id), ("billing", billing),
                                           ("sold", offer.instance_text()), ("count", count)))
                    notes.extend(relied)
                    if allowed.needs_reservation(count):
                        notes.append(_said("note.reservation_needed", ("count", count),
                                           ("gpu", gpu.id), ("platform", platform.id),
                                           ("max", allowed.max_gpus),
                                           ("lead", allowed.startup_for(count))))
                    options.append(_Option(place, platform, offer=offer, assumptions=notes,
                                           startup_h=allowed.startup_for(count),
                                           largest_gpus=max(counts)))
        return options

    def _instance_counts(self, job: Job, platform: Platform, offer: Offer, per_node: int,
                         limit: int) -> list[int]:
        """The GPU counts tried on an offer: `job_counts`, each rounded up to whole instances
        where the offer sells only those (`Offer.min_gpus`, `step`); a pinned count that is no
        whole number of instances is recorded in `removed`."""
        counts = job_counts(job, per_node, limit)
        if not offer.sold_by_instance:
            return counts
        rented = sorted({n for n in map(offer.rented_gpus, counts)
                         if n <= limit and job.allows_count(n)})
        if job.gpus is not None and not rented:
            self.removed.append(Removed(
                job.id, platform.id, offer.gpu, job.gpus, offer.billing, "gpus",
                say("note.pinned_instances", platform=platform.id, gpu=offer.gpu,
                    billing=word("billing", offer.billing), sold=offer.instance_text(),
                    job=job.id, gpus=job.gpus)))
        return rented

    def _owned_options(self, job: Job) -> list[_Option]:
        options = []
        for pool in self.scenario.owned:
            gpu = self.catalog.gpu(pool.gpu)
            site = next(s for s in self.scenario.sites if s.id == pool.site)
            self._note_pinned_above(job, pool.id, gpu.id, "owned", pool.count)
            counts = list(job_counts(job, pool.gpus_per_node, pool.count))
            for count in counts:
                place = self._placement("owned", pool.id, "owned", gpu, count, pool.gpus_per_node,
                                        "owned", site.jurisdiction,
                                        pool.capabilities(owned_defaults(gpu)), site=pool.site)
                options.append(_Option(place, None, pool=pool, largest_gpus=max(counts)))
        return options

    def _purchase_options(self, job: Job) -> list[_Option]:
        """Buy options the scenario asked for: any count the job can use, the resource bought in
        whole units (a job may use 64 GPUs of a 72-GPU rack); each competes with renting in the
        model, whether or not anything rents the same GPU."""
        options = []
        site = job.data.at or (self.scenario.sites[0].id if self.scenario.sites else None)
        jurisdiction = next((s.jurisdiction for s in self.scenario.sites if s.id == site), "cn")
        for buy in self.buy:
            gpu = self.catalog.gpus[buy.gpu]
            platform_id = buy.platform_id
            if buy.lead_time_days * 24 >= self.horizon_h:
                self.removed.append(Removed(job.id, platform_id, gpu.id, 0, "purchase", "horizon",
                                            f"buying {gpu.id} takes {buy.lead_time_days:g} days to "
                                            "arrive, beyond the planning horizon"))
                continue
            per_node = buy.gpus_per_node or gpu.gpus_per_node
            limit = min(MAX_GPUS_PER_JOB, buy.max_gpus or MAX_GPUS_PER_JOB)
            counts = job_counts(job, per_node, limit)
            for count in counts:
                place = self._placement("purchase", platform_id, "owned", gpu, count, per_node,
                                        "purchase", jurisdiction, _features(buy.platform.features),
                                        site=site, assumed=bool(buy.notes),
                                        node_size_from_gpu=buy.gpus_per_node is None)
                entry = buy.entry
                if entry.available_in is not None:
                    place = dataclasses.replace(place, available_in=tuple(entry.available_in),
                                                available_rule=entry.available_source or "")
                notes = list(buy.notes)
                if place.unavailable:
                    notes.extend(self._unavailable_note(place))
                options.append(_Option(place, buy.platform, purchase=buy,
                                       assumptions=notes, largest_gpus=max(counts)))
        return options

    def _allowance(self, platform: Platform, offer: Offer, per_node: int) -> Allowance:
        """`allowance` of the offer, made once per build (every job asks it of every offer, and
        its note is a sentence said anew: lab_six_jobs said 900 for 94 offers). The entry holds
        the platform and offer it was made of, and is used only for those very objects."""
        return _made_once(self._allowances, (platform, offer), (per_node,),
                          lambda: allowance(platform, offer, per_node))

    def _unavailable_note(self, place: Placement) -> list[str]:
        """The flag an answer shows beside a plan that uses `place` against the catalog's
        availability rule (none where `policy.only_available` rules the place out instead)."""
        if self.scenario.policy.only_available:
            return []
        return [say("note.unavailable", why=unavailable_text(place))]

    def _note_pinned_above(self, job: Job, platform: str, gpu: str, billing: str,
                           limit: int) -> None:
        """A pinned count (`gpus: N`) this offer cannot give, kept so that 'why not?' has an
        answer."""
        if job.gpus is not None and job.gpus > limit:
            self.removed.append(Removed(job.id, platform, gpu, job.gpus, billing, "gpus",
                                        f"{platform} gives at most {limit} {gpu} per job; {job.id} "
                                        f"pins gpus: {job.gpus}"))

    @staticmethod
    def _placement(kind: str, platform: str, platform_kind: str, gpu: GPU, gpus: int,
                   per_node: int, billing: str, jurisdiction: str, features: frozenset[str], *,
                   site: str | None = None, multi_node: bool = True, max_gpus: int | None = None,
                   assumed: bool = False, regions: tuple[str, ...] = (),
                   node_size_from_gpu: bool = False) -> Placement:
        return Placement(kind=kind, platform=platform, platform_kind=platform_kind, gpu=gpu.id,
                         gpu_architecture=gpu.architecture,
                         gpu_has_bf16=gpu.peak_tflops.bf16 is not None,
                         gpu_has_fp8=gpu.supports_fp8, gpus=gpus, gpus_per_node=per_node,
                         billing=billing, jurisdiction=jurisdiction, features=features, site=site,
                         multi_node_allowed=multi_node, max_gpus_per_job=max_gpus,
                         offer_assumed=assumed, regions=regions,
                         node_size_from_gpu=node_size_from_gpu)

    def _cluster(self, option: _Option, gpu: GPU) -> Cluster:
        """The option's cluster, made once per distinct input: every billing mode and job of a
        place asks for it (a warm lab_six_jobs build asked 5,025 times for 394 clusters). The
        entry holds the GPU and platform it was made of, and is used only for those very objects."""
        place, pool, platform = option.place, option.pool, option.cluster_platform
        spot = place.billing == "spot"
        fabric = (pool.fabric.kind, pool.fabric.gbps_per_gpu) if pool is not None else None
        host_gib = pool.host_memory_gib_per_gpu if pool is not None else None

        def made() -> Cluster:
            cluster = Cluster.of(gpu, place.gpus, platform, gpus_per_node=place.gpus_per_node,
                                 spot=spot, trust_vendor_claims=self.scenario.policy
                                 .trust_vendor_claims, fabric=fabric)
            if pool is not None:
                cluster = dataclasses.replace(cluster, host_memory_gib_per_gpu=host_gib)
            return cluster

        return _made_once(self._clusters, (gpu, platform),
                          (place.gpus, place.gpus_per_node, spot, fabric, host_gib), made)

    def _cluster_of(self, job: Job, wanted: tuple[str, str, int, str]) -> Cluster | None:
        """The cluster of a place (platform, GPU, count, billing), None where it is not offered to
        the job. Kept per instance shape: a recurring job's instances have the same options (their
        candidates are copies, build.py), and listing them took 0.1 s per instance."""
        key = (instance_shape(job), wanted)
        if key not in self.clusters_of:
            self.clusters_of[key] = next(
                (self._cluster(option, self.catalog.gpus[option.place.gpu])
                 for option in self._options(job) if _place_of(option) == wanted), None)
        return self.clusters_of[key]


def _place_of(option: _Option) -> tuple[str, str, int, str]:
    place = option.place
    return (place.platform, place.gpu, place.gpus, place.billing)
