"""The estimator's prediction for a measured run's own layout (what the run is compared with)."""

from __future__ import annotations

import math
from pathlib import Path

from plan.models.catalog import Catalog
from plan.models.errors import InputError, UnknownIdError
from plan.models.loading import is_model_file, resolve_model
from plan.models.model_card import ModelCard
from plan.planner.calibrate.fit import FACTOR_RANGE, Observation
from plan.planner.calibrate.runs import Run, RunError
from plan.planner.estimate import Cluster, Estimate, LayoutSpec, search_layout
from plan.planner.estimate.types import METHODS


def model_of(run: Run, catalog: Catalog) -> ModelCard:
    """The run's model: a catalog id or alias, or a model-card file read relative to the file that
    names the run (as a scenario's and `plan estimate --model`'s are)."""
    base = run.base_dir or Path(".")
    path = base / run.model  # an absolute path stays itself
    if is_model_file(run.model) and not path.is_file():
        raise RunError(f"{run.source}: model: no such model-card file: {path}")
    try:
        return resolve_model(run.model, catalog, base)
    except InputError as exc:  # a card file that is not one: its first problem, named
        raise RunError(f"{run.source}: model: {exc.problems[0]}") from None


def predict(run: Run, catalog: Catalog) -> Estimate:
    try:
        card = model_of(run, catalog)
        gpu = catalog.gpu(run.gpu)
    except (UnknownIdError, KeyError) as exc:
        raise RunError(f"{run.source}: {exc}") from None
    if run.method not in METHODS:
        raise RunError(f"{run.source}: method must be one of {', '.join(METHODS)}, got "
                       f"{run.method!r}")
    try:
        cluster = Cluster.of(gpu, run.gpus, gpus_per_node=run.gpus_per_node)
        spec = LayoutSpec(
            tp=run.tp,
            pp=run.pp,
            zero=run.zero,
            recompute=run.recompute,
            micro_batch=run.micro_batch,
            global_batch=run.global_batch,
            seq_len=run.seq_len,
            precision=run.precision,
            lora_rank=run.lora_rank or 16,
            framework=run.framework,
            cp=run.cp,
            virtual_pipeline=run.virtual_pipeline,
            fused_modules=run.kernels == "fused",
            loss=run.loss,
            optimizer=run.optimizer,
            lora_targets=run.lora_targets,
        )
        result = search_layout(card, run.method, cluster, spec)
    except ValueError as exc:
        raise RunError(f"{run.source}: the estimator cannot run this layout: {exc}") from None
    est = result.best or getattr(result, "closest", None)
    if est is None:
        raise RunError(f"{run.source}: the estimator finds no layout for this run")
    if run.dp is not None and est.layout.dp != run.dp:
        raise RunError(f"{run.source}: layout: dp={run.dp} does not match tp x pp x cp x dp = "
                       f"{run.gpus} GPUs (the estimator gets dp={est.layout.dp})")
    return est


def observations(run: Run, est: Estimate, gpu_id: str) -> list[Observation]:
    """The run's measurements against the estimate; RunError where one is more than FACTOR_RANGE
    allows from it (a unit slip, or a number that is not a measurement: no factor could hold it)."""
    out = []
    if run.tokens_per_s:
        out.append(Observation(run.source, gpu_id, est.layout.framework, run.method, "throughput",
                               run.tokens_per_s, est.tokens_per_s, run.steps))
    if run.peak_memory_gib:
        out.append(Observation(run.source, gpu_id, est.layout.framework, run.method, "memory",
                               run.peak_memory_gib, est.memory.total_gib, run.steps))
    low, high = FACTOR_RANGE
    for o in out:
        if not (o.predicted > 0 and math.isfinite(o.predicted) and low <= o.ratio <= high):
            unit = "tokens/s of the whole job" if o.metric == "throughput" else "GiB per GPU"
            raise RunError(f"{run.source}: {o.metric}: measured {o.measured:.4g} is {o.ratio:.3g} "
                           f"x the estimate {o.predicted:.4g}; a run within {low:g}-{high:g} x can "
                           f"be fitted (is it {unit}?)")
    return out
