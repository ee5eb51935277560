"""The estimator's prediction for a measured run's own layout (what the run is compared with)."""

from __future__ import annotations

import math
from pathlib import Path

from plan.models.catalog import Catalog
from plan.models.errors import InputError, UnknownIdError
from plan.models.loading import is_model_file, resolve_model
from plan.models.model_card import ModelCard
from plan.models.said import say_as
from plan.models.validation_words import listed
from plan.planner.calibrate.fit import FACTOR_RANGE, Observation, metric_word
from plan.planner.calibrate.runs import Run, RunError
from plan.planner.estimate import Cluster, Estimate, LayoutSpec, search_layout
from plan.planner.estimate.types import METHODS


def model_of(run: Run, catalog: Catalog) -> ModelCard:
    """The run's model: a catalog id or alias, or a model-card file read relative to the file that
    names the run (as a scenario's and `plan estimate --model`'s are)."""
    base = run.base_dir or Path(".")
    path = base / run.model  # an absolute path stays itself
    if is_model_file(run.model) and not path.is_file():
        raise RunError(say_as("calib.no_card_file", "{where}: model: no such model-card file: "
                              "{path}", where=run.source, path=str(path)))
    try:
        return resolve_model(run.model, catalog, base)
    except InputError as exc:  # a card file that is not one: its first problem, named
        raise RunError(say_as("calib.model_problem", "{where}: model: {problem}",
                              where=run.source, problem=exc.problems[0])) from None


def predict(run: Run, catalog: Catalog) -> Estimate:
    try:
        card = model_of(run, catalog)
        gpu = catalog.gpu(run.gpu)
    except (UnknownIdError, KeyError) as exc:
        raise RunError(say_as("calib.at", "{where}: {problem}", where=run.source,
                              problem=_problem(exc))) from None
    if run.method not in METHODS:
        raise RunError(say_as("calib.method", "{where}: method must be one of {methods}, got "
                              "{method}", where=run.source, methods=listed(METHODS),
                              method=repr(run.method)))
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
        raise RunError(say_as("calib.layout_refused", "{where}: the estimator cannot run this "
                              "layout: {problem}", where=run.source,
                              problem=_problem(exc))) from None
    est = result.best or getattr(result, "closest", None)
    if est is None:
        raise RunError(say_as("calib.no_layout", "{where}: the estimator finds no layout for this "
                              "run", where=run.source))
    if run.dp is not None and est.layout.dp != run.dp:
        raise RunError(say_as("calib.dp_mismatch", "{where}: layout: dp={dp} does not match tp x "
                              "pp x cp x dp = {gpus} GPUs (the estimator gets dp={found})",
                              where=run.source, dp=run.dp, gpus=run.gpus, found=est.layout.dp))
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
            unit = (say_as("calib.unit_throughput", "tokens/s of the whole job")
                    if o.metric == "throughput" else say_as("calib.unit_memory", "GiB per GPU"))
            raise RunError(say_as("calib.beyond_range", "{where}: {metric}: measured "
                                  "{measured:.4g} is {ratio:.3g} x the estimate {predicted:.4g}; "
                                  "a run within {low:g}-{high:g} x can be fitted (is it {unit}?)",
                                  where=run.source, metric=metric_word(o.metric),
                                  measured=o.measured, ratio=o.ratio, predicted=o.predicted,
                                  low=low, high=high, unit=unit))
    return out


def _problem(exc: Exception) -> str:
    """What an exception says, keyed where it was said so (an unknown id, a layout refusal)."""
    if isinstance(exc, UnknownIdError):
        return exc.message
    first = exc.args[0] if len(exc.args) == 1 and not isinstance(exc, KeyError) else None
    return first if isinstance(first, str) else str(exc)  # (a KeyError's str() quotes its key)
