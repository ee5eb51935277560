"""The fastest fitting layout of a job on a cluster, cached per builder (`_estimate`), and the
what-ifs the explainers ask of a built candidate: with the model states offloaded, without hybrid
sharding, with a memory saver and nothing offloaded, and the host memory an offload would lack.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from plan.constraints import memory as memory_rule
from plan.models.gpu import GPU
from plan.models.job import FixedLayout, Job
from plan.models.layout import Optimizer
from plan.models.model_card import ModelCard
from plan.models.problem import Candidate
from plan.planner.candidates.options import Options, _Option
from plan.planner.estimate import Cluster, Estimate, LayoutSpec, default_global_batch, search_layout
from plan.planner.estimate.advice import host_shortfall, on_roomy_card
from plan.planner.estimate.flops import shape_of

if TYPE_CHECKING:
    from plan.planner.calibrate.overlay import Calibration

# key -> (best estimate or None, rule that removed the option, why)
EstimateCache = dict[tuple[object, ...], tuple[Estimate | None, str, str]]


def _place_key(candidate: Candidate) -> tuple[str, str, int, str]:
    return candidate.platform, candidate.gpu, candidate.gpus, candidate.billing


class Estimating(Options):
    """Estimates for `CandidateBuilder` (planner/candidates/build.py), and its what-ifs."""

    _estimates: EstimateCache
    headroom: float
    confidence: float
    memory_band_factor: float
    _pytorch_stacks_only: bool
    calibration: Calibration | None

    def _offload_allowed(self, card: ModelCard, job: Job, option: _Option, gpu: GPU) -> bool:
        """CPU offload of the model states (`Layout.state_offload`) only where the job fits at no
        GPU count the place offers without it: a lab's two 24 GB cards for a 70B QLoRA, not a cloud
        that rents enough GPUs to hold the states (memory falls as the count grows, so its largest
        count decides). Offloaded steps lean on an assumed host speed; they must not undercut a plan
        that needs none."""
        if option.largest_gpus <= option.place.gpus:
            return True
        largest = dataclasses.replace(
            option, place=dataclasses.replace(option.place, gpus=option.largest_gpus))
        best, _, _ = self._estimate(card, job, self._cluster(largest, gpu), state_offload=False)
        # (activation offload: offloading all the same)
        return best is None or best.layout.host_activations

    def offloaded_alternative(self, candidate: Candidate) -> Estimate | None:
        """The fastest layout with the model states in host memory on the candidate's own GPUs (same
        place, count and billing), for the plan's note where it is clearly faster
        (planner/estimate/advice.py). None where the job states cpu_offload, the candidate offloads
        already, or nothing offloaded fits."""
        job = self.scenario.job(candidate.job)
        if job.cpu_offload is not None or candidate.layout.state_offload:
            return None
        cluster = self._cluster_of(job, _place_key(candidate))
        if cluster is None:
            return None
        return self._estimate(self.loaded.models[job.id], job, cluster, True)[0]

    def full_shard_alternative(self, candidate: Candidate) -> Estimate | None:
        """The fastest layout of a hybrid-sharded candidate's job on its own GPUs without hybrid
        sharding, for the plan's line saying what the hybrid shard gains; None where the candidate
        is not hybrid-sharded."""
        if not candidate.layout.shard_group:
            return None
        job = self.scenario.job(candidate.job)
        cluster = self._cluster_of(job, _place_key(candidate))
        if cluster is None:
            return None
        return self._estimate(self.loaded.models[job.id], job, cluster, False,
                              hybrid_shard=False)[0]

    def fitting_without_offload(self, candidate: Candidate,
                                change: dict[str, str]) -> Estimate | None:
        """The fastest layout of the candidate's job with `change` (a memory saver's field and
        value) on the candidate's own GPUs with nothing in host memory, or None where none fits
        so."""
        job = self.scenario.job(candidate.job).model_copy(update=change)
        cluster = self._cluster_of(job, _place_key(candidate))
        found = None if cluster is None else self._estimate(
            self.loaded.models[job.id], job, cluster, False)[0]
        return None if found is None or found.layout.host_activations else found

    def host_shortfall(self, job_id: str, place: tuple[str, str, int, str]) -> str | None:
        """Where the job's model states, offloaded to host memory on this place's GPUs (platform,
        GPU, count, billing), need more host memory per GPU than its servers have (FSDP offloads
        them all or none): the estimator's line saying so, else None."""
        job = self.scenario.job(job_id)
        cluster = None if job.cpu_offload is False else self._cluster_of(job, place)
        if cluster is None:
            return None
        # the offloadable layout (ZeRO-3 on FSDP, no tp or pp) on a card that holds anything
        offloading = job.model_copy(update={"framework": "fsdp", "cpu_offload": True,
                                            "layout": FixedLayout(tp=1, pp=1, zero=3)})
        card = self.loaded.models[job.id]
        return host_shortfall(self._estimate(card, offloading, on_roomy_card(cluster), True)[0])

    def _estimate(self, card: ModelCard, job: Job, cluster: Cluster,
                  state_offload: bool | None = None, hybrid_shard: bool | None = None
                  ) -> tuple[Estimate | None, str, str]:
        """Fastest fitting layout. Reliability does not change the layout, so the search runs on the
        cluster without it (one search serves hourly, spot and every platform with this fabric) and
        the estimate is re-attached to the real cluster for `run`. On one node the fabric is
        irrelevant too, so single-node searches are shared across platforms. `state_offload` None:
        CPU offload searched where nothing fits without it; False: never. `hybrid_shard` None: the
        job's (`Job.hybrid_shard`, itself searched where unset)."""
        if hybrid_shard is None:
            hybrid_shard = job.hybrid_shard
        # a job with fewer sequences than the default global batch gets one step of all of them
        # (else the limit does not bind, and jobs of any size share their searches)
        sequences = max(1, int(job.tokens // job.seq_len))
        default = default_global_batch(job.method, job.seq_len, shape_of(card).total_params)
        batch_limit = sequences if job.global_batch is None and sequences < default else None
        key = (card.id, card.params, job.method, job.seq_len, job.global_batch, job.precision,
               job.lora_rank, job.lora_targets, job.layout, job.framework, job.optimizer,
               job.kernels, job.loss, self._pytorch_stacks_only, cluster.layout_search_key(),
               state_offload, batch_limit, hybrid_shard)
        if key not in self._estimates:
            self._estimates[key] = self._search(card, job, cluster, state_offload, hybrid_shard,
                                                batch_limit)
        best, rule, reason = self._estimates[key]
        # (the stack's maturity times the whole run, not the steps: no part of the search's key)
        maturity = self.scenario.stack_maturity_of(job)
        if maturity is not None:
            cluster = dataclasses.replace(cluster, stack_maturity=maturity)
        if best is not None and self.calibration is not None:
            calibrated = self.calibration.apply(dataclasses.replace(best, cluster=cluster),
                                                job.method)
            return calibrated, rule, reason
        found = dataclasses.replace(best, cluster=cluster) if best is not None else None
        return found, rule, reason

    def _search(self, card: ModelCard, job: Job, cluster: Cluster, state_offload: bool | None,
                hybrid_shard: bool | None,
                batch_limit: int | None) -> tuple[Estimate | None, str, str]:
        """The layout search behind `_estimate`: (best or None, rule that removed it, why)."""
        fixed = job.layout
        spec = LayoutSpec(seq_len=job.seq_len, global_batch=job.global_batch,
                          precision=job.precision, lora_rank=job.lora_rank or 16,
                          lora_targets=job.lora_targets or "all", memory_headroom=self.headroom,
                          memory_confidence=self.confidence,
                          tp=fixed.tp if fixed else None, pp=fixed.pp if fixed else None,
                          zero=fixed.zero if fixed else None, cp=fixed.cp if fixed else None,
                          recompute=fixed.recompute if fixed else None,
                          micro_batch=fixed.micro_batch if fixed else None,
                          ep=fixed.ep if fixed else None,
                          framework=job.framework,
                          optimizer=Optimizer.id_of(job.optimizer),
                          fused_modules=job.kernels == "fused", loss=job.loss,
                          batch_limit=batch_limit,
                          pytorch_stacks_only=self._pytorch_stacks_only,
                          state_offload=state_offload, hybrid_shard=hybrid_shard)
        try:
            result = search_layout(card, job.method, cluster.for_layout_search(), spec)
        except ValueError as exc:  # a fixed choice the hardware can never run (fp8 on Ampere, tp=3)
            return None, "layout", str(exc)
        reason = ""
        if result.best is None:
            # (its memory alone: estimating its time too was most of a warm solve's candidates)
            reason = memory_rule.reason(card.id, cluster.gpus, cluster.gpu.id,
                                        result.least_memory_gib,
                                        cluster.gpu.memory_gib, self.headroom,
                                        self.memory_band_factor)
        return result.best, memory_rule.GROUP, reason
